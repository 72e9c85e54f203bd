package elf_test

// Fixtures compiled by the tests from testdata/src, cross-checked against
// binutils' readelf, LLVM's llvm-readelf and elfutils' eu-readelf.
//
// Made with the tools on the CI image: gcc 12.2 (Debian), clang-14 and
// ld.lld-14 (LLVM 14), GNU objcopy 2.40 (which compresses with zlib-gabi,
// zlib-gnu and zstd but only handles the host's targets), llvm-objcopy-14
// (zlib and zlib-gnu for any target), and the go command running the test.
// In CI (CI=true) a missing tool fails the test; elsewhere it skips it.

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"fmt"
	"hash/crc32"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/backtrail/backtrail/debugfile/elf"
)

var (
	fixtureDir  string
	fixtureMu   sync.Mutex // guards fixtureDir and fixtures
	fixtureByID = map[string]*fixture{}
)

type fixture struct {
	once sync.Once
	path string
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if fixtureDir != "" {
		os.RemoveAll(fixtureDir)
	}
	os.Exit(code)
}

// needTools fails the test in CI and skips it elsewhere when a tool is
// missing.
func needTools(t *testing.T, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("%s is required in CI: %v", tool, err)
			}
			t.Skipf("%s not installed: %v", tool, err)
		}
	}
}

// buildFixture makes the file name once per test binary with make, which
// writes it to out, after checking that tools are installed.
func buildFixture(t *testing.T, name string, tools []string, make func(out string) error) string {
	t.Helper()
	needTools(t, tools...)
	fixtureMu.Lock()
	if fixtureDir == "" {
		dir, err := os.MkdirTemp("", "elf-fixtures-")
		if err != nil {
			fixtureMu.Unlock()
			t.Fatal(err)
		}
		fixtureDir = dir
	}
	fx := fixtureByID[name]
	if fx == nil {
		fx = &fixture{path: filepath.Join(fixtureDir, name)}
		fixtureByID[name] = fx
	}
	fixtureMu.Unlock()
	fx.once.Do(func() { fx.err = make(fx.path) })
	if fx.err != nil {
		t.Fatalf("building %s: %v", name, fx.err)
	}
	return fx.path
}

// run runs a command and returns its standard output.
func run(args ...string) ([]byte, error) {
	cmd := exec.Command(args[0], args[1:]...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("%s: %v\n%s", strings.Join(args, " "), err, stderr.Bytes())
	}
	return out, nil
}

func runErr(args ...string) error {
	_, err := run(args...)
	return err
}

