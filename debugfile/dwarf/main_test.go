package dwarf_test

import (
	"bytes"
	"debug/elf"
	"debug/macho"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/backtrail/backtrail/debugfile/dwarf"
	"github.com/backtrail/backtrail/internal/fixture"
)

func TestMain(m *testing.M) {
	code := m.Run()
	fixture.Cleanup()
	os.Exit(code)
}

// tinyFiles are the committed executables in testdata/tiny, built from
// tiny.c and rare.c there with (gcc 12.2.0-14+deb12u1, clang 14.0.6,
// GNU ld 2.40):
//
//	F="-O2 -g -ffreestanding -nostdlib -static -fno-asynchronous-unwind-tables -Wl,--build-id=none"
//	gcc $F -gdwarf-2 -o gcc-dwarf2.elf tiny.c rare.c
//	gcc $F -gdwarf-4 -o gcc-dwarf4.elf tiny.c rare.c
//	gcc $F -gdwarf-5 -gdwarf64 -o gcc-dwarf5-64.elf tiny.c rare.c
//	clang-14 $F -gdwarf-5 -o clang-dwarf5.elf tiny.c rare.c
//
// They are small (7–10 KB) so that fuzz seeds and exhaustive corruption
// tests stay fast; TestTinyMatchesLLVM checks them against llvm-dwarfdump.
var tinyFiles = []string{"gcc-dwarf2.elf", "gcc-dwarf4.elf", "gcc-dwarf5-64.elf", "clang-dwarf5.elf"}

func tinyPath(name string) string { return filepath.Join("testdata", "tiny", name) }

// loadSections reads the DWARF sections of an ELF or Mach-O file with the
// standard library, independently of package debugfile. Compressed ELF
// sections are decompressed.
func loadSections(t testing.TB, path string) (dwarf.Sections, bool) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var s dwarf.Sections
	fields := map[string]*[]byte{
		"info": &s.Info, "abbrev": &s.Abbrev, "line": &s.Line, "line_str": &s.LineStr, "str": &s.Str,
		"str_offsets": &s.StrOffsets, "str_offs": &s.StrOffsets, "addr": &s.Addr, "ranges": &s.Ranges, "rnglists": &s.RngLists, "aranges": &s.Aranges,
	}
	if bytes.HasPrefix(data, []byte("\x7fELF")) {
		f, err := elf.NewFile(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		for _, sec := range f.Sections {
			name, ok := bytes.CutPrefix([]byte(sec.Name), []byte(".debug_"))
			if !ok || fields[string(name)] == nil {
				continue
			}
			b, err := sec.Data()
			if err != nil {
				t.Fatalf("%s: %s: %v", path, sec.Name, err)
			}
			*fields[string(name)] = b
		}
		return s, f.ByteOrder.String() == "BigEndian"
	}
	f, err := macho.NewFile(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	for _, sec := range f.Sections {
		name, ok := bytes.CutPrefix([]byte(sec.Name), []byte("__debug_"))
		if !ok || fields[string(name)] == nil {
			continue
		}
		b, err := sec.Data()
		if err != nil {
			t.Fatalf("%s: %s: %v", path, sec.Name, err)
		}
		*fields[string(name)] = b
	}
	return s, f.ByteOrder.String() == "BigEndian"
}

// TestConcurrentReads reads every unit of one Data from several goroutines
// at once, as symbolize does; the results must equal a sequential read.
// (The Data's abbreviation cache is shared; run with -race.)
func TestConcurrentReads(t *testing.T) {
	for _, name := range tinyFiles {
		s, big := loadSections(t, tinyPath(name))
		summarize := func(d *dwarf.Data) string {
			var b strings.Builder
			var ui dwarf.UnitInfo
			var lt dwarf.LineTable
			for i := range d.Units() {
				if err := d.ReadUnit(&d.Units()[i], &ui); err != nil {
					t.Error(err)
					return ""
				}
				if err := d.ReadLineTable(&ui, &lt); err != nil {
					t.Error(err)
					return ""
				}
				for j := range ui.Subroutines {
					n, _ := ui.SubroutineName(j)
					fmt.Fprintf(&b, "%s %v %d\n", n, ui.SubRanges[ui.Subroutines[j].Ranges[0]:ui.Subroutines[j].Ranges[1]], len(lt.Rows))
				}
			}
			rs, err := d.UnitRanges()
			if err != nil {
				t.Error(err)
			}
			fmt.Fprintf(&b, "%v\n", rs)
			return b.String()
		}
		d, err := dwarf.New(s, big)
		if err != nil {
			t.Fatal(err)
		}
		want := summarize(d)
		d, _ = dwarf.New(s, big) // fresh caches
		var wg sync.WaitGroup
		have := make([]string, 4)
		for g := range have {
			wg.Go(func() { have[g] = summarize(d) })
		}
		wg.Wait()
		for g := range have {
			if have[g] != want {
				t.Errorf("%s: goroutine %d read differently:\n%s\nwant\n%s", name, g, have[g], want)
			}
		}
	}
}
