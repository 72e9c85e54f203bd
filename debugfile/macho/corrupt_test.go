package macho_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/backtrail/backtrail/debugfile/macho"
)

// checkErr checks that err is one of the sentinels or a *FormatError that
// names an offset.
func checkErr(t testing.TB, err error, sentinels ...error) {
	t.Helper()
	for _, s := range sentinels {
		if errors.Is(err, s) {
			return
		}
	}
	var fe *macho.FormatError
	if !errors.As(err, &fe) {
		t.Fatalf("error %v (%T) is neither a FormatError nor one of %v", err, err, sentinels)
	}
	if !strings.Contains(err.Error(), "at offset 0x") {
		t.Fatalf("error %q names no offset", err)
	}
}

// dwarfNames are the sections checkFile asks DWARFSection for.
var dwarfNames = []string{"debug_info", "debug_abbrev", "debug_str", "debug_line", "debug_str_offsets", "apple_names"}

// checkFile uses every part of a File made from input and checks the
// invariants that hold for any input: everything the File hands out lies
// within input, counts are bounded by the input size, and errors are
// FormatErrors or documented sentinels.
func checkFile(t testing.TB, input []byte, f *macho.File) {
	t.Helper()
	if !within(input, f.Data()) {
		t.Fatal("file data outside the input")
	}
	if uint32(len(f.Loads)) != f.Ncmds {
		t.Fatalf("%d loads, ncmds %d", len(f.Loads), f.Ncmds)
	}
	var total uint64
	for _, l := range f.Loads {
		total += uint64(len(l.Raw))
		if !within(f.Data(), l.Raw) || len(l.Raw) < 8 {
			t.Fatalf("load command at %#x: %d bytes outside the file", l.Off, len(l.Raw))
		}
	}
	if total > uint64(f.Cmdsz) {
		t.Fatalf("load commands take %d bytes, sizeofcmds %d", total, f.Cmdsz)
	}
	nsect := 0
	for _, s := range f.Segments {
		nsect += len(s.Sections)
		if d, err := s.Data(); err != nil {
			checkErr(t, err)
		} else if !within(f.Data(), d) || uint64(len(d)) != s.FileSize {
			t.Fatalf("segment %q data outside the file", s.Name)
		}
	}
	if nsect != len(f.Sections) {
		t.Fatalf("segments hold %d sections, Sections has %d", nsect, len(f.Sections))
	}
	for _, s := range f.Sections {
		d, err := s.Data()
		switch {
		case err != nil:
			checkErr(t, err)
		case !s.HasData():
			if d != nil {
				t.Fatalf("section %s,%s without data returned %d bytes", s.Seg, s.Name, len(d))
			}
		case !within(f.Data(), d) || uint64(len(d)) != s.Size:
			t.Fatalf("section %s,%s data outside the file", s.Seg, s.Name)
		}
	}
	syms, err := f.Symbols()
	if err != nil {
		checkErr(t, err, macho.ErrNoSymbols)
	} else if len(syms) > len(input)/12 {
		t.Fatalf("%d symbols from %d bytes", len(syms), len(input))
	}
	for _, name := range dwarfNames {
		d, err := f.DWARFSection(name)
		if err != nil {
			checkErr(t, err, macho.ErrNoSection)
			continue
		}
		if !within(input, d) && uint64(len(d)) > max(64*uint64(len(input)), 64<<10) {
			t.Fatalf("%s: %d bytes decompressed from %d bytes of input", name, len(d), len(input))
		}
	}
	f.UUID()
	f.ImageBase()
	f.Platform()
	f.Arch()
	f.HasSymbols()
	f.HasDWARF()
	f.HasUnwindInfo()
	_ = f.Type.String()
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// checkFatFile checks the invariants of a FatFile made from input, and of each
// of its thin files.
func checkFatFile(t testing.TB, input []byte, ff *macho.FatFile) {
	t.Helper()
	if len(ff.Arches) == 0 || len(ff.Arches) > 30 {
		t.Fatalf("%d arches", len(ff.Arches))
	}
	for _, a := range ff.Arches {
		d := a.File.Data()
		if uint64(len(d)) != a.Size || !within(input, d) || (len(d) > 0 && &d[0] != &input[a.Offset]) {
			t.Fatalf("arch %s: file is not input[%#x:+%#x]", macho.ArchName(a.Cpu, a.SubCpu), a.Offset, a.Size)
		}
		checkFile(t, d, a.File)
	}
}

// testdataFiles returns every Mach-O file in testdata, thin and fat.
func testdataFiles(t testing.TB) map[string][]byte {
	files := map[string][]byte{}
	for _, name := range append(thinTestdata, "hello.fat") {
		files[name] = readFile(t, testdataPath(name))
	}
	return files
}

// parseAny parses data as a fat or a thin file and checks it.
func parseAny(t testing.TB, data []byte) {
	t.Helper()
	ff, err := macho.NewFatFile(data)
	if err == nil {
		checkFatFile(t, data, ff)
		return
	}
	checkErr(t, err, macho.ErrNotFat)
	f, err := macho.NewFile(data)
	if err != nil {
		checkErr(t, err, macho.ErrNotMachO)
		return
	}
	checkFile(t, data, f)
}

// offsets returns every offset below dense, then about n more up to end.
func offsets(dense, end, n int) []int {
	var offs []int
	for i := 0; i < min(dense, end); i++ {
		offs = append(offs, i)
	}
	step := max(1, (end-dense)/n)
	for i := dense; i < end; i += step {
		offs = append(offs, i)
	}
	return offs
}

// TestTruncated cuts every test file at many lengths: each prefix is an
// error or a valid file, never a panic.
func TestTruncated(t *testing.T) {
	for name, data := range testdataFiles(t) {
		t.Run(name, func(t *testing.T) {
			dense := 4096
			if testing.Short() || raceEnabled {
				dense = 512
			}
			for _, n := range offsets(dense, len(data), 256) {
				parseAny(t, data[:n:n])
			}
		})
	}
}

// TestTruncatedErrors checks that cutting a file inside its load commands
// is reported at an offset within the cut file.
func TestTruncatedErrors(t *testing.T) {
	data := readFile(t, testdataPath("crash"))
	for _, n := range []int{4, 27, 28, 31, 32, 100, 2183, 2184} { // header 32 bytes, commands end at 2184
		_, err := macho.NewFile(data[:n])
		var fe *macho.FormatError
		if n < 32+2152 {
			if !errors.As(err, &fe) || fe.Off > uint64(n) {
				t.Errorf("cut at %d: %v", n, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("cut at %d, after the load commands: %v", n, err)
		}
	}
}

// TestCorrupted overwrites each byte of the header and load commands in
// turn: each result is an error or a valid file, never a panic.
func TestCorrupted(t *testing.T) {
	for name, data := range testdataFiles(t) {
		t.Run(name, func(t *testing.T) {
			// The header and load commands; for a fat file, the fat header
			// and the first thin file's.
			var end int
			if f, err := macho.NewFile(data); err == nil {
				end = 32 + int(f.Cmdsz)
			} else if ff, err := macho.NewFatFile(data); err == nil {
				end = int(ff.Arches[0].Offset) + 32 + int(ff.Arches[0].File.Cmdsz)
			} else {
				t.Fatal(err)
			}
			if testing.Short() || raceEnabled {
				end = min(end, 256)
			}
			end = min(end, len(data))
			buf := append([]byte(nil), data...)
			for i := range end {
				for _, v := range []byte{0x00, 0xff, data[i] ^ 0x80, data[i] + 1} {
					buf[i] = v
					parseAny(t, buf)
				}
				buf[i] = data[i]
			}
		})
	}
}

// TestCorruptedShared does the same for the headers of the bigger shared
// fixtures.
func TestCorruptedShared(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("slow")
	}
	for _, rel := range thinShared {
		data := readFile(t, sharedFixture(t, rel))
		buf := append([]byte(nil), data...)
		for i := range 2048 {
			buf[i] ^= 0xff
			parseAny(t, buf)
			buf[i] = data[i]
		}
	}
}
