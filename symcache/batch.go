package symcache

// A lookup in a big symcache is a chain of dependent memory reads — the
// bucket index, the block starts, the block's offset, its entries, then one
// location record per frame and a function record per frame — and each is
// a cache miss when addresses are spread over a file far bigger than the
// processor's caches. One lookup cannot overlap its own misses, but lookups
// of different addresses can: LookupBatch takes a group of addresses
// through each step together, so that the group's reads of one step are
// independent and the processor has them in flight at once.

// batchLanes is how many addresses go through the steps together: enough
// independent reads to keep the memory system busy, few enough that one
// step's reads of all lanes fit in the processor's reorder window.
const batchLanes = 16

// laneDepth is how many frames of an address the grouped walk follows;
// deeper inline chains (rare) are finished one address at a time.
const laneDepth = 16

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

	// sink receives the values read only to bring records into the cache,
	// so that the compiler keeps those reads.
	sink uint32
}

// LookupBatch looks up every address of addrs, as Lookup and a walk of the
// parents of each would, and stores the frames in b. It allocates nothing
// when b's slices have room. It is faster than Lookup per address when the
// symcache is much bigger than the processor's caches, and the frames'
// records are in the cache for the caller's File, Function and Name calls
// that follow.
func (f *File) LookupBatch(b *Batch, addrs []uint64) {
	b.Frames, b.Ends = b.Frames[:0], b.Ends[:0]
	for len(addrs) > 0 {
		n := min(len(addrs), batchLanes)
		f.lookupGroup(b, addrs[:n])
		addrs = addrs[n:]
	}
}

func (f *File) lookupGroup(b *Batch, addrs []uint64) {
	var (
		lo, hi [batchLanes]int32 // blocks to search; lo > hi: not in any block
		blk    [batchLanes]int32 // the block of the address, -1: none
		leaf   [batchLanes]Loc
		chain  [batchLanes][laneDepth]uint32 // location indexes, innermost first
		depth  [batchLanes]int
		next   [batchLanes]uint32 // the location after chain's last, index+1; 0: none
	)
	for j, a := range addrs {
		lo[j], hi[j] = f.bucket(a)
	}
	for j, a := range addrs {
		blk[j] = -1
		if lo[j] <= hi[j] {
			if k := f.searchBlock(a-f.h.addrBase, int(lo[j]), int(hi[j])); k >= 0 && (f.blockOK(k) || f.checkBlock(k)) {
				blk[j] = int32(k)
			}
		}
	}
	for _, k := range blk[:len(addrs)] {
		if k >= 0 {
			lo, hi := f.blockBytes(int(k))
			b.sink += uint32(f.entries[lo]) + uint32(f.entries[hi-1])
		}
	}
	for j, a := range addrs {
		if blk[j] >= 0 {
			if l, ok := f.decodeBlock(int(blk[j]), a-f.h.addrBase); ok {
				leaf[j], next[j] = l, l.i+1
			}
		}
	}
	for d := 0; d < laneDepth; d++ {
		walking := false
		for j := range addrs {
			if c := next[j]; c != 0 {
				chain[j][d] = c - 1
				depth[j] = d + 1
				next[j] = f.parent(c - 1)
				walking = true
			}
		}
		if !walking {
			break
		}
	}
	for j := range addrs {
		for _, i := range chain[j][:depth[j]] {
			if fn := f.locs.get(i, locFunction); fn-1 < f.h.nFuncs {
				b.sink += f.funcs.get(fn-1, fnName)
			}
		}
	}
	for j := range addrs {
		if depth[j] > 0 {
			b.Frames = append(b.Frames, leaf[j])
			for _, i := range chain[j][1:depth[j]] {
				b.Frames = append(b.Frames, f.loc(i))
			}
			for c := next[j]; c != 0; c = f.parent(c - 1) {
				b.Frames = append(b.Frames, f.loc(c-1))
			}
		}
		b.Ends = append(b.Ends, len(b.Frames))
	}
}
