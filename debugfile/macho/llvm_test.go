package macho_test

// Cross-checks against the LLVM 14 tools (Debian LLVM 14.0.6 here): the
// reader must agree with llvm-objdump on headers, load commands, segments and
// sections, with llvm-dwarfdump on UUIDs and architecture names, and with
// llvm-nm on the symbol table.

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/backtrail/backtrail/debugfile/macho"
)

// thinFiles returns the paths of all thin test files: testdata, then the
// shared fixtures when present.
func thinFiles(t *testing.T) []string {
	var paths []string
	for _, name := range thinTestdata {
		paths = append(paths, testdataPath(name))
	}
	for _, rel := range thinShared {
		paths = append(paths, sharedFixture(t, rel))
	}
	return paths
}

func openThin(t *testing.T, path string) *macho.File {
	t.Helper()
	f, err := macho.NewFile(readFile(t, path))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return f
}

// objdumpFile is what llvm-objdump --macho --private-headers prints, reduced
// to the fields compared.
type objdumpFile struct {
	header   string   // filetype ncmds sizeofcmds
	cmds     []string // load command names
	segments []string
	sections []string
}

func parseObjdump(out string) objdumpFile {
	var od objdumpFile
	lines := strings.Split(out, "\n")
	fields := map[string]string{}
	flush := func(kind string) {
		switch kind {
		case "segment":
			od.segments = append(od.segments, fmt.Sprintf("%s vmaddr=%s vmsize=%s fileoff=%s filesize=%s nsects=%s",
				fields["segname"], fields["vmaddr"], fields["vmsize"], fields["fileoff"], fields["filesize"], fields["nsects"]))
		case "section":
			od.sections = append(od.sections, fmt.Sprintf("%s,%s addr=%s size=%s offset=%s align=%s reloff=%s nreloc=%s",
				fields["segname"], fields["sectname"], fields["addr"], fields["size"], fields["offset"], fields["align"], fields["reloff"], fields["nreloc"]))
		}
		clear(fields)
	}
	kind := ""
	for i, line := range lines {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		switch {
		case f[0] == "magic" && i+1 < len(lines):
			h := strings.Fields(lines[i+1])
			od.header = strings.Join(h[4:7], " ")
		case f[0] == "cmd" && len(f) == 2:
			flush(kind)
			kind = "cmd"
			od.cmds = append(od.cmds, f[1])
			if f[1] == "LC_SEGMENT" || f[1] == "LC_SEGMENT_64" {
				kind = "segment"
			}
		case f[0] == "Section" && len(f) == 1:
			flush(kind)
			kind = "section"
		case len(f) >= 1 && (kind == "segment" || kind == "section"):
			v := ""
			if len(f) > 1 {
				v = f[1]
			}
			if _, dup := fields[f[0]]; !dup {
				fields[f[0]] = v
			}
		}
	}
	flush(kind)
	return od
}

func TestLLVMObjdump(t *testing.T) {
	tool(t, "llvm-objdump-14")
	for _, path := range thinFiles(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			want := parseObjdump(run(t, "llvm-objdump-14", "--macho", "--private-headers", path))
			if want.header == "" || len(want.cmds) == 0 || len(want.segments) == 0 || len(want.sections) == 0 {
				t.Fatalf("could not parse llvm-objdump output: %+v", want)
			}
			f := openThin(t, path)

			have := objdumpFile{
				header: fmt.Sprintf("%s %d %d", strings.TrimPrefix(f.Type.String(), "MH_"), f.Ncmds, f.Cmdsz),
			}
			for _, l := range f.Loads {
				have.cmds = append(have.cmds, l.Cmd.String())
			}
			for _, s := range f.Segments {
				have.segments = append(have.segments, fmt.Sprintf("%s vmaddr=%#016x vmsize=%#016x fileoff=%d filesize=%d nsects=%d",
					s.Name, s.VMAddr, s.VMSize, s.FileOff, s.FileSize, len(s.Sections)))
				if !f.Is64 {
					have.segments[len(have.segments)-1] = fmt.Sprintf("%s vmaddr=%#08x vmsize=%#08x fileoff=%d filesize=%d nsects=%d",
						s.Name, s.VMAddr, s.VMSize, s.FileOff, s.FileSize, len(s.Sections))
				}
			}
			for _, s := range f.Sections {
				format := "%s,%s addr=%#016x size=%#016x offset=%d align=2^%d reloff=%d nreloc=%d"
				if !f.Is64 {
					format = "%s,%s addr=%#08x size=%#08x offset=%d align=2^%d reloff=%d nreloc=%d"
				}
				have.sections = append(have.sections, fmt.Sprintf(format, s.Seg, s.Name, s.Addr, s.Size, s.Offset, s.Align, s.Reloff, s.Nreloc))
			}
			compareLists(t, "header", []string{have.header}, []string{want.header})
			compareLists(t, "load commands", have.cmds, want.cmds)
			compareLists(t, "segments", have.segments, want.segments)
			compareLists(t, "sections", have.sections, want.sections)
		})
	}
}

