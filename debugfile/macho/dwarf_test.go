package macho_test

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/backtrail/backtrail/debugfile/macho"
)

func TestDWARFSection(t *testing.T) {
	data := readFile(t, testdataPath("crash.dsym"))
	f, err := macho.NewFile(data)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	// The __DWARF sections llvm-objdump-14 lists for this file.
	for _, name := range []string{
		"debug_line", "debug_pubnames", "debug_pubtypes", "debug_ranges", "debug_loc",
		"debug_aranges", "debug_info", "debug_abbrev", "debug_str",
		"apple_names", "apple_namespaces", "apple_types", "apple_objc",
		".debug_info",
	} {
		d, err := f.DWARFSection(name)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		machoName := "__" + strings.TrimPrefix(name, ".")
		if len(machoName) > 16 {
			machoName = machoName[:16]
		}
		s := f.Section("__DWARF", machoName)
		if len(d) == 0 || uint64(len(d)) != s.Size || &d[0] != &data[s.Offset] {
			t.Errorf("%s: %d bytes, not the %d bytes of %s at %#x", name, len(d), s.Size, machoName, s.Offset)
		}
	}
	// llvm-objdump-14: __debug_info at offset 237147, size 0x31f05.
	if d, _ := f.DWARFSection("debug_info"); len(d) != 0x31f05 || &d[0] != &data[237147] {
		t.Errorf("debug_info: %d bytes", len(d))
	}
	for _, name := range []string{"debug_str_offsets", "debug_rnglists", "zebra", ""} {
		if _, err := f.DWARFSection(name); !errors.Is(err, macho.ErrNoSection) {
			t.Errorf("%q: have %v, want ErrNoSection", name, err)
		}
	}
}

// TestDWARFSectionNames checks the mapping of DWARF 5 names onto 16-byte
// Mach-O section names, and which segment wins.
func TestDWARFSectionNames(t *testing.T) {
	names := []struct{ dwarf, macho string }{
		{"debug_str_offsets", "__debug_str_offs"},
		{"debug_line_str", "__debug_line_str"},
		{"debug_rnglists", "__debug_rnglists"},
		{"debug_loclists", "__debug_loclists"},
		{"debug_addr", "__debug_addr"},
		{"debug_names", "__debug_names"},
		{"apple_names", "__apple_names"},
		{"apple_namespaces", "__apple_namespac"},
	}
	mb := &machoBuilder{is64: true, cpu: macho.CPU_TYPE_ARM64, typ: macho.MH_DSYM}
	for _, n := range names {
		mb.sections = append(mb.sections, testSection{seg: "__DWARF", name: n.macho, data: []byte(n.dwarf)})
	}
	mb.sections = append(mb.sections,
		testSection{seg: "__OTHER", name: "__debug_info", data: []byte("other")},
		testSection{seg: "__DWARF", name: "__debug_info", data: []byte("dwarf")},
		testSection{seg: "__OTHER", name: "__debug_abbrev", data: []byte("abbrev")},
	)
	f, err := macho.NewFile(mb.build())
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range append(names, struct{ dwarf, macho string }{"debug_info", "dwarf"}) {
		want := n.dwarf
		if n.dwarf == "debug_info" {
			want = "dwarf" // __DWARF wins over an earlier __OTHER
		}
		if d, err := f.DWARFSection(n.dwarf); string(d) != want || err != nil {
			t.Errorf("%s: have %q, %v; want %q", n.dwarf, d, err, want)
		}
	}
	if d, err := f.DWARFSection("debug_abbrev"); string(d) != "abbrev" || err != nil {
		t.Errorf("debug_abbrev outside __DWARF: have %q, %v", d, err)
	}
}

// zlibSection returns the contents of a __zdebug section: "ZLIB", the
// big-endian uncompressed size, and the zlib stream.
func zlibSection(size uint64, stream []byte) []byte {
	b := binary.BigEndian.AppendUint64([]byte("ZLIB"), size)
	return append(b, stream...)
}

