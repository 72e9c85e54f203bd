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

// TestParseIPSMultithread checks multithread-test.ips (lldb's
// interactive_crashlog input, an arm64 macOS 13 crash) against the values
// in the file.
func TestParseIPSMultithread(t *testing.T) {
	r, err := apple.ParseIPS(fixture(t, "multithread-test.ips"))
	if err != nil {
		t.Fatal(err)
	}
	checkReport(t, "multithread-test.ips", r)
	if r.Kind != report.KindCrash || r.EventID != "5a0d8938189e4fd58c9f02bd2c045baf" {
		t.Errorf("kind %q, event id %q", r.Kind, r.EventID)
	}
	// captureTime 2022-07-28 11:10:19.4194 -0700
	if want := time.Date(2022, 7, 28, 18, 10, 19, 419400000, time.UTC); !r.Timestamp.Equal(want) {
		t.Errorf("timestamp %v, want %v", r.Timestamp, want)
	}
	if r.OS != (report.OS{Name: "darwin", Version: "13.0"}) || r.Arch != "arm64" || r.Release != "" {
		t.Errorf("os %+v, arch %q, release %q", r.OS, r.Arch, r.Release)
	}
	if r.SDK != (report.SDK{Name: "apple.ips", Version: "2"}) {
		t.Errorf("sdk %+v", r.SDK)
	}
	wantTags := map[string]string{"apple.bug_type": "309", "apple.process": "multithread-test", "apple.model": "MacBookPro18,2",
		"apple.termination": "Namespace SIGNAL, Code 0xb, Segmentation fault: 11"}
	if !reflect.DeepEqual(r.Tags, wantTags) {
		t.Errorf("tags %v, want %v", r.Tags, wantTags)
	}
	if len(r.Modules) != 7 {
		t.Fatalf("%d modules, want 7", len(r.Modules))
	}
	wantModule := report.Module{
		Type: "macho", Name: "multithread-test", Path: "/Users/USER/*/multithread-test",
		DebugID: "ab9b94f9-6cdf-3b8e-b140-fae3cb13d327", CodeID: "ab9b94f96cdf3b8eb140fae3cb13d327",
		ImageAddr: 4310450176, ImageSize: 16384, Arch: "arm64",
	}
	if r.Modules[3] != wantModule {
		t.Errorf("modules[3] = %+v, want %+v", r.Modules[3], wantModule)
	}
	if m := r.Modules[0]; m.Name != "libsystem_kernel.dylib" || m.Arch != "arm64e" || m.ImageAddr != 6925049856 {
		t.Errorf("modules[0] = %+v", m)
	}
	if len(r.Threads) != 3 {
		t.Fatalf("%d threads, want 3", len(r.Threads))
	}
	for i, want := range []struct {
		id      uint64
		name    string
		frames  int
		crashed bool
	}{{2344958, "com.apple.main-thread", 5, false}, {2344960, "", 17, false}, {2344961, "", 8, true}} {
		th := r.Threads[i]
		if th.ID != want.id || th.Name != want.name || len(th.Frames) != want.frames || th.Crashed != want.crashed {
			t.Errorf("threads[%d] = id %d name %q %d frames crashed %v, want %+v", i, th.ID, th.Name, len(th.Frames), th.Crashed, want)
		}
	}
	if q := r.Threads[0].Labels["dispatch_queue"]; q != "com.apple.main-thread" {
		t.Errorf("main thread queue %q", q)
	}
	crashed := r.Threads[2]
	// Frame 0 is imageIndex 3 (base 4310450176) + imageOffset 6388, which
	// is where pc points ("matchesCrashFrame": 1).
	want0 := report.Frame{Addr: 4310450176 + 6388, Module: "multithread-test", Function: "bar(int)", File: "multithread-test.cpp", Line: 7}
	if crashed.Frames[0] != want0 {
		t.Errorf("crashed frames[0] = %+v, want %+v", crashed.Frames[0], want0)
	}
	if f := crashed.Frames[7]; f.Addr != 6925283328+7724 || f.Module != "libsystem_pthread.dylib" || f.Function != "thread_start" {
		t.Errorf("crashed frames[7] = %+v", f)
	}
	regs := crashed.Registers
	for name, want := range map[string]report.Addr{
		"pc": 4310456564, "lr": 4310456604, "fp": 6157561600, "sp": 6157561568, "far": 0, "esr": 2449473606,
		"cpsr": 2147487744, "x0": 42, "x10": 18446744066784917455, "x16": 6925291176, "x28": 0,
	} {
		if got, ok := regs[name]; !ok || got != want {
			t.Errorf("register %s = %#x (present %v), want %#x", name, got, ok, want)
		}
	}
	if len(regs) != 29+7 {
		t.Errorf("%d registers, want 36: %v", len(regs), regs)
	}
	if regs["pc"] != crashed.Frames[0].Addr {
		t.Errorf("pc %#x is not frame 0 %#x", regs["pc"], crashed.Frames[0].Addr)
	}
	if r.Threads[0].Registers != nil {
		t.Errorf("main thread has registers %v", r.Threads[0].Registers)
	}
	wantExc := report.Exception{Type: "EXC_BAD_ACCESS", Value: "SIGSEGV: KERN_INVALID_ADDRESS at 0x0000000000000000", Mechanism: "mach", ThreadID: 2344961}
	if r.Exception == nil || *r.Exception != wantExc {
		t.Errorf("exception %+v, want %+v", r.Exception, wantExc)
	}
}

