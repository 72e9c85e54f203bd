package macho_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/backtrail/backtrail/debugfile/macho"
)

// universalHeaders runs llvm-objdump --macho --universal-headers and returns
// one "arch offset size align" line per architecture.
func universalHeaders(t *testing.T, path string) (magic string, arches []string) {
	out := run(t, "llvm-objdump-14", "--macho", "--universal-headers", path)
	var cur []string
	flush := func() {
		if cur != nil {
			arches = append(arches, strings.Join(cur, " "))
		}
		cur = nil
	}
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) == 2 && f[0] == "fat_magic":
			magic = f[1]
		case len(f) == 2 && f[0] == "architecture":
			flush()
			cur = []string{f[1]}
		case len(f) >= 2 && (f[0] == "offset" || f[0] == "size" || f[0] == "align"):
			cur = append(cur, f[1])
		}
	}
	flush()
	return magic, arches
}

func fatArchLines(ff *macho.FatFile) []string {
	var lines []string
	for _, a := range ff.Arches {
		lines = append(lines, fmt.Sprintf("%s %d %d 2^%d", macho.ArchName(a.Cpu, a.SubCpu), a.Offset, a.Size, a.Align))
	}
	return lines
}

// checkFat checks a fat file's arches against the thin files it was made
// from, and against llvm-objdump.
func checkFat(t *testing.T, data []byte, path string, wantMagic uint32, thin map[string][]byte) {
	t.Helper()
	ff, err := macho.NewFatFile(data)
	if err != nil {
		t.Fatal(err)
	}
	if ff.Magic != wantMagic {
		t.Errorf("Magic %#x, want %#x", ff.Magic, wantMagic)
	}
	if len(ff.Arches) != len(thin) {
		t.Fatalf("%d arches, want %d", len(ff.Arches), len(thin))
	}
	for _, a := range ff.Arches {
		name := a.File.Arch()
		if macho.ArchName(a.Cpu, a.SubCpu) != name || a.File.Cpu != a.Cpu {
			t.Errorf("fat_arch %s holds a %s file", macho.ArchName(a.Cpu, a.SubCpu), name)
		}
		want, ok := thin[name]
		if !ok {
			t.Errorf("unexpected arch %s", name)
			continue
		}
		if !bytes.Equal(a.File.Data(), want) || &a.File.Data()[0] != &data[a.Offset] {
			t.Errorf("%s: thin file is not the subslice at %#x", name, a.Offset)
		}
		if ff.Lookup(name) != a.File {
			t.Errorf("Lookup(%q) did not find the arch", name)
		}
		// The thin file's offsets count from its own start.
		sec := a.File.Section("__TEXT", "__text")
		d, err := sec.Data()
		if err != nil || !bytes.Equal(d, want[sec.Offset:uint64(sec.Offset)+sec.Size]) {
			t.Errorf("%s: __text: %v", name, err)
		}
	}
	if ff.Lookup("ppc") != nil || ff.Lookup("bogus") != nil {
		t.Error("Lookup found an arch that is not there")
	}

	if path != "" {
		tool(t, "llvm-objdump-14")
		magic, arches := universalHeaders(t, path)
		wantName := "FAT_MAGIC"
		if wantMagic == macho.FAT_MAGIC_64 {
			wantName = "FAT_MAGIC_64"
		}
		if magic != wantName {
			t.Errorf("llvm-objdump: fat_magic %s, want %s", magic, wantName)
		}
		compareLists(t, "arches", fatArchLines(ff), arches)
	}
}

func testdataThin(t testing.TB, arches ...string) map[string][]byte {
	m := map[string][]byte{}
	for _, a := range arches {
		m[a] = readFile(t, filepath.Join("testdata", "hello-"+a+".o"))
	}
	return m
}

// TestFat32 reads testdata/hello.fat, made by llvm-lipo-14 -create from
// hello-arm64.o and hello-x86_64.o (see TestBuildFixtures).
func TestFat32(t *testing.T) {
	path := filepath.Join("testdata", "hello.fat")
	checkFat(t, readFile(t, path), path, macho.FAT_MAGIC, testdataThin(t, "arm64", "x86_64"))
}

// TestFat64 writes a FAT_MAGIC_64 file by hand, since llvm-lipo-14 does not.
func TestFat64(t *testing.T) {
	thin := testdataThin(t, "arm64", "x86_64", "i386", "armv7")
	data := fat(true, 12, thin["arm64"], thin["x86_64"], thin["i386"], thin["armv7"])
	path := filepath.Join(t.TempDir(), "hello.fat64")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	checkFat(t, data, path, macho.FAT_MAGIC_64, thin)

	// The same layout with 32-bit records.
	data = fat(false, 12, thin["arm64"], thin["x86_64"], thin["i386"], thin["armv7"])
	checkFat(t, data, "", macho.FAT_MAGIC, thin)
}

// builtDir holds what buildOnce built; TestMain removes it.
var builtDir string

