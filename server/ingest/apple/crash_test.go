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

func parseCrashFixture(t *testing.T, name string) *report.Report {
	t.Helper()
	r, err := apple.ParseCrash(fixture(t, name))
	if err != nil {
		t.Fatal(err)
	}
	checkReport(t, name, r)
	return r
}

// TestParseCrashXCDYouTubeKit checks a real Mac OS X 10.8 report: no
// incident identifier, bundle ids as image names, no blank lines.
func TestParseCrashXCDYouTubeKit(t *testing.T) {
	r := parseCrashFixture(t, "legacy/XCDYouTubeKit-54.txt")
	if len(r.Threads) != 18 || len(r.Modules) != 244 || r.Truncated != nil {
		t.Fatalf("%d threads, %d modules, truncated %+v", len(r.Threads), len(r.Modules), r.Truncated)
	}
	if want := time.Date(2014, 7, 16, 0, 25, 9, 0, time.UTC); !r.Timestamp.Equal(want) {
		t.Errorf("timestamp %v", r.Timestamp)
	}
	if r.OS != (report.OS{Name: "darwin", Version: "10.8.5"}) || r.Arch != "amd64" || r.Release != "com.AlphaSoft.iTubeDownloader@512" {
		t.Errorf("os %+v, arch %q, release %q", r.OS, r.Arch, r.Release)
	}
	if r.SDK != (report.SDK{Name: "apple.crash", Version: "106"}) {
		t.Errorf("sdk %+v", r.SDK)
	}
	wantTags := map[string]string{"apple.process": "iTubeDownloader", "apple.model": "MacBookPro5,3", "apple.os_build": "12F45", "apple.version": "512"}
	if !reflect.DeepEqual(r.Tags, wantTags) {
		t.Errorf("tags %v, want %v", r.Tags, wantTags)
	}
	// No Incident Identifier: the id is derived from the content, the same
	// for the same bytes and different for others.
	again, _ := apple.ParseCrash(fixture(t, "legacy/XCDYouTubeKit-54.txt"))
	other, _ := apple.ParseCrash(append(fixture(t, "legacy/XCDYouTubeKit-54.txt"), '\n'))
	if again.EventID != r.EventID || other.EventID == r.EventID || r.EventID[12] != '8' {
		t.Errorf("derived event ids %q, %q, %q", r.EventID, again.EventID, other.EventID)
	}
	th := r.Threads[0]
	if th.ID != 0 || !th.Crashed || len(th.Frames) != 27 {
		t.Errorf("thread 0: id %d crashed %v, %d frames", th.ID, th.Crashed, len(th.Frames))
	}
	wantFrames := []report.Frame{
		{Addr: 0x00007fff99d89d4b, Module: "com.apple.JavaScriptCore", Function: "JSValueIsString"},
		{Addr: 0x00000001018b8cad, Module: "ch.pitaya.xcdyoutubekit", Function: "-[XCDYouTubePlayerScript unscrambleSignature:]"},
	}
	if !reflect.DeepEqual(th.Frames[:2], wantFrames) {
		t.Errorf("frames %+v, want %+v", th.Frames[:2], wantFrames)
	}
	if f := r.Threads[14].Frames[6]; f != (report.Frame{Addr: 0x000000010181bc10, Module: "com.AlphaSoft.iTubeDownloader"}) {
		t.Errorf("thread 14 frame 6 (image + offset form) = %+v", f)
	}
	if th.Registers["rip"] != th.Frames[0].Addr || th.Registers["rflags"] != 0x10246 || th.Registers["gs"] != 0 || len(th.Registers) != 19 {
		t.Errorf("%d registers: %v", len(th.Registers), th.Registers)
	}
	for _, o := range r.Threads[1:] {
		if o.Crashed || o.Registers != nil {
			t.Errorf("thread %d: crashed %v, registers %v", o.ID, o.Crashed, o.Registers)
		}
	}
	wantExc := report.Exception{Type: "SIGSEGV", Value: "SEGV_MAPERR at 0x8", Mechanism: "signal", ThreadID: 0}
	if *r.Exception != wantExc {
		t.Errorf("exception %+v, want %+v", *r.Exception, wantExc)
	}
	wantModule := report.Module{Type: "macho", Name: "com.AlphaSoft.iTubeDownloader",
		Path:    "/Users/rogercoody/Desktop/iTubeDownloader.app/Contents/MacOS/iTubeDownloader",
		DebugID: "7b639009-221f-3815-a7a3-657098146f8a", CodeID: "7b639009221f3815a7a3657098146f8a",
		ImageAddr: 0x1017ff000, ImageSize: 0x101885fff - 0x1017ff000 + 1, Arch: "x86_64"}
	if r.Modules[0] != wantModule {
		t.Errorf("modules[0] = %+v, want %+v", r.Modules[0], wantModule)
	}
	if m := r.Modules[243]; m.Name != "libdnsinfo.dylib" || m.DebugID != "14202ffb-c3ca-3fcc-94b0-14611bf8692d" {
		t.Errorf("modules[243] = %+v", m)
	}
}

