package symbolize

import "slices"

// dieEntry is an entry of the address → innermost subroutine map.
type dieEntry struct {
	lo, hi uint64
	sub    int32
}

// dieMap is the address → innermost subroutine map of one unit, ordered by
// start address. It is kept in sorted blocks: DWARF lists subroutines in
// source order, not address order, so most insertions land in the middle,
// and a single sorted slice would make building it quadratic.
type dieMap struct {
	blocks [][]dieEntry // each sorted; every block's entries precede the next block's
	spare  [][]dieEntry // emptied blocks, for reuse
	last   int          // the block of the last floor, where the next one likely is
}

const dieBlock = 64 // a block splits when it reaches twice this

func (m *dieMap) reset() {
	for _, blk := range m.blocks {
		m.spare = append(m.spare, blk[:0])
	}
	m.blocks = m.blocks[:0]
	m.last = 0
}

func (m *dieMap) newBlock() []dieEntry {
	if n := len(m.spare); n > 0 {
		blk := m.spare[n-1]
		m.spare = m.spare[:n-1]
		return blk
	}
	return make([]dieEntry, 0, 2*dieBlock)
}

// floor returns the position of the entry with the greatest start at or
// below addr; ok is false when there is none. Subroutines nest, so an
// entry is mostly inserted next to the one before: the block of the last
// floor is tried first.
func (m *dieMap) floor(addr uint64) (b, i int, ok bool) {
	if b = m.last; b >= len(m.blocks) || m.blocks[b][0].lo > addr || b+1 < len(m.blocks) && m.blocks[b+1][0].lo <= addr {
		// The last block whose first start is at or below addr.
		lo, hi := 0, len(m.blocks)
		for lo < hi {
			h := int(uint(lo+hi) >> 1)
			if m.blocks[h][0].lo <= addr {
				lo = h + 1
			} else {
				hi = h
			}
		}
		if lo == 0 {
			return 0, 0, false
		}
		b = lo - 1
		m.last = b
	}
	blk := m.blocks[b]
	lo, hi := 0, len(blk)
	for lo < hi {
		h := int(uint(lo+hi) >> 1)
		if blk[h].lo <= addr {
			lo = h + 1
		} else {
			hi = h
		}
	}
	return b, lo - 1, true
}

func (m *dieMap) at(b, i int) *dieEntry { return &m.blocks[b][i] }

// set stores e, replacing the entry that starts at the same address.
func (m *dieMap) set(e dieEntry) {
	b, i, ok := m.floor(e.lo)
	if ok && m.blocks[b][i].lo == e.lo {
		m.blocks[b][i] = e
		return
	}
	if !ok {
		if len(m.blocks) == 0 {
			m.blocks = append(m.blocks, m.newBlock())
		}
		b, i = 0, -1
	}
	m.blocks[b] = slices.Insert(m.blocks[b], i+1, e)
	if blk := m.blocks[b]; len(blk) >= 2*dieBlock {
		tail := append(m.newBlock(), blk[dieBlock:]...)
		m.blocks[b] = blk[:dieBlock]
		m.blocks = slices.Insert(m.blocks, b+1, tail)
	}
}

// all calls fn on every entry in address order, with the next entry's
// start (or none).
func (m *dieMap) all(fn func(e dieEntry, next uint64, hasNext bool)) {
	var prev dieEntry
	have := false
	for _, blk := range m.blocks {
		for _, e := range blk {
			if have {
				fn(prev, e.lo, true)
			}
			prev, have = e, true
		}
	}
	if have {
		fn(prev, 0, false)
	}
}
