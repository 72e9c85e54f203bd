package symbolize

import "github.com/backtrail/backtrail/symcache"

// locSet is an insertion-ordered set of locations. Locations are the most
// numerous records of a symcache, so they are deduplicated with a flat
// open-addressing table rather than a map; each slot keeps part of its
// location's hash, so a probe reads a location only when that matches.
type locSet struct {
	locs  []symcache.Location
	slots []uint64 // hash<<32 | index+1, 0 when empty; length a power of two
}

// reset empties the set, with room for about n locations.
func (s *locSet) reset(n int) {
	s.locs = s.locs[:0]
	size := 1024
	for size < 2*n {
		size *= 2
	}
	if len(s.slots) < size {
		s.slots = make([]uint64, size)
		return
	}
	clear(s.slots)
}

// loc returns the index of l in the set, adding it.
func (s *locSet) loc(l symcache.Location) uint32 {
	if 2*(len(s.locs)+1) > len(s.slots) {
		s.grow()
	}
	mask := uint64(len(s.slots) - 1)
	hash := hashLoc(&l)
	tag := hash &^ (1<<32 - 1)
	for h := hash & mask; ; h = (h + 1) & mask {
		v := s.slots[h]
		if v == 0 {
			i := uint32(len(s.locs))
			s.locs = append(s.locs, l)
			s.slots[h] = tag | uint64(i+1)
			return i
		}
		if v&^(1<<32-1) == tag && s.locs[uint32(v)-1] == l {
			return uint32(v) - 1
		}
	}
}

func (s *locSet) grow() {
	n := 2 * len(s.slots)
	s.slots = make([]uint64, n)
	mask := uint64(n - 1)
	for i := range s.locs {
		hash := hashLoc(&s.locs[i])
		h := hash & mask
		for s.slots[h] != 0 {
			h = (h + 1) & mask
		}
		s.slots[h] = hash&^(1<<32-1) | uint64(i+1)
	}
}

// hashLoc mixes all of l's fields; the table uses the low bits to place
// it and keeps the high bits as its tag.
func hashLoc(l *symcache.Location) uint64 {
	h := uint64(l.File)<<32 | uint64(l.Line)
	h ^= (uint64(l.Function)<<32 | uint64(l.Parent)) * 0x9e3779b97f4a7c15
	h ^= uint64(l.Column)<<16 | uint64(l.Discriminator)
	h *= 0xff51afd7ed558ccd
	return h ^ h>>29
}