// TestParseCrashBruno checks a real macOS 10.14 report with 55 threads.
func TestParseCrashBruno(t *testing.T) {
	r := parseCrashFixture(t, "legacy/bruno.txt")
	if len(r.Threads) != 55 || len(r.Modules) != 272 || r.EventID != "5c32df8431a043e787d0239f7f594940" {
		t.Fatalf("%d threads, %d modules, event id %q", len(r.Threads), len(r.Modules), r.EventID)
	}
	if want := time.Date(2019, 1, 9, 12, 44, 22, 75000000, time.UTC); !r.Timestamp.Equal(want) {
		t.Errorf("timestamp %v", r.Timestamp)
	}
	var crashed []uint64
	for i, th := range r.Threads {
		if th.ID != uint64(i) {
			t.Errorf("threads[%d].ID = %d", i, th.ID)
		}
		if th.Crashed {
			crashed = append(crashed, th.ID)
		}
	}
	if !reflect.DeepEqual(crashed, []uint64{5}) || r.Exception.ThreadID != 5 {
		t.Errorf("crashed threads %v, exception thread %d", crashed, r.Exception.ThreadID)
	}
	th := r.Threads[5]
	if th.Frames[0] != (report.Frame{Addr: 0x00000001090a0132, Module: "YetAnotherMac"}) || th.Registers["rip"] != 0x00000001090a0132 {
		t.Errorf("thread 5 frame 0 %+v, rip %#x", th.Frames[0], th.Registers["rip"])
	}
	if last := r.Threads[54]; len(last.Frames) != 11 || last.Frames[10].Addr != 0x00007fff61c7f425 {
		t.Errorf("thread 54: %+v", last.Frames)
	}
	if f := r.Threads[1].Frames[2]; f.Addr != 0x54485244 || f.Module != "" || f.Function != "" {
		t.Errorf("??? frame = %+v", f)
	}
	m := r.Modules[0]
	if m.Name != "YetAnotherMac" || m.Arch != "x86_64" || m.DebugID != "2d903291-397d-3d14-bfca-52c7fb8c5e00" || m.ImageAddr != 0x10864e000 ||
		m.Path != "/Users/bruno/Documents/Unreal Projects/YetAnotherMac/MacNoEditor/YetAnotherMac.app/Contents/MacOS/YetAnotherMac" {
		t.Errorf("modules[0] = %+v", m)
	}
	var dyld *report.Module
	for i := range r.Modules {
		if r.Modules[i].Name == "libdyld.dylib" {
			dyld = &r.Modules[i]
		}
	}
	if dyld == nil || dyld.ImageAddr != 0x7fff61a77000 || dyld.ImageSize != 0x30000 || dyld.CodeID != "4b16c20983d438179b62c2f7ffb23755" {
		t.Errorf("libdyld.dylib = %+v", dyld)
	}
}

