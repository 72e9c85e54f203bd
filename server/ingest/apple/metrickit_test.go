package apple_test

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/backtrail/backtrail/report"
	"github.com/backtrail/backtrail/server/ingest/apple"
)

func parseMetricKit(t *testing.T, name string, data []byte) []*report.Report {
	t.Helper()
	rs, err := apple.ParseMetricKit(data)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	for i, r := range rs {
		checkReport(t, fmt.Sprintf("%s report %d", name, i), r)
	}
	return rs
}

func addrs(fs []report.Frame) []report.Addr {
	var a []report.Addr
	for _, f := range fs {
		a = append(a, f.Addr)
	}
	return a
}

// sampleList renders samples as "weight:addr,addr,..." for comparison.
func sampleList(ss []report.Sample) []string {
	var out []string
	for _, s := range ss {
		var b strings.Builder
		fmt.Fprintf(&b, "%d:", s.Weight)
		for i, f := range s.Frames {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprint(&b, uint64(f.Addr))
		}
		if s.Truncated {
			b.WriteString(" truncated")
		}
		out = append(out, b.String())
	}
	return out
}

// TestParseMetricKitTreeReal checks the real per-thread tree from
// sentry-cocoa: 16 call stacks, the first attributed, 27 frames from the
// crashing frame in Sentry down to dyld's start.
func TestParseMetricKitTreeReal(t *testing.T) {
	rs := parseMetricKit(t, "tree-real.json", fixture(t, "metrickit/tree-real.json"))
	if len(rs) != 1 {
		t.Fatalf("%d reports", len(rs))
	}
	r := rs[0]
	if r.Kind != report.KindDump || r.SDK.Name != "apple.metrickit" || !r.Timestamp.IsZero() || r.Tags["apple.metrickit"] != "callStackTree" {
		t.Errorf("kind %q, sdk %+v, timestamp %v, tags %v", r.Kind, r.SDK, r.Timestamp, r.Tags)
	}
	if len(r.Threads) != 16 || len(r.Modules) != 11 {
		t.Fatalf("%d threads, %d modules", len(r.Threads), len(r.Modules))
	}
	th := r.Threads[0]
	if th.ID != 0 || !th.Crashed || len(th.Frames) != 27 || th.Truncated {
		t.Errorf("thread 0: id %d crashed %v, %d frames, truncated %v", th.ID, th.Crashed, len(th.Frames), th.Truncated)
	}
	if th.Frames[0] != (report.Frame{Addr: 4312798220, Module: "Sentry"}) || th.Frames[1] != (report.Frame{Addr: 4310988076, Module: "iOS-Swift"}) ||
		th.Frames[26] != (report.Frame{Addr: 7091980640, Module: "dyld"}) {
		t.Errorf("frames 0, 1, 26: %+v %+v %+v", th.Frames[0], th.Frames[1], th.Frames[26])
	}
	for _, o := range r.Threads[1:] {
		if o.Crashed || len(o.Frames) == 0 {
			t.Errorf("thread %d: crashed %v, %d frames", o.ID, o.Crashed, len(o.Frames))
		}
	}
	wantSentry := report.Module{Type: "macho", Name: "Sentry", DebugID: "9e8d8de6-eec1-3199-8720-9ed68ee3f967",
		CodeID: "9e8d8de6eec1319987209ed68ee3f967", ImageAddr: 4312798220 - 414732}
	if r.Modules[0] != wantSentry {
		t.Errorf("modules[0] = %+v, want %+v", r.Modules[0], wantSentry)
	}
	// Samples hold the attributed thread's one path.
	if r.Hang == nil || len(r.Hang.Samples) != 1 || r.Hang.Samples[0].Weight != 1 || !reflect.DeepEqual(r.Hang.Samples[0].Frames, th.Frames) {
		t.Errorf("hang %+v", r.Hang)
	}
	// The same bytes give the same derived event id.
	again, _ := apple.ParseMetricKit(fixture(t, "metrickit/tree-real.json"))
	if again[0].EventID != r.EventID {
		t.Errorf("event id %q then %q", r.EventID, again[0].EventID)
	}
}

