package symcache

import (
	"slices"
	"testing"
)

// TestChunks checks indexing and slicing across chunk boundaries against a
// plain slice.
func TestChunks(t *testing.T) {
	var l chunks[int]
	var want []int
	const n = 3<<chunkBits + 5
	for i := range n {
		if got := l.add(i * 7); got != uint32(i) {
			t.Fatalf("add %d: index %d", i, got)
		}
		want = append(want, i*7)
		if i == 9 && cap(l.c[0]) > firstChunk {
			t.Fatalf("10 records take room for %d", cap(l.c[0]))
		}
	}
	if l.len() != n {
		t.Fatalf("len %d, want %d", l.len(), n)
	}
	for _, i := range []int{0, 1, firstChunk - 1, firstChunk, 1<<chunkBits - 1, 1 << chunkBits, n - 1} {
		if *l.at(uint32(i)) != want[i] {
			t.Errorf("at(%d) = %d, want %d", i, *l.at(uint32(i)), want[i])
		}
	}
	for _, r := range [][2]int{{0, 0}, {0, n}, {5, 6}, {1<<chunkBits - 3, 1<<chunkBits + 3}, {1, 2<<chunkBits + 1}, {2 << chunkBits, n}, {n, n}} {
		var got []int
		l.slice(r[0], r[1], func(s []int) { got = append(got, s...) })
		if !slices.Equal(got, want[r[0]:r[1]]) {
			t.Errorf("slice(%d, %d): %d records, want %d", r[0], r[1], len(got), r[1]-r[0])
		}
	}
}