// TestParseCrashHandcrafted checks the hand-edited report: the "Thread 1
// Crashed" marker wins over "Crashed Thread: 5", symbols with and without
// offsets and file positions, and Application Specific Information.
func TestParseCrashHandcrafted(t *testing.T) {
	r := parseCrashFixture(t, "legacy/handcrafted.txt")
	if len(r.Threads) != 2 || len(r.Modules) != 5 {
		t.Fatalf("%d threads, %d modules", len(r.Threads), len(r.Modules))
	}
	if r.Threads[0].Crashed || !r.Threads[1].Crashed || r.Threads[1].Name != "Test Thread Name" || r.Exception.ThreadID != 1 {
		t.Errorf("threads %+v %+v, exception %+v", r.Threads[0].Name, r.Threads[1], r.Exception)
	}
	if r.Threads[1].Registers["rip"] != 0x00000001090a0132 || r.Threads[1].Registers["r8"] != 3 {
		t.Errorf("registers %v", r.Threads[1].Registers)
	}
	f := r.Threads[0].Frames
	if len(f) != 14 {
		t.Fatalf("%d frames", len(f))
	}
	want := []report.Frame{
		{Addr: 0x0000000108b702a6, Module: "YetAnotherMac", Function: "a_function_here"},
		{Addr: 0x00007fff61a8e085, Module: "libdyld.dylib", Function: "start"},
		{Addr: 0xea004, Module: "YetanotherMac", Function: "main", File: "main.m", Line: 16},
	}
	if !reflect.DeepEqual(f[11:], want) {
		t.Errorf("frames 11-13\nhave %+v\nwant %+v", f[11:], want)
	}
	if want := "objc_msgSend() selector name: respondsToSelector:\n  more information here"; r.Tags["apple.asi"] != want {
		t.Errorf("asi %q, want %q", r.Tags["apple.asi"], want)
	}
}

// TestParseCrashSpaces checks image names and paths with spaces.
func TestParseCrashSpaces(t *testing.T) {
	r := parseCrashFixture(t, "legacy/spaces.txt")
	if len(r.Threads) != 1 || len(r.Threads[0].Frames) != 17 || len(r.Modules) != 17 || r.Exception != nil {
		t.Fatalf("%d threads, %d modules, exception %v", len(r.Threads), len(r.Modules), r.Exception)
	}
	if f := r.Threads[0].Frames[0]; f != (report.Frame{Addr: 0x0000000102268e70, Module: "App Namespace"}) {
		t.Errorf("frames[0] = %+v", f)
	}
	want := report.Module{Type: "macho", Name: "App Namespace",
		Path:    "/private/var/containers/Bundle/Application/012CABCB-BD5B-1234-AE44-3215BF57D1CD/App Namespace Some.app/App Namespace",
		DebugID: "debeff4e-2653-4f38-e59b-c9de7b8daade", CodeID: "debeff4e26534f38e59bc9de7b8daade",
		ImageAddr: 0x10211c000, ImageSize: 0x1024b3fff - 0x10211c000 + 1, Arch: "arm64"}
	if r.Modules[0] != want {
		t.Errorf("modules[0] = %+v, want %+v", r.Modules[0], want)
	}
	if r.Timestamp != (time.Time{}) || r.Threads[0].Crashed {
		t.Errorf("timestamp %v, crashed %v", r.Timestamp, r.Threads[0].Crashed)
	}
}

// TestParseCrashHeaderOnly checks that a header without exception or
// threads (xcode16.txt) is refused: it holds nothing to group or
// symbolicate, and a crash needs an exception or a thread (§2).
func TestParseCrashHeaderOnly(t *testing.T) {
	_, err := apple.ParseCrash(fixture(t, "legacy/xcode16.txt"))
	if !errors.Is(err, apple.ErrInvalid) || !strings.Contains(err.Error(), "header alone") {
		t.Errorf("err = %v", err)
	}
	// With an exception it is a crash without frames.
	r, err := apple.ParseCrash(append(fixture(t, "legacy/xcode16.txt"), "\nException Type:  EXC_CRASH (SIGKILL)\n"...))
	if err != nil {
		t.Fatal(err)
	}
	checkReport(t, "xcode16.txt with exception", r)
	if r.EventID != "6156848e344e4d9e84e087afd0d0ae7b" || r.OS != (report.OS{Name: "ios", Version: "13.3.1"}) ||
		r.Release != "com.example.apple-samplecode.TouchCanvas@3.0+1" || r.Arch != "arm64" || r.Exception.Value != "SIGKILL" {
		t.Errorf("event id %q, os %+v, release %q, arch %q, exception %+v", r.EventID, r.OS, r.Release, r.Arch, r.Exception)
	}
	if want := time.Date(2020, 3, 28, 1, 6, 51, 496900000, time.UTC); !r.Timestamp.Equal(want) {
		t.Errorf("timestamp %v", r.Timestamp)
	}
}

