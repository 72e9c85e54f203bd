package dwarf_test

// A tiny DWARF assembler for hand-built test inputs: abbreviation tables,
// unit headers of every version and both offset sizes, entries, and line
// number programs. It writes what the DWARF 5 standard (sections 6.2 and
// 7.5) lays out; nothing here is copied from another assembler.

import (
	"encoding/binary"

	"github.com/backtrail/backtrail/debugfile/dwarf"
)

// asm appends DWARF encodings to b.
type asm struct {
	b       []byte
	big     bool
	dwarf64 bool // offsets (DW_FORM_strp, sec_offset, ref_addr in v3+) are 8 bytes
}

func (a *asm) order() binary.AppendByteOrder {
	if a.big {
		return binary.BigEndian
	}
	return binary.LittleEndian
}

func (a *asm) u8(v uint8) *asm   { a.b = append(a.b, v); return a }
func (a *asm) u16(v uint16) *asm { a.b = a.order().AppendUint16(a.b, v); return a }
func (a *asm) u32(v uint32) *asm { a.b = a.order().AppendUint32(a.b, v); return a }
func (a *asm) u64(v uint64) *asm { a.b = a.order().AppendUint64(a.b, v); return a }
func (a *asm) raw(p ...byte) *asm {
	a.b = append(a.b, p...)
	return a
}

// uint appends v in n bytes (1–8).
func (a *asm) uint(v uint64, n int) *asm {
	for i := 0; i < n; i++ {
		shift := 8 * i
		if a.big {
			shift = 8 * (n - 1 - i)
		}
		a.b = append(a.b, byte(v>>shift))
	}
	return a
}

// off appends a section offset in the unit's offset size.
func (a *asm) off(v uint64) *asm {
	if a.dwarf64 {
		return a.u64(v)
	}
	return a.u32(uint32(v))
}

func (a *asm) uleb(v uint64) *asm {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v != 0 {
			c |= 0x80
		}
		a.b = append(a.b, c)
		if v == 0 {
			return a
		}
	}
}

func (a *asm) sleb(v int64) *asm {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		done := v == 0 && c&0x40 == 0 || v == -1 && c&0x40 != 0
		if !done {
			c |= 0x80
		}
		a.b = append(a.b, c)
		if done {
			return a
		}
	}
}

// str appends a NUL-terminated string.
func (a *asm) str(s string) *asm {
	a.b = append(a.b, s...)
	a.b = append(a.b, 0)
	return a
}

// length appends a unit length field whose value is filled in by the
// returned function, called when the unit is complete. DWARF64 lengths
// start with the 0xffffffff escape.
func (a *asm) length() (fill func()) {
	if a.dwarf64 {
		a.u32(0xffffffff)
	}
	at := len(a.b)
	a.off(0)
	start := len(a.b)
	return func() {
		n := uint64(len(a.b) - start)
		var tmp asm
		tmp.big, tmp.dwarf64 = a.big, a.dwarf64
		tmp.off(n)
		copy(a.b[at:], tmp.b)
	}
}

// attr is one attribute specification of an abbreviation.
type attr struct {
	at       dwarf.Attr
	form     dwarf.Form
	implicit int64 // for DW_FORM_implicit_const
}

// decl is one abbreviation declaration.
type decl struct {
	code     uint64
	tag      dwarf.Tag
	children bool
	attrs    []attr
}

// abbrevs appends an abbreviation table ending in a zero code.
func (a *asm) abbrevs(ds ...decl) *asm {
	for _, d := range ds {
		a.uleb(d.code).uleb(uint64(d.tag))
		if d.children {
			a.u8(1)
		} else {
			a.u8(0)
		}
		for _, s := range d.attrs {
			a.uleb(uint64(s.at)).uleb(uint64(s.form))
			if s.form == dwarf.DW_FORM_implicit_const {
				a.sleb(s.implicit)
			}
		}
		a.u8(0).u8(0)
	}
	return a.u8(0)
}

// unitHeader describes a .debug_info unit header.
type unitHeader struct {
	version  uint16
	unitType uint8 // DWARF 5 only; 0 means DW_UT_compile
	addrSize uint8
	abbrev   uint64
	dwoID    uint64 // skeleton and split units
}

// unit appends a unit with the given header whose entries body writes. It
// returns the unit's offset. Entry offsets inside body are absolute
// section offsets: len(a.b) when body runs.
func (a *asm) unit(h unitHeader, body func(a *asm)) uint64 {
	start := uint64(len(a.b))
	fill := a.length()
	a.u16(h.version)
	if h.version >= 5 {
		ut := h.unitType
		if ut == 0 {
			ut = dwarf.DW_UT_compile
		}
		a.u8(ut).u8(h.addrSize).off(h.abbrev)
		switch ut {
		case dwarf.DW_UT_skeleton, dwarf.DW_UT_split_compile:
			a.u64(h.dwoID)
		case dwarf.DW_UT_type, dwarf.DW_UT_split_type:
			a.u64(0x1122334455667788).off(0)
		}
	} else {
		a.off(h.abbrev).u8(h.addrSize)
	}
	body(a)
	fill()
	return start
}