func mustRun(t *testing.T, args ...string) string {
	t.Helper()
	needTools(t, args[0])
	out, err := run(args...)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

func helloC(t *testing.T) string {
	src, err := filepath.Abs("testdata/src/hello.c")
	if err != nil {
		t.Fatal(err)
	}
	return src
}

// gccHello is hello.c built by gcc for the host (x86-64 PIE on Debian).
func gccHello(t *testing.T, name string, flags ...string) string {
	src := helloC(t)
	return buildFixture(t, name, []string{"gcc"}, func(out string) error {
		args := append([]string{"gcc", "-g", "-O1", "-Wl,--build-id=sha1", "-o", out}, flags...)
		return runErr(append(args, src)...)
	})
}

// objcopied is in transformed by tool (objcopy or llvm-objcopy-14) with args.
func objcopied(t *testing.T, tool, in, name string, args ...string) string {
	return buildFixture(t, name, []string{tool}, func(out string) error {
		return runErr(append(append([]string{tool}, args...), in, out)...)
	})
}

// clangHello is hello.c built by clang-14 for target: an object file, or a
// shared library linked by ld.lld-14.
func clangHello(t *testing.T, target string, shared bool) string {
	src := helloC(t)
	obj := buildFixture(t, target+".o", []string{"clang-14"}, func(out string) error {
		return runErr("clang-14", "--target="+target, "-g", "-O1", "-fPIC", "-c", "-o", out, src)
	})
	if !shared {
		return obj
	}
	return buildFixture(t, target+".so", []string{"ld.lld-14"}, func(out string) error {
		return runErr("ld.lld-14", "-shared", "--build-id", "-o", out, obj)
	})
}

// readelfSections parses `tool -S -W`: the headers of sections 1 and up.
func readelfSections(t *testing.T, tool, path string) []elf.SectionHeader {
	t.Helper()
	out := mustRun(t, tool, "-S", "-W", path)
	var secs []elf.SectionHeader
	for line := range strings.Lines(out) {
		_, rest, ok := strings.Cut(line, "]")
		if !ok || !strings.HasPrefix(strings.TrimSpace(line), "[") || strings.Contains(line, "[Nr]") {
			continue
		}
		f := strings.Fields(rest)
		if len(f) < 9 {
			continue // section 0 has no name
		}
		var h elf.SectionHeader
		h.Name = f[0]
		h.Type = readelfSectionTypes[f[1]]
		if h.Type == 0 {
			h.Type = 0xdead // a type the test does not map
		}
		hex := func(s string) uint64 {
			v, err := strconv.ParseUint(s, 16, 64)
			if err != nil {
				t.Fatalf("%s: %q: %v", tool, line, err)
			}
			return v
		}
		dec := func(s string) uint64 {
			v, err := strconv.ParseUint(s, 10, 64)
			if err != nil {
				t.Fatalf("%s: %q: %v", tool, line, err)
			}
			return v
		}
		h.Addr, h.Offset, h.Size, h.Entsize = hex(f[2]), hex(f[3]), hex(f[4]), hex(f[5])
		n := len(f)
		h.Link, h.Info, h.Addralign = uint32(dec(f[n-3])), uint32(dec(f[n-2])), dec(f[n-1])
		if n == 10 {
			for _, c := range f[6] {
				flag, ok := readelfSectionFlags[c]
				if !ok {
					flag = 1 << 62 // a flag the test does not map
				}
				h.Flags |= flag
			}
		}
		secs = append(secs, h)
	}
	if len(secs) == 0 {
		t.Fatalf("%s -S %s: no sections in\n%s", tool, path, out)
	}
	return secs
}

var readelfSectionTypes = map[string]elf.SectionType{
	"PROGBITS": elf.SHT_PROGBITS, "SYMTAB": elf.SHT_SYMTAB, "STRTAB": elf.SHT_STRTAB,
	"RELA": elf.SHT_RELA, "HASH": elf.SHT_HASH, "DYNAMIC": elf.SHT_DYNAMIC, "NOTE": elf.SHT_NOTE,
	"NOBITS": elf.SHT_NOBITS, "REL": elf.SHT_REL, "DYNSYM": elf.SHT_DYNSYM,
	"INIT_ARRAY": elf.SHT_INIT_ARRAY, "FINI_ARRAY": elf.SHT_FINI_ARRAY, "GROUP": elf.SHT_GROUP,
	"GNU_HASH": elf.SHT_GNU_HASH, "VERSYM": elf.SHT_GNU_versym, "VERNEED": elf.SHT_GNU_verneed,
	"VERDEF": elf.SHT_GNU_verdef, "MIPS_DWARF": elf.SHT_MIPS_DWARF,
}

var readelfSectionFlags = map[rune]elf.SectionFlag{
	'W': elf.SHF_WRITE, 'A': elf.SHF_ALLOC, 'X': elf.SHF_EXECINSTR, 'M': elf.SHF_MERGE,
	'S': elf.SHF_STRINGS, 'I': elf.SHF_INFO_LINK, 'L': elf.SHF_LINK_ORDER,
	'O': elf.SHF_OS_NONCONFORMING, 'G': elf.SHF_GROUP, 'T': elf.SHF_TLS,
	'C': elf.SHF_COMPRESSED, 'E': elf.SHF_EXCLUDE, 'R': elf.SHF_GNU_RETAIN,
}

// checkSections compares f's sections with readelf's and llvm-readelf's
// view of path. Types and flags the tools print in ways the test does not
// map are not compared.
func checkSections(t *testing.T, f *elf.File, path string) {
	t.Helper()
	for _, tool := range []string{"readelf", "llvm-readelf-14"} {
		want := readelfSections(t, tool, path)
		if len(f.Sections) != len(want)+1 {
			t.Errorf("%s: %d sections, %s says %d", path, len(f.Sections), tool, len(want)+1)
			continue
		}
		for i, w := range want {
			have := f.Sections[i+1].SectionHeader
			if w.Type == 0xdead {
				w.Type = have.Type
			}
			if w.Flags&(1<<62) != 0 {
				w.Flags = have.Flags
			}
			if have != w {
				t.Errorf("%s section %d:\nhave %+v\n%s %+v", filepath.Base(path), i+1, have, tool, w)
			}
		}
	}
}

// readelfSymbol is a row of `readelf -s -W`.
type readelfSymbol struct {
	value, size             uint64
	typ, bind, vis, section string
	name, version           string
	hidden                  bool
}

// readelfSymbols parses `readelf --syms -W` into the rows of each table.
func readelfSymbols(t *testing.T, path string) map[string][]readelfSymbol {
	t.Helper()
	out := mustRun(t, "readelf", "--syms", "-W", path)
	tables := map[string][]readelfSymbol{}
	table := ""
	header := regexp.MustCompile(`^Symbol table '([^']+)'`)
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		if m := header.FindStringSubmatch(line); m != nil {
			table = m[1]
			continue
		}
		f := strings.Fields(line)
		if len(f) < 7 || !strings.HasSuffix(f[0], ":") || f[0] == "Num:" {
			continue
		}
		if f[0] == "0:" {
			continue
		}
		var s readelfSymbol
		var err error
		if s.value, err = strconv.ParseUint(f[1], 16, 64); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		if s.size, err = strconv.ParseUint(f[2], 0, 64); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		s.typ, s.bind, s.vis = f[3], f[4], f[5]
		i := 6
		for i < len(f) && strings.HasPrefix(f[i], "[") { // [<localentry>: 8]
			for i < len(f) && !strings.HasSuffix(f[i], "]") {
				i++
			}
			i++
		}
		s.section = f[i]
		s.name = strings.Join(f[i+1:], " ")
		if table == ".dynsym" {
			// readelf appends the version: name@VER (n) or name@@VER.
			if n, v, ok := strings.Cut(s.name, "@"); ok {
				s.name = n
				s.hidden = !strings.HasPrefix(v, "@")
				v = strings.TrimPrefix(v, "@")
				v, _, _ = strings.Cut(v, " ")
				s.version = v
			}
		}
		tables[table] = append(tables[table], s)
	}
	return tables
}

