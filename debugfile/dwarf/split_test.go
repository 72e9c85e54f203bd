package dwarf_test

import (
	"encoding/binary"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/backtrail/backtrail/debugfile/dwarf"
)

const splitID = 0x1122334455667788

// splitPair builds a skeleton unit of DWARF version v (5, or 4 with the GNU
// extension) in main, and its split unit in dwo: outer at 0x1000–0x1080
// with inner inlined in two pieces, 0x1010–0x1020 and 0x1030–0x1040, whose
// range list and addresses use the skeleton's bases.
func splitPair(v uint16) (main, dwo dwarf.Sections) {
	const (
		abSkel = iota + 1
		abSplitCU
		abInner
		abOuter
		abCall
	)
	strForm, addrForm, rangesForm := dwarf.DW_FORM_strx1, dwarf.DW_FORM_addrx, dwarf.DW_FORM_rnglistx
	if v < 5 {
		strForm, addrForm, rangesForm = dwarf.DW_FORM_GNU_str_index, dwarf.DW_FORM_GNU_addr_index, dwarf.DW_FORM_sec_offset
	}
	var skel decl
	if v >= 5 {
		skel = decl{abSkel, dwarf.DW_TAG_skeleton_unit, false, []attr{
			{dwarf.DW_AT_low_pc, dwarf.DW_FORM_addrx, 0}, {dwarf.DW_AT_high_pc, dwarf.DW_FORM_data4, 0},
			{dwarf.DW_AT_addr_base, dwarf.DW_FORM_sec_offset, 0},
			{dwarf.DW_AT_dwo_name, dwarf.DW_FORM_string, 0}, {dwarf.DW_AT_comp_dir, dwarf.DW_FORM_string, 0},
		}}
	} else {
		skel = decl{abSkel, dwarf.DW_TAG_compile_unit, false, []attr{
			{dwarf.DW_AT_low_pc, dwarf.DW_FORM_addr, 0}, {dwarf.DW_AT_high_pc, dwarf.DW_FORM_data4, 0},
			{dwarf.DW_AT_GNU_dwo_id, dwarf.DW_FORM_data8, 0},
			{dwarf.DW_AT_GNU_addr_base, dwarf.DW_FORM_sec_offset, 0}, {dwarf.DW_AT_GNU_ranges_base, dwarf.DW_FORM_sec_offset, 0},
			{dwarf.DW_AT_GNU_dwo_name, dwarf.DW_FORM_string, 0}, {dwarf.DW_AT_comp_dir, dwarf.DW_FORM_string, 0},
		}}
	}
	info := &asm{}
	info.unit(unitHeader{version: v, unitType: dwarf.DW_UT_skeleton, addrSize: 8, dwoID: splitID}, func(a *asm) {
		if v >= 5 {
			a.uleb(abSkel).uleb(0).u32(0x100).u32(8).str("x.dwo").str("/build")
		} else {
			a.uleb(abSkel).u64(0x1000).u32(0x100).u64(splitID).u32(0).u32(16).str("x.dwo").str("/build")
		}
	})
	main = dwarf.Sections{Info: info.b, Abbrev: (&asm{}).abbrevs(skel).b}
	addrs := &asm{}
	if v >= 5 {
		addrs.u32(4 + 8).u16(5).u8(8).u8(0) // header: length, version, address size, segment size
	}
	addrs.u64(0x1000)
	main.Addr = addrs.b
	if v < 5 {
		// 16 bytes of another unit's lists, then the split unit's, at
		// the skeleton's DW_AT_GNU_ranges_base, relative to its base.
		main.Ranges = (&asm{}).u64(1).u64(2).u64(0x10).u64(0x20).u64(0x30).u64(0x40).u64(0).u64(0).b
	}

	// The GNU extension's split root names the id too.
	rootAttrs := []attr{{dwarf.DW_AT_name, strForm, 0}, {dwarf.DW_AT_producer, strForm, 0}, {dwarf.DW_AT_language, dwarf.DW_FORM_data1, 0}}
	if v < 5 {
		rootAttrs = append(rootAttrs, attr{dwarf.DW_AT_GNU_dwo_id, dwarf.DW_FORM_data8, 0})
	}
	dwoAbbrev := (&asm{}).abbrevs(
		decl{abSplitCU, dwarf.DW_TAG_compile_unit, true, rootAttrs},
		decl{abInner, dwarf.DW_TAG_subprogram, false, []attr{
			{dwarf.DW_AT_name, strForm, 0}, {dwarf.DW_AT_decl_file, dwarf.DW_FORM_data1, 0}, {dwarf.DW_AT_decl_line, dwarf.DW_FORM_data1, 0},
		}},
		decl{abOuter, dwarf.DW_TAG_subprogram, true, []attr{
			{dwarf.DW_AT_name, strForm, 0}, {dwarf.DW_AT_low_pc, addrForm, 0}, {dwarf.DW_AT_high_pc, dwarf.DW_FORM_data4, 0},
		}},
		decl{abCall, dwarf.DW_TAG_inlined_subroutine, false, []attr{
			{dwarf.DW_AT_abstract_origin, dwarf.DW_FORM_ref4, 0}, {dwarf.DW_AT_ranges, rangesForm, 0},
			{dwarf.DW_AT_call_file, dwarf.DW_FORM_data1, 0}, {dwarf.DW_AT_call_line, dwarf.DW_FORM_data1, 0},
		}},
	)
	dinfo := &asm{}
	dinfo.unit(unitHeader{version: v, unitType: dwarf.DW_UT_split_compile, addrSize: 8, dwoID: splitID}, func(a *asm) {
		a.uleb(abSplitCU).uleb(0).uleb(1).u8(0x0c)
		if v < 5 {
			a.u64(splitID)
		}
		inner := uint64(len(a.b)) // the unit starts at 0: ref4 offsets are absolute
		a.uleb(abInner).uleb(2).u8(1).u8(3)
		a.uleb(abOuter).uleb(3).uleb(0).u32(0x80)
		a.uleb(abCall).u32(uint32(inner))
		if v < 5 {
			a.u32(0) // sec_offset, from the skeleton's ranges base
		} else {
			a.uleb(0) // rnglistx
		}
		a.u8(1).u8(7)
		a.u8(0).u8(0) // ends outer's children, then the unit's
	})
	str := "x.c\x00prod\x00inner\x00outer\x00"
	offs := &asm{}
	if v >= 5 {
		offs.u32(4 + 4*4).u16(5).u16(0)
	}
	offs.u32(0).u32(4).u32(9).u32(15)
	dwo = dwarf.Sections{Info: dinfo.b, Abbrev: dwoAbbrev.b, Str: []byte(str), StrOffsets: offs.b}
	if v >= 5 {
		// Header, one offset, then the list of two offset pairs.
		rl := &asm{}
		rl.u32(2 + 1 + 1 + 4 + 4 + 7).u16(5).u8(8).u8(0).u32(1).u32(4)
		rl.u8(dwarf.DW_RLE_offset_pair).uleb(0x10).uleb(0x20).u8(dwarf.DW_RLE_offset_pair).uleb(0x30).uleb(0x40).u8(dwarf.DW_RLE_end_of_list)
		dwo.RngLists = rl.b
	}
	return main, dwo
}

