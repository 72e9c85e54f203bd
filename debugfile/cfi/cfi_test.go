package cfi_test

import (
	"bufio"
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/backtrail/backtrail/debugfile/cfi"
	"github.com/backtrail/backtrail/internal/testenv"
)

// build compiles testdata/<src> with the given command (tool first) into
// dir and returns the output path.
func build(t *testing.T, name string, argv ...string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), name)
	tool := testenv.Tool(t, argv[0])
	cmd := exec.Command(tool, append(argv[1:], "-o", out)...)
	cmd.Dir = "testdata"
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", cmd, err, b)
	}
	return out
}

// sections returns the cfi tables of an ELF file: .eh_frame (with its
// .eh_frame_hdr when present), .eh_frame without the header (forcing a
// scan) and .debug_frame.
type tables struct {
	eh, ehScan, debug *cfi.Table
	arch              elf.Machine
}

func load(t *testing.T, path string) tables {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var ts tables
	ts.arch = f.Machine
	data := func(name string) ([]byte, uint64) {
		s := f.Section(name)
		if s == nil {
			return nil, 0
		}
		b, err := s.Data()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return b, s.Addr
	}
	eh, ehAddr := data(".eh_frame")
	hdr, hdrAddr := data(".eh_frame_hdr")
	if eh != nil {
		if ts.eh, err = cfi.Parse(eh, cfi.Options{Kind: cfi.EHFrame, Addr: ehAddr, Hdr: hdr, HdrAddr: hdrAddr}); err != nil {
			t.Fatalf("%s .eh_frame: %v", path, err)
		}
		if ts.ehScan, err = cfi.Parse(eh, cfi.Options{Kind: cfi.EHFrame, Addr: ehAddr}); err != nil {
			t.Fatalf("%s .eh_frame (scan): %v", path, err)
		}
		if ts.ehScan.ScanErr != nil {
			t.Errorf("%s .eh_frame scan: %v", path, ts.ehScan.ScanErr)
		}
	}
	if dbg, _ := data(".debug_frame"); dbg != nil {
		if ts.debug, err = cfi.Parse(dbg, cfi.Options{Kind: cfi.DebugFrame}); err != nil {
			t.Fatalf("%s .debug_frame: %v", path, err)
		}
	}
	return ts
}

// readelfFDE is one FDE as readelf -wF interprets it.
type readelfFDE struct {
	section    string
	off        uint64
	begin, end uint64
	cols       []string // register column names after LOC and CFA
	rows       []readelfRow
}

type readelfRow struct {
	loc   uint64
	cells []string // CFA, then one per column
}

func readelf(t *testing.T, path string) []readelfFDE {
	t.Helper()
	// -wN: not the frames of a separate debug file that a debuglink names.
	out, err := exec.Command(testenv.Tool(t, "readelf"), "-wNF", path).Output()
	if err != nil {
		t.Fatalf("readelf -wNF %s: %v", path, err)
	}
	var fdes []readelfFDE
	var cur *readelfFDE
	section := ""
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		f := strings.Fields(line)
		switch {
		case len(f) == 0 || strings.Contains(line, "ZERO terminator"):
			cur = nil
		case strings.HasPrefix(line, "Contents of the "):
			section = strings.Fields(line)[3]
			cur = nil
		case len(f) >= 6 && f[3] == "FDE":
			off, _ := strconv.ParseUint(f[0], 16, 64)
			lo, hi, _ := strings.Cut(strings.TrimPrefix(f[5], "pc="), "..")
			begin, _ := strconv.ParseUint(lo, 16, 64)
			end, _ := strconv.ParseUint(hi, 16, 64)
			fdes = append(fdes, readelfFDE{section: section, off: off, begin: begin, end: end})
			cur = &fdes[len(fdes)-1]
		case len(f) >= 4 && f[3] == "CIE":
			cur = nil
		case cur != nil && len(f) >= 2 && f[0] == "LOC" && f[1] == "CFA":
			cur.cols = f[2:]
		case cur != nil && len(f) >= 2 && cur.cols != nil:
			loc, err := strconv.ParseUint(f[0], 16, 64)
			if err != nil {
				continue
			}
			cur.rows = append(cur.rows, readelfRow{loc: loc, cells: f[1:]})
		}
	}
	return fdes
}

var x86Regs = []string{"rax", "rdx", "rcx", "rbx", "rsi", "rdi", "rbp", "rsp", "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15", "rip"}

