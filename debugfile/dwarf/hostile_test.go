package dwarf_test

// Hostile input: real sections truncated and corrupted at many offsets, and
// crafted inputs that claim huge counts or make one part of a section
// referenced many times. Whatever the bytes, every call returns a result or
// an error naming a section and a hex offset; nothing panics, loops, or
// allocates more than a small multiple of the input.

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/backtrail/backtrail/debugfile/dwarf"
	"github.com/backtrail/backtrail/internal/fixture"
)

var reErrWhere = regexp.MustCompile(`\.debug_[a-z_]+.* 0x[0-9a-f]+|0x[0-9a-f]+.*\.debug_[a-z_]+`)

// exercise calls every entry point on s and checks the invariants that
// hold for any input. It returns the errors seen.
func exercise(t testing.TB, s dwarf.Sections, big bool) []error {
	t.Helper()
	var errs []error
	check := func(what string, err error) {
		t.Helper()
		if err == nil {
			return
		}
		errs = append(errs, err)
		if !reErrWhere.MatchString(err.Error()) {
			t.Errorf("%s: error %q names no section and offset", what, err)
		}
	}
	d, err := dwarf.New(s, big)
	check("New", err)
	if d == nil {
		t.Fatalf("New returned no Data")
	}
	var ui dwarf.UnitInfo
	var lt dwarf.LineTable
	units := d.Units()
	for i := range units {
		u := &units[i]
		if u.Offset >= u.End || u.End > uint64(len(s.Info)) || i > 0 && u.Offset < units[i-1].End {
			t.Errorf("unit %d: bad bounds %#x..%#x", i, u.Offset, u.End)
		}
		// ui is reused, as symbolize does; ReadUnit leaves it unchanged
		// when it cannot start.
		err := d.ReadUnit(u, &ui)
		check("ReadUnit", err)
		checkUnitInfo(t, &ui)
		if err != nil {
			continue
		}
		err = d.ReadLineTable(&ui, &lt)
		check("ReadLineTable", err)
		if ui.HasStmtList && ui.StmtList < uint64(len(s.Line)) && len(lt.Rows) > len(s.Line)-int(ui.StmtList) {
			t.Errorf("unit %d: %d rows from %d bytes of program", i, len(lt.Rows), len(s.Line)-int(ui.StmtList))
		}
		for _, r := range lt.Rows {
			lt.FilePath(uint64(r.File))
		}
		for j := range ui.Subroutines {
			lt.FilePath(ui.Subroutines[j].CallFile)
		}
	}
	rs, err := d.UnitRanges()
	check("UnitRanges", err)
	for i, r := range rs {
		if r.Lo >= r.Hi || i > 0 && r.Lo < rs[i-1].Hi || r.Unit < 0 || r.Unit >= len(units) {
			t.Errorf("UnitRanges[%d] = %+v after %+v", i, r, rs[max(i-1, 0)])
		}
	}
	return errs
}

// checkUnitInfo checks the structure of a (possibly partly read) UnitInfo
// and resolves every name.
func checkUnitInfo(t testing.TB, ui *dwarf.UnitInfo) {
	t.Helper()
	for j := range ui.Subroutines {
		s := &ui.Subroutines[j]
		if s.Ranges[0] > s.Ranges[1] || s.Ranges[1] > uint32(len(ui.SubRanges)) {
			t.Fatalf("subroutine %d: ranges [%d, %d) of %d", j, s.Ranges[0], s.Ranges[1], len(ui.SubRanges))
		}
		if s.Parent >= int32(j) || s.Parent < -1 {
			t.Fatalf("subroutine %d: parent %d", j, s.Parent)
		}
		ui.SubroutineName(j)
		ui.SubroutineDecl(j)
	}
}

// sectionFields lists the sections of s by name, for corrupting each.
func sectionFields(s *dwarf.Sections) []struct {
	name string
	p    *[]byte
} {
	return []struct {
		name string
		p    *[]byte
	}{
		{"info", &s.Info}, {"abbrev", &s.Abbrev}, {"line", &s.Line}, {"line_str", &s.LineStr}, {"str", &s.Str},
		{"str_offsets", &s.StrOffsets}, {"addr", &s.Addr}, {"ranges", &s.Ranges}, {"rnglists", &s.RngLists}, {"aranges", &s.Aranges},
	}
}

