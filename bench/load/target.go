package main

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/backtrail/backtrail/report"
)

// A target is the native program whose crashes the benchmark reports: an
// ELF executable with DWARF, its functions and its direct call sites. Stacks
// are walks up the call graph, so every frame but the first is a real
// return address (the instruction after a call) in a function that calls
// the function of the frame inside it.
type target struct {
	path    string
	name    string // base name, the module name in reports
	arch    string // module arch as the server spells it: x86_64, arm64
	goarch  string // report arch: amd64, arm64
	pie     bool
	vmaddr  uint64 // link-time address of the lowest PT_LOAD
	span    uint64 // from the lowest PT_LOAD to the end of the highest
	funcs   []function
	sites   []callSite
	callers map[int][]int // function index → indexes of sites calling it

	// From the server's answer to the upload.
	debugID, codeID string
}

type function struct {
	name       string
	addr, size uint64
}

type callSite struct {
	call, ret      uint64 // the call instruction and the one after it
	caller, callee int    // function indexes
}

// buildFixture compiles the C++ fixture program (testdata/src/cpp) the way
// the differential tests do for gcc: -O2 -g, one compile per translation
// unit in the source directory, linked by the compiler driver.
func buildFixture(root, dir string) (string, error) {
	src := filepath.Join(root, "testdata", "src", "cpp")
	cxx := "g++-12"
	if _, err := exec.LookPath(cxx); err != nil {
		cxx = "g++"
	}
	out := filepath.Join(dir, "inventory")
	var objs []string
	for _, tu := range []string{"inventory.cpp", "main.cpp"} {
		obj := filepath.Join(dir, strings.TrimSuffix(tu, ".cpp")+".o")
		cmd := exec.Command(cxx, "-O2", "-g", "-c", tu, "-o", obj)
		cmd.Dir = src
		if b, err := cmd.CombinedOutput(); err != nil {
			return "", fmt.Errorf("%s: %v\n%s", strings.Join(cmd.Args, " "), err, b)
		}
		objs = append(objs, obj)
	}
	cmd := exec.Command(cxx, append([]string{"-o", out}, objs...)...)
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("%s: %v\n%s", strings.Join(cmd.Args, " "), err, b)
	}
	return out, nil
}

// readTarget reads an ELF executable's functions and finds its direct call
// sites by scanning the code of .text: for x86-64 every E8 rel32 whose
// target is the start of a function symbol, for arm64 every BL. An opcode
// byte inside another instruction can pass for a call only if its operand
// happens to point exactly at a function start, which is rare enough not to
// matter here.
func readTarget(path string) (*target, error) {
	f, err := elf.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	t := &target{path: path, name: filepath.Base(path), pie: f.Type == elf.ET_DYN, callers: map[int][]int{}}
	switch f.Machine {
	case elf.EM_X86_64:
		t.arch, t.goarch = "x86_64", "amd64"
	case elf.EM_AARCH64:
		t.arch, t.goarch = "arm64", "arm64"
	default:
		return nil, fmt.Errorf("%s: machine %v: only x86-64 and arm64 are supported", path, f.Machine)
	}
	lo, hi := ^uint64(0), uint64(0)
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD {
			lo = min(lo, p.Vaddr)
			hi = max(hi, p.Vaddr+p.Memsz)
		}
	}
	if hi == 0 {
		return nil, fmt.Errorf("%s: no PT_LOAD segment", path)
	}
	t.vmaddr, t.span = lo, hi-lo

	text := f.Section(".text")
	if text == nil {
		return nil, fmt.Errorf("%s: no .text section", path)
	}
	syms, err := f.Symbols()
	if err != nil {
		return nil, fmt.Errorf("%s: symbols: %w", path, err)
	}
	seen := map[uint64]bool{}
	for _, s := range syms {
		if elf.ST_TYPE(s.Info) != elf.STT_FUNC || s.Size == 0 || seen[s.Value] ||
			s.Value < text.Addr || s.Value >= text.Addr+text.Size {
			continue
		}
		seen[s.Value] = true
		t.funcs = append(t.funcs, function{s.Name, s.Value, s.Size})
	}
	sort.Slice(t.funcs, func(i, j int) bool { return t.funcs[i].addr < t.funcs[j].addr })
	start := make(map[uint64]int, len(t.funcs))
	for i, fn := range t.funcs {
		start[fn.addr] = i
	}
	code, err := text.Data()
	if err != nil {
		return nil, fmt.Errorf("%s: .text: %w", path, err)
	}
	add := func(call, ret, target uint64) {
		callee, ok := start[target]
		caller := t.funcAt(call)
		if !ok || caller < 0 || ret > t.funcs[caller].addr+t.funcs[caller].size {
			return
		}
		t.callers[callee] = append(t.callers[callee], len(t.sites))
		t.sites = append(t.sites, callSite{call, ret, caller, callee})
	}
	switch t.arch {
	case "x86_64":
		for i := 0; i+5 <= len(code); i++ {
			if code[i] == 0xe8 {
				at := text.Addr + uint64(i)
				rel := int64(int32(binary.LittleEndian.Uint32(code[i+1:])))
				add(at, at+5, uint64(int64(at)+5+rel))
			}
		}
	case "arm64":
		for i := 0; i+4 <= len(code); i += 4 {
			w := binary.LittleEndian.Uint32(code[i:])
			if w>>26 == 0x25 { // BL imm26
				at := text.Addr + uint64(i)
				rel := int64(int32(w<<6)>>6) * 4
				add(at, at+4, uint64(int64(at)+rel))
			}
		}
	}
	if len(t.sites) < 10 {
		return nil, fmt.Errorf("%s: found %d call sites in %d functions; need a bigger program", path, len(t.sites), len(t.funcs))
	}
	return t, nil
}

