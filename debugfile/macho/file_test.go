package macho_test

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/backtrail/backtrail/debugfile/macho"
)

// Expected values come from llvm-objdump-14 --macho --private-headers and
// llvm-dwarfdump-14 --uuid (Debian LLVM 14.0.6) run on the same files.
var fileTests = []struct {
	file      string
	magic     uint32
	arch      string
	typ       macho.Type
	ncmds     int
	nsects    int
	uuid      string // hex, or "" for no LC_UUID
	base      uint64 // __TEXT vmaddr
	platform  macho.Platform
	minOS     string
	nsyms     uint32
	dwarf     bool
	unwind    bool
	firstSect string // seg,sect of Sections[0]
}{
	{"crash", macho.MH_MAGIC_64, "x86_64", macho.MH_EXECUTE, 17, 17, "67e9247c814e392ba027dbde6748fcbf", 0x100000000, macho.PLATFORM_MACOS, "10.12", 1308, false, true, "__TEXT,__text"},
	{"crash.dsym", macho.MH_MAGIC_64, "x86_64", macho.MH_DSYM, 7, 30, "67e9247c814e392ba027dbde6748fcbf", 0x100000000, macho.PLATFORM_UNKNOWN, "", 254, true, false, "__TEXT,__text"},
	{"overlapping_funcs.dsym", macho.MH_MAGIC_64, "x86_64", macho.MH_DSYM, 7, 13, "546d01320e063b7a8640be4046513445", 0x100000000, macho.PLATFORM_MACOS, "12.0", 6, true, false, "__TEXT,__text"},
	{"hello-arm64.o", macho.MH_MAGIC_64, "arm64", macho.MH_OBJECT, 5, 13, "", 0, macho.PLATFORM_MACOS, "11.0", 8, true, false, "__TEXT,__text"},
	{"hello-x86_64.o", macho.MH_MAGIC_64, "x86_64", macho.MH_OBJECT, 4, 14, "", 0, macho.PLATFORM_MACOS, "11.0", 4, true, true, "__TEXT,__text"},
	{"hello-i386.o", macho.MH_MAGIC, "i386", macho.MH_OBJECT, 4, 14, "", 0, macho.PLATFORM_MACOS, "10.12", 4, true, true, "__TEXT,__text"},
	{"hello-armv7.o", macho.MH_MAGIC, "armv7", macho.MH_OBJECT, 4, 12, "", 0, macho.PLATFORM_IOS, "9.0", 4, true, false, "__TEXT,__text"},
	{"hello-arm64_32.o", macho.MH_MAGIC, "arm64_32", macho.MH_OBJECT, 5, 13, "", 0, macho.PLATFORM_WATCHOS, "5.0", 8, true, false, "__TEXT,__text"},
}

func TestNewFile(t *testing.T) {
	for _, tt := range fileTests {
		t.Run(tt.file, func(t *testing.T) {
			data := readFile(t, testdataPath(tt.file))
			f, err := macho.NewFile(data)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			check := func(what string, have, want any) {
				t.Helper()
				if fmt.Sprint(have) != fmt.Sprint(want) {
					t.Errorf("%s: %s: have %v, want %v", tt.file, what, have, want)
				}
			}
			check("Magic", fmt.Sprintf("%#x", f.Magic), fmt.Sprintf("%#x", tt.magic))
			check("Is64", f.Is64, tt.magic == macho.MH_MAGIC_64)
			check("ByteOrder", f.ByteOrder, binary.LittleEndian)
			check("Arch", f.Arch(), tt.arch)
			check("Type", f.Type, tt.typ)
			check("len(Loads)", len(f.Loads), tt.ncmds)
			check("Ncmds", f.Ncmds, tt.ncmds)
			check("len(Sections)", len(f.Sections), tt.nsects)
			check("ImageBase", fmt.Sprintf("%#x", f.ImageBase()), fmt.Sprintf("%#x", tt.base))
			check("Platform", f.Platform(), tt.platform)
			if tt.minOS != "" {
				check("MinOS", f.BuildVersions[0].MinOS, tt.minOS)
			}
			u, ok := f.UUID()
			check("UUID ok", ok, tt.uuid != "")
			if ok {
				check("UUID", fmt.Sprintf("%x", u), tt.uuid)
			}
			check("Symtab.Nsyms", f.Symtab.Nsyms, tt.nsyms)
			check("HasSymbols", f.HasSymbols(), tt.nsyms > 0)
			check("HasDWARF", f.HasDWARF(), tt.dwarf)
			check("HasUnwindInfo", f.HasUnwindInfo(), tt.unwind)
			check("Sections[0]", f.Sections[0].Seg+","+f.Sections[0].Name, tt.firstSect)

			// Load commands tile sizeofcmds, and segments and sections
			// are the decoded LC_SEGMENT(_64) commands.
			var total uint64
			nseg, nsect := 0, 0
			for _, l := range f.Loads {
				total += uint64(len(l.Raw))
				if f.ByteOrder.Uint32(l.Raw) != uint32(l.Cmd) {
					t.Errorf("load at %#x: Raw does not start with cmd %v", l.Off, l.Cmd)
				}
				if l.Cmd == macho.LC_SEGMENT || l.Cmd == macho.LC_SEGMENT_64 {
					nseg++
				}
			}
			check("sum of cmdsize", total, f.Cmdsz)
			check("len(Segments)", len(f.Segments), nseg)
			for _, s := range f.Segments {
				nsect += len(s.Sections)
			}
			check("sections in segments", nsect, len(f.Sections))
		})
	}
}

