package elf_test

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/backtrail/backtrail/debugfile/elf"
)

func open(t *testing.T, path string) *elf.File {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func newFile(t *testing.T, data []byte) *elf.File {
	t.Helper()
	f, err := elf.NewFile(data)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// The values below come from `readelf -hlSn -W` (GNU Binutils 2.40) on the
// fixtures; testdata/README.md says where the files came from.

func TestOpenCrash(t *testing.T) {
	f := open(t, "../../testdata/sentry-symbolic/linux/crash")
	want := elf.FileHeader{
		Class: elf.ELFCLASS64, Data: elf.ELFDATA2LSB, Version: elf.EV_CURRENT,
		OSABI: elf.ELFOSABI_NONE, Type: elf.ET_EXEC, Machine: elf.EM_X86_64,
		Entry: 0x401dc0,
	}
	have := f.FileHeader
	have.ByteOrder = nil
	if have != want {
		t.Errorf("header:\nhave %+v\nwant %+v", have, want)
	}
	if len(f.Progs) != 9 || len(f.Sections) != 34 {
		t.Fatalf("%d program headers, %d sections; want 9, 34", len(f.Progs), len(f.Sections))
	}
	progs := []elf.ProgHeader{
		{Type: elf.PT_LOAD, Flags: elf.PF_R | elf.PF_X, Off: 0, Vaddr: 0x400000, Paddr: 0x400000, Filesz: 0x19c82, Memsz: 0x19c82, Align: 0x200000},
		{Type: elf.PT_LOAD, Flags: elf.PF_R | elf.PF_W, Off: 0x19c88, Vaddr: 0x619c88, Paddr: 0x619c88, Filesz: 0x558, Memsz: 0xff0, Align: 0x200000},
		{Type: elf.PT_NOTE, Flags: elf.PF_R, Off: 0x254, Vaddr: 0x400254, Paddr: 0x400254, Filesz: 0x44, Memsz: 0x44, Align: 4},
	}
	for i, j := range []int{2, 3, 5} {
		if have := f.Progs[j].ProgHeader; have != progs[i] {
			t.Errorf("program header %d:\nhave %+v\nwant %+v", j, have, progs[i])
		}
	}
	secs := []elf.SectionHeader{
		{Name: ".interp", Type: elf.SHT_PROGBITS, Flags: elf.SHF_ALLOC, Addr: 0x400238, Offset: 0x238, Size: 0x1c, Addralign: 1},
		{Name: ".dynsym", Type: elf.SHT_DYNSYM, Flags: elf.SHF_ALLOC, Addr: 0x4002b8, Offset: 0x2b8, Size: 0x5e8, Link: 6, Info: 1, Addralign: 8, Entsize: 0x18},
		{Name: ".rela.plt", Type: elf.SHT_RELA, Flags: elf.SHF_ALLOC | elf.SHF_INFO_LINK, Addr: 0x401048, Offset: 0x1048, Size: 0x510, Link: 5, Info: 26, Addralign: 8, Entsize: 0x18},
		{Name: ".text", Type: elf.SHT_PROGBITS, Flags: elf.SHF_ALLOC | elf.SHF_EXECINSTR, Addr: 0x401900, Offset: 0x1900, Size: 0x133a2, Addralign: 16},
		{Name: ".bss", Type: elf.SHT_NOBITS, Flags: elf.SHF_ALLOC | elf.SHF_WRITE, Addr: 0x61a1e0, Offset: 0x1a1e0, Size: 0xa98, Addralign: 32},
		{Name: ".comment", Type: elf.SHT_PROGBITS, Flags: elf.SHF_MERGE | elf.SHF_STRINGS, Offset: 0x1a1e0, Size: 0x34, Addralign: 1, Entsize: 1},
		{Name: ".symtab", Type: elf.SHT_SYMTAB, Offset: 0x1a228, Size: 0x2400, Link: 33, Info: 141, Addralign: 8, Entsize: 0x18},
	}
	for _, want := range secs {
		s := f.Section(want.Name)
		if s == nil {
			t.Errorf("no section %s", want.Name)
			continue
		}
		if s.SectionHeader != want {
			t.Errorf("section %d:\nhave %+v\nwant %+v", s.Index, s.SectionHeader, want)
		}
	}
	if s := f.Section(".bss"); s.Index != 28 {
		t.Errorf(".bss index %d, want 28", s.Index)
	}
	if b, err := f.Section(".bss").Data(); b != nil || err != nil {
		t.Errorf(".bss Data() = %d bytes, %v; want nil, nil", len(b), err)
	}
	if b, err := f.Section(".interp").Data(); string(b) != "/lib64/ld-linux-x86-64.so.2\x00" || err != nil {
		t.Errorf(".interp = %q, %v", b, err)
	}

	if id := hex.EncodeToString(f.BuildID()); id != "f1c3bcc0279865fe3058404b2831d9e64135386c" {
		t.Errorf("BuildID = %s", id)
	}
	if id := f.GoBuildID(); id != "" {
		t.Errorf("GoBuildID = %q, want none", id)
	}
	// CRC-32 of testdata/crash.debug, see TestDebugLinkCRC.
	if file, crc, ok := f.DebugLink(); file != "crash.debug" || crc != 0xa5010837 || !ok {
		t.Errorf("DebugLink = %q, %#x, %v", file, crc, ok)
	}
	if file, id, ok := f.DebugAltLink(); ok {
		t.Errorf("DebugAltLink = %q, %x, true; want none", file, id)
	}
	if base := f.ImageBase(); base != 0x400000 {
		t.Errorf("ImageBase = %#x, want 0x400000", base)
	}
	if f.IsPIE() {
		t.Error("IsPIE for ET_EXEC")
	}
	want2 := elf.Features{Symtab: true, Dynsym: true, Unwind: true}
	if ft := f.Features(); ft != want2 {
		t.Errorf("Features = %+v, want %+v", ft, want2)
	}
	notes, err := f.Notes()
	if err != nil || len(notes) != 2 || notes[0].Name != "GNU" || notes[0].Type != uint32(elf.NT_GNU_ABI_TAG) || notes[1].Type != uint32(elf.NT_GNU_BUILD_ID) {
		t.Errorf("Notes = %+v, %v", notes, err)
	}

	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	if len(syms) != 0x2400/24-1 {
		t.Errorf("%d symbols, want %d", len(syms), 0x2400/24-1)
	}
	dyn, err := f.DynamicSymbols()
	if err != nil {
		t.Fatal(err)
	}
	if len(dyn) != 0x5e8/24-1 {
		t.Errorf("%d dynamic symbols, want %d", len(dyn), 0x5e8/24-1)
	}
	// Every dynamic symbol of crash refers to a versioned GLIBC or CXXABI
	// function or is unversioned.
	versioned := 0
	for _, s := range dyn {
		if s.Version != "" {
			versioned++
			if s.Library == "" || s.Section != elf.SHN_UNDEF {
				t.Errorf("dynamic symbol %+v: version without library, or defined", s)
			}
		}
	}
	if versioned == 0 {
		t.Error("no versioned dynamic symbols")
	}
}

// TestDebugLinkCRC checks that crash's .gnu_debuglink names the committed
// crash.debug: gdb's rule is CRC-32 (IEEE) of the whole file.
func TestDebugLinkCRC(t *testing.T) {
	data, err := os.ReadFile("../../testdata/sentry-symbolic/linux/crash.debug")
	if err != nil {
		t.Fatal(err)
	}
	if crc := crc32.ChecksumIEEE(data); crc != 0xa5010837 {
		t.Errorf("crc32(crash.debug) = %#x", crc)
	}
}

func TestSeparateDebugFile(t *testing.T) {
	exe := open(t, "../../testdata/sentry-symbolic/linux/crash")
	for _, name := range []string{"crash.debug", "crash.debug-zlib", "crash.debug-zstd"} {
		t.Run(name, func(t *testing.T) {
			f := open(t, filepath.Join("../../testdata/sentry-symbolic/linux", name))
			if !bytes.Equal(f.BuildID(), exe.BuildID()) {
				t.Errorf("BuildID = %x, want %x", f.BuildID(), exe.BuildID())
			}
			if f.ImageBase() != exe.ImageBase() {
				t.Errorf("ImageBase = %#x, want %#x", f.ImageBase(), exe.ImageBase())
			}
			want := elf.Features{Symtab: true, DWARF: true, DebugOnly: true}
			if ft := f.Features(); ft != want {
				t.Errorf("Features = %+v, want %+v", ft, want)
			}
			if b, err := f.Section(".text").Data(); b != nil || err != nil {
				t.Errorf(".text Data() = %d bytes, %v; want nil", len(b), err)
			}
			syms, err := f.Symbols()
			if err != nil || len(syms) != 0x26b8/24-1 {
				t.Errorf("%d symbols, %v; want %d", len(syms), err, 0x26b8/24-1)
			}
		})
	}
}

var crashDWARF = []string{"debug_aranges", "debug_info", "debug_abbrev", "debug_line", "debug_str", "debug_loc", "debug_ranges"}

// TestCompressedFixtures checks that the zlib and zstd variants of
// crash.debug decompress to the bytes of the uncompressed one.
func TestCompressedFixtures(t *testing.T) {
	plain := open(t, "../../testdata/sentry-symbolic/linux/crash.debug")
	for _, tt := range []struct {
		file string
		typ  elf.CompressionType
	}{
		{"crash.debug-zlib", elf.ELFCOMPRESS_ZLIB},
		{"crash.debug-zstd", elf.ELFCOMPRESS_ZSTD},
	} {
		t.Run(tt.file, func(t *testing.T) {
			f := open(t, filepath.Join("../../testdata/sentry-symbolic/linux", tt.file))
			for _, name := range crashDWARF {
				want, err := plain.DWARFSection(name)
				if err != nil || len(want) == 0 {
					t.Fatalf("crash.debug %s: %d bytes, %v", name, len(want), err)
				}
				c, err := f.Section("." + name).Compression()
				if err != nil || c == nil || c.Type != tt.typ || c.Size != uint64(len(want)) || c.GNU {
					t.Errorf("%s: Compression() = %+v, %v; want %v of size %#x", name, c, err, tt.typ, len(want))
				}
				have, err := f.DWARFSection(name)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if !bytes.Equal(have, want) {
					t.Errorf("%s: decompressed %d bytes differ from crash.debug's %d", name, len(have), len(want))
				}
				again, _ := f.DWARFSection("." + name)
				if len(again) == 0 || &again[0] != &have[0] {
					t.Errorf("%s: second call did not return the cached slice", name)
				}
			}
			if b, err := f.DWARFSection("debug_frame"); b != nil || err != nil {
				t.Errorf("absent debug_frame = %d bytes, %v; want nil, nil", len(b), err)
			}
		})
	}
}

func TestConcurrentSectionData(t *testing.T) {
	f := open(t, "../../testdata/sentry-symbolic/linux/crash.debug-zstd")
	var wg sync.WaitGroup
	results := make([][]byte, 8)
	for i := range results {
		wg.Go(func() {
			b, err := f.DWARFSection(crashDWARF[i%len(crashDWARF)])
			if err != nil {
				t.Error(err)
			}
			results[i] = b
		})
	}
	wg.Wait()
	for i := range results {
		j := i + len(crashDWARF)
		if j < len(results) && &results[i][0] != &results[j][0] {
			t.Errorf("calls %d and %d decompressed %s twice", i, j, crashDWARF[i])
		}
	}
}

func TestClose(t *testing.T) {
	f, err := elf.Open("../../testdata/sentry-symbolic/linux/crash.debug-zlib")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.DWARFSection("debug_info"); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := f.DWARFSection("debug_line"); !errors.Is(err, elf.ErrClosed) {
		t.Errorf("DWARFSection after Close: %v, want ErrClosed", err)
	}
}

func TestSample(t *testing.T) {
	for _, tt := range []struct {
		class elf.Class
		big   bool
	}{
		{elf.ELFCLASS64, false},
		{elf.ELFCLASS64, true},
		{elf.ELFCLASS32, false},
		{elf.ELFCLASS32, true},
	} {
		t.Run(fmt.Sprintf("%v-big=%v", tt.class, tt.big), func(t *testing.T) {
			f := newFile(t, sampleFile(tt.class, tt.big).build())
			checkSample(t, f, true)
		})
	}
}

// checkSample checks a file built by sampleFile; withSections is false when
// the section headers were left out.
func checkSample(t *testing.T, f *elf.File, withSections bool) {
	t.Helper()
	if id := hex.EncodeToString(f.BuildID()); id != "f1c3bcc0279865fe" {
		t.Errorf("BuildID = %s", id)
	}
	if f.ImageBase() != 0x1000 || !f.IsPIE() {
		t.Errorf("ImageBase = %#x, IsPIE = %v; want 0x1000, true", f.ImageBase(), f.IsPIE())
	}
	if !withSections {
		return
	}
	if id := f.GoBuildID(); id != "abc/def" {
		t.Errorf("GoBuildID = %q", id)
	}
	if file, crc, ok := f.DebugLink(); file != "sample.debug" || crc != 0xdeadbeef || !ok {
		t.Errorf("DebugLink = %q, %#x, %v", file, crc, ok)
	}
	want := sampleDWARF(3000)
	for _, name := range []string{"debug_info", "debug_line", "debug_str"} {
		b, err := f.DWARFSection(name)
		if err != nil || !bytes.Equal(b, want) {
			t.Errorf("DWARFSection(%s) = %d bytes, %v; want the %d sample bytes", name, len(b), err, len(want))
		}
	}
	c, err := f.Section(".zdebug_str").Compression()
	if err != nil || c == nil || !c.GNU || c.Type != elf.ELFCOMPRESS_ZLIB || c.Size != 3000 || c.HeaderSize != 12 {
		t.Errorf(".zdebug_str Compression() = %+v, %v", c, err)
	}
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	var have []string
	for _, s := range syms {
		have = append(have, fmt.Sprintf("%s %v %v %v %#x %#x", s.Name, s.Type(), s.Bind(), s.Section, s.Value, s.Size))
	}
	wantSyms := []string{
		"hello.c STT_FILE STB_LOCAL SHN_ABS 0x0 0x0",
		"main STT_FUNC STB_GLOBAL 3 0x1000 0x20",
		"data STT_OBJECT STB_GLOBAL 4 0x2000 0x8",
		"weak STT_FUNC STB_WEAK 3 0x1020 0x4",
	}
	if strings.Join(have, "\n") != strings.Join(wantSyms, "\n") {
		t.Errorf("Symbols:\nhave %q\nwant %q", have, wantSyms)
	}
	dyn, err := f.DynamicSymbols()
	if err != nil || len(dyn) != 2 {
		t.Fatalf("DynamicSymbols = %+v, %v", dyn, err)
	}
	if s := dyn[0]; s.Name != "printf" || s.Version != "GLIBC_2.2.5" || s.Library != "libc.so.6" || s.HiddenVersion {
		t.Errorf("dynamic symbol 1 = %+v", s)
	}
	if s := dyn[1]; s.Name != "main" || s.Version != "" {
		t.Errorf("dynamic symbol 2 = %+v", s)
	}
	wantFt := elf.Features{Symtab: true, Dynsym: true, DWARF: true, Unwind: true}
	if ft := f.Features(); ft != wantFt {
		t.Errorf("Features = %+v, want %+v", ft, wantFt)
	}
}

func TestNoSectionHeaders(t *testing.T) {
	for _, big := range []bool{false, true} {
		tf := sampleFile(elf.ELFCLASS64, big)
		tf.noSecs = true
		f := newFile(t, tf.build())
		if len(f.Sections) != 0 || len(f.Progs) != 3 {
			t.Fatalf("%d sections, %d program headers; want 0, 3", len(f.Sections), len(f.Progs))
		}
		checkSample(t, f, false)
		notes, err := f.Notes()
		if err != nil || len(notes) != 1 || notes[0].Name != "GNU" {
			t.Errorf("Notes = %+v, %v", notes, err)
		}
		if _, err := f.Symbols(); !errors.Is(err, elf.ErrNoSymbols) {
			t.Errorf("Symbols error = %v, want ErrNoSymbols", err)
		}
		if ft := f.Features(); ft != (elf.Features{}) {
			t.Errorf("Features = %+v, want none", ft)
		}
	}
	// A stale e_shoff with e_shnum and e_shentsize 0 also means no sections.
	tf := sampleFile(elf.ELFCLASS64, false)
	tf.noSecs = true
	data := tf.build()
	binary.LittleEndian.PutUint64(data[40:], 0xdeadbeef)
	binary.LittleEndian.PutUint16(data[58:], 0)
	f := newFile(t, data)
	if len(f.Sections) != 0 || len(f.Progs) != 3 {
		t.Errorf("stale e_shoff: %d sections, %d program headers; want 0, 3", len(f.Sections), len(f.Progs))
	}
}

// TestExtendedNumbering stores the section count, the section name table
// index and the program header count in section 0, as files with 65280 or
// more sections must (gABI "Extended Section Numbering").
func TestExtendedNumbering(t *testing.T) {
	tf := sampleFile(elf.ELFCLASS64, false)
	tf.extended = true
	data := tf.build()
	f := newFile(t, data)
	if len(f.Sections) != len(tf.secs)+2 || len(f.Progs) != 3 {
		t.Fatalf("%d sections, %d program headers; want %d, 3", len(f.Sections), len(f.Progs), len(tf.secs)+2)
	}
	checkSample(t, f, true)
}

// TestNoteAlignment reads notes in 8-byte aligned segments, where the
// descriptor starts at the next multiple of 8 (GNU property notes on x86-64).
func TestNoteAlignment(t *testing.T) {
	for _, align := range []int{4, 8} {
		tf := noteFile(align)
		f := newFile(t, tf.build())
		if id := hex.EncodeToString(f.BuildID()); id != "aabbcc" {
			t.Errorf("align %d: BuildID = %s", align, id)
		}
		notes, err := f.Notes()
		if err != nil || len(notes) != 2 || len(notes[0].Desc) != 12 {
			t.Errorf("align %d: Notes = %+v, %v", align, notes, err)
		}
	}
}

// TestSymtabShndx resolves st_shndx SHN_XINDEX through SHT_SYMTAB_SHNDX.
func TestSymtabShndx(t *testing.T) {
	tf := shndxFile()
	f := newFile(t, tf.build())
	syms, err := f.Symbols()
	if err != nil || len(syms) != 2 {
		t.Fatalf("Symbols = %+v, %v", syms, err)
	}
	if syms[0].Section != 1 || syms[1].Section != 70000 || syms[1].Name != "far" {
		t.Errorf("Symbols = %+v", syms)
	}
}

func TestAddressMapping(t *testing.T) {
	// .text: file [off, off+0x40) at 0x1000; .data: 16 file bytes at 0x2000,
	// then zero fill to 0x2110.
	f := newFile(t, sampleFile(elf.ELFCLASS64, false).build())
	text, data := f.Progs[0], f.Progs[1]
	for _, tt := range []struct {
		vaddr uint64
		off   uint64
		ok    bool
	}{
		{0x0fff, 0, false},
		{0x1000, text.Off, true},
		{0x103f, text.Off + 0x3f, true},
		{0x1040, 0, false},
		{0x2000, data.Off, true},
		{0x200f, data.Off + 15, true},
		{0x2010, 0, false}, // zero fill has no file bytes
	} {
		off, ok := f.VaddrToOffset(tt.vaddr)
		if off != tt.off || ok != tt.ok {
			t.Errorf("VaddrToOffset(%#x) = %#x, %v; want %#x, %v", tt.vaddr, off, ok, tt.off, tt.ok)
		}
		if !tt.ok {
			continue
		}
		if v, ok := f.OffsetToVaddr(tt.off); v != tt.vaddr || !ok {
			t.Errorf("OffsetToVaddr(%#x) = %#x, %v; want %#x", tt.off, v, ok, tt.vaddr)
		}
	}
	if v, ok := f.OffsetToVaddr(text.Off - 1); ok {
		t.Errorf("OffsetToVaddr(start-1) = %#x, true", v)
	}
	if v, ok := f.OffsetToVaddr(text.Off + text.Filesz); ok && v == 0x1040 {
		t.Errorf("OffsetToVaddr(end) = %#x, true", v)
	}
}

func TestSpecNames(t *testing.T) {
	for _, tt := range []struct {
		v    fmt.Stringer
		want string
	}{
		{elf.SHT_NOBITS, "SHT_NOBITS"},
		{elf.PT_LOAD, "PT_LOAD"},
		{elf.ELFCOMPRESS_ZSTD, "ELFCOMPRESS_ZSTD"},
		{elf.NT_GNU_BUILD_ID, "NT_GNU_BUILD_ID"},
		{elf.STT_GNU_IFUNC, "STT_GNU_IFUNC"},
		{elf.SHF_ALLOC | elf.SHF_EXECINSTR, "SHF_ALLOC+SHF_EXECINSTR"},
		{elf.PF_R | 0x100, "PF_R+0x100"},
		{elf.EM_AARCH64, "EM_AARCH64"},
		{elf.Machine(9999), "9999"},
		{elf.SHN_XINDEX, "SHN_XINDEX"},
	} {
		if have := tt.v.String(); have != tt.want {
			t.Errorf("%T(%d).String() = %q, want %q", tt.v, tt.v, have, tt.want)
		}
	}
}
