package sentry_test

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/backtrail/backtrail/report"
	"github.com/backtrail/backtrail/server/ingest/sentry"
)

// TestEvent converts hand-written events, one feature of Sentry's event
// payload per row.
func TestEvent(t *testing.T) {
	tests := []struct {
		name  string
		in    string
		check func(t *testing.T, r *report.Report)
	}{
		{"empty object", `{}`, func(t *testing.T, r *report.Report) {
			if len(r.EventID) != 32 || r.Exception.Type != "message" || r.Exception.Value != "" || r.Platform != "other" ||
				r.SDK.Name != "unknown" || r.Tags["level"] != "error" || !r.Timestamp.IsZero() || len(r.Threads) != 0 {
				t.Errorf("report %+v", r)
			}
		}},
		{"event id with dashes", `{"event_id":"9EC79C33-EC99-42AB-8353-589FCB2E04DC"}`, func(t *testing.T, r *report.Report) {
			if r.EventID != "9ec79c33ec9942ab8353589fcb2e04dc" {
				t.Errorf("event id %s", r.EventID)
			}
		}},
		{"timestamp float seconds", `{"timestamp":1700000000.25}`, wantTime(time.Unix(1700000000, 250e6))},
		{"timestamp integer seconds", `{"timestamp":1700000000}`, wantTime(time.Unix(1700000000, 0))},
		{"timestamp seconds in a string", `{"timestamp":"1700000000.5"}`, wantTime(time.Unix(1700000000, 500e6))},
		{"timestamp RFC 3339 with offset", `{"timestamp":"2024-03-01T12:00:00.123+02:00"}`, wantTime(time.Date(2024, 3, 1, 10, 0, 0, 123e6, time.UTC))},
		{"timestamp without zone", `{"timestamp":"2017-01-26T09:55:14.5"}`, wantTime(time.Date(2017, 1, 26, 9, 55, 14, 500e6, time.UTC))},
		{"timestamp unreadable", `{"timestamp":"yesterday"}`, wantTime(time.Time{})},
		{"timestamp past 9999", `{"timestamp":"9999-12-31T23:59:59-01:00"}`, wantTime(time.Time{})},
		{"timestamp negative", `{"timestamp":-5}`, wantTime(time.Time{})},
		{"message string", `{"message":"hi","level":"warning"}`, wantMessage("hi", "warning")},
		{"message object", `{"message":{"formatted":"hi 5","message":"hi %d","params":[5]}}`, wantMessage("hi 5", "error")},
		{"logentry template only", `{"logentry":{"message":"hi %d","params":[5]}}`, wantMessage("hi %d", "error")},
		{"logentry wins over message", `{"logentry":{"formatted":"a"},"message":"b"}`, wantMessage("a", "error")},
		{"tags object", `{"tags":{"a":"1","n":5,"b":true,"z":null}}`, wantTags(map[string]string{"a": "1", "n": "5", "b": "true", "z": ""})},
		{"tags pairs", `{"tags":[["a","1"],["n",5],["bad"],["x",{}],[null,"y"],"junk",["a","2"]]}`, wantTags(map[string]string{"a": "2", "n": "5"})},
		{"fingerprint", `{"fingerprint":["{{ default }}","db",42]}`, func(t *testing.T, r *report.Report) {
			if fmt.Sprintf("%q", r.Fingerprint) != `["{{ default }}" "db" "42"]` {
				t.Errorf("fingerprint %q", r.Fingerprint)
			}
		}},
		{"builtin tags", `{"logger":"app.db","transaction":"/cart","dist":"7","level":"FATAL","contexts":{"device":{"model":"Pixel 8","arch":"aarch64"},"os":{"name":"Android","version":"14"}}}`,
			wantTags(map[string]string{"logger": "app.db", "transaction": "/cart", "dist": "7", "level": "fatal", "device": "Pixel 8", "os.name": "Android"})},
		{"machine", `{"server_name":"h","release":"r@1","environment":"prod","sdk":{"name":"sentry.python","version":"2.0.0"},
			"contexts":{"os":{"name":"macOS","version":"14.4"},"device":{"arch":"x86_64"},"runtime":{"name":"CPython","version":"3.12.1"}}}`,
			func(t *testing.T, r *report.Report) {
				if r.ServerName != "h" || r.Release != "r@1" || r.Environment != "prod" || r.SDK != (report.SDK{Name: "sentry.python", Version: "2.0.0"}) ||
					r.OS != (report.OS{Name: "darwin", Version: "14.4"}) || r.Arch != "amd64" || r.Runtime != (report.Runtime{Name: "CPython", Version: "3.12.1"}) {
					t.Errorf("report %+v", r)
				}
			}},
		{"exception as bare array", `{"exception":[{"type":"E","value":"v","stacktrace":{"frames":[{"function":"outer"},{"function":"inner"}]}}]}`,
			wantStack("E", "inner", "outer")},
		{"chained exceptions: the last is the event's", `{"exception":{"values":[
			{"type":"Cause","value":"c","stacktrace":{"frames":[{"function":"cause"}]}},
			{"type":"Outer","value":"o","stacktrace":{"frames":[{"function":"a"},{"function":"b"}]}}]}}`,
			wantStack("Outer", "b", "a")},
		{"stack from an older exception", `{"exception":{"values":[
			{"type":"Cause","stacktrace":{"frames":[{"function":"cause"}]}},{"type":"Outer"}]}}`,
			wantStack("Outer", "cause")},
		{"null values skipped", `{"exception":{"values":[{"type":"E"},null]},"threads":{"values":[null]}}`, wantStack("E")},
		{"go frames qualified", `{"platform":"go","exception":[{"type":"E","stacktrace":{"frames":[
			{"function":"main","module":"main","abs_path":"/src/main.go","lineno":10,"in_app":true},
			{"function":"(*Cart).Add","module":"example.com/shop/cart","filename":"cart/cart.go","lineno":42,"in_app":true},
			{"function":"runtime.gopanic","module":"","lineno":-3}]}}]}`,
			func(t *testing.T, r *report.Report) {
				want := []report.Frame{
					{Function: "runtime.gopanic"},
					{Function: "example.com/shop/cart.(*Cart).Add", File: "cart/cart.go", Line: 42, InApp: true},
					{Function: "main.main", File: "/src/main.go", Line: 10, InApp: true},
				}
				if got := crashed(t, r).Frames; fmt.Sprint(got) != fmt.Sprint(want) {
					t.Errorf("frames\nhave %+v\nwant %+v", got, want)
				}
				if r.Platform != report.PlatformGo {
					t.Errorf("platform %q", r.Platform)
				}
			}},
		{"java frames qualified", `{"platform":"java","exception":[{"type":"E","stacktrace":{"frames":[{"function":"run","module":"com.example.Main"}]}}]}`,
			wantStack("E", "com.example.Main.run")},
		{"javascript frames", `{"platform":"javascript","exception":[{"type":"E","stacktrace":{"frames":[
			{"function":"?","filename":"/app.js","abs_path":"https://x.example/app.js","lineno":1,"colno":5},{"filename":"app.js","lineno":3},{},{"in_app":true}]}}]}`,
			func(t *testing.T, r *report.Report) {
				want := []report.Frame{{Function: "?", File: "app.js", Line: 3}, {Function: "?", File: "https://x.example/app.js", Line: 1}}
				if got := crashed(t, r).Frames; fmt.Sprint(got) != fmt.Sprint(want) {
					t.Errorf("frames\nhave %+v\nwant %+v (empty frames dropped, no function is \"?\")", got, want)
				}
				if r.Platform != "javascript" {
					t.Errorf("platform %q", r.Platform)
				}
			}},
		{"function names", `{"exception":[{"type":"E","stacktrace":{"frames":[
			{"function":"f","raw_function":"_Z1fv"},{"raw_function":"_Z1gv"},{"symbol":"_Z1hv"},{"function":"<redacted>","raw_function":"<redacted>","instruction_addr":"0x10"}]}}]}`,
			func(t *testing.T, r *report.Report) {
				want := []report.Frame{{Addr: 0x10}, {Function: "_Z1hv"}, {Function: "_Z1gv"}, {Function: "f"}}
				if got := crashed(t, r).Frames; fmt.Sprint(got) != fmt.Sprint(want) {
					t.Errorf("frames\nhave %+v\nwant %+v", got, want)
				}
				if r.Platform != report.PlatformNative {
					t.Errorf("platform %q, want native (a frame to symbolize)", r.Platform)
				}
			}},
		{"native addresses", `{"platform":"native","debug_meta":{"images":[
			{"type":"elf","code_file":"/bin/app","image_addr":"0x400000","image_size":4096,"image_vmaddr":"0x400000","debug_id":"0102030405060708090a0b0c0d0e0f10","code_id":"ABCDEF"},
			{"type":"sourcemap","code_file":"app.js"},
			{"type":"pe","code_file":"C:\\app\\lib.dll","image_addr":"0x10000","image_size":"0x1000","debug_id":"3249D99D-0C40-4931-8610-F4E4FB0B6936-1","arch":"x86"},
			{"type":"macho","code_file":"/usr/lib/libc.dylib","image_addr":4096,"image_size":16,"debug_id":"not-a-uuid"}]},
			"threads":{"values":[{"id":1,"crashed":true,"stacktrace":{"frames":[
			{"instruction_addr":"0x7"},
			{"instruction_addr":"0x8","addr_mode":"rel:9"},
			{"instruction_addr":"0x9","addr_mode":"weird"},
			{"instruction_addr":"0x20","addr_mode":"rel:2","function":"dllfn"},
			{"instruction_addr":4198400},
			{"instruction_addr":"0x10","addr_mode":"rel:0"},
			{"instruction_addr":"0x400fff","package":"/opt/other.so"},
			{"instruction_addr":"0X1004","function":"inlib"}],
			"registers":{"pc":"0x1004","sp":123,"bad":"zz"}}}]}}`,
			func(t *testing.T, r *report.Report) {
				want := []report.Frame{
					{Addr: 0x1004, Module: "libc.dylib", Function: "inlib"},
					{Addr: 0x400fff, Module: "other.so"},
					{Addr: 0x400010, Module: "app"},
					{Addr: 0x401000},
					{Addr: 0x10020, Module: "lib.dll", Function: "dllfn"},
					{Addr: 0x7},
				}
				th := crashed(t, r)
				if fmt.Sprint(th.Frames) != fmt.Sprint(want) {
					t.Errorf("frames\nhave %+v\nwant %+v (rel:9 and weird modes drop the address; those frames have nothing left)", th.Frames, want)
				}
				if fmt.Sprint(th.Registers) != "map[pc:0x1004 sp:0x7b]" {
					t.Errorf("registers %v", th.Registers)
				}
				wantMods := []report.Module{
					{Type: "elf", Name: "app", Path: "/bin/app", DebugID: "01020304-0506-0708-090a-0b0c0d0e0f10", CodeID: "abcdef", ImageAddr: 0x400000, ImageSize: 4096, ImageVMAddr: 0x400000},
					{Type: "pe", Name: "lib.dll", Path: `C:\app\lib.dll`, DebugID: "3249d99d-0c40-4931-8610-f4e4fb0b6936-1", ImageAddr: 0x10000, ImageSize: 0x1000, Arch: "386"},
					{Type: "macho", Name: "libc.dylib", Path: "/usr/lib/libc.dylib", DebugID: "not-a-uuid", ImageAddr: 0x1000, ImageSize: 16},
				}
				if fmt.Sprint(r.Modules) != fmt.Sprint(wantMods) {
					t.Errorf("modules\nhave %+v\nwant %+v", r.Modules, wantMods)
				}
				if r.Platform != report.PlatformNative || r.Arch != "386" || r.Exception.Type != "message" || r.Exception.ThreadID != 1 {
					t.Errorf("platform %q, arch %q, exception %+v", r.Platform, r.Arch, r.Exception)
				}
			}},
		{"exception stack replaces its thread's", `{"exception":{"values":[{"type":"E","thread_id":"7","stacktrace":{"frames":[{"function":"fromException"}]}}]},
			"threads":{"values":[{"id":3,"crashed":true,"stacktrace":{"frames":[{"function":"three"}]}},{"id":"7","name":"w","stacktrace":{"frames":[{"function":"fromThread"}]}}]}}`,
			func(t *testing.T, r *report.Report) {
				if len(r.Threads) != 2 || r.Threads[1].Frames[0].Function != "fromException" || !r.Threads[1].Crashed ||
					r.Exception.ThreadID != 7 || r.Threads[0].Frames[0].Function != "three" {
					t.Errorf("threads %+v, exception %+v", r.Threads, r.Exception)
				}
			}},
		{"exception stack on a new thread", `{"exception":{"values":[{"type":"E","stacktrace":{"frames":[{"function":"f"}]}}]},
			"threads":{"values":[{"id":0,"current":true},{"id":5,"name":"main"}]}}`,
			func(t *testing.T, r *report.Report) {
				if len(r.Threads) != 3 || r.Threads[2].ID != 6 || !r.Threads[2].Crashed || r.Exception.ThreadID != 6 || r.Threads[0].Crashed {
					t.Errorf("threads %+v, exception %+v", r.Threads, r.Exception)
				}
			}},
		{"thread named by a string id", `{"exception":{"values":[{"type":"E","thread_id":"main","stacktrace":{"frames":[{"function":"f"}]}}]},
			"threads":{"values":[{"id":"main"}]}}`,
			func(t *testing.T, r *report.Report) {
				if len(r.Threads) != 1 || r.Threads[0].Name != "main" || !r.Threads[0].Crashed || r.Threads[0].Frames[0].Function != "f" {
					t.Errorf("threads %+v", r.Threads)
				}
			}},
		{"legacy top-level stacktrace of a message", `{"message":"m","stacktrace":{"frames":[{"function":"a"},{"function":"b"}]}}`, wantStack("message", "b", "a")},
		{"mechanism", `{"level":"fatal","exception":{"values":[{"type":"E","mechanism":{"type":"onunhandledrejection","handled":false}}]}}`,
			func(t *testing.T, r *report.Report) {
				if ex := r.Exception; ex.Mechanism != "onunhandledrejection" || ex.Handled {
					t.Errorf("exception %+v", ex)
				}
			}},
		{"signal mechanism", `{"exception":{"values":[{"type":"SIGSEGV","mechanism":{"type":"signalhandler","handled":true,"meta":{"signal":{"number":11}}}}]}}`,
			func(t *testing.T, r *report.Report) {
				if ex := r.Exception; ex.Mechanism != "signal" || !ex.Handled {
					t.Errorf("exception %+v", ex)
				}
			}},
		{"message next to an exception", `{"message":"while saving","exception":{"values":[{"type":"E","value":"v"}]}}`,
			func(t *testing.T, r *report.Report) {
				if r.Exception.Type != "E" || r.Tags["message"] != "while saving" {
					t.Errorf("exception %+v, tags %v", r.Exception, r.Tags)
				}
			}},
		{"synthetic exception of a message", `{"message":"m","exception":{"values":[{"value":"m","mechanism":{"type":"generic","synthetic":true}}]}}`,
			func(t *testing.T, r *report.Report) {
				if r.Exception.Type != "message" || r.Exception.Value != "m" || r.Tags["message"] != "" {
					t.Errorf("exception %+v, tags %v", r.Exception, r.Tags)
				}
			}},
		{"type error and default", `{"type":"default","message":"m"}`, wantMessage("m", "error")},
		{"scalars of other types", `{"release":1.5,"environment":true,"server_name":{},"level":null,"platform":7}`, func(t *testing.T, r *report.Report) {
			if r.Release != "1.5" || r.Environment != "true" || r.ServerName != "" || r.Platform != "7" {
				t.Errorf("report %+v", r)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := sentry.Event([]byte(tt.in))
			if err != nil {
				t.Fatalf("Event(%s): %v", tt.in, err)
			}
			ts := r.Timestamp
			if ts.IsZero() {
				r.Timestamp = time.Unix(1, 0) // Validate wants one; the caller sets it
			}
			checkReport(t, r)
			r.Timestamp = ts
			tt.check(t, r)
		})
	}
}

func wantTime(want time.Time) func(*testing.T, *report.Report) {
	return func(t *testing.T, r *report.Report) {
		t.Helper()
		if !r.Timestamp.Equal(want) || (!want.IsZero() && r.Timestamp.Location() != time.UTC) {
			t.Errorf("timestamp %v, want %v in UTC", r.Timestamp, want.UTC())
		}
	}
}

func wantMessage(msg, level string) func(*testing.T, *report.Report) {
	return func(t *testing.T, r *report.Report) {
		t.Helper()
		if ex := r.Exception; ex == nil || ex.Type != "message" || ex.Value != msg || !ex.Handled || r.Tags["level"] != level {
			t.Errorf("exception %+v, tags %v; want message %q, level %s", r.Exception, r.Tags, msg, level)
		}
	}
}

func wantTags(want map[string]string) func(*testing.T, *report.Report) {
	return func(t *testing.T, r *report.Report) {
		t.Helper()
		for k, v := range want {
			if got, ok := r.Tags[k]; !ok || got != v {
				t.Errorf("tag %q = %q, %v; want %q (tags %v)", k, got, ok, v, r.Tags)
			}
		}
		if n := len(want) + 1; want["level"] == "" && len(r.Tags) != n {
			t.Errorf("tags %v, want %v and level", r.Tags, want)
		}
	}
}

// wantStack checks the exception type and the crashed thread's functions,
// innermost first.
func wantStack(typ string, funcs ...string) func(*testing.T, *report.Report) {
	return func(t *testing.T, r *report.Report) {
		t.Helper()
		if r.Exception == nil || r.Exception.Type != typ {
			t.Fatalf("exception %+v, want type %s", r.Exception, typ)
		}
		if len(funcs) == 0 {
			if len(r.Threads) != 0 {
				t.Errorf("threads %+v, want none", r.Threads)
			}
			return
		}
		var got []string
		for _, f := range crashed(t, r).Frames {
			got = append(got, f.Function)
		}
		if strings.Join(got, " ") != strings.Join(funcs, " ") {
			t.Errorf("frames %q, want %q", got, funcs)
		}
	}
}

// TestEventFrameLimit checks that a stack of more than 250 frames keeps the
// innermost 250 and is marked truncated.
func TestEventFrameLimit(t *testing.T) {
	var frames []string
	for i := range 300 {
		frames = append(frames, fmt.Sprintf(`{"function":"f%d"}`, i)) // f299 is innermost
	}
	r, err := sentry.Event([]byte(`{"exception":[{"type":"E","stacktrace":{"frames":[` + strings.Join(frames, ",") + `]}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	th := crashed(t, r)
	if len(th.Frames) != 250 || !th.Truncated || th.Frames[0].Function != "f299" || th.Frames[249].Function != "f50" {
		t.Errorf("%d frames, truncated %v, first %s, last %s", len(th.Frames), th.Truncated, th.Frames[0].Function, th.Frames[len(th.Frames)-1].Function)
	}
}

// TestEventThreadLimit checks that more than 1000 threads are cut to 1000,
// keeping the crashed one.
func TestEventThreadLimit(t *testing.T) {
	var threads []string
	for i := range 1500 {
		threads = append(threads, fmt.Sprintf(`{"id":%d,"crashed":%v}`, i, i == 1200))
	}
	r, err := sentry.Event([]byte(`{"exception":[{"type":"E","thread_id":1200,"stacktrace":{"frames":[{"function":"f"}]}}],"threads":[` + strings.Join(threads, ",") + `]}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Threads) != 1000 || r.Truncated == nil || !r.Truncated.Threads || crashed(t, r).ID != 1200 || r.Exception.ThreadID != 1200 {
		t.Errorf("%d threads, truncated %+v, exception %+v", len(r.Threads), r.Truncated, r.Exception)
	}
}

func TestEventErrors(t *testing.T) {
	tests := []struct{ in, msg string }{
		{``, "empty payload"},
		{`   `, "empty payload"},
		{`[]`, "JSON array, not an object"},
		{`"event"`, "JSON string, not an object"},
		{`null`, "JSON null, not an object"},
		{`42`, "JSON number, not an object"},
		{`{"event_id":`, "invalid JSON at offset"},
		{`{"a":1}x`, "invalid JSON at offset 0x8"},
		{`{"event_id":"abc"}`, `field event_id: "abc" is not a UUID`},
		{`{"event_id":12}`, "field event_id: found number, want string"},
		{`{"type":"transaction"}`, `field type: "transaction" is not an error event`},
		{`{"type":"csp"}`, `field type: "csp" is not an error event`},
		{`{"exception":"boom"}`, "field exception: found string, want object"},
		{`{"exception":{"values":"boom"}}`, "field exception.values: found string, want array"},
		{`{"exception":{"values":[5]}}`, "field exception.values: found number, want object"},
		{`{"exception":[{"stacktrace":{"frames":{}}}]}`, "field exception.stacktrace.frames: found object, want array"},
		{`{"threads":{"values":[{"stacktrace":[]}]}}`, "field threads.values.stacktrace: found array, want object"},
		{`{"threads":[{"stacktrace":{"registers":[]}}]}`, "field threads.stacktrace.registers: found array, want object"},
		{`{"debug_meta":{"images":{}}}`, "field debug_meta.images: found object, want array"},
		{`{"contexts":{"os":"linux"}}`, "field contexts.os: found string, want object"},
		{`{"sdk":"sentry.go"}`, "field sdk: found string, want object"},
		{`{"tags":"a=b"}`, "field tags: found string, want object"},
		{`{"fingerprint":"x"}`, "field fingerprint: found string, want array"},
	}
	for _, tt := range tests {
		r, err := sentry.Event([]byte(tt.in))
		if !errors.Is(err, sentry.ErrInvalid) || !strings.Contains(err.Error(), tt.msg) {
			t.Errorf("Event(%s) = %v, %v; want ErrInvalid with %q", tt.in, r, err, tt.msg)
		}
	}
}

func TestStore(t *testing.T) {
	event := []byte(`{"event_id":"9ec79c33ec9942ab8353589fcb2e04dc","message":"legacy"}`)
	for _, tt := range []struct {
		name string
		body []byte
	}{
		{"JSON", event},
		{"base64", []byte(base64.StdEncoding.EncodeToString(event))},
		{"zlib", zlibbed(event)},
		{"base64 of zlib", []byte(base64.StdEncoding.EncodeToString(zlibbed(event)))},
	} {
		r, err := sentry.Store(tt.body, sentry.Limits{})
		if err != nil || r.EventID != "9ec79c33ec9942ab8353589fcb2e04dc" || r.Exception.Value != "legacy" {
			t.Errorf("Store(%s) = %+v, %v", tt.name, r, err)
		}
	}
	if _, err := sentry.Store(event, sentry.Limits{Event: int64(len(event) - 1)}); !errors.Is(err, sentry.ErrTooLarge) {
		t.Errorf("Store over the limit: %v, want ErrTooLarge", err)
	}
	if _, err := sentry.Store(event, sentry.Limits{Event: int64(len(event))}); err != nil {
		t.Errorf("Store at the limit: %v", err)
	}
	big := []byte(`{"message":"` + strings.Repeat("a", 5000) + `"}`)
	if _, err := sentry.Store(zlibbed(big), sentry.Limits{Event: 1000}); !errors.Is(err, sentry.ErrTooLarge) {
		t.Errorf("Store of zlib inflating past the limit: %v, want ErrTooLarge", err)
	}
	if _, err := sentry.Store(zlibbed(event)[:20], sentry.Limits{}); !errors.Is(err, sentry.ErrBadBody) {
		t.Errorf("Store of truncated zlib: %v, want ErrBadBody", err)
	}
	if _, err := sentry.Store([]byte("not base64 !"), sentry.Limits{}); !errors.Is(err, sentry.ErrInvalid) {
		t.Errorf("Store of junk: %v, want ErrInvalid", err)
	}
}

// TestEventIDs checks NormalizeEventID on the forms Sentry allows and the
// ones it does not.
func TestEventIDs(t *testing.T) {
	for _, tt := range []struct {
		in, want string
		ok       bool
	}{
		{"9ec79c33ec9942ab8353589fcb2e04dc", "9ec79c33ec9942ab8353589fcb2e04dc", true},
		{"9EC79C33EC9942AB8353589FCB2E04DC", "9ec79c33ec9942ab8353589fcb2e04dc", true},
		{"9ec79c33-ec99-42ab-8353-589fcb2e04dc", "9ec79c33ec9942ab8353589fcb2e04dc", true},
		{"9ec79c33-ec99-42ab-8353-589fcb2e04d", "", false},
		{"9ec79c33ec9942ab8353589fcb2e04dc0", "", false},
		{"9ec79c33-ec9942ab-8353-589fcb2e04dc", "", false},
		{"9ec79c33ec9942ab8353589fcb2e04dg", "", false},
		{"", "", false},
	} {
		got, ok := sentry.NormalizeEventID(tt.in)
		if got != tt.want || ok != tt.ok {
			t.Errorf("NormalizeEventID(%q) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
	// A payload without an id gets one derived from its bytes.
	r, err := sentry.Event([]byte(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(`{}`))
	if want := hex.EncodeToString(sum[:16]); r.EventID != want {
		t.Errorf("event id of {} = %q, want %q", r.EventID, want)
	}
}

// TestEventModuleLimit checks that more than 4096 images are cut to 4096,
// while "rel:N" frames still find the image they name.
func TestEventModuleLimit(t *testing.T) {
	var images []string
	for i := range 5000 {
		images = append(images, fmt.Sprintf(`{"type":"elf","code_file":"/lib/l%d.so","image_addr":"0x%x","image_size":4096}`, i, 0x100000+i*0x1000))
	}
	r, err := sentry.Event([]byte(`{"debug_meta":{"images":[` + strings.Join(images, ",") + `]},
		"exception":[{"type":"E","stacktrace":{"frames":[{"instruction_addr":"0x10","addr_mode":"rel:4999"}]}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Modules) != 4096 || r.Truncated == nil || !r.Truncated.Modules || r.Truncated.Threads {
		t.Errorf("%d modules, truncated %+v", len(r.Modules), r.Truncated)
	}
	if f := crashed(t, r).Frames[0]; f.Addr != 0x100000+4999*0x1000+0x10 {
		t.Errorf("frame %+v", f)
	}
}
