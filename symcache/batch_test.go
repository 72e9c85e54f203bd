package symcache_test

import (
	"bytes"
	"testing"

	"github.com/backtrail/backtrail/symcache"
)

// checkBatch checks that LookupBatch answers every address of addrs with
// the frames Lookup and a walk of the parents give, in batches of sizes
// from 1 to a few chunks, prefetching (as for a big symcache) or not.
func checkBatch(t *testing.T, sc *symcache.File, addrs []uint64) {
	t.Helper()
	var want [][]symcache.Loc
	for _, a := range addrs {
		var frames []symcache.Loc
		for l, ok := sc.Lookup(a); ok; l, ok = l.Parent() {
			frames = append(frames, l)
		}
		want = append(want, frames)
	}
	var b symcache.Batch
	for _, size := range []int{1, 3, 16, 17, 40, 300, len(addrs)} {
		for lo := 0; lo < len(addrs); lo += size {
			hi := min(lo+size, len(addrs))
			if size%2 == 0 {
				sc.LookupBatchPrefetching(&b, addrs[lo:hi])
			} else {
				sc.LookupBatch(&b, addrs[lo:hi])
			}
			if len(b.Ends) != hi-lo {
				t.Fatalf("batch of %d addresses: %d ends", hi-lo, len(b.Ends))
			}
			start := 0
			for i, end := range b.Ends {
				got, w := b.Frames[start:end], want[lo+i]
				if len(got) != len(w) {
					t.Fatalf("LookupBatch(%#x): %d frames, Lookup and Parent %d", addrs[lo+i], len(got), len(w))
				}
				for k := range got {
					if got[k] != w[k] {
						t.Fatalf("LookupBatch(%#x) frame %d = location %d line %d, Lookup and Parent give location %d line %d",
							addrs[lo+i], k, got[k].Index(), got[k].Line(), w[k].Index(), w[k].Line())
					}
				}
				start = end
			}
		}
	}
}

// rangeAddrs returns each range's start, the addresses around it and a few
// outside every range.
func rangeAddrs(sc *symcache.File) []uint64 {
	addrs := []uint64{0, 1, 1 << 32, 1<<64 - 1}
	for s := range sc.Ranges() {
		addrs = append(addrs, s.Start-1, s.Start, s.Start+1, s.End-1)
	}
	return addrs
}

func TestLookupBatch(t *testing.T) {
	_, data := sample()
	checkBatch(t, mustParse(t, data), rangeAddrs(mustParse(t, data)))
	checkBatch(t, realCache(t), rangeAddrs(realCache(t)))

	// Inline chains deeper than the lanes follow together.
	b := symcache.NewBuilder(testInfo)
	defer b.Close()
	file := b.File("/src/deep.h")
	parent := symcache.None
	for depth := range 40 {
		fn := b.Function(symcache.Function{Name: "f" + string(rune('A'+depth)), Entry: symcache.NoAddr, DeclFile: symcache.None})
		parent = b.Location(symcache.Location{File: file, Line: uint32(depth + 1), Function: fn, Parent: parent})
		b.Range(symcache.Range{Start: 0x1000 + uint64(depth)*16, Loc: parent, Line: 99})
	}
	var buf bytes.Buffer
	if _, err := b.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	sc := mustParse(t, buf.Bytes())
	addrs := rangeAddrs(sc)
	checkBatch(t, sc, addrs)

	var batch symcache.Batch
	sc.LookupBatch(&batch, addrs)
	if n := len(batch.Frames); n < 40*41/2 {
		t.Fatalf("%d frames for the deep chains", n)
	}
	if n := testing.AllocsPerRun(10, func() { sc.LookupBatch(&batch, addrs) }); n != 0 {
		t.Errorf("LookupBatch allocates %v times with room in its Batch", n)
	}
}
