package demangle_test

import (
	"path/filepath"
	"testing"

	"github.com/backtrail/backtrail/demangle"
)

// BenchmarkDemangle measures Demangle per scheme and style over real names:
// one op is one name, cycling through samples of the symbol lists.
func BenchmarkDemangle(b *testing.B) {
	checkDemangleTests(b)
	every := func(names []string, n int) []string {
		var out []string
		for i := 0; i < len(names); i += n {
			out = append(out, names[i])
		}
		return out
	}
	var cxx []string
	for _, l := range cxxLists {
		cxx = append(cxx, readList(b, l.file)...)
	}
	rustList := func(file string) []string {
		return readList(b, filepath.Join("..", "rust", "testdata", file))
	}
	for _, s := range []struct {
		scheme demangle.Scheme
		names  []string
	}{
		{demangle.Itanium, every(cxx, 13)},
		{demangle.RustV0, rustList("v0.txt.gz")},
		{demangle.RustLegacy, rustList("legacy.txt.gz")},
		{demangle.Swift, []string{"$s4main3FooV3baryyF", "_$s10Foundation4DataV15_RepresentationOWOy"}},
		{demangle.None, []string{"main", "__libc_start_main", "_start", "memcpy@plt"}},
	} {
		for _, n := range s.names {
			if got := demangle.SchemeOf(n); got != s.scheme {
				b.Fatalf("SchemeOf(%q) = %v, want %v", n, got, s.scheme)
			}
		}
		for _, style := range []demangle.Style{demangle.Full, demangle.LLVM, demangle.Short} {
			b.Run(s.scheme.String()+"/"+style.String(), func(b *testing.B) {
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					demangle.Demangle(s.names[i%len(s.names)], style)
					i++
				}
			})
		}
	}
}