var readelfSymTypes = map[string]elf.SymType{
	"NOTYPE": elf.STT_NOTYPE, "OBJECT": elf.STT_OBJECT, "FUNC": elf.STT_FUNC, "SECTION": elf.STT_SECTION,
	"FILE": elf.STT_FILE, "COMMON": elf.STT_COMMON, "TLS": elf.STT_TLS, "IFUNC": elf.STT_GNU_IFUNC,
}

var readelfSymBinds = map[string]elf.SymBind{
	"LOCAL": elf.STB_LOCAL, "GLOBAL": elf.STB_GLOBAL, "WEAK": elf.STB_WEAK, "UNIQUE": elf.STB_GNU_UNIQUE,
}

var readelfSymVis = map[string]elf.SymVis{
	"DEFAULT": elf.STV_DEFAULT, "INTERNAL": elf.STV_INTERNAL, "HIDDEN": elf.STV_HIDDEN, "PROTECTED": elf.STV_PROTECTED,
}

// checkSymbols compares f's symbol tables with readelf's.
func checkSymbols(t *testing.T, f *elf.File, path string) {
	t.Helper()
	tables := readelfSymbols(t, path)
	for _, tt := range []struct {
		table string
		get   func() ([]elf.Symbol, error)
	}{
		{".symtab", f.Symbols},
		{".dynsym", f.DynamicSymbols},
	} {
		want := tables[tt.table]
		have, err := tt.get()
		if len(want) == 0 {
			if len(have) != 0 {
				t.Errorf("%s: %d symbols in %s, readelf has none", path, len(have), tt.table)
			}
			continue
		}
		if err != nil || len(have) != len(want) {
			t.Errorf("%s %s: %d symbols, %v; readelf has %d", path, tt.table, len(have), err, len(want))
			continue
		}
		for i, w := range want {
			h := have[i]
			section := strconv.FormatUint(uint64(h.Section), 10)
			switch h.Section {
			case elf.SHN_UNDEF:
				section = "UND"
			case elf.SHN_ABS:
				section = "ABS"
			case elf.SHN_COMMON:
				section = "COM"
			}
			if h.Type() == elf.STT_SECTION && h.Name == "" && int(h.Section) < len(f.Sections) {
				h.Name = f.Sections[h.Section].Name // readelf shows the section's name
			}
			if section == "ABS" && h.Version == h.Name && w.version == "" {
				w.version = h.Version // readelf leaves out the version of a version's own symbol
			}
			typ, ok := readelfSymTypes[w.typ]
			if !ok {
				typ = h.Type()
			}
			if h.Name != w.name || h.Value != w.value || h.Size != w.size || h.Type() != typ ||
				h.Bind() != readelfSymBinds[w.bind] || h.Visibility() != readelfSymVis[w.vis] || section != w.section ||
				h.Version != w.version || (w.version != "" && section != "UND" && h.HiddenVersion != w.hidden) {
				t.Errorf("%s %s symbol %d:\nhave %+v (%v %v %v %s)\nreadelf %+v", filepath.Base(path), tt.table, i+1, h, h.Type(), h.Bind(), h.Visibility(), section, w)
			}
		}
	}
}

