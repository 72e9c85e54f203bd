package symcache

// Range entries (docs/symcache.md §6.2): each starts with a byte whose low
// four bits are the address delta from the previous entry (0: a ULEB128
// delta follows, or, for a block's first entry, none) and whose high four
// bits say which of line, column, discriminator and location change; the
// changes follow in that order.

// entryState is what a range entry sets: its start and the innermost
// frame of the addresses it covers.
type entryState struct {
	addr   uint64 // relative to the address base in files, absolute while building
	line   uint32
	column uint32
	discr  uint32
	loc    uint32 // location index + 1; 0: nothing is known
}

// appendEntry appends the encoding of cur, which follows prev in its block
// (first: cur starts the block, prev is the zero state).
func appendEntry(dst []byte, first bool, prev, cur *entryState) []byte {
	h := byte(0)
	delta := cur.addr - prev.addr
	if !first && delta < 16 {
		h = byte(delta)
	}
	if cur.line != prev.line {
		h |= entLine
	}
	if cur.column != prev.column {
		h |= entColumn
	}
	if cur.discr != prev.discr {
		h |= entDiscr
	}
	if cur.loc != prev.loc {
		h |= entLoc
	}
	dst = append(dst, h)
	if !first && h&0x0f == 0 {
		dst = appendULEB(dst, delta)
	}
	if h&entLine != 0 {
		dst = appendSLEB(dst, int64(cur.line)-int64(prev.line))
	}
	if h&entColumn != 0 {
		dst = appendULEB(dst, uint64(cur.column))
	}
	if h&entDiscr != 0 {
		dst = appendULEB(dst, uint64(cur.discr))
	}
	if h&entLoc != 0 {
		dst = appendSLEB(dst, int64(cur.loc)-int64(prev.loc))
	}
	return dst
}

func appendULEB(b []byte, v uint64) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

func appendSLEB(b []byte, v int64) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v == 0 && c&0x40 == 0 || v == -1 && c&0x40 != 0 {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}

// maxLEB bounds every LEB128 number of an entry: 35 bits hold any delta
// between two 32-bit values.
const maxLEB = 5

// cursor decodes the entries of one block in place.
type cursor struct {
	b []byte // the block's entries
	p int    // offset of the next entry in b
	entryState
	bad string // why the bytes at p are malformed
}

// next decodes the entry at c.p into c; first says it is the block's first.
// It reports false at the end of the block, and also, with c.bad set, when
// the entry is malformed: a number overruns the block or its 35 bits, a
// value leaves 32 bits, the address does not increase, or a first entry
// has an address delta.
func (c *cursor) next(first bool) bool {
	if c.p >= len(c.b) {
		return false
	}
	p := c.p
	h := c.b[p]
	p++
	switch d := uint64(h & 0x0f); {
	case first && d != 0:
		c.bad = "first entry of a block has an address delta"
		return false
	case first:
	case d != 0:
		c.addr += d
	default:
		if d, p = c.uleb(p); p < 0 {
			return false
		}
		if d == 0 {
			c.bad = "address delta 0"
			return false
		}
		c.addr += d
	}
	if h&entLine != 0 {
		if c.line, p = c.apply(p, c.line); p < 0 {
			return false
		}
	}
	if h&entColumn != 0 {
		if c.column, p = c.value(p); p < 0 {
			return false
		}
	}
	if h&entDiscr != 0 {
		if c.discr, p = c.value(p); p < 0 {
			return false
		}
	}
	if h&entLoc != 0 {
		if c.loc, p = c.apply(p, c.loc); p < 0 {
			return false
		}
	}
	c.p = p
	return true
}

// uleb decodes a ULEB128 number at p, returning it and the offset after
// it, or p < 0 when it is malformed.
func (c *cursor) uleb(p int) (uint64, int) {
	var v uint64
	for i := 0; i < maxLEB && p < len(c.b); i++ {
		b := c.b[p]
		p++
		v |= uint64(b&0x7f) << (7 * i)
		if b < 0x80 {
			return v, p
		}
	}
	c.bad = "LEB128 number overruns its block or 35 bits"
	return 0, -1
}

// value decodes a ULEB128 number that must fit 32 bits.
func (c *cursor) value(p int) (uint32, int) {
	v, p := c.uleb(p)
	if p >= 0 && v > uint64(None) {
		c.bad = "value exceeds 32 bits"
		return 0, -1
	}
	return uint32(v), p
}

// apply decodes an SLEB128 delta at p and adds it to v, which must stay
// within 32 bits.
func (c *cursor) apply(p int, v uint32) (uint32, int) {
	var d int64
	for i := 0; i < maxLEB && p < len(c.b); i++ {
		b := c.b[p]
		p++
		d |= int64(b&0x7f) << (7 * i)
		if b < 0x80 {
			if b&0x40 != 0 {
				d |= -1 << (7 * (i + 1))
			}
			n := int64(v) + d
			if n < 0 || n > int64(None) {
				c.bad = "value leaves 32 bits"
				return 0, -1
			}
			return uint32(n), p
		}
	}
	c.bad = "LEB128 number overruns its block or 35 bits"
	return 0, -1
}
