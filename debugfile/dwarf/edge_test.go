package dwarf_test

// Hand-built inputs for what real compilers rarely or never emit. Each input
// is assembled by asm_test.go; expected values come from the DWARF 5
// standard (and DWARF 2–4 for the older headers), not from another reader.

import (
	"encoding/binary"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/backtrail/backtrail/debugfile/dwarf"
)

// Abbreviation codes shared by several tests.
const (
	abCU = iota + 1
	abSub
	abInl
	abStruct
	abMember
)

type subWant struct {
	name    string
	linkage bool
	lowPC   uint64
	hasLow  bool
	ranges  []dwarf.Range
	parent  int32
	inlined bool
	call    [3]uint32 // file, line, column
}

// checkSubs compares ui's subroutines with want, field by field.
func checkSubs(t *testing.T, ui *dwarf.UnitInfo, want []subWant) {
	t.Helper()
	if len(ui.Subroutines) != len(want) {
		for i := range ui.Subroutines {
			n, _ := ui.SubroutineName(i)
			t.Logf("have %d: %+v name %q", i, ui.Subroutines[i], n)
		}
		t.Fatalf("%d subroutines, want %d", len(ui.Subroutines), len(want))
	}
	for i, w := range want {
		s := ui.Subroutines[i]
		name, linkage := ui.SubroutineName(i)
		rs := ui.SubRanges[s.Ranges[0]:s.Ranges[1]]
		if len(rs) == 0 {
			rs = nil
		}
		have := subWant{name: string(name), linkage: linkage, lowPC: s.LowPC, hasLow: s.HasLowPC, ranges: rs,
			parent: s.Parent, inlined: s.Inlined, call: [3]uint32{uint32(s.CallFile), s.CallLine, s.CallColumn}}
		if !reflect.DeepEqual(have, w) {
			t.Errorf("subroutine %d at %#x:\nhave %+v\nwant %+v", i, s.Offset, have, w)
		}
	}
}

func readUnit(t *testing.T, d *dwarf.Data, i int) *dwarf.UnitInfo {
	t.Helper()
	var ui dwarf.UnitInfo
	if err := d.ReadUnit(&d.Units()[i], &ui); err != nil {
		t.Fatalf("ReadUnit(%d): %v", i, err)
	}
	return &ui
}

// TestUnitHeaders reads one section holding units of every version, both
// offset sizes, both address sizes and both byte orders' worth of layouts,
// all sharing one abbreviation table whose sizes differ per unit format.
func TestUnitHeaders(t *testing.T) {
	type hdr struct {
		version  uint16
		dwarf64  bool
		addrSize uint8
	}
	hdrs := []hdr{
		{2, false, 4}, {2, false, 8}, {3, false, 4}, {3, true, 8}, {4, false, 8},
		{4, true, 8}, {5, false, 4}, {5, false, 8}, {5, true, 8},
	}
	for _, big := range []bool{false, true} {
		t.Run(fmt.Sprintf("big=%v", big), func(t *testing.T) {
			ab := &asm{}
			ab.abbrevs(
				decl{abCU, dwarf.DW_TAG_compile_unit, true, []attr{
					{dwarf.DW_AT_name, dwarf.DW_FORM_string, 0},
					{dwarf.DW_AT_low_pc, dwarf.DW_FORM_addr, 0},
					{dwarf.DW_AT_high_pc, dwarf.DW_FORM_addr, 0},
					{dwarf.DW_AT_stmt_list, dwarf.DW_FORM_data4, 0},
				}},
				decl{abSub, dwarf.DW_TAG_subprogram, false, []attr{
					{dwarf.DW_AT_name, dwarf.DW_FORM_strp, 0},
					{dwarf.DW_AT_low_pc, dwarf.DW_FORM_addr, 0},
					{dwarf.DW_AT_high_pc, dwarf.DW_FORM_addr, 0},
				}},
			)
			str := []byte("\x00func\x00")
			info := &asm{big: big}
			var offs []uint64
			for i, h := range hdrs {
				info.dwarf64 = h.dwarf64
				base := uint64(0x1000 * (i + 1))
				offs = append(offs, info.unit(unitHeader{version: h.version, addrSize: h.addrSize}, func(a *asm) {
					a.uleb(abCU).str(fmt.Sprintf("cu%d", i)).uint(base, int(h.addrSize)).uint(base+0x100, int(h.addrSize)).u32(0)
					a.uleb(abSub).off(1).uint(base+0x10, int(h.addrSize)).uint(base+0x20, int(h.addrSize))
					a.u8(0)
				}))
			}
			d, err := dwarf.New(dwarf.Sections{Info: info.b, Abbrev: ab.b, Str: str}, big)
			if err != nil {
				t.Fatal(err)
			}
			units := d.Units()
			if len(units) != len(hdrs) {
				t.Fatalf("%d units, want %d", len(units), len(hdrs))
			}
			for i, h := range hdrs {
				u := &units[i]
				end := uint64(len(info.b))
				if i+1 < len(offs) {
					end = offs[i+1]
				}
				if u.Offset != offs[i] || u.End != end || u.Version != h.version || u.AddrSize != h.addrSize ||
					u.Dwarf64 != h.dwarf64 || u.Type != dwarf.DW_UT_compile {
					t.Errorf("unit %d: have %+v, want offset %#x end %#x %+v", i, *u, offs[i], end, h)
				}
				ui := readUnit(t, d, i)
				base := uint64(0x1000 * (i + 1))
				if string(ui.Name) != fmt.Sprintf("cu%d", i) || !reflect.DeepEqual(ui.Ranges, []dwarf.Range{{base, base + 0x100}}) || !ui.HasStmtList {
					t.Errorf("unit %d: name %q ranges %v stmt %v", i, ui.Name, ui.Ranges, ui.HasStmtList)
				}
				checkSubs(t, ui, []subWant{{name: "func", lowPC: base + 0x10, hasLow: true, ranges: []dwarf.Range{{base + 0x10, base + 0x20}}, parent: -1}})
			}
		})
	}
}

