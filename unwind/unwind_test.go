package unwind_test

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"maps"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/backtrail/backtrail/debugfile/cfi"
	"github.com/backtrail/backtrail/internal/testenv"
	"github.com/backtrail/backtrail/unwind"
)

// memory is a fake address space: a few regions of bytes.
type memory struct{ regions []region }

type region struct {
	addr uint64
	data []byte
}

func (m *memory) ReadAt(p []byte, addr uint64) (int, error) {
	for _, r := range m.regions {
		if addr >= r.addr && addr-r.addr < uint64(len(r.data)) && uint64(len(p)) <= uint64(len(r.data))-(addr-r.addr) {
			return copy(p, r.data[addr-r.addr:]), nil
		}
	}
	return 0, fmt.Errorf("%#x unmapped", addr)
}

func (m *memory) put(addr, v uint64) {
	for _, r := range m.regions {
		if addr >= r.addr && addr+8 <= r.addr+uint64(len(r.data)) {
			binary.LittleEndian.PutUint64(r.data[addr-r.addr:], v)
			return
		}
	}
	panic(fmt.Sprintf("put %#x outside memory", addr))
}

// buildChain compiles testdata/chain.c for arch with compiler cc and links
// it with ld.lld-14:
//
//	<cc> [--target=aarch64-linux-gnu -mbranch-protection=pac-ret] -O2 -ffreestanding -fno-stack-protector \
//	     -fasynchronous-unwind-tables -c chain.c
//	ld.lld-14 --eh-frame-hdr -o chain chain.o
func buildChain(t *testing.T, cc, arch string) string {
	t.Helper()
	dir := t.TempDir()
	obj := filepath.Join(dir, "chain.o")
	args := []string{"-O2", "-ffreestanding", "-fno-stack-protector", "-fasynchronous-unwind-tables", "-c", "-o", obj, "chain.c"}
	if arch == "arm64" {
		args = append([]string{"--target=aarch64-linux-gnu", "-mbranch-protection=pac-ret"}, args...)
	}
	cmd := exec.Command(testenv.Tool(t, cc), args...)
	cmd.Dir = "testdata"
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", cmd, err, b)
	}
	exe := filepath.Join(dir, "chain")
	if b, err := exec.Command(testenv.Tool(t, "ld.lld-14"), "--eh-frame-hdr", "-o", exe, obj).CombinedOutput(); err != nil {
		t.Fatalf("ld.lld-14: %v\n%s", err, b)
	}
	return exe
}

// disasm returns, per function, its instruction addresses, and the return
// address of each call (function → callee → return address).
type program struct {
	insns map[string][]uint64
	calls map[string]map[string]uint64
}

func disassemble(t *testing.T, exe string) program {
	t.Helper()
	out, err := exec.Command(testenv.Tool(t, "llvm-objdump-14"), "-d", "--no-show-raw-insn", exe).Output()
	if err != nil {
		t.Fatalf("llvm-objdump-14: %v", err)
	}
	p := program{insns: map[string][]uint64{}, calls: map[string]map[string]uint64{}}
	fn := ""
	pendingCallee := ""
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		if strings.HasSuffix(line, ">:") {
			i := strings.IndexByte(line, '<')
			fn = line[i+1 : len(line)-2]
			continue
		}
		addrStr, rest, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok || fn == "" {
			continue
		}
		addr, err := strconv.ParseUint(addrStr, 16, 64)
		if err != nil {
			continue
		}
		if pendingCallee != "" {
			if p.calls[fn] == nil {
				p.calls[fn] = map[string]uint64{}
			}
			p.calls[fn][pendingCallee] = addr
			pendingCallee = ""
		}
		p.insns[fn] = append(p.insns[fn], addr)
		f := strings.Fields(rest)
		if len(f) >= 3 && (f[0] == "callq" || f[0] == "call" || f[0] == "bl") {
			pendingCallee = strings.Trim(f[2], "<>")
			if i := strings.IndexByte(pendingCallee, '+'); i >= 0 {
				pendingCallee = ""
			}
		}
	}
	return p
}

