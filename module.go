package backtrail

import (
	"bufio"
	"bytes"
	"debug/elf"
	"encoding/hex"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"

	"github.com/backtrail/backtrail/report"
)

// modules describes the running executable for reports (docs/report-format.md
// §3), computed once. Go frames arrive symbolized, but the ids let the
// server match the binary's debug files, and the load address turns
// addresses back into file offsets.
var modules = sync.OnceValue(func() []report.Module {
	m := report.Module{Type: "go", Arch: runtime.GOARCH}
	if bi, ok := debug.ReadBuildInfo(); ok {
		m.Name = bi.Main.Path
	}
	exe, err := os.Executable()
	if err == nil {
		m.Path = exe
	}
	if runtime.GOOS == "linux" && exe != "" {
		readELFModule(&m, exe)
	}
	return []report.Module{m}
})

// readELFModule fills the ids and layout of an ELF executable: the Go build
// ID note, the GNU build ID (code_id, and debug_id derived from it as Breakpad
// and Sentry do), the link-time base and size of the loadable segments, and
// the load address from /proc/self/maps.
func readELFModule(m *report.Module, path string) {
	f, err := elf.Open(path)
	if err != nil {
		return
	}
	defer f.Close()
	m.Type = "elf"
	if s := f.Section(".note.go.buildid"); s != nil {
		if data, err := s.Data(); err == nil {
			if _, desc, ok := parseNote(data, f.ByteOrder.Uint32); ok {
				m.BuildID = string(desc)
			}
		}
	}
	if s := f.Section(".note.gnu.build-id"); s != nil {
		if data, err := s.Data(); err == nil {
			if _, desc, ok := parseNote(data, f.ByteOrder.Uint32); ok {
				m.CodeID = hex.EncodeToString(desc)
				m.DebugID = debugIDFromBuildID(desc)
			}
		}
	}
	lo, hi := ^uint64(0), uint64(0)
	for _, p := range f.Progs {
		if p.Type != elf.PT_LOAD {
			continue
		}
		lo = min(lo, p.Vaddr)
		hi = max(hi, p.Vaddr+p.Memsz)
	}
	if hi > lo {
		m.ImageVMAddr = report.Addr(lo)
		m.ImageSize = hi - lo
	}
	m.ImageAddr = report.Addr(lo)
	if f.Type == elf.ET_DYN { // position-independent: find where it was loaded
		if base, ok := mappedBase(path); ok {
			m.ImageAddr = report.Addr(base)
		}
	}
}

// parseNote reads the first note in an ELF note section.
func parseNote(data []byte, u32 func([]byte) uint32) (name, desc []byte, ok bool) {
	if len(data) < 12 {
		return nil, nil, false
	}
	nsz, dsz := uint64(u32(data[0:])), uint64(u32(data[4:]))
	off := 12 + (nsz+3)&^3
	if 12+nsz > uint64(len(data)) || off+dsz > uint64(len(data)) {
		return nil, nil, false
	}
	return bytes.TrimRight(data[12:12+nsz], "\x00"), data[off : off+dsz], true
}

// debugIDFromBuildID turns the first 16 bytes of a GNU build ID into a
// debug id: a UUID whose first three fields are byte-swapped, because
// Breakpad read the bytes as a little-endian GUID.
func debugIDFromBuildID(id []byte) string {
	var b [16]byte
	copy(b[:], id)
	b[0], b[1], b[2], b[3] = b[3], b[2], b[1], b[0]
	b[4], b[5] = b[5], b[4]
	b[6], b[7] = b[7], b[6]
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// mappedBase returns the lowest address at which path is mapped, minus
// that mapping's file offset: the load bias plus the link-time base.
func mappedBase(path string) (uint64, bool) {
	f, err := os.Open("/proc/self/maps")
	if err != nil {
		return 0, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// 00400000-0052e000 r-xp 00000000 08:01 1234 /path/to/exe
		fields := strings.Fields(sc.Text())
		if len(fields) < 6 || fields[5] != path {
			continue
		}
		start, _, _ := strings.Cut(fields[0], "-")
		addr, err1 := strconv.ParseUint(start, 16, 64)
		off, err2 := strconv.ParseUint(fields[2], 16, 64)
		if err1 != nil || err2 != nil || off > addr {
			continue
		}
		return addr - off, true
	}
	return 0, false
}