// TestParseCrashTemplate checks lldb's a.out.crash with its placeholders
// filled in, and that the raw template fails at its first placeholder.
func TestParseCrashTemplate(t *testing.T) {
	r, err := apple.ParseCrash(filledCrash(t))
	if err != nil {
		t.Fatal(err)
	}
	checkReport(t, "a.out.crash", r)
	th := r.Threads[0]
	want := []report.Frame{
		{Addr: 0x100000000 + fooOffset, Module: "a.out", Function: "foo", File: "test.c", Line: 3},
		{Addr: 0x100000000 + barOffset, Module: "a.out", Function: "bar", File: "test.c", Line: 6},
		{Addr: 0x100000000 + mainOff, Module: "a.out", Function: "main", File: "test.c", Line: 8},
		{Addr: 0x1000000, Module: "libdyld.dylib", Function: "start"},
	}
	if !reflect.DeepEqual(th.Frames, want) || th.Name != "com.apple.main-thread" || !th.Crashed {
		t.Errorf("thread %+v", th)
	}
	if th.Registers["rip"] != 0x000000010b92af70 || th.Registers["rfl"] != 0x10202 || th.Registers["cr2"] != 0 || len(th.Registers) != 19 {
		t.Errorf("%d registers %v", len(th.Registers), th.Registers)
	}
	wantModules := []report.Module{
		{Type: "macho", Name: "a.out", Path: tmplExec, DebugID: tmplUUID, CodeID: strings.ReplaceAll(tmplUUID, "-", ""), ImageAddr: 0x100000000, ImageSize: 0x100000001, Arch: ""},
		{Type: "macho", DebugID: "00000000-0000-0000-0000-000000000000", CodeID: "00000000000000000000000000000000"},
	}
	if !reflect.DeepEqual(r.Modules, wantModules) {
		t.Errorf("modules\nhave %+v\nwant %+v", r.Modules, wantModules)
	}
	wantExc := report.Exception{Type: "EXC_BAD_ACCESS", Value: "SIGSEGV: KERN_INVALID_ADDRESS at 0x0000000000000000", Mechanism: "mach"}
	if *r.Exception != wantExc {
		t.Errorf("exception %+v", *r.Exception)
	}
	if r.OS != (report.OS{Name: "darwin", Version: "11.0.1"}) || r.Tags["apple.termination"] != "Namespace SIGNAL, Code 0xb" || r.Release != "a.out@0" {
		t.Errorf("os %+v, tags %v, release %q", r.OS, r.Tags, r.Release)
	}

	_, err = apple.ParseCrash(fixture(t, "a.out.crash"))
	if !errors.Is(err, apple.ErrInvalid) || !strings.Contains(err.Error(), `line 31: frame address "@foo@" is not hexadecimal`) {
		t.Errorf("raw template: err = %v", err)
	}
}

// crashWith builds a minimal report around the given lines.
func crashWith(lines ...string) []byte {
	return []byte("Process: a [1]\nException Type: EXC_CRASH (SIGABRT)\n\n" + strings.Join(lines, "\n") + "\n")
}

