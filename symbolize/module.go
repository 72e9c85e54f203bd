package symbolize

import (
	"fmt"
	"os"

	"github.com/backtrail/backtrail/debugfile"
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
	// Build tunes the symcache build of debug files.
	Build BuildOptions
}

// Module is one object's symbolication index, ready for queries. It is
// safe for concurrent use.
type Module struct {
	*Table
	Info        symcache.Info
	Path        string // the file opened
	DebugPath   string // the file the debug information came from
	ImageVMAddr uint64 // preferred load address, for FileAddress
	Features    debugfile.Features

	cache *symcache.File
}

// Open opens path — a symcache, or a debug file (ELF, Mach-O, .dSYM
// bundle, Go binary) — and returns its index. For a debug file the index
// is built in memory: linear in the size of its DWARF, in parallel over
// compilation units. A binary without debug information gets it from its
// companion (see debugfile.FindCompanion) when one is found; its own
// symbol table still names the functions, as llvm-symbolizer does.
func Open(path string, opts Options) (*Module, error) {
	if isSymcache(path) {
		sc, err := symcache.Open(path)
		if err != nil {
			return nil, err
		}
		return &Module{Table: NewTable(sc, opts.Style), Info: sc.Info(), Path: path, DebugPath: path, cache: sc}, nil
	}
	f, err := debugfile.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	o, err := f.Object(opts.Arch)
	if err != nil {
		return nil, err
	}
	m := &Module{Path: f.Path, DebugPath: f.Path, ImageVMAddr: o.ImageVMAddr, Features: o.Features}
	dbg := o
	if !o.Features.DebugInfo {
		if p := debugfile.FindCompanion(f.Path, o, opts.DebugDirs); p != "" {
			df, err := debugfile.Open(p)
			if err != nil {
				return nil, fmt.Errorf("debug companion of %s: %w", path, err)
			}
			defer df.Close()
			if dbg, err = df.Object(o.Arch); err != nil {
				return nil, fmt.Errorf("debug companion of %s: %w", path, err)
			}
			m.DebugPath = df.Path
		}
	}
	data, err := BuildObject(o, dbg, opts.Build)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", m.DebugPath, err)
	}
	sc, err := symcache.Parse(data)
	if err != nil {
		return nil, err
	}
	m.Table = NewTable(sc, opts.Style)
	m.Info = sc.Info()
	m.cache = sc
	return m, nil
}

// BuildObject builds the symcache of object o, with debug information
// from dbg (o itself, or its separate debug file): DWARF, else the Go
// pclntab, plus o's symbol table (dbg's when o has none).
func BuildObject(o, dbg *debugfile.Object, opts BuildOptions) ([]byte, error) {
	src := &Source{Info: symcache.Info{
		DebugID:  o.DebugID.UUID,
		DebugAge: o.DebugID.Age,
		CodeID:   o.CodeID,
		Arch:     o.Arch,
		Name:     o.Name,
	}}
	var err error
	if src.DWARF, err = dbg.DWARF(); err != nil {
		return nil, err
	}
	if src.DWARF == nil {
		if src.Pclntab, err = o.Pclntab(); err != nil {
			return nil, err
		}
	}
	if src.Symbols, err = o.Symbols(); err != nil {
		return nil, err
	}
	if len(src.Symbols) == 0 && dbg != o {
		if src.Symbols, err = dbg.Symbols(); err != nil {
			return nil, err
		}
	}
	return Build(src, opts)
}

// Close releases the module's symcache mapping.
func (m *Module) Close() error { return m.cache.Close() }

func isSymcache(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	var b [4]byte
	n, _ := f.Read(b[:])
	return symcache.IsSymcache(b[:n])
}