// checkNM compares the names and values of f's named defined symbols,
// except files, sections and absolute ones, with `llvm-nm-14 --defined-only
// -a` on a linked file. (On relocatable objects llvm-nm names section
// symbols and drops some mapping symbols.)
func checkNM(t *testing.T, f *elf.File, path string) {
	t.Helper()
	out := mustRun(t, "llvm-nm-14", "--defined-only", "-a", "--format=posix", path)
	var want []string
	for line := range strings.Lines(out) {
		fields := strings.Fields(line) // name type value size; unnamed symbols lack the name
		if len(fields) != 4 || strings.ContainsAny(fields[1], "aN") {
			continue
		}
		v, err := strconv.ParseUint(fields[2], 16, 64)
		if err != nil {
			t.Fatalf("llvm-nm: %q: %v", line, err)
		}
		want = append(want, fmt.Sprintf("%s %#x", fields[0], v))
	}
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	var have []string
	for _, s := range syms {
		if s.Name == "" || s.Section == elf.SHN_UNDEF || s.Section == elf.SHN_ABS || s.Type() == elf.STT_FILE || s.Type() == elf.STT_SECTION {
			continue
		}
		have = append(have, fmt.Sprintf("%s %#x", s.Name, s.Value))
	}
	slices.Sort(want)
	slices.Sort(have)
	if !slices.Equal(have, want) || len(have) == 0 {
		t.Errorf("%s: defined symbols\nhave %q\nllvm-nm %q", filepath.Base(path), have, want)
	}
}

// toolBuildID returns the GNU build ID that eu-readelf and llvm-readelf-14
// print, failing the test when they differ.
func toolBuildID(t *testing.T, path string) string {
	t.Helper()
	re := regexp.MustCompile(`Build ID: ([0-9a-f]+)`)
	id := ""
	for _, args := range [][]string{{"eu-readelf", "-n", path}, {"llvm-readelf-14", "--notes", path}} {
		m := re.FindStringSubmatch(mustRun(t, args...))
		if m == nil {
			t.Fatalf("%s printed no build ID", args[0])
		}
		if id != "" && m[1] != id {
			t.Fatalf("eu-readelf says build ID %s, %s says %s", id, args[0], m[1])
		}
		id = m[1]
	}
	return id
}

