package report_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/backtrail/backtrail/report"
)

// checkParseFast compares Parse's fast path with encoding/json on data:
// whatever the fast path accepts, json.Unmarshal accepts and decodes to
// the same report.
func checkParseFast(t testing.TB, data []byte) (accepted bool) {
	t.Helper()
	got, ok := report.ParseFast(data)
	if !ok {
		return false
	}
	want := new(report.Report)
	if err := json.Unmarshal(data, want); err != nil {
		t.Fatalf("fast path accepted what encoding/json rejects (%v):\n%s", err, data)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("fast path differs from encoding/json on\n%s\n got %#v\nwant %#v", data, got, want)
	}
	return true
}

// parseFastCases are inputs on the edges of the fast path, each with
// whether it takes it.
var parseFastCases = []struct {
	data string
	fast bool
}{
	{`{"version":"1.1"}`, true},
	{` {"version" : "1.1" , "threads" : [ ] } `, true},
	{`{"version":"1.1","threads":[{"id":7,"frames":[{"addr":"0x10","line":-0,"inlined":true,"in_app":false}]}]}`, true},
	{`{"version":"1.1","tags":{"a":"1","a":"2"},"modules":[]}`, true},                          // map keys: the last wins, as in encoding/json
	{`{"version":"1.1","release":"caf\u00e9 \"x\"\n","tags":{"\u00e9":"\ud83d\ude00"}}`, true}, // escapes, by encoding/json
	{"{\"version\":\"1.1\",\"release\":\"caf\xc3\xa9 \xff\"}", true},                           // non-ASCII, invalid UTF-8 → U+FFFD
	{`{"version":"1.1","hang":{"duration_ms":5,"samples":[{"frames":[{"function":"f"}]}]}}`, true},
	{`{"version":"1.1","timestamp":"2024-05-02T10:15:00.123+02:00","exception":{"type":"T","thread_id":18}}`, true},
	{`{"version":"1.1","threads":[{"id":18446744073709551615,"frames":[]}]}`, false}, // beyond 18 digits
	{`{"version":"1.1","threads":[{"id":1.0,"frames":[]}]}`, false},
	{`{"version":"1.1","threads":[{"id":01,"frames":[]}]}`, false},
	{`{"version":"1.1","release":null}`, false},
	{`{"version":"1.1","Release":"r"}`, false}, // encoding/json matches keys case-insensitively
	{`{"version":"1.1","new_field":1}`, true},  // unknown keys are skipped, as in encoding/json
	{`{"future":{"a":[1,{"b":"}]\"x"}],"c":null},"version":"1.1","more":[]}`, true},
	{`{"version":"1.1","new_field":tru}`, false},
	{`{"version":"1.1","version":"1.0"}`, false},
	{`{"version":"1.1","exception":{"type":"a"},"exception":{"value":"b"}}`, false}, // encoding/json merges
	{`{"version":"1.1","threads":[{"frames":[{"addr":"16"}]}]}`, false},
	{`{"version":"1.1","release":"a` + "\x01" + `"}`, false},
	{`{"version":"1.1"} x`, false},
	{`{"version":"1.1",}`, false},
	{`{"version":"1.1","hang":{"duration_ms":5,}}`, false},
	{`{"version":"1.1","hang":5}`, false},
	{"\ufeff{\"version\":\"1.1\"}", false},
}

func TestParseFast(t *testing.T) {
	for _, c := range parseFastCases {
		if got := checkParseFast(t, []byte(c.data)); got != c.fast {
			t.Errorf("%s: fast path %t, want %t", c.data, got, c.fast)
		}
	}
	for name, data := range readFixtures(t) {
		if !checkParseFast(t, data) {
			t.Errorf("%s: not decoded by the fast path", name)
		}
	}
	b, err := report.AppendJSON(nil, benchReport())
	if err != nil {
		t.Fatal(err)
	}
	if !checkParseFast(t, b) {
		t.Errorf("AppendJSON's output not decoded by the fast path")
	}
}

func FuzzParseFast(f *testing.F) {
	for _, data := range readFixtures(f) {
		f.Add(data)
	}
	for _, c := range parseFastCases {
		f.Add([]byte(c.data))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkParseFast(t, data)
	})
}

// BenchmarkParse and BenchmarkUnmarshal decode the same processed report
// with Parse (its fast path) and with encoding/json.
func BenchmarkParse(b *testing.B) {
	benchDecode(b, func(data []byte) error { _, err := report.Parse(data); return err })
}

func BenchmarkUnmarshal(b *testing.B) {
	benchDecode(b, func(data []byte) error { var r report.Report; return json.Unmarshal(data, &r) })
}

func benchDecode(b *testing.B, decode func([]byte) error) {
	data, err := report.AppendJSON(nil, benchReport())
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if err := decode(data); err != nil {
			b.Fatal(err)
		}
	}
}
