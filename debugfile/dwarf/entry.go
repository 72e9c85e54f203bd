package dwarf

import (
	"encoding/binary"
	"fmt"

	"github.com/backtrail/backtrail/internal/bin"
)

// entryReader walks the entries of one unit. It is the hot loop of symcache
// builds, so it works on the raw slice rather than a bin.Buf, keeps the first
// error and returns zeros after it, like bin.Buf.
type entryReader struct {
	d    *Data
	u    *Unit
	tab  *abbrevTable
	sec  string // name of the section data holds, for errors
	data []byte // all of .debug_info, or .debug_line for line headers
	pos  int
	end  int
	big  bool
	f    format
	err  error

	// Unit bases (DWARF 5, GNU split DWARF) needed to resolve indexed forms.
	strOffBase   uint64
	addrBase     uint64
	rnglistsBase uint64
	baseAddr     uint64 // the unit's base address for range lists
	// dwoRangesBase is a GNU skeleton's DW_AT_GNU_ranges_base; in the
	// reader of its split unit, rangesBase, to which that unit's
	// .debug_ranges offsets are relative.
	dwoRangesBase uint64
	rangesBase    uint64
	// lines is the unit whose line table the file indices of the
	// entries refer to: u, or the skeleton of a split unit.
	lines *Unit

	// rangesLeft is how many more address ranges the reader may produce.
	// Range lists can be shared, so without a bound many small entries
	// referring to one long list would expand to their product.
	rangesLeft int
	noRanges   bool // reading bases only: skip the root's ranges
}

func (d *Data) newEntryReader(u *Unit) (*entryReader, error) {
	tab, err := d.abbrevTable(u)
	if err != nil {
		return nil, err
	}
	r := &entryReader{d: d, u: u, tab: tab, sec: ".debug_info", data: d.sec.Info, pos: int(u.first), end: int(u.End), big: d.big, f: u.format(),
		rangesLeft: d.rangeBudget(), lines: u}
	if u.Version >= 5 {
		// Defaults for units that use indexed forms without naming their
		// bases: the first contribution, just past its header.
		r.strOffBase = uint64(8)
		if u.Dwarf64 {
			r.strOffBase = 16
		}
		r.addrBase = 8
	}
	return r, nil
}

// rangeBudget is the number of address ranges one reader may produce: as
// many as the input has bytes that could describe them. A unit whose
// entries each own their ranges, as compilers emit them, stays far below.
func (d *Data) rangeBudget() int {
	return len(d.sec.Info) + len(d.sec.Ranges) + len(d.sec.RngLists)
}

func (r *entryReader) fail(format string, args ...any) {
	if r.err == nil {
		r.err = &bin.DecodeError{Name: r.sec, Offset: uint64(r.pos), Err: fmt.Sprintf(format, args...)}
	}
	r.pos = r.end
}

func (r *entryReader) need(n int) bool {
	if n < 0 || r.pos+n > r.end || r.pos+n < r.pos {
		r.fail("unit at %#x: need %d bytes, %d left", r.u.Offset, n, r.end-r.pos)
		return false
	}
	return true
}

func (r *entryReader) u8() uint8 {
	if r.pos >= r.end {
		r.need(1)
		return 0
	}
	v := r.data[r.pos]
	r.pos++
	return v
}

func (r *entryReader) uint(n int) uint64 {
	if !r.need(n) {
		return 0
	}
	p := r.data[r.pos : r.pos+n]
	r.pos += n
	if r.big {
		switch n {
		case 1:
			return uint64(p[0])
		case 2:
			return uint64(binary.BigEndian.Uint16(p))
		case 3:
			return uint64(p[0])<<16 | uint64(p[1])<<8 | uint64(p[2])
		case 4:
			return uint64(binary.BigEndian.Uint32(p))
		case 8:
			return binary.BigEndian.Uint64(p)
		}
	} else {
		switch n {
		case 1:
			return uint64(p[0])
		case 2:
			return uint64(binary.LittleEndian.Uint16(p))
		case 3:
			return uint64(p[2])<<16 | uint64(p[1])<<8 | uint64(p[0])
		case 4:
			return uint64(binary.LittleEndian.Uint32(p))
		case 8:
			return binary.LittleEndian.Uint64(p)
		}
	}
	var v uint64
	for i := range p {
		if r.big {
			v = v<<8 | uint64(p[i])
		} else {
			v |= uint64(p[i]) << (8 * i)
		}
	}
	return v
}

func (r *entryReader) uleb() uint64 {
	// One-byte values are by far the most common (abbreviation codes,
	// small constants); keep that path short.
	if r.pos < r.end {
		if c := r.data[r.pos]; c < 0x80 {
			r.pos++
			return uint64(c)
		}
	}
	var v uint64
	var shift uint
	for i := r.pos; i < r.end; i++ {
		c := r.data[i]
		if shift < 64 {
			v |= uint64(c&0x7f) << shift
		}
		shift += 7
		if c&0x80 == 0 {
			r.pos = i + 1
			return v
		}
	}
	r.fail("unit at %#x: unterminated LEB128", r.u.Offset)
	return 0
}

