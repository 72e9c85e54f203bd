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

// add inserts the range e of a subroutine as LLVM's
// DWARFUnit::updateAddressDieMap does: the entry whose range holds e.lo
// ends there and, when it reaches beyond e.hi, resumes at e.hi (replacing
// an entry that starts there); e replaces an entry that starts at e.lo.
// Ranges mostly nest in the one added before, with no entry starting
// inside them, and then one search serves all three changes.
func (m *dieMap) add(e dieEntry) {
	b, i, ok := m.floor(e.lo)
	if !ok {
		m.set(e)
		return
	}
	f := m.at(b, i)
	if e.lo >= f.hi {
		m.put(b, i, e)
		return
	}
	if next, ok := m.next(b, i); ok && next.lo <= e.hi {
		tail := dieEntry{e.hi, f.hi, f.sub}
		if e.lo > f.lo {
			f.hi = e.lo
		}
		if e.hi < tail.hi {
			m.set(tail)
		}
		m.set(e)
		return
	}
	ins := []dieEntry{e, {e.hi, f.hi, f.sub}}
	if e.hi >= f.hi {
		ins = ins[:1]
	}
	if e.lo == f.lo {
		*f = e
		m.insert(b, i+1, ins[1:]...)
		return
	}
	f.hi = e.lo
	m.insert(b, i+1, ins...)
}

// next returns the entry after position (b, i).
func (m *dieMap) next(b, i int) (dieEntry, bool) {
	switch {
	case i+1 < len(m.blocks[b]):
		return m.blocks[b][i+1], true
	case b+1 < len(m.blocks):
		return m.blocks[b+1][0], true
	}
	return dieEntry{}, false
}

// set stores e, replacing the entry that starts at the same address.
func (m *dieMap) set(e dieEntry) {
	b, i, ok := m.floor(e.lo)
	if !ok {
		if len(m.blocks) == 0 {
			m.blocks = append(m.blocks, m.newBlock())
		}
		m.insert(0, 0, e)
		return
	}
	m.put(b, i, e)
}

// put stores e at the position after (b, i), the floor of e.lo, or at
// (b, i) when that entry starts at e.lo too.
func (m *dieMap) put(b, i int, e dieEntry) {
	if m.blocks[b][i].lo == e.lo {
		m.blocks[b][i] = e
		return
	}
	m.insert(b, i+1, e)
}

// insert inserts es at position i of block b, splitting the block when it
// grows too big.
func (m *dieMap) insert(b, i int, es ...dieEntry) {
	if len(es) == 0 {
		return
	}
	m.blocks[b] = slices.Insert(m.blocks[b], i, es...)
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