// TestParseIPSTemplate checks lldb's a.out.ips template once its
// placeholders are filled in.
func TestParseIPSTemplate(t *testing.T) {
	r, err := apple.ParseIPS(filledIPS(t))
	if err != nil {
		t.Fatal(err)
	}
	checkReport(t, "a.out.ips", r)
	if r.EventID != "fa21df2333444e45bf274b8e63b7012b" || r.OS != (report.OS{Name: "darwin", Version: "11.3"}) || r.Arch != "amd64" {
		t.Errorf("event id %q, os %+v, arch %q", r.EventID, r.OS, r.Arch)
	}
	if want := time.Date(2021, 3, 8, 21, 56, 51, 861000000, time.UTC); !r.Timestamp.Equal(want) {
		t.Errorf("timestamp %v, want %v", r.Timestamp, want)
	}
	if r.Tags["apple.asi"] != "dyld: dyld2 mode" || r.Tags["apple.process"] != tmplName {
		t.Errorf("tags %v", r.Tags)
	}
	want := []report.Module{
		{Type: "macho", Name: tmplName, Path: tmplExec, DebugID: tmplUUID, CodeID: strings.ReplaceAll(tmplUUID, "-", ""),
			ImageAddr: 4355608576, ImageSize: 16384, Arch: "x86_64"},
		{Type: "macho", Name: "libdyld.dylib", Path: "/usr/lib/system/libdyld.dylib", DebugID: "c5caf30b-0617-3b07-88c7-6319cd06f30a",
			CodeID: "c5caf30b06173b0788c76319cd06f30a", ImageAddr: 140733734899712, ImageSize: 245760, Arch: "x86_64h"},
	}
	if !reflect.DeepEqual(r.Modules, want) {
		t.Errorf("modules\nhave %+v\nwant %+v", r.Modules, want)
	}
	if len(r.Threads) != 1 {
		t.Fatalf("%d threads", len(r.Threads))
	}
	th := r.Threads[0]
	if th.ID != 6152004 || th.Name != "Crashing Thread Name" || !th.Crashed || th.Labels["dispatch_queue"] != "com.apple.main-thread" {
		t.Errorf("thread %+v", th)
	}
	wantFrames := []report.Frame{
		{Addr: 4355608576 + fooOffset, Module: tmplName, Function: "foo", File: "test.c", Line: 3},
		{Addr: 4355608576 + barOffset, Module: tmplName, Function: "bar", File: "test.c", Line: 6},
		{Addr: 4355608576 + mainOff, Module: tmplName, Function: "main", File: "test.c", Line: 8},
		{Addr: 140733734899712 + 89917, Module: "libdyld.dylib", Function: "start"},
	}
	if !reflect.DeepEqual(th.Frames, wantFrames) {
		t.Errorf("frames\nhave %+v\nwant %+v", th.Frames, wantFrames)
	}
	if th.Registers["rip"] != th.Frames[0].Addr || th.Registers["rflags"] != 66054 || th.Registers["cr2"] != 0 || th.Registers["trap"] != 14 {
		t.Errorf("registers %v", th.Registers)
	}
	if _, ok := th.Registers["rosetta"]; ok {
		t.Errorf("rosetta, which has no value, is a register")
	}
	if _, ok := th.Registers["flavor"]; ok {
		t.Errorf("flavor is a register")
	}
	wantExc := report.Exception{Type: "EXC_BAD_ACCESS", Value: "SIGSEGV: KERN_INVALID_ADDRESS at 0x0000000000000000", Mechanism: "mach", ThreadID: 6152004}
	if *r.Exception != wantExc {
		t.Errorf("exception %+v, want %+v", *r.Exception, wantExc)
	}
}

