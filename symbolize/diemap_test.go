package symbolize

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"
)

// refDIEMap is LLVM's DWARFUnit::updateAddressDieMap written plainly over a
// sorted slice: the entry holding a range's start ends there and resumes
// after the range, and the range replaces an entry starting where it does.
type refDIEMap []dieEntry

func (r *refDIEMap) set(e dieEntry) {
	i, found := slices.BinarySearchFunc(*r, e.lo, func(x dieEntry, lo uint64) int {
		return cmp.Compare(x.lo, lo)
	})
	if found {
		(*r)[i] = e
		return
	}
	*r = slices.Insert(*r, i, e)
}

func (r *refDIEMap) add(e dieEntry) {
	i := len(*r) - 1
	for i >= 0 && (*r)[i].lo > e.lo {
		i--
	}
	if i >= 0 && e.lo < (*r)[i].hi {
		f := (*r)[i]
		if e.lo > f.lo {
			(*r)[i].hi = e.lo
		}
		if e.hi < f.hi {
			r.set(dieEntry{e.hi, f.hi, f.sub})
		}
	}
	r.set(e)
}

// TestDIEMap checks the map against the plain version on random ranges:
// nested, overlapping, touching, repeated and out of order, across many
// blocks.
func TestDIEMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var m dieMap
	for round := range 300 {
		m.reset()
		var ref refDIEMap
		span := uint64(1 + rng.IntN(4000))
		n := rng.IntN(1500)
		var stack []dieEntry // ranges to nest in, as DWARF's depth-first order gives
		for i := range n {
			var lo, hi uint64
			if len(stack) > 0 && rng.IntN(4) > 0 {
				p := stack[rng.IntN(len(stack))]
				lo = p.lo + rng.Uint64N(p.hi-p.lo)
				hi = lo + 1 + rng.Uint64N(p.hi-lo)
			} else {
				lo = rng.Uint64N(span)
				hi = lo + 1 + rng.Uint64N(span/8+1)
			}
			e := dieEntry{lo, hi, int32(i)}
			m.add(e)
			ref.add(e)
			stack = append(stack, e)
		}
		var got []dieEntry
		m.all(func(e dieEntry, _ uint64, _ bool) { got = append(got, e) })
		if !slices.Equal(got, []dieEntry(ref)) {
			t.Fatalf("round %d, %d ranges: map differs from the plain version:\n got %v\nwant %v", round, n, got, ref)
		}
	}
}