func (r *entryReader) sleb() int64 {
	var v int64
	var shift uint
	for i := r.pos; i < r.end; i++ {
		c := r.data[i]
		if shift < 64 {
			v |= int64(c&0x7f) << shift
		}
		shift += 7
		if c&0x80 == 0 {
			if shift < 64 && c&0x40 != 0 {
				v |= -1 << shift
			}
			r.pos = i + 1
			return v
		}
	}
	r.fail("unit at %#x: unterminated LEB128", r.u.Offset)
	return 0
}

func (r *entryReader) skip(n uint64) {
	if n > uint64(r.end-r.pos) {
		r.need(int(min(n, 1<<30)))
		return
	}
	r.pos += int(n)
}

// value is a decoded attribute value. u holds integers, offsets, addresses
// and indexes; b holds inline strings and blocks.
type value struct {
	form Form
	u    uint64
	b    []byte
}

// read decodes a value of form, or skips it when want is false.
func (r *entryReader) read(form Form, implicit int64) value {
	v := value{form: form}
	switch form {
	case DW_FORM_addr:
		v.u = r.uint(int(r.f.addrSize))
	case DW_FORM_data1, DW_FORM_ref1, DW_FORM_flag, DW_FORM_strx1, DW_FORM_addrx1:
		v.u = uint64(r.u8())
	case DW_FORM_data2, DW_FORM_ref2, DW_FORM_strx2, DW_FORM_addrx2:
		v.u = r.uint(2)
	case DW_FORM_strx3, DW_FORM_addrx3:
		v.u = r.uint(3)
	case DW_FORM_data4, DW_FORM_ref4, DW_FORM_strx4, DW_FORM_addrx4, DW_FORM_ref_sup4:
		v.u = r.uint(4)
	case DW_FORM_data8, DW_FORM_ref8, DW_FORM_ref_sig8, DW_FORM_ref_sup8:
		v.u = r.uint(8)
	case DW_FORM_data16:
		v.b = r.bytes(16)
	case DW_FORM_sdata:
		v.u = uint64(r.sleb())
	case DW_FORM_udata, DW_FORM_ref_udata, DW_FORM_strx, DW_FORM_addrx, DW_FORM_loclistx,
		DW_FORM_rnglistx, DW_FORM_GNU_addr_index, DW_FORM_GNU_str_index:
		v.u = r.uleb()
	case DW_FORM_strp, DW_FORM_line_strp, DW_FORM_sec_offset, DW_FORM_strp_sup,
		DW_FORM_GNU_ref_alt, DW_FORM_GNU_strp_alt:
		v.u = r.uint(r.f.offSize())
	case DW_FORM_ref_addr:
		if r.f.version <= 2 {
			v.u = r.uint(int(r.f.addrSize))
		} else {
			v.u = r.uint(r.f.offSize())
		}
	case DW_FORM_string:
		start := r.pos
		for r.pos < r.end && r.data[r.pos] != 0 {
			r.pos++
		}
		if r.pos >= r.end {
			r.fail("unit at %#x: unterminated string", r.u.Offset)
			return v
		}
		v.b = r.data[start:r.pos:r.pos]
		r.pos++
	case DW_FORM_block1:
		v.b = r.bytes(uint64(r.u8()))
	case DW_FORM_block2:
		v.b = r.bytes(r.uint(2))
	case DW_FORM_block4:
		v.b = r.bytes(r.uint(4))
	case DW_FORM_block, DW_FORM_exprloc:
		v.b = r.bytes(r.uleb())
	case DW_FORM_flag_present:
		v.u = 1
	case DW_FORM_implicit_const:
		v.u = uint64(implicit)
	case DW_FORM_indirect:
		f := r.uleb()
		if f == uint64(DW_FORM_indirect) || f > 0xffff || !knownForm(Form(f)) {
			r.fail("unit at %#x: bad indirect form %#x", r.u.Offset, f)
			return v
		}
		return r.read(Form(f), implicit)
	default:
		r.fail("unit at %#x: unknown form %#x", r.u.Offset, form)
	}
	return v
}

func (r *entryReader) bytes(n uint64) []byte {
	if n > uint64(r.end-r.pos) {
		r.need(int(min(n, 1<<30)))
		return nil
	}
	p := r.data[r.pos : r.pos+int(n) : r.pos+int(n)]
	r.pos += int(n)
	return p
}

// value decodes the value of sp: read, with a short path for the
// fixed-size forms that most attributes use.
func (r *entryReader) value(sp *attrSpec) value {
	n := int(sp.size)
	if n <= 0 || n > 8 || r.end-r.pos < n || sp.form == DW_FORM_data16 {
		return r.read(sp.form, sp.implicit)
	}
	p := r.data[r.pos : r.pos+n]
	r.pos += n
	var u uint64
	switch {
	case n == 1:
		u = uint64(p[0])
	case n == 2 && !r.big:
		u = uint64(binary.LittleEndian.Uint16(p))
	case n == 4 && !r.big:
		u = uint64(binary.LittleEndian.Uint32(p))
	case n == 8 && !r.big:
		u = binary.LittleEndian.Uint64(p)
	default:
		for i := range p {
			if r.big {
				u = u<<8 | uint64(p[i])
			} else {
				u |= uint64(p[i]) << (8 * i)
			}
		}
	}
	return value{form: sp.form, u: u}
}