// checkDWARF checks that every DWARF section of plain reads the same from
// the compressed copy, and that the copy has sections compressed with typ.
func checkDWARF(t *testing.T, plain, compressed string, typ elf.CompressionType, gnu bool) {
	t.Helper()
	p := open(t, plain)
	c := open(t, compressed)
	seen := 0
	for _, s := range c.Sections {
		comp, err := s.Compression()
		if err != nil {
			t.Fatal(err)
		}
		if comp != nil {
			seen++
			if comp.Type != typ || comp.GNU != gnu {
				t.Errorf("%s %s: Compression() = %+v, want %v, GNU %v", compressed, s.Name, comp, typ, gnu)
			}
		}
	}
	if seen == 0 {
		t.Fatalf("%s: no compressed sections", compressed)
	}
	for _, s := range p.Sections {
		if !strings.HasPrefix(s.Name, ".debug_") {
			continue
		}
		want, err := p.SectionData(s)
		if err != nil {
			t.Fatal(err)
		}
		have, err := c.DWARFSection(s.Name)
		if err != nil {
			t.Errorf("%s %s: %v", compressed, s.Name, err)
		} else if !bytes.Equal(have, want) {
			t.Errorf("%s %s: %d bytes differ from the %d uncompressed ones", compressed, s.Name, len(have), len(want))
		}
	}
}

func TestGCC(t *testing.T) {
	exe := gccHello(t, "hello")
	f := open(t, exe)
	checkSections(t, f, exe)
	checkSymbols(t, f, exe)
	if id := hex.EncodeToString(f.BuildID()); id != toolBuildID(t, exe) || len(id) != 40 {
		t.Errorf("BuildID = %s", id)
	}
	if f.Type != elf.ET_DYN || !f.IsPIE() || f.ImageBase() != 0 {
		t.Errorf("Type %v, IsPIE %v, ImageBase %#x; want a PIE at 0", f.Type, f.IsPIE(), f.ImageBase())
	}
	want := elf.Features{Symtab: true, Dynsym: true, DWARF: true, Unwind: true}
	if ft := f.Features(); ft != want {
		t.Errorf("Features = %+v, want %+v", ft, want)
	}
	syms, _ := f.Symbols()
	kinds := map[string]string{}
	for _, s := range syms {
		kinds[s.Name] = s.Type().String() + " " + s.Bind().String()
	}
	for name, kind := range map[string]string{
		"chosen":         "STT_GNU_IFUNC STB_GLOBAL",
		"per_thread":     "STT_TLS STB_GLOBAL",
		"weak_hook":      "STT_FUNC STB_WEAK",
		"hidden_counter": "STT_OBJECT STB_LOCAL",
		"counter":        "STT_OBJECT STB_GLOBAL",
	} {
		if kinds[name] != kind {
			t.Errorf("symbol %s is %q, want %q", name, kinds[name], kind)
		}
	}

	checkNM(t, f, exe)

	nopie := gccHello(t, "hello-nopie", "-no-pie")
	g := open(t, nopie)
	if g.Type != elf.ET_EXEC || g.IsPIE() || g.ImageBase() != 0x400000 {
		t.Errorf("-no-pie: Type %v, IsPIE %v, ImageBase %#x; want ET_EXEC at 0x400000", g.Type, g.IsPIE(), g.ImageBase())
	}
	checkSections(t, g, nopie)
	checkSymbols(t, g, nopie)
}

func TestGCCCompressed(t *testing.T) {
	exe := gccHello(t, "hello")
	for _, tt := range []struct {
		mode string
		typ  elf.CompressionType
		gnu  bool
	}{
		{"zlib-gabi", elf.ELFCOMPRESS_ZLIB, false},
		{"zlib-gnu", elf.ELFCOMPRESS_ZLIB, true},
		{"zstd", elf.ELFCOMPRESS_ZSTD, false},
	} {
		t.Run(tt.mode, func(t *testing.T) {
			out := objcopied(t, "objcopy", exe, "hello."+tt.mode, "--compress-debug-sections="+tt.mode)
			checkDWARF(t, exe, out, tt.typ, tt.gnu)
			checkSections(t, open(t, out), out)
		})
	}
}