var splitWant = []subWant{
	{name: "outer", lowPC: 0x1000, hasLow: true, ranges: []dwarf.Range{{0x1000, 0x1080}}, parent: -1},
	{name: "inner", inlined: true, ranges: []dwarf.Range{{0x1010, 0x1020}, {0x1030, 0x1040}}, parent: 0, call: [3]uint32{1, 7, 0}},
}

// TestSplitUnit reads a skeleton's entries from its split unit, in a .dwo
// file and in a package, with the bases split DWARF defines: indexed
// addresses and (GNU) range lists in the binary, relative to the
// skeleton's bases; string offsets and (DWARF 5) range lists in the split
// file, from the start of its contribution.
func TestSplitUnit(t *testing.T) {
	for _, v := range []uint16{4, 5} {
		main, dwo := splitPair(v)
		pkg, err := dwarf.NewPackage(dwo, cuIndex(v, dwo, splitID), false)
		if err != nil {
			t.Fatalf("v%d: NewPackage: %v", v, err)
		}
		for _, from := range []string{"dwo", "dwp"} {
			d := mustNew(t, main)
			var asked []dwarf.Skeleton
			d.SetSplitLoader(func(s dwarf.Skeleton) (*dwarf.Data, error) {
				asked = append(asked, s)
				sec := dwo
				if from == "dwp" {
					var ok bool
					if sec, ok = pkg.Unit(s.ID); !ok {
						t.Fatalf("v%d: no unit %#x in the package", v, s.ID)
					}
				}
				return d.Split(sec)
			})
			ui := readUnit(t, d, 0)
			if len(asked) != 1 || asked[0] != (dwarf.Skeleton{DWOName: "x.dwo", CompDir: "/build", ID: splitID}) {
				t.Errorf("v%d %s: loader asked for %+v", v, from, asked)
			}
			if !ui.Split || string(ui.Name) != "x.c" || string(ui.Producer) != "prod" || ui.Language != 0x0c {
				t.Errorf("v%d %s: split %v, name %q, producer %q, language %#x", v, from, ui.Split, ui.Name, ui.Producer, ui.Language)
			}
			if len(ui.Ranges) != 1 || ui.Ranges[0] != (dwarf.Range{Lo: 0x1000, Hi: 0x1100}) {
				t.Errorf("v%d %s: unit ranges %v, want the skeleton's", v, from, ui.Ranges)
			}
			checkSubs(t, ui, splitWant)
			// The declaration's file index is into the skeleton's line
			// table: the split unit has none.
			if file, line, unit, ok := ui.SubroutineDecl(1); !ok || file != 1 || line != 3 || unit != &d.Units()[0] {
				t.Errorf("v%d %s: inner declared at file %d line %d of unit %p, ok %v; want 1, 3, the skeleton", v, from, file, line, unit, ok)
			}
		}
	}
}