// TestUnitTypes checks the DWARF 5 header variants with extra fields.
func TestUnitTypes(t *testing.T) {
	ab := (&asm{}).abbrevs(decl{abCU, dwarf.DW_TAG_compile_unit, false, []attr{{dwarf.DW_AT_name, dwarf.DW_FORM_string, 0}}})
	info := &asm{}
	types := []uint8{dwarf.DW_UT_compile, dwarf.DW_UT_type, dwarf.DW_UT_partial, dwarf.DW_UT_skeleton, dwarf.DW_UT_split_compile, dwarf.DW_UT_split_type}
	for _, ut := range types {
		info.unit(unitHeader{version: 5, unitType: ut, addrSize: 8, dwoID: 0xabcdef}, func(a *asm) {
			a.uleb(abCU).str(fmt.Sprint("unit", ut))
		})
	}
	d := mustNew(t, dwarf.Sections{Info: info.b, Abbrev: ab.b})
	for i, ut := range types {
		u := d.Units()[i]
		wantID := uint64(0)
		if ut == dwarf.DW_UT_skeleton || ut == dwarf.DW_UT_split_compile {
			wantID = 0xabcdef
		}
		if u.Type != ut || u.DWOID != wantID {
			t.Errorf("unit %d: type %d dwo id %#x, want %d %#x", i, u.Type, u.DWOID, ut, wantID)
		}
		if ui := readUnit(t, d, i); string(ui.Name) != fmt.Sprint("unit", ut) {
			t.Errorf("unit %d: name %q", i, ui.Name)
		}
	}
}

func TestBadUnitHeaders(t *testing.T) {
	for _, tt := range []struct {
		name string
		info []byte
		want string
	}{
		{"reserved length", []byte{0xf0, 0xff, 0xff, 0xff, 0, 0}, "decoding .debug_info at offset 0x0: reserved unit length 0xfffffff0"},
		{"length past end", []byte{0x20, 0, 0, 0, 4, 0}, "decoding .debug_info at offset 0x0: unit length 0x20 exceeds section"},
		{"version 1", []byte{7, 0, 0, 0, 1, 0, 0, 0, 0, 0, 8}, "decoding .debug_info at offset 0x0: unsupported DWARF version 1"},
		{"version 6", []byte{8, 0, 0, 0, 6, 0, 1, 8, 0, 0, 0, 0}, "unsupported DWARF version 6"},
		{"address size 3", []byte{7, 0, 0, 0, 4, 0, 0, 0, 0, 0, 3}, "unsupported address size 3"},
		{"header past unit", []byte{3, 0, 0, 0, 4, 0, 0, 0, 0, 0, 8}, "decoding .debug_info at offset 0x"},
		{"truncated 64-bit length", []byte{0xff, 0xff, 0xff, 0xff, 1, 0}, "decoding .debug_info at offset 0x0"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := dwarf.New(dwarf.Sections{Info: tt.info}, false)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("New(% x) = %v, want error containing %q", tt.info, err, tt.want)
			}
		})
	}
}

// TestIndirectForm reads attributes whose form comes from the entry
// (DW_FORM_indirect), both for attributes the reader decodes and for
// attributes it skips.
func TestIndirectForm(t *testing.T) {
	ind := dwarf.DW_FORM_indirect
	ab := (&asm{}).abbrevs(
		decl{abCU, dwarf.DW_TAG_compile_unit, true, []attr{{dwarf.DW_AT_name, ind, 0}}},
		decl{abSub, dwarf.DW_TAG_subprogram, false, []attr{
			{dwarf.DW_AT_name, ind, 0},
			{0x3e /* DW_AT_type-ish, unread */, ind, 0},
			{dwarf.DW_AT_low_pc, ind, 0},
			{dwarf.DW_AT_high_pc, ind, 0},
			{dwarf.DW_AT_call_line, ind, 0},
		}},
		decl{abStruct, dwarf.DW_TAG_structure_type, false, []attr{{dwarf.DW_AT_name, ind, 0}, {0x0b, ind, 0}}},
	)
	info := &asm{}
	info.unit(unitHeader{version: 4, addrSize: 8}, func(a *asm) {
		a.uleb(abCU).uleb(uint64(dwarf.DW_FORM_string)).str("cu")
		a.uleb(abStruct).uleb(uint64(dwarf.DW_FORM_block1)).u8(3).raw(1, 2, 3).uleb(uint64(dwarf.DW_FORM_udata)).uleb(1 << 40)
		a.uleb(abSub).
			uleb(uint64(dwarf.DW_FORM_strp)).u32(1).
			uleb(uint64(dwarf.DW_FORM_exprloc)).uleb(2).raw(0x9c, 0x9c).
			uleb(uint64(dwarf.DW_FORM_addr)).u64(0x4000).
			uleb(uint64(dwarf.DW_FORM_data2)).u16(0x40).
			uleb(uint64(dwarf.DW_FORM_sdata)).sleb(77)
		a.u8(0)
	})
	d := mustNew(t, dwarf.Sections{Info: info.b, Abbrev: ab.b, Str: []byte("\x00indirect\x00")})
	ui := readUnit(t, d, 0)
	if string(ui.Name) != "cu" {
		t.Errorf("unit name %q", ui.Name)
	}
	checkSubs(t, ui, []subWant{{name: "indirect", lowPC: 0x4000, hasLow: true, ranges: []dwarf.Range{{0x4000, 0x4040}}, parent: -1, call: [3]uint32{0, 77, 0}}})

	// An indirect form naming DW_FORM_indirect again, or an unknown form,
	// is an error that names the offset.
	for _, form := range []uint64{uint64(ind), 0x7f, 0x1_0000} {
		info := &asm{}
		info.unit(unitHeader{version: 4, addrSize: 8}, func(a *asm) {
			a.uleb(abCU).uleb(uint64(dwarf.DW_FORM_string)).str("cu")
			a.uleb(abSub).uleb(form).u8(0)
		})
		d := mustNew(t, dwarf.Sections{Info: info.b, Abbrev: ab.b})
		var ui dwarf.UnitInfo
		err := d.ReadUnit(&d.Units()[0], &ui)
		if err == nil || !strings.Contains(err.Error(), ".debug_info at offset 0x") || !strings.Contains(err.Error(), "indirect form") {
			t.Errorf("indirect form %#x: err = %v", form, err)
		}
	}
}

