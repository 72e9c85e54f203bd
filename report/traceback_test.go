package report_test

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/backtrail/backtrail/report"
)

// The fixtures in testdata/traceback were written by hand in the format of
// Go 1.26's runtime/traceback.go (printpanics, goroutineheader,
// traceback2), with GOTRACEBACK=system and GODEBUG=tracebacklabels=1 in
// system.txt, and without the "fatal error:" line in fatal.txt, as
// SetCrashOutput files lack it.
func TestParseTraceback(t *testing.T) {
	tests := []struct {
		file      string
		exception report.Exception
		threads   []report.Thread
	}{
		{"panic.txt",
			report.Exception{Type: "runtime.Error", Value: "runtime error: index out of range [5] with length 3", Mechanism: "panic", ThreadID: 1},
			[]report.Thread{{ID: 1, State: "running", Crashed: true, Current: true, Frames: []report.Frame{
				{Function: "main.lookup", File: "/src/app/main.go", Line: 12, Inlined: true},
				{Function: "main.main", File: "/src/app/main.go", Line: 20},
			}}}},
		{"system.txt",
			report.Exception{Type: "runtime.Error", Value: "runtime error: invalid memory address or nil pointer dereference\n[signal SIGSEGV: segmentation violation code=0x1 addr=0x0 pc=0x47b2a5]", Mechanism: "signal", ThreadID: 18},
			[]report.Thread{
				{ID: 18, State: "running", Crashed: true, Current: true,
					Labels: map[string]string{"backtrail.trail": "main.submit@1a2b3c4d < main.main@5e6f7a8b", "k": `v "q"`},
					Frames: []report.Frame{
						{Function: "panic", File: "/usr/local/go/src/runtime/panic.go", Line: 860, Addr: 0x43a2da},
						{Function: "main.(*Server).handle", File: "/src/app/server.go", Line: 41, Addr: 0x47b2a5},
					},
					CreatedBy: &report.Frame{Function: "main.main", File: "/src/app/main.go", Line: 9, Addr: 0x47b3c5}},
				{ID: 1, State: "chan receive", Truncated: true, Frames: []report.Frame{{Function: "main.main", File: "/src/app/main.go", Line: 11}}},
			}},
		{"fatal.txt",
			report.Exception{Type: "fatal error", Value: "raised by internal/runtime/maps.fatal in main.writer", Mechanism: "fatal", ThreadID: 7},
			[]report.Thread{{ID: 7, State: "running", Crashed: true, Current: true,
				Frames: []report.Frame{
					{Function: "internal/runtime/maps.fatal", File: "/usr/local/go/src/runtime/panic.go", Line: 1181},
					{Function: "main.writer", File: "/src/app/main.go", Line: 30, Inlined: true},
					{Function: "main.main.gowrap1", File: "/src/app/main.go", Line: 35},
				},
				CreatedBy: &report.Frame{Function: "main.main", File: "/src/app/main.go", Line: 35}}}},
		{"nested.txt",
			report.Exception{Type: "panic", Value: "first [recovered]\npanic: second", Mechanism: "panic", ThreadID: 1},
			[]report.Thread{{ID: 1, State: "running", Crashed: true, Current: true, Frames: []report.Frame{
				{Function: "main.main.func1", File: "C:/src/app/main.go", Line: 8},
			}}}},
		{"value.txt",
			report.Exception{Type: "main.T", Value: "(main.T) 0xc000012345", Mechanism: "panic", ThreadID: 1},
			[]report.Thread{{ID: 1, State: "running", Crashed: true, Current: true, Frames: []report.Frame{
				{Function: "main.main", File: "/src/app/main.go", Line: 5},
			}}}},
	}
	for _, tt := range tests {
		data, err := os.ReadFile(filepath.Join("testdata/traceback", tt.file))
		if err != nil {
			t.Fatal(err)
		}
		ex, threads, _ := parseTB(data)
		if ex == nil || *ex != tt.exception {
			t.Errorf("%s: exception\nhave %+v\nwant %+v", tt.file, ex, tt.exception)
		}
		if !reflect.DeepEqual(threads, tt.threads) {
			t.Errorf("%s: threads\nhave %+v\nwant %+v", tt.file, threads, tt.threads)
		}
	}
}

// FuzzParseTraceback checks that the crash-output parser never panics and
// that what it returns would pass report validation.
func FuzzParseTraceback(f *testing.F) {
	names, _ := filepath.Glob("testdata/traceback/*.txt")
	for _, n := range names {
		data, _ := os.ReadFile(n)
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		ex, threads, _ := parseTB(data)
		if len(threads) > 256 {
			t.Fatalf("%d threads, over the bound", len(threads))
		}
		if len(threads) > 0 && ex == nil {
			t.Fatal("threads without an exception")
		}
		for _, th := range threads {
			if len(th.Frames) > 128 {
				t.Fatalf("%d frames, over the bound", len(th.Frames))
			}
		}
	})
}

func parseTB(text []byte) (*report.Exception, []report.Thread, bool) {
	tb := report.ParseTraceback(text)
	return tb.Exception, tb.Threads, tb.Truncated
}
