// Package debugfile opens any debug file backtrail can read — ELF
// executables, shared objects and separate debug files, Mach-O thin and fat
// files and .dSYM bundles, Go binaries — behind one front door. It sniffs the
// format, splits fat files into one Object per architecture, derives the
// identifiers crash reports use (GNU build-id, Mach-O UUID, Go build ID, and
// the Sentry-style debug_id and code_id), reports which symbolication data
// each object has, and hands out its DWARF, symbol table and Go pclntab.
//
// # Untrusted input
//
// Everything here reads through the format packages, which bound their
// allocations by the input size, never panic, and are fuzzed.
package debugfile

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/backtrail/backtrail/debugfile/dwarf"
	"github.com/backtrail/backtrail/debugfile/elf"
	"github.com/backtrail/backtrail/debugfile/macho"
	"github.com/backtrail/backtrail/debugfile/pclntab"
	"github.com/backtrail/backtrail/internal/mmap"
)

// Format is a container format.
type Format uint8

// Formats.
const (
	FormatUnknown Format = iota
	FormatELF
	FormatMachO
)

func (f Format) String() string {
	switch f {
	case FormatELF:
		return "elf"
	case FormatMachO:
		return "macho"
	}
	return "unknown"
}

// Kind says what an object is for.
type Kind uint8

// Kinds.
const (
	KindOther      Kind = iota
	KindExecutable      // a program
	KindLibrary         // a shared object, dylib or bundle
	KindDebug           // a separate debug file or the DWARF file of a .dSYM
	KindObject          // a relocatable object
	KindCore            // a core dump
)

var kindNames = [...]string{"other", "executable", "library", "debug", "object", "core"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "other"
}

// Features are the kinds of symbolication data an object holds.
type Features struct {
	Symtab     bool `json:"symtab"`     // a symbol table naming functions
	DebugInfo  bool `json:"debug"`      // DWARF
	UnwindInfo bool `json:"unwind"`     // .eh_frame, .debug_frame, __unwind_info
	Pclntab    bool `json:"go_pclntab"` // Go's pc-line table
	DebugOnly  bool `json:"debug_only"` // code sections are empty: a companion file
}

// ErrUnknownFormat is returned for files that are neither ELF nor Mach-O.
var ErrUnknownFormat = errors.New("unknown debug file format")

// ErrNoArch is returned when a file has no object for the requested
// architecture.
var ErrNoArch = errors.New("no object for architecture")

// File is an opened debug file: one Object, or one per architecture of a
// fat Mach-O file.
type File struct {
	Path    string // the file read; for a .dSYM bundle, the DWARF file inside
	Objects []*Object

	region *mmap.Region
	elfs   []*elf.File
	split  *splitFiles // see FollowSplitDWARF
}

// Object is one architecture's object in a debug file.
type Object struct {
	Format      Format
	Kind        Kind
	Arch        string // "x86_64", "arm64", …
	DebugID     DebugID
	CodeID      string // GNU build-id or Mach-O UUID, lower-case hex
	BuildID     []byte // ELF NT_GNU_BUILD_ID
	GoBuildID   string // from the Go build ID note or load command section
	ImageVMAddr uint64 // preferred load address of the image (§ symbolize address rules)
	ImageSize   uint64 // span of the loadable segments
	Features    Features
	BigEndian   bool
	Name        string // base name of the file

	elf   *elf.File
	macho *macho.File
	file  *File
}

// Open opens the debug file at path. A .dSYM bundle directory opens the
// DWARF file inside it.
func Open(path string) (*File, error) {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		inner, err := dsymDWARF(path)
		if err != nil {
			return nil, err
		}
		path = inner
	}
	r, err := mmap.OpenPiecewise(path)
	if err != nil {
		return nil, err
	}
	f, err := newFile(r.Data, path)
	if err != nil {
		r.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	f.region = r
	return f, nil
}

// NewFile reads a debug file from data, which must stay unchanged while
// the File is used. name labels the file in errors and Object.Name.
func NewFile(data []byte, name string) (*File, error) {
	f, err := newFile(data, name)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return f, nil
}