// TestSectionData checks that section data are subslices of the input and
// which sections have none.
func TestSectionData(t *testing.T) {
	data := readFile(t, testdataPath("crash"))
	f, err := macho.NewFile(data)
	if err != nil {
		t.Fatal(err)
	}
	text := f.Section("__TEXT", "__text")
	if text == nil {
		t.Fatal("no __TEXT,__text")
	}
	d, err := text.Data()
	if err != nil {
		t.Fatal(err)
	}
	// llvm-objdump: offset 3360, size 0xcf83.
	if text.Offset != 3360 || text.Size != 0xcf83 || uint64(len(d)) != text.Size {
		t.Errorf("__text: offset %d size %#x len %#x", text.Offset, text.Size, len(d))
	}
	if &d[0] != &data[3360] {
		t.Error("__text data is a copy, not a subslice of the input")
	}
	if cap(d) != len(d) {
		t.Errorf("__text data has capacity %d beyond its length %d", cap(d), len(d))
	}

	// __DATA,__bss is zero-fill: no file bytes.
	bss := f.Section("__DATA", "__bss")
	if bss == nil || bss.Type() != macho.S_ZEROFILL || bss.HasData() {
		t.Fatalf("__bss: %+v", bss)
	}
	if d, err := bss.Data(); d != nil || err != nil {
		t.Errorf("__bss Data: %v, %v", d, err)
	}

	seg := f.Segment("__TEXT")
	sd, err := seg.Data()
	if err != nil || uint64(len(sd)) != seg.FileSize || &sd[0] != &data[0] {
		t.Errorf("__TEXT segment data: len %d, %v", len(sd), err)
	}
	if f.Segment("__NOPE") != nil || f.Section("__TEXT", "__nope") != nil || f.Section("__DATA", "__text") != nil {
		t.Error("lookup of a missing segment or section succeeded")
	}
	if s := f.Section("", "__text"); s != text {
		t.Error(`Section("", "__text") did not find __TEXT,__text`)
	}

	// A dSYM lists the executable's sections without their bytes.
	dsym, err := macho.NewFile(readFile(t, testdataPath("crash.dsym")))
	if err != nil {
		t.Fatal(err)
	}
	dt := dsym.Section("__TEXT", "__text")
	if dt == nil || dt.HasData() || dt.Size != text.Size || dt.Addr != text.Addr {
		t.Fatalf("dSYM __text: %+v", dt)
	}
	if d, err := dt.Data(); d != nil || err != nil {
		t.Errorf("dSYM __text Data: %v, %v", len(d), err)
	}
}

// TestSectionName16 checks a sectname that fills all 16 bytes, with no NUL.
func TestSectionName16(t *testing.T) {
	f, err := macho.NewFile(readFile(t, testdataPath("crash.dsym")))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range f.Segment("__DWARF").Sections {
		names = append(names, s.Name)
	}
	// llvm-objdump-14 --macho --private-headers lists these, in this order.
	want := []string{
		"__debug_line", "__debug_pubnames", "__debug_pubtypes", "__debug_aranges",
		"__debug_info", "__debug_abbrev", "__debug_str", "__apple_names",
		"__apple_namespac", "__apple_types", "__apple_objc",
	}
	for _, w := range want {
		if !slices.Contains(names, w) {
			t.Errorf("__DWARF has no %s; have %v", w, names)
		}
	}
	if s := f.Section("__DWARF", "__apple_namespac"); s == nil || len(s.Name) != 16 {
		t.Errorf("16-byte section name: %+v", s)
	}
}

