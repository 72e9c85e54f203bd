package symbolize

import (
	"fmt"
	"io"

	"github.com/backtrail/backtrail/debugfile"
	"github.com/backtrail/backtrail/debugfile/dwarf"
	"github.com/backtrail/backtrail/demangle"
	"github.com/backtrail/backtrail/symcache"
)

// Options configure Open. The zero value means defaults.
type Options struct {
	// Arch selects the architecture of a fat Mach-O file; "" picks the
	// only one, or the host's.
	Arch string
	// DebugDirs are searched for separate debug files (nil: /usr/lib/debug).
	DebugDirs []string
	// Style is how names are demangled (default demangle.Full).
	Style demangle.Style
	// Lazy indexes a debug file's DWARF one compilation unit at a time, as
	// queries reach it, instead of all at once: the right choice for a few
	// addresses in a big binary. It has no effect on symcaches.
	Lazy bool
	// Build tunes the symcache build of debug files when not Lazy.
	Build BuildOptions
	// DWP is the .dwp package of a binary built with -gsplit-dwarf, when
	// not the one beside it (see debugfile.File.FollowSplitDWARF).
	DWP string
}

// Module is one object's symbolication index, ready for queries. It is
// safe for concurrent use.
type Module struct {
	Info        symcache.Info
	Path        string // the file opened
	DebugPath   string // the file the debug information came from
	ImageVMAddr uint64 // preferred load address, for FileAddress
	Features    debugfile.Features

	table *Table
	lazy  *lazyIndex
	cache *symcache.File
	files []*debugfile.File // kept open while lazy conversion reads them
	// splitErrs are the split DWARF errors of files closed after the
	// build; see SplitDWARFErrors.
	splitErrs []error
}

// SplitDWARFErrors returns why units of a binary built with -gsplit-dwarf
// could not be read from their split files so far (see
// debugfile.File.FollowSplitDWARF): those units have line numbers, and
// names from the symbol table, but no inline frames. A lazily indexed
// module meets them as queries reach the units.
func (m *Module) SplitDWARFErrors() []error {
	errs := m.splitErrs
	for _, f := range m.files {
		errs = append(errs, f.SplitDWARFErrors()...)
	}
	return errs
}

// Open opens path — a symcache, or a debug file (ELF, Mach-O, .dSYM
// bundle, Go binary) — and returns its index. For a debug file the index
// is built in memory: linear in the size of its DWARF, in parallel over
// compilation units (or unit by unit with Options.Lazy). A binary without
// debug information gets it from its companion (see
// debugfile.FindCompanion) when one is found; its own symbol table still
// names the functions, as llvm-symbolizer does.
func Open(path string, opts Options) (*Module, error) {
	if symcache.IsFile(path) {
		sc, err := symcache.Open(path)
		if err != nil {
			return nil, err
		}
		return &Module{table: NewTable(sc, opts.Style), Info: sc.Info(), Path: path, DebugPath: path, ImageVMAddr: sc.Info().ImageVMAddr, cache: sc}, nil
	}
	f, err := debugfile.Open(path)
	if err != nil {
		return nil, err
	}
	m := &Module{Path: f.Path, DebugPath: f.Path, files: []*debugfile.File{f}}
	if err := m.open(f, opts); err != nil {
		m.Close()
		return nil, err
	}
	return m, nil
}

func (m *Module) open(f *debugfile.File, opts Options) error {
	o, err := f.Object(opts.Arch)
	if err != nil {
		return err
	}
	m.ImageVMAddr, m.Features = o.ImageVMAddr, o.Features
	dbg := o
	f.FollowSplitDWARF(f.Path, opts.DWP)
	if !o.Features.DebugInfo {
		if p := debugfile.FindCompanion(f.Path, o, opts.DebugDirs); p != "" {
			df, err := debugfile.Open(p)
			if err != nil {
				return fmt.Errorf("debug companion of %s: %w", f.Path, err)
			}
			df.FollowSplitDWARF(f.Path, opts.DWP)
			m.files = append(m.files, df)
			if dbg, err = df.Object(o.Arch); err != nil {
				return fmt.Errorf("debug companion of %s: %w", f.Path, err)
			}
			m.DebugPath = df.Path
		}
	}
	src, err := sourceOf(o, dbg)
	if err != nil {
		return fmt.Errorf("%s: %w", m.DebugPath, err)
	}
	m.Info = src.Info
	if opts.Lazy && src.DWARF != nil {
		syms, err := src.symbols()
		if err != nil {
			return fmt.Errorf("%s: %w", m.DebugPath, err)
		}
		m.lazy, err = newLazyIndex(src.DWARF, src.Info, symbolCover(syms), opts.Style)
		return err
	}
	data, err := Build(src, opts.Build)
	if err != nil {
		return fmt.Errorf("%s: %w", m.DebugPath, err)
	}
	// The symcache holds copies of everything it needs.
	m.splitErrs = m.SplitDWARFErrors()
	for _, f := range m.files {
		f.Close()
	}
	m.files = nil
	sc, err := symcache.Parse(data)
	if err != nil {
		return err
	}
	m.table, m.cache = NewTable(sc, opts.Style), sc
	return nil
}

