package dwarf

import (
	"container/heap"
	"slices"

	"github.com/backtrail/backtrail/internal/bin"
)

// UnitRange assigns the addresses [Lo, Hi) to unit number Unit (an index
// into Units).
type UnitRange struct {
	Lo, Hi uint64
	Unit   int
}

// UnitRanges returns which unit owns each address, sorted and without
// overlaps, computed the way llvm-symbolizer does: from .debug_aranges for
// the units it describes (a set that names a unit's offset describes it,
// even with no ranges: the unit has no code) and from each other unit's
// own ranges; where units overlap, the range continues with the unit that
// owned the addresses just below, else goes to the unit with the lowest
// offset. Cost: one pass over .debug_aranges plus the root entry of each
// unit it does not describe.
func (d *Data) UnitRanges() ([]UnitRange, error) {
	type endpoint struct {
		addr  uint64
		unit  int
		start bool
	}
	// Each unit's ranges are kept apart first, so that the endpoints are
	// allocated once at their number: grown by append, they took a third
	// of this function's time (1 GB corpus: 220,000 endpoints, 44 → 28 ms).
	per := make([][]Range, len(d.units))
	described := make(map[int]bool)
	d.readAranges(func(unitOff uint64) {
		if u := d.unitContaining(unitOff); u != nil && u.Offset == unitOff {
			described[u.index] = true
		}
	}, func(unitOff, lo, hi uint64) {
		if u := d.unitContaining(unitOff); u != nil {
			per[u.index] = append(per[u.index], Range{lo, hi})
		}
	})
	var ui UnitInfo
	budget := d.rangeBudget()
	for i := range d.units {
		u := &d.units[i]
		if described[i] || u.Type == DW_UT_type || u.Type == DW_UT_split_type {
			continue
		}
		r, err := d.newEntryReader(u)
		if err != nil {
			return nil, err
		}
		ui.Ranges = ui.Ranges[:0]
		r.rangesLeft = budget
		if _, err := r.readRoot(&ui); err != nil {
			return nil, err
		}
		budget = r.rangesLeft
		per[i] = append(per[i], ui.Ranges...) // after any from a set naming an offset inside it
	}
	n := 0
	for _, rs := range per {
		n += len(rs)
	}
	eps := make([]endpoint, 0, 2*n)
	for unit, rs := range per {
		for _, r := range rs {
			if r.Lo < r.Hi {
				eps = append(eps, endpoint{r.Lo, unit, true}, endpoint{r.Hi, unit, false})
			}
		}
	}
	slices.SortStableFunc(eps, func(a, b endpoint) int {
		switch {
		case a.addr < b.addr:
			return -1
		case a.addr > b.addr:
			return 1
		}
		return 0
	})
	var out []UnitRange
	// The units covering the current address: how many ranges of each,
	// and a min-heap of the units with a count above zero (stale entries
	// are dropped when they surface). Each endpoint costs O(log n), so
	// many overlapping ranges cannot make this quadratic.
	count := make([]int32, len(d.units))
	covering := 0
	var low unitHeap
	prev := ^uint64(0)
	for _, e := range eps {
		if prev < e.addr && covering > 0 {
			for count[low[0]] == 0 {
				heap.Pop(&low)
			}
			if n := len(out); n > 0 && out[n-1].Hi == prev && count[out[n-1].Unit] > 0 {
				out[n-1].Hi = e.addr
			} else {
				out = append(out, UnitRange{prev, e.addr, low[0]})
			}
		}
		if e.start {
			if count[e.unit]++; count[e.unit] == 1 {
				heap.Push(&low, e.unit)
			}
			covering++
		} else if count[e.unit] > 0 {
			count[e.unit]--
			covering--
		}
		prev = e.addr
	}
	return out, nil
}

// unitHeap is a min-heap of unit indexes (container/heap).
type unitHeap []int

func (h unitHeap) Len() int           { return len(h) }
func (h unitHeap) Less(i, j int) bool { return h[i] < h[j] }
func (h unitHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *unitHeap) Push(x any)        { *h = append(*h, x.(int)) }
func (h *unitHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// readAranges calls set for each set of .debug_aranges with the offset of
// the unit it names, and fn for each of the set's address ranges.
// Malformed sets end the walk; what was read before stays valid.
func (d *Data) readAranges(set func(unitOff uint64), fn func(unitOff, lo, hi uint64)) {
	sec := d.sec.Aranges
	b := bin.New(".debug_aranges", 0, sec, d.big)
	for b.Len() > 0 && b.Err() == nil {
		start := b.Pos()
		length := uint64(b.U32())
		dwarf64 := length == 0xffffffff
		if dwarf64 {
			length = b.U64()
		}
		if b.Err() != nil || length > uint64(b.Len()) {
			return
		}
		end := b.Pos() + int(length)
		b.U16() // version
		var unitOff uint64
		if dwarf64 {
			unitOff = b.U64()
		} else {
			unitOff = uint64(b.U32())
		}
		addrSize := int(b.U8())
		b.U8() // segment selector size
		if b.Err() != nil || addrSize != 4 && addrSize != 8 {
			return
		}
		set(unitOff)
		// Tuples are aligned to twice the address size from the set start.
		tuple := 2 * addrSize
		if pad := (b.Pos() - start) % tuple; pad != 0 {
			b.Skip(tuple - pad)
		}
		for b.Pos()+tuple <= end && b.Err() == nil {
			addr, n := b.Uint(addrSize), b.Uint(addrSize)
			if addr == 0 && n == 0 {
				break
			}
			fn(unitOff, addr, addr+n)
		}
		b.Seek(end)
	}
}