// funcAt returns the index of the function holding addr, or -1.
func (t *target) funcAt(addr uint64) int {
	i := sort.Search(len(t.funcs), func(i int) bool { return t.funcs[i].addr > addr }) - 1
	if i < 0 || addr >= t.funcs[i].addr+t.funcs[i].size {
		return -1
	}
	return i
}

// walk appends n return addresses to st, climbing from function fn to a
// caller of it at each step (a random call site anywhere when fn has no
// known caller), and returns the function of the last frame.
func (t *target) walk(rng *rand.Rand, st []uint64, fn, n int) ([]uint64, int) {
	for range n {
		var s callSite
		if cs := t.callers[fn]; len(cs) > 0 {
			s = t.sites[cs[rng.IntN(len(cs))]]
		} else {
			s = t.sites[rng.IntN(len(t.sites))]
		}
		st = append(st, s.ret)
		fn = s.caller
	}
	return st, fn
}

// stackOptions says what stacks and events look like.
type stackOptions struct {
	templates    int // distinct crash stacks: the issues the events should group into
	variants     int // bodies per template, differing in their outer frames
	frames       int // frames per thread
	fixed        int // innermost frames shared by all variants of a template
	threads      int // threads per event, the crashed one first
	systemFrames int // outermost frames placed in libc, which has no debug file
}

// eventBody is a rendered report with a placeholder event id at idOff.
type eventBody struct {
	data     []byte
	idOff    int
	template int
}

const idPlaceholder = "00000000000000000000000000000000"

// bias is where a PIE target pretends to be loaded.
const pieBase = 0x55d4c8a00000

// libc is a module of the reports without a debug file on the server.
var libc = report.Module{Type: "elf", Name: "libc.so.6", Path: "/usr/lib/x86_64-linux-gnu/libc.so.6",
	DebugID: "a3e1f6c2-9d4b-7a10-55e2-8c0f3b6d9e41", CodeID: "c2f6e1a34b9d107a55e28c0f3b6d9e41d0c1b2a3",
	ImageAddr: 0x7f3a1c000000, ImageSize: 0x1d8000}