// corrupt runs exercise on s with one section replaced by each of the
// variants that mutate makes of it.
func corrupt(t *testing.T, s dwarf.Sections, big bool, positions func(n int) []int) (runs int) {
	for _, f := range sectionFields(&s) {
		orig := *f.p
		if len(orig) == 0 {
			continue
		}
		buf := make([]byte, len(orig))
		for _, pos := range positions(len(orig)) {
			// Truncated just before pos.
			*f.p = orig[:pos]
			exercise(t, s, big)
			// One bit flipped, then the byte set to 0xff and to 0x00.
			for _, mut := range []func(byte) byte{
				func(c byte) byte { return c ^ 1<<(pos%8) },
				func(byte) byte { return 0xff },
				func(byte) byte { return 0 },
			} {
				copy(buf, orig)
				buf[pos] = mut(buf[pos])
				*f.p = buf
				exercise(t, s, big)
			}
			runs += 4
			if t.Failed() {
				t.Fatalf("section %s, position %#x", f.name, pos)
			}
		}
		*f.p = orig
	}
	return runs
}

// TestCorruptTiny truncates and corrupts every section of the committed
// binaries at every offset (every tenth under the race detector).
func TestCorruptTiny(t *testing.T) {
	for _, name := range tinyFiles {
		t.Run(name, func(t *testing.T) {
			s, big := loadSections(t, tinyPath(name))
			if errs := exercise(t, s, big); len(errs) != 0 {
				t.Fatalf("errors on the intact file: %v", errs)
			}
			every := func(n int) []int {
				var ps []int
				for i := 0; i < n; i += raceSlowdown {
					ps = append(ps, i)
				}
				return ps
			}
			runs := corrupt(t, s, big, every)
			t.Logf("%d corrupted inputs", runs)
		})
	}
}

// TestCorruptFixtures does the same at a random sample of offsets of
// bigger, real sections.
func TestCorruptFixtures(t *testing.T) {
	if testing.Short() {
		t.Skip("builds fixtures")
	}
	for _, spec := range []fixture.Spec{
		{Lang: "c", Compiler: "clang", Opt: 2, DWARF: 5},
		{Lang: "c", Compiler: "gcc", Opt: 2, DWARF: 4},
	} {
		t.Run(fixture.Name(spec), func(t *testing.T) {
			b := fixture.Build(t, spec)
			s, big := loadSections(t, b.DWARFPath)
			rng := rand.New(rand.NewPCG(1, 2))
			sample := func(n int) []int {
				var ps []int
				for i := 0; i < 150/raceSlowdown; i++ {
					ps = append(ps, rng.IntN(n))
				}
				return ps
			}
			runs := corrupt(t, s, big, sample)
			t.Logf("%d corrupted inputs", runs)
		})
	}
}

// allocated returns the bytes f allocates.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// lineUnit returns .debug_info and .debug_abbrev of a DWARF 5 unit whose
// DW_AT_stmt_list is 0, for line table inputs.
func lineUnit() (info, abbrev []byte) {
	ab := (&asm{}).abbrevs(decl{abCU, dwarf.DW_TAG_compile_unit, false, []attr{
		{dwarf.DW_AT_comp_dir, dwarf.DW_FORM_string, 0},
		{dwarf.DW_AT_stmt_list, dwarf.DW_FORM_sec_offset, 0},
	}})
	a := &asm{}
	a.unit(unitHeader{version: 5, addrSize: 8}, func(a *asm) { a.uleb(abCU).str("/cd").u32(0) })
	return a.b, ab.b
}

// hostileInput is a crafted input, and the error reading it must give, if
// any.
type hostileInput struct {
	name string
	s    dwarf.Sections
	want string
}

func (h hostileInput) size() int {
	n := 0
	for _, f := range sectionFields(&h.s) {
		n += len(*f.p)
	}
	return n
}