// TestImplicitConst reads values stored in the abbreviation.
func TestImplicitConst(t *testing.T) {
	ic := dwarf.DW_FORM_implicit_const
	ab := (&asm{}).abbrevs(
		decl{abCU, dwarf.DW_TAG_compile_unit, true, []attr{{dwarf.DW_AT_name, dwarf.DW_FORM_string, 0}}},
		decl{abSub, dwarf.DW_TAG_subprogram, true, []attr{
			{dwarf.DW_AT_name, dwarf.DW_FORM_string, 0},
			{dwarf.DW_AT_decl_file, ic, 3},
			{dwarf.DW_AT_decl_line, ic, -1}, // stored as is; read as unsigned
			{dwarf.DW_AT_low_pc, dwarf.DW_FORM_addr, 0},
			{dwarf.DW_AT_high_pc, ic, 0x30},
		}},
		decl{abInl, dwarf.DW_TAG_inlined_subroutine, false, []attr{
			{dwarf.DW_AT_abstract_origin, dwarf.DW_FORM_ref4, 0},
			{dwarf.DW_AT_call_file, ic, 2},
			{dwarf.DW_AT_call_line, ic, 1234},
			{dwarf.DW_AT_call_column, ic, 7},
			{dwarf.DW_AT_low_pc, dwarf.DW_FORM_addr, 0},
			{dwarf.DW_AT_high_pc, dwarf.DW_FORM_data1, 0},
		}},
	)
	info := &asm{}
	info.unit(unitHeader{version: 5, addrSize: 8}, func(a *asm) {
		a.uleb(abCU).str("cu")
		sub := uint64(len(a.b))
		a.uleb(abSub).str("outer").u64(0x1000)
		a.uleb(abInl).u32(uint32(sub)).u64(0x1004).u8(8)
		a.u8(0).u8(0)
	})
	d := mustNew(t, dwarf.Sections{Info: info.b, Abbrev: ab.b})
	ui := readUnit(t, d, 0)
	checkSubs(t, ui, []subWant{
		{name: "outer", lowPC: 0x1000, hasLow: true, ranges: []dwarf.Range{{0x1000, 0x1030}}, parent: -1},
		{name: "outer", lowPC: 0x1004, hasLow: true, ranges: []dwarf.Range{{0x1004, 0x100c}}, parent: 0, inlined: true, call: [3]uint32{2, 1234, 7}},
	})
	file, line, unit, ok := ui.SubroutineDecl(1)
	if file != 3 || line != 0xffffffff || unit != &d.Units()[0] || !ok {
		t.Errorf("SubroutineDecl(1) = %d, %d, %p, %v; want 3, 0xffffffff, unit 0, true", file, line, unit, ok)
	}
}

// indexedSections builds a DWARF 5 unit whose names and addresses are all
// indexed (strx*, addrx*), with bases that skip a first contribution, and
// the side tables they index.
func TestIndexedForms(t *testing.T) {
	strForms := []dwarf.Form{dwarf.DW_FORM_strx1, dwarf.DW_FORM_strx2, dwarf.DW_FORM_strx3, dwarf.DW_FORM_strx4, dwarf.DW_FORM_strx}
	addrForms := []dwarf.Form{dwarf.DW_FORM_addrx1, dwarf.DW_FORM_addrx2, dwarf.DW_FORM_addrx3, dwarf.DW_FORM_addrx4, dwarf.DW_FORM_addrx}
	for _, dwarf64 := range []bool{false, true} {
		t.Run(fmt.Sprintf("dwarf64=%v", dwarf64), func(t *testing.T) {
			decls := []decl{{abCU, dwarf.DW_TAG_compile_unit, true, []attr{
				{dwarf.DW_AT_str_offsets_base, dwarf.DW_FORM_sec_offset, 0},
				{dwarf.DW_AT_addr_base, dwarf.DW_FORM_sec_offset, 0},
				{dwarf.DW_AT_name, dwarf.DW_FORM_strx1, 0},
				{dwarf.DW_AT_comp_dir, dwarf.DW_FORM_strx2, 0},
				{dwarf.DW_AT_low_pc, dwarf.DW_FORM_addrx, 0},
				{dwarf.DW_AT_high_pc, dwarf.DW_FORM_data4, 0},
			}}}
			for i := range strForms {
				decls = append(decls, decl{uint64(10 + i), dwarf.DW_TAG_subprogram, false, []attr{
					{dwarf.DW_AT_name, strForms[i], 0},
					{dwarf.DW_AT_low_pc, addrForms[i], 0},
					{dwarf.DW_AT_high_pc, addrForms[(i+1)%len(addrForms)], 0},
				}})
			}
			ab := (&asm{}).abbrevs(decls...)

			// .debug_str: names at known offsets.
			str := &asm{}
			var strOffs []uint64
			for _, s := range []string{"cu.c", "/comp", "f1", "f2", "f3", "f4", "f5"} {
				strOffs = append(strOffs, uint64(len(str.b)))
				str.str(s)
			}
			// .debug_str_offsets: a decoy contribution, then ours. The
			// index of string k is k.
			so := &asm{dwarf64: dwarf64}
			fill := so.length()
			so.u16(5).u16(0).off(0xdead).off(0xdead)
			fill()
			fill = so.length()
			so.u16(5).u16(0)
			strBase := uint64(len(so.b))
			for _, o := range strOffs {
				so.off(o)
			}
			fill()
			// .debug_addr: a decoy contribution, then ours: address k is
			// 0x1000*(k+1).
			ad := &asm{}
			fill = ad.length()
			ad.u16(5).u8(8).u8(0).u64(0xbad)
			fill()
			fill = ad.length()
			ad.u16(5).u8(8).u8(0)
			addrBase := uint64(len(ad.b))
			for k := 0; k < 8; k++ {
				ad.u64(0x1000 * uint64(k+1))
			}
			fill()

			info := &asm{dwarf64: dwarf64}
			info.unit(unitHeader{version: 5, addrSize: 8}, func(a *asm) {
				a.uleb(abCU).off(strBase).off(addrBase).u8(0).u16(1).uleb(0).u32(0x10000)
				for i := range strForms {
					a.uleb(uint64(10 + i))
					idx := uint64(2 + i)
					switch strForms[i] {
					case dwarf.DW_FORM_strx1:
						a.u8(uint8(idx))
					case dwarf.DW_FORM_strx2:
						a.u16(uint16(idx))
					case dwarf.DW_FORM_strx3:
						a.uint(idx, 3)
					case dwarf.DW_FORM_strx4:
						a.u32(uint32(idx))
					default:
						a.uleb(idx)
					}
					for _, j := range []int{i, (i + 1) % len(addrForms)} {
						lo := uint64(j + 1)
						switch addrForms[j] {
						case dwarf.DW_FORM_addrx1:
							a.u8(uint8(lo))
						case dwarf.DW_FORM_addrx2:
							a.u16(uint16(lo))
						case dwarf.DW_FORM_addrx3:
							a.uint(lo, 3)
						case dwarf.DW_FORM_addrx4:
							a.u32(uint32(lo))
						default:
							a.uleb(lo)
						}
					}
				}
				a.u8(0)
			})
			d := mustNew(t, dwarf.Sections{Info: info.b, Abbrev: ab.b, Str: str.b, StrOffsets: so.b, Addr: ad.b})
			ui := readUnit(t, d, 0)
			if string(ui.Name) != "cu.c" || string(ui.CompDir) != "/comp" || !reflect.DeepEqual(ui.Ranges, []dwarf.Range{{0x1000, 0x11000}}) {
				t.Errorf("unit: name %q comp dir %q ranges %v", ui.Name, ui.CompDir, ui.Ranges)
			}
			var want []subWant
			for i := range strForms {
				lo := 0x1000 * uint64(i+2)
				hi := 0x1000 * uint64((i+1)%len(addrForms)+2)
				var rs []dwarf.Range
				rs = append(rs, dwarf.Range{Lo: lo, Hi: hi})
				want = append(want, subWant{name: fmt.Sprintf("f%d", i+1), lowPC: lo, hasLow: true, ranges: rs, parent: -1})
			}
			checkSubs(t, ui, want)
		})
	}
}

