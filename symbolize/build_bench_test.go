package symbolize_test

import (
	"io"
	"os"
	"testing"

	"github.com/backtrail/backtrail/debugfile"
	"github.com/backtrail/backtrail/symbolize"
)

// BenchmarkBuild builds the symcache of the file named by
// BACKTRAIL_BENCH_OBJ (for example a Go toolchain binary with DWARF).
func BenchmarkBuild(b *testing.B) {
	path := os.Getenv("BACKTRAIL_BENCH_OBJ")
	if path == "" {
		b.Skip("BACKTRAIL_BENCH_OBJ not set")
	}
	f, err := debugfile.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	o := f.Objects[0]
	b.ReportAllocs()
	for b.Loop() {
		if err := symbolize.WriteObject(io.Discard, o, o, symbolize.BuildOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}