// skipAttrs skips the attribute values of a, fast when all are fixed-size.
func (r *entryReader) skipAttrs(a *abbrev) {
	if a.fixed >= 0 {
		r.skip(uint64(a.fixed))
		return
	}
	for i := range a.attrs {
		r.skipAttr(&a.attrs[i])
	}
}

// skipAttr skips one attribute value without decoding it.
func (r *entryReader) skipAttr(s *attrSpec) {
	if s.size >= 0 {
		r.skip(uint64(s.size))
		return
	}
	switch s.form {
	case DW_FORM_udata, DW_FORM_sdata, DW_FORM_ref_udata, DW_FORM_strx, DW_FORM_addrx,
		DW_FORM_loclistx, DW_FORM_rnglistx, DW_FORM_GNU_addr_index, DW_FORM_GNU_str_index:
		for r.pos < r.end && r.data[r.pos] >= 0x80 {
			r.pos++
		}
		r.skip(1)
	default:
		r.read(s.form, s.implicit)
	}
}

// isRef reports whether a value of form is a reference to another entry.
func isRef(form Form) bool {
	switch form {
	case DW_FORM_ref1, DW_FORM_ref2, DW_FORM_ref4, DW_FORM_ref8, DW_FORM_ref_udata, DW_FORM_ref_addr:
		return true
	}
	return false
}

// ref returns the .debug_info offset a reference value points to, or false
// for references into other files (supplementary, type units).
func (r *entryReader) ref(v value) (uint64, bool) {
	switch v.form {
	case DW_FORM_ref1, DW_FORM_ref2, DW_FORM_ref4, DW_FORM_ref8, DW_FORM_ref_udata:
		return r.u.Offset + v.u, true
	case DW_FORM_ref_addr:
		return v.u, true
	}
	return 0, false
}

// strValue is a string-class value not yet decoded: for DW_FORM_string,
// u is the string's offset in the reader's section.
type strValue struct {
	form Form
	u    uint64
}

// strValue reads a string-class attribute without decoding the string.
func (r *entryReader) strValue(sp *attrSpec) strValue {
	v := r.read(sp.form, sp.implicit)
	if v.form == DW_FORM_string {
		// The string ends just before the cursor, at its terminator.
		return strValue{form: DW_FORM_string, u: uint64(r.pos - len(v.b) - 1)}
	}
	return strValue{form: v.form, u: v.u}
}

// strOf decodes v, a value r read.
func (r *entryReader) strOf(v strValue) []byte {
	if v.form == DW_FORM_string {
		s, _ := bin.CStringAt(r.data[:r.end], v.u)
		return s
	}
	return r.str(value{form: v.form, u: v.u})
}

// str resolves a string-class value. Strings are views into the sections.
func (r *entryReader) str(v value) []byte {
	switch v.form {
	case DW_FORM_string:
		return v.b
	case DW_FORM_strp:
		s, _ := bin.CStringAt(r.d.sec.Str, v.u)
		return s
	case DW_FORM_line_strp:
		s, _ := bin.CStringAt(r.d.sec.LineStr, v.u)
		return s
	case DW_FORM_strx, DW_FORM_strx1, DW_FORM_strx2, DW_FORM_strx3, DW_FORM_strx4, DW_FORM_GNU_str_index:
		n := uint64(r.f.offSize())
		off := r.strOffBase + v.u*n
		so := r.d.sec.StrOffsets
		if v.u > uint64(len(so))/n || off+n > uint64(len(so)) {
			return nil
		}
		b := bin.New(".debug_str_offsets", off, so[off:off+n], r.big)
		s, _ := bin.CStringAt(r.d.sec.Str, b.Uint(int(n)))
		return s
	}
	return nil
}

// addr resolves an address-class value.
func (r *entryReader) addr(v value) (uint64, bool) {
	switch v.form {
	case DW_FORM_addr:
		return v.u, true
	case DW_FORM_addrx, DW_FORM_addrx1, DW_FORM_addrx2, DW_FORM_addrx3, DW_FORM_addrx4, DW_FORM_GNU_addr_index:
		return r.indexedAddr(v.u)
	}
	return 0, false
}

func (r *entryReader) indexedAddr(i uint64) (uint64, bool) {
	n := uint64(r.f.addrSize)
	a := r.d.sec.Addr
	off := r.addrBase + i*n
	if i > uint64(len(a))/n || off+n > uint64(len(a)) {
		return 0, false
	}
	b := bin.New(".debug_addr", off, a[off:off+n], r.big)
	return b.Uint(int(n)), true
}

// constant resolves a constant-class value as unsigned.
func constant(v value) (uint64, bool) {
	switch v.form {
	case DW_FORM_data1, DW_FORM_data2, DW_FORM_data4, DW_FORM_data8, DW_FORM_udata,
		DW_FORM_sdata, DW_FORM_implicit_const:
		return v.u, true
	}
	return 0, false
}
