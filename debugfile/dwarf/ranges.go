package dwarf

import (
	"github.com/backtrail/backtrail/internal/bin"
)

// Range is a half-open address range [Lo, Hi).
type Range struct{ Lo, Hi uint64 }

// maxRangeEntries bounds one range list, so a list that loops through base
// address entries cannot grow without end.
const maxRangeEntries = 1 << 20

// ranges appends the address ranges of an entry with low/high PC or ranges
// attributes to out, following DWARF 5 section 2.17.
func (r *entryReader) ranges(low, high, rng value, hasLow, hasHigh, hasRanges bool, out []Range) []Range {
	if r.noRanges {
		return out
	}
	n := len(out)
	out = r.appendRanges(low, high, rng, hasLow, hasHigh, hasRanges, out)
	if r.rangesLeft -= len(out) - n; r.rangesLeft < 0 {
		r.fail("unit at %#x: range lists expand to more than %d ranges", r.u.Offset, r.d.rangeBudget())
		return out[:n]
	}
	return out
}

func (r *entryReader) appendRanges(low, high, rng value, hasLow, hasHigh, hasRanges bool, out []Range) []Range {
	if hasLow && hasHigh {
		lo, ok := r.addr(low)
		if !ok {
			return out
		}
		var hi uint64
		if c, ok := constant(high); ok {
			hi = lo + c
		} else if a, ok := r.addr(high); ok {
			hi = a
		} else {
			return out
		}
		return append(out, Range{lo, hi})
	}
	if !hasRanges {
		return out
	}
	if rng.form == DW_FORM_rnglistx {
		off, ok := r.rnglistOffset(rng.u)
		if !ok {
			return out
		}
		return r.rngList(off, out)
	}
	if r.f.version >= 5 {
		return r.rngList(rng.u, out)
	}
	return r.debugRanges(r.rangesBase+rng.u, out)
}

// debugRanges reads a DWARF 2–4 .debug_ranges list.
func (r *entryReader) debugRanges(off uint64, out []Range) []Range {
	sec := r.d.sec.Ranges
	if off >= uint64(len(sec)) {
		return out
	}
	n := int(r.f.addrSize)
	maxAddr := ^uint64(0) >> (64 - 8*uint(n))
	b := bin.New(".debug_ranges", off, sec[off:], r.big)
	base := r.baseAddr
	start := len(out)
	for i := 0; i < maxRangeEntries && len(out) <= r.rangesLeft+start; i++ {
		lo, hi := b.Uint(n), b.Uint(n)
		if b.Err() != nil || lo == 0 && hi == 0 {
			break
		}
		if lo == maxAddr {
			base = hi
			continue
		}
		out = append(out, Range{lo + base, hi + base})
	}
	return out
}

// rnglistOffset maps a DW_FORM_rnglistx index to a .debug_rnglists offset.
func (r *entryReader) rnglistOffset(i uint64) (uint64, bool) {
	sec := r.d.sec.RngLists
	n := uint64(r.f.offSize())
	base := r.rnglistsBase
	if base > uint64(len(sec)) || i > (uint64(len(sec))-base)/n {
		return 0, false
	}
	off := base + i*n
	if off+n > uint64(len(sec)) {
		return 0, false
	}
	b := bin.New(".debug_rnglists", off, sec[off:off+n], r.big)
	return base + b.Uint(int(n)), true
}

// rngList reads a DWARF 5 .debug_rnglists list.
func (r *entryReader) rngList(off uint64, out []Range) []Range {
	sec := r.d.sec.RngLists
	if off >= uint64(len(sec)) {
		return out
	}
	n := int(r.f.addrSize)
	b := bin.New(".debug_rnglists", off, sec[off:], r.big)
	base := r.baseAddr
	start := len(out)
	for i := 0; i < maxRangeEntries && b.Err() == nil && len(out) <= r.rangesLeft+start; i++ {
		switch b.U8() {
		case DW_RLE_end_of_list:
			return out
		case DW_RLE_base_addressx:
			base, _ = r.indexedAddr(b.ULEB())
		case DW_RLE_startx_endx:
			lo, ok1 := r.indexedAddr(b.ULEB())
			hi, ok2 := r.indexedAddr(b.ULEB())
			if ok1 && ok2 {
				out = append(out, Range{lo, hi})
			}
		case DW_RLE_startx_length:
			lo, ok := r.indexedAddr(b.ULEB())
			l := b.ULEB()
			if ok {
				out = append(out, Range{lo, lo + l})
			}
		case DW_RLE_offset_pair:
			lo, hi := b.ULEB(), b.ULEB()
			out = append(out, Range{base + lo, base + hi})
		case DW_RLE_base_address:
			base = b.Uint(n)
		case DW_RLE_start_end:
			lo, hi := b.Uint(n), b.Uint(n)
			out = append(out, Range{lo, hi})
		case DW_RLE_start_length:
			lo := b.Uint(n)
			out = append(out, Range{lo, lo + b.ULEB()})
		default:
			return out
		}
	}
	return out
}
