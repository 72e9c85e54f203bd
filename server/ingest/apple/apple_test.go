package apple_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/backtrail/backtrail/report"
	"github.com/backtrail/backtrail/server/ingest/apple"
)

// fixtures is the shared fixture folder, testdata/apple at the repository
// root; its provenance is in testdata/PROVENANCE.md.
const fixtures = "../../../testdata/apple"

func readFile(t testing.TB, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func fixture(t testing.TB, name string) []byte {
	t.Helper()
	return readFile(t, filepath.Join(fixtures, name))
}

// Values for the placeholders of lldb's templates a.out.ips and
// a.out.crash, which lldb's tests fill in from a freshly built binary.
// The offsets are plausible for the 16 KiB a.out image at 0x103a00000 of
// a.out.ips: @foo@ is where its rip register (0x103a03f70) points, and
// bar and main follow foo in test.c.
const (
	tmplUUID  = "8f528c10-3e80-3dd6-b0be-5d558f64f7ab" // the header's slice_uuid
	tmplExec  = "/tmp/a.out"
	tmplName  = "a.out"
	fooOffset = 0x3f70
	barOffset = 0x3f90
	mainOff   = 0x3fb0
)

// filledIPS returns a.out.ips with its placeholders replaced.
func filledIPS(t testing.TB) []byte {
	return []byte(strings.NewReplacer(
		"@foo@", fmt.Sprint(fooOffset),
		"@bar@", fmt.Sprint(barOffset),
		"@main@", fmt.Sprint(mainOff),
		"@UUID@", tmplUUID,
		"@EXEC@", tmplExec,
		"@NAME@", tmplName,
	).Replace(string(fixture(t, "a.out.ips"))))
}

// filledCrash returns a.out.crash with its placeholders replaced: its
// image a.out is loaded at 0x100000000.
func filledCrash(t testing.TB) []byte {
	return []byte(strings.NewReplacer(
		"@foo@", fmt.Sprintf("0x%016x", uint64(0x100000000+fooOffset)),
		"@bar@", fmt.Sprintf("0x%016x", uint64(0x100000000+barOffset)),
		"@main@", fmt.Sprintf("0x%016x", uint64(0x100000000+mainOff)),
		"@UUID@", strings.ToUpper(tmplUUID),
		"@EXEC@", tmplExec,
		"@NAME@", tmplName,
	).Replace(string(fixture(t, "a.out.crash"))))
}

// checkReport checks the properties every accepted report has: the limits,
// §2's requirements, a frame address or name in every frame, validity
// once a time stamp is set, and that it survives Encode and Decode.
func checkReport(t testing.TB, name string, r *report.Report) {
	t.Helper()
	if err := reportProblem(r); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

func reportProblem(r *report.Report) error {
	if r == nil {
		return errors.New("nil report without error")
	}
	if r.Platform != report.PlatformNative || !strings.HasPrefix(r.SDK.Name, "apple.") {
		return fmt.Errorf("platform %q, sdk %q", r.Platform, r.SDK.Name)
	}
	if len(r.Threads) > apple.MaxThreads || len(r.Modules) > apple.MaxModules {
		return fmt.Errorf("%d threads, %d modules", len(r.Threads), len(r.Modules))
	}
	for i, th := range r.Threads {
		if len(th.Frames) > apple.MaxFrames || len(th.Registers) > apple.MaxRegisters {
			return fmt.Errorf("thread %d: %d frames, %d registers", i, len(th.Frames), len(th.Registers))
		}
	}
	if h := r.Hang; h != nil {
		n := 0
		for _, s := range h.Samples {
			n += len(s.Frames)
			if s.Weight < 1 {
				return fmt.Errorf("sample weight %d", s.Weight)
			}
		}
		if len(h.Samples) > apple.MaxSamples || n > apple.MaxSampleFrames {
			return fmt.Errorf("%d samples of %d frames", len(h.Samples), n)
		}
	}
	v := *r
	if v.Timestamp.IsZero() {
		v.Timestamp = time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	}
	if err := v.Validate(); err != nil {
		return fmt.Errorf("Validate: %v", err)
	}
	var a, b bytes.Buffer
	if err := report.Encode(&a, r); err != nil {
		return fmt.Errorf("Encode: %v", err)
	}
	r2, err := report.Decode(bytes.NewReader(a.Bytes()), int64(a.Len()))
	if err != nil {
		return fmt.Errorf("Decode(Encode(r)): %v", err)
	}
	if err := report.Encode(&b, r2); err != nil {
		return fmt.Errorf("Encode(Decode(Encode(r))): %v", err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		return fmt.Errorf("round trip differs:\nhave %s\nwant %s", b.Bytes(), a.Bytes())
	}
	return nil
}

// checkError checks that err wraps exactly one of the sentinels.
func checkError(err error) error {
	inv, uns := errors.Is(err, apple.ErrInvalid), errors.Is(err, apple.ErrUnsupported)
	if inv == uns {
		return fmt.Errorf("error %q wraps ErrInvalid %v, ErrUnsupported %v", err, inv, uns)
	}
	return nil
}

func TestSniff(t *testing.T) {
	pad := strings.Repeat(" ", 4096-len(`{"x":1,"callStacks"`))
	tests := []struct {
		name string
		data string
		want apple.Format
	}{
		{"a.out.ips", string(fixture(t, "a.out.ips")), apple.FormatIPS},
		{"multithread-test.ips", string(fixture(t, "multithread-test.ips")), apple.FormatIPS},
		{"a.out.crash", string(fixture(t, "a.out.crash")), apple.FormatCrash},
		{"XCDYouTubeKit-54.txt", string(fixture(t, "legacy/XCDYouTubeKit-54.txt")), apple.FormatCrash},
		{"bruno.txt", string(fixture(t, "legacy/bruno.txt")), apple.FormatCrash},
		{"handcrafted.txt", string(fixture(t, "legacy/handcrafted.txt")), apple.FormatCrash},
		{"spaces.txt", string(fixture(t, "legacy/spaces.txt")), apple.FormatCrash},
		{"xcode16.txt", string(fixture(t, "legacy/xcode16.txt")), apple.FormatCrash},
		{"tree-real.json", string(fixture(t, "metrickit/tree-real.json")), apple.FormatMetricKit},
		{"tree-garbage.json", string(fixture(t, "metrickit/tree-garbage.json")), apple.FormatMetricKit},
		{"not-per-thread.json", string(fixture(t, "metrickit/not-per-thread.json")), apple.FormatMetricKit},
		{"payload.json", string(readFile(t, "testdata/payload.json")), apple.FormatMetricKit},
		{"stackshot.ips", string(readFile(t, "testdata/stackshot.ips")), apple.FormatIPS},
		{"empty", "", apple.FormatUnknown},
		{"blank", " \n\t\r\n", apple.FormatUnknown},
		{"BOM and blank lines before an ips header", "\xef\xbb\xbf\n\n{\"bug_type\":\"309\"}\n{}", apple.FormatIPS},
		{"numeric bug_type", `{"bug_type":309}`, apple.FormatIPS},
		{"bug_type on the second line", "{\n\"bug_type\":\"309\"}", apple.FormatUnknown},
		{"other JSON", `{"version":"1.0","kind":"crash"}`, apple.FormatUnknown},
		{"array of payloads", `[{"crashDiagnostics":[]}]`, apple.FormatMetricKit},
		{"MetricKit key ends at byte 4096", `{"x":1,` + pad + `"callStacks"`, apple.FormatMetricKit},
		{"MetricKit key ends at byte 4097", `{"x":1, ` + pad + `"callStacks"`, apple.FormatUnknown},
		{"Thread heading", "Thread 0:\n0 a 0x1 b", apple.FormatCrash},
		{"Thread Crashed heading", "Thread 12 Crashed:: Dispatch queue: q", apple.FormatCrash},
		{"Thread without number", "Thread state unknown", apple.FormatUnknown},
		{"Process and Path", "Process: a [1]\nPath: /a", apple.FormatCrash},
		{"Process alone", "Process: a [1]\nfoo: bar", apple.FormatUnknown},
		{"CRLF", "Incident Identifier: X\r\n", apple.FormatCrash},
		{"Go panic", "panic: boom\n\ngoroutine 1 [running]:\nmain.main()", apple.FormatUnknown},
	}
	for _, tt := range tests {
		if got := apple.Sniff([]byte(tt.data)); got != tt.want {
			t.Errorf("Sniff(%s %.40q) = %v, want %v", tt.name, tt.data, got, tt.want)
		}
	}
}

func TestFormatString(t *testing.T) {
	for f, want := range map[apple.Format]string{
		apple.FormatUnknown: "unknown", apple.FormatIPS: "ips", apple.FormatCrash: "crash",
		apple.FormatMetricKit: "metrickit", apple.Format(99): "unknown",
	} {
		if got := f.String(); got != want {
			t.Errorf("Format(%d).String() = %q, want %q", int(f), got, want)
		}
	}
}

// TestTruncated parses prefixes of each fixture, about 150 cut at line ends
// and 150 at other offsets: each gives an error wrapping a sentinel or a
// report with all the properties of checkReport, never a panic.
func TestTruncated(t *testing.T) {
	type parser func([]byte) error
	one := func(f func([]byte) (*report.Report, error)) parser {
		return func(b []byte) error {
			r, err := f(b)
			if err != nil {
				return checkError(err)
			}
			return reportProblem(r)
		}
	}
	many := func(b []byte) error {
		rs, err := apple.ParseMetricKit(b)
		if err != nil {
			return checkError(err)
		}
		for _, r := range rs {
			if err := reportProblem(r); err != nil {
				return err
			}
		}
		return nil
	}
	inputs := []struct {
		name  string
		data  []byte
		parse parser
	}{
		{"a.out.ips", filledIPS(t), one(apple.ParseIPS)},
		{"multithread-test.ips", fixture(t, "multithread-test.ips"), one(apple.ParseIPS)},
		{"stackshot.ips", readFile(t, "testdata/stackshot.ips"), one(apple.ParseIPS)},
		{"a.out.crash", filledCrash(t), one(apple.ParseCrash)},
		{"handcrafted.txt", fixture(t, "legacy/handcrafted.txt"), one(apple.ParseCrash)},
		{"bruno.txt", fixture(t, "legacy/bruno.txt"), one(apple.ParseCrash)},
		{"payload.json", readFile(t, "testdata/payload.json"), many},
		{"not-per-thread.json", fixture(t, "metrickit/not-per-thread.json"), many},
	}
	for _, in := range inputs {
		lineStep := bytes.Count(in.data, []byte{'\n'})/150 + 1
		byteStep := max(97, len(in.data)/150+1)
		lines := 0
		for n := 0; n <= len(in.data); n++ {
			atLine := n < len(in.data) && in.data[n] == '\n'
			if atLine {
				lines++
			}
			if n != len(in.data) && !(atLine && lines%lineStep == 0) && n%byteStep != 0 {
				continue
			}
			if err := in.parse(in.data[:n]); err != nil {
				t.Fatalf("%s cut at %d: %v", in.name, n, err)
			}
		}
	}
}