func TestParseCrashFrames(t *testing.T) {
	tests := []struct {
		line    string
		want    report.Frame
		errText string
	}{
		{"0   libfoo.dylib   0x0000000000001000 foo + 16", report.Frame{Addr: 0x1000, Module: "libfoo.dylib", Function: "foo"}, ""},
		{"0 a 0x1 b", report.Frame{Addr: 1, Module: "a", Function: "b"}, ""},
		{"12\tlib\t0x10 0x0 + 16", report.Frame{Addr: 0x10, Module: "lib"}, ""},
		{"0   lib  0x10 f (f.c:7:9)", report.Frame{Addr: 0x10, Module: "lib", Function: "f", File: "f.c", Line: 7}, ""},
		{"0   lib  0x10 f + 3 (dir/f.swift:0)", report.Frame{Addr: 0x10, Module: "lib", Function: "f", File: "dir/f.swift"}, ""},
		{"0   lib  0x10 f(int) + 3", report.Frame{Addr: 0x10, Module: "lib", Function: "f(int)"}, ""},
		{"0   lib  0x10 f (in lib) (f.c:2)", report.Frame{Addr: 0x10, Module: "lib", Function: "f", File: "f.c", Line: 2}, ""},
		{"0   lib  0x10 operator+ + 4", report.Frame{Addr: 0x10, Module: "lib", Function: "operator+"}, ""},
		{"0   lib  0x10 f (not:a:line)", report.Frame{Addr: 0x10, Module: "lib", Function: "f (not:a:line)"}, ""},
		{"0   lib  0x10 ???", report.Frame{Addr: 0x10, Module: "lib"}, ""},
		{"0   ???  0x0 0x0 + 0", report.Frame{Function: "???"}, ""},
		{"0   App Name  0x10 0x1 + 15", report.Frame{Addr: 0x10, Module: "App Name"}, ""},
		{"0   0x99 lib 0x10 f", report.Frame{Addr: 0x10, Module: "0x99 lib", Function: "f"}, ""},
		{"0   lib  0xffffffffffffffff f", report.Frame{Addr: 0xffffffffffffffff, Module: "lib", Function: "f"}, ""},
		{"0   lib  0x10000000000000000 f", report.Frame{}, "has no 0x address"},
		{"0   lib \t@foo@ foo + 16", report.Frame{}, `frame address "@foo@" is not hexadecimal`},
		{"0   lib  f + 16", report.Frame{}, "has no 0x address"},
		{"0   lib", report.Frame{}, "has no 0x address"},
	}
	for _, tt := range tests {
		r, err := apple.ParseCrash(crashWith("Thread 0:", tt.line))
		if tt.errText != "" {
			if !errors.Is(err, apple.ErrInvalid) || !strings.Contains(fmt.Sprint(err), "line 5: ") || !strings.Contains(fmt.Sprint(err), tt.errText) {
				t.Errorf("%q: err = %v, want line 5: ...%s", tt.line, err, tt.errText)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tt.line, err)
			continue
		}
		checkReport(t, tt.line, r)
		if len(r.Threads) != 1 || len(r.Threads[0].Frames) != 1 || r.Threads[0].Frames[0] != tt.want {
			t.Errorf("%q: threads %+v, want frame %+v", tt.line, r.Threads, tt.want)
		}
	}
}

