package demangle_test

import (
	"path/filepath"
	"testing"

	"github.com/backtrail/backtrail/demangle"
)

// FuzzDemangle checks Demangle over all schemes and styles: it never
// panics (not even inside the C++ demangler, whose panics Demangle
// recovers), returns names of no known scheme (and Swift names, in the LLVM
// style) unchanged,
// writes at most 64 KiB more than its input, and is deterministic. Its seeds
// are the test table and samples of the symbol lists of this package and
// of package rust.
func FuzzDemangle(f *testing.F) {
	for _, tt := range demangleTests {
		f.Add(tt.name)
	}
	for _, d := range knownDiffs {
		f.Add(d.name)
	}
	for _, l := range cxxLists {
		for i, name := range readList(f, l.file) {
			if i%50 == 0 || l.make == nil {
				f.Add(name)
			}
		}
	}
	for _, file := range []string{"crafted.txt", "v0.txt.gz", "legacy.txt.gz"} {
		for i, name := range readList(f, filepath.Join("..", "rust", "testdata", file)) {
			if i%20 == 0 || file == "crafted.txt" {
				f.Add(name)
			}
		}
	}
	f.Add(explodingV0(40))
	f.Fuzz(func(t *testing.T, name string) {
		panics := demangle.CxxPanics()
		scheme := demangle.SchemeOf(name)
		for _, style := range []demangle.Style{demangle.Full, demangle.LLVM, demangle.Short} {
			out := demangle.Demangle(name, style)
			if n := demangle.CxxPanics(); n != panics {
				t.Fatalf("the C++ demangler panicked on %q (%v)", name, style)
			}
			if (scheme == demangle.None || scheme == demangle.Swift && style == demangle.LLVM) && out != name {
				t.Fatalf("Demangle(%q, %v) = %q; a %v name must be returned unchanged", name, style, out, scheme)
			}
			if out != name && len(out) > len(name)+1<<16 {
				t.Fatalf("Demangle(%q, %v) wrote %d bytes", name, style, len(out))
			}
			if out != name && out == "" {
				t.Fatalf("Demangle(%q, %v) = \"\"", name, style)
			}
			if style == demangle.LLVM {
				if again := demangle.Demangle(name, style); again != out {
					t.Fatalf("Demangle(%q, %v) = %q, then %q", name, style, out, again)
				}
			}
		}
	})
}