// TestParseMetricKitTrees checks the other call stack trees from
// sentry-cocoa. The expected samples were worked out by hand from the
// files: each path from a root to a frame where samples ended, with the
// sampleCount less that of the subFrames.
func TestParseMetricKitTrees(t *testing.T) {
	tests := []struct {
		file    string
		threads [][]report.Addr
		crashed []bool
		samples []string
	}{
		{
			file: "not-per-thread.json",
			// Sentry (7 of 9 samples) → iOS-Swift (6) → 4310988056 (3) → first subFrame.
			threads: [][]report.Addr{{4312798220, 4310988076, 4310988056, 4310988066}},
			crashed: []bool{true},
			samples: []string{
				"1:4312798220,4310988076,4310988026",
				"1:4312798220,4310988076,4310988056,4310988066",
				"1:4312798220,4310988076,4310988056,6669985296",
				"1:4312798220,4310988076,4310988056,6670012856",
				"1:4312798220,4310988076,4310988046",
				"1:4312798220,4310988076,8080116652",
				"1:4312798220,8080116642",
				"1:4312798220,4310988076,4310988026",
				"1:4312798220,4310988076,4310988036",
			},
		},
		{
			file:    "not-per-thread-only-one-frame.json",
			threads: [][]report.Addr{{9111738884}},
			crashed: []bool{true},
			samples: []string{"92:9111738884", "92:9111738884"},
		},
		{
			file:    "per-thread-flamegraph.json",
			threads: [][]report.Addr{{0, 1, 3}},
			crashed: []bool{true},
			samples: []string{"1:0,1,2", "2:0,1,3"},
		},
		{
			file:    "per-thread.json",
			threads: [][]report.Addr{{4312798220, 4310988076, 4310988026}, {4312798220, 4310988076, 4310988026}},
			crashed: []bool{true, false},
			samples: []string{"1:4312798220,4310988076,4310988026"},
		},
		{
			file:    "per-thread-nil-package.json",
			threads: [][]report.Addr{{0}},
			crashed: []bool{true},
			samples: []string{"1:0"},
		},
		{
			file:    "tree-unknown-fields.json",
			threads: [][]report.Addr{{4312798220, 4310988076, 4310988026}},
			crashed: []bool{true},
			samples: []string{"1:4312798220,4310988076,4310988026"},
		},
	}
	for _, tt := range tests {
		rs := parseMetricKit(t, tt.file, fixture(t, "metrickit/"+tt.file))
		if len(rs) != 1 {
			t.Fatalf("%s: %d reports", tt.file, len(rs))
		}
		r := rs[0]
		var threads [][]report.Addr
		var crashed []bool
		for _, th := range r.Threads {
			threads = append(threads, addrs(th.Frames))
			crashed = append(crashed, th.Crashed)
		}
		if !reflect.DeepEqual(threads, tt.threads) || !reflect.DeepEqual(crashed, tt.crashed) {
			t.Errorf("%s: threads %v crashed %v, want %v %v", tt.file, threads, crashed, tt.threads, tt.crashed)
		}
		if got := sampleList(r.Hang.Samples); !reflect.DeepEqual(got, tt.samples) {
			t.Errorf("%s: samples\nhave %q\nwant %q", tt.file, got, tt.samples)
		}
	}
}

// TestParseMetricKitUnknownFrames checks frames at address 0: the flame
// graph fixture's root (no address, offset 0, no other frame of its
// binary with an address) and a frame without a binary name.
func TestParseMetricKitUnknownFrames(t *testing.T) {
	r := parseMetricKit(t, "per-thread-flamegraph.json", fixture(t, "metrickit/per-thread-flamegraph.json"))[0]
	if f := r.Threads[0].Frames[0]; f != (report.Frame{Module: "Sentry", Function: "???"}) {
		t.Errorf("frame at 0 = %+v", f)
	}
	r = parseMetricKit(t, "per-thread-nil-package.json", fixture(t, "metrickit/per-thread-nil-package.json"))[0]
	if f := r.Threads[0].Frames[0]; f != (report.Frame{Function: "???"}) {
		t.Errorf("frame = %+v", f)
	}
	want := []report.Module{{Type: "macho", DebugID: "9e8d8de6-eec1-3199-8720-9ed68ee3f967", CodeID: "9e8d8de6eec1319987209ed68ee3f967"}}
	if !reflect.DeepEqual(r.Modules, want) {
		t.Errorf("modules %+v", r.Modules)
	}
}