func TestParseCrashImages(t *testing.T) {
	tests := []struct {
		line    string
		want    report.Module
		errText string
	}{
		{"0x1000 - 0x1fff +a arm64 <0123456789abcdef0123456789ABCDEF> /a",
			report.Module{Name: "a", Path: "/a", ImageAddr: 0x1000, ImageSize: 0x1000, Arch: "arm64", CodeID: "0123456789abcdef0123456789abcdef", DebugID: "01234567-89ab-cdef-0123-456789abcdef"}, ""},
		{"0x1000 - 0x1000 a (1.0 - 2.0) <01234567-89AB-CDEF-0123-456789ABCDEF> /x/a b",
			report.Module{Name: "a", Path: "/x/a b", ImageAddr: 0x1000, ImageSize: 1, CodeID: "0123456789abcdef0123456789abcdef", DebugID: "01234567-89ab-cdef-0123-456789abcdef"}, ""},
		{"0x1000 - 0x1fff a x86_64h /usr/lib/a", report.Module{Name: "a", Path: "/usr/lib/a", ImageAddr: 0x1000, ImageSize: 0x1000, Arch: "x86_64h"}, ""},
		{"0x1000 - 0x1fff <0123456789abcdef0123456789abcdef> /usr/lib/liba.dylib",
			report.Module{Name: "liba.dylib", Path: "/usr/lib/liba.dylib", ImageAddr: 0x1000, ImageSize: 0x1000, CodeID: "0123456789abcdef0123456789abcdef", DebugID: "01234567-89ab-cdef-0123-456789abcdef"}, ""},
		{"0x0 - 0xffffffffffffffff ??? (*) <00000000-0000-0000-0000-000000000000> ???",
			report.Module{CodeID: "00000000000000000000000000000000", DebugID: "00000000-0000-0000-0000-000000000000"}, ""},
		{"0x1000 - 0xfff a", report.Module{}, "end 0xfff is below start 0x1000"},
		{"0x1000 0x1fff a", report.Module{}, "no '-' after start address"},
		{"0x1000 - end a", report.Module{}, `end "end" is not hexadecimal`},
		{"0xg - 0x1 a", report.Module{}, `start "0xg" is not hexadecimal`},
		{"0x1000 - 0x1fff a <@UUID@> @EXEC@", report.Module{}, `UUID "@UUID@" is not a UUID`},
		{"0x1000 - 0x1fff a <0123", report.Module{}, "has no closing '>'"},
	}
	for _, tt := range tests {
		r, err := apple.ParseCrash(crashWith("Binary Images:", tt.line))
		if tt.errText != "" {
			if !errors.Is(err, apple.ErrInvalid) || !strings.Contains(fmt.Sprint(err), "line 5: binary image: ") || !strings.Contains(fmt.Sprint(err), tt.errText) {
				t.Errorf("%q: err = %v, want %s", tt.line, err, tt.errText)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tt.line, err)
			continue
		}
		checkReport(t, tt.line, r)
		tt.want.Type = "macho"
		if len(r.Modules) != 1 || r.Modules[0] != tt.want {
			t.Errorf("%q: modules %+v, want %+v", tt.line, r.Modules, tt.want)
		}
	}
}

// TestParseCrashSections checks thread headings, queues, backtraces that
// are not threads and the end of each section.
func TestParseCrashSections(t *testing.T) {
	data := crashWith(
		"Triggered by Thread:  2",
		"Last Exception Backtrace:",
		"(0x1a 0x2b 0x3c)",
		"",
		"Thread 0 name:  Dispatch queue: com.apple.main-thread",
		"Thread 0:",
		"0   a   0x10 main",
		"",
		"Thread 2 name:  worker",
		"Thread 2:: Dispatch queue: q",
		"0   a   0x20 work",
		"Thread 2 crashed with ARM Thread State (64-bit):",
		"    x0: 0x0000000000000001   x1: 0x0000000000000002",
		"    fp: 0x0000000000000010   lr: 0x0000000000000020",
		"   far: 0x0000000000000000  esr: 0x92000006 (Data Abort) byte read Translation fault",
		"",
		"Thread 2 instruction stream:",
		"  0 1 2 3",
		"",
		"VM Region Summary:",
		"Process: not a header",
		"",
		"Binary Images:",
		"0x1 - 0x2 a arm64 <0123456789abcdef0123456789abcdef> /a",
		"",
		"0x3 - 0x4 b arm64 <0123456789abcdef0123456789abcdee> /b",
		"EOF",
		"0x5 - 0x6 not an image",
	)
	r, err := apple.ParseCrash(data)
	if err != nil {
		t.Fatal(err)
	}
	checkReport(t, "sections", r)
	if len(r.Threads) != 3 || len(r.Modules) != 2 {
		t.Fatalf("threads %+v, modules %+v", r.Threads, r.Modules)
	}
	leb, main, worker := r.Threads[0], r.Threads[1], r.Threads[2]
	wantLEB := []report.Frame{{Addr: 0x1a}, {Addr: 0x2b}, {Addr: 0x3c}}
	if leb.ID != 3 || leb.Name != "Last Exception Backtrace" || leb.Crashed || !reflect.DeepEqual(leb.Frames, wantLEB) {
		t.Errorf("backtrace %+v", leb)
	}
	if main.ID != 0 || main.Name != "com.apple.main-thread" || main.Labels["dispatch_queue"] != "com.apple.main-thread" || main.Crashed {
		t.Errorf("main %+v", main)
	}
	wantRegs := map[string]report.Addr{"x0": 1, "x1": 2, "fp": 0x10, "lr": 0x20, "far": 0, "esr": 0x92000006}
	if worker.ID != 2 || worker.Name != "worker" || worker.Labels["dispatch_queue"] != "q" || !worker.Crashed || !reflect.DeepEqual(worker.Registers, wantRegs) {
		t.Errorf("worker %+v", worker)
	}
	if r.Exception.ThreadID != 2 || r.Exception.Type != "EXC_CRASH" || r.Exception.Value != "SIGABRT" {
		t.Errorf("exception %+v", r.Exception)
	}
	if r.Tags["apple.process"] != "a" {
		t.Errorf("tags %v", r.Tags)
	}
}

