package swift_test

import (
	"bufio"
	"os"
	"strings"
	"testing"

	"github.com/backtrail/backtrail/demangle/swift"
	"github.com/backtrail/backtrail/internal/testenv"
)

// fixtureSymbols is the hard case: every entry of manglings.txt that
// demangles, which spans current ($s), Swift 4.x ($S, _T0) and legacy (_T)
// manglings, from short type names to long specializations and compiler
// test corner cases.
func fixtureSymbols(b *testing.B) []string {
	var syms []string
	for _, fx := range readFixtures(b, "testdata/manglings.txt") {
		if !fx.unchanged {
			syms = append(syms, fx.mangled)
		}
	}
	return syms
}

// typicalSymbols reads testdata/typical-symbols.txt: the symbols of a real
// app plus the function-like entries of manglings.txt (the file says how
// they were chosen).
func typicalSymbols(tb testing.TB) []string {
	tb.Helper()
	f, err := os.Open("testdata/typical-symbols.txt")
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	var syms []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if line := sc.Text(); line != "" && !strings.HasPrefix(line, "#") {
			syms = append(syms, line)
		}
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	return syms
}

// TestTypicalSymbols checks that every benchmark symbol demangles, so that
// the benchmark measures demanglings and not early failures.
func TestTypicalSymbols(t *testing.T) {
	syms := typicalSymbols(t)
	if len(syms) < 100 {
		t.Fatalf("typical-symbols.txt: %d symbols, want at least 100", len(syms))
	}
	for _, s := range syms {
		if _, err := swift.Demangle(s); err != nil {
			t.Errorf("Demangle(%q): %v", s, err)
		}
		if _, err := swift.DemangleSimplified(s); err != nil {
			t.Errorf("DemangleSimplified(%q): %v", s, err)
		}
	}
}

// benchDemangle demangles syms over and over and reports symbols per second
// of wall time and nanoseconds of CPU time per symbol. The CPU figure is
// the one to quote: the build machines are shared, and wall time there says
// more about the neighbours than about the demangler.
func benchDemangle(b *testing.B, syms []string, demangle func(string) (string, error)) {
	b.ReportAllocs()
	n := 0
	cpu0 := testenv.CPUTime()
	for b.Loop() {
		for _, s := range syms {
			if _, err := demangle(s); err != nil {
				b.Fatalf("%q: %v", s, err)
			}
		}
		n += len(syms)
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "symbols/s")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n), "ns/symbol")
	if cpu := testenv.CPUTime(); cpu > cpu0 {
		b.ReportMetric(float64(cpu-cpu0)/float64(n), "cpu-ns/symbol")
	}
}

func BenchmarkDemangle(b *testing.B) {
	benchDemangle(b, fixtureSymbols(b), swift.Demangle)
}

func BenchmarkDemangleSimplified(b *testing.B) {
	benchDemangle(b, fixtureSymbols(b), swift.DemangleSimplified)
}

func BenchmarkDemangleTypical(b *testing.B) {
	benchDemangle(b, typicalSymbols(b), swift.Demangle)
}

func BenchmarkDemangleTypicalSimplified(b *testing.B) {
	benchDemangle(b, typicalSymbols(b), swift.DemangleSimplified)
}

func BenchmarkDemangleShort(b *testing.B) {
	benchDemangle(b, []string{"$s4main3FooV3baryyF"}, swift.Demangle)
}
