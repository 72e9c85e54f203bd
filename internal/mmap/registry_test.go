package mmap

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestRegistry registers regions in random order, finds each by any of
// its addresses, and unregisters them in another order, the registry
// staying sorted by address throughout.
func TestRegistry(t *testing.T) {
	backing := make([]byte, 64*100)
	var rs [][]byte
	for i := range 64 {
		rs = append(rs, backing[i*100:i*100+60]) // gaps between regions
	}
	rng := rand.New(rand.NewPCG(1, 2))
	sorted := func() bool {
		return slices.IsSortedFunc(mapped.regions, func(a, b []byte) int { return int(base(a)) - int(base(b)) })
	}
	for _, i := range rng.Perm(len(rs)) {
		register(rs[i])
		if !sorted() {
			t.Fatalf("registry out of order after registering region %d", i)
		}
	}
	defer func() {
		for _, r := range rs {
			unregister(r)
		}
	}()
	for i, r := range rs {
		for _, off := range []int{0, 30, 59} {
			if j := regionAt(base(r) + uintptr(off)); j < 0 || base(mapped.regions[j]) != base(r) {
				t.Errorf("address %d of region %d found in region %d", off, i, j)
			}
		}
	}
	for n, i := range rng.Perm(len(rs)) {
		unregister(rs[i])
		if !sorted() || len(mapped.regions) != len(rs)-n-1 {
			t.Fatalf("after unregistering region %d: %d regions, sorted %v", i, len(mapped.regions), sorted())
		}
	}
}