// TestParseCrashLimits checks the thread and frame limits at their
// boundaries.
func TestParseCrashLimits(t *testing.T) {
	build := func(threads, frames int) []byte {
		var b strings.Builder
		b.WriteString("Exception Type: SIGSEGV\n")
		for i := range threads {
			fmt.Fprintf(&b, "Thread %d:\n", i)
			for j := range frames {
				fmt.Fprintf(&b, "%d a 0x%x f\n", j, j+1)
			}
		}
		return []byte(b.String())
	}
	tests := []struct {
		threads, frames  int
		wantThreads      int
		threadsTruncated bool
		framesTruncated  bool
		wantFrames       int
	}{
		{1, apple.MaxFrames, 1, false, false, apple.MaxFrames},
		{1, apple.MaxFrames + 1, 1, false, true, apple.MaxFrames},
		{apple.MaxThreads, 1, apple.MaxThreads, false, false, 1},
		{apple.MaxThreads + 1, 1, apple.MaxThreads, true, false, 1},
	}
	for _, tt := range tests {
		r, err := apple.ParseCrash(build(tt.threads, tt.frames))
		if err != nil {
			t.Fatal(err)
		}
		checkReport(t, "limits", r)
		last := r.Threads[len(r.Threads)-1]
		truncated := r.Truncated != nil && r.Truncated.Threads
		if len(r.Threads) != tt.wantThreads || truncated != tt.threadsTruncated || last.Truncated != tt.framesTruncated || len(last.Frames) != tt.wantFrames {
			t.Errorf("%d threads of %d frames: %d threads (truncated %v), %d frames (truncated %v)",
				tt.threads, tt.frames, len(r.Threads), truncated, len(last.Frames), last.Truncated)
		}
	}
}

// TestParseCrashOddInput checks input that is not tidy text.
func TestParseCrashOddInput(t *testing.T) {
	tests := []struct {
		name string
		data string
		err  error
	}{
		{"empty", "", apple.ErrInvalid},
		{"CRLF", "Exception Type: SIGBUS\r\nThread 0 Crashed:\r\n0 a 0x1 f\r\n", nil},
		{"invalid UTF-8", "Exception Type: SIG\xff\nThread 0:\n0 a\xfe 0x1 f\xc0\n", nil},
		{"BOM", "\xef\xbb\xbfException Type: SIGBUS\n", nil},
		{"thread number too large", "Thread 99999999999999999999:\n", apple.ErrInvalid},
		{"huge crashed thread number", "Exception Type: SIGBUS\nCrashed Thread: 99999999999999999999\nThread 0:\n0 a 0x1 f\n", nil},
		{"frame outside a thread", "Exception Type: SIGBUS\n0 a 0x1 f\n", nil},
	}
	for _, tt := range tests {
		r, err := apple.ParseCrash([]byte(tt.data))
		if tt.err != nil {
			if !errors.Is(err, tt.err) {
				t.Errorf("%s: err = %v, want %v", tt.name, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		checkReport(t, tt.name, r)
	}
}