func TestDylibs(t *testing.T) {
	f, err := macho.NewFile(readFile(t, testdataPath("crash")))
	if err != nil {
		t.Fatal(err)
	}
	// llvm-objdump-14 --macho --private-headers: three LC_LOAD_DYLIB.
	want := []string{
		"/System/Library/Frameworks/CoreFoundation.framework/Versions/A/CoreFoundation 2 150.0 1349.8",
		"/usr/lib/libc++.1.dylib 2 1.0 307.5",
		"/usr/lib/libSystem.B.dylib 2 1.0 1238.60.2",
	}
	var have []string
	for _, d := range f.Dylibs {
		if d.Cmd != macho.LC_LOAD_DYLIB {
			t.Errorf("%s: cmd %v", d.Name, d.Cmd)
		}
		have = append(have, fmt.Sprintf("%s %d %v %v", d.Name, d.Time, d.CompatVersion, d.CurrentVersion))
	}
	if !slices.Equal(have, want) {
		t.Errorf("dylibs:\nhave %q\nwant %q", have, want)
	}
	if f.ID != nil {
		t.Errorf("executable has LC_ID_DYLIB %+v", f.ID)
	}
}

// TestByteOrders builds the same small file in all four magic variants and
// checks that each reads back the same.
func TestByteOrders(t *testing.T) {
	uuid := []byte("0123456789abcdef")
	for _, tc := range []struct {
		big, is64 bool
		magic     []byte // first four bytes in the file
	}{
		{false, false, []byte{0xce, 0xfa, 0xed, 0xfe}},
		{true, false, []byte{0xfe, 0xed, 0xfa, 0xce}},
		{false, true, []byte{0xcf, 0xfa, 0xed, 0xfe}},
		{true, true, []byte{0xfe, 0xed, 0xfa, 0xcf}},
	} {
		name := fmt.Sprintf("big=%v,64=%v", tc.big, tc.is64)
		t.Run(name, func(t *testing.T) {
			mb := &machoBuilder{
				big: tc.big, is64: tc.is64,
				cpu: macho.CPU_TYPE_POWERPC, sub: macho.CPU_SUBTYPE_POWERPC_ALL,
				typ: macho.MH_DYLIB, segname: "__TEXT", vmaddr: 0x1000,
				sections: []testSection{
					{seg: "__TEXT", name: "__text", addr: 0x1100, data: []byte("code bytes"), flags: macho.S_ATTR_PURE_INSTRUCTIONS},
					{seg: "__DATA", name: "__bss", addr: 0x2000, size: 64, flags: macho.S_ZEROFILL},
					{seg: "__DWARF", name: "__debug_str_offs", data: []byte("dwarf5")},
				},
				uuid: uuid,
				syms: []testSymbol{
					{name: "_f", typ: macho.N_SECT | macho.N_EXT, sect: 1, value: 0x1100},
					{name: "_g", typ: macho.N_SECT, sect: 1, desc: macho.N_ALT_ENTRY, value: 0x1104},
					{name: "", typ: macho.N_UNDF},
					{name: "x.c", typ: macho.N_SO},
				},
				dylibs: []testDylib{{macho.LC_ID_DYLIB, "@rpath/libT.dylib"}, {macho.LC_LOAD_WEAK_DYLIB, "/usr/lib/libz.dylib"}},
			}
			data := mb.build()
			if !slices.Equal(data[:4], tc.magic) {
				t.Fatalf("builder wrote magic % x", data[:4])
			}
			f, err := macho.NewFile(data)
			if err != nil {
				t.Fatal(err)
			}
			wantOrder := binary.ByteOrder(binary.LittleEndian)
			if tc.big {
				wantOrder = binary.BigEndian
			}
			if f.ByteOrder != wantOrder || f.Is64 != tc.is64 || f.Type != macho.MH_DYLIB || f.Arch() != "ppc" {
				t.Errorf("header: order %v is64 %v type %v arch %q", f.ByteOrder, f.Is64, f.Type, f.Arch())
			}
			if u, ok := f.UUID(); !ok || string(u[:]) != string(uuid) {
				t.Errorf("UUID %q %v", u, ok)
			}
			if f.ImageBase() != 0x1000 {
				t.Errorf("ImageBase %#x", f.ImageBase())
			}
			text, _ := f.Section("__TEXT", "__text").Data()
			if string(text) != "code bytes" {
				t.Errorf("__text %q", text)
			}
			if bss := f.Section("__DATA", "__bss"); bss.Size != 64 || bss.HasData() {
				t.Errorf("__bss %+v", bss)
			}
			d5, err := f.DWARFSection("debug_str_offsets")
			if string(d5) != "dwarf5" || err != nil {
				t.Errorf("debug_str_offsets: %q, %v", d5, err)
			}
			if f.ID == nil || f.ID.Name != "@rpath/libT.dylib" || f.ID.CurrentVersion.String() != "1.2.3" || f.ID.CompatVersion.String() != "1.0" {
				t.Errorf("ID %+v", f.ID)
			}
			if len(f.Dylibs) != 1 || f.Dylibs[0].Name != "/usr/lib/libz.dylib" || f.Dylibs[0].Cmd != macho.LC_LOAD_WEAK_DYLIB {
				t.Errorf("Dylibs %+v", f.Dylibs)
			}
			syms, err := f.Symbols()
			if err != nil {
				t.Fatal(err)
			}
			have := fmt.Sprint(syms)
			want := "[{_f 15 1 0 4352} {_g 14 1 512 4356} { 0 0 0 0} {x.c 100 0 0 0}]"
			if have != want {
				t.Errorf("symbols:\nhave %s\nwant %s", have, want)
			}
		})
	}
}