// synthesize builds the registers and stack of a thread whose frames are
// pcs (pcs[0] exact, the rest return addresses), innermost first, by
// running the module's unwind rows backwards: each callee's CFA is its
// caller's stack pointer, and each register a rule saves is written where
// the rule says, holding the caller's value (the return address for the
// return address column). It returns the innermost registers, the memory
// and the stack pointer of each frame.
func synthesize(t *testing.T, mod *unwind.Module, pcs []uint64, signRA bool) (unwind.Regs, *memory, []uint64) {
	t.Helper()
	arch := mod.Arch
	const stackTop = 0x7fff0000
	stack := make([]byte, 1<<20)
	mem := &memory{regions: []region{{stackTop - uint64(len(stack)), stack}}}
	// The outermost frame's state: distinct values in every register.
	caller := unwind.NewRegs(arch)
	for r := 0; r < len(arch.Names); r++ {
		caller.Set(r, 0x1000+uint64(r))
	}
	sp := uint64(stackTop - 0x1000)
	caller.Set(arch.SP, sp)
	caller.Set(arch.PC, pcs[len(pcs)-1])
	if arch.LR >= 0 {
		caller.Set(arch.LR, 0)
	}
	sps := make([]uint64, len(pcs))
	sps[len(pcs)-1] = sp
	for k := len(pcs) - 2; k >= 0; k-- {
		lookup := pcs[k]
		if k > 0 {
			lookup--
		}
		row, err := mod.Row(lookup)
		if err != nil {
			t.Fatalf("row for %#x: %v", lookup, err)
		}
		cfa := caller.SP()
		callee := caller
		// Registers the callee saved are clobbered in it.
		for _, r := range row.Rules {
			if r.Reg >= unwind.NumRegs {
				continue
			}
			reg := int(r.Reg)
			if r.Kind != cfi.RuleOffset {
				t.Fatalf("%#x: rule %v for %s not supported by the synthesizer", lookup, r.Kind, arch.RegName(reg))
			}
			v, _ := caller.Get(reg)
			if uint64(reg) == row.RAReg {
				v = pcs[k+1]
				if signRA && row.RASigned {
					v |= 0x002a << 48 // a pointer authentication code
				}
			}
			mem.put(cfa+uint64(r.Offset), v)
			callee.Set(reg, 0xdead0000+uint64(reg))
		}
		if row.Rule(row.RAReg).Kind == cfi.RuleUnspecified && arch.LR >= 0 {
			callee.Set(arch.LR, pcs[k+1]) // a leaf: the return address is in the link register
		}
		if row.CFA.Expr != nil {
			t.Fatalf("%#x: CFA expression not supported by the synthesizer", lookup)
		}
		switch int(row.CFA.Reg) {
		case arch.SP:
			callee.Set(arch.SP, cfa-uint64(row.CFA.Offset))
		case arch.FP:
			fp := cfa - uint64(row.CFA.Offset)
			callee.Set(arch.FP, fp)
			callee.Set(arch.SP, fp-64)
		default:
			t.Fatalf("%#x: CFA register %s not supported by the synthesizer", lookup, arch.RegName(int(row.CFA.Reg)))
		}
		callee.Set(arch.PC, pcs[k])
		sps[k] = callee.SP()
		caller = callee
	}
	return caller, mem, sps
}

// TestSyntheticChain unwinds synthetic stacks of chain.c built for x86-64
// (clang and gcc) and arm64 (clang, with return addresses signed by
// pointer authentication): for every instruction of every function as the
// innermost PC, with the real call sites above it, the walk must return
// exactly those PCs and stack pointers, all found by CFI.
func TestSyntheticChain(t *testing.T) {
	for _, c := range []struct{ cc, arch string }{{"clang-14", "x86_64"}, {"gcc", "x86_64"}, {"clang-14", "arm64"}} {
		t.Run(c.cc+"-"+c.arch, func(t *testing.T) {
			if c.cc == "gcc" {
				testenv.Tool(t, "gcc")
			}
			exe := buildChain(t, c.cc, c.arch)
			mod, err := unwind.OpenModule(exe)
			if err != nil {
				t.Fatal(err)
			}
			defer mod.Close()
			if mod.Arch.Name != c.arch {
				t.Fatalf("module arch %s", mod.Arch.Name)
			}
			p := disassemble(t, exe)
			chain := []string{"leaf", "mid", "vla", "top", "_start"}
			space := unwind.NewSpace([]unwind.Mapping{{Start: 0x200000, End: 0x300000, Module: mod}})
			walks := 0
			for depth := range chain[:4] {
				var ras []uint64
				for k := depth; k+1 < len(chain); k++ {
					ra, ok := p.calls[chain[k+1]][chain[k]]
					if !ok {
						t.Fatalf("no call from %s to %s", chain[k+1], chain[k])
					}
					ras = append(ras, ra)
				}
				for _, pc := range p.insns[chain[depth]] {
					if _, err := mod.Row(pc); err != nil {
						continue // alignment padding after the function
					}
					pcs := append([]uint64{pc}, ras...)
					regs, mem, sps := synthesize(t, mod, pcs, c.arch == "arm64")
					st := unwind.Unwind(regs, mem, space, unwind.Options{MaxFrames: len(pcs)})
					walks++
					if len(st.Frames) != len(pcs) {
						t.Errorf("pc %#x in %s: %d frames, want %d (stop %q)", pc, chain[depth], len(st.Frames), len(pcs), st.Stop)
						continue
					}
					for i, f := range st.Frames {
						if f.PC != pcs[i] || f.SP != sps[i] {
							t.Errorf("pc %#x in %s, frame %d: pc %#x sp %#x, want %#x %#x", pc, chain[depth], i, f.PC, f.SP, pcs[i], sps[i])
						}
						if i > 0 && f.Method != unwind.MethodCFI {
							t.Errorf("pc %#x, frame %d found by %v", pc, i, f.Method)
						}
					}
				}
			}
			t.Logf("%d walks", walks)
		})
	}
}