// TestIndexedDefaults reads indexed forms in a unit that names no bases:
// DWARF 5 says they then start just past the first contribution's header.
// Indexes beyond the tables give no value rather than an error.
func TestIndexedDefaults(t *testing.T) {
	ab := (&asm{}).abbrevs(
		decl{abCU, dwarf.DW_TAG_compile_unit, true, []attr{{dwarf.DW_AT_name, dwarf.DW_FORM_strx1, 0}}},
		decl{abSub, dwarf.DW_TAG_subprogram, false, []attr{
			{dwarf.DW_AT_name, dwarf.DW_FORM_strx1, 0},
			{dwarf.DW_AT_low_pc, dwarf.DW_FORM_addrx1, 0},
			{dwarf.DW_AT_high_pc, dwarf.DW_FORM_data1, 0},
		}},
	)
	info := &asm{}
	info.unit(unitHeader{version: 5, addrSize: 8}, func(a *asm) {
		a.uleb(abCU).u8(0)
		a.uleb(abSub).u8(1).u8(0).u8(0x10)
		a.uleb(abSub).u8(200).u8(200).u8(0x10) // both indexes out of range
		a.u8(0)
	})
	so := (&asm{}).u32(12).u16(5).u16(0).u32(0).u32(3)
	ad := (&asm{}).u32(12).u16(5).u8(8).u8(0).u64(0x7000)
	d := mustNew(t, dwarf.Sections{Info: info.b, Abbrev: ab.b, Str: []byte("cu\x00sub\x00"), StrOffsets: so.b, Addr: ad.b})
	ui := readUnit(t, d, 0)
	if string(ui.Name) != "cu" {
		t.Errorf("unit name %q", ui.Name)
	}
	checkSubs(t, ui, []subWant{
		{name: "sub", lowPC: 0x7000, hasLow: true, ranges: []dwarf.Range{{0x7000, 0x7010}}, parent: -1},
		{parent: -1},
	})
}

// TestGNUSplitForms reads the pre-DWARF 5 split DWARF extension.
func TestGNUSplitForms(t *testing.T) {
	ab := (&asm{}).abbrevs(
		decl{abCU, dwarf.DW_TAG_compile_unit, true, []attr{
			{dwarf.DW_AT_GNU_addr_base, dwarf.DW_FORM_sec_offset, 0},
			{dwarf.DW_AT_name, dwarf.DW_FORM_GNU_str_index, 0},
		}},
		decl{abSub, dwarf.DW_TAG_subprogram, false, []attr{
			{dwarf.DW_AT_name, dwarf.DW_FORM_GNU_str_index, 0},
			{dwarf.DW_AT_low_pc, dwarf.DW_FORM_GNU_addr_index, 0},
			{dwarf.DW_AT_high_pc, dwarf.DW_FORM_data4, 0},
		}},
	)
	info := &asm{}
	info.unit(unitHeader{version: 4, addrSize: 8}, func(a *asm) {
		a.uleb(abCU).u32(16).uleb(0)
		a.uleb(abSub).uleb(1).uleb(1).u32(0x20)
		a.u8(0)
	})
	// Pre-standard tables have no headers: string offsets start at 0 and
	// the address table at DW_AT_GNU_addr_base.
	so := (&asm{}).u32(0).u32(5)
	ad := (&asm{}).u64(1).u64(2).u64(0x5000).u64(0x6000)
	d := mustNew(t, dwarf.Sections{Info: info.b, Abbrev: ab.b, Str: []byte("a.cc\x00split\x00"), StrOffsets: so.b, Addr: ad.b})
	ui := readUnit(t, d, 0)
	if string(ui.Name) != "a.cc" {
		t.Errorf("unit name %q", ui.Name)
	}
	checkSubs(t, ui, []subWant{{name: "split", lowPC: 0x6000, hasLow: true, ranges: []dwarf.Range{{0x6000, 0x6020}}, parent: -1}})
}

