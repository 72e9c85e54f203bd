package api_test

import (
	"bufio"
	"bytes"
	"debug/macho"
	"encoding/json"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/backtrail/backtrail/internal/testenv"
	"github.com/backtrail/backtrail/report"
)

// llvmFrame is one frame of llvm-symbolizer's answer, innermost first.
type llvmFrame struct {
	Function string
	File     string
	Line     int
}

func (f llvmFrame) String() string { return fmt.Sprintf("%s %s:%d", f.Function, f.File, f.Line) }

// llvmSymbolize asks llvm-symbolizer-14 for the inline chains of file
// addresses in obj, with names demangled and inlined frames expanded.
func llvmSymbolize(t *testing.T, obj string, addrs []uint64) [][]llvmFrame {
	t.Helper()
	if len(addrs) == 0 {
		return nil
	}
	tool := testenv.Tool(t, "llvm-symbolizer-14")
	var in bytes.Buffer
	for _, a := range addrs {
		fmt.Fprintf(&in, "0x%x\n", a)
	}
	cmd := exec.Command(tool, "--obj="+obj, "--inlines", "--demangle", "--output-style=JSON")
	cmd.Stdin = &in
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("llvm-symbolizer-14 --obj=%s: %v", obj, err)
	}
	type answer struct {
		Address string
		Symbol  []struct {
			FunctionName string
			FileName     string
			Line         int
		}
	}
	var res []answer
	// llvm-symbolizer prints one JSON object per address, one a line.
	for _, line := range bytes.Split(bytes.TrimSpace(out), []byte("\n")) {
		var a answer
		if err := json.Unmarshal(line, &a); err != nil {
			t.Fatalf("llvm-symbolizer-14 printed %q: %v", line, err)
		}
		res = append(res, a)
	}
	if len(res) != len(addrs) {
		t.Fatalf("llvm-symbolizer-14 answered %d addresses, asked %d", len(res), len(addrs))
	}
	chains := make([][]llvmFrame, len(res))
	for i, r := range res {
		for _, s := range r.Symbol {
			if s.FunctionName == "" && s.FileName == "" {
				continue // not found
			}
			chains[i] = append(chains[i], llvmFrame{s.FunctionName, s.FileName, s.Line})
		}
	}
	return chains
}

// textVMAddr returns the vmaddr of the __TEXT segment of a thin Mach-O
// file, read with the standard library.
func textVMAddr(t *testing.T, path string) uint64 {
	t.Helper()
	f, err := macho.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	seg := f.Segment("__TEXT")
	if seg == nil {
		t.Fatalf("%s has no __TEXT segment", path)
	}
	return seg.Addr
}

// physicalFrames splits a symbolicated stack (innermost first, inlined
// frames before the frame they were inlined into, all with its address)
// into the frames of each physical frame.
func physicalFrames(fs []report.Frame) [][]report.Frame {
	var out [][]report.Frame
	start := 0
	for i, f := range fs {
		if !f.Inlined || i == len(fs)-1 || fs[i+1].Addr != f.Addr {
			out = append(out, fs[start:i+1])
			start = i + 1
		}
	}
	return out
}

// sameFrames compares the server's frames of one physical frame with
// llvm-symbolizer's chain: function, file and line of each, innermost
// first.
func sameFrames(got []report.Frame, want []llvmFrame) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		w := want[i]
		if got[i].Function != w.Function || got[i].File != w.File || got[i].Line != w.Line {
			return false
		}
	}
	return true
}

func framesString(fs []report.Frame) string {
	var parts []string
	for _, f := range fs {
		parts = append(parts, fmt.Sprintf("%s %s:%d", f.Function, f.File, f.Line))
	}
	return strings.Join(parts, " | ")
}

// nmFunctions returns the addresses of the defined text symbols of a
// file, by name without the leading underscore, as llvm-nm-14 lists them.
func nmFunctions(t *testing.T, path string) map[string]uint64 {
	t.Helper()
	out, err := exec.Command(testenv.Tool(t, "llvm-nm-14"), "--defined-only", path).Output()
	if err != nil {
		t.Fatalf("llvm-nm-14 %s: %v", path, err)
	}
	syms := map[string]uint64{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 3 || (f[1] != "T" && f[1] != "t") {
			continue
		}
		a, err := strconv.ParseUint(f[0], 16, 64)
		if err != nil {
			t.Fatalf("llvm-nm-14: %q", sc.Text())
		}
		syms[strings.TrimPrefix(f[2], "_")] = a
	}
	return syms
}

// callSite returns the address symbolication looks up for a frame at
// addr: a crashing instruction as it is, a return address moved back into
// its call instruction (x86-64: the byte before; arm64: the instruction
// before, instructions being 4 bytes).
func callSite(addr uint64, arch string, exact bool) uint64 {
	switch {
	case exact:
		return addr
	case arch == "arm64":
		return addr&^3 - 4
	}
	return addr - 1
}

// pickAddrs picks a file address in each of the functions fns of exe, as
// llvm-nm-14 lists them: the first where llvm-symbolizer-14, reading dwarf,
// gives a line in that function, for the first as a crashing instruction
// in an inlined call, for the others as a return address. The frames of a
// made-up stack through them test functions, files, lines and inline
// chains.
func pickAddrs(t *testing.T, exe, dwarf, arch string, fns ...string) []uint64 {
	t.Helper()
	syms := nmFunctions(t, exe)
	step := uint64(1)
	if arch == "arm64" {
		step = 4
	}
	var out []uint64
	for i, fn := range fns {
		start, ok := syms[fn]
		if !ok {
			t.Fatalf("llvm-nm-14 lists no %s in %s", fn, exe)
		}
		end := start + 512 // the next symbol, or 512 bytes on
		for _, a := range syms {
			if a > start && a < end {
				end = a
			}
		}
		var cands, asked []uint64
		for a := start + step; a < end; a += step {
			cands = append(cands, a)
			asked = append(asked, callSite(a, arch, i == 0))
		}
		chains := llvmSymbolize(t, dwarf, asked)
		pick := uint64(0)
		for k, c := range chains {
			if len(c) == 0 || c[0].Line == 0 || c[len(c)-1].Function != fn || i == 0 && len(c) < 2 {
				continue
			}
			pick = cands[k]
			break
		}
		if pick == 0 {
			t.Fatalf("no address in %s (0x%x-0x%x) with a line%s", fn, start, end, map[bool]string{true: " and an inlined call"}[i == 0])
		}
		out = append(out, pick)
	}
	return out
}
