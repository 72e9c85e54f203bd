package symcache

// chunks is an append-only list kept in chunks of fixed size. The
// Builder's tables of names, functions and blocks reach millions of
// records; a slice that size grown by append is copied again and again,
// into memory that must be cleared first, and while the copy runs the
// garbage collector cannot stop the goroutine to scan its stack and spins
// on the other core: in a 1 GB build, 0.8 of 6.2 CPU-seconds (0.5 growing,
// 0.33 spinning). The first chunk alone grows by append, from a few
// records: most builds of one compilation unit (symbolize's lazy index)
// need a few hundred, and three full chunks were a megabyte to clear and
// fault in for each. A pointer from at is therefore valid only until the
// next add.
type chunks[T any] struct {
	c [][]T
	n int
}

const (
	chunkBits  = 13 // 8192 records a chunk
	firstChunk = 64 // the first chunk's records before it first grows
)

func (l *chunks[T]) len() int { return l.n }

// at returns record i, which must exist.
func (l *chunks[T]) at(i uint32) *T { return &l.c[i>>chunkBits][i&(1<<chunkBits-1)] }

// add appends v and returns its index.
func (l *chunks[T]) add(v T) uint32 {
	if l.n&(1<<chunkBits-1) == 0 {
		size := 1 << chunkBits
		if l.n == 0 {
			size = firstChunk
		}
		l.c = append(l.c, make([]T, 0, size))
	}
	last := &l.c[len(l.c)-1]
	*last = append(*last, v)
	l.n++
	return uint32(l.n - 1)
}

// slice calls yield with the records from lo up to hi, a chunk's part at a
// time.
func (l *chunks[T]) slice(lo, hi int, yield func([]T)) {
	for lo < hi {
		c := l.c[lo>>chunkBits]
		end := min(hi-lo+lo&(1<<chunkBits-1), len(c))
		yield(c[lo&(1<<chunkBits-1) : end])
		lo += end - lo&(1<<chunkBits-1)
	}
}
