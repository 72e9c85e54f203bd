package dwarf_test

// The reader checked against llvm-dwarfdump-14 and llvm-symbolizer-14 on
// real compilers' output: the fixture programs of testdata/src built by
// internal/fixture (C and C++ with gcc and clang, DWARF 4 and 5, -O0 and
// -O2; Rust; Go; a Mach-O dSYM) and the committed binaries in
// testdata/tiny. For every file:
//
//   - unit headers (offset, version, format, unit type, address size) from
//     `llvm-dwarfdump --debug-info -v`;
//   - per unit, the root's name, compilation directory and ranges, and every
//     DW_TAG_subprogram and DW_TAG_inlined_subroutine: offset, enclosing
//     subroutine, low PC, ranges, call file (as the joined path llvm
//     prints), line, column and discriminator, name and declaration as
//     llvm resolves them through DW_AT_abstract_origin and
//     DW_AT_specification;
//   - every line table row (address, line, column, file, discriminator,
//     end of sequence) from `llvm-dwarfdump --debug-line`;
//   - FilePath of the rows' files against the paths llvm-symbolizer prints.
//
// The dump is parsed minimally: only the lines and attributes compared.

import (
	"bufio"
	"bytes"
	"fmt"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/backtrail/backtrail/debugfile/dwarf"
	"github.com/backtrail/backtrail/internal/fixture"
	"github.com/backtrail/backtrail/internal/testenv"
)

func llvmSpecs() []fixture.Spec {
	var specs []fixture.Spec
	for _, lang := range []string{"c", "cxx"} {
		for _, cc := range []string{"gcc", "clang"} {
			for _, opt := range []int{0, 2} {
				for _, dw := range []int{4, 5} {
					specs = append(specs, fixture.Spec{Lang: lang, Compiler: cc, Opt: opt, DWARF: dw})
				}
			}
		}
	}
	return append(specs,
		fixture.Spec{Lang: "rust", Opt: 2},
		fixture.Spec{Lang: "go", Opt: 2},
		fixture.Spec{Lang: "macho-cxx", Compiler: "clang", Opt: 2, Arch: "arm64"},
	)
}

func TestMatchesLLVM(t *testing.T) {
	dump := testenv.Tool(t, "llvm-dwarfdump-14")
	sym := testenv.Tool(t, "llvm-symbolizer-14")
	if testing.Short() {
		t.Skip("builds fixtures")
	}
	specs := llvmSpecs()
	if raceSlowdown > 1 {
		// The race detector makes the full set slow; the data race
		// this would find is the same in each build.
		specs = []fixture.Spec{
			{Lang: "c", Compiler: "gcc", Opt: 2, DWARF: 5},
			{Lang: "cxx", Compiler: "clang", Opt: 2, DWARF: 4},
			{Lang: "go", Opt: 2},
			{Lang: "macho-cxx", Compiler: "clang", Opt: 2, Arch: "arm64"},
		}
	}
	for _, spec := range specs {
		t.Run(fixture.Name(spec), func(t *testing.T) {
			b := fixture.Build(t, spec)
			compareWithLLVM(t, dump, sym, b.DWARFPath)
		})
	}
}

func TestTinyMatchesLLVM(t *testing.T) {
	dump := testenv.Tool(t, "llvm-dwarfdump-14")
	sym := testenv.Tool(t, "llvm-symbolizer-14")
	for _, name := range tinyFiles {
		t.Run(name, func(t *testing.T) { compareWithLLVM(t, dump, sym, tinyPath(name)) })
	}
}

// llUnit and llDIE are what the comparison needs from llvm-dwarfdump's
// --debug-info -v output.
type llUnit struct {
	off      uint64
	version  uint16
	dwarf64  bool
	unitType string
	addrSize uint8
	dies     []*llDIE
}

type llDIE struct {
	off        uint64
	tag        string
	indent     int
	parent     *llDIE
	attrs      map[string]string // attribute name → value text
	forms      map[string]string // attribute name → form
	ranges     []dwarf.Range     // of DW_AT_ranges
	hasSibling bool
	unit       *llUnit
}

func (d *llDIE) has(a string) bool { _, ok := d.attrs[a]; return ok }