// buildOnce compiles testdata/hello.c for the architectures of the
// committed objects, once per test binary.
var buildOnce = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "macho-test-")
	if err != nil {
		return "", err
	}
	builtDir = dir
	src, err := os.ReadFile(filepath.Join("testdata", "hello.c"))
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, "hello.c"), src, 0o644); err != nil {
		return "", err
	}
	for arch, target := range helloTargets {
		// The command that made testdata/hello-$arch.o.
		cmd := execIn(dir, "clang-14", "-target", target, "-g", "-O1", "-fdebug-compilation-dir=.", "-c", "hello.c", "-o", "hello-"+arch+".o")
		if out, err := cmd.CombinedOutput(); err != nil {
			return "", fmt.Errorf("%v: %v\n%s", cmd.Args, err, out)
		}
	}
	// The command that made testdata/hello.fat.
	cmd := execIn(dir, "llvm-lipo-14", "-create", "hello-arm64.o", "hello-x86_64.o", "-output", "hello.fat")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("%v: %v\n%s", cmd.Args, err, out)
	}
	return dir, nil
})

var helloTargets = map[string]string{
	"arm64":    "arm64-apple-macos11",
	"x86_64":   "x86_64-apple-macos11",
	"i386":     "i386-apple-macos10.12",
	"armv7":    "armv7-apple-ios9",
	"arm64_32": "arm64_32-apple-watchos5",
}

// sectionNames lists "seg,sect size" for every section of every arch.
func sectionNames(t *testing.T, data []byte) []string {
	ff, err := macho.NewFatFile(data)
	if errors.Is(err, macho.ErrNotFat) {
		f, err := macho.NewFile(data)
		if err != nil {
			t.Fatal(err)
		}
		ff = &macho.FatFile{Arches: []macho.FatArch{{File: f}}}
	} else if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, a := range ff.Arches {
		for _, s := range a.File.Sections {
			names = append(names, fmt.Sprintf("%s %s,%s", a.File.Arch(), s.Seg, s.Name))
		}
	}
	return names
}

// TestBuildFixtures rebuilds the hello objects and fat file with clang-14
// and llvm-lipo-14 and checks that they have the committed files' layout.
// This is how testdata/hello-*.o and hello.fat were made (Debian clang
// 14.0.6, in testdata/).
func TestBuildFixtures(t *testing.T) {
	tool(t, "clang-14")
	tool(t, "llvm-lipo-14")
	dir, err := buildOnce()
	if err != nil {
		t.Fatal(err)
	}
	names := []string{"hello.fat"}
	for arch := range helloTargets {
		names = append(names, "hello-"+arch+".o")
	}
	slices.Sort(names)
	for _, name := range names {
		built := readFile(t, filepath.Join(dir, name))
		committed := readFile(t, testdataPath(name))
		compareLists(t, name, sectionNames(t, built), sectionNames(t, committed))
	}
	thin := map[string][]byte{}
	for _, arch := range []string{"arm64", "x86_64"} {
		thin[arch] = readFile(t, filepath.Join(dir, "hello-"+arch+".o"))
	}
	checkFat(t, readFile(t, filepath.Join(dir, "hello.fat")), filepath.Join(dir, "hello.fat"), macho.FAT_MAGIC, thin)
}

func TestNotFat(t *testing.T) {
	thin := readFile(t, "testdata/hello-arm64.o")
	for _, tt := range []struct {
		name string
		data []byte
	}{
		{"empty", nil},
		{"short", []byte{0xca, 0xfe, 0xba, 0xbe, 0, 0, 0}},
		{"thin", thin},
		{"elf", []byte("\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00")},
		// A Java class file: magic, minor_version 0, major_version 52 (Java 8).
		{"java class", []byte("\xca\xfe\xba\xbe\x00\x00\x00\x34\x00\x1d\x0a\x00")},
		{"31 arches", binary.BigEndian.AppendUint32([]byte{0xca, 0xfe, 0xba, 0xbe}, 31)},
		{"fat64 with 31 arches", binary.BigEndian.AppendUint32([]byte{0xca, 0xfe, 0xba, 0xbf}, 31)},
	} {
		if _, err := macho.NewFatFile(tt.data); err != macho.ErrNotFat {
			t.Errorf("%s: have %v, want ErrNotFat", tt.name, err)
		}
	}
}

