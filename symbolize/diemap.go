package symbolize

import "slices"

// dieMap is the address → innermost subroutine map of one unit, ordered by
// start address. It is kept in sorted blocks: DWARF lists subroutines in
// source order, not address order, so most insertions land in the middle,
// and a single sorted slice would make building it quadratic.
type dieMap struct {
	blocks [][]dieEntry // each sorted; every block's entries precede the next block's
}

const dieBlock = 64 // a block splits when it reaches twice this

func (m *dieMap) reset() {
	for i := range m.blocks {
		m.blocks[i] = m.blocks[i][:0]
	}
	m.blocks = m.blocks[:0]
}

// floor returns the position of the entry with the greatest start at or
// below addr; ok is false when there is none.
func (m *dieMap) floor(addr uint64) (b, i int, ok bool) {
	b, _ = slices.BinarySearchFunc(m.blocks, addr, func(blk []dieEntry, a uint64) int {
		if blk[0].lo <= a {
			return -1
		}
		return 1
	})
	if b == 0 {
		return 0, 0, false
	}
	b--
	blk := m.blocks[b]
	i, _ = slices.BinarySearchFunc(blk, addr, func(e dieEntry, a uint64) int {
		if e.lo <= a {
			return -1
		}
		return 1
	})
	return b, i - 1, true
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
			m.blocks = append(m.blocks, make([]dieEntry, 0, 2*dieBlock))
		}
		b, i = 0, -1
	}
	m.blocks[b] = slices.Insert(m.blocks[b], i+1, e)
	if blk := m.blocks[b]; len(blk) >= 2*dieBlock {
		tail := make([]dieEntry, len(blk)-dieBlock, 2*dieBlock)
		copy(tail, blk[dieBlock:])
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