// TestSplitUnitMissing reads a skeleton alone, without error, when there is
// no loader, the loader fails, or its split DWARF has no unit of that id.
func TestSplitUnitMissing(t *testing.T) {
	main, dwo := splitPair(5)
	wrongID := append([]byte(nil), dwo.Info...)
	binary.LittleEndian.PutUint64(wrongID[12:], splitID+1)
	for name, load := range map[string]func(d *dwarf.Data) dwarf.SplitLoader{
		"no-loader": nil,
		"error": func(*dwarf.Data) dwarf.SplitLoader {
			return func(dwarf.Skeleton) (*dwarf.Data, error) { return nil, errors.New("gone") }
		},
		"nil": func(*dwarf.Data) dwarf.SplitLoader {
			return func(dwarf.Skeleton) (*dwarf.Data, error) { return nil, nil }
		},
		"other-id": func(d *dwarf.Data) dwarf.SplitLoader {
			return func(dwarf.Skeleton) (*dwarf.Data, error) {
				s := dwo
				s.Info = wrongID
				return d.Split(s)
			}
		},
	} {
		d := mustNew(t, main)
		if load != nil {
			d.SetSplitLoader(load(d))
		}
		ui := readUnit(t, d, 0)
		if ui.Split || len(ui.Subroutines) != 0 || len(ui.Ranges) != 1 {
			t.Errorf("%s: split %v, %d subroutines, ranges %v; want the skeleton alone", name, ui.Split, len(ui.Subroutines), ui.Ranges)
		}
	}
}

// cuIndex builds a .debug_cu_index (version 5 for DWARF 5 sections, the
// GNU version 2 before) with one unit, id, contributing all of s.
func cuIndex(v uint16, s dwarf.Sections, id uint64) []byte {
	type sect struct {
		id   uint32
		size int
	}
	sects := []sect{{1, len(s.Info)}, {3, len(s.Abbrev)}, {6, len(s.StrOffsets)}}
	version := uint32(2)
	if v >= 5 {
		version = 5
		sects = append(sects, sect{8, len(s.RngLists)})
	}
	le := binary.LittleEndian
	b := le.AppendUint32(nil, version)
	b = le.AppendUint32(b, uint32(len(sects)))
	b = le.AppendUint32(b, 1) // units
	b = le.AppendUint32(b, 2) // slots
	b = le.AppendUint64(b, id)
	b = le.AppendUint64(b, 0)
	b = le.AppendUint32(b, 1) // row 1
	b = le.AppendUint32(b, 0)
	for _, x := range sects {
		b = le.AppendUint32(b, x.id)
	}
	for range sects {
		b = le.AppendUint32(b, 0) // offsets
	}
	for _, x := range sects {
		b = le.AppendUint32(b, uint32(x.size))
	}
	return b
}

