package macho_test

import (
	"encoding/binary"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"github.com/backtrail/backtrail/debugfile/macho"
)

// sharedFixtures holds the third-party fixtures the whole repository
// shares; ../../testdata/PROVENANCE.md says where they came from.
const sharedFixtures = "../../testdata"

// shared names the files of sharedFixtures this package reads by the short
// names its tables use.
var shared = map[string]string{
	"crash":                  "sentry-symbolic/macos/crash",
	"crash.dsym":             "sentry-symbolic/macos/crash.dSYM/Contents/Resources/DWARF/crash",
	"overlapping_funcs.dsym": "sentry-symbolic/macos/overlapping_funcs.dSYM/Contents/Resources/DWARF/overlapping_funcs",
}

// testdataPath returns the path of a test file by its short name.
func testdataPath(name string) string {
	if rel, ok := shared[name]; ok {
		return filepath.Join(sharedFixtures, rel)
	}
	return filepath.Join("testdata", name)
}

// inCI reports whether the tests run in CI (CI=true), where missing
// fixtures and tools fail the test instead of skipping it.
func inCI() bool {
	ci, _ := strconv.ParseBool(os.Getenv("CI"))
	return ci
}

// sharedFixture returns the path of a file under sharedFixtures.
func sharedFixture(t testing.TB, rel string) string {
	t.Helper()
	return filepath.Join(sharedFixtures, rel)
}

// tool returns the path of an external program. It skips the test when the
// program is not installed, except in CI, where it fails.
func tool(t testing.TB, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if inCI() {
			t.Fatalf("%s missing in CI: %v", name, err)
		}
		t.Skipf("%s not installed: %v", name, err)
	}
	return p
}

// run runs a program and returns its standard output.
func run(t testing.TB, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(tool(t, name), args...)
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, ee.Stderr)
		}
		t.Fatalf("%s %s: %v", name, strings.Join(args, " "), err)
	}
	return string(out)
}