func regName(m elf.Machine, ra, r uint64) string {
	if r == ra {
		return "ra"
	}
	switch m {
	case elf.EM_X86_64:
		if r < uint64(len(x86Regs)) {
			return x86Regs[r]
		}
		if r >= 17 && r <= 32 {
			return fmt.Sprintf("xmm%d", r-17)
		}
	case elf.EM_AARCH64:
		switch {
		case r <= 30:
			return fmt.Sprintf("x%d", r)
		case r == 31:
			return "sp"
		case r >= 64 && r <= 95:
			return fmt.Sprintf("v%d", r-64)
		}
	}
	return fmt.Sprintf("r%d", r)
}

func regNumber(m elf.Machine, ra uint64, name string) (uint64, bool) {
	if name == "ra" {
		return ra, true
	}
	for r := uint64(0); r < 128; r++ {
		if regName(m, ^uint64(0), r) == name {
			return r, true
		}
	}
	return 0, false
}

// cells formats a row as readelf -wF does.
func cells(m elf.Machine, row *cfi.Row, cols []string) []string {
	var out []string
	if row.CFA.Expr != nil {
		out = append(out, "exp")
	} else {
		out = append(out, fmt.Sprintf("%s%+d", regName(m, ^uint64(0), row.CFA.Reg), row.CFA.Offset))
	}
	for _, c := range cols {
		reg, ok := regNumber(m, row.RAReg, c)
		if !ok {
			out = append(out, "?"+c)
			continue
		}
		r := row.Rule(reg)
		switch r.Kind {
		case cfi.RuleUnspecified, cfi.RuleUndefined:
			out = append(out, "u")
		case cfi.RuleSameValue:
			out = append(out, "s")
		case cfi.RuleOffset:
			out = append(out, fmt.Sprintf("c%+d", r.Offset))
		case cfi.RuleValOffset:
			out = append(out, fmt.Sprintf("v%+d", r.Offset))
		case cfi.RuleRegister:
			out = append(out, fmt.Sprintf("r%d (%s)", r.Register, regName(m, ^uint64(0), r.Register)))
		case cfi.RuleExpression:
			out = append(out, "exp")
		case cfi.RuleValExpression:
			out = append(out, "vexp")
		}
	}
	return out
}

// TestReadelf compares every row of every FDE, at its first and last PC,
// with GNU readelf's interpretation (readelf -wF), for binaries built by
// gcc and clang with .eh_frame (through .eh_frame_hdr and by scanning) and
// with .debug_frame versions 1 and 4, a static glibc executable (whose
// hand-written assembly includes the signal trampoline __restore_rt with
// augmentation "zRS" and DW_CFA_expression rules), and an AArch64 program
// with pointer authentication (augmentation "zRB",
// DW_CFA_AARCH64_negate_ra_state).
func TestReadelf(t *testing.T) {
	type buildCase struct {
		name string
		argv []string
	}
	cases := []buildCase{
		{"gcc-O2", []string{"gcc", "-O2", "frames.c"}},
		{"gcc-O0-fp", []string{"gcc", "-O0", "-fno-omit-frame-pointer", "frames.c"}},
		{"clang-O2", []string{"clang-14", "-O2", "frames.c"}},
		{"gcc-static", []string{"gcc", "-O2", "-static", "frames.c"}},
		{"gcc-debug_frame-v1", []string{"gcc", "-O2", "-g", "-fno-asynchronous-unwind-tables", "-fno-unwind-tables", "frames.c"}},
		{"clang-debug_frame-v4", []string{"clang-14", "-O2", "-gdwarf-5", "-fno-asynchronous-unwind-tables", "-fno-unwind-tables", "frames.c"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := build(t, c.name, c.argv...)
			checkReadelf(t, path)
		})
	}
	t.Run("arm64-pac", func(t *testing.T) {
		obj := build(t, "arm64.o", "clang-14", "--target=aarch64-linux-gnu", "-O2", "-ffreestanding",
			"-fasynchronous-unwind-tables", "-mbranch-protection=pac-ret+b-key", "-c", "arm64.c")
		exe := filepath.Join(t.TempDir(), "arm64")
		if b, err := exec.Command(testenv.Tool(t, "ld.lld-14"), "--eh-frame-hdr", "-o", exe, obj).CombinedOutput(); err != nil {
			t.Fatalf("ld.lld-14: %v\n%s", err, b)
		}
		checkReadelf(t, exe)
		ts := load(t, exe)
		signed := 0
		for f, err := range ts.eh.All() {
			if err != nil {
				t.Fatal(err)
			}
			if !f.CIE.BKey && f.CIE.Augmentation == "zRB" {
				t.Errorf("FDE %#x: CIE %q without BKey", f.Offset, f.CIE.Augmentation)
			}
			for pc := f.Begin; pc < f.End; pc += 4 {
				row, err := f.Row(pc)
				if err != nil {
					t.Fatalf("Row(%#x): %v", pc, err)
				}
				if row.RASigned {
					signed++
					if !f.CIE.BKey {
						t.Errorf("%#x: signed return address in a CIE without B key", pc)
					}
				}
			}
		}
		if signed == 0 {
			t.Errorf("no row with a signed return address")
		}
	})
}