func TestParseMetricKitGarbage(t *testing.T) {
	_, err := apple.ParseMetricKit(fixture(t, "metrickit/tree-garbage.json"))
	if !errors.Is(err, apple.ErrInvalid) || !strings.Contains(fmt.Sprint(err), "line 24: unexpected end of JSON input") {
		t.Errorf("err = %v", err)
	}
}

// TestParseMetricKitPayload checks the hand-written MXDiagnosticPayload
// in testdata/payload.json, one diagnostic of each kind.
func TestParseMetricKitPayload(t *testing.T) {
	rs := parseMetricKit(t, "payload.json", readFile(t, "testdata/payload.json"))
	if len(rs) != 4 {
		t.Fatalf("%d reports", len(rs))
	}
	ids := make(map[string]bool)
	end := time.Date(2023, 5, 5, 23, 59, 0, 0, time.UTC)
	for i, r := range rs {
		ids[r.EventID] = true
		if !r.Timestamp.Equal(end) || r.OS != (report.OS{Name: "ios", Version: "16.4.1"}) || r.Arch != "arm64" || r.Tags["apple.os_build"] != "20E252" {
			t.Errorf("report %d: timestamp %v, os %+v, arch %q, tags %v", i, r.Timestamp, r.OS, r.Arch, r.Tags)
		}
		if r.SDK != (report.SDK{Name: "apple.metrickit", Version: "1.0.0"}) {
			t.Errorf("report %d: sdk %+v", i, r.SDK)
		}
	}
	if len(ids) != 4 {
		t.Errorf("event ids are not distinct: %v", ids)
	}

	crash := rs[0]
	if crash.Kind != report.KindCrash || crash.Release != "com.example.shop@1.4.2+42" || crash.Hang != nil || crash.Tags["apple.model"] != "iPhone14,2" ||
		crash.Tags["apple.termination"] != "Namespace SIGNAL, Code 11 Segmentation fault: 11" || crash.Tags["apple.metrickit"] != "crash" {
		t.Errorf("crash: kind %q, release %q, hang %v, tags %v", crash.Kind, crash.Release, crash.Hang, crash.Tags)
	}
	wantExc := report.Exception{Type: "EXC_BAD_ACCESS", Value: "SIGSEGV: 0x0000000000000001", Mechanism: "mach", ThreadID: 1}
	if crash.Exception == nil || *crash.Exception != wantExc {
		t.Errorf("crash exception %+v, want %+v", crash.Exception, wantExc)
	}
	if len(crash.Threads) != 2 || crash.Threads[0].Crashed || !crash.Threads[1].Crashed {
		t.Fatalf("crash threads %+v", crash.Threads)
	}
	// The middle frame has neither address nor binaryName: Shop's load
	// address (4310988076 - 46380) plus its offset, and Shop's name.
	wantFrames := []report.Frame{
		{Addr: 4310988076, Module: "Shop"},
		{Addr: 4310988076 - 46380 + 34948, Module: "Shop"},
		{Addr: 6482782560, Module: "dyld"},
	}
	if !reflect.DeepEqual(crash.Threads[1].Frames, wantFrames) {
		t.Errorf("crashed thread frames\nhave %+v\nwant %+v", crash.Threads[1].Frames, wantFrames)
	}

	hang := rs[1]
	if hang.Kind != report.KindHang || hang.Hang == nil || hang.Hang.DurationMS != 2500 || hang.Tags["apple.metrickit"] != "hang" {
		t.Fatalf("hang: kind %q, hang %+v, tags %v", hang.Kind, hang.Hang, hang.Tags)
	}
	// The attributed thread has two roots, the kernel frame with 10 samples
	// (3 and 6 of them going on to two callers, 1 ending there) and a Shop
	// frame with 4; its heaviest path is kernel → the caller with 6.
	if got := addrs(hang.Threads[0].Frames); !reflect.DeepEqual(got, []report.Addr{7600627720, 4310988696}) || !hang.Threads[0].Crashed {
		t.Errorf("hung thread %+v", hang.Threads[0])
	}
	wantSamples := []string{"3:7600627720,4310987696", "6:7600627720,4310988696", "1:7600627720", "4:4310989696"}
	if got := sampleList(hang.Hang.Samples); !reflect.DeepEqual(got, wantSamples) {
		t.Errorf("hang samples %q, want %q", got, wantSamples)
	}
	if hang.Threads[1].Crashed || len(hang.Threads[1].Frames) != 1 {
		t.Errorf("second thread %+v", hang.Threads[1])
	}

	cpu := rs[2]
	if cpu.Kind != report.KindDump || cpu.Hang.DurationMS != 90000 || cpu.Tags["apple.cpu_time"] != "20 sec" || cpu.Tags["apple.sampled_time"] != "90 sec" || cpu.Release != "1.4.2+42" {
		t.Errorf("cpu: kind %q, hang %+v, tags %v, release %q", cpu.Kind, cpu.Hang, cpu.Tags, cpu.Release)
	}
	if len(cpu.Threads) != 1 || cpu.Threads[0].Name != "aggregated" || !reflect.DeepEqual(addrs(cpu.Threads[0].Frames), []report.Addr{4310992696}) {
		t.Errorf("cpu threads %+v", cpu.Threads)
	}
	if got := sampleList(cpu.Hang.Samples); !reflect.DeepEqual(got, []string{"5:4310991696", "7:4310992696"}) {
		t.Errorf("cpu samples %q", got)
	}

	disk := rs[3]
	if disk.Kind != report.KindDump || disk.Tags["apple.writes_caused"] != "1,024 MB" || !reflect.DeepEqual(sampleList(disk.Hang.Samples), []string{"3:4310993696"}) {
		t.Errorf("disk: kind %q, tags %v, hang %+v", disk.Kind, disk.Tags, disk.Hang)
	}
}