func compress(t testing.TB, data []byte) []byte {
	var buf bytes.Buffer
	w := zlib.NewWriter(&buf)
	w.Write(data)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// zdebugFile rewrites overlapping_funcs.dsym so that __debug_info is
// compressed: the section becomes __zdebug_info, and its new contents are
// appended to the file and pointed to by the section header. It returns the
// new file and the original __debug_info.
func zdebugFile(t testing.TB) (data, want []byte) {
	data = readFile(t, testdataPath("overlapping_funcs.dsym"))
	f, err := macho.NewFile(data)
	if err != nil {
		t.Fatal(err)
	}
	s := f.Section("__DWARF", "__debug_info")
	want, err = s.Data()
	if err != nil || len(want) == 0 {
		t.Fatalf("__debug_info: %v", err)
	}
	want = bytes.Clone(want)
	// The section_64 header: sectname[16] segname[16] addr size offset ...
	hdr := bytes.Index(data, append(pad16("__debug_info"), pad16("__DWARF")...))
	if hdr < 0 {
		t.Fatal("no __debug_info section header")
	}
	z := zlibSection(uint64(len(want)), compress(t, want))
	off := (len(data) + 7) &^ 7
	data = append(data, make([]byte, off-len(data))...)
	data = append(data, z...)
	copy(data[hdr:], pad16("__zdebug_info"))
	binary.LittleEndian.PutUint64(data[hdr+40:], uint64(len(z)))
	binary.LittleEndian.PutUint32(data[hdr+48:], uint32(off))
	return data, want
}

func TestZdebug(t *testing.T) {
	data, want := zdebugFile(t)
	f, err := macho.NewFile(data)
	if err != nil {
		t.Fatal(err)
	}
	if f.Section("__DWARF", "__debug_info") != nil || f.Section("__DWARF", "__zdebug_info") == nil {
		t.Fatal("rewrite did not rename the section")
	}
	if !f.HasDWARF() {
		t.Error("HasDWARF false with __zdebug_info")
	}
	d, err := f.DWARFSection("debug_info")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(d, want) {
		t.Fatalf("decompressed %d bytes differ from the original %d", len(d), len(want))
	}
	if within(data, d) {
		t.Error("decompressed data lies in the input")
	}
	// Decompressed once: later calls return the same bytes.
	d2, err := f.DWARFSection("debug_info")
	if err != nil || &d2[0] != &d[0] {
		t.Errorf("second call: %v, same bytes %v", err, err == nil && &d2[0] == &d[0])
	}
	// Other sections are still plain.
	if abbrev, err := f.DWARFSection("debug_abbrev"); err != nil || !within(data, abbrev) {
		t.Errorf("debug_abbrev: %v", err)
	}
	if err := f.Close(); err != nil {
		t.Error(err)
	}
}

func TestZdebugConcurrent(t *testing.T) {
	data, want := zdebugFile(t)
	f, err := macho.NewFile(data)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	const n = 8
	results := make([][]byte, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			d, err := f.DWARFSection("debug_info")
			if err != nil {
				t.Error(err)
			}
			results[i] = d
		})
	}
	wg.Wait()
	for i, d := range results {
		if !bytes.Equal(d, want) || &d[0] != &results[0][0] {
			t.Errorf("goroutine %d got different bytes", i)
		}
	}
}

// TestZdebugErrors checks the declared-size bound and the stream checks.
func TestZdebugErrors(t *testing.T) {
	plain := bytes.Repeat([]byte("DWARF data "), 1000) // 11000 bytes
	stream := compress(t, plain)
	corrupt := bytes.Clone(stream)
	corrupt[len(corrupt)-1] ^= 0xff // Adler-32 checksum
	for _, tt := range []struct {
		name    string
		content []byte
		want    string // "" for success
	}{
		{"ok", zlibSection(uint64(len(plain)), stream), ""},
		{"empty", zlibSection(0, compress(t, nil)), ""},
		{"4 GiB + 1", zlibSection(4<<30+1, stream), "implausible uncompressed size"},
		{"huge", zlibSection(1<<63, stream), "implausible uncompressed size"},
		{"ratio", zlibSection(uint64(len(stream))*64+64<<10+1, stream), "implausible uncompressed size"},
		{"short", zlibSection(uint64(len(plain))+1, stream), "zlib stream ends after 0x2af8 bytes"},
		{"long", zlibSection(uint64(len(plain))-1, stream), "zlib stream is longer than the declared size"},
		{"checksum", zlibSection(uint64(len(plain)), corrupt), "checksum"},
		{"truncated", zlibSection(uint64(len(plain)), stream[:len(stream)/2]), "zlib stream ends"},
		{"not zlib", zlibSection(100, []byte("not a zlib stream")), "zlib: invalid header"},
		{"no header", []byte("ZLIX\x00\x00\x00\x00\x00\x00\x00\x10"), "no ZLIB header"},
		{"short header", []byte("ZLIB\x00\x00\x00"), "no ZLIB header"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			mb := &machoBuilder{
				is64: true, cpu: macho.CPU_TYPE_X86_64, typ: macho.MH_DSYM,
				sections: []testSection{{seg: "__DWARF", name: "__zdebug_info", data: tt.content}},
			}
			f, err := macho.NewFile(mb.build())
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			d, err := f.DWARFSection("debug_info")
			if tt.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				if tt.name == "ok" && !bytes.Equal(d, plain) {
					t.Errorf("decompressed %d bytes differ", len(d))
				}
				return
			}
			var fe *macho.FormatError
			if !errors.As(err, &fe) || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "__DWARF,__zdebug_info") {
				t.Fatalf("have %v, want a FormatError with %q", err, tt.want)
			}
			// The error is kept: a second call fails the same way.
			if _, err2 := f.DWARFSection("debug_info"); err2 == nil || err2.Error() != err.Error() {
				t.Errorf("second call: %v", err2)
			}
		})
	}
}

// TestZdebugSmallRatio checks that a tiny section may expand more than the
// ratio allows, up to the 64 KiB floor.
func TestZdebugSmallRatio(t *testing.T) {
	plain := make([]byte, 60<<10)
	mb := &machoBuilder{
		is64: true, cpu: macho.CPU_TYPE_X86_64, typ: macho.MH_DSYM,
		sections: []testSection{{seg: "__DWARF", name: "__zdebug_str", data: zlibSection(uint64(len(plain)), compress(t, plain))}},
	}
	f, err := macho.NewFile(mb.build())
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if d, err := f.DWARFSection("debug_str"); err != nil || !bytes.Equal(d, plain) {
		t.Errorf("have %d bytes, %v", len(d), err)
	}
}
