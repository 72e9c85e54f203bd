package report_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/backtrail/backtrail/report"
)

func readFixtures(t testing.TB) map[string][]byte {
	t.Helper()
	names, err := filepath.Glob("testdata/*.json")
	if err != nil || len(names) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	m := make(map[string][]byte)
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		m[n] = b
	}
	return m
}

// TestFixtures decodes every hand-written fixture (testdata/*.json, written
// from docs/report-format.md), validates it and checks it round-trips.
func TestFixtures(t *testing.T) {
	for name, data := range readFixtures(t) {
		r, err := report.Decode(bytes.NewReader(data), 1<<20)
		if err != nil {
			t.Errorf("%s: Decode: %v", name, err)
			continue
		}
		if err := r.Validate(); err != nil {
			t.Errorf("%s: Validate: %v", name, err)
		}
		checkRoundTrip(t, name, r)
	}
}

func checkRoundTrip(t *testing.T, name string, r *report.Report) {
	t.Helper()
	var buf bytes.Buffer
	if err := report.Encode(&buf, r); err != nil {
		t.Fatalf("%s: Encode: %v", name, err)
	}
	r2, err := report.Decode(&buf, int64(buf.Len())+1)
	if err != nil {
		t.Fatalf("%s: Decode(Encode(r)): %v", name, err)
	}
	if r.Version == "" {
		r.Version = report.Version
	}
	if !reflect.DeepEqual(r, r2) {
		t.Errorf("%s: round trip differs:\nhave %+v\nwant %+v", name, r2, r)
	}
}

func TestCrashFixtureFields(t *testing.T) {
	data, err := os.ReadFile("testdata/crash.json")
	if err != nil {
		t.Fatal(err)
	}
	r, err := report.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	th := r.Threads[0]
	if th.Frames[0].Addr != 0x4a1b2c || !th.Frames[1].Inlined || th.Frames[1].Addr != th.Frames[0].Addr {
		t.Errorf("frames = %+v", th.Frames)
	}
	if r.Modules[0].ImageAddr != 0x400000 || r.Trail[0].Site.Line != 88 || r.Exception.ThreadID != 7 {
		t.Errorf("module/trail/exception = %+v %+v %+v", r.Modules[0], r.Trail[0], r.Exception)
	}
}

func TestDecodeErrors(t *testing.T) {
	tests := []struct {
		in      string
		limit   int64
		wantErr error  // checked with errors.Is when set
		wantSub string // substring of the message otherwise
	}{
		{`{"version":"1.0"}`, 17, nil, ""},
		{`{"version":"1.0"}`, 16, report.ErrTooLarge, ""},
		{`{"version":"1.0"}`, 0, nil, "not positive"},
		{`{"version":"1.9","x":[1,2]}`, 100, nil, ""},
		{`{"version":"2.0"}`, 100, report.ErrVersion, ""},
		{`{"version":"0.9"}`, 100, report.ErrVersion, ""},
		{`{"version":"1"}`, 100, report.ErrVersion, ""},
		{`{"version":"1.x"}`, 100, report.ErrVersion, ""},
		{`{"version":1}`, 100, nil, "cannot unmarshal"},
		{`{"kind":"crash"}`, 100, report.ErrVersion, ""},
		{`{"version":"1.0","threads":[{"frames":[{"addr":12}]}]}`, 100, nil, "addr"},
		{`{"version":"1.0","threads":[{"frames":[{"addr":"12"}]}]}`, 100, nil, "0x followed by"},
		{`{"version":"1.0"`, 100, nil, "unexpected end"},
		{`[]`, 100, nil, "cannot unmarshal"},
	}
	for _, tt := range tests {
		_, err := report.Decode(strings.NewReader(tt.in), tt.limit)
		switch {
		case tt.wantErr != nil:
			if !errors.Is(err, tt.wantErr) {
				t.Errorf("Decode(%s, %d) = %v, want %v", tt.in, tt.limit, err, tt.wantErr)
			}
		case tt.wantSub != "":
			if err == nil || !strings.Contains(err.Error(), tt.wantSub) {
				t.Errorf("Decode(%s, %d) = %v, want error containing %q", tt.in, tt.limit, err, tt.wantSub)
			}
		default:
			if err != nil {
				t.Errorf("Decode(%s, %d) = %v, want nil", tt.in, tt.limit, err)
			}
		}
	}
}

