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
	slots []atomic.Pointer[T]
	mask  uint64

	// stale, if set, reports entries that no lookup can match any more;
	// an insert takes their slots as if empty. Such a table may then hold
	// one key twice, so it suits only caches whose equal entries are
	// interchangeable, not interning.
	stale func(*T) bool
}

const tableProbes = 8

// newTable returns a table with size slots; size must be a power of two.
func newTable[T any](size int) *table[T] {
	return &table[T]{slots: make([]atomic.Pointer[T], size), mask: uint64(size - 1)}
}

// slot returns the i'th slot probed for hash h.
func (t *table[T]) slot(h uint64, i int) *atomic.Pointer[T] {
	return &t.slots[(h+uint64(i))&t.mask]
}

// find returns the entry under h that match accepts, or nil.
func (t *table[T]) find(h uint64, match func(*T) bool) *T {
	for i := 0; i < tableProbes; i++ {
		if e := t.slot(h, i).Load(); e != nil && match(e) {
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
	t.slot(h, 0).Store(v)
	return v
}

// tryInsert is insert without eviction: it returns nil when every probed
// slot holds another key.
func (t *table[T]) tryInsert(h uint64, v *T, match func(*T) bool) *T {
	for i := 0; i < tableProbes; i++ {
		p := t.slot(h, i)
		for {
			cur := p.Load()
			if cur != nil && match(cur) {
				return cur
			}
			if cur == nil || t.stale != nil && t.stale(cur) {
				if p.CompareAndSwap(cur, v) {
					return v
				}
				continue // someone filled it; look at what they put
			}
			break
		}
	}
	return nil
}
