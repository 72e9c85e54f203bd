package macho_test

import (
	"testing"

	"github.com/backtrail/backtrail/debugfile/macho"
)

// fuzzSeeds returns the seed corpus shared by both fuzz targets: the thin
// testdata files (the first 4 KiB of the bigger ones, which hold their
// headers and load commands), and the hand-built files the other tests use
// (both byte orders and widths with compressed DWARF, compact fat32 and
// fat64 files). Big seeds make the fuzzer slow, since it minimizes every new
// input it keeps.
func fuzzSeeds(f *testing.F) [][]byte {
	var seeds [][]byte
	for _, name := range thinTestdata {
		data := readFile(f, testdataPath(name))
		seeds = append(seeds, data[:min(len(data), 4<<10)])
	}
	for _, big := range []bool{false, true} {
		for _, is64 := range []bool{false, true} {
			seeds = append(seeds, (&machoBuilder{
				big: big, is64: is64, cpu: macho.CPU_TYPE_ARM64, typ: macho.MH_DYLIB, segname: "__TEXT",
				sections: []testSection{
					{seg: "__TEXT", name: "__text", data: []byte{1, 2, 3, 4}},
					{seg: "__DWARF", name: "__zdebug_info", data: zlibSection(11, compress(f, []byte("hello dwarf")))},
				},
				uuid:   make([]byte, 16),
				syms:   []testSymbol{{name: "_f", typ: macho.N_SECT | macho.N_EXT, sect: 1}},
				dylibs: []testDylib{{macho.LC_ID_DYLIB, "libx.dylib"}},
			}).build())
		}
	}
	thin := testdataThin(f, "arm64", "x86_64")
	seeds = append(seeds,
		fat(true, 4, thin["arm64"], thin["x86_64"]),
		fat(false, 4, thin["arm64"], thin["x86_64"]),
		[]byte("\xca\xfe\xba\xbe\x00\x00\x00\x34\x00\x1d\x0a\x00"), // Java class file
	)
	return seeds
}

// FuzzNewFile checks that NewFile never panics and that any File it
// returns keeps the invariants of checkFile: data it hands out lie within
// the input, symbol counts are bounded by the input size, and errors say
// where.
func FuzzNewFile(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := macho.NewFile(data)
		if err != nil {
			checkErr(t, err, macho.ErrNotMachO)
			return
		}
		checkFile(t, data, file)
	})
}

// FuzzNewFatFile checks that NewFatFile never panics, that every arch's
// file is the subslice its record names, and that each thin file keeps the
// invariants of checkFile.
func FuzzNewFatFile(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		ff, err := macho.NewFatFile(data)
		if err != nil {
			checkErr(t, err, macho.ErrNotFat)
			return
		}
		checkFatFile(t, data, ff)
	})
}