func hostileInputs() []hostileInput {
	var hs []hostileInput
	info, abbrev := lineUnit()

	// A line table header claiming 2^60 directories and files.
	for _, table := range []int{0, 1} {
		l := &asm{}
		fill := l.length()
		l.u16(5).u8(8).u8(0)
		fh := l.length0()
		l.u8(1).u8(1).u8(1).u8(0xfb).u8(14).u8(13).raw(standardLengths...)
		if table == 1 {
			l.u8(1).uleb(1).uleb(uint64(dwarf.DW_FORM_string)).uleb(0)
		}
		l.u8(1).uleb(1).uleb(uint64(dwarf.DW_FORM_string)).uleb(1 << 60)
		fh()
		fill()
		hs = append(hs, hostileInput{fmt.Sprintf("2^60 entries in table %d", table), dwarf.Sections{Info: info, Abbrev: abbrev, Line: l.b}, ""})
	}
	// A file table whose entries take no bytes (DW_FORM_flag_present):
	// as many as the header has bytes.
	{
		l := &asm{}
		fill := l.length()
		l.u16(5).u8(8).u8(0)
		fh := l.length0()
		l.u8(1).u8(1).u8(1).u8(0xfb).u8(14).u8(13).raw(standardLengths...)
		l.u8(0).uleb(0)
		l.u8(1).uleb(dwarf.DW_LNCT_path).uleb(uint64(dwarf.DW_FORM_flag_present)).uleb(1 << 16)
		l.raw(make([]byte, 1<<16)...)
		fh()
		fill()
		hs = append(hs, hostileInput{"zero-size file entries", dwarf.Sections{Info: info, Abbrev: abbrev, Line: l.b}, ""})
	}
	// An extended opcode claiming 2^62 bytes; a program of one-byte rows.
	{
		l := &asm{}
		l.lineProgram(lineHeader{version: 4, minInst: 1, maxOps: 1, lineBase: -5, lineRange: 14, opcodeBase: 13}, func(a *asm) {
			a.raw(make([]byte, 1<<16)...)     // 0x00 0x00 ...: empty extended opcodes
			a.u8(0).uleb(1 << 62).u8(1).u8(1) // then a huge one
		})
		l.lineProgram(lineHeader{version: 4, minInst: 1, maxOps: 1, lineBase: -5, lineRange: 14, opcodeBase: 13}, func(a *asm) {
			for i := 0; i < 1<<16; i++ {
				a.u8(0xff)
			}
		})
		hs = append(hs, hostileInput{"huge extended opcode", dwarf.Sections{Info: info, Abbrev: abbrev, Line: l.b}, ""})
	}
	// Many subprograms, all pointing at one long range list.
	for _, v := range []uint16{4, 5} {
		const entries, subs = 1 << 10, 1 << 12
		ab := (&asm{}).abbrevs(
			decl{abCU, dwarf.DW_TAG_compile_unit, true, nil},
			decl{abSub, dwarf.DW_TAG_subprogram, false, []attr{{dwarf.DW_AT_ranges, dwarf.DW_FORM_sec_offset, 0}}},
		)
		info := &asm{}
		info.unit(unitHeader{version: v, addrSize: 8}, func(a *asm) {
			a.uleb(abCU)
			for i := 0; i < subs; i++ {
				a.uleb(abSub).u32(0)
			}
			a.u8(0)
		})
		rl := &asm{}
		for i := uint64(0); i < entries; i++ {
			if v == 4 {
				rl.u64(i*16 + 1).u64(i*16 + 2)
			} else {
				rl.u8(dwarf.DW_RLE_offset_pair).uleb(i*16 + 1).uleb(i*16 + 2)
			}
		}
		s := dwarf.Sections{Info: info.b, Abbrev: ab.b}
		if v == 4 {
			s.Ranges = rl.u64(0).u64(0).b
		} else {
			s.RngLists = rl.u8(0).b
		}
		hs = append(hs, hostileInput{fmt.Sprintf("shared range list v%d", v), s, "decoding .debug_info at offset 0x"})
	}
	// Many units whose root entries all point at one long range list.
	{
		const entries, units = 1 << 10, 1 << 12
		ab := (&asm{}).abbrevs(decl{abCU, dwarf.DW_TAG_compile_unit, false, []attr{{dwarf.DW_AT_ranges, dwarf.DW_FORM_sec_offset, 0}}})
		info := &asm{}
		for i := 0; i < units; i++ {
			info.unit(unitHeader{version: 4, addrSize: 8}, func(a *asm) { a.uleb(abCU).u32(0) })
		}
		rl := &asm{}
		for i := uint64(0); i < entries; i++ {
			rl.u64(i*16 + 1).u64(i*16 + 2)
		}
		hs = append(hs, hostileInput{"units sharing a range list", dwarf.Sections{Info: info.b, Abbrev: ab.b, Ranges: rl.u64(0).u64(0).b},
			"decoding .debug_info at offset 0x510: unit at 0x500: range lists expand to more than 81936 ranges"})
	}
	// Many units, each starting its abbreviation table one declaration
	// further into one long table.
	{
		const decls = 1 << 12
		ab := &asm{}
		var offs []uint64
		for i := 0; i < decls; i++ {
			offs = append(offs, uint64(len(ab.b)))
			ab.uleb(uint64(i + 1)).uleb(uint64(dwarf.DW_TAG_compile_unit)).u8(0).u8(0).u8(0)
		}
		ab.u8(0)
		info := &asm{}
		for i := 0; i < decls; i++ {
			info.unit(unitHeader{version: 4, addrSize: 8, abbrev: offs[i]}, func(a *asm) { a.uleb(uint64(i + 1)) })
		}
		hs = append(hs, hostileInput{"overlapping abbreviation tables", dwarf.Sections{Info: info.b, Abbrev: ab.b},
			"decoding .debug_abbrev at offset 0x"})
	}
	// Many address ranges in .debug_aranges, all for the same unit and
	// all overlapping.
	{
		ab := (&asm{}).abbrevs(decl{abCU, dwarf.DW_TAG_compile_unit, false, nil})
		info := &asm{}
		info.unit(unitHeader{version: 4, addrSize: 8}, func(a *asm) { a.uleb(abCU) })
		ar := &asm{}
		fill := ar.length()
		ar.u16(2).u32(0).u8(8).u8(0).u32(0)
		for i := uint64(0); i < 1<<15; i++ {
			ar.u64(0x1000 + i).u64(0x100000)
		}
		ar.u64(0).u64(0)
		fill()
		hs = append(hs, hostileInput{"overlapping aranges", dwarf.Sections{Info: info.b, Abbrev: ab.b, Aranges: ar.b}, ""})
	}
	// Deeply nested entries of one byte each.
	{
		ab := (&asm{}).abbrevs(
			decl{abCU, dwarf.DW_TAG_compile_unit, true, nil},
			decl{abSub, dwarf.DW_TAG_lexical_block, true, nil},
			decl{abInl, dwarf.DW_TAG_inlined_subroutine, true, nil},
		)
		info := &asm{}
		info.unit(unitHeader{version: 4, addrSize: 8}, func(a *asm) {
			a.uleb(abCU)
			for i := 0; i < 1<<16; i++ {
				a.uleb(uint64(abSub + i%2))
			}
		})
		hs = append(hs, hostileInput{"deep nesting", dwarf.Sections{Info: info.b, Abbrev: ab.b}, ""})
	}
	// Long reference chains from many entries.
	{
		var nodes []refNode
		for i := 0; i < 1<<12; i++ {
			nodes = append(nodes, refNode{origin: (i + 1) % (1 << 12), spec: (i + 7) % (1 << 12)})
		}
		s, _ := refGraph(nodes)
		hs = append(hs, hostileInput{"reference chains", s, ""})
	}
	return hs
}

