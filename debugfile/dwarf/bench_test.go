package dwarf_test

import (
	"os"
	"testing"

	"github.com/backtrail/backtrail/debugfile/dwarf"
)

// BenchmarkReadUnit reads every unit of the file named by
// BACKTRAIL_BENCH_OBJ (an ELF or Mach-O file with uncompressed DWARF) the
// way a symcache build does: the unit's subroutines, its line table, and
// the names of the subroutines that own code. It reports the throughput
// in bytes of .debug_info.
func BenchmarkReadUnit(b *testing.B) {
	path := os.Getenv("BACKTRAIL_BENCH_OBJ")
	if path == "" {
		b.Skip("BACKTRAIL_BENCH_OBJ not set")
	}
	s, big := loadSections(b, path)
	d, err := dwarf.New(s, big)
	if err != nil {
		b.Fatal(err)
	}
	var ui dwarf.UnitInfo
	var lt dwarf.LineTable
	b.SetBytes(int64(len(s.Info)))
	b.ReportAllocs()
	for b.Loop() {
		for i := range d.Units() {
			if err := d.ReadUnit(&d.Units()[i], &ui); err != nil {
				b.Fatal(err)
			}
			if err := d.ReadLineTable(&ui, &lt); err != nil {
				b.Fatal(err)
			}
			for j := range ui.Subroutines {
				if r := ui.Subroutines[j].Ranges; r[0] < r[1] {
					ui.SubroutineName(j)
					ui.SubroutineDecl(j)
				}
			}
		}
	}
}

// BenchmarkUnitRanges reads the unit headers of the file named by
// BACKTRAIL_BENCH_OBJ and finds which unit owns which addresses, afresh
// each time (a Data caches the abbreviation tables it parses): what a lazy
// index pays to open a module before its first lookup (backtrail dump
// opens libc's debug file this way on every run).
func BenchmarkUnitRanges(b *testing.B) {
	path := os.Getenv("BACKTRAIL_BENCH_OBJ")
	if path == "" {
		b.Skip("BACKTRAIL_BENCH_OBJ not set")
	}
	s, big := loadSections(b, path)
	b.ReportAllocs()
	for b.Loop() {
		d, err := dwarf.New(s, big)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := d.UnitRanges(); err != nil {
			b.Fatal(err)
		}
	}
}