// TestWriteDecompressed inflates compressed executables, a compressed
// debug file and a 32-bit object, and checks the copies against readelf,
// against the uncompressed originals' DWARF, and, for executables, that
// they still run.
func TestWriteDecompressed(t *testing.T) {
	exe := gccHello(t, "hello")
	want := mustRun(t, exe)
	debug := objcopied(t, "objcopy", exe, "hello.debug", "--only-keep-debug")
	src := helloC(t)
	obj32 := buildFixture(t, "hello32.o", []string{"gcc"}, func(out string) error {
		return runErr("gcc", "-m32", "-g", "-O1", "-c", "-o", out, src)
	})
	for _, tt := range []struct {
		name, plain, mode string
		runs              bool
	}{
		{"exe-zlib", exe, "zlib-gabi", true},
		{"exe-zstd", exe, "zstd", true},
		{"debug-zlib", debug, "zlib-gabi", false},
		{"obj32-zlib", obj32, "zlib-gabi", false},
		{"exe-uncompressed", exe, "none", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			in := objcopied(t, "objcopy", tt.plain, tt.name, "--compress-debug-sections="+tt.mode)
			f := open(t, in)
			if has := f.HasCompressedSections(); has != (tt.mode != "none") {
				t.Errorf("%s: HasCompressedSections() = %v", in, has)
			}
			var buf bytes.Buffer
			if err := f.WriteDecompressed(&buf); err != nil {
				t.Fatalf("%s: WriteDecompressed: %v", in, err)
			}
			out := filepath.Join(t.TempDir(), tt.name)
			if err := os.WriteFile(out, buf.Bytes(), 0o755); err != nil {
				t.Fatal(err)
			}
			g := open(t, out)
			if g.HasCompressedSections() {
				t.Errorf("%s: still has compressed sections", out)
			}
			checkSections(t, g, out)
			p := open(t, tt.plain)
			for _, s := range p.Sections {
				if !strings.HasPrefix(s.Name, ".debug_") {
					continue
				}
				w, _ := p.SectionData(s)
				gs := g.Section(s.Name)
				if gs == nil {
					t.Errorf("%s: no %s", out, s.Name)
					continue
				}
				if h, err := gs.Data(); err != nil || !bytes.Equal(h, w) {
					t.Errorf("%s %s: %d bytes (%v), want the %d of %s", out, s.Name, len(h), err, len(w), tt.plain)
				}
			}
			if have, want := mustRun(t, "readelf", "--debug-dump=info,line", out), mustRun(t, "readelf", "--debug-dump=info,line", tt.plain); have != want {
				t.Errorf("readelf --debug-dump of %s differs from that of %s", out, tt.plain)
			}
			if tt.runs {
				if have := mustRun(t, out); have != want {
					t.Errorf("%s prints %q, want %q", out, have, want)
				}
			}
		})
	}
}

// TestGCCDebugFile splits hello into a stripped executable that links to a
// separate debug file, the way distributions ship them.
func TestGCCDebugFile(t *testing.T) {
	exe := gccHello(t, "hello")
	debug := objcopied(t, "objcopy", exe, "hello.debug", "--only-keep-debug")
	stripped := buildFixture(t, "hello.stripped", []string{"objcopy"}, func(out string) error {
		return runErr("objcopy", "--strip-debug", "--add-gnu-debuglink="+debug, exe, out)
	})
	e, d, s := open(t, exe), open(t, debug), open(t, stripped)
	want := elf.Features{Symtab: true, DWARF: true, DebugOnly: true}
	if ft := d.Features(); ft != want {
		t.Errorf("debug file Features = %+v, want %+v", ft, want)
	}
	want = elf.Features{Symtab: true, Dynsym: true, Unwind: true}
	if ft := s.Features(); ft != want {
		t.Errorf("stripped Features = %+v, want %+v", ft, want)
	}
	for _, f := range []*elf.File{d, s} {
		if !bytes.Equal(f.BuildID(), e.BuildID()) || f.ImageBase() != e.ImageBase() {
			t.Errorf("BuildID %x, ImageBase %#x; want %x, %#x", f.BuildID(), f.ImageBase(), e.BuildID(), e.ImageBase())
		}
	}
	checkSections(t, d, debug)
	checkSymbols(t, d, debug)
	data, err := os.ReadFile(debug)
	if err != nil {
		t.Fatal(err)
	}
	if file, crc, ok := s.DebugLink(); file != "hello.debug" || crc != crc32.ChecksumIEEE(data) || !ok {
		t.Errorf("DebugLink = %q, %#x, %v; want hello.debug, %#x", file, crc, ok, crc32.ChecksumIEEE(data))
	}
}

