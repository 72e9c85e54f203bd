package symcache

import "unsafe"

// A lookup in a big symcache is a chain of dependent memory reads — the
// bucket index, the block starts, the block's offset, its entries, then one
// location record per frame, a function record per frame and the
// function's name — and each is a cache miss when addresses are spread
// over a file far bigger than the processor's caches. One lookup cannot
// overlap its own misses, but lookups of different addresses can.
// LookupBatch takes a chunk of addresses through each step in turn, and
// while it does the step for one address it prefetches what the same step
// will read for the address a few places ahead. Reads of a step then hit
// the cache, and the computing (decoding a block, walking a chain) overlaps
// the misses of the addresses ahead, where loads alone would keep the
// processor's window full of instructions waiting on the oldest miss.

// batchChunk is how many addresses go through the steps together. The
// state of a chunk stays in the caches between its steps.
const batchChunk = 256

// ahead is how many addresses (or frames) ahead each step prefetches:
// enough misses in flight to cover one miss's latency. On the 264 MB
// symcache of cxx-1024m, 6 was slower and 12 to 32 the same.
const ahead = 12

// prefetchSize is how much of a symcache the records of a chunk must
// likely spread over for LookupBatch to prefetch (see scattered): more
// than the processor's caches hold.
const prefetchSize = 16 << 20

// Batch holds the results of LookupBatch. Its slices are reused by the next
// call, so a Batch that is used again allocates nothing once they have
// grown.
type Batch struct {
	// Frames holds the frames of every address looked up, each address's
	// innermost first.
	Frames []Loc
	// Ends[i] is where the frames of address i end in Frames; they start
	// at Ends[i-1] (0 for the first). An address nothing is known about
	// has no frames.
	Ends []int

	chunk *chunkState
}

// chunkState is what one address of a chunk carries from step to step.
type chunkState struct {
	lo, hi [batchChunk]int32 // blocks to search; lo > hi: not in any block
	blk    [batchChunk]int32 // the block of the address, -1: none
	leaf   [batchChunk]Loc   // the innermost frame; the zero Loc: none

	chain   [batchChunk][chainDepth]uint32 // location indexes, innermost first
	depth   [batchChunk]uint8              // of chain
	tip     [batchChunk]uint32             // the location after chain's last, index+1; 0: none
	walking [batchChunk]int32              // the addresses whose chains go on
}

// chainDepth is how many frames of an address the walk a level at a time
// follows; deeper inline chains (rare) are finished one address at a time,
// without prefetching.
const chainDepth = 16

// LookupBatch looks up every address of addrs, as Lookup and a walk of the
// parents of each would, and stores the frames in b. It allocates nothing
// when b was used before and its slices have room. It is faster than
// Lookup per address when the symcache is much bigger than the
// processor's caches; there it also prefetches the frames' function
// records and names for the caller's Function and Name calls that follow.
func (f *File) LookupBatch(b *Batch, addrs []uint64) { f.lookupBatch(b, addrs, f.scattered) }

// lookupBatch is LookupBatch, prefetching for the chunks of addresses for
// which pf says so.
func (f *File) lookupBatch(b *Batch, addrs []uint64, pf func(chunk []uint64) bool) {
	b.Frames, b.Ends = b.Frames[:0], b.Ends[:0]
	if b.chunk == nil {
		b.chunk = new(chunkState)
	}
	for len(addrs) > 0 {
		n := min(len(addrs), batchChunk)
		f.lookupChunk(b, addrs[:n], canPrefetch && pf(addrs[:n]))
		addrs = addrs[n:]
	}
}

// scattered reports whether the records of addrs are likely spread over
// more of f than the processor's caches hold, judging by the share of f's
// address span the addresses cover. Then prefetching pays; else its calls
// cost more than they save: a quarter to a third more time per address
// for addresses in order in a 264 MB symcache, or for random ones in a
// small symcache.
func (f *File) scattered(addrs []uint64) bool {
	if len(f.data) < prefetchSize || len(f.starts) == 0 {
		return false
	}
	lo, hi := addrs[0], addrs[0]
	for _, a := range addrs {
		lo, hi = min(lo, a), max(hi, a)
	}
	share := float64(hi-lo) / float64(uint64(f.starts[len(f.starts)-1])+1)
	return share*float64(len(f.data)) > prefetchSize
}