// TestParseIPSRawTemplate checks that a.out.ips with its placeholders
// left in fails with an error naming the first one's line.
func TestParseIPSRawTemplate(t *testing.T) {
	_, err := apple.ParseIPS(fixture(t, "a.out.ips"))
	if !errors.Is(err, apple.ErrInvalid) || !strings.Contains(err.Error(), "line 128") || !strings.Contains(err.Error(), "'@'") {
		t.Errorf("err = %v, want ErrInvalid at line 128 about '@'", err)
	}
}

func TestParseIPSStackshot(t *testing.T) {
	r, err := apple.ParseIPS(readFile(t, "testdata/stackshot.ips"))
	if err != nil {
		t.Fatal(err)
	}
	checkReport(t, "stackshot.ips", r)
	if r.Kind != report.KindHang || r.Hang == nil || r.Exception != nil || r.EventID != "0b0c4d5e6f70418293a4b5c6d7e8f901" {
		t.Errorf("kind %q, hang %v, exception %v, event id %q", r.Kind, r.Hang, r.Exception, r.EventID)
	}
	if r.OS != (report.OS{Name: "ios", Version: "16.5"}) || r.Tags["apple.os_build"] != "20F66" {
		t.Errorf("os %+v, tags %v", r.OS, r.Tags)
	}
	if want := time.Date(2023, 6, 1, 10, 0, 0, 0, time.UTC); !r.Timestamp.Equal(want) {
		t.Errorf("timestamp %v", r.Timestamp)
	}
	if len(r.Modules) != 3 || r.Modules[1].DebugID != "ca12cafa-91ba-3e1c-be9c-e34db96fe7df" || r.Modules[1].ImageAddr != 4310941696 || r.Modules[1].Name != "" {
		t.Errorf("modules %+v", r.Modules)
	}
	var ids []uint64
	for _, th := range r.Threads {
		ids = append(ids, th.ID)
	}
	if !reflect.DeepEqual(ids, []uint64{7, 9001, 9002}) { // pid 1 before pid 812
		t.Fatalf("thread ids %v", ids)
	}
	main := r.Threads[1]
	wantLabels := map[string]string{"pid": "812", "process": "Shop", "dispatch_queue": "com.apple.main-thread"}
	if main.Name != "main" || main.State != "TH_WAIT TH_UNINT" || !reflect.DeepEqual(main.Labels, wantLabels) || main.Crashed {
		t.Errorf("main thread %+v", main)
	}
	wantAddrs := []report.Addr{7600623616 + 100, 7600623616 + 2888, 4310941696 + 46380, 6482694144 + 88416}
	var addrs []report.Addr
	for _, f := range main.Frames {
		addrs = append(addrs, f.Addr)
	}
	if !reflect.DeepEqual(addrs, wantAddrs) {
		t.Errorf("main thread addresses %#x, want %#x (kernel frame first)", addrs, wantAddrs)
	}
}

