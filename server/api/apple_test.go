package api_test

import (
	"bytes"
	"debug/macho"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/backtrail/backtrail/internal/fixture"
	"github.com/backtrail/backtrail/internal/servertest"
	"github.com/backtrail/backtrail/internal/testenv"
	"github.com/backtrail/backtrail/server"
)

// machoUUID returns the LC_UUID of a thin Mach-O file in the form crash
// reports write it (upper-case, with dashes).
func machoUUID(t *testing.T, path string) string {
	t.Helper()
	f, err := macho.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	const lcUUID = 0x1b
	for _, l := range f.Loads {
		raw := l.Raw()
		if len(raw) >= 24 && macho.LoadCmd(binary.LittleEndian.Uint32(raw)) == lcUUID {
			u := raw[8:24]
			return strings.ToUpper(fmt.Sprintf("%x-%x-%x-%x-%x", u[0:4], u[4:6], u[6:8], u[8:10], u[10:16]))
		}
	}
	t.Fatalf("%s has no LC_UUID", path)
	return ""
}

// appleStack is a crashed thread made up for a Mach-O fixture: frames in
// its functions, innermost first, as absolute addresses in a process that
// loaded it at load.
type appleStack struct {
	exe, dwarf, uuid, name string
	load, vmaddr           uint64
	addrs                  []uint64 // absolute; addrs[0] is the crashing instruction, the rest return addresses
}

// fixtureStack builds the Mach-O C fixture with its dSYM and makes up a
// crashed stack through four of its functions.
func fixtureStack(t *testing.T) appleStack {
	t.Helper()
	testenv.Tool(t, "llvm-symbolizer-14")
	b := fixture.Build(t, fixture.Spec{Lang: "macho-c", Compiler: "clang", Opt: 2, Arch: "arm64"})
	s := appleStack{exe: b.Path, dwarf: b.DWARFPath, uuid: machoUUID(t, b.Path), name: filepath.Base(b.Path),
		load: 0x104a28000, vmaddr: textVMAddr(t, b.Path)}
	if u := machoUUID(t, b.DWARFPath); u != s.uuid {
		t.Fatalf("dSYM UUID %s, executable %s", u, s.uuid)
	}
	// A crash in hash_bytes, called from main; eval_op called from
	// apply_all called from main.
	for _, a := range pickAddrs(t, b.Path, b.DWARFPath, "arm64", "hash_bytes", "eval_op", "apply_all", "main") {
		s.addrs = append(s.addrs, a-s.vmaddr+s.load)
	}
	return s
}

// want returns llvm-symbolizer-14's inline chain for each frame: the
// crashing instruction as it is, return addresses moved back into their
// call instruction.
func (s appleStack) want(t *testing.T) [][]llvmFrame {
	var fileAddrs []uint64
	for i, a := range s.addrs {
		fileAddrs = append(fileAddrs, callSite(a, "arm64", i == 0)-s.load+s.vmaddr)
	}
	return llvmSymbolize(t, s.dwarf, fileAddrs)
}

// ips writes an Apple .ips crash report (bug_type 309) of the stack.
func (s appleStack) ips(incident string) []byte {
	type frame struct {
		ImageIndex  int    `json:"imageIndex"`
		ImageOffset uint64 `json:"imageOffset"`
	}
	var frames []frame
	for _, a := range s.addrs {
		frames = append(frames, frame{0, a - s.load})
	}
	header, _ := json.Marshal(map[string]any{
		"app_name": s.name, "timestamp": "2024-05-02 10:11:12.00 +0200", "app_version": "1.0", "slice_uuid": strings.ToLower(s.uuid),
		"build_version": "7", "platform": 1, "bug_type": "309", "os_version": "macOS 14.4.1 (23E224)", "incident_id": incident, "name": s.name,
	})
	body, _ := json.MarshalIndent(map[string]any{
		"captureTime": "2024-05-02 10:11:12.3456 +0200", "cpuType": "ARM-64", "incident": incident, "pid": 4242,
		"procName": s.name, "procPath": "/Applications/Fixture.app/Contents/MacOS/" + s.name,
		"osVersion":      map[string]string{"train": "macOS 14.4.1", "build": "23E224", "releaseType": "User"},
		"exception":      map[string]any{"type": "EXC_BAD_ACCESS", "signal": "SIGSEGV", "subtype": "KERN_INVALID_ADDRESS at 0x0000000000000010"},
		"faultingThread": 0,
		"threads":        []any{map[string]any{"triggered": true, "id": 77, "queue": "com.apple.main-thread", "frames": frames}},
		"usedImages": []any{map[string]any{
			"source": "P", "arch": "arm64", "base": s.load, "size": 0x4000, "uuid": strings.ToLower(s.uuid),
			"path": "/Applications/Fixture.app/Contents/MacOS/" + s.name, "name": s.name,
		}},
	}, "", "  ")
	return append(append(header, '\n'), body...)
}

