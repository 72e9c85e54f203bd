package apple_test

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/backtrail/backtrail/server/ingest/apple"
)

// The fuzz targets check, for any input, that the parser does not panic,
// that every error wraps ErrInvalid or ErrUnsupported, and that every
// report it accepts keeps the limits, satisfies §2 and report.Validate once
// it has a time stamp, and survives report.Encode and report.Decode
// unchanged (checkReport). Inputs that ever failed are kept under
// testdata/fuzz as regression seeds.

// addFiles adds the files matching pattern as seeds, kept small so that
// mutations stay cheap: JSON is compacted (an .ips body after its header
// line) and text longer than seedLen is added as its first and last
// seedLen bytes, cut at line ends.
func addFiles(f *testing.F, pattern string) {
	names, err := filepath.Glob(pattern)
	if err != nil || len(names) == 0 {
		f.Fatalf("no seeds match %s: %v", pattern, err)
	}
	for _, n := range names {
		f.Add(seed(readFile(f, n)))
		if data := readFile(f, n); len(data) > seedLen && !json.Valid(data) && !strings.HasSuffix(n, ".ips") {
			tail := data[len(data)-seedLen:]
			if i := bytes.IndexByte(tail, '\n'); i >= 0 {
				tail = tail[i+1:]
			}
			f.Add(tail)
		}
	}
}

const seedLen = 4096

func seed(data []byte) []byte {
	var b bytes.Buffer
	if json.Compact(&b, data) == nil {
		return b.Bytes()
	}
	if header, body, ok := bytes.Cut(data, []byte{'\n'}); ok && json.Compact(&b, body) == nil {
		return append(append(header, '\n'), b.Bytes()...)
	}
	if len(data) > seedLen {
		data = data[:seedLen]
		if i := bytes.LastIndexByte(data, '\n'); i >= 0 {
			data = data[:i+1]
		}
	}
	return data
}

func FuzzParseIPS(f *testing.F) {
	addFiles(f, filepath.Join(fixtures, "*.ips"))
	addFiles(f, "testdata/*.ips")
	f.Add(seed(filledIPS(f)))
	f.Add([]byte(`{"bug_type":"109"}` + "\nException Type: SIGSEGV\nThread 0:\n0 a 0x1 f\n"))
	f.Add([]byte(`{"bug_type":"309"}` + "\n" + `{"threads":[{"frames":[[0,1]],"threadState":{"x":[{"value":1}]}}],"usedImages":[["0123456789abcdef0123456789abcdef",4096,"P"]],"lastExceptionBacktrace":[[0,2]]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := apple.ParseIPS(data)
		if err != nil {
			if e := checkError(err); e != nil {
				t.Fatal(e)
			}
			return
		}
		if e := reportProblem(r); e != nil {
			t.Fatal(e)
		}
	})
}

func FuzzParseCrash(f *testing.F) {
	addFiles(f, filepath.Join(fixtures, "legacy/*.txt"))
	addFiles(f, filepath.Join(fixtures, "*.crash"))
	f.Add(seed(filledCrash(f)))
	f.Add([]byte("Exception Type: EXC_CRASH (SIGABRT)\nLast Exception Backtrace:\n(0x1 0x2)\nThread 0 name: x\nThread 0 Crashed:: Dispatch queue: q\n0 a b 0x10 f + 1 (f.c:2:3)\nThread 0 crashed with ARM Thread State (64-bit):\n x0: 0x1 pc: 0x10\n\nBinary Images:\n0x1 - 0x2 +a arm64 (1) <0123456789abcdef0123456789abcdef> /a\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := apple.ParseCrash(data)
		if err != nil {
			if e := checkError(err); e != nil {
				t.Fatal(e)
			}
			return
		}
		if e := reportProblem(r); e != nil {
			t.Fatal(e)
		}
	})
}

func FuzzParseMetricKit(f *testing.F) {
	addFiles(f, filepath.Join(fixtures, "metrickit/*.json"))
	addFiles(f, "testdata/*.json")
	f.Add([]byte(`[{"callStacks":[{"callStackRootFrames":[{"address":"0x10","sampleCount":2,"subFrames":[{"offsetIntoBinaryTextSegment":1,"binaryUUID":"x"}]}]}]},{"crashDiagnostics":[{"diagnosticMetaData":{"signal":11,"exceptionReason":{"composedMessage":"m"}}}]}]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		rs, err := apple.ParseMetricKit(data)
		if err != nil {
			if e := checkError(err); e != nil {
				t.Fatal(e)
			}
			return
		}
		if rs == nil {
			t.Fatal("nil slice without error")
		}
		for _, r := range rs {
			if e := reportProblem(r); e != nil {
				t.Fatal(e)
			}
		}
	})
}
