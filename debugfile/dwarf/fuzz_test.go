package dwarf_test

import (
	"testing"

	"github.com/backtrail/backtrail/debugfile/dwarf"
)

// FuzzReadUnit fuzzes .debug_info, .debug_abbrev and .debug_str together,
// plus one more input that serves as every section indexed or pointed to
// from entries (.debug_str_offsets, .debug_addr, .debug_ranges,
// .debug_rnglists, .debug_aranges). Seeds are the sections of the
// committed binaries in testdata/tiny (a few KB each) and some hand-built
// units. Beyond not panicking, exercise checks that every subroutine's
// ranges lie within SubRanges, that parents come before children, that
// unit bounds and UnitRanges are ordered, and that errors name a section
// and an offset.
func FuzzReadUnit(f *testing.F) {
	for _, name := range tinyFiles {
		s, big := loadSections(f, tinyPath(name))
		for _, aux := range [][]byte{s.StrOffsets, s.Addr, s.Ranges, s.RngLists, s.Aranges} {
			if len(aux) > 0 {
				f.Add(s.Info, s.Abbrev, s.Str, aux, big)
			}
		}
	}
	for _, sib := range []int64{0, -20} {
		info, abbrev := siblingUnit(dwarf.DW_TAG_structure_type, sib)
		f.Add(info, abbrev, []byte(nil), []byte(nil), false)
	}
	s, _ := refGraph([]refNode{{origin: 1, spec: 2}, {name: "a", origin: 0, spec: -1}, {linkage: "_Z1bv", origin: -1, spec: 1}})
	f.Add(s.Info, s.Abbrev, []byte(nil), []byte(nil), false)

	f.Fuzz(func(t *testing.T, info, abbrev, str, aux []byte, big bool) {
		s := dwarf.Sections{Info: info, Abbrev: abbrev, Str: str,
			StrOffsets: aux, Addr: aux, Ranges: aux, RngLists: aux, Aranges: aux}
		exercise(t, s, big)
	})
}

// FuzzLineTable fuzzes .debug_line (and .debug_line_str and .debug_str,
// given the same bytes) under a DWARF 5 unit whose DW_AT_stmt_list is 0.
// Seeds are the line tables of the committed binaries. Beyond not
// panicking, exercise checks that there are no more rows than program
// bytes, since every row takes at least one opcode.
func FuzzLineTable(f *testing.F) {
	for _, name := range tinyFiles {
		s, _ := loadSections(f, tinyPath(name))
		f.Add(s.Line, s.LineStr)
	}
	vliw := &asm{}
	vliw.lineProgram(lineHeader{version: 4, minInst: 8, maxOps: 3, lineBase: 0, lineRange: 4, opcodeBase: 13}, func(a *asm) {
		a.setAddress(0x100, 8).u8(17).advancePC(7).u8(dwarf.DW_LNS_const_add_pc).endSequence()
	})
	f.Add(vliw.b, []byte(nil))
	info, abbrev := lineUnit()
	f.Fuzz(func(t *testing.T, line, lineStr []byte) {
		exercise(t, dwarf.Sections{Info: info, Abbrev: abbrev, Line: line, LineStr: lineStr, Str: lineStr}, false)
	})
}