// TestRangeLists reads DWARF 2–4 .debug_ranges lists (with base address
// selection entries) and every DWARF 5 range list entry kind, through
// sec_offset and through DW_FORM_rnglistx with a rnglists base.
func TestRangeLists(t *testing.T) {
	t.Run("debug_ranges", func(t *testing.T) {
		for _, addrSize := range []uint8{4, 8} {
			ab := (&asm{}).abbrevs(
				decl{abCU, dwarf.DW_TAG_compile_unit, true, []attr{
					{dwarf.DW_AT_low_pc, dwarf.DW_FORM_addr, 0},
					{dwarf.DW_AT_ranges, dwarf.DW_FORM_sec_offset, 0},
				}},
				decl{abSub, dwarf.DW_TAG_subprogram, false, []attr{{dwarf.DW_AT_ranges, dwarf.DW_FORM_data4, 0}}},
			)
			n := int(addrSize)
			max := ^uint64(0) >> (64 - 8*n)
			rg := &asm{}
			// List at 0, relative to the unit's base 0x10000.
			rg.uint(0x10, n).uint(0x20, n).uint(0, n).uint(0, n)
			// List at 4n: a base selection entry, then a range from it.
			second := uint64(len(rg.b))
			rg.uint(0x30, n).uint(0x40, n).uint(max, n).uint(0x80000, n).uint(1, n).uint(2, n).uint(0, n).uint(0, n)
			info := &asm{}
			info.unit(unitHeader{version: 4, addrSize: addrSize}, func(a *asm) {
				a.uleb(abCU).uint(0x10000, n).u32(0)
				a.uleb(abSub).u32(uint32(second))
				a.uleb(abSub).u32(0xffff) // beyond the section: no ranges
				a.u8(0)
			})
			d := mustNew(t, dwarf.Sections{Info: info.b, Abbrev: ab.b, Ranges: rg.b})
			ui := readUnit(t, d, 0)
			if want := []dwarf.Range{{0x10010, 0x10020}}; !reflect.DeepEqual(ui.Ranges, want) {
				t.Errorf("addr size %d: unit ranges %v, want %v", n, ui.Ranges, want)
			}
			checkSubs(t, ui, []subWant{
				{ranges: []dwarf.Range{{0x10030, 0x10040}, {0x80001, 0x80002}}, parent: -1},
				{parent: -1},
			})
		}
	})
	t.Run("rnglists", func(t *testing.T) {
		ad := (&asm{}).u32(0x24).u16(5).u8(8).u8(0).u64(0xa000).u64(0xb000).u64(0xc000).u64(0xd000)
		rl := &asm{}
		fill := rl.length()
		rl.u16(5).u8(8).u8(0).u32(2) // two offsets
		base := uint64(len(rl.b))
		rl.u32(0).u32(0) // patched below
		l0 := uint64(len(rl.b))
		rl.u8(dwarf.DW_RLE_offset_pair).uleb(0x10).uleb(0x20) // from the unit base 0x9000
		rl.u8(dwarf.DW_RLE_base_addressx).uleb(1)
		rl.u8(dwarf.DW_RLE_offset_pair).uleb(1).uleb(2)
		rl.u8(dwarf.DW_RLE_startx_endx).uleb(2).uleb(3)
		rl.u8(dwarf.DW_RLE_startx_length).uleb(0).uleb(0x5)
		rl.u8(dwarf.DW_RLE_end_of_list)
		l1 := uint64(len(rl.b))
		rl.u8(dwarf.DW_RLE_base_address).u64(0x100000)
		rl.u8(dwarf.DW_RLE_offset_pair).uleb(0).uleb(1)
		rl.u8(dwarf.DW_RLE_start_end).u64(0x200000).u64(0x200010)
		rl.u8(dwarf.DW_RLE_start_length).u64(0x300000).uleb(0x20)
		rl.u8(dwarf.DW_RLE_startx_endx).uleb(99).uleb(0) // index beyond .debug_addr: dropped
		rl.u8(dwarf.DW_RLE_end_of_list)
		l2 := uint64(len(rl.b))
		rl.u8(dwarf.DW_RLE_start_end).u64(1).u64(2).u8(0x42) // unknown kind ends the list
		fill()
		binary.LittleEndian.PutUint32(rl.b[base:], uint32(l0-base))
		binary.LittleEndian.PutUint32(rl.b[base+4:], uint32(l1-base))

		ab := (&asm{}).abbrevs(
			decl{abCU, dwarf.DW_TAG_compile_unit, true, []attr{
				{dwarf.DW_AT_addr_base, dwarf.DW_FORM_sec_offset, 0},
				{dwarf.DW_AT_rnglists_base, dwarf.DW_FORM_sec_offset, 0},
				{dwarf.DW_AT_low_pc, dwarf.DW_FORM_addr, 0},
			}},
			decl{abSub, dwarf.DW_TAG_subprogram, false, []attr{{dwarf.DW_AT_ranges, dwarf.DW_FORM_rnglistx, 0}}},
			decl{abInl, dwarf.DW_TAG_subprogram, false, []attr{{dwarf.DW_AT_ranges, dwarf.DW_FORM_sec_offset, 0}}},
		)
		info := &asm{}
		info.unit(unitHeader{version: 5, addrSize: 8}, func(a *asm) {
			a.uleb(abCU).u32(8).u32(uint32(base)).u64(0x9000)
			a.uleb(abSub).uleb(0)
			a.uleb(abSub).uleb(1)
			a.uleb(abSub).uleb(2) // index beyond the offset array: no ranges
			a.uleb(abInl).u32(uint32(l2))
			a.u8(0)
		})
		d := mustNew(t, dwarf.Sections{Info: info.b, Abbrev: ab.b, Addr: ad.b, RngLists: rl.b})
		ui := readUnit(t, d, 0)
		checkSubs(t, ui, []subWant{
			{ranges: []dwarf.Range{{0x9010, 0x9020}, {0xb001, 0xb002}, {0xc000, 0xd000}, {0xa000, 0xa005}}, parent: -1},
			{ranges: []dwarf.Range{{0x100000, 0x100001}, {0x200000, 0x200010}, {0x300000, 0x300020}}, parent: -1},
			{parent: -1},
			{ranges: []dwarf.Range{{1, 2}}, parent: -1},
		})
	})
}