// bodies renders the reports the load sends: opts.templates crash stacks
// with distinct innermost frames (by function, so each should become an
// issue), opts.variants bodies each. A report is what a native crash
// handler would send for a process that crashed in the target: the
// modules it had loaded, the crashed thread first with registers, and the
// signal.
func (t *target) bodies(rng *rand.Rand, o stackOptions) ([]eventBody, error) {
	bias := uint64(0)
	if t.pie {
		bias = pieBase - t.vmaddr
	}
	main := report.Module{Type: "elf", Name: t.name, Path: "/opt/shop/bin/" + t.name, DebugID: t.debugID, CodeID: t.codeID,
		ImageAddr: report.Addr(t.vmaddr + bias), ImageSize: t.span, ImageVMAddr: report.Addr(t.vmaddr), Arch: t.arch}
	mods := []report.Module{main, libc,
		{Type: "elf", Name: "libstdc++.so.6", Path: "/usr/lib/x86_64-linux-gnu/libstdc++.so.6", DebugID: "5b0c7e21-3f9a-d460-81b7-2e4c6a9f0d13",
			CodeID: "217e0c5b9a3f60d481b72e4c6a9f0d13aa07f3c1", ImageAddr: 0x7f3a1c400000, ImageSize: 0x21a000},
		{Type: "elf", Name: "libm.so.6", Path: "/usr/lib/x86_64-linux-gnu/libm.so.6", DebugID: "9e4d2a70-c15b-38f6-0a2e-d7b19c4f6e85",
			CodeID: "702a4d9e5bc1f6380a2ed7b19c4f6e85f1e2d3c4", ImageAddr: 0x7f3a1c800000, ImageSize: 0xe8000},
		{Type: "elf", Name: "ld-linux-x86-64.so.2", Path: "/usr/lib64/ld-linux-x86-64.so.2", DebugID: "1c6f8b3d-a2e4-5097-bd31-46e0f9a2c7d8",
			CodeID: "3d8b6f1ce4a29750bd3146e0f9a2c7d8b9a8f7e6", ImageAddr: 0x7f3a1cc00000, ImageSize: 0x3b000},
	}
	signals := []report.Exception{
		{Type: "SIGSEGV", Value: "Segmentation fault: invalid read at 0x0000000000000010", Mechanism: "signal"},
		{Type: "SIGABRT", Value: "Aborted", Mechanism: "signal"},
		{Type: "SIGSEGV", Value: "Segmentation fault: invalid write at 0x00000000deadbeef", Mechanism: "signal"},
		{Type: "SIGBUS", Value: "Bus error: misaligned access at 0x00007ffd4a2b1c03", Mechanism: "signal"},
		{Type: "SIGFPE", Value: "Floating point exception: integer divide by zero", Mechanism: "signal"},
	}
	fixed := min(o.fixed, o.frames)
	type template struct {
		frames []uint64
		fn     int // function of the last fixed frame
	}
	var templates []template
	seen := map[string]bool{}
	for tries := 0; len(templates) < o.templates; tries++ {
		if tries > 100*o.templates {
			return nil, fmt.Errorf("%s: found only %d distinct stacks of %d frames", t.name, len(templates), fixed)
		}
		s := t.sites[rng.IntN(len(t.sites))]
		st := []uint64{s.call} // the crashed frame: its PC, not a return address
		st, fn := t.walk(rng, st, s.caller, fixed-1)
		var sig strings.Builder
		for i, a := range st {
			if i > 0 {
				a-- // the call, not the return address
			}
			if fn := t.funcAt(a); fn >= 0 {
				sig.WriteString(t.funcs[fn].name)
			}
			sig.WriteByte(0)
		}
		if seen[sig.String()] {
			continue
		}
		seen[sig.String()] = true
		templates = append(templates, template{st, fn})
	}
	now := time.Now().UTC().Truncate(time.Millisecond)
	var out []eventBody
	for ti, tp := range templates {
		exc := signals[ti%len(signals)]
		for v := range o.variants {
			threads := make([]report.Thread, o.threads)
			for k := range threads {
				var st []uint64
				if k == 0 {
					st, _ = t.walk(rng, append([]uint64(nil), tp.frames...), tp.fn, o.frames-len(tp.frames))
				} else {
					// Other threads wait in the target's code too.
					s := t.sites[rng.IntN(len(t.sites))]
					st, _ = t.walk(rng, []uint64{s.ret}, s.caller, o.frames-1)
				}
				frames := make([]report.Frame, len(st))
				for i, a := range st {
					frames[i].Addr = report.Addr(a + bias)
					if i >= len(st)-o.systemFrames {
						frames[i].Addr = libc.ImageAddr + 0x29d90 + report.Addr(0x40*(len(st)-i))
					}
				}
				threads[k] = report.Thread{ID: uint64(31000 + k), Name: fmt.Sprintf("worker-%d", k), Frames: frames}
			}
			threads[0].Crashed, threads[0].Current = true, true
			threads[0].Registers = t.registers(threads[0].Frames[0].Addr)
			e := exc
			e.ThreadID = threads[0].ID
			r := &report.Report{
				Version: report.Version, Kind: report.KindCrash, EventID: idPlaceholder, Timestamp: now,
				Platform: report.PlatformNative, Release: fmt.Sprintf("shop@2.%d.0", v%3), Environment: "production",
				ServerName: fmt.Sprintf("web-%02d", rng.IntN(20)), SDK: report.SDK{Name: "backtrail.load", Version: "1"},
				OS: report.OS{Name: "linux", Version: "6.1.0"}, Arch: t.goarch, Modules: mods, Threads: threads, Exception: &e,
			}
			var buf bytes.Buffer
			if err := report.Encode(&buf, r); err != nil {
				return nil, err
			}
			off := bytes.Index(buf.Bytes(), []byte(`"event_id":"`+idPlaceholder))
			if off < 0 {
				return nil, errors.New("rendered report has no event_id")
			}
			out = append(out, eventBody{buf.Bytes(), off + len(`"event_id":"`), ti})
		}
	}
	return out, nil
}

func (t *target) registers(pc report.Addr) map[string]report.Addr {
	if t.arch == "arm64" {
		return map[string]report.Addr{"pc": pc, "sp": 0x7ffd4a2b1c40, "x29": 0x7ffd4a2b1c70, "x30": pc + 0x40}
	}
	return map[string]report.Addr{"rip": pc, "rsp": 0x7ffd4a2b1c38, "rbp": 0x7ffd4a2b1c70, "rax": 0x10, "rdi": 0}
}

// describe says what the target is, for the summary.
func (t *target) describe() string {
	fi, _ := os.Stat(t.path)
	var size int64
	if fi != nil {
		size = fi.Size()
	}
	return fmt.Sprintf("`%s` (%s, %.1f MB, %d functions, %d direct call sites)", t.name, t.arch, float64(size)/1e6, len(t.funcs), len(t.sites))
}