// ipsWith returns multithread-test.ips with its header's bug_type set to
// bugType, or removed when bugType is empty.
func ipsWith(t *testing.T, bugType string) []byte {
	s := string(fixture(t, "multithread-test.ips"))
	repl := ""
	if bugType != "" {
		repl = `"bug_type":"` + bugType + `",`
	}
	return []byte(strings.Replace(s, `"bug_type":"309",`, repl, 1))
}

func TestParseIPSBugTypes(t *testing.T) {
	header := `{"bug_type":"109","incident_id":"B5B4880A-8BF0-4C98-954D-14BA25E65B19","os_version":"iPhone OS 10.3.3 (14G60)"}` + "\n"
	noBody := `{"bug_type":"309"}`
	bodyNoBugType := strings.Replace(string(ipsWith(t, "")), `"bug_type": "309"`, `"bugType": "309"`, 1)
	tests := []struct {
		name    string
		data    []byte
		kind    report.Kind
		handled bool
		err     error
		errText string
	}{
		{name: "309", data: ipsWith(t, "309"), kind: report.KindCrash},
		{name: "309 as a number", data: []byte(strings.Replace(string(ipsWith(t, "")), "{", `{"bug_type":309,`, 1)), kind: report.KindCrash},
		{name: "no bug_type in header, 309 in body", data: ipsWith(t, ""), kind: report.KindCrash},
		{name: "385 non-fatal", data: ipsWith(t, "385"), kind: report.KindCrash, handled: true},
		{name: "288 with threads", data: ipsWith(t, "288"), kind: report.KindHang},
		{name: "109 text body", data: append([]byte(header), filledCrash(t)...), kind: report.KindCrash},
		{name: "109 text body with an error", data: append([]byte(header), fixture(t, "a.out.crash")...), err: apple.ErrInvalid, errText: "line 32"},
		{name: "210 kernel panic", data: ipsWith(t, "210"), err: apple.ErrUnsupported, errText: `"210" (kernel panic)`},
		{name: "298 jetsam", data: ipsWith(t, "298"), err: apple.ErrUnsupported, errText: `"298"`},
		{name: "151", data: ipsWith(t, "151"), err: apple.ErrUnsupported, errText: `"151"`},
		{name: "unknown", data: ipsWith(t, "999"), err: apple.ErrUnsupported, errText: `"999" (unknown)`},
		{name: "no bug_type anywhere", data: []byte(bodyNoBugType), err: apple.ErrUnsupported, errText: "no bug_type"},
		{name: "288 without threads", data: []byte(`{"bug_type":"288"}` + "\n{}"), err: apple.ErrUnsupported, errText: "288"},
		{name: "empty", data: nil, err: apple.ErrInvalid, errText: "line 1"},
		{name: "header not JSON", data: []byte("Process: a\n{}"), err: apple.ErrInvalid, errText: "line 1"},
		{name: "header an array", data: []byte("[1]\n{}"), err: apple.ErrInvalid, errText: "ips header"},
		{name: "no body", data: []byte(noBody), err: apple.ErrInvalid, errText: "no JSON body"},
		{name: "body cut", data: []byte(noBody + "\n{\n\"threads\": [\n"), err: apple.ErrInvalid, errText: "line 4"},
		{name: "309 without threads or exception", data: []byte(noBody + "\n{}"), err: apple.ErrInvalid, errText: "no exception and no threads"},
		{name: "type mismatch names the field", data: []byte(noBody + "\n{\"threads\": [{\"frames\": {}}]}"), err: apple.ErrInvalid, errText: "threads.frames"},
	}
	for _, tt := range tests {
		r, err := apple.ParseIPS(tt.data)
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
		checkReport(t, tt.name, r)
		if r.Kind != tt.kind || (r.Exception != nil && r.Exception.Handled != tt.handled) {
			t.Errorf("%s: kind %q, exception %+v", tt.name, r.Kind, r.Exception)
		}
	}
}