// siblingUnit builds a unit with a type entry of the given tag whose
// DW_AT_sibling is sib bytes off the correct value (0: correct) and whose
// children include a subprogram. The reader skips the subprogram exactly
// when it can trust the sibling of a type that holds no code.
func siblingUnit(tag dwarf.Tag, sib int64) (info, abbrev []byte) {
	ab := (&asm{}).abbrevs(
		decl{abCU, dwarf.DW_TAG_compile_unit, true, nil},
		decl{abSub, dwarf.DW_TAG_subprogram, false, []attr{
			{dwarf.DW_AT_name, dwarf.DW_FORM_string, 0},
			{dwarf.DW_AT_low_pc, dwarf.DW_FORM_addr, 0},
			{dwarf.DW_AT_high_pc, dwarf.DW_FORM_data4, 0},
		}},
		decl{abStruct, tag, true, []attr{
			{dwarf.DW_AT_name, dwarf.DW_FORM_string, 0},
			{dwarf.DW_AT_sibling, dwarf.DW_FORM_ref4, 0},
		}},
		decl{abMember, dwarf.DW_TAG_member, false, []attr{{dwarf.DW_AT_name, dwarf.DW_FORM_string, 0}}},
	)
	a := &asm{}
	a.unit(unitHeader{version: 4, addrSize: 8}, func(a *asm) {
		a.uleb(abCU)
		a.uleb(abStruct).str("S")
		at := len(a.b)
		a.u32(0)
		a.uleb(abMember).str("m")
		a.uleb(abSub).str("S::method").u64(0x1000).u32(0x10)
		a.u8(0)
		next := len(a.b)
		a.uleb(abSub).str("after").u64(0x1010).u32(0x10)
		a.u8(0)
		v := uint32(next)
		if sib != 0 {
			v = uint32(int64(next) + sib)
		}
		binary.LittleEndian.PutUint32(a.b[at:], v)
	})
	return a.b, ab.b
}

func TestSibling(t *testing.T) {
	for _, tt := range []struct {
		name string
		sib  int64
		want []string
	}{
		{"valid", 0, []string{"after"}},
		{"backwards", -32, []string{"S::method", "after"}},
		{"onto itself", -34, []string{"S::method", "after"}},
		{"past the unit", 1000, []string{"S::method", "after"}},
		{"just past the unit", 21, []string{"S::method", "after"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			info, abbrev := siblingUnit(dwarf.DW_TAG_enumeration_type, tt.sib)
			d := mustNew(t, dwarf.Sections{Info: info, Abbrev: abbrev})
			ui := readUnit(t, d, 0)
			var have []string
			for i := range ui.Subroutines {
				n, _ := ui.SubroutineName(i)
				have = append(have, string(n))
			}
			if !reflect.DeepEqual(have, tt.want) {
				t.Errorf("sibling %+d: subroutines %q, want %q", tt.sib, have, tt.want)
			}
		})
	}
}

// TestIssueLocalClassMember: gcc -O0 puts the out-of-line code of a
// member function of a function-local class (libstdc++'s
// basic_string::_M_construct::_Guard) inside the class's entry, which has a
// DW_AT_sibling. Jumping over the class lost the function.
func TestIssueLocalClassMember(t *testing.T) {
	for _, tag := range []dwarf.Tag{dwarf.DW_TAG_structure_type, dwarf.DW_TAG_class_type, dwarf.DW_TAG_union_type} {
		info, abbrev := siblingUnit(tag, 0)
		d := mustNew(t, dwarf.Sections{Info: info, Abbrev: abbrev})
		ui := readUnit(t, d, 0)
		var have []string
		for i := range ui.Subroutines {
			n, _ := ui.SubroutineName(i)
			have = append(have, string(n))
		}
		if want := []string{"S::method", "after"}; !reflect.DeepEqual(have, want) {
			t.Errorf("tag %#x: subroutines %q, want %q", tag, have, want)
		}
	}
}

// TestCrossUnitNames names inlined subroutines through DW_FORM_ref_addr
// into another unit whose strings are indexed, so the other unit's bases
// must be read; in DWARF 2 a ref_addr is address-sized.
func TestCrossUnitNames(t *testing.T) {
	for _, tt := range []struct {
		version  uint16
		addrSize uint8
		dwarf64  bool
	}{{2, 4, false}, {2, 8, false}, {3, 8, true}, {4, 8, false}, {5, 8, false}, {5, 8, true}} {
		t.Run(fmt.Sprintf("v%d-addr%d-64=%v", tt.version, tt.addrSize, tt.dwarf64), func(t *testing.T) {
			n := int(tt.addrSize)
			refSize := n
			if tt.version >= 3 {
				refSize = 4
				if tt.dwarf64 {
					refSize = 8
				}
			}
			// Unit 1 (the target) is DWARF 5 with indexed strings.
			ab := (&asm{}).abbrevs(
				decl{abCU, dwarf.DW_TAG_compile_unit, true, []attr{{dwarf.DW_AT_str_offsets_base, dwarf.DW_FORM_sec_offset, 0}}},
				decl{abSub, dwarf.DW_TAG_subprogram, false, []attr{
					{dwarf.DW_AT_name, dwarf.DW_FORM_strx1, 0},
					{dwarf.DW_AT_decl_line, dwarf.DW_FORM_data1, 0},
				}},
				decl{abInl, dwarf.DW_TAG_inlined_subroutine, false, []attr{
					{dwarf.DW_AT_abstract_origin, dwarf.DW_FORM_ref_addr, 0},
					{dwarf.DW_AT_low_pc, dwarf.DW_FORM_addr, 0},
					{dwarf.DW_AT_high_pc, dwarf.DW_FORM_data1, 0},
				}},
			)
			info := &asm{dwarf64: tt.dwarf64}
			var patch []int
			info.unit(unitHeader{version: tt.version, addrSize: tt.addrSize}, func(a *asm) {
				a.uleb(abCU).off(0)
				for _, bad := range []bool{false, true} {
					a.uleb(abInl)
					patch = append(patch, len(a.b))
					a.uint(0, refSize)
					if bad {
						patch[len(patch)-1] = -len(a.b) // marks a reference to nowhere
					}
					a.uint(0x100, n).u8(4)
				}
				a.u8(0)
			})
			info.dwarf64 = false
			var target uint64
			info.unit(unitHeader{version: 5, addrSize: 8}, func(a *asm) {
				a.uleb(abCU).u32(8)
				target = uint64(len(a.b))
				a.uleb(abSub).u8(1).u8(42)
				a.u8(0)
			})
			for _, p := range patch {
				v := target
				if p < 0 {
					p = -p - refSize
					v = uint64(len(info.b)) + 100
				}
				var tmp asm
				tmp.uint(v, refSize)
				copy(info.b[p:], tmp.b)
			}
			so := (&asm{}).u32(12).u16(5).u16(0).u32(0).u32(8)
			d := mustNew(t, dwarf.Sections{Info: info.b, Abbrev: ab.b, Str: []byte("decoy\x00\x00\x00callee\x00"), StrOffsets: so.b})
			ui := readUnit(t, d, 0)
			r := []dwarf.Range{{0x100, 0x104}}
			checkSubs(t, ui, []subWant{
				{name: "callee", lowPC: 0x100, hasLow: true, ranges: r, parent: -1, inlined: true},
				{lowPC: 0x100, hasLow: true, ranges: r, parent: -1, inlined: true},
			})
			if file, line, unit, ok := ui.SubroutineDecl(0); file != 0 || line != 42 || unit != nil || !ok {
				t.Errorf("SubroutineDecl(0) = %d, %d, %v, %v; want 0, 42, nil, true", file, line, unit, ok)
			}
		})
	}
}

