package swift_test

import (
	"testing"

	"github.com/backtrail/backtrail/demangle/swift"
)

// benchSymbols is a realistic mix: every entry of manglings.txt that
// demangles, which spans current ($s), Swift 4.x ($S, _T0) and legacy (_T)
// manglings, from short type names to long specializations.
func benchSymbols(b *testing.B) []string {
	var syms []string
	for _, fx := range readFixtures(b, "testdata/manglings.txt") {
		if !fx.unchanged {
			syms = append(syms, fx.mangled)
		}
	}
	return syms
}

func BenchmarkDemangle(b *testing.B) {
	syms := benchSymbols(b)
	b.ReportAllocs()
	n := 0
	cpu0 := cpuTime()
	for b.Loop() {
		for _, s := range syms {
			if _, err := swift.Demangle(s); err != nil {
				b.Fatalf("Demangle(%q): %v", s, err)
			}
		}
		n += len(syms)
	}
	reportRate(b, n, cpu0)
}

// reportRate reports symbols per second of wall time, and nanoseconds of
// CPU time per symbol.
func reportRate(b *testing.B, n int, cpu0 int64) {
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "symbols/s")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n), "ns/symbol")
	if cpu := cpuTime(); cpu > cpu0 {
		b.ReportMetric(float64(cpu-cpu0)/float64(n), "cpu-ns/symbol")
	}
}

func BenchmarkDemangleSimplified(b *testing.B) {
	syms := benchSymbols(b)
	b.ReportAllocs()
	n := 0
	cpu0 := cpuTime()
	for b.Loop() {
		for _, s := range syms {
			if _, err := swift.DemangleSimplified(s); err != nil {
				b.Fatalf("DemangleSimplified(%q): %v", s, err)
			}
		}
		n += len(syms)
	}
	reportRate(b, n, cpu0)
}

func BenchmarkDemangleShort(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := swift.Demangle("$s4main3FooV3baryyF"); err != nil {
			b.Fatal(err)
		}
	}
}