// TestParseIPS109 checks that a text body keeps the header's incident id
// and bug type.
func TestParseIPS109(t *testing.T) {
	header := `{"bug_type":"109","incident_id":"B5B4880A-8BF0-4C98-954D-14BA25E65B19"}` + "\n"
	r, err := apple.ParseIPS(append([]byte(header), filledCrash(t)...))
	if err != nil {
		t.Fatal(err)
	}
	if r.EventID != "b5b4880a8bf04c98954d14ba25e65b19" || r.SDK.Name != "apple.ips" || r.Tags["apple.bug_type"] != "109" || len(r.Threads) != 1 {
		t.Errorf("event id %q, sdk %+v, tags %v, %d threads", r.EventID, r.SDK, r.Tags, len(r.Threads))
	}
}

// ipsDoc builds a 309 report from a body of threads and images.
func ipsDoc(body string) []byte {
	return []byte(`{"bug_type":"309","incident_id":"FA21DF23-3344-4E45-BF27-4B8E63B7012B"}` + "\n" + body)
}

// TestParseIPSImageIndex checks the boundaries of imageIndex: the last
// image resolves, one past it fails with an error naming the field.
func TestParseIPSImageIndex(t *testing.T) {
	images := `"usedImages": [{"base": 4096, "name": "a"}, {"base": 8192, "name": "b"}]`
	tests := []struct {
		frame   string
		addr    report.Addr
		module  string
		errText string
	}{
		{`{"imageIndex": 0, "imageOffset": 16}`, 4096 + 16, "a", ""},
		{`{"imageIndex": 1, "imageOffset": 0}`, 8192, "b", ""},
		{`[1, 32]`, 8192 + 32, "b", ""},
		{`{"imageIndex": 2, "imageOffset": 0}`, 0, "", "threads[0].frames[0].imageIndex 2 is out of range (2 images)"},
		{`{"imageIndex": 18446744073709551615, "imageOffset": 0}`, 0, "", "out of range"},
		{`{"imageIndex": 1, "imageOffset": 18446744073709543423}`, 18446744073709551615, "b", ""},
		{`{"imageIndex": 1, "imageOffset": 18446744073709543424}`, 0, "", "overflows"},
		{`{"imageIndex": 1, "imageOffset": 16.9}`, 8192 + 16, "b", ""},
		{`{"imageIndex": 1, "imageOffset": -16}`, 8192, "b", ""},
		{`{"imageIndex": 1, "imageOffset": "0x10"}`, 8192 + 16, "b", ""},
		{`{"imageIndex": 1, "imageOffset": true}`, 0, "", "is not a number"},
		{`{"imageOffset": 5, "symbol": "f"}`, 0, "", ""},
		{`{"imageOffset": 5}`, 0, "", ""},
	}
	for _, tt := range tests {
		r, err := apple.ParseIPS(ipsDoc(`{"threads": [{"frames": [` + tt.frame + `]}], ` + images + `}`))
		if tt.errText != "" {
			if !errors.Is(err, apple.ErrInvalid) || !strings.Contains(fmt.Sprint(err), tt.errText) {
				t.Errorf("frame %s: err = %v, want %q", tt.frame, err, tt.errText)
			}
			continue
		}
		if err != nil {
			t.Errorf("frame %s: %v", tt.frame, err)
			continue
		}
		checkReport(t, tt.frame, r)
		f := r.Threads[0].Frames[0]
		if f.Addr != tt.addr || f.Module != tt.module {
			t.Errorf("frame %s = %+v, want addr %#x module %q", tt.frame, f, tt.addr, tt.module)
		}
	}
}