// TestFramePointers walks an rbp chain without any unwind information and
// checks the sanity checks that end a walk on garbage.
func TestFramePointers(t *testing.T) {
	const base = 0x7000_0000
	newMem := func() *memory { return &memory{regions: []region{{base, make([]byte, 0x1000)}}} }
	// Frames at base+0x100, +0x200, +0x300: [fp] = caller fp, [fp+8] = ret.
	chain := func(m *memory, last uint64) {
		m.put(base+0x100, base+0x200)
		m.put(base+0x108, 0x401111)
		m.put(base+0x200, base+0x300)
		m.put(base+0x208, 0x402222)
		m.put(base+0x300, last)
		m.put(base+0x308, 0x403333)
	}
	regs := unwind.NewRegs(unwind.AMD64)
	regs.Set(unwind.AMD64.PC, 0x400000)
	regs.Set(unwind.AMD64.SP, base+0x80)
	regs.Set(unwind.AMD64.FP, base+0x100)
	opts := unwind.Options{StackLo: base, StackHi: base + 0x1000}

	for _, tc := range []struct {
		name      string
		last      uint64 // the outermost saved frame pointer
		max       int
		want      []uint64
		truncated bool
		stop      string
	}{
		{"ends at zero", 0, 0, []uint64{0x400000, 0x401111, 0x402222, 0x403333}, false, "no frame pointer"},
		{"cycle", base + 0x100, 0, []uint64{0x400000, 0x401111, 0x402222, 0x403333}, false, "below the stack pointer"},
		{"misaligned", base + 0x403, 0, []uint64{0x400000, 0x401111, 0x402222, 0x403333}, false, "misaligned"},
		{"outside the stack", base + 0x2000, 0, []uint64{0x400000, 0x401111, 0x402222, 0x403333}, false, "outside the stack"},
		{"capped", 0, 2, []uint64{0x400000, 0x401111}, true, ""},
	} {
		m := newMem()
		chain(m, tc.last)
		o := opts
		o.MaxFrames = tc.max
		st := unwind.Unwind(regs, m, nil, o)
		var pcs []uint64
		for _, f := range st.Frames {
			pcs = append(pcs, f.PC)
		}
		if fmt.Sprint(pcs) != fmt.Sprint(tc.want) || st.Truncated != tc.truncated || !strings.Contains(st.Stop, tc.stop) {
			t.Errorf("%s: pcs %x truncated %v stop %q; want %x %v %q", tc.name, pcs, st.Truncated, st.Stop, tc.want, tc.truncated, tc.stop)
		}
		for i, f := range st.Frames {
			if want := unwind.MethodFP; i > 0 && f.Method != want {
				t.Errorf("%s: frame %d method %v", tc.name, i, f.Method)
			}
		}
	}

	// Without stack bounds a frame pointer into unmapped memory is
	// followed, and the failed read ends the walk with the frames before
	// it; the words read through the walk's one buffer before it are kept.
	m := newMem()
	chain(m, base+0x2000)
	st := unwind.Unwind(regs, m, nil, unwind.Options{})
	var pcs []uint64
	for _, f := range st.Frames {
		pcs = append(pcs, f.PC)
	}
	if want := []uint64{0x400000, 0x401111, 0x402222, 0x403333}; fmt.Sprint(pcs) != fmt.Sprint(want) || !strings.Contains(st.Stop, unwind.ErrMemory.Error()) {
		t.Errorf("unreadable frame: pcs %x stop %q; want %x and %q", pcs, st.Stop, want, unwind.ErrMemory)
	}
}