// headerSize is the size of a unit header, so tests can compute the
// offset of a unit's first entry.
func headerSize(version uint16, dwarf64 bool) uint64 {
	n := uint64(4 + 2 + 4 + 1)
	if dwarf64 {
		n += 8 + 4
	}
	if version >= 5 {
		n++
	}
	return n
}

// lineFile is one file entry of a line table header.
type lineFile struct {
	name string
	dir  uint64
}

// lineHeader describes a line number program header.
type lineHeader struct {
	version    uint16
	addrSize   uint8 // DWARF 5 header field
	minInst    uint8
	maxOps     uint8 // DWARF 4 and later
	lineBase   int8
	lineRange  uint8
	opcodeBase uint8
	stdLens    []byte // nil: the standard lengths for opcodeBase 13
	dirs       []string
	files      []lineFile
}

var standardLengths = []byte{0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1}

// lineProgram appends a line table: h's header followed by the program
// that prog writes. It returns the table's offset.
func (a *asm) lineProgram(h lineHeader, prog func(a *asm)) uint64 {
	start := uint64(len(a.b))
	fill := a.length()
	a.u16(h.version)
	if h.version >= 5 {
		a.u8(h.addrSize).u8(0)
	}
	fillHeader := a.length0()
	a.u8(h.minInst)
	if h.version >= 4 {
		a.u8(h.maxOps)
	}
	a.u8(1).u8(uint8(h.lineBase)).u8(h.lineRange).u8(h.opcodeBase)
	lens := h.stdLens
	if lens == nil {
		lens = standardLengths
	}
	a.raw(lens...)
	if h.version >= 5 {
		// directory_entry_format: path as a string.
		a.u8(1).uleb(1).uleb(uint64(dwarf.DW_FORM_string))
		a.uleb(uint64(len(h.dirs)))
		for _, d := range h.dirs {
			a.str(d)
		}
		// file_name_entry_format: path, directory index.
		a.u8(2).uleb(1).uleb(uint64(dwarf.DW_FORM_string)).uleb(2).uleb(uint64(dwarf.DW_FORM_udata))
		a.uleb(uint64(len(h.files)))
		for _, f := range h.files {
			a.str(f.name).uleb(f.dir)
		}
	} else {
		for _, d := range h.dirs {
			a.str(d)
		}
		a.u8(0)
		for _, f := range h.files {
			a.str(f.name).uleb(f.dir).uleb(0).uleb(0)
		}
		a.u8(0)
	}
	fillHeader()
	prog(a)
	fill()
	return start
}

// length0 is length without the DWARF64 escape: header_length is a plain
// offset-sized field.
func (a *asm) length0() (fill func()) {
	at := len(a.b)
	a.off(0)
	start := len(a.b)
	return func() {
		var tmp asm
		tmp.big, tmp.dwarf64 = a.big, a.dwarf64
		tmp.off(uint64(len(a.b) - start))
		copy(a.b[at:], tmp.b)
	}
}

// Line program opcodes.

func (a *asm) extended(op byte, operands ...byte) *asm {
	return a.u8(0).uleb(uint64(1 + len(operands))).u8(op).raw(operands...)
}

func (a *asm) setAddress(addr uint64, size int) *asm {
	var tmp asm
	tmp.big = a.big
	tmp.uint(addr, size)
	return a.extended(dwarf.DW_LNE_set_address, tmp.b...)
}

func (a *asm) endSequence() *asm { return a.extended(dwarf.DW_LNE_end_sequence) }
func (a *asm) copyRow() *asm     { return a.u8(dwarf.DW_LNS_copy) }
func (a *asm) advancePC(n uint64) *asm {
	return a.u8(dwarf.DW_LNS_advance_pc).uleb(n)
}
func (a *asm) advanceLine(n int64) *asm {
	return a.u8(dwarf.DW_LNS_advance_line).sleb(n)
}
func (a *asm) setFile(n uint64) *asm   { return a.u8(dwarf.DW_LNS_set_file).uleb(n) }
func (a *asm) setColumn(n uint64) *asm { return a.u8(dwarf.DW_LNS_set_column).uleb(n) }

// sections is a convenience for building dwarf.Sections in tests.
func mustNew(t interface {
	Helper()
	Fatalf(string, ...any)
}, s dwarf.Sections) *dwarf.Data {
	t.Helper()
	d, err := dwarf.New(s, false)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return d
}