// refGraph builds a unit of subprograms that refer to each other through
// DW_AT_abstract_origin and DW_AT_specification. Entry i is described by
// nodes[i]; targets are entry numbers, -1 for none. Every entry owns 16
// bytes of code, so that ReadUnit lists it.
type refNode struct {
	name, linkage string
	origin, spec  int
}

func refGraph(nodes []refNode) (dwarf.Sections, error) {
	var decls []decl
	for i, n := range nodes {
		var as []attr
		if n.name != "" {
			as = append(as, attr{dwarf.DW_AT_name, dwarf.DW_FORM_string, 0})
		}
		if n.linkage != "" {
			as = append(as, attr{dwarf.DW_AT_linkage_name, dwarf.DW_FORM_string, 0})
		}
		if n.origin >= 0 {
			as = append(as, attr{dwarf.DW_AT_abstract_origin, dwarf.DW_FORM_ref4, 0})
		}
		if n.spec >= 0 {
			as = append(as, attr{dwarf.DW_AT_specification, dwarf.DW_FORM_ref4, 0})
		}
		as = append(as, attr{dwarf.DW_AT_low_pc, dwarf.DW_FORM_addr, 0}, attr{dwarf.DW_AT_high_pc, dwarf.DW_FORM_data4, 0})
		decls = append(decls, decl{uint64(10 + i), dwarf.DW_TAG_subprogram, false, as})
	}
	decls = append(decls, decl{abCU, dwarf.DW_TAG_compile_unit, true, nil})
	ab := (&asm{}).abbrevs(decls...)
	// Entries are laid out with fixed-size 4-byte references, so offsets
	// are known once every entry is written; patch them afterwards.
	info := &asm{}
	offs := make([]int, len(nodes))
	type fix struct{ at, target int }
	var fixes []fix
	info.unit(unitHeader{version: 4, addrSize: 8}, func(a *asm) {
		a.uleb(abCU)
		for i, n := range nodes {
			offs[i] = len(a.b)
			a.uleb(uint64(10 + i))
			if n.name != "" {
				a.str(n.name)
			}
			if n.linkage != "" {
				a.str(n.linkage)
			}
			for _, tg := range []int{n.origin, n.spec} {
				if tg >= 0 {
					fixes = append(fixes, fix{len(a.b), tg})
					a.u32(0)
				}
			}
			a.u64(0x1000 + 0x10*uint64(i)).u32(0x10)
		}
		a.u8(0)
	})
	for _, f := range fixes {
		binary.LittleEndian.PutUint32(info.b[f.at:], uint32(offs[f.target]))
	}
	return dwarf.Sections{Info: info.b, Abbrev: ab.b}, nil
}

func TestNameResolution(t *testing.T) {
	long := make([]refNode, 100)
	for i := range long {
		long[i] = refNode{origin: i + 1, spec: -1}
	}
	long[len(long)-1] = refNode{name: "far", origin: -1, spec: -1}
	short := make([]refNode, 60)
	for i := range short {
		short[i] = refNode{origin: i + 1, spec: -1}
	}
	short[len(short)-1] = refNode{name: "near", origin: -1, spec: -1}

	for _, tt := range []struct {
		name    string
		nodes   []refNode
		want    string // name of entry 0
		linkage bool
	}{
		{"own name", []refNode{{name: "f", origin: -1, spec: -1}}, "f", false},
		{"linkage over own name", []refNode{{name: "f", linkage: "_Z1fv", origin: -1, spec: -1}}, "_Z1fv", true},
		{"linkage through origin over own name", []refNode{{name: "f", origin: 1, spec: -1}, {linkage: "_Z1gv", origin: -1, spec: -1}}, "_Z1gv", true},
		{"origin then specification", []refNode{{origin: 1, spec: -1}, {spec: 2, origin: -1}, {name: "C::m", linkage: "_ZN1C1mEv", origin: -1, spec: -1}}, "_ZN1C1mEv", true},
		{"specification searched before origin", []refNode{{origin: 1, spec: 2}, {name: "by-origin", origin: -1, spec: -1}, {name: "by-spec", origin: -1, spec: -1}}, "by-spec", false},
		{"self cycle", []refNode{{origin: 0, spec: 0}}, "", false},
		{"two-entry cycle", []refNode{{origin: 1, spec: -1}, {origin: 0, spec: 1}}, "", false},
		{"cycle with a name on it", []refNode{{origin: 1, spec: -1}, {origin: 2, spec: -1}, {name: "n", origin: 0, spec: 1}}, "n", false},
		{"chain of 60", short, "near", false},
		{"chain of 100 is cut", long, "", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, _ := refGraph(tt.nodes)
			d := mustNew(t, s)
			ui := readUnit(t, d, 0)
			name, linkage := ui.SubroutineName(0)
			if string(name) != tt.want || linkage != tt.linkage {
				t.Errorf("SubroutineName(0) = %q, %v; want %q, %v", name, linkage, tt.want, tt.linkage)
			}
			for i := range ui.Subroutines {
				ui.SubroutineName(i)
				ui.SubroutineDecl(i)
			}
		})
	}
}