// TestHostileCost is the regression test of the quadratic cases found. It
// reads crafted inputs and bounds what that allocates and how long it
// takes: linear inputs take milliseconds, so the time limit only catches
// quadratic behaviour. Before the fixes, the shared range lists, the units
// sharing a range list and the overlapping abbreviation tables allocated
// 9,000–15,000 bytes per input byte (growing with the input; 1.2 GB and
// 6 s for the 82 KB of units sharing a list), the reference chains 870 and
// the zero-size file entries 170.
//
// The allocation limit is linear but not small: the worst case is a
// one-byte DW_TAG_inlined_subroutine entry, which becomes a 64-byte
// Subroutine while it is open (deep nesting: about 420 bytes per input
// byte with slice growth).
func TestHostileCost(t *testing.T) {
	for _, h := range hostileInputs() {
		t.Run(h.name, func(t *testing.T) {
			var errs []error
			start := time.Now()
			n := allocated(func() { errs = exercise(t, h.s, false) })
			el := time.Since(start)
			limit := uint64(512*h.size() + 1<<20)
			t.Logf("%d bytes of input: %d errors, %d bytes allocated (%.1f per input byte), %v", h.size(), len(errs), n, float64(n)/float64(h.size()), el)
			if h.want != "" && !slices.ContainsFunc(errs, func(err error) bool { return strings.Contains(err.Error(), h.want) }) {
				t.Errorf("errors %v, want one containing %q", errs, h.want)
			}
			// The race detector moves allocations to the heap; the bound
			// is checked without it.
			if n > limit && raceSlowdown == 1 {
				t.Errorf("allocated %d bytes for %d bytes of input, limit %d", n, h.size(), limit)
			}
			if el > 5*time.Second*raceSlowdown {
				t.Errorf("took %v", el)
			}
		})
	}
}