var (
	reUnit  = regexp.MustCompile(`^0x([0-9a-f]+): (\w+) Unit: length = 0x[0-9a-f]+, format = (DWARF32|DWARF64), version = 0x([0-9a-f]+),(?: unit_type = (\w+),)? abbr_offset = 0x[0-9a-f]+, addr_size = 0x([0-9a-f]+)`)
	reDIE   = regexp.MustCompile(`^0x([0-9a-f]+):( +)(DW_TAG_\w+|NULL)`)
	reAttr  = regexp.MustCompile(`^\s+(DW_AT_\w+) \[(DW_FORM_\w+)\]\s*\((.*)$`)
	reRange = regexp.MustCompile(`^\s+\[0x([0-9a-f]+), 0x([0-9a-f]+)\)`)
	reRef   = regexp.MustCompile(`\{0x([0-9a-f]+)\}`)
	reHex   = regexp.MustCompile(`0x([0-9a-f]+)`)
	reRow   = regexp.MustCompile(`^0x([0-9a-f]+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s*(.*)$`)
)

func runTool(t *testing.T, stdin []byte, name string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Stdin = bytes.NewReader(stdin)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, stderr.Bytes())
	}
	return out
}

func parseDebugInfo(t *testing.T, out []byte) ([]*llUnit, map[uint64]*llDIE) {
	var units []*llUnit
	dies := make(map[uint64]*llDIE)
	var cur *llDIE
	var stack []*llDIE
	var lastAttr string
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		line := sc.Text()
		if m := reUnit.FindStringSubmatch(line); m != nil {
			off, _ := strconv.ParseUint(m[1], 16, 64)
			v, _ := strconv.ParseUint(m[4], 16, 16)
			as, _ := strconv.ParseUint(m[6], 16, 8)
			ut := m[5]
			if ut == "" {
				ut = "DW_UT_compile"
			}
			units = append(units, &llUnit{off: off, version: uint16(v), dwarf64: m[3] == "DWARF64", unitType: ut, addrSize: uint8(as)})
			stack, cur = stack[:0], nil
			continue
		}
		if m := reDIE.FindStringSubmatch(line); m != nil {
			cur = nil
			if m[3] == "NULL" || len(units) == 0 {
				continue
			}
			off, _ := strconv.ParseUint(m[1], 16, 64)
			d := &llDIE{off: off, tag: m[3], indent: len(m[2]), attrs: map[string]string{}, forms: map[string]string{}, unit: units[len(units)-1]}
			for len(stack) > 0 && stack[len(stack)-1].indent >= d.indent {
				stack = stack[:len(stack)-1]
			}
			if len(stack) > 0 {
				d.parent = stack[len(stack)-1]
			}
			stack = append(stack, d)
			d.unit.dies = append(d.unit.dies, d)
			dies[off] = d
			cur = d
			continue
		}
		if cur == nil {
			continue
		}
		if m := reAttr.FindStringSubmatch(line); m != nil {
			cur.attrs[m[1]] = m[3]
			cur.forms[m[1]] = m[2]
			lastAttr = m[1]
			if m[1] == "DW_AT_sibling" {
				cur.hasSibling = true
			}
			continue
		}
		if m := reRange.FindStringSubmatch(line); m != nil && lastAttr == "DW_AT_ranges" {
			lo, _ := strconv.ParseUint(m[1], 16, 64)
			hi, _ := strconv.ParseUint(m[2], 16, 64)
			cur.ranges = append(cur.ranges, dwarf.Range{Lo: lo, Hi: hi})
		}
	}
	if len(units) == 0 {
		t.Fatalf("no units in llvm-dwarfdump output")
	}
	return units, dies
}