func readFile(t testing.TB, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// within reports whether sub lies inside data's memory.
func within(data, sub []byte) bool {
	if len(sub) == 0 {
		return true
	}
	if len(data) == 0 {
		return false
	}
	lo := uintptr(unsafe.Pointer(unsafe.SliceData(data)))
	p := uintptr(unsafe.Pointer(unsafe.SliceData(sub)))
	return p >= lo && p-lo <= uintptr(len(data)) && uintptr(len(sub)) <= uintptr(len(data))-(p-lo)
}

// Thin files under testdata. "dsym" files are dSYM companions: the DWARF
// file inside a .dSYM bundle, renamed.
var thinTestdata = []string{
	"crash",
	"crash.dsym",
	"overlapping_funcs.dsym",
	"hello-arm64.o",
	"hello-x86_64.o",
	"hello-i386.o",
	"hello-armv7.o",
	"hello-arm64_32.o",
}

// Thin files in the shared fixtures.
var thinShared = []string{
	"crashprobe/arm64-debug/dSYMs/arm64-CrashLibiOS.framework.dSYM/Contents/Resources/DWARF/CrashLibiOS",
	"crashprobe/arm64-debug/dSYMs/arm64-CrashProbeiOS.app.dSYM/Contents/Resources/DWARF/CrashProbeiOS",
}

// A machoBuilder writes small Mach-O files from the loader.h layouts, in
// either byte order and width, for cases no toolchain here produces
// (big-endian files, compressed sections, odd load commands).
type machoBuilder struct {
	big, is64 bool
	cpu, sub  uint32
	typ       macho.Type
	segname   string // of the one segment
	vmaddr    uint64
	sections  []testSection
	uuid      []byte // 16 bytes, or nil for no LC_UUID
	syms      []testSymbol
	dylibs    []testDylib
	extra     [][]byte // raw load commands, cmd and cmdsize included
}

type testSection struct {
	seg, name string
	flags     uint32
	addr      uint64
	data      []byte
	size      uint64 // if non-zero, overrides len(data) in the header
	noData    bool   // write offset 0
}

type testSymbol struct {
	name  string
	typ   uint8
	sect  uint8
	desc  uint16
	value uint64
}

type testDylib struct {
	cmd  macho.LoadCmd
	name string
}

func (mb *machoBuilder) order() binary.AppendByteOrder {
	if mb.big {
		return binary.BigEndian
	}
	return binary.LittleEndian
}

func pad16(s string) []byte {
	b := make([]byte, 16)
	copy(b, s)
	return b
}

func (mb *machoBuilder) build() []byte {
	o := mb.order()
	hdr, seg, sect, nl := 28, 56, 68, 12
	if mb.is64 {
		hdr, seg, sect, nl = 32, 72, 80, 16
	}
	dylibSize := func(name string) int { return (24 + len(name) + 1 + 7) &^ 7 }

	ncmds := 1
	cmdsz := seg + len(mb.sections)*sect
	if mb.uuid != nil {
		ncmds++
		cmdsz += 24
	}
	if mb.syms != nil {
		ncmds++
		cmdsz += 24
	}
	for _, d := range mb.dylibs {
		ncmds++
		cmdsz += dylibSize(d.name)
	}
	for _, e := range mb.extra {
		ncmds++
		cmdsz += len(e)
	}

	// Lay out the data after the commands.
	next := uint64(hdr + cmdsz)
	offs := make([]uint64, len(mb.sections))
	for i, s := range mb.sections {
		next = (next + 7) &^ 7
		offs[i] = next
		next += uint64(len(s.data))
	}
	dataEnd := next
	symoff := (next + 7) &^ 7
	stroff := symoff + uint64(len(mb.syms)*nl)
	strtab := []byte{0}
	strx := make([]uint32, len(mb.syms))
	for i, s := range mb.syms {
		if s.name != "" {
			strx[i] = uint32(len(strtab))
			strtab = append(append(strtab, s.name...), 0)
		}
	}

	var b []byte
	magic := uint32(macho.MH_MAGIC)
	if mb.is64 {
		magic = macho.MH_MAGIC_64
	}
	b = o.AppendUint32(b, magic)
	b = o.AppendUint32(b, mb.cpu)
	b = o.AppendUint32(b, mb.sub)
	b = o.AppendUint32(b, uint32(mb.typ))
	b = o.AppendUint32(b, uint32(ncmds))
	b = o.AppendUint32(b, uint32(cmdsz))
	b = o.AppendUint32(b, 0)
	if mb.is64 {
		b = o.AppendUint32(b, 0)
	}

	word := func(v uint64) {
		if mb.is64 {
			b = o.AppendUint64(b, v)
		} else {
			b = o.AppendUint32(b, uint32(v))
		}
	}
	cmd := macho.LC_SEGMENT
	if mb.is64 {
		cmd = macho.LC_SEGMENT_64
	}
	fileoff := uint64(hdr + cmdsz)
	b = o.AppendUint32(b, uint32(cmd))
	b = o.AppendUint32(b, uint32(seg+len(mb.sections)*sect))
	b = append(b, pad16(mb.segname)...)
	word(mb.vmaddr)
	word(dataEnd - fileoff) // vmsize
	word(fileoff)
	word(dataEnd - fileoff) // filesize
	b = o.AppendUint32(b, 7)
	b = o.AppendUint32(b, 5)
	b = o.AppendUint32(b, uint32(len(mb.sections)))
	b = o.AppendUint32(b, 0)
	for i, s := range mb.sections {
		b = append(b, pad16(s.name)...)
		b = append(b, pad16(s.seg)...)
		size := s.size
		if size == 0 {
			size = uint64(len(s.data))
		}
		word(s.addr)
		word(size)
		off := uint32(offs[i])
		if s.noData {
			off = 0
		}
		b = o.AppendUint32(b, off)
		b = o.AppendUint32(b, 0) // align
		b = o.AppendUint32(b, 0) // reloff
		b = o.AppendUint32(b, 0) // nreloc
		b = o.AppendUint32(b, s.flags)
		b = o.AppendUint32(b, 0)
		b = o.AppendUint32(b, 0)
		if mb.is64 {
			b = o.AppendUint32(b, 0)
		}
	}
	if mb.uuid != nil {
		b = o.AppendUint32(b, uint32(macho.LC_UUID))
		b = o.AppendUint32(b, 24)
		b = append(b, mb.uuid...)
	}
	if mb.syms != nil {
		b = o.AppendUint32(b, uint32(macho.LC_SYMTAB))
		b = o.AppendUint32(b, 24)
		b = o.AppendUint32(b, uint32(symoff))
		b = o.AppendUint32(b, uint32(len(mb.syms)))
		b = o.AppendUint32(b, uint32(stroff))
		b = o.AppendUint32(b, uint32(len(strtab)))
	}
	for _, d := range mb.dylibs {
		n := dylibSize(d.name)
		start := len(b)
		b = o.AppendUint32(b, uint32(d.cmd))
		b = o.AppendUint32(b, uint32(n))
		b = o.AppendUint32(b, 24)      // name offset
		b = o.AppendUint32(b, 2)       // timestamp
		b = o.AppendUint32(b, 0x10203) // current version 1.2.3
		b = o.AppendUint32(b, 0x10000) // compatibility version 1.0
		b = append(b, d.name...)
		b = append(b, make([]byte, n-(len(b)-start))...)
	}
	for _, e := range mb.extra {
		b = append(b, e...)
	}
	for i, s := range mb.sections {
		b = append(b, make([]byte, offs[i]-uint64(len(b)))...)
		b = append(b, s.data...)
	}
	if mb.syms != nil {
		b = append(b, make([]byte, symoff-uint64(len(b)))...)
		for i, s := range mb.syms {
			b = o.AppendUint32(b, strx[i])
			b = append(b, s.typ, s.sect)
			b = o.AppendUint16(b, s.desc)
			word(s.value)
		}
		b = append(b, strtab...)
	}
	return b
}

// fat builds a fat file around thin files, with 32-bit or 64-bit arch
// records, aligning each thin file to 1<<align bytes.
func fat(is64 bool, align uint32, thin ...[]byte) []byte {
	o := binary.BigEndian
	var b []byte
	if is64 {
		b = o.AppendUint32(b, macho.FAT_MAGIC_64)
	} else {
		b = o.AppendUint32(b, macho.FAT_MAGIC)
	}
	b = o.AppendUint32(b, uint32(len(thin)))
	recSize := 20
	if is64 {
		recSize = 32
	}
	next := uint64(8 + len(thin)*recSize)
	offs := make([]uint64, len(thin))
	for i, t := range thin {
		next = (next + 1<<align - 1) &^ (1<<align - 1)
		offs[i] = next
		next += uint64(len(t))
	}
	for i, t := range thin {
		// cputype and cpusubtype come from the thin file's header.
		e := binary.ByteOrder(binary.LittleEndian)
		if binary.BigEndian.Uint32(t) == macho.MH_MAGIC || binary.BigEndian.Uint32(t) == macho.MH_MAGIC_64 {
			e = binary.BigEndian
		}
		b = o.AppendUint32(b, e.Uint32(t[4:]))
		b = o.AppendUint32(b, e.Uint32(t[8:]))
		if is64 {
			b = o.AppendUint64(b, offs[i])
			b = o.AppendUint64(b, uint64(len(t)))
			b = o.AppendUint32(b, align)
			b = o.AppendUint32(b, 0)
		} else {
			b = o.AppendUint32(b, uint32(offs[i]))
			b = o.AppendUint32(b, uint32(len(t)))
			b = o.AppendUint32(b, align)
		}
	}
	for i, t := range thin {
		b = append(b, make([]byte, offs[i]-uint64(len(b)))...)
		b = append(b, t...)
	}
	return b
}

// execIn returns a command that runs name in dir.
func execIn(dir, name string, args ...string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	return cmd
}

func TestMain(m *testing.M) {
	code := m.Run()
	if builtDir != "" {
		os.RemoveAll(builtDir)
	}
	os.Exit(code)
}