// TestFatErrors checks errors in fat headers and in the thin files inside,
// whose offsets count from the start of the fat file.
func TestFatErrors(t *testing.T) {
	thin := testdataThin(t, "arm64", "x86_64")
	be := binary.BigEndian
	base := func() []byte { return fat(false, 12, thin["arm64"], thin["x86_64"]) }
	// Records at 8 and 28; thin files at 0x1000 and 0x2000.
	for _, tt := range []struct {
		name   string
		edit   func([]byte) []byte
		off    uint64
		substr string
	}{
		{"no arches", func(b []byte) []byte { be.PutUint32(b[4:], 0); return b }, 4, "no architectures"},
		{"records past end", func(b []byte) []byte { return b[:30] }, 4, "nfat_arch records run past the end"},
		{"arch past end", func(b []byte) []byte { be.PutUint32(b[28+12:], 0x100000); return b }, 28 + 8, "fat arch 1 (x86_64): 0x100000 bytes at 0x2000 run past the end"},
		{"offset past end", func(b []byte) []byte { be.PutUint32(b[8+8:], 0xfffffff0); return b }, 8 + 8, "fat arch 0 (arm64): "},
		{"duplicate", func(b []byte) []byte { copy(b[28:36], b[8:16]); return b }, 28, "fat arch 1 (arm64): duplicate architecture"},
		{"not mach-o", func(b []byte) []byte { b[0x2000] = 'X'; return b }, 0x2000, "fat arch 1 (x86_64): not a thin Mach-O file"},
		{"bad thin header", func(b []byte) []byte { binary.LittleEndian.PutUint32(b[0x2000+20:], 0xffffff); return b }, 0x2000 + 20, "sizeofcmds runs past the end"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := macho.NewFatFile(tt.edit(base()))
			var fe *macho.FormatError
			if !errors.As(err, &fe) {
				t.Fatalf("have %v, want a FormatError", err)
			}
			if fe.Off != tt.off || !strings.Contains(err.Error(), tt.substr) {
				t.Errorf("have %q (Off %#x)\nwant offset %#x and %q", err, fe.Off, tt.off, tt.substr)
			}
		})
	}

	// A section that runs past the end of its thin file, though not past
	// the end of the fat file, is an error too; the offset counts from the
	// start of the fat file.
	data := base()
	ff, err := macho.NewFatFile(data)
	if err != nil {
		t.Fatal(err)
	}
	x := ff.Lookup("x86_64")
	text := x.Section("__TEXT", "__text")
	binary.LittleEndian.PutUint64(data[0x2000+textHeaderOff(t, x, text)+40:], uint64(len(thin["x86_64"])))
	ff, err = macho.NewFatFile(data)
	if err != nil {
		t.Fatal(err)
	}
	_, err = ff.Lookup("x86_64").Section("__TEXT", "__text").Data()
	var fe *macho.FormatError
	if !errors.As(err, &fe) || fe.Off != 0x2000+textHeaderOff(t, x, text)+48 {
		t.Errorf("section past its thin file: %v", err)
	}
}

// textHeaderOff finds the section header of s in f's load commands.
func textHeaderOff(t *testing.T, f *macho.File, s *macho.Section) uint64 {
	for _, l := range f.Loads {
		if i := bytes.Index(l.Raw, append([]byte(s.Name), 0)); i >= 0 && l.Cmd == macho.LC_SEGMENT_64 {
			return l.Off + uint64(i)
		}
	}
	t.Fatal("section header not found")
	return 0
}

func TestOpen(t *testing.T) {
	// A thin file becomes one arch.
	ff, err := macho.Open(testdataPath("crash"))
	if err != nil {
		t.Fatal(err)
	}
	if ff.Magic != macho.MH_MAGIC_64 || len(ff.Arches) != 1 {
		t.Fatalf("thin: magic %#x, %d arches", ff.Magic, len(ff.Arches))
	}
	a := ff.Arches[0]
	if a.Offset != 0 || a.Size != 139580 || a.Cpu != macho.CPU_TYPE_X86_64 || a.File.Type != macho.MH_EXECUTE {
		t.Errorf("thin arch: %+v", a)
	}
	if ff.Lookup("x86_64") != a.File {
		t.Error("Lookup(x86_64) on a thin file")
	}
	if err := ff.Close(); err != nil {
		t.Error(err)
	}

	ff, err = macho.Open("testdata/hello.fat")
	if err != nil {
		t.Fatal(err)
	}
	if ff.Magic != macho.FAT_MAGIC || len(ff.Arches) != 2 {
		t.Fatalf("fat: magic %#x, %d arches", ff.Magic, len(ff.Arches))
	}
	if err := ff.Close(); err != nil {
		t.Error(err)
	}

	dir := t.TempDir()
	for _, tt := range []struct {
		name string
		data []byte
		want error
	}{
		{"empty", nil, macho.ErrNotMachO},
		{"java.class", []byte("\xca\xfe\xba\xbe\x00\x00\x00\x34\x00\x1d\x0a\x00"), macho.ErrNotMachO},
		{"text", []byte("hello, world\n"), macho.ErrNotMachO},
	} {
		path := filepath.Join(dir, tt.name)
		if err := os.WriteFile(path, tt.data, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := macho.Open(path)
		if !errors.Is(err, tt.want) || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: have %v, want %v", tt.name, err, tt.want)
		}
	}
	if _, err := macho.Open(filepath.Join(dir, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}