// TestSigreturn recognizes the rt_sigreturn trampolines by their code and
// recovers the interrupted registers from the ucontext on the stack, for
// x86-64 and arm64, with the interrupted PC marked exact.
func TestSigreturn(t *testing.T) {
	const code, stack = 0x10000, 0x7000_0000
	for _, tc := range []struct {
		arch    *unwind.Arch
		tramp   []byte
		offsets map[int]uint64 // register → offset from SP of its saved value
	}{
		{unwind.AMD64, []byte{0x48, 0xc7, 0xc0, 0x0f, 0x00, 0x00, 0x00, 0x0f, 0x05},
			map[int]uint64{16: 168, 7: 160, 6: 120, 3: 128}},
		{unwind.ARM64, []byte{0x68, 0x11, 0x80, 0xd2, 0x01, 0x00, 0x00, 0xd4},
			map[int]uint64{32: 128 + 176 + 8 + 32*8, 31: 128 + 176 + 8 + 31*8, 29: 128 + 176 + 8 + 29*8, 30: 128 + 176 + 8 + 30*8}},
	} {
		m := &memory{regions: []region{{code, append(make([]byte, 0x10), tc.tramp...)}, {stack, make([]byte, 0x1000)}}}
		sp := uint64(stack + 0x100)
		interrupted := map[int]uint64{tc.arch.PC: 0x401234, tc.arch.SP: stack + 0x800, tc.arch.FP: 0}
		if tc.arch == unwind.AMD64 {
			interrupted[3] = 0x3333
		} else {
			interrupted[30] = 0
		}
		for reg, off := range tc.offsets {
			m.put(sp+off, interrupted[reg])
		}
		regs := unwind.NewRegs(tc.arch)
		regs.Set(tc.arch.PC, code+0x10)
		regs.Set(tc.arch.SP, sp)
		st := unwind.Unwind(regs, m, nil, unwind.Options{MaxFrames: 2, NoFramePointers: true})
		if len(st.Frames) != 2 {
			t.Fatalf("%s: frames %+v stop %q", tc.arch.Name, st.Frames, st.Stop)
		}
		f := st.Frames[1]
		if !st.Frames[0].Signal || f.PC != 0x401234 || f.SP != stack+0x800 || !f.Exact || f.Method != unwind.MethodSignal {
			t.Errorf("%s: frames %+v", tc.arch.Name, st.Frames)
		}
	}
}

// FuzzUnwind walks arbitrary stacks by frame pointers and signal
// trampolines (CFI rows are fuzzed in package cfi): the walk is bounded,
// never panics, and frames only go up the stack unless a signal frame
// switches stacks.
func FuzzUnwind(f *testing.F) {
	f.Add([]byte{0x00, 0x01, 0x00, 0x70, 0, 0, 0, 0, 0x11, 0x11, 0x40, 0, 0, 0, 0, 0}, uint64(0x400000), uint64(0x70000000), uint64(0x70000000), false)
	f.Add(append(make([]byte, 16), 0x48, 0xc7, 0xc0, 0x0f, 0x00, 0x00, 0x00, 0x0f, 0x05), uint64(0x70000010), uint64(0x70000000), uint64(0), false)
	f.Fuzz(func(t *testing.T, stack []byte, pc, sp, fp uint64, arm bool) {
		arch := unwind.AMD64
		if arm {
			arch = unwind.ARM64
		}
		mem := &memory{regions: []region{{0x70000000, stack}}}
		regs := unwind.NewRegs(arch)
		regs.Set(arch.PC, pc)
		regs.Set(arch.SP, sp)
		regs.Set(arch.FP, fp)
		st := unwind.Unwind(regs, mem, nil, unwind.Options{MaxFrames: 64, StackLo: 0x70000000, StackHi: 0x70000000 + uint64(len(stack))})
		if len(st.Frames) > 64 {
			t.Fatalf("%d frames", len(st.Frames))
		}
		for i := 1; i < len(st.Frames); i++ {
			if !st.Frames[i-1].Signal && st.Frames[i].SP < st.Frames[i-1].SP {
				t.Fatalf("frame %d: sp %#x below %#x", i, st.Frames[i].SP, st.Frames[i-1].SP)
			}
		}
	})
}

// TestRegsMap checks that Map names exactly the known registers, and leaves
// out those beyond the architecture's names.
func TestRegsMap(t *testing.T) {
	regs := unwind.NewRegs(unwind.AMD64)
	regs.Set(7, 0x7ffd0000) // rsp
	regs.Set(16, 0x401000)  // rip
	regs.Set(5, 3)          // rdi
	regs.Set(len(unwind.AMD64.Names), 9)
	m := regs.Map()
	want := map[string]uint64{"rsp": 0x7ffd0000, "rip": 0x401000, "rdi": 3}
	if !maps.Equal(m, want) {
		t.Errorf("Map() = %v, want %v", m, want)
	}
	regs.Clear(5)
	if _, ok := regs.Map()["rdi"]; ok {
		t.Errorf("a cleared register is in the map")
	}
}