// TestParseMetricKitShapes checks the other documents ParseMetricKit
// takes or refuses.
func TestParseMetricKitShapes(t *testing.T) {
	tree := `{"callStackPerThread": true, "callStacks": [{"threadAttributed": true, "callStackRootFrames": [{"binaryUUID": "9E8D8DE6-EEC1-3199-8720-9ED68EE3F967", "address": 4096, "offsetIntoBinaryTextSegment": 0, "sampleCount": 1}]}]}`
	diag := func(meta string) string {
		return `{"version": "1.0.0", "callStackTree": ` + tree + `, "diagnosticMetaData": {` + meta + `}}`
	}
	tests := []struct {
		name    string
		data    string
		kinds   []report.Kind
		names   []string
		err     error
		errText string
	}{
		{name: "bare tree", data: tree, kinds: []report.Kind{report.KindDump}, names: []string{"callStackTree"}},
		{name: "array", data: "[" + tree + `, {"hangDiagnostics": [` + diag(`"hangDuration": "1 sec"`) + `]}]`,
			kinds: []report.Kind{report.KindDump, report.KindHang}, names: []string{"callStackTree", "hang"}},
		{name: "lone crash", data: diag(`"signal": 6, "exceptionType": 10`), kinds: []report.Kind{report.KindCrash}, names: []string{"crash"}},
		{name: "lone hang", data: diag(`"hangDuration": "3 sec"`), kinds: []report.Kind{report.KindHang}, names: []string{"hang"}},
		{name: "lone launch", data: diag(`"launchDuration": "12 sec"`), kinds: []report.Kind{report.KindHang}, names: []string{"appLaunch"}},
		{name: "lone cpu", data: diag(`"totalCPUTime": "1 min"`), kinds: []report.Kind{report.KindDump}, names: []string{"cpuException"}},
		{name: "lone disk", data: diag(`"writesCaused": "1 GB"`), kinds: []report.Kind{report.KindDump}, names: []string{"diskWriteException"}},
		{name: "lone unknown", data: diag(``), kinds: []report.Kind{report.KindDump}, names: []string{"callStackTree"}},
		{name: "flattened metadata", data: `{"callStackTree": ` + tree + `, "hangDuration": "3 sec"}`, kinds: []report.Kind{report.KindHang}, names: []string{"hang"}},
		{name: "app launch", data: `{"appLaunchDiagnostics": [` + diag(`"launchDuration": "12 sec"`) + `]}`, kinds: []report.Kind{report.KindHang}, names: []string{"appLaunch"}},
		{name: "crash without tree", data: `{"crashDiagnostics": [{"diagnosticMetaData": {"signal": 9}}]}`, kinds: []report.Kind{report.KindCrash}, names: []string{"crash"}},
		{name: "empty payload", data: `{"timeStampBegin": "2023-05-05 00:00:00 +0000", "crashDiagnostics": []}`},
		{name: "metrics payload", data: `{"timeStampBegin": "x", "cpuMetrics": {}}`, err: apple.ErrUnsupported, errText: "metrics payload"},
		{name: "empty", data: "  ", err: apple.ErrInvalid, errText: "empty"},
		{name: "not an object", data: `"x"`, err: apple.ErrInvalid},
		{name: "array of numbers", data: `[1]`, err: apple.ErrInvalid, errText: "metrickit[0]"},
		{name: "crash with nothing", data: `{"crashDiagnostics": [{}]}`, err: apple.ErrInvalid, errText: "crashDiagnostics[0]: a crash with no exception"},
		{name: "cpu without tree", data: `{"cpuExceptionDiagnostics": [{}]}`, err: apple.ErrInvalid, errText: "no call stacks"},
		{name: "tree without stacks", data: `{"callStacks": []}`, err: apple.ErrInvalid, errText: "no call stacks"},
		{name: "diagnostics not a list", data: `{"hangDiagnostics": {}}`, err: apple.ErrInvalid, errText: "hangDiagnostics"},
		{name: "bad field type", data: `{"callStacks": [{"threadAttributed": "yes"}]}`, err: apple.ErrInvalid, errText: "threadAttributed"},
		{name: "bad number", data: `{"callStacks": [{"callStackRootFrames": [{"address": {}}]}]}`, err: apple.ErrInvalid, errText: "is not a number"},
		{name: "bad tree in a diagnostic", data: `{"hangDiagnostics": [{"callStackTree": {"callStacks": 1}}]}`, err: apple.ErrInvalid, errText: "hangDiagnostics[0].callStackTree"},
	}
	for _, tt := range tests {
		rs, err := apple.ParseMetricKit([]byte(tt.data))
		if tt.err != nil {
			if !errors.Is(err, tt.err) || !strings.Contains(fmt.Sprint(err), tt.errText) {
				t.Errorf("%s: err = %v, want %v containing %q", tt.name, err, tt.err, tt.errText)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		var kinds []report.Kind
		var names []string
		for _, r := range rs {
			checkReport(t, tt.name, r)
			kinds = append(kinds, r.Kind)
			names = append(names, r.Tags["apple.metrickit"])
		}
		if !reflect.DeepEqual(kinds, tt.kinds) || !reflect.DeepEqual(names, tt.names) {
			t.Errorf("%s: kinds %v %v, want %v %v", tt.name, kinds, names, tt.kinds, tt.names)
		}
		if rs == nil {
			t.Errorf("%s: nil slice", tt.name)
		}
	}
}

func TestParseMetricKitException(t *testing.T) {
	tests := []struct {
		meta string
		want report.Exception
	}{
		{`"exceptionType": 1, "signal": 11, "exceptionCode": 0`, report.Exception{Type: "EXC_BAD_ACCESS", Value: "SIGSEGV: 0x0000000000000000", Mechanism: "mach"}},
		{`"exceptionType": 13, "signal": 31`, report.Exception{Type: "EXC_CORPSE_NOTIFY", Value: "SIGUSR2", Mechanism: "mach"}},
		{`"exceptionType": 14, "signal": 32`, report.Exception{Type: "EXC_#14", Value: "SIG#32", Mechanism: "mach"}},
		{`"exceptionType": 0`, report.Exception{Type: "EXC_#0", Mechanism: "mach"}},
		{`"signal": 6`, report.Exception{Type: "SIGABRT", Mechanism: "signal"}},
		{`"signal": "SIGKILL"`, report.Exception{Type: "SIGKILL", Mechanism: "signal"}},
		{`"exceptionType": "10", "signal": "6"`, report.Exception{Type: "EXC_CRASH", Value: "SIGABRT", Mechanism: "mach"}},
		{`"exceptionType": 10, "signal": 6, "exceptionReason": {"exceptionName": "NSInvalidArgumentException", "composedMessage": "-[NSNull length]: unrecognized selector"}`,
			report.Exception{Type: "EXC_CRASH", Value: "SIGABRT; NSInvalidArgumentException: -[NSNull length]: unrecognized selector", Mechanism: "mach"}},
	}
	for _, tt := range tests {
		rs, err := apple.ParseMetricKit([]byte(`{"crashDiagnostics": [{"diagnosticMetaData": {` + tt.meta + `}}]}`))
		if err != nil {
			t.Errorf("%s: %v", tt.meta, err)
			continue
		}
		checkReport(t, tt.meta, rs[0])
		if *rs[0].Exception != tt.want {
			t.Errorf("%s: exception %+v, want %+v", tt.meta, *rs[0].Exception, tt.want)
		}
	}
}

func TestParseMetricKitDurations(t *testing.T) {
	tests := []struct {
		in   string
		want int64
	}{
		{`"2.5 sec"`, 2500}, {`"20 sec"`, 20000}, {`"1,500 ms"`, 1500}, {`"2 min"`, 120000}, {`"1 h"`, 3600000},
		{`"250 µs"`, 0}, {`"3"`, 3000}, {`3`, 3000}, {`"-1 sec"`, 0}, {`"soon"`, 0}, {`""`, 0}, {`null`, 0},
		{`"1e400 sec"`, 0}, {`"99999999999999999999 sec"`, 9223372036854775807},
	}
	for _, tt := range tests {
		rs, err := apple.ParseMetricKit([]byte(`{"hangDiagnostics": [{"diagnosticMetaData": {"hangDuration": ` + tt.in + `}}]}`))
		if err != nil {
			t.Errorf("%s: %v", tt.in, err)
			continue
		}
		checkReport(t, tt.in, rs[0])
		if rs[0].Hang.DurationMS != tt.want {
			t.Errorf("hangDuration %s = %d ms, want %d", tt.in, rs[0].Hang.DurationMS, tt.want)
		}
	}
}

// chain returns a tree with one call stack of n frames, each frame the
// only subFrame of the one before, and leaves leaf frames under the last.
func chain(n, leaves int) string {
	var b strings.Builder
	b.WriteString(`{"callStackPerThread": false, "callStacks": [{"callStackRootFrames": [`)
	for i := range n {
		fmt.Fprintf(&b, `{"address": %d, "sampleCount": 1`, 4096+i)
		if i < n-1 || leaves > 0 {
			b.WriteString(`, "subFrames": [`)
		}
	}
	for i := range leaves {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"address": %d, "sampleCount": 1}`, 1<<20+i)
	}
	for i := n - 1; i >= 0; i-- {
		if i < n-1 || leaves > 0 {
			b.WriteString("]")
		}
		b.WriteString("}")
	}
	b.WriteString(`]}]}`)
	return b.String()
}

// TestParseMetricKitDepth checks MaxDepth at its boundary, and nesting
// deeper than encoding/json takes.
func TestParseMetricKitDepth(t *testing.T) {
	for _, n := range []int{apple.MaxDepth - 1, apple.MaxDepth, apple.MaxDepth + 1, 3000} {
		rs := parseMetricKit(t, fmt.Sprint("depth ", n), []byte(chain(n, 0)))
		th := rs[0].Threads[0]
		want := min(n, apple.MaxDepth)
		if len(th.Frames) != want || th.Truncated != (n > apple.MaxDepth) || th.Frames[0].Addr != 4096 {
			t.Errorf("depth %d: %d frames, truncated %v", n, len(th.Frames), th.Truncated)
		}
		s := rs[0].Hang.Samples
		if len(s) != 1 || len(s[0].Frames) != want || s[0].Truncated != (n > apple.MaxDepth) {
			t.Errorf("depth %d: samples %d, truncated %v", n, len(s), s[0].Truncated)
		}
	}
	_, err := apple.ParseMetricKit([]byte(chain(6000, 0)))
	if !errors.Is(err, apple.ErrInvalid) || !strings.Contains(err.Error(), "exceeded max depth") {
		t.Errorf("depth 6000: err = %v", err)
	}
}

// TestParseMetricKitSampleLimits checks MaxSamples and MaxSampleFrames at
// their boundaries, and the budget shared by the reports of one call.
func TestParseMetricKitSampleLimits(t *testing.T) {
	tests := []struct {
		name             string
		n, leaves        int
		samples          int
		frames           int
		samplesTruncated bool
	}{
		{"MaxSamples", 1, apple.MaxSamples, apple.MaxSamples, 2 * apple.MaxSamples, false},
		{"MaxSamples+1", 1, apple.MaxSamples + 1, apple.MaxSamples, 2 * apple.MaxSamples, true},
		// 127 frames and a leaf: 512 samples of 128 frames fill MaxSampleFrames.
		{"MaxSampleFrames", 127, 512, 512, apple.MaxSampleFrames, false},
		{"MaxSampleFrames+1", 127, 513, 512, apple.MaxSampleFrames, true},
	}
	for _, tt := range tests {
		rs := parseMetricKit(t, tt.name, []byte(chain(tt.n, tt.leaves)))
		frames := 0
		for _, s := range rs[0].Hang.Samples {
			frames += len(s.Frames)
		}
		truncated := rs[0].Tags["apple.samples_truncated"] == "true"
		if len(rs[0].Hang.Samples) != tt.samples || frames != tt.frames || truncated != tt.samplesTruncated {
			t.Errorf("%s: %d samples of %d frames, truncated %v", tt.name, len(rs[0].Hang.Samples), frames, truncated)
		}
	}

	// Five trees of 500 samples of 128 frames: the first four fit the
	// budget of 4*MaxSampleFrames, the fifth gets the 6144 frames left.
	one := chain(127, 500)
	rs := parseMetricKit(t, "budget", []byte("["+strings.TrimSuffix(strings.Repeat(one+",", 5), ",")+"]"))
	var got []int
	for _, r := range rs {
		got = append(got, len(r.Hang.Samples))
	}
	if want := []int{500, 500, 500, 500, (4*apple.MaxSampleFrames - 4*500*128) / 128}; !reflect.DeepEqual(got, want) {
		t.Errorf("samples per report %v, want %v", got, want)
	}
	if rs[3].Tags["apple.samples_truncated"] != "" || rs[4].Tags["apple.samples_truncated"] != "true" {
		t.Errorf("truncation tags %v %v", rs[3].Tags, rs[4].Tags)
	}
}

// TestParseMetricKitThreadLimit checks MaxThreads at its boundary.
func TestParseMetricKitThreadLimit(t *testing.T) {
	for _, n := range []int{apple.MaxThreads, apple.MaxThreads + 1} {
		stack := `{"callStackRootFrames": [{"address": 4096}]}`
		data := `{"callStacks": [` + strings.TrimSuffix(strings.Repeat(stack+",", n), ",") + `]}`
		rs := parseMetricKit(t, fmt.Sprint(n, " threads"), []byte(data))
		truncated := rs[0].Truncated != nil && rs[0].Truncated.Threads
		if len(rs[0].Threads) != apple.MaxThreads || truncated != (n > apple.MaxThreads) {
			t.Errorf("%d call stacks: %d threads, truncated %v", n, len(rs[0].Threads), truncated)
		}
	}
}

// TestParseMetricKitNumbers checks that numbers written as strings, with
// fractions or out of range are read leniently.
func TestParseMetricKitNumbers(t *testing.T) {
	data := `{"callStacks": [{"callStackRootFrames": [
		{"address": "0x1000", "sampleCount": "3", "subFrames": [
			{"address": 8192.7, "sampleCount": 99999999999999999999999},
			{"address": -5, "sampleCount": -1, "binaryName": "x"},
			null
		]}]}]}`
	rs := parseMetricKit(t, "numbers", []byte(data))
	th := rs[0].Threads[0]
	if got := addrs(th.Frames); !reflect.DeepEqual(got, []report.Addr{0x1000, 8192}) {
		t.Errorf("frames %v", got)
	}
	want := []string{fmt.Sprintf("%d:4096,8192", 1<<31-1), "1:4096,0"}
	if got := sampleList(rs[0].Hang.Samples); !reflect.DeepEqual(got, want) {
		t.Errorf("samples %q, want %q", got, want)
	}
}