// TestVersions reads version definitions (SHT_GNU_verdef) from a library
// that defines foo in two versions.
func TestVersions(t *testing.T) {
	src, err1 := filepath.Abs("testdata/src/versioned.c")
	script, err2 := filepath.Abs("testdata/src/versioned.map")
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	lib := buildFixture(t, "libversioned.so", []string{"gcc"}, func(out string) error {
		return runErr("gcc", "-shared", "-fPIC", "-g", "-Wl,--version-script="+script, "-o", out, src)
	})
	f := open(t, lib)
	checkSymbols(t, f, lib)
	dyn, err := f.DynamicSymbols()
	if err != nil {
		t.Fatal(err)
	}
	var have []string
	for _, s := range dyn {
		if s.Name == "foo" || s.Name == "bar" {
			sep := "@@"
			if s.HiddenVersion {
				sep = "@"
			}
			have = append(have, s.Name+sep+s.Version+" "+s.Library)
		}
	}
	want := []string{"foo@VERS_1 ", "foo@@VERS_2 ", "bar@@VERS_1 "}
	if !slices.Equal(have, want) {
		t.Errorf("versions %q, want %q", have, want)
	}
}

// TestCrossTargets reads hello.c built for other classes, byte orders and
// machines, compressed with llvm-objcopy-14 where GNU objcopy cannot.
func TestCrossTargets(t *testing.T) {
	tests := []struct {
		target  string
		shared  bool
		class   elf.Class
		data    elf.Data
		machine elf.Machine
		objcopy string // tool that compresses the target's DWARF, if any
	}{
		{"i386-linux-gnu", true, elf.ELFCLASS32, elf.ELFDATA2LSB, elf.EM_386, "objcopy"},
		{"armv7-linux-gnueabihf", true, elf.ELFCLASS32, elf.ELFDATA2LSB, elf.EM_ARM, "llvm-objcopy-14"},
		{"mips-linux-gnu", true, elf.ELFCLASS32, elf.ELFDATA2MSB, elf.EM_MIPS, "llvm-objcopy-14"},
		{"powerpc64-linux-gnu", true, elf.ELFCLASS64, elf.ELFDATA2MSB, elf.EM_PPC64, "llvm-objcopy-14"},
		{"aarch64_be-linux-gnu", false, elf.ELFCLASS64, elf.ELFDATA2MSB, elf.EM_AARCH64, ""},
		{"riscv64-linux-gnu", false, elf.ELFCLASS64, elf.ELFDATA2LSB, elf.EM_RISCV, ""},
	}
	for _, tt := range tests {
		t.Run(tt.target, func(t *testing.T) {
			path := clangHello(t, tt.target, tt.shared)
			f := open(t, path)
			if f.Class != tt.class || f.Data != tt.data || f.Machine != tt.machine {
				t.Errorf("%v %v %v, want %v %v %v", f.Class, f.Data, f.Machine, tt.class, tt.data, tt.machine)
			}
			checkSections(t, f, path)
			checkSymbols(t, f, path)
			if tt.shared {
				checkNM(t, f, path)
			}
			if !f.Features().DWARF {
				t.Error("no DWARF")
			}
			if tt.shared {
				if id := hex.EncodeToString(f.BuildID()); id != toolBuildID(t, path) {
					t.Errorf("BuildID = %s", id)
				}
			} else if f.Type != elf.ET_REL || f.ImageBase() != 0 {
				t.Errorf("Type %v, ImageBase %#x; want ET_REL at 0", f.Type, f.ImageBase())
			}
			if tt.objcopy == "" {
				return
			}
			z := objcopied(t, tt.objcopy, path, tt.target+".zlib", "--compress-debug-sections=zlib")
			checkDWARF(t, path, z, elf.ELFCOMPRESS_ZLIB, false)
			if tt.objcopy == "objcopy" {
				zs := objcopied(t, tt.objcopy, path, tt.target+".zstd", "--compress-debug-sections=zstd")
				checkDWARF(t, path, zs, elf.ELFCOMPRESS_ZSTD, false)
			} else {
				gnu := objcopied(t, tt.objcopy, path, tt.target+".zlib-gnu", "--compress-debug-sections=zlib-gnu")
				checkDWARF(t, path, gnu, elf.ELFCOMPRESS_ZLIB, true)
			}
		})
	}
}

