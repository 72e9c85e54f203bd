package sentry_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/backtrail/backtrail/report"
	"github.com/backtrail/backtrail/server/ingest/sentry"
)

// envelopeSeeds returns the envelopes in testdata/envelopes and a few
// hand-written ones with the shapes ParseEnvelope must handle.
func envelopeSeeds(t testing.TB) [][]byte {
	t.Helper()
	files, err := filepath.Glob("testdata/envelopes/*.envelope")
	if err != nil || len(files) == 0 {
		t.Fatalf("no seed envelopes: %v", err)
	}
	var seeds [][]byte
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		seeds = append(seeds, b)
	}
	for _, s := range []string{
		specEnvelope,
		"{}",
		"{}\n{\"type\":\"event\",\"length\":2}\n{}",
		"{}\n{\"type\":\"attachment\",\"length\":4294967296}\nabc\n",
		"{}\n{\"type\":\"event\"}\n{\"exception\":[{\"type\":\"E\",\"thread_id\":1,\"stacktrace\":{\"frames\":[{\"instruction_addr\":\"0x10\",\"addr_mode\":\"rel:0\"}]}}],\"debug_meta\":{\"images\":[{\"type\":\"elf\",\"image_addr\":\"0x1000\",\"image_size\":4096}]}}\n",
	} {
		seeds = append(seeds, []byte(s))
	}
	return seeds
}

// fuzzLimits are small enough to reach from fuzzed input.
var fuzzLimits = sentry.Limits{Decompressed: 1 << 20, Event: 64 << 10, Items: 64}

// FuzzParseEnvelope checks that ParseEnvelope never panics, that its errors
// are EnvelopeErrors within the data, that what it accepts it accepts again
// when written back with explicit lengths, and that Envelope.Event either
// fails with a sentinel or returns a report that survives Encode and Decode.
func FuzzParseEnvelope(f *testing.F) {
	for _, s := range envelopeSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		env, err := sentry.ParseEnvelope(data, fuzzLimits)
		if err != nil {
			var ee *sentry.EnvelopeError
			if !errors.As(err, &ee) || !(errors.Is(err, sentry.ErrInvalid) || errors.Is(err, sentry.ErrTooLarge)) {
				t.Fatalf("error %v (%T) is not an *EnvelopeError wrapping ErrInvalid or ErrTooLarge", err, err)
			}
			if ee.Offset < 0 || ee.Offset > int64(len(data)) || ee.Item < -1 || ee.Item > fuzzLimits.Items {
				t.Fatalf("error %v: offset %d, item %d out of range for %d bytes", err, ee.Offset, ee.Item, len(data))
			}
			return
		}
		if len(env.Items) > fuzzLimits.Items {
			t.Fatalf("%d items, limit %d", len(env.Items), fuzzLimits.Items)
		}
		// Write the items back with lengths; they must parse the same.
		var buf bytes.Buffer
		buf.WriteString("{}\n")
		for _, it := range env.Items {
			if !bytes.Contains(data, it.Payload) {
				t.Fatalf("payload %q is not from the data", it.Payload)
			}
			h, _ := json.Marshal(map[string]any{"type": it.Type, "length": len(it.Payload)})
			buf.Write(h)
			buf.WriteByte('\n')
			buf.Write(it.Payload)
			buf.WriteByte('\n')
		}
		again, err := sentry.ParseEnvelope(buf.Bytes(), sentry.Limits{Items: fuzzLimits.Items})
		if err != nil {
			t.Fatalf("items written back with lengths do not parse: %v\n%q", err, buf.Bytes())
		}
		if len(again.Items) != len(env.Items) {
			t.Fatalf("%d items written back, %d parsed", len(env.Items), len(again.Items))
		}
		for i := range env.Items {
			if again.Items[i].Type != env.Items[i].Type || !bytes.Equal(again.Items[i].Payload, env.Items[i].Payload) {
				t.Fatalf("item %d: %q %q written back, %q %q parsed", i, env.Items[i].Type, env.Items[i].Payload, again.Items[i].Type, again.Items[i].Payload)
			}
		}
		r, err := env.Event()
		if err != nil {
			if !errors.Is(err, sentry.ErrNoEvent) && !errors.Is(err, sentry.ErrInvalid) {
				t.Fatalf("Event: %v is neither ErrNoEvent nor ErrInvalid", err)
			}
			return
		}
		checkFuzzedReport(t, r)
	})
}

// FuzzEvent checks that Event never panics, fails only with ErrInvalid, and
// returns reports that survive report.Encode and report.Decode unchanged,
// pass report.Validate (but for the platforms and module types report 1.0
// does not list) and keep to the package's bounds.
func FuzzEvent(f *testing.F) {
	for _, s := range envelopeSeeds(f) {
		env, err := sentry.ParseEnvelope(s, sentry.Limits{})
		if err != nil {
			continue
		}
		for _, it := range env.Items {
			if it.Type == "event" {
				f.Add(it.Payload)
			}
		}
	}
	for _, s := range []string{
		`{}`,
		`{"event_id":"9EC79C33-EC99-42AB-8353-589FCB2E04DC","timestamp":1700000000.25,"tags":[["a","1"]],"fingerprint":["{{ default }}"]}`,
		`{"message":{"formatted":"x"},"stacktrace":{"frames":[{"function":"a"},{"filename":"b.js"}]},"threads":[{"id":"main","current":true}]}`,
		`{"platform":"go","exception":[{"type":"E","stacktrace":{"frames":[{"function":"f","module":"m","lineno":3,"in_app":true}]}}],"contexts":{"os":{"name":"macOS"},"device":{"arch":"arm64e"}}}`,
		`{"exception":{"values":[{"type":"E","thread_id":7,"mechanism":{"type":"mach","meta":{"signal":{"number":11}}}}]},"threads":{"values":[{"id":7,"stacktrace":{"frames":[{"instruction_addr":"0x10","addr_mode":"rel:1"}],"registers":{"pc":"0x1"}}}]},"debug_meta":{"images":[{"type":"pe","image_addr":"0x1000"},{"type":"macho","image_addr":"0x2000","image_size":4096}]}}`,
	} {
		f.Add([]byte(s))
	}
	// One CrashProbe event (about 100 kB) as a real native event.
	if files := crashProbeFiles(f); len(files) > 0 {
		if b, err := os.ReadFile(files[0]); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := sentry.Event(data)
		if err != nil {
			if !errors.Is(err, sentry.ErrInvalid) {
				t.Fatalf("error %v does not wrap ErrInvalid", err)
			}
			return
		}
		checkFuzzedReport(t, r)
	})
}

// checkFuzzedReport checks what Event promises for any accepted input.
func checkFuzzedReport(t *testing.T, r *report.Report) {
	t.Helper()
	if r.Timestamp.IsZero() {
		r.Timestamp = time.Unix(1, 0) // the caller's job: the time of receipt
	}
	checkReport(t, r)
	if len(r.Threads) > 1000 || len(r.Modules) > 4096 {
		t.Fatalf("%d threads, %d modules", len(r.Threads), len(r.Modules))
	}
	for _, th := range r.Threads {
		if len(th.Frames) > 250 {
			t.Fatalf("thread %d has %d frames", th.ID, len(th.Frames))
		}
	}
}