func TestSymbolKinds(t *testing.T) {
	for _, tt := range []struct {
		sym                             macho.Symbol
		stab, ext, inSection, undefined bool
	}{
		{macho.Symbol{Type: macho.N_SECT | macho.N_EXT, Sect: 1}, false, true, true, false},
		{macho.Symbol{Type: macho.N_SECT, Sect: 3}, false, false, true, false},
		{macho.Symbol{Type: macho.N_SECT | macho.N_PEXT, Sect: 0}, false, false, false, false},
		{macho.Symbol{Type: macho.N_UNDF | macho.N_EXT}, false, true, false, true},
		{macho.Symbol{Type: macho.N_ABS}, false, false, false, false},
		{macho.Symbol{Type: macho.N_FUN, Sect: 1}, true, false, false, false},
		{macho.Symbol{Type: macho.N_SO}, true, false, false, false},
		{macho.Symbol{Type: macho.N_BNSYM, Sect: 1}, true, false, false, false},
	} {
		s := tt.sym
		if s.IsStab() != tt.stab || s.IsExternal() != tt.ext || s.IsSection() != tt.inSection || s.IsUndefined() != tt.undefined {
			t.Errorf("n_type %#x n_sect %d: have stab %v ext %v section %v undefined %v, want %v %v %v %v",
				s.Type, s.Sect, s.IsStab(), s.IsExternal(), s.IsSection(), s.IsUndefined(),
				tt.stab, tt.ext, tt.inSection, tt.undefined)
		}
	}
}

// TestSymbols checks the section symbols of the executable against its
// sections: every N_SECT symbol's address lies in the section it names.
func TestSymbols(t *testing.T) {
	f, err := macho.NewFile(readFile(t, testdataPath("crash")))
	if err != nil {
		t.Fatal(err)
	}
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	if len(syms) != 1308 {
		t.Fatalf("have %d symbols, want 1308", len(syms))
	}
	var nsect int
	for _, s := range syms {
		if !s.IsSection() {
			continue
		}
		nsect++
		sec := f.SymbolSection(s)
		if s.Name == "__mh_execute_header" {
			continue // the Mach-O header: in section 1, at the start of __TEXT
		}
		if s.Value < sec.Addr || s.Value > sec.Addr+sec.Size {
			t.Errorf("%s at %#x outside %s,%s [%#x, %#x)", s.Name, s.Value, sec.Seg, sec.Name, sec.Addr, sec.Addr+sec.Size)
		}
	}
	if nsect == 0 {
		t.Error("no section symbols")
	}
	// The reader keeps the leading underscore. llvm-nm-14: 000000010000dba0 T _main.
	if !slices.ContainsFunc(syms, func(s macho.Symbol) bool {
		return s.Name == "_main" && s.IsSection() && s.IsExternal() && s.Value == 0x10000dba0
	}) {
		t.Error("no external section symbol _main at 0x10000dba0")
	}
}