// TestReadelfSystemLibraries runs the same comparison on the C and C++
// libraries the system's gcc links against: tens of thousands of FDEs that
// no fixture of ours produced (glibc's hand-written assembly, libstdc++'s
// exception handling paths).
func TestReadelfSystemLibraries(t *testing.T) {
	gcc := testenv.Tool(t, "gcc")
	for _, lib := range []string{"libc.so.6", "libm.so.6", "libstdc++.so.6"} {
		t.Run(lib, func(t *testing.T) {
			out, err := exec.Command(gcc, "-print-file-name="+lib).Output()
			if err != nil {
				t.Fatalf("gcc -print-file-name=%s: %v", lib, err)
			}
			path, err := filepath.EvalSymlinks(strings.TrimSpace(string(out)))
			if err != nil {
				t.Fatal(err)
			}
			checkReadelf(t, path)
		})
	}
}

func checkReadelf(t *testing.T, path string) {
	t.Helper()
	ts := load(t, path)
	fdes := readelf(t, path)
	if len(fdes) == 0 {
		t.Fatalf("readelf found no FDEs in %s", path)
	}
	var signal, rows int
	for _, rf := range fdes {
		var tabs []*cfi.Table
		switch rf.section {
		case ".eh_frame":
			tabs = []*cfi.Table{ts.eh, ts.ehScan}
		case ".debug_frame":
			tabs = []*cfi.Table{ts.debug}
		default:
			continue
		}
		for ti, tab := range tabs {
			if tab == nil {
				t.Fatalf("no table for %s", rf.section)
			}
			if rf.begin == rf.end {
				continue
			}
			f, err := tab.FDE(rf.begin)
			if err != nil {
				// Overlapping FDEs (a zero-length or duplicate range) can
				// hide one another; readelf lists them all.
				if errors.Is(err, cfi.ErrNoFDE) && ti == 0 {
					t.Errorf("%s FDE %#x [%#x,%#x): %v", rf.section, rf.off, rf.begin, rf.end, err)
				}
				continue
			}
			if f.Offset != rf.off {
				continue // another FDE at the same address
			}
			if f.Begin != rf.begin || f.End != rf.end {
				t.Errorf("%s FDE %#x: range [%#x,%#x), readelf [%#x,%#x)", rf.section, rf.off, f.Begin, f.End, rf.begin, rf.end)
			}
			if f.CIE.Signal {
				signal++
			}
			for i, r := range rf.rows {
				next := rf.end
				if i+1 < len(rf.rows) {
					next = rf.rows[i+1].loc
				}
				if next <= r.loc {
					continue
				}
				for _, pc := range []uint64{r.loc, next - 1} {
					row, err := f.Row(pc)
					if err != nil {
						t.Errorf("%s FDE %#x Row(%#x): %v", rf.section, rf.off, pc, err)
						continue
					}
					rows++
					have := strings.Join(cells(ts.arch, row, rf.cols), " ")
					want := strings.Join(r.cells, " ")
					if have != want {
						t.Errorf("%s FDE %#x at %#x (%s):\nhave %s\nwant %s", rf.section, rf.off, pc, strings.Join(rf.cols, " "), have, want)
					}
					if row.Loc != r.loc || row.End != next {
						t.Errorf("%s FDE %#x at %#x: row [%#x,%#x), readelf [%#x,%#x)", rf.section, rf.off, pc, row.Loc, row.End, r.loc, next)
					}
				}
			}
			// Boundaries: begin-1 and end belong to another FDE or none.
			for _, pc := range []uint64{rf.begin - 1, rf.end} {
				if g, err := tab.FDE(pc); err == nil && g.Offset == rf.off {
					t.Errorf("%s FDE %#x [%#x,%#x) found for %#x", rf.section, rf.off, rf.begin, rf.end, pc)
				}
			}
		}
	}
	if strings.Contains(path, "static") && signal == 0 {
		t.Errorf("no signal frame FDE (augmentation S) in the static executable")
	}
	t.Logf("%s: %d FDEs, %d rows compared", filepath.Base(path), len(fdes), rows)
}