func TestAddr(t *testing.T) {
	tests := []struct {
		in   string
		want report.Addr
		ok   bool
	}{
		{"0x0", 0, true},
		{"0x1", 1, true},
		{"0X1F", 0x1f, true},
		{"0xffffffffffffffff", 1<<64 - 1, true},
		{"0x1ffffffffffffffff", 0, false},
		{"0x", 0, false},
		{"1234", 0, false},
		{"0x-1", 0, false},
		{"0xg", 0, false},
		{"", 0, false},
	}
	for _, tt := range tests {
		var a report.Addr
		err := a.UnmarshalText([]byte(tt.in))
		if (err == nil) != tt.ok || a != tt.want {
			t.Errorf("UnmarshalText(%q) = %#x, %v; want %#x, ok=%v", tt.in, uint64(a), err, uint64(tt.want), tt.ok)
		}
	}
	if s := report.Addr(0x4a1b2c).String(); s != "0x4a1b2c" {
		t.Errorf("String = %q", s)
	}
}

func TestNewEventID(t *testing.T) {
	seen := map[string]bool{}
	for range 100 {
		id := report.NewEventID()
		r := validReport()
		r.EventID = id
		if err := r.Validate(); err != nil {
			t.Fatalf("NewEventID() = %q: %v", id, err)
		}
		if id[12] != '4' || !strings.ContainsRune("89ab", rune(id[16])) {
			t.Errorf("NewEventID() = %q: not a version 4 variant 1 UUID", id)
		}
		if seen[id] {
			t.Fatalf("NewEventID repeated %q", id)
		}
		seen[id] = true
	}
}