// quoted returns the text between the first and last double quote of v,
// with llvm's escapes (octal for bytes outside printable ASCII) undone.
func quoted(v string) (string, bool) {
	i, j := strings.IndexByte(v, '"'), strings.LastIndexByte(v, '"')
	if i < 0 || j <= i {
		return "", false
	}
	v = v[i+1 : j]
	if !strings.Contains(v, `\`) {
		return v, true
	}
	var b strings.Builder
	for k := 0; k < len(v); k++ {
		c := v[k]
		if c != '\\' || k+1 >= len(v) {
			b.WriteByte(c)
			continue
		}
		k++
		switch c := v[k]; {
		case c >= '0' && c <= '7' && k+2 < len(v):
			n, _ := strconv.ParseUint(v[k:k+3], 8, 8)
			b.WriteByte(byte(n))
			k += 2
		case c == 'n':
			b.WriteByte('\n')
		case c == 't':
			b.WriteByte('\t')
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), true
}

// address returns the address an address-class value shows.
func address(v string) uint64 {
	if i := strings.Index(v, "address = 0x"); i >= 0 {
		v = v[i:]
	}
	m := reHex.FindStringSubmatch(v)
	if m == nil {
		return 0
	}
	x, _ := strconv.ParseUint(m[1], 16, 64)
	return x
}

func number(v string) uint64 {
	v = strings.TrimSuffix(strings.TrimSpace(v), ")")
	x, _ := strconv.ParseUint(v, 0, 64)
	return x
}

// findRecursively returns the first DIE reachable from d through
// DW_AT_abstract_origin and DW_AT_specification (depth first, the
// specification visited before the origin) that has one of attrs.
func findRecursively(dies map[uint64]*llDIE, d *llDIE, attrs ...string) (*llDIE, string) {
	stack := []*llDIE{d}
	seen := map[*llDIE]bool{d: true}
	for len(stack) > 0 {
		e := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, a := range attrs {
			if e.has(a) {
				return e, a
			}
		}
		for _, a := range []string{"DW_AT_abstract_origin", "DW_AT_specification"} {
			if !e.has(a) {
				continue
			}
			// ref1–ref_udata show "cu + 0x10 => {0x1b}", ref_addr
			// shows the offset alone.
			m := reRef.FindStringSubmatch(e.attrs[a])
			if m == nil {
				m = reHex.FindStringSubmatch(e.attrs[a])
			}
			if m == nil {
				continue
			}
			off, _ := strconv.ParseUint(m[1], 16, 64)
			if t := dies[off]; t != nil && !seen[t] {
				seen[t] = true
				stack = append(stack, t)
			}
		}
	}
	return nil, ""
}

// expectedRanges returns the ranges llvm shows for d: low/high PC, else
// DW_AT_ranges, else none.
func expectedRanges(d *llDIE) []dwarf.Range {
	if d.has("DW_AT_low_pc") && d.has("DW_AT_high_pc") {
		lo := address(d.attrs["DW_AT_low_pc"])
		hi := address(d.attrs["DW_AT_high_pc"])
		switch d.forms["DW_AT_high_pc"] {
		case "DW_FORM_addr", "DW_FORM_addrx", "DW_FORM_addrx1", "DW_FORM_addrx2", "DW_FORM_addrx3", "DW_FORM_addrx4", "DW_FORM_GNU_addr_index":
		default:
			hi = lo + number(d.attrs["DW_AT_high_pc"])
		}
		return []dwarf.Range{{Lo: lo, Hi: hi}}
	}
	if d.has("DW_AT_ranges") {
		return d.ranges
	}
	return nil
}

type llTable struct {
	version uint16
	rows    []dwarf.LineRow
}

func parseDebugLine(out []byte) map[uint64]*llTable {
	tables := make(map[uint64]*llTable)
	var cur *llTable
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		line := sc.Text()
		if s, ok := strings.CutPrefix(line, "debug_line[0x"); ok {
			off, _ := strconv.ParseUint(strings.TrimSuffix(s, "]"), 16, 64)
			cur = &llTable{}
			tables[off] = cur
			continue
		}
		if cur == nil {
			continue
		}
		if s, ok := strings.CutPrefix(strings.TrimSpace(line), "version: "); ok {
			v, _ := strconv.ParseUint(s, 10, 16)
			cur.version = uint16(v)
			continue
		}
		if m := reRow.FindStringSubmatch(line); m != nil {
			addr, _ := strconv.ParseUint(m[1], 16, 64)
			num := func(s string) uint32 { v, _ := strconv.ParseUint(s, 10, 32); return uint32(v) }
			cur.rows = append(cur.rows, dwarf.LineRow{Addr: addr, Line: num(m[2]), Column: num(m[3]), File: num(m[4]),
				Discriminator: num(m[6]), EndSequence: strings.Contains(m[7], "end_sequence")})
		}
	}
	return tables
}

func compareWithLLVM(t *testing.T, dump, sym, path string) {
	s, big := loadSections(t, path)
	d, err := dwarf.New(s, big)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	llUnits, llDIEs := parseDebugInfo(t, runTool(t, nil, dump, "--debug-info", "-v", path))
	llLines := parseDebugLine(runTool(t, nil, dump, "--debug-line", path))

	units := d.Units()
	if len(units) != len(llUnits) {
		t.Fatalf("%d units, llvm-dwarfdump shows %d", len(units), len(llUnits))
	}
	utName := map[uint8]string{dwarf.DW_UT_compile: "DW_UT_compile", dwarf.DW_UT_type: "DW_UT_type", dwarf.DW_UT_partial: "DW_UT_partial",
		dwarf.DW_UT_skeleton: "DW_UT_skeleton", dwarf.DW_UT_split_compile: "DW_UT_split_compile", dwarf.DW_UT_split_type: "DW_UT_split_type"}
	// Line tables first: call and declaration files are checked through
	// them.
	uis := make([]*dwarf.UnitInfo, len(units))
	lts := make(map[*dwarf.Unit]*dwarf.LineTable)
	for i := range units {
		u, lu := &units[i], llUnits[i]
		if u.Offset != lu.off || u.Version != lu.version || u.Dwarf64 != lu.dwarf64 || u.AddrSize != lu.addrSize || utName[u.Type] != lu.unitType {
			t.Errorf("unit %d: have offset %#x version %d dwarf64 %v addr size %d type %s; llvm: %+v",
				i, u.Offset, u.Version, u.Dwarf64, u.AddrSize, utName[u.Type], *lu)
		}
		ui := new(dwarf.UnitInfo)
		if err := d.ReadUnit(u, ui); err != nil {
			t.Fatalf("ReadUnit(unit at %#x): %v", u.Offset, err)
		}
		uis[i] = ui
		lt := new(dwarf.LineTable)
		if err := d.ReadLineTable(ui, lt); err != nil {
			t.Fatalf("ReadLineTable(unit at %#x): %v", u.Offset, err)
		}
		lts[u] = lt
		if !ui.HasStmtList {
			continue
		}
		want := llLines[ui.StmtList]
		if want == nil {
			t.Errorf("unit at %#x: llvm shows no line table at %#x", u.Offset, ui.StmtList)
			continue
		}
		if lt.Version != want.version {
			t.Errorf("unit at %#x: line table version %d, llvm %d", u.Offset, lt.Version, want.version)
		}
		if len(lt.Rows) != len(want.rows) {
			t.Errorf("unit at %#x: %d line rows, llvm %d", u.Offset, len(lt.Rows), len(want.rows))
		}
		bad := 0
		for j := range min(len(lt.Rows), len(want.rows)) {
			if lt.Rows[j] != want.rows[j] && bad < 5 {
				bad++
				t.Errorf("unit at %#x: row %d: have %+v, llvm %+v", u.Offset, j, lt.Rows[j], want.rows[j])
			}
		}
	}

	nsubs := 0
	for i, ui := range uis {
		u, lu := &units[i], llUnits[i]
		root := lu.dies[0]
		if n, _ := quoted(root.attrs["DW_AT_name"]); string(ui.Name) != n {
			t.Errorf("unit at %#x: name %q, llvm %q", u.Offset, ui.Name, n)
		}
		if n, _ := quoted(root.attrs["DW_AT_comp_dir"]); string(ui.CompDir) != n {
			t.Errorf("unit at %#x: comp dir %q, llvm %q", u.Offset, ui.CompDir, n)
		}
		if want := expectedRanges(root); !slices.Equal(ui.Ranges, want) {
			t.Errorf("unit at %#x: ranges %x, llvm %x", u.Offset, ui.Ranges, want)
		}
		lt := lts[u]
		have := make(map[uint64]int)
		for j := range ui.Subroutines {
			have[ui.Subroutines[j].Offset] = j
		}
		isSub := func(d *llDIE) bool { return d.tag == "DW_TAG_subprogram" || d.tag == "DW_TAG_inlined_subroutine" }
		// The reader may skip what lies under an entry with a
		// DW_AT_sibling (types), but only entries without code.
		skipped := func(d *llDIE) bool {
			for p := d.parent; p != nil; p = p.parent {
				if p.hasSibling && !isSub(p) {
					return true
				}
			}
			return false
		}
		// It lists the subroutines with address attributes and, as their
		// parents, the subroutines that enclose them.
		needed := map[*llDIE]bool{}
		for _, ld := range lu.dies {
			if isSub(ld) && (ld.has("DW_AT_low_pc") || ld.has("DW_AT_ranges")) && !skipped(ld) {
				for p := ld; p != nil; p = p.parent {
					needed[p] = needed[p] || isSub(p)
				}
			}
		}
		for _, ld := range lu.dies {
			if !isSub(ld) {
				continue
			}
			if _, ok := have[ld.off]; ok {
				continue
			}
			if needed[ld] || len(expectedRanges(ld)) > 0 {
				t.Errorf("unit at %#x: %s at %#x missing", u.Offset, ld.tag, ld.off)
			}
		}
		for j := range ui.Subroutines {
			nsubs++
			sub := &ui.Subroutines[j]
			ld := llDIEs[sub.Offset]
			if ld == nil || ld.unit != lu || ld.tag != map[bool]string{false: "DW_TAG_subprogram", true: "DW_TAG_inlined_subroutine"}[sub.Inlined] {
				t.Errorf("unit at %#x: subroutine %d at %#x (inlined %v) is no such entry for llvm", u.Offset, j, sub.Offset, sub.Inlined)
				continue
			}
			where := fmt.Sprintf("unit at %#x: %s at %#x", u.Offset, ld.tag, ld.off)
			wantParent := int64(-1)
			for p := ld.parent; p != nil; p = p.parent {
				if p.tag == "DW_TAG_subprogram" || p.tag == "DW_TAG_inlined_subroutine" {
					wantParent = int64(p.off)
					break
				}
			}
			if sub.Parent >= int32(j) || sub.Parent < -1 {
				t.Errorf("%s: parent index %d", where, sub.Parent)
			} else if haveParent := int64(-1); true {
				if sub.Parent >= 0 {
					haveParent = int64(ui.Subroutines[sub.Parent].Offset)
				}
				if haveParent != wantParent {
					t.Errorf("%s: parent %#x, llvm %#x", where, haveParent, wantParent)
				}
			}
			if sub.HasLowPC != ld.has("DW_AT_low_pc") || sub.HasLowPC && sub.LowPC != address(ld.attrs["DW_AT_low_pc"]) {
				t.Errorf("%s: low pc %#x (%v), llvm %q", where, sub.LowPC, sub.HasLowPC, ld.attrs["DW_AT_low_pc"])
			}
			if have, want := ui.SubRanges[sub.Ranges[0]:sub.Ranges[1]], expectedRanges(ld); !slices.Equal(have, want) {
				t.Errorf("%s: ranges %x, llvm %x", where, have, want)
			}
			// Names: a linkage name anywhere on the graph, else a name.
			wantName, wantLinkage := "", false
			if e, a := findRecursively(llDIEs, ld, "DW_AT_linkage_name", "DW_AT_MIPS_linkage_name"); e != nil {
				wantName, _ = quoted(e.attrs[a])
				wantLinkage = true
			} else if e, _ := findRecursively(llDIEs, ld, "DW_AT_name"); e != nil {
				wantName, _ = quoted(e.attrs["DW_AT_name"])
			}
			if name, linkage := ui.SubroutineName(j); string(name) != wantName || linkage != wantLinkage {
				t.Errorf("%s: name %q (linkage %v), llvm %q (%v)", where, name, linkage, wantName, wantLinkage)
			}
			if v, ok := ld.attrs["DW_AT_call_file"]; ok {
				want, quotedOK := quoted(v)
				have, ok := lt.FilePath(sub.CallFile)
				if quotedOK && (!ok || have != want) {
					t.Errorf("%s: call file %d = %q (%v), llvm %q", where, sub.CallFile, have, ok, want)
				}
			}
			if w := number(ld.attrs["DW_AT_call_line"]); uint64(sub.CallLine) != w {
				t.Errorf("%s: call line %d, llvm %d", where, sub.CallLine, w)
			}
			if w := number(ld.attrs["DW_AT_call_column"]); uint64(sub.CallColumn) != w {
				t.Errorf("%s: call column %d, llvm %d", where, sub.CallColumn, w)
			}
			if w := number(ld.attrs["DW_AT_GNU_discriminator"]); uint64(sub.Discriminator) != w {
				t.Errorf("%s: discriminator %d, llvm %d", where, sub.Discriminator, w)
			}
			file, line, declUnit, _ := ui.SubroutineDecl(j)
			if e, _ := findRecursively(llDIEs, ld, "DW_AT_decl_line"); e != nil {
				if w := number(e.attrs["DW_AT_decl_line"]); uint64(line) != w {
					t.Errorf("%s: decl line %d, llvm %d", where, line, w)
				}
			} else if line != 0 {
				t.Errorf("%s: decl line %d, llvm none", where, line)
			}
			if e, _ := findRecursively(llDIEs, ld, "DW_AT_decl_file"); e != nil {
				want, quotedOK := quoted(e.attrs["DW_AT_decl_file"])
				if declUnit == nil || declUnit.Offset != e.unit.off {
					t.Errorf("%s: declared in unit %v, llvm unit at %#x", where, declUnit, e.unit.off)
				} else if have, ok := lts[declUnit].FilePath(file); quotedOK && (!ok || have != want) {
					t.Errorf("%s: decl file %d = %q, llvm %q", where, file, have, want)
				}
			}
		}
	}
	if nsubs == 0 {
		t.Errorf("no subroutines read")
	}
	checkFilePaths(t, sym, path, d, uis, lts)
}

// checkFilePaths asks llvm-symbolizer for the file of line rows that only
// one sequence covers, and compares it with FilePath of the row's file.
func checkFilePaths(t *testing.T, sym, path string, d *dwarf.Data, uis []*dwarf.UnitInfo, lts map[*dwarf.Unit]*dwarf.LineTable) {
	owners, err := d.UnitRanges()
	if err != nil {
		t.Fatalf("UnitRanges: %v", err)
	}
	owner := func(addr uint64) int {
		i, _ := slices.BinarySearchFunc(owners, addr, func(r dwarf.UnitRange, a uint64) int {
			switch {
			case r.Hi <= a:
				return -1
			case r.Lo > a:
				return 1
			}
			return 0
		})
		if i < len(owners) && owners[i].Lo <= addr && addr < owners[i].Hi {
			return owners[i].Unit
		}
		return -1
	}
	type seq struct{ lo, hi uint64 }
	var seqs []seq
	for _, ui := range uis {
		rows := lts[ui.Unit].Rows
		start := 0
		for j, r := range rows {
			if r.EndSequence {
				seqs = append(seqs, seq{rows[start].Addr, r.Addr})
				start = j + 1
			}
		}
	}
	covering := func(a uint64) int {
		n := 0
		for _, s := range seqs {
			if s.lo <= a && a < s.hi {
				n++
			}
		}
		return n
	}
	type probe struct {
		addr uint64
		want string
		line uint32
	}
	var probes []probe
	for i, ui := range uis {
		lt := lts[ui.Unit]
		rows := lt.Rows
		var cands []int
		for j := 0; j+1 < len(rows); j++ {
			r := rows[j]
			if !r.EndSequence && r.Line != 0 && r.Addr != 0 && rows[j+1].Addr > r.Addr && (j == 0 || rows[j-1].EndSequence || rows[j-1].Addr < r.Addr) {
				cands = append(cands, j)
			}
		}
		// A spread of at most 40 rows per unit keeps the symbolizer run short.
		step := max(1, len(cands)/40)
		for k := 0; k < len(cands); k += step {
			r := rows[cands[k]]
			if owner(r.Addr) != i || covering(r.Addr) != 1 {
				continue
			}
			p, ok := lt.FilePath(uint64(r.File))
			if !ok {
				t.Errorf("unit at %#x: row at %#x: no path for file %d", ui.Unit.Offset, r.Addr, r.File)
				continue
			}
			probes = append(probes, probe{r.Addr, p, r.Line})
		}
	}
	if len(probes) == 0 {
		t.Fatalf("no line rows to probe")
	}
	var in bytes.Buffer
	for _, p := range probes {
		fmt.Fprintf(&in, "%#x\n", p.addr)
	}
	out := strings.Split(strings.TrimSpace(string(runTool(t, in.Bytes(), sym, "--obj="+path, "--no-inlines", "--functions=none"))), "\n\n")
	if len(out) != len(probes) {
		t.Fatalf("%d probes, %d answers", len(probes), len(out))
	}
	bad := 0
	for i, p := range probes {
		want := fmt.Sprintf("%s:%d:", p.want, p.line)
		if !strings.HasPrefix(out[i], want) && bad < 10 {
			bad++
			t.Errorf("%#x: llvm-symbolizer says %q, FilePath and row say %q", p.addr, out[i], want)
		}
	}
	t.Logf("%d units, %d file paths checked with llvm-symbolizer", len(uis), len(probes))
}
