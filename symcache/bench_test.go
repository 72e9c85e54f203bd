package symcache_test

import (
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/backtrail/backtrail/debugfile"
	"github.com/backtrail/backtrail/symbolize"
	"github.com/backtrail/backtrail/symcache"
)

// realCache builds the symcache of testdata/sentry-symbolic/linux/crash.debug
// (a C++ program's DWARF, from getsentry/symbolic's fixtures) with the
// production builder.
func realCache(tb testing.TB) *symcache.File {
	tb.Helper()
	f, err := debugfile.Open(filepath.Join("..", "testdata", "sentry-symbolic", "linux", "crash.debug"))
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
// or one per range in address order (wrapping around).
func lookupAddrs(sc *symcache.File, n int, random bool) []uint64 {
	nr := sc.NumRanges()
	lo, _, _, _ := sc.Range(0)
	hi, _, _, _ := sc.Range(nr - 1)
	rng := rand.New(rand.NewPCG(1, 2))
	addrs := make([]uint64, n)
	for i := range addrs {
		if random {
			addrs[i] = lo + rng.Uint64N(hi-lo)
		} else {
			addrs[i], _, _, _ = sc.Range(i % nr)
		}
	}
	return addrs
}

// BenchmarkLookup measures one symbolication: Lookup and the walk of the
// inline chain with file and function names (walk, shared with
// TestLookupNoAllocs).
func BenchmarkLookup(b *testing.B) {
	sc := realCache(b)
	_, _, locs, ranges := sc.Counts()
	b.Logf("%d ranges, %d locations, %d bytes", ranges, locs, sc.Size())
	for _, mode := range []struct {
		name   string
		random bool
	}{{"random", true}, {"sequential", false}} {
		b.Run(mode.name, func(b *testing.B) {
			addrs := lookupAddrs(sc, 1<<16, mode.random)
			b.ReportAllocs()
			i, sum := 0, 0
			for b.Loop() {
				sum += walk(sc, addrs[i&(len(addrs)-1)])
				i++
			}
			if sum == 0 {
				b.Fatal("found nothing")
			}
		})
	}
}