func TestAbbrevErrors(t *testing.T) {
	info := &asm{}
	info.unit(unitHeader{version: 4, addrSize: 8, abbrev: 0}, func(a *asm) { a.uleb(abCU) })
	for _, tt := range []struct {
		name   string
		abbrev []byte
		info   []byte
		want   string
	}{
		{"unknown form", (&asm{}).uleb(1).uleb(0x11).u8(0).uleb(3).uleb(0x55).u8(0).u8(0).u8(0).b, info.b,
			"decoding .debug_abbrev at offset 0x"},
		{"unterminated table", (&asm{}).uleb(1).uleb(0x11).u8(0).uleb(3).b, info.b, "decoding .debug_abbrev at offset 0x"},
		{"table offset beyond section", []byte{0}, (&asm{}).raw(info.b[:6]...).u32(0x99).raw(info.b[10:]...).b,
			"abbreviation table offset 0x99 beyond .debug_abbrev"},
		{"unknown root code", (&asm{}).abbrevs(decl{abCU, dwarf.DW_TAG_compile_unit, false, nil}).b,
			(&asm{}).raw(info.b[:11]...).u8(7).b, ".debug_info at offset 0xb: unit at 0x0: root entry has unknown abbreviation code 7"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d := mustNew(t, dwarf.Sections{Info: tt.info, Abbrev: tt.abbrev})
			var ui dwarf.UnitInfo
			err := d.ReadUnit(&d.Units()[0], &ui)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("ReadUnit = %v, want error containing %q", err, tt.want)
			}
			if _, err := d.UnitRanges(); err == nil {
				t.Errorf("UnitRanges succeeded")
			}
		})
	}
}

// TestUnknownChildCode checks the error for an entry whose code the table
// lacks: it names the section, the entry's offset and the code.
func TestUnknownChildCode(t *testing.T) {
	ab := (&asm{}).abbrevs(decl{abCU, dwarf.DW_TAG_compile_unit, true, nil})
	info := &asm{}
	info.unit(unitHeader{version: 4, addrSize: 8}, func(a *asm) { a.uleb(abCU).uleb(9).u8(0) })
	d := mustNew(t, dwarf.Sections{Info: info.b, Abbrev: ab.b})
	var ui dwarf.UnitInfo
	err := d.ReadUnit(&d.Units()[0], &ui)
	if want := "decoding .debug_info at offset 0xc: unit at 0x0: entry at 0xc has unknown abbreviation code 9"; err == nil || err.Error() != want {
		t.Errorf("ReadUnit = %v, want %q", err, want)
	}
}

// TestUnitRanges checks which unit owns which addresses: aranges first,
// the units' own ranges for units aranges leave out, and overlaps resolved
// the way llvm-symbolizer resolves them. As there, a set naming a unit's
// offset describes the unit even when it lists no ranges, and a set naming
// an offset inside a unit adds its ranges to that unit without describing
// it.
func TestUnitRanges(t *testing.T) {
	ab := (&asm{}).abbrevs(decl{abCU, dwarf.DW_TAG_compile_unit, false, []attr{
		{dwarf.DW_AT_low_pc, dwarf.DW_FORM_addr, 0},
		{dwarf.DW_AT_high_pc, dwarf.DW_FORM_data4, 0},
	}})
	unitRange := [][2]uint64{
		{0x1000, 0x2000}, // 0: listed in aranges with other addresses
		{0x1800, 0x3000}, // 1: overlaps unit 0's end
		{0x0800, 0x1800}, // 2: owns the start, so keeps [0x1000, 0x1800)
		{0x5000, 0x5000}, // 3: empty
		{0x4000, 0x4800}, // 4
		{0x4000, 0x4400}, // 5: inside unit 4, which has the lower offset
		{0x6000, 0x6100}, // 6: an empty set in aranges: no addresses
		{0x7000, 0x7100}, // 7: a set names an offset inside it
	}
	info := &asm{}
	var offs []uint64
	for _, r := range unitRange {
		offs = append(offs, info.unit(unitHeader{version: 4, addrSize: 8}, func(a *asm) {
			a.uleb(abCU).u64(r[0]).u32(uint32(r[1] - r[0]))
		}))
	}
	ar := &asm{}
	fill := ar.length()
	ar.u16(2).u32(uint32(offs[0])).u8(8).u8(0).u32(0) // header padded to 16
	ar.u64(0x9000).u64(0x100).u64(0x1000).u64(0x1000).u64(0).u64(0)
	fill()
	fill = ar.length()
	ar.u16(2).u32(0xfff0).u8(8).u8(0).u32(0) // names no unit: ignored
	ar.u64(0xa000).u64(0x100).u64(0).u64(0)
	fill()
	fill = ar.length()
	ar.u16(2).u32(uint32(offs[6])).u8(8).u8(0).u32(0)
	ar.u64(0).u64(0)
	fill()
	fill = ar.length()
	ar.u16(2).u32(uint32(offs[7] + 1)).u8(8).u8(0).u32(0)
	ar.u64(0xb000).u64(0x100).u64(0).u64(0)
	fill()
	d := mustNew(t, dwarf.Sections{Info: info.b, Abbrev: ab.b, Aranges: ar.b})
	have, err := d.UnitRanges()
	if err != nil {
		t.Fatal(err)
	}
	want := []dwarf.UnitRange{
		{0x0800, 0x1800, 2},
		{0x1800, 0x2000, 0},
		{0x2000, 0x3000, 1},
		{0x4000, 0x4800, 4},
		{0x7000, 0x7100, 7},
		{0x9000, 0x9100, 0},
		{0xb000, 0xb100, 7},
	}
	if !reflect.DeepEqual(have, want) {
		t.Errorf("UnitRanges:\nhave %x\nwant %x", have, want)
	}
}

// TestIssueEmptyUnit: Xcode 8's dsymutil wrote a unit of a header alone
// (CrashProbe's CrashLibiOS.dSYM, unit 0x26a61); it holds nothing, and the
// units around it must still be read.
func TestIssueEmptyUnit(t *testing.T) {
	secs, big := loadSections(t, "../../testdata/crashprobe/arm64-debug/dSYMs/arm64-CrashLibiOS.framework.dSYM/Contents/Resources/DWARF/CrashLibiOS")
	d, err := dwarf.New(secs, big)
	if err != nil {
		t.Fatal(err)
	}
	var ui dwarf.UnitInfo
	empty := 0
	for _, u := range d.Units() {
		if err := d.ReadUnit(&u, &ui); err != nil {
			t.Fatalf("unit at %#x: %v", u.Offset, err)
		}
		if u.Offset == 0x26a61 {
			empty++
			if len(ui.Subroutines) != 0 || len(ui.Ranges) != 0 {
				t.Errorf("empty unit read as %d subroutines, %d ranges", len(ui.Subroutines), len(ui.Ranges))
			}
		}
	}
	if empty != 1 {
		t.Fatalf("unit 0x26a61 not found")
	}
	if _, err := d.UnitRanges(); err != nil {
		t.Fatal(err)
	}
}