// crash writes a legacy .crash text report of the stack.
func (s appleStack) crash(incident string) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "Incident Identifier: %s\nHardware Model:      Mac14,2\nProcess:             %s [4242]\n", incident, s.name)
	fmt.Fprintf(&b, "Path:                /Applications/Fixture.app/Contents/MacOS/%s\nIdentifier:          com.example.fixture\n", s.name)
	fmt.Fprintf(&b, "Version:             1.0 (7)\nCode Type:           ARM-64 (Native)\nParent Process:      launchd [1]\n\n")
	fmt.Fprintf(&b, "Date/Time:           2024-05-02 10:11:12.345 +0200\nOS Version:          macOS 14.4.1 (23E224)\nReport Version:      12\n\n")
	fmt.Fprintf(&b, "Exception Type:  EXC_BAD_ACCESS (SIGSEGV)\nException Codes: KERN_INVALID_ADDRESS at 0x0000000000000010\nCrashed Thread:  0\n\n")
	fmt.Fprintf(&b, "Thread 0 Crashed:\n")
	for i, a := range s.addrs {
		fmt.Fprintf(&b, "%-4d%-30s0x%016x 0x%x + %d\n", i, s.name, a, s.load, a-s.load)
	}
	fmt.Fprintf(&b, "\nBinary Images:\n")
	fmt.Fprintf(&b, "       0x%x -        0x%x %s arm64  <%s> /Applications/Fixture.app/Contents/MacOS/%s\n",
		s.load, s.load+0x3fff, s.name, strings.ToLower(strings.ReplaceAll(s.uuid, "-", "")), s.name)
	return b.Bytes()
}

// TestAppleReports posts an .ips and a legacy .crash report of a crash in a
// Mach-O fixture whose dSYM was uploaded, and checks each frame against
// llvm-symbolizer-14 run on the dSYM: function, file and line, inlined
// frames included.
func TestAppleReports(t *testing.T) {
	t.Parallel()
	s := fixtureStack(t)
	want := s.want(t)
	srv := servertest.Start(t, servertest.Options{})
	fs := srv.UploadDebugFile(t, nil, s.dwarf)
	if len(fs) != 1 || fs[0].DebugID != strings.ToLower(s.uuid) || fs[0].Arch != "arm64" {
		t.Fatalf("uploaded dSYM: %+v, want debug id %s", fs, strings.ToLower(s.uuid))
	}
	tests := []struct {
		name, format string
		body         []byte
	}{
		{"ips", server.FormatIPS, s.ips("6B1C8C58-0D9B-4A4E-9F57-2D6C1C2E0A01")},
		{"crash", server.FormatCrash, s.crash("6B1C8C58-0D9B-4A4E-9F57-2D6C1C2E0A02")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := srv.PostReport(t, nil, tt.body)
			if resp.Status != 200 {
				t.Fatalf("POST /api/v1/reports: %d %s\n%s", resp.Status, resp.Body, tt.body)
			}
			var res struct {
				IDs    []string `json:"ids"`
				Format string   `json:"format"`
			}
			resp.JSON(t, &res)
			if len(res.IDs) != 1 || res.Format != tt.format {
				t.Fatalf("answer %s", resp.Body)
			}
			srv.Wait(t)
			ev := srv.Event(t, res.IDs[0])
			if !ev.Processed || ev.Error != "" {
				t.Fatalf("processed %v, error %q", ev.Processed, ev.Error)
			}
			th := crashedThread(t, &ev.Report)
			phys := physicalFrames(th.Frames)
			if len(phys) != len(s.addrs) {
				t.Fatalf("%d physical frames, want %d: %s", len(phys), len(s.addrs), framesString(th.Frames))
			}
			for i, got := range phys {
				if uint64(got[0].Addr) != s.addrs[i] {
					t.Errorf("frame %d at 0x%x, want 0x%x", i, got[0].Addr, s.addrs[i])
				}
				if len(want[i]) == 0 || want[i][len(want[i])-1].File == "" {
					t.Fatalf("llvm-symbolizer-14 has no file for frame %d: %v", i, want[i])
				}
				if !sameFrames(got, want[i]) {
					t.Errorf("frame %d (0x%x):\n\tserver: %s\n\tllvm:   %v", i, s.addrs[i], framesString(got), want[i])
				}
				for _, f := range got {
					if f.Module != s.name || !f.InApp {
						t.Errorf("frame %d: module %q, in-app %v", i, f.Module, f.InApp)
					}
				}
			}
			if ev.Exception == nil || ev.Exception.Type != "EXC_BAD_ACCESS" {
				t.Errorf("exception %+v", ev.Exception)
			}
			is := srv.Issue(t, ev.IssueID)
			top := want[0][0]
			if !strings.HasPrefix(is.Culprit, top.Function+" ("+filepath.Base(top.File)+":"+strconv.Itoa(top.Line)+")") {
				t.Errorf("culprit %q, want %s (%s:%d)", is.Culprit, top.Function, filepath.Base(top.File), top.Line)
			}
		})
	}
}