// Frames appends the frames of addr, a file address, to out; see
// Table.Frames. An error means the debug information that covers addr is
// malformed; out is then returned unchanged.
func (m *Module) Frames(addr uint64, out []Frame) ([]Frame, error) {
	t := m.table
	if m.lazy != nil {
		var err error
		if t, err = m.lazy.table(addr); err != nil {
			return out, err
		}
	}
	return t.Frames(addr, out), nil
}

// FramesBatch appends the frames of every address of addrs, file
// addresses, to out, and to ends where each address's frames end in out;
// see Table.FramesBatch. An error names the first address whose debug
// information is malformed; that address has no frames.
func (m *Module) FramesBatch(addrs []uint64, out []Frame, ends []int) ([]Frame, []int, error) {
	if m.lazy == nil {
		out, ends = m.table.FramesBatch(addrs, out, ends)
		return out, ends, nil
	}
	m.lazy.prepare(addrs)
	var first error
	for _, a := range addrs {
		var err error
		if out, err = m.Frames(a, out); err != nil && first == nil {
			first = err
		}
		ends = append(ends, len(out))
	}
	return out, ends, first
}

// BuildObject builds the symcache of object o, with debug information
// from dbg (o itself, or its separate debug file): DWARF, else the Go
// pclntab, plus o's symbol table (dbg's when o has none).
func BuildObject(o, dbg *debugfile.Object, opts BuildOptions) ([]byte, error) {
	src, err := sourceOf(o, dbg)
	if err != nil {
		return nil, err
	}
	return Build(src, opts)
}

// WriteObject is BuildObject writing the symcache to w as it is made; see
// Write.
func WriteObject(w io.Writer, o, dbg *debugfile.Object, opts BuildOptions) error {
	src, err := sourceOf(o, dbg)
	if err != nil {
		return err
	}
	return Write(w, src, opts)
}

func sourceOf(o, dbg *debugfile.Object) (*Source, error) {
	src := &Source{Info: symcache.Info{
		DebugID:     o.DebugID.UUID,
		DebugAge:    o.DebugID.Age,
		CodeID:      o.CodeID,
		Arch:        o.Arch,
		Name:        o.Name,
		ImageVMAddr: o.ImageVMAddr,
	}}
	var err error
	if src.DWARF, err = dbg.DWARF(); err != nil {
		return nil, err
	}
	if src.DWARF != nil {
		src.Info.Producer, src.Info.Language = producerOf(src.DWARF)
	} else {
		if src.Pclntab, err = o.Pclntab(); err != nil {
			return nil, err
		}
		if src.Pclntab != nil {
			src.Info.Language = symcache.LangGo
		}
	}
	src.readSymbols = func() ([]debugfile.Symbol, error) {
		syms, err := o.Symbols()
		if err == nil && len(syms) == 0 && dbg != o {
			syms, err = dbg.Symbols()
		}
		return syms, err
	}
	return src, nil
}

// Close releases the module's files and mappings. The strings of frames
// from a module opened on a symcache point into its mapping: they are
// valid until Close (copy those kept longer).
func (m *Module) Close() error {
	for _, f := range m.files {
		f.Close()
	}
	if m.cache != nil {
		return m.cache.Close()
	}
	return nil
}

// producerOf returns the producer and language of the first compilation
// unit, which a symcache records for the whole object.
func producerOf(d *dwarf.Data) (string, symcache.Language) {
	units := d.Units()
	for i := range units {
		if t := units[i].Type; t == dwarf.DW_UT_type || t == dwarf.DW_UT_split_type {
			continue
		}
		var ui dwarf.UnitInfo
		if d.ReadRoot(&units[i], &ui) != nil {
			// Only a label is lost: converting that unit reports the
			// error itself.
			return "", symcache.LangUnknown
		}
		return string(ui.Producer), languageOf(ui.Language)
	}
	return "", symcache.LangUnknown
}