// TestGCC32 reads an ELF32 relocatable object from gcc -m32.
func TestGCC32(t *testing.T) {
	src := helloC(t)
	obj := buildFixture(t, "hello32.o", []string{"gcc"}, func(out string) error {
		return runErr("gcc", "-m32", "-g", "-O1", "-c", "-o", out, src)
	})
	f := open(t, obj)
	if f.Class != elf.ELFCLASS32 || f.Machine != elf.EM_386 || f.Type != elf.ET_REL {
		t.Errorf("%v %v %v, want an ELFCLASS32 EM_386 ET_REL", f.Class, f.Machine, f.Type)
	}
	checkSections(t, f, obj)
	checkSymbols(t, f, obj)
}

// TestGo reads Go executables with and without symbols and DWARF. Go
// compresses its DWARF sections (SHF_COMPRESSED, zlib) itself.
func TestGo(t *testing.T) {
	src, err := filepath.Abs("testdata/src/gohello/main.go")
	if err != nil {
		t.Fatal(err)
	}
	build := func(name string, flags ...string) string {
		return buildFixture(t, name, []string{"go"}, func(out string) error {
			args := append([]string{"go", "build", "-o", out}, flags...)
			return runErr(append(args, src)...)
		})
	}
	full := build("gohello")
	stripped := build("gohello-stripped", "-ldflags=-s -w")
	for _, tt := range []struct {
		path string
		want elf.Features
	}{
		{full, elf.Features{Symtab: true, DWARF: true, Unwind: true, GoPclntab: true}},
		{stripped, elf.Features{GoPclntab: true}},
	} {
		f := open(t, tt.path)
		if ft := f.Features(); ft != tt.want {
			t.Errorf("%s: Features = %+v, want %+v", filepath.Base(tt.path), ft, tt.want)
		}
		goID := strings.TrimSpace(mustRun(t, "go", "tool", "buildid", tt.path))
		if id := f.GoBuildID(); id != goID || id == "" {
			t.Errorf("%s: GoBuildID = %q, go tool buildid says %q", filepath.Base(tt.path), id, goID)
		}
		if id := hex.EncodeToString(f.BuildID()); id != toolBuildID(t, tt.path) {
			t.Errorf("%s: BuildID = %s", filepath.Base(tt.path), id)
		}
		checkSections(t, f, tt.path)
	}
	f := open(t, full)
	checkSymbols(t, f, full)
	plain := objcopied(t, "objcopy", full, "gohello.plain", "--decompress-debug-sections")
	p := open(t, plain)
	for _, name := range []string{"debug_info", "debug_line", "debug_frame", "debug_abbrev"} {
		want, err1 := p.DWARFSection(name)
		have, err2 := f.DWARFSection(name)
		if err1 != nil || err2 != nil || len(want) == 0 || !bytes.Equal(have, want) {
			t.Errorf("%s: %d bytes (%v), objcopy --decompress-debug-sections gives %d (%v)", name, len(have), err2, len(want), err1)
		}
	}
	// Without a .gopclntab section (as some linkers lay it out) the
	// pclntab is found by its symbol, in a Go binary only.
	for _, tt := range []struct {
		name, goNote string
		want         bool
	}{
		{"gohello.pcln-renamed", ".note.go.buildid", true},
		{"gohello.pcln-renamed-nogo", ".note.not-go", false},
	} {
		path := objcopied(t, "objcopy", full, tt.name, "--rename-section", ".gopclntab=.data.rel.ro.pcln",
			"--rename-section", ".go.buildinfo=.data.bi", "--rename-section", ".note.go.buildid="+tt.goNote)
		if got := open(t, path).Features().GoPclntab; got != tt.want {
			t.Errorf("%s: GoPclntab = %v, want %v", tt.name, got, tt.want)
		}
	}
}
