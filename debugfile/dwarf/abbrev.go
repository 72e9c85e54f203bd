package dwarf

import (
	"fmt"

	"github.com/backtrail/backtrail/internal/bin"
)

// attrSpec is one attribute of an abbreviation.
type attrSpec struct {
	attr     Attr
	form     Form
	size     int8  // encoded size for the table's unit format, or -1 when variable
	role     uint8 // what a subroutine entry's scan does with the value
	implicit int64 // value of DW_FORM_implicit_const
}

// Roles of the attributes of subroutine entries (readSubroutine).
const (
	roleSkip = iota
	roleLowPC
	roleHighPC
	roleRanges
	roleCallFile
	roleCallLine
	roleCallColumn
	roleDiscriminator
	roleOrigin
)

// abbrev is one abbreviation declaration with sizes precomputed for a unit
// format, so that uninteresting entries are skipped with one addition, and
// with what the unit scan needs to know about its entries decided once.
type abbrev struct {
	tag      Tag
	children bool
	kind     uint8 // kindSubroutine, kindData or kindOther, from the tag
	code     bool  // has DW_AT_low_pc or DW_AT_ranges: may own addresses
	named    bool  // has naming attributes besides DW_AT_abstract_origin
	sibling  bool  // has DW_AT_sibling
	fixed    int32 // total size of all attribute values, or -1 when any is variable
	attrs    []attrSpec
}

// abbrevTable maps abbreviation codes to declarations. Producers number
// codes 1..n, so a slice is the common case; a map holds the rest.
type abbrevTable struct {
	dense  []abbrev // index = code-1
	sparse map[uint64]*abbrev
}

func (t *abbrevTable) get(code uint64) *abbrev {
	if code-1 < uint64(len(t.dense)) {
		return &t.dense[code-1]
	}
	return t.sparse[code]
}

// format is what attribute sizes depend on.
type format struct {
	addrSize uint8
	dwarf64  bool
	version  uint16
}

func (f format) offSize() int {
	if f.dwarf64 {
		return 8
	}
	return 4
}

// formSize returns the encoded size of a value of form in unit format f, or
// -1 when the size depends on the data.
func formSize(form Form, f format) int {
	switch form {
	case DW_FORM_addr:
		return int(f.addrSize)
	case DW_FORM_flag_present, DW_FORM_implicit_const:
		return 0
	case DW_FORM_data1, DW_FORM_ref1, DW_FORM_flag, DW_FORM_strx1, DW_FORM_addrx1:
		return 1
	case DW_FORM_data2, DW_FORM_ref2, DW_FORM_strx2, DW_FORM_addrx2:
		return 2
	case DW_FORM_strx3, DW_FORM_addrx3:
		return 3
	case DW_FORM_data4, DW_FORM_ref4, DW_FORM_strx4, DW_FORM_addrx4, DW_FORM_ref_sup4:
		return 4
	case DW_FORM_data8, DW_FORM_ref8, DW_FORM_ref_sig8, DW_FORM_ref_sup8:
		return 8
	case DW_FORM_data16:
		return 16
	case DW_FORM_strp, DW_FORM_line_strp, DW_FORM_sec_offset, DW_FORM_strp_sup,
		DW_FORM_GNU_ref_alt, DW_FORM_GNU_strp_alt:
		return f.offSize()
	case DW_FORM_ref_addr:
		if f.version <= 2 {
			return int(f.addrSize)
		}
		return f.offSize()
	}
	return -1
}

// knownForm reports whether form is one this package can decode.
func knownForm(form Form) bool {
	switch {
	case form >= DW_FORM_addr && form <= DW_FORM_addrx4 && form != 0x02:
		return true
	case form == DW_FORM_GNU_addr_index, form == DW_FORM_GNU_str_index,
		form == DW_FORM_GNU_ref_alt, form == DW_FORM_GNU_strp_alt:
		return true
	}
	return false
}

// parseAbbrev reads the abbreviation table at off in .debug_abbrev. It
// also returns the number of bytes it read.
func parseAbbrev(data []byte, off uint64, f format) (*abbrevTable, int, error) {
	if off >= uint64(len(data)) {
		return nil, 0, fmt.Errorf("abbreviation table offset %#x beyond .debug_abbrev size %#x", off, len(data))
	}
	b := bin.New(".debug_abbrev", off, data[off:], false)
	t := &abbrevTable{}
	for {
		code := b.ULEB()
		if code == 0 || b.Err() != nil {
			break
		}
		a := abbrev{tag: Tag(b.ULEB()), children: b.U8() != 0}
		fixed := int32(0)
		// Count first so the attribute slice is allocated once, exactly; the
		// count is bounded by the bytes that encode it.
		save := b
		n := 0
		for {
			at, fm := b.ULEB(), b.ULEB()
			if fm == uint64(DW_FORM_implicit_const) {
				b.SLEB()
			}
			if at == 0 && fm == 0 || b.Err() != nil {
				break
			}
			n++
		}
		b = save
		a.attrs = make([]attrSpec, 0, n)
		for {
			at, fm := b.ULEB(), b.ULEB()
			var imp int64
			if fm == uint64(DW_FORM_implicit_const) {
				imp = b.SLEB()
			}
			if at == 0 && fm == 0 || b.Err() != nil {
				break
			}
			if fm > 0xffff || !knownForm(Form(fm)) {
				return nil, b.Pos(), &bin.DecodeError{Name: ".debug_abbrev", Offset: b.Off(), Err: fmt.Sprintf("abbreviation %d: unknown form %#x", code, fm)}
			}
			if at > 0xffffffff {
				at = 0xffffffff
			}
			s := formSize(Form(fm), f)
			if s < 0 || fixed < 0 {
				fixed = -1
			} else {
				fixed += int32(s)
			}
			a.attrs = append(a.attrs, attrSpec{attr: Attr(at), form: Form(fm), size: int8(s), implicit: imp})
		}
		a.fixed = fixed
		a.classify()
		if code-1 == uint64(len(t.dense)) && t.sparse == nil {
			t.dense = append(t.dense, a)
		} else {
			if t.sparse == nil {
				t.sparse = make(map[uint64]*abbrev)
			}
			t.sparse[code] = &a
		}
	}
	if err := b.Err(); err != nil {
		return nil, b.Pos(), err
	}
	return t, b.Pos(), nil
}

// classify fills in what the unit scan decides from the declaration alone.
func (a *abbrev) classify() {
	a.kind = kindOf(a.tag)
	for i := range a.attrs {
		switch a.attrs[i].attr {
		case DW_AT_low_pc, DW_AT_ranges:
			a.code = true
		case DW_AT_name, DW_AT_linkage_name, DW_AT_MIPS_linkage_name, DW_AT_specification,
			DW_AT_decl_file, DW_AT_decl_line:
			a.named = true
		case DW_AT_sibling:
			a.sibling = true
		}
	}
	for i := range a.attrs {
		sp := &a.attrs[i]
		switch sp.attr {
		case DW_AT_low_pc:
			sp.role = roleLowPC
		case DW_AT_high_pc:
			sp.role = roleHighPC
		case DW_AT_ranges:
			sp.role = roleRanges
		case DW_AT_call_file:
			sp.role = roleCallFile
		case DW_AT_call_line:
			sp.role = roleCallLine
		case DW_AT_call_column:
			sp.role = roleCallColumn
		case DW_AT_GNU_discriminator:
			sp.role = roleDiscriminator
		case DW_AT_abstract_origin:
			// Names come from the entry itself when it has naming
			// attributes of its own (SubroutineName).
			if !a.named {
				sp.role = roleOrigin
			}
		}
	}
}