func TestSymbolSection(t *testing.T) {
	f, err := macho.NewFile(readFile(t, "testdata/hello-x86_64.o")) // 14 sections
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		sym  macho.Symbol
		want string
	}{
		{macho.Symbol{Type: macho.N_SECT, Sect: 0}, ""},
		{macho.Symbol{Type: macho.N_SECT, Sect: 1}, "__TEXT,__text"},
		{macho.Symbol{Type: macho.N_SECT, Sect: 13}, "__TEXT,__eh_frame"},
		{macho.Symbol{Type: macho.N_SECT, Sect: 14}, "__DWARF,__debug_line"},
		{macho.Symbol{Type: macho.N_SECT, Sect: 15}, ""},
		{macho.Symbol{Type: macho.N_SECT, Sect: 255}, ""},
		{macho.Symbol{Type: macho.N_FUN, Sect: 1}, ""},
		{macho.Symbol{Type: macho.N_UNDF | macho.N_EXT, Sect: 1}, ""},
	} {
		have := ""
		if s := f.SymbolSection(tt.sym); s != nil {
			have = s.Seg + "," + s.Name
		}
		if have != tt.want {
			t.Errorf("n_type %#x n_sect %d: have %q, want %q", tt.sym.Type, tt.sym.Sect, have, tt.want)
		}
	}
}

func TestNoSymbols(t *testing.T) {
	data := (&machoBuilder{is64: true, cpu: macho.CPU_TYPE_ARM64, typ: macho.MH_EXECUTE, segname: "__TEXT"}).build()
	f, err := macho.NewFile(data)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Symbols(); !errors.Is(err, macho.ErrNoSymbols) {
		t.Errorf("Symbols: %v, want ErrNoSymbols", err)
	}
	if f.HasSymbols() || f.HasDWARF() || f.HasUnwindInfo() {
		t.Error("empty file reports features")
	}
	if _, ok := f.UUID(); ok {
		t.Error("UUID without LC_UUID")
	}
}

func TestNotMachO(t *testing.T) {
	for _, data := range [][]byte{
		nil,
		{0xfe, 0xed},
		[]byte("\x7fELF\x02\x01\x01\x00"),
		[]byte("\xca\xfe\xba\xbe\x00\x00\x00\x02"), // fat
		[]byte("\xca\xfe\xba\xbe\x00\x00\x00\x34"), // Java class file
	} {
		_, err := macho.NewFile(data)
		if !errors.Is(err, macho.ErrNotMachO) {
			t.Errorf("NewFile(% x): %v, want ErrNotMachO", data, err)
		}
	}
}