// TestParseIPSLimits checks the thread and frame limits at their
// boundaries.
func TestParseIPSLimits(t *testing.T) {
	frames := func(n int) string {
		return "[" + strings.TrimSuffix(strings.Repeat(`{"imageIndex":0,"imageOffset":1},`, n), ",") + "]"
	}
	threads := func(n, perThread int) string {
		one := `{"frames":` + frames(perThread) + `}`
		return `{"threads": [` + strings.TrimSuffix(strings.Repeat(one+",", n), ",") + `], "usedImages": [{"base": 4096}]}`
	}
	tests := []struct {
		threads, frames   int
		wantThreads       int
		threadsTruncated  bool
		framesTruncated   bool
		wantFramesPerLast int
	}{
		{1, apple.MaxFrames - 1, 1, false, false, apple.MaxFrames - 1},
		{1, apple.MaxFrames, 1, false, false, apple.MaxFrames},
		{1, apple.MaxFrames + 1, 1, false, true, apple.MaxFrames},
		{apple.MaxThreads - 1, 1, apple.MaxThreads - 1, false, false, 1},
		{apple.MaxThreads, 1, apple.MaxThreads, false, false, 1},
		{apple.MaxThreads + 1, 1, apple.MaxThreads, true, false, 1},
	}
	for _, tt := range tests {
		r, err := apple.ParseIPS(ipsDoc(threads(tt.threads, tt.frames)))
		if err != nil {
			t.Fatalf("%d threads of %d frames: %v", tt.threads, tt.frames, err)
		}
		checkReport(t, "limits", r)
		last := r.Threads[len(r.Threads)-1]
		truncated := r.Truncated != nil && r.Truncated.Threads
		if len(r.Threads) != tt.wantThreads || truncated != tt.threadsTruncated || last.Truncated != tt.framesTruncated || len(last.Frames) != tt.wantFramesPerLast {
			t.Errorf("%d threads of %d frames: have %d threads (truncated %v), last has %d frames (truncated %v)",
				tt.threads, tt.frames, len(r.Threads), truncated, len(last.Frames), last.Truncated)
		}
	}
}

// TestParseIPSLastExceptionBacktrace checks that the backtrace of an
// Objective-C exception becomes a thread numbered after the others.
func TestParseIPSLastExceptionBacktrace(t *testing.T) {
	r, err := apple.ParseIPS(ipsDoc(`{"faultingThread": 0, "exception": {"type": "EXC_CRASH", "signal": "SIGABRT"},
		"threads": [{"id": 7, "triggered": true, "frames": [{"imageIndex": 0, "imageOffset": 1}]}],
		"lastExceptionBacktrace": [{"imageIndex": 0, "imageOffset": 2, "symbol": "objc_exception_throw"}],
		"usedImages": [{"base": 4096, "path": "/usr/lib/libobjc.A.dylib"}],
		"asi": {"CoreFoundation": ["*** Terminating app due to uncaught exception", "reason: boom"]}}`))
	if err != nil {
		t.Fatal(err)
	}
	checkReport(t, "lastExceptionBacktrace", r)
	if len(r.Threads) != 2 {
		t.Fatalf("%d threads", len(r.Threads))
	}
	leb := r.Threads[1]
	want := report.Frame{Addr: 4098, Module: "libobjc.A.dylib", Function: "objc_exception_throw"}
	if leb.ID != 8 || leb.Name != "Last Exception Backtrace" || leb.Crashed || len(leb.Frames) != 1 || leb.Frames[0] != want {
		t.Errorf("backtrace thread %+v", leb)
	}
	if r.Exception.Type != "EXC_CRASH" || r.Exception.Value != "SIGABRT" || r.Exception.ThreadID != 7 {
		t.Errorf("exception %+v", r.Exception)
	}
	if want := "CoreFoundation: *** Terminating app due to uncaught exception\nCoreFoundation: reason: boom"; r.Tags["apple.asi"] != want {
		t.Errorf("asi %q, want %q", r.Tags["apple.asi"], want)
	}
}