// lookupChunk looks up at most batchChunk addresses. Each step is a loop
// from -ahead: with pf, iteration i prefetches what the step will read for
// address i+ahead, which the steps before have made known, and from 0 it
// does the step for address i.
func (f *File) lookupChunk(b *Batch, addrs []uint64, pf bool) {
	s, n := b.chunk, len(addrs)
	for i := -ahead; i < n; i++ {
		if j := i + ahead; pf && j < n {
			if k, ok := f.bucketOf(addrs[j]); ok {
				prefetch(wordAt(f.buckets, k))
			}
		}
		if i >= 0 {
			s.lo[i], s.hi[i] = f.bucket(addrs[i])
		}
	}
	for i := -ahead; i < n; i++ {
		if j := i + ahead; pf && j < n && s.lo[j] <= s.hi[j] {
			prefetch(wordAt(f.starts, uint64(max(s.lo[j]-1, 0))))
		}
		if i >= 0 {
			s.blk[i] = -1
			if s.lo[i] <= s.hi[i] {
				s.blk[i] = int32(f.searchBlock(addrs[i]-f.h.addrBase, int(s.lo[i]), int(s.hi[i])))
			}
		}
	}
	// The block's offset, then its entries: the offsets are prefetched
	// twice as far ahead, to be in the cache when their entries are.
	for i := -2 * ahead; i < n; i++ {
		if j := i + 2*ahead; pf && j < n && s.blk[j] >= 0 {
			prefetch(wordAt(f.offs, uint64(s.blk[j])))
		}
		if j := i + ahead; pf && j >= 0 && j < n && s.blk[j] >= 0 {
			lo, hi := f.blockBytes(int(s.blk[j]))
			lo0, hi1 := byteAt(f.entries, uint64(lo)), byteAt(f.entries, uint64(hi)-1)
			prefetch(lo0)
			if hi1/64 != lo0/64 {
				prefetch(hi1)
			}
		}
		if i < 0 {
			continue
		}
		s.leaf[i] = Loc{}
		if k := int(s.blk[i]); k >= 0 && (f.blockOK(k) || f.checkBlock(k)) {
			if l, ok := f.decodeBlock(k, addrs[i]-f.h.addrBase); ok {
				s.leaf[i] = l
			}
		}
	}

	// The inline chains, a level at a time: a parent's record is rarely
	// near its child's, so each level's reads are misses of their own.
	// walking lists the addresses whose chains go on; tip[i] is the
	// location after the last of address i's chain, index+1.
	walking := s.walking[:0]
	for i := range n {
		s.depth[i] = 0
		if l := s.leaf[i]; l.f != nil {
			s.tip[i] = l.i + 1
			walking = append(walking, int32(i))
		}
	}
	for d := 0; d < chainDepth && len(walking) > 0; d++ {
		more := walking[:0]
		for w := -ahead; w < len(walking); w++ {
			if v := w + ahead; pf && v < len(walking) {
				prefetch(f.locs.at(s.tip[walking[v]]-1, 0))
			}
			if w < 0 {
				continue
			}
			i := walking[w]
			c := s.tip[i] - 1
			s.chain[i][d] = c
			s.depth[i] = uint8(d + 1)
			if s.tip[i] = f.parent(c); s.tip[i] != 0 {
				more = append(more, i)
			}
		}
		walking = more
	}
	first := len(b.Frames)
	for i := range n {
		if d := s.depth[i]; d > 0 {
			b.Frames = append(b.Frames, s.leaf[i])
			for _, c := range s.chain[i][1:d] {
				b.Frames = append(b.Frames, f.loc(c))
			}
			for c := s.tip[i]; c != 0; c = f.parent(c - 1) {
				b.Frames = append(b.Frames, f.loc(c-1)) // deeper than chainDepth
			}
		}
		b.Ends = append(b.Ends, len(b.Frames))
	}
	if !pf {
		return
	}

	// The frames' function records, and then their names, for the
	// caller's Function and Name.
	frames := b.Frames[first:]
	for i := -ahead; i < len(frames); i++ {
		if j := i + ahead; j < len(frames) {
			if fn, ok := frames[j].Function(); ok {
				prefetch(f.funcs.at(fn.i, fnName))
			}
		}
		if i >= 0 {
			if fn, ok := frames[i].Function(); ok {
				prefetch(byteAt(f.strs, uint64(f.funcs.get(fn.i, fnName))))
			}
		}
	}
}

// byteAt returns the address of b[off] for prefetch, which off may be past.
func byteAt(b []byte, off uint64) uintptr {
	return uintptr(unsafe.Pointer(unsafe.SliceData(b))) + uintptr(off)
}

// wordAt returns the address of s[i] for prefetch, which i may be past.
func wordAt(s []uint32, i uint64) uintptr {
	return uintptr(unsafe.Pointer(unsafe.SliceData(s))) + uintptr(i)*4
}
