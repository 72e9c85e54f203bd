package sentry_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/backtrail/backtrail/report"
	"github.com/backtrail/backtrail/server/ingest/sentry"
)

const (
	evID    = "9ec79c33ec9942ab8353589fcb2e04dc"
	evEvent = `{"message":"hello world","level":"error"}`
)

// specEnvelope is the example of Sentry's "Envelopes" document: an
// attachment with a BOM and a CRLF inside its length, and an event.
var specEnvelope = `{"event_id":"9ec79c33ec9942ab8353589fcb2e04dc","dsn":"https://e12d836b15bb49d7bbf99e64295d995b:@sentry.io/42","sent_at":"2020-02-07T14:16:00.000Z","sdk":{"name":"sentry.test","version":"1.2.3"}}
{"type":"attachment","length":10,"content_type":"text/plain","filename":"hello.txt"}
` + "\xef\xbb\xbfHello\r\n" + `
{"type":"event","length":41,"content_type":"application/json","filename":"application.log"}
{"message":"hello world","level":"error"}
`

type wantItem struct{ typ, payload string }

func TestParseEnvelope(t *testing.T) {
	tests := []struct {
		name  string
		in    string
		items []wantItem
	}{
		{"spec example", specEnvelope, []wantItem{{"attachment", "\xef\xbb\xbfHello\r\n"}, {"event", evEvent}}},
		{"header only", `{}`, nil},
		{"header only, newline", "{}\n", nil},
		{"header only, blank lines", "{}\n\n\r\n", nil},
		{"length, newline at end", "{}\n{\"type\":\"event\",\"length\":41}\n" + evEvent + "\n", []wantItem{{"event", evEvent}}},
		{"length, no newline at end", "{}\n{\"type\":\"event\",\"length\":41}\n" + evEvent, []wantItem{{"event", evEvent}}},
		{"no length, newline at end", "{}\n{\"type\":\"event\"}\n" + evEvent + "\n", []wantItem{{"event", evEvent}}},
		{"no length, no newline at end", "{}\n{\"type\":\"event\"}\n" + evEvent, []wantItem{{"event", evEvent}}},
		{"no length, blank lines after", "{}\n{\"type\":\"event\"}\n" + evEvent + "\n\n\n", []wantItem{{"event", evEvent}}},
		{"length 0", "{}\n{\"type\":\"attachment\",\"length\":0}\n\n{\"type\":\"event\"}\n{}", []wantItem{{"attachment", ""}, {"event", "{}"}}},
		{"length 0 at end, no newline", "{}\n{\"type\":\"attachment\",\"length\":0}", []wantItem{{"attachment", ""}}},
		{"no length, empty payload", "{}\n{\"type\":\"attachment\"}\n\n{\"type\":\"event\"}\n{}\n", []wantItem{{"attachment", ""}, {"event", "{}"}}},
		{"item header at end, no payload", "{}\n{\"type\":\"session\"}", []wantItem{{"session", ""}}},
		{"length null", "{}\n{\"type\":\"event\",\"length\":null}\n{}\n", []wantItem{{"event", "{}"}}},
		{"payload with newlines", "{}\n{\"type\":\"attachment\",\"length\":6}\na\nb\n\nc\n", []wantItem{{"attachment", "a\nb\n\nc"}}},
		{"mixed lengths, blank line between", "{}\n{\"type\":\"session\",\"length\":2}\n{}\n\n{\"type\":\"client_report\"}\n{\"x\":1}\n{\"type\":\"event\",\"length\":2}\n{}",
			[]wantItem{{"session", "{}"}, {"client_report", `{"x":1}`}, {"event", "{}"}}},
		{"unknown item types kept", "{}\n{\"type\":\"statsd\",\"length\":3}\nabc\n{\"type\":\"something_new\",\"future\":true}\nxyz\n",
			[]wantItem{{"statsd", "abc"}, {"something_new", "xyz"}}},
		{"CRLF after headers", "{}\r\n{\"type\":\"event\"}\r\n{}\r\n", []wantItem{{"event", "{}\r"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env, err := sentry.ParseEnvelope([]byte(tt.in), sentry.Limits{})
			if err != nil {
				t.Fatalf("ParseEnvelope(%q): %v", tt.in, err)
			}
			var got []wantItem
			for _, it := range env.Items {
				got = append(got, wantItem{it.Type, string(it.Payload)})
			}
			if fmt.Sprintf("%q", got) != fmt.Sprintf("%q", tt.items) {
				t.Errorf("ParseEnvelope(%q) items:\nhave %q\nwant %q", tt.in, got, tt.items)
			}
		})
	}
}

func TestParseEnvelopeHeader(t *testing.T) {
	env, err := sentry.ParseEnvelope([]byte(specEnvelope), sentry.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	h := env.Header
	if h.EventID != evID || h.DSN != "https://e12d836b15bb49d7bbf99e64295d995b:@sentry.io/42" ||
		!h.SentAt.Equal(time.Date(2020, 2, 7, 14, 16, 0, 0, time.UTC)) || h.SDK != (report.SDK{Name: "sentry.test", Version: "1.2.3"}) {
		t.Errorf("header = %+v", h)
	}
	it := env.Items[0]
	if it.ContentType != "text/plain" || it.Filename != "hello.txt" {
		t.Errorf("attachment item = %+v", it)
	}
	key, project, err := sentry.KeyFromDSN(h.DSN)
	if key != "e12d836b15bb49d7bbf99e64295d995b" || project != "42" || err != nil {
		t.Errorf("KeyFromDSN(%q) = %q, %q, %v", h.DSN, key, project, err)
	}

	// The event item has no event_id: the header's is used.
	r, err := env.Event()
	if err != nil {
		t.Fatal(err)
	}
	if r.EventID != evID || r.SDK.Name != "sentry.test" || r.Exception.Type != "message" || r.Exception.Value != "hello world" {
		t.Errorf("report = %+v, exception %+v", r, r.Exception)
	}
	if h, err := sentry.ParseEnvelope([]byte(`{"event_id":"9EC79C33-EC99-42AB-8353-589FCB2E04DC","sent_at":"yesterday","sdk":"x"}`), sentry.Limits{}); err != nil || h.Header.EventID != evID || !h.Header.SentAt.IsZero() {
		t.Errorf("UUID with dashes, bad sent_at: %+v, %v", h, err)
	}
}

func TestEnvelopeEvent(t *testing.T) {
	data := "{\"event_id\":\"" + evID + "\"}\n" +
		"{\"type\":\"session\"}\n{\"sid\":\"x\"}\n" +
		"{\"type\":\"attachment\",\"length\":5,\"attachment_type\":\"event.minidump\",\"filename\":\"m.dmp\"}\nMDMP\x00\n" +
		"{\"type\":\"client_report\"}\n{\"discarded_events\":[]}\n" +
		"{\"type\":\"future_thing\"}\n[1,2,3]\n" +
		"{\"type\":\"event\"}\n{\"event_id\":\"0123456789abcdef0123456789abcdef\",\"exception\":{\"values\":[{\"type\":\"E\",\"value\":\"v\"}]}}\n"
	env, err := sentry.ParseEnvelope([]byte(data), sentry.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if len(env.Items) != 5 || env.Items[1].AttachmentType != "event.minidump" || string(env.Items[1].Payload) != "MDMP\x00" {
		t.Fatalf("items = %+v", env.Items)
	}
	r, err := env.Event()
	if err != nil {
		t.Fatal(err)
	}
	if r.EventID != "0123456789abcdef0123456789abcdef" || r.Exception.Type != "E" {
		t.Errorf("report %+v: the payload's event id wins over the header's", r)
	}

	env, err = sentry.ParseEnvelope([]byte("{}\n{\"type\":\"session\"}\n{}\n{\"type\":\"client_report\"}\n{}\n"), sentry.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if r, err := env.Event(); !errors.Is(err, sentry.ErrNoEvent) || r != nil {
		t.Errorf("Event of sessions only = %v, %v; want ErrNoEvent", r, err)
	}
	env, err = sentry.ParseEnvelope([]byte("{}\n{\"type\":\"event\"}\n[]\n"), sentry.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := env.Event(); !errors.Is(err, sentry.ErrInvalid) {
		t.Errorf("Event of an array: %v, want ErrInvalid", err)
	}
}

func TestParseEnvelopeErrors(t *testing.T) {
	big := strings.Repeat("x", 100)
	tests := []struct {
		name   string
		in     string
		lim    sentry.Limits
		err    error
		offset int64
		item   int
		msg    string
	}{
		{"empty", "", sentry.Limits{}, sentry.ErrInvalid, 0, -1, "missing"},
		{"blank header", "\n{\"type\":\"event\"}\n{}", sentry.Limits{}, sentry.ErrInvalid, 0, -1, "missing"},
		{"header not JSON", "hello\n", sentry.Limits{}, sentry.ErrInvalid, 0, -1, "not a JSON object"},
		{"header an array", "[]\n", sentry.Limits{}, sentry.ErrInvalid, 0, -1, "not a JSON object"},
		{"header truncated", `{"event_id":"` + "\n", sentry.Limits{}, sentry.ErrInvalid, 0, -1, "unexpected end"},
		{"header event_id not a UUID", `{"event_id":"xyz"}`, sentry.Limits{}, sentry.ErrInvalid, 0, -1, `event_id "xyz" is not a UUID`},
		{"header event_id a number", `{"event_id":5}`, sentry.Limits{}, sentry.ErrInvalid, 0, -1, "not a string"},
		{"item header not JSON", "{}\nnope\n", sentry.Limits{}, sentry.ErrInvalid, 3, 0, "not a JSON object"},
		{"item header without type", "{}\n{\"length\":2}\n{}\n", sentry.Limits{}, sentry.ErrInvalid, 3, 0, "no type"},
		{"item type not a string", "{}\n{\"type\":1}\n{}\n", sentry.Limits{}, sentry.ErrInvalid, 3, 0, "no type"},
		{"second item bad", "{}\n{\"type\":\"a\",\"length\":2}\nab\n{oops\n", sentry.Limits{}, sentry.ErrInvalid, 30, 1, "item header"},
		{"huge length", "{}\n{\"type\":\"attachment\",\"length\":4294967296}\nabc\n", sentry.Limits{}, sentry.ErrInvalid, 45, 0, "length 4294967296 exceeds the 4 bytes that remain"},
		{"length one too many", "{}\n{\"type\":\"a\",\"length\":4}\nabc", sentry.Limits{}, sentry.ErrInvalid, 27, 0, "length 4 exceeds the 3 bytes that remain"},
		{"length, header at end", "{}\n{\"type\":\"a\",\"length\":1}", sentry.Limits{}, sentry.ErrInvalid, 26, 0, "exceeds the 0 bytes"},
		{"negative length", "{}\n{\"type\":\"a\",\"length\":-1}\n", sentry.Limits{}, sentry.ErrInvalid, 3, 0, "not a non-negative integer"},
		{"fractional length", "{}\n{\"type\":\"a\",\"length\":1.5}\nab\n", sentry.Limits{}, sentry.ErrInvalid, 3, 0, "not a non-negative integer"},
		{"length as string", "{}\n{\"type\":\"a\",\"length\":\"2\"}\nab\n", sentry.Limits{}, sentry.ErrInvalid, 3, 0, "not a non-negative integer"},
		{"length over int64", "{}\n{\"type\":\"a\",\"length\":99999999999999999999}\nab\n", sentry.Limits{}, sentry.ErrInvalid, 3, 0, "not a non-negative integer"},
		{"no newline after payload", "{}\n{\"type\":\"a\",\"length\":2}\nabc\n", sentry.Limits{}, sentry.ErrInvalid, 29, 0, "followed by 'c'"},
		{"over Decompressed", "{}\n" + big, sentry.Limits{Decompressed: 50}, sentry.ErrTooLarge, 50, -1, "limit 50"},
		{"over Items", "{}\n{\"type\":\"a\"}\n\n{\"type\":\"b\"}\n\n{\"type\":\"c\"}\n", sentry.Limits{Items: 2}, sentry.ErrTooLarge, 31, 2, "more than 2 items"},
		{"event over Event", "{}\n{\"type\":\"event\"}\n{\"m\":\"" + big + "\"}\n", sentry.Limits{Event: 100}, sentry.ErrTooLarge, 3, 0, "event of 108 bytes, limit 100"},
		{"transaction over Event", "{}\n{\"type\":\"transaction\"}\n" + big + "x\n", sentry.Limits{Event: 100}, sentry.ErrTooLarge, 3, 0, "transaction of 101 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env, err := sentry.ParseEnvelope([]byte(tt.in), tt.lim)
			var ee *sentry.EnvelopeError
			if !errors.As(err, &ee) || !errors.Is(err, tt.err) {
				t.Fatalf("ParseEnvelope(%q) = %+v, %v; want *EnvelopeError wrapping %v", tt.in, env, err, tt.err)
			}
			if ee.Offset != tt.offset || ee.Item != tt.item || !strings.Contains(ee.Msg, tt.msg) {
				t.Errorf("ParseEnvelope(%q):\nhave offset %d, item %d, %q\nwant offset %d, item %d, message containing %q", tt.in, ee.Offset, ee.Item, ee.Msg, tt.offset, tt.item, tt.msg)
			}
			if !strings.Contains(err.Error(), fmt.Sprintf("offset %#x", tt.offset)) {
				t.Errorf("error %q does not give the offset in hex", err)
			}
		})
	}
	// Limits at the boundary pass.
	in := "{}\n{\"type\":\"event\"}\n" + strings.Repeat("x", 100) + "\n"
	if _, err := sentry.ParseEnvelope([]byte(in), sentry.Limits{Event: 100, Decompressed: int64(len(in)), Items: 1}); err != nil {
		t.Errorf("at the limits: %v", err)
	}
}