func compareLists(t *testing.T, what string, have, want []string) {
	t.Helper()
	if len(have) != len(want) {
		t.Errorf("%s: have %d, want %d\nhave %q\nwant %q", what, len(have), len(want), have, want)
		return
	}
	for i := range have {
		if have[i] != want[i] {
			t.Errorf("%s[%d]:\nhave %s\nwant %s", what, i, have[i], want[i])
		}
	}
}

// formatUUID formats a UUID the way Apple's tools print it.
func formatUUID(u [16]byte) string {
	return strings.ToUpper(fmt.Sprintf("%x-%x-%x-%x-%x", u[0:4], u[4:6], u[6:8], u[8:10], u[10:16]))
}

func TestLLVMDwarfdumpUUID(t *testing.T) {
	tool(t, "llvm-dwarfdump-14")
	paths := append(thinFiles(t), filepath.Join("testdata", "hello.fat"))
	compared := 0
	defer func() {
		if compared < 3 {
			t.Errorf("compared only %d UUIDs", compared)
		}
	}()
	for _, path := range paths {
		out := run(t, "llvm-dwarfdump-14", "--uuid", path)
		var want []string
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			// UUID: 67E9247C-814E-392B-A027-DBDE6748FCBF (x86_64) path
			f := strings.Fields(line)
			if len(f) >= 3 && f[0] == "UUID:" {
				want = append(want, f[1]+" "+f[2])
			}
		}
		ff, err := macho.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		var have []string
		for _, a := range ff.Arches {
			if u, ok := a.File.UUID(); ok {
				have = append(have, formatUUID(u)+" ("+a.File.Arch()+")")
			}
		}
		ff.Close()
		compareLists(t, path, have, want)
		compared += len(want)
	}
}

// An nmSymbol is one line of llvm-nm -p -a.
type nmSymbol struct {
	value string // hex, or "" for undefined
	kind  string // nm's letter, or "-" for a stab
	sect  string // stabs only
	desc  string // stabs only
	name  string
}

func parseNm(t *testing.T, out string) []nmSymbol {
	var syms []nmSymbol
	for _, line := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		if line == "" {
			continue
		}
		// "0000000100000d20 - 01 0000   FUN name", "0000000100008b40 T name",
		// "                 U name"
		var s nmSymbol
		if strings.HasPrefix(line, " ") {
			f := strings.Fields(line)
			s.kind, s.name = f[0], strings.Join(f[1:], " ")
		} else {
			value, rest, _ := strings.Cut(line, " ")
			s.value = value
			s.kind, rest, _ = strings.Cut(rest, " ")
			if s.kind == "-" {
				f := strings.Fields(rest)
				s.sect, s.desc = f[0], f[1]
				// The stab type name is right-aligned in 5 columns, then
				// a space, then the name, which may be empty.
				_, after, _ := strings.Cut(rest, f[2])
				s.name = strings.TrimPrefix(after, " ")
			} else {
				s.name = rest
			}
		}
		syms = append(syms, s)
	}
	return syms
}

func TestLLVMNm(t *testing.T) {
	tool(t, "llvm-nm-14")
	for _, path := range thinFiles(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			want := parseNm(t, run(t, "llvm-nm-14", "-p", "-a", path))
			if len(want) == 0 {
				t.Fatal("llvm-nm printed no symbols")
			}
			f := openThin(t, path)
			syms, err := f.Symbols()
			if err != nil {
				t.Fatal(err)
			}
			if len(syms) != len(want) {
				t.Fatalf("have %d symbols, want %d", len(syms), len(want))
			}
			errs := 0
			for i, s := range syms {
				w := want[i]
				var bad []string
				if s.Name != w.name {
					bad = append(bad, fmt.Sprintf("name %q != %q", s.Name, w.name))
				}
				if w.value != "" {
					if v, _ := strconv.ParseUint(w.value, 16, 64); v != s.Value {
						bad = append(bad, fmt.Sprintf("value %#x != %s", s.Value, w.value))
					}
				}
				switch {
				case w.kind == "-":
					if !s.IsStab() || fmt.Sprintf("%02x %04x", s.Sect, s.Desc) != w.sect+" "+w.desc {
						bad = append(bad, fmt.Sprintf("stab %v sect %d desc %#x != %s %s", s.IsStab(), s.Sect, s.Desc, w.sect, w.desc))
					}
				case w.kind == "U":
					if !s.IsUndefined() || !s.IsExternal() {
						bad = append(bad, "not an external undefined symbol")
					}
				case strings.Contains("TtDdBbSs", w.kind):
					if !s.IsSection() || s.IsExternal() != (w.kind == strings.ToUpper(w.kind)) {
						bad = append(bad, fmt.Sprintf("section %v external %v", s.IsSection(), s.IsExternal()))
					}
				}
				if len(bad) > 0 {
					t.Errorf("symbol %d %+v: %s", i, w, strings.Join(bad, "; "))
					if errs++; errs > 10 {
						t.FailNow()
					}
				}
			}
		})
	}
}
