package debugfile

import (
	"encoding/hex"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"runtime"
)

// DefaultDebugDirs are the global debug directories searched for separate
// debug files, as gdb and llvm-symbolizer search them.
var DefaultDebugDirs = []string{"/usr/lib/debug"}

// FindCompanion looks for the file holding o's debug information when o
// (read from path) has none: for ELF, by build-id under each debug
// directory's .build-id tree, then by the .gnu_debuglink name next to the
// binary, in its .debug subdirectory and under each debug directory
// (checking the link's CRC); for Mach-O, a .dSYM bundle next to the binary
// whose UUID matches. It returns "" when nothing is found. Cost: a few
// stat calls, plus reading each candidate named by a debug link to check
// its CRC.
func FindCompanion(path string, o *Object, debugDirs []string) string {
	if debugDirs == nil {
		debugDirs = DefaultDebugDirs
	}
	dir := filepath.Dir(path)
	switch o.Format {
	case FormatELF:
		if len(o.BuildID) >= 2 {
			h := hex.EncodeToString(o.BuildID)
			for _, d := range debugDirs {
				p := filepath.Join(d, ".build-id", h[:2], h[2:]+".debug")
				if isFile(p) {
					return p
				}
			}
		}
		name, crc, ok := o.elf.DebugLink()
		if !ok || name == "" {
			return ""
		}
		abs, _ := filepath.Abs(dir)
		cands := []string{filepath.Join(dir, name), filepath.Join(dir, ".debug", name)}
		for _, d := range debugDirs {
			cands = append(cands, filepath.Join(d, abs, name))
		}
		self, _ := filepath.Abs(path)
		for _, c := range cands {
			if ca, _ := filepath.Abs(c); ca == self {
				continue
			}
			if isFile(c) && fileCRC(c) == crc {
				return c
			}
		}
	case FormatMachO:
		base := filepath.Base(path)
		for _, b := range []string{path + ".dSYM", filepath.Join(dir, base+".dSYM")} {
			inner := filepath.Join(b, "Contents", "Resources", "DWARF", base)
			if !isFile(inner) {
				continue
			}
			f, err := Open(inner)
			if err != nil {
				continue
			}
			match := false
			for _, c := range f.Objects {
				if c.DebugID == o.DebugID {
					match = true
				}
			}
			f.Close()
			if match {
				return inner
			}
		}
	}
	return ""
}

func isFile(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}

func fileCRC(p string) uint32 {
	f, err := os.Open(p)
	if err != nil {
		return 0
	}
	defer f.Close()
	h := crc32.NewIEEE()
	io.Copy(h, f)
	return h.Sum32()
}

func hostArch() string {
	switch runtime.GOARCH {
	case "amd64":
		return "x86_64"
	case "386":
		return "x86"
	}
	return runtime.GOARCH
}
