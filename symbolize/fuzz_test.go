package symbolize_test

import (
	"os"
	"testing"

	"github.com/backtrail/backtrail/debugfile"
	"github.com/backtrail/backtrail/internal/fixture"
	"github.com/backtrail/backtrail/symbolize"
	"github.com/backtrail/backtrail/symcache"
)

// FuzzBuildObject feeds whole object files through what the server does
// with an uploaded debug file: parse it, build its symcache, read the
// symcache back and look addresses up. The seeds are the debug files of
// the project's C program, compiled by clang-14 (DWARF 5; DWARF 4 with
// zlib-compressed sections; a Mach-O dSYM) and by gcc, so that mutations
// land in real debug information. Hostile input may fail with
// an error anywhere, but must not panic or hang, and whatever is built
// must parse.
func FuzzBuildObject(f *testing.F) {
	for _, s := range []fixture.Spec{
		{Lang: "c", Compiler: "clang", Opt: 2, DWARF: 5},
		{Lang: "c", Compiler: "clang", Opt: 2, DWARF: 4, Compress: "zlib"},
		{Lang: "c", Compiler: "gcc", Opt: 1},
		{Lang: "macho-c", Compiler: "clang", Opt: 2, Arch: "arm64"},
	} {
		data, err := os.ReadFile(fixture.Build(f, s).DWARFPath)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := debugfile.NewFile(data, "fuzz")
		if err != nil {
			return
		}
		defer file.Close()
		for _, o := range file.Objects {
			out, err := symbolize.BuildObject(o, o, symbolize.BuildOptions{Workers: 2})
			if err != nil {
				continue
			}
			sc, err := symcache.Parse(out)
			if err != nil {
				t.Fatalf("BuildObject wrote a symcache that Parse rejects: %v", err)
			}
			n := 0
			for s := range sc.Ranges() {
				for l, ok := sc.Lookup(s.Start); ok; l, ok = l.Parent() {
					_ = l.File()
					if fn, ok := l.Function(); ok {
						_ = fn.Name()
					}
				}
				if n++; n == 1000 {
					break
				}
			}
		}
	})
}
