package symcache_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/backtrail/backtrail/debugfile"
	"github.com/backtrail/backtrail/internal/testenv"
	"github.com/backtrail/backtrail/symbolize"
	"github.com/backtrail/backtrail/symcache"
)

// buildCache builds the symcache of the debug file at path with the
// production builder.
func buildCache(tb testing.TB, path string) *symcache.File {
	tb.Helper()
	f, err := debugfile.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	o := f.Objects[0]
	data, err := symbolize.BuildObject(o, o, symbolize.BuildOptions{})
	if err != nil {
		tb.Fatal(err)
	}
	return mustParse(tb, data)
}

// realCache builds the symcache of testdata/sentry-symbolic/linux/crash.debug
// (a C++ program's DWARF, from getsentry/symbolic's fixtures).
func realCache(tb testing.TB) *symcache.File {
	return buildCache(tb, filepath.Join("..", "testdata", "sentry-symbolic", "linux", "crash.debug"))
}

// TestRealCache checks a production-built cache like a fuzzed one, and that
// walking it allocates nothing.
func TestRealCache(t *testing.T) {
	sc := realCache(t)
	checkFile(t, sc)
	addrs := lookupAddrs(sc, 1000, false)
	if n := testing.AllocsPerRun(10, func() {
		for _, a := range addrs {
			walk(sc, a)
		}
	}); n != 0 {
		t.Errorf("%v allocations per run", n)
	}
}

// lookupAddrs returns n addresses in the cache's ranges: uniformly random,
// or range starts in address order (wrapping around), as a batch of sorted
// addresses is looked up.
func lookupAddrs(sc *symcache.File, n int, random bool) []uint64 {
	var starts []uint64
	for s := range sc.Ranges() {
		starts = append(starts, s.Start)
	}
	lo, hi := starts[0], starts[len(starts)-1]
	rng := rand.New(rand.NewPCG(1, 2))
	addrs := make([]uint64, n)
	for i := range addrs {
		if random {
			addrs[i] = lo + rng.Uint64N(hi-lo)
		} else {
			addrs[i] = starts[i%len(starts)]
		}
	}
	return addrs
}

// BenchmarkLookup measures symbolication: Lookup and the walk of the whole
// inline chain with file, line, column and function name of every frame
// (walk, shared with TestLookupNoAllocs), one address at a time, and the
// same through LookupBatch in batches of batchSize addresses, on the cache
// of crash.debug and, when BACKTRAIL_BENCH_OBJ names one, on the cache of
// a big file (a debug file, built first, or a symcache). It reports CPU
// time per address and addresses per second on one core.
func BenchmarkLookup(b *testing.B) {
	caches := map[string]*symcache.File{"crash.debug": realCache(b)}
	if path := os.Getenv("BACKTRAIL_BENCH_OBJ"); path != "" {
		sc, err := symcache.Open(path)
		if err != nil {
			sc = buildCache(b, path)
		}
		caches[filepath.Base(path)] = sc
	}
	const batchSize = 256
	for name, sc := range caches {
		_, _, locs, ranges := sc.Counts()
		b.Logf("%s: %d ranges, %d locations, %d bytes", name, ranges, locs, sc.Size())
		for _, mode := range []struct {
			name   string
			random bool
		}{{"random", true}, {"sorted", false}} {
			addrs := lookupAddrs(sc, 1<<20, mode.random)
			b.Run(name+"/"+mode.name, func(b *testing.B) {
				b.ReportAllocs()
				i, sum := 0, 0
				cpu0 := testenv.CPUTime()
				for b.Loop() {
					sum += walk(sc, addrs[i&(len(addrs)-1)])
					i++
				}
				reportLookups(b, cpu0, b.N, sum)
			})
			b.Run(name+"/"+mode.name+"-batch", func(b *testing.B) {
				b.ReportAllocs()
				var batch symcache.Batch
				i, sum := 0, 0
				cpu0 := testenv.CPUTime()
				for b.Loop() {
					sc.LookupBatch(&batch, addrs[i:i+batchSize])
					for _, l := range batch.Frames {
						sum += visit(l)
					}
					i = (i + batchSize) & (len(addrs) - 1)
				}
				reportLookups(b, cpu0, b.N*batchSize, sum)
			})
		}
	}
}

// reportLookups reports CPU time per address (ns/op counts batches in
// batch mode) and addresses per second, from n addresses looked up since
// CPU time cpu0.
func reportLookups(b *testing.B, cpu0 time.Duration, n, sum int) {
	if cpu := testenv.CPUTime(); cpu0 != 0 {
		// Other processes on a shared machine inflate wall time far
		// more than this.
		b.ReportMetric(float64(cpu-cpu0)/float64(n), "cpu-ns/addr")
	}
	if sum == 0 {
		b.Fatal("found nothing")
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "lookups/s")
}

// BenchmarkRandomLines measures what bounds random lookups on a big
// symcache: the machine's cost of reading one byte of a random cache line
// of a buffer the size of the BACKTRAIL_BENCH_OBJ symcache (264 MB without
// one), alone (lanes=1: each read's address depends on the one before) and
// with 2–32 such chains interleaved, whose reads can be in flight together.
// ns/op is per line read.
func BenchmarkRandomLines(b *testing.B) {
	size := 264 << 20
	if path := os.Getenv("BACKTRAIL_BENCH_OBJ"); path != "" {
		if st, err := os.Stat(path); err == nil {
			size = int(st.Size())
		}
	}
	buf := make([]byte, size)
	for i := range buf {
		buf[i] = byte(i * 7)
	}
	for _, lanes := range []int{1, 2, 4, 8, 16, 32} {
		b.Run(fmt.Sprintf("lanes=%d", lanes), func(b *testing.B) {
			x := make([]uint64, lanes)
			for j := range x {
				x[j] = rand.Uint64()
			}
			n := uint64(len(buf))
			for i := 0; i < b.N; i += lanes {
				for j, v := range x {
					v = v*6364136223846793005 + 1442695040888963407
					x[j] = v + uint64(buf[(v>>16)%n])
				}
			}
			if x[0] == 0 {
				b.Log(x[0]) // keeps the reads
			}
		})
	}
}