// TestFormatErrors corrupts one field at a time and checks the error names
// the field's offset and the bad value.
func TestFormatErrors(t *testing.T) {
	// A 64-bit little-endian file: header at 0, LC_SEGMENT_64 at 0x20 with
	// one section header at 0x68, LC_UUID at 0xb8, LC_SYMTAB at 0xd0.
	base := func() []byte {
		return (&machoBuilder{
			is64: true, cpu: macho.CPU_TYPE_X86_64, sub: macho.CPU_SUBTYPE_X86_64_ALL, typ: macho.MH_EXECUTE, segname: "__TEXT",
			sections: []testSection{{seg: "__TEXT", name: "__text", data: []byte{0xc3}}},
			uuid:     make([]byte, 16),
			syms:     []testSymbol{{name: "_f", typ: macho.N_SECT, sect: 1}},
		}).build()
	}
	if _, err := macho.NewFile(base()); err != nil {
		t.Fatal(err)
	}
	le := binary.LittleEndian
	for _, tt := range []struct {
		name   string
		edit   func([]byte) []byte
		use    func(*macho.File) error // nil: NewFile must fail
		off    uint64
		substr string
	}{
		{"short header", func(b []byte) []byte { return b[:20] }, nil, 0x14, "mach header: need 4 bytes"},
		{"sizeofcmds", func(b []byte) []byte { le.PutUint32(b[20:], 0xffffff); return b }, nil, 0x14, "sizeofcmds runs past the end"},
		{"ncmds", func(b []byte) []byte { le.PutUint32(b[16:], 0x1000); return b }, nil, 0x10, "ncmds too large"},
		{"ncmds past commands", func(b []byte) []byte { le.PutUint32(b[16:], 4); return b }, nil, 0xe8, "load command 3: runs past sizeofcmds, 0x0 bytes left"},
		{"cmdsize zero", func(b []byte) []byte { le.PutUint32(b[0x24:], 0); return b }, nil, 0x24, "load command 0 (LC_SEGMENT_64): bad cmdsize"},
		{"cmdsize past end", func(b []byte) []byte { le.PutUint32(b[0xbc:], 0x1000); return b }, nil, 0xbc, "load command 1 (LC_UUID): bad cmdsize"},
		{"nsects", func(b []byte) []byte { le.PutUint32(b[0x20+64:], 2); return b }, nil, 0x60, "load command 0 (LC_SEGMENT_64): nsects too large"},
		{"uuid cmdsize", func(b []byte) []byte {
			le.PutUint32(b[0xbc:], 16) // LC_UUID shrinks to 16 bytes...
			le.PutUint32(b[0xc8:], uint32(macho.LC_SOURCE_VERSION))
			le.PutUint32(b[0xcc:], 8) // ...and a filler command takes the rest
			le.PutUint32(b[0x10:], 4)
			return b
		}, nil, 0xc0, "load command 1 (LC_UUID): need 16 bytes, 8 left"},
		{"section offset", func(b []byte) []byte { le.PutUint32(b[0x68+48:], 0x7fffffff); return b },
			func(f *macho.File) error { _, err := f.Sections[0].Data(); return err }, 0x98, "section __TEXT,__text: 0x1 bytes at 0x7fffffff run past the end"},
		{"symoff", func(b []byte) []byte { le.PutUint32(b[0xd0+8:], 0xfffffff0); return b },
			func(f *macho.File) error { _, err := f.Symbols(); return err }, 0xd8, "LC_SYMTAB symbols: 0x10 bytes at 0xfffffff0 run past the end"},
		{"nsyms", func(b []byte) []byte { le.PutUint32(b[0xd0+12:], 0xffffffff); return b },
			func(f *macho.File) error { _, err := f.Symbols(); return err }, 0xd8, "LC_SYMTAB symbols: 0xffffffff0 bytes"},
		{"strsize", func(b []byte) []byte { le.PutUint32(b[0xd0+20:], 0x10000); return b },
			func(f *macho.File) error { _, err := f.Symbols(); return err }, 0xe0, "LC_SYMTAB strings"},
		{"n_strx", func(b []byte) []byte {
			symoff := le.Uint32(b[0xd0+8:])
			le.PutUint32(b[symoff:], 0x99)
			return b
		}, func(f *macho.File) error { _, err := f.Symbols(); return err }, 0xf0, "symbol 0: n_strx outside the string table (0x4 bytes) (0x99)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			data := tt.edit(base())
			f, err := macho.NewFile(data)
			if tt.use != nil {
				if err != nil {
					t.Fatalf("NewFile: %v", err)
				}
				err = tt.use(f)
			}
			var fe *macho.FormatError
			if !errors.As(err, &fe) {
				t.Fatalf("have error %v, want a FormatError", err)
			}
			if fe.Off != tt.off || !strings.Contains(err.Error(), tt.substr) || !strings.Contains(err.Error(), fmt.Sprintf("at offset %#x", tt.off)) {
				t.Errorf("have %q (Off %#x)\nwant offset %#x and %q", err, fe.Off, tt.off, tt.substr)
			}
		})
	}
}

func TestVersionString(t *testing.T) {
	for _, tt := range []struct {
		v    macho.Version
		want string
	}{
		{0, "0.0"},
		{0x000a0c00, "10.12"},
		{0x000a0c01, "10.12.1"},
		{0x05460800, "1350.8"}, // 1350 = 0x546
		{0xffffffff, "65535.255.255"},
	} {
		if have := tt.v.String(); have != tt.want {
			t.Errorf("Version(%#x): have %q, want %q", uint32(tt.v), have, tt.want)
		}
	}
}

func TestStrings(t *testing.T) {
	for _, tt := range []struct {
		have fmt.Stringer
		want string
	}{
		{macho.MH_DSYM, "MH_DSYM"},
		{macho.Type(0x99), "macho.Type(0x99)"},
		{macho.LC_UUID, "LC_UUID"},
		{macho.LC_DYLD_INFO_ONLY, "LC_DYLD_INFO_ONLY"},
		{macho.LoadCmd(0x12345), "macho.LoadCmd(0x12345)"},
		{macho.PLATFORM_IOSSIMULATOR, "PLATFORM_IOSSIMULATOR"},
	} {
		if tt.have.String() != tt.want {
			t.Errorf("have %q, want %q", tt.have.String(), tt.want)
		}
	}
}
