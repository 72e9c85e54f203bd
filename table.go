package backtrail

import "sync/atomic"

// table is a fixed-size, lock-free hash table for interning: stacks, trail
// nodes and audit counters. Readers probe up to tableProbes slots from the
// home slot with atomic loads; writers claim an empty slot with a
// compare-and-swap. When every probed slot is taken, the insert overwrites
// the home slot, evicting its entry. An evicted entry stays valid for whoever
// holds it (the GC keeps it alive); the table just forgets it, so memory is
// bounded by the table size and a later identical key makes a new entry.
//
// A table is safe for concurrent use. It never blocks and allocates only in
// newTable.
type table[T any] struct {
	slots []tableSlot[T]
	mask  uint64

	// stale, if set, reports entries that no lookup can match any more;
	// an insert of the same hash takes their slot. Such a table may then
	// hold one key twice, so it suits only caches whose equal entries are
	// interchangeable, not interning.
	stale func(*T) bool
}

// tableSlot is an entry and the hash it was stored under. Probes compare
// the hash before they read the entry: a probe past entries of other keys
// then reads the one or two cache lines of its slots instead of up to
// tableProbes entries, each a cache miss in a table that has filled up
// (BenchmarkFramesWarm). The hash is written after the entry, and is 0
// until then: a probe reads the entry of a slot whose hash is 0, so that
// an insert racing another of the same key finds that entry rather than
// adding a second. The hash lies beside its entry, not in an array of its
// own: with two arrays a cached Frames took 34 ns instead of 16 (17 this
// way).
type tableSlot[T any] struct {
	hash  atomic.Uint64 // 0 until its entry is written, and while one replaces it
	entry atomic.Pointer[T]
}

// slotHash is the hash a slot stores for h: h, but never 0, which marks a
// hash not yet written.
func slotHash(h uint64) uint64 { return max(h, 1) }

// holds reports whether sl's entry may be under slot hash h.
func (sl *tableSlot[T]) holds(h uint64) bool {
	s := sl.hash.Load()
	return s == h || s == 0
}

const tableProbes = 8

// newTable returns a table with size slots; size must be a power of two.
func newTable[T any](size int) *table[T] {
	return &table[T]{slots: make([]tableSlot[T], size), mask: uint64(size - 1)}
}

// index returns the index of the i'th slot probed for hash h.
func (t *table[T]) index(h uint64, i int) uint64 { return (h + uint64(i)) & t.mask }

// find returns the entry under h that match accepts, or nil.
func (t *table[T]) find(h uint64, match func(*T) bool) *T {
	h = slotHash(h)
	for i := 0; i < tableProbes; i++ {
		sl := &t.slots[t.index(h, i)]
		if !sl.holds(h) {
			continue
		}
		if e := sl.entry.Load(); e != nil && match(e) {
			return e
		}
	}
	return nil
}

// insert stores v under h unless match finds an existing entry first, and
// returns the entry that ends up representing the key.
func (t *table[T]) insert(h uint64, v *T, match func(*T) bool) *T {
	if r := t.tryInsert(h, v, match); r != nil {
		return r
	}
	h = slotHash(h)
	sl := &t.slots[t.index(h, 0)]
	sl.hash.Store(0)
	sl.entry.Store(v)
	sl.hash.Store(h)
	return v
}

// tryInsert is insert without eviction: it returns nil when every probed
// slot holds another key.
func (t *table[T]) tryInsert(h uint64, v *T, match func(*T) bool) *T {
	h = slotHash(h)
	for i := 0; i < tableProbes; i++ {
		sl := &t.slots[t.index(h, i)]
		for {
			cur := sl.entry.Load()
			if cur != nil && sl.holds(h) && match(cur) {
				return cur
			}
			if cur == nil || t.stale != nil && sl.hash.Load() == h && t.stale(cur) {
				if sl.entry.CompareAndSwap(cur, v) {
					if cur == nil { // a stale entry's hash is h already
						sl.hash.Store(h)
					}
					return v
				}
				continue // someone filled it; look at what they put
			}
			break
		}
	}
	return nil
}