func validReport() *report.Report {
	return &report.Report{
		Version:   report.Version,
		Kind:      report.KindCrash,
		EventID:   "0123456789abcdef0123456789abcdef",
		Timestamp: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC),
		Platform:  report.PlatformGo,
		SDK:       report.SDK{Name: "backtrail.go"},
		Exception: &report.Exception{Type: "string", Value: "boom"},
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name  string
		edit  func(r *report.Report)
		field string // "" means valid
	}{
		{"valid", func(r *report.Report) {}, ""},
		{"version", func(r *report.Report) { r.Version = "2.0" }, "version"},
		{"kind", func(r *report.Report) { r.Kind = "oops" }, "kind"},
		{"event id short", func(r *report.Report) { r.EventID = "abc" }, "event_id"},
		{"event id upper", func(r *report.Report) { r.EventID = "0123456789ABCDEF0123456789abcdef" }, "event_id"},
		{"event id dashes", func(r *report.Report) { r.EventID = "01234567-89ab-cdef-0123-456789abcdef" }, "event_id"},
		{"timestamp", func(r *report.Report) { r.Timestamp = time.Time{} }, "timestamp"},
		{"platform", func(r *report.Report) { r.Platform = "" }, "platform"},
		{"sdk", func(r *report.Report) { r.SDK.Name = "" }, "sdk.name"},
		{"crash without exception", func(r *report.Report) { r.Exception = nil }, "exception"},
		{"crash with threads only", func(r *report.Report) {
			r.Exception = nil
			r.Threads = []report.Thread{{ID: 1, Frames: []report.Frame{{Addr: 1}}}}
		}, ""},
		{"hang without section", func(r *report.Report) { r.Kind = report.KindHang }, "hang"},
		{"hang negative", func(r *report.Report) { r.Kind = report.KindHang; r.Hang = &report.Hang{DurationMS: -1} }, "hang"},
		{"audit without section", func(r *report.Report) { r.Kind = report.KindAudit }, "audit"},
		{"audit entry kind", func(r *report.Report) {
			r.Kind = report.KindAudit
			r.Audit = &report.Audit{Entries: []report.AuditEntry{{Count: 1}}}
		}, "audit.entries[0].kind"},
		{"dump without threads", func(r *report.Report) { r.Kind = report.KindDump }, "threads"},
		{"module type", func(r *report.Report) { r.Modules = []report.Module{{Type: "coff"}} }, "modules[0].type"},
		{"empty frame", func(r *report.Report) {
			r.Threads = []report.Thread{{Frames: []report.Frame{{Addr: 1}, {}}}}
		}, "threads[0].frames[1]"},
		{"negative line", func(r *report.Report) {
			r.Trail = []report.Hop{{Frames: []report.Frame{{Function: "f", Line: -1}}}}
		}, "trail[0].frames[0].line"},
		{"sample frame", func(r *report.Report) {
			r.Kind = report.KindHang
			r.Hang = &report.Hang{Samples: []report.Sample{{Frames: []report.Frame{{}}}}}
		}, "hang.samples[0].frames[0]"},
		{"snapshot count", func(r *report.Report) {
			r.Snapshot = &report.Snapshot{Stacks: []report.SnapshotStack{{Count: 0}}}
		}, "snapshot.stacks[0].count"},
	}
	for _, tt := range tests {
		r := validReport()
		tt.edit(r)
		err := r.Validate()
		if tt.field == "" {
			if err != nil {
				t.Errorf("%s: Validate() = %v, want nil", tt.name, err)
			}
			continue
		}
		var ve *report.ValidationError
		if !errors.As(err, &ve) || ve.Field != tt.field {
			t.Errorf("%s: Validate() = %v, want a ValidationError on %s", tt.name, err, tt.field)
		}
	}
}

func TestEncodeFillsVersion(t *testing.T) {
	r := validReport()
	r.Version = ""
	var buf bytes.Buffer
	if err := report.Encode(&buf, r); err != nil {
		t.Fatal(err)
	}
	if r.Version != "" {
		t.Error("Encode modified its argument")
	}
	if !strings.Contains(buf.String(), `"version":"`+report.Version+`"`) {
		t.Errorf("Encode wrote %s", buf.String())
	}
}

// FuzzDecode checks that Decode never panics and that whatever it accepts
// re-encodes, as encoding/json would, to a report that decodes to the same
// value.
func FuzzDecode(f *testing.F) {
	for _, data := range readFixtures(f) {
		f.Add(data)
	}
	f.Add([]byte(`{"version":"1.0","threads":[{"frames":[{"addr":"0xffffffffffffffff"}]}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := report.Decode(bytes.NewReader(data), 1<<20)
		if err != nil {
			return
		}
		_ = r.Validate()
		checkSameJSON(t, r)
		var buf bytes.Buffer
		if err := report.Encode(&buf, r); err != nil {
			t.Fatalf("Encode of a decoded report: %v", err)
		}
		r2, err := report.Decode(bytes.NewReader(buf.Bytes()), 1<<22)
		if err != nil {
			t.Fatalf("Decode(Encode(r)): %v\n%s", err, buf.Bytes())
		}
		// An empty list the input spelled [] comes back nil (omitempty),
		// so the decoded values are compared by what they encode to.
		var buf2 bytes.Buffer
		if err := report.Encode(&buf2, r2); err != nil {
			t.Fatalf("Encode(Decode(Encode(r))): %v", err)
		}
		if !bytes.Equal(buf.Bytes(), buf2.Bytes()) {
			t.Fatalf("round trip differs:\n%s\n%s", buf.Bytes(), buf2.Bytes())
		}
	})
}