func newFile(data []byte, name string) (*File, error) {
	f := &File{Path: name}
	switch Sniff(data) {
	case FormatELF:
		ef, err := elf.NewFile(data)
		if err != nil {
			return nil, err
		}
		f.elfs = append(f.elfs, ef)
		o, err := elfObject(ef)
		if err != nil {
			return nil, err
		}
		f.Objects = append(f.Objects, o)
	case FormatMachO:
		objs, err := machoObjects(data)
		if err != nil {
			return nil, err
		}
		f.Objects = objs
	default:
		return nil, ErrUnknownFormat
	}
	for _, o := range f.Objects {
		o.Name = filepath.Base(name)
		o.file = f
	}
	return f, nil
}

// Sniff tells the format of data from its first bytes.
func Sniff(data []byte) Format {
	if len(data) < 8 {
		return FormatUnknown
	}
	if bytes.HasPrefix(data, []byte("\x7fELF")) {
		return FormatELF
	}
	switch m := uint32(data[0])<<24 | uint32(data[1])<<16 | uint32(data[2])<<8 | uint32(data[3]); m {
	case 0xfeedface, 0xcefaedfe, 0xfeedfacf, 0xcffaedfe, 0xcafebabe, 0xcafebabf:
		return FormatMachO
	}
	return FormatUnknown
}

// Close releases the file's mapping. Objects and everything read from
// them must not be used afterwards.
func (f *File) Close() error {
	if f.split != nil {
		f.split.close()
	}
	for _, e := range f.elfs {
		e.Close()
	}
	if f.region != nil {
		return f.region.Close()
	}
	return nil
}

// Object returns the object for arch, or the only object when arch is ""
// (for a fat file, "" picks x86_64 on amd64 hosts and arm64 on others when
// present, else fails).
func (f *File) Object(arch string) (*Object, error) {
	if arch == "" {
		if len(f.Objects) == 1 {
			return f.Objects[0], nil
		}
		arch = hostArch()
	}
	for _, o := range f.Objects {
		if strings.EqualFold(o.Arch, arch) {
			return o, nil
		}
	}
	var have []string
	for _, o := range f.Objects {
		have = append(have, o.Arch)
	}
	return nil, fmt.Errorf("%w %q in %s (have %s)", ErrNoArch, arch, f.Path, strings.Join(have, ", "))
}

// DWARF returns the object's DWARF, or nil when it has none.
func (o *Object) DWARF() (*dwarf.Data, error) {
	var sec func(string) ([]byte, error)
	switch {
	case o.elf != nil:
		sec = o.elf.DWARFSection
	case o.macho != nil:
		sec = o.macho.DWARFSection
	default:
		return nil, nil
	}
	var s dwarf.Sections
	for _, x := range []struct {
		name string
		dst  *[]byte
	}{
		{"debug_info", &s.Info}, {"debug_abbrev", &s.Abbrev}, {"debug_line", &s.Line},
		{"debug_line_str", &s.LineStr}, {"debug_str", &s.Str}, {"debug_str_offsets", &s.StrOffsets},
		{"debug_addr", &s.Addr}, {"debug_ranges", &s.Ranges}, {"debug_rnglists", &s.RngLists},
		{"debug_aranges", &s.Aranges},
	} {
		b, err := sec(x.name)
		if errors.Is(err, macho.ErrNoSection) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", x.name, err)
		}
		*x.dst = b
	}
	if len(s.Info) == 0 {
		return nil, nil
	}
	d, err := dwarf.New(s, o.BigEndian)
	if err == nil && o.elf != nil && o.file != nil && o.file.split != nil {
		d.SetSplitLoader(o.file.split.loader(d))
	}
	return d, err
}

// Pclntab returns the Go pc-line table, or nil when the object has none.
func (o *Object) Pclntab() (*pclntab.Table, error) {
	switch {
	case o.elf != nil:
		return elfPclntab(o.elf)
	case o.macho != nil:
		return machoPclntab(o.macho)
	}
	return nil, nil
}