// TestPackageHostile gives NewPackage indexes that lie: each fails with an
// error naming the index, and none allocates by what it claims.
func TestPackageHostile(t *testing.T) {
	_, dwo := splitPair(5)
	good := cuIndex(5, dwo, splitID)
	le := binary.LittleEndian
	with := func(off int, v uint32) []byte {
		b := append([]byte(nil), good...)
		le.PutUint32(b[off:], v)
		return b
	}
	// Layout: header 16, hashes 16, rows 8, section ids 16, offsets 16, sizes 16.
	for name, index := range map[string][]byte{
		"empty":            nil,
		"truncated":        good[:len(good)-1],
		"version 3":        with(0, 3),
		"slots past end":   with(12, 1<<30),
		"units past end":   with(8, 1<<30),
		"many sections":    with(4, 1<<20),
		"row past units":   with(32, 2),
		"offset past end":  with(56, uint32(len(dwo.Info))),
		"size past end":    with(72, uint32(len(dwo.Info)+1)),
		"wrapping size":    with(72, 0xffffffff),
		"abbrev past end":  with(76, uint32(len(dwo.Abbrev)+1)),
		"offset+size wrap": with(60, 0xfffffff0),
	} {
		_, err := dwarf.NewPackage(dwo, index, false)
		if err == nil || !strings.Contains(err.Error(), ".debug_cu_index") {
			t.Errorf("%s: error %v, want one naming .debug_cu_index", name, err)
		}
	}
	if p, err := dwarf.NewPackage(dwo, good, false); err != nil || p.Len() != 1 {
		t.Fatalf("the good index: %v", err)
	}
}

// FuzzSplit fuzzes split units and package indexes: the split file's
// .debug_info.dwo, .debug_abbrev.dwo and one input serving as its strings,
// string offsets and range lists (and as the binary's addresses and range
// lists), read through the skeletons of both kinds, from the file and
// through a fuzzed index. Beyond not panicking, exercise's checks hold for
// what the skeleton reads.
func FuzzSplit(f *testing.F) {
	for _, v := range []uint16{4, 5} {
		_, dwo := splitPair(v)
		aux := append(append(append([]byte(nil), dwo.Str...), dwo.StrOffsets...), dwo.RngLists...)
		f.Add(cuIndex(v, dwo, splitID), dwo.Info, dwo.Abbrev, aux, uint8(v))
	}
	f.Fuzz(func(t *testing.T, index, info, abbrev, aux []byte, v uint8) {
		main, _ := splitPair(4 + uint16(v&1))
		main.Addr, main.Ranges = aux, aux
		dwo := dwarf.Sections{Info: info, Abbrev: abbrev, Str: aux, StrOffsets: aux, RngLists: aux}
		if p, err := dwarf.NewPackage(dwo, index, false); err == nil {
			if s, ok := p.Unit(splitID); ok {
				dwo = s
			}
		}
		d := mustNew(t, main)
		d.SetSplitLoader(func(dwarf.Skeleton) (*dwarf.Data, error) { return d.Split(dwo) })
		var ui dwarf.UnitInfo
		if err := d.ReadUnit(&d.Units()[0], &ui); err == nil {
			checkUnitInfo(t, &ui)
		}
	})
}

// TestSplitUnitCorrupt reads a skeleton whose split unit is malformed, in
// its root or in its entries: the error names the split file and the
// failing place in it, and the unit is not passed off as complete.
func TestSplitUnitCorrupt(t *testing.T) {
	main, dwo := splitPair(5)
	// The split unit's header is 20 bytes, its root entry 4.
	for name, at := range map[string]int{"root": 20, "entries": 24} {
		bad := dwo
		bad.Info = slices.Clone(dwo.Info)
		bad.Info[at] = 0x7f // no such abbreviation
		d := mustNew(t, main)
		d.SetSplitLoader(func(dwarf.Skeleton) (*dwarf.Data, error) { return d.Split(bad) })
		var ui dwarf.UnitInfo
		err := d.ReadUnit(&d.Units()[0], &ui)
		if err == nil || !strings.Contains(err.Error(), "x.dwo") || !strings.Contains(err.Error(), "abbreviation code 127") {
			t.Errorf("%s: ReadUnit error %v, want one naming x.dwo and the bad code", name, err)
		}
		if err := d.ReadRoot(&d.Units()[0], &ui); (err != nil) != (name == "root") {
			t.Errorf("%s: ReadRoot error %v", name, err)
		}
	}
}
