package symbolize

import "github.com/backtrail/backtrail/symcache"

// locSet is an insertion-ordered set of locations. Locations are the most
// numerous records of a symcache, so they are deduplicated with a flat
// open-addressing table rather than a map.
type locSet struct {
	locs  []symcache.Location
	slots []uint32 // index+1 into locs, 0 when empty; length a power of two
}

func (s *locSet) reset() {
	s.locs = s.locs[:0]
	clear(s.slots)
}

// loc returns the index of l in the set, adding it.
func (s *locSet) loc(l symcache.Location) uint32 {
	l.Column, l.Discriminator = min(l.Column, 0xffff), min(l.Discriminator, 0xffff)
	if 2*(len(s.locs)+1) > len(s.slots) {
		s.grow()
	}
	mask := uint64(len(s.slots) - 1)
	for h := hashLoc(&l) & mask; ; h = (h + 1) & mask {
		v := s.slots[h]
		if v == 0 {
			i := uint32(len(s.locs))
			s.locs = append(s.locs, l)
			s.slots[h] = i + 1
			return i
		}
		if s.locs[v-1] == l {
			return v - 1
		}
	}
}

func (s *locSet) grow() {
	n := max(1024, 2*len(s.slots))
	s.slots = make([]uint32, n)
	mask := uint64(n - 1)
	for i := range s.locs {
		h := hashLoc(&s.locs[i]) & mask
		for s.slots[h] != 0 {
			h = (h + 1) & mask
		}
		s.slots[h] = uint32(i) + 1
	}
}

func hashLoc(l *symcache.Location) uint64 {
	h := uint64(l.File)<<32 | uint64(l.Line)
	h ^= (uint64(l.Function)<<32 | uint64(l.Parent)) * 0x9e3779b97f4a7c15
	h ^= uint64(l.Column)<<16 | uint64(l.Discriminator)
	h *= 0xff51afd7ed558ccd
	return h ^ h>>29
}
