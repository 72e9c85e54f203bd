package unwind

import (
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/backtrail/backtrail/debugfile/cfi"
	"github.com/backtrail/backtrail/debugfile/elf"
)

// Module is the call frame information of one ELF file: its .eh_frame
// (searched through .eh_frame_hdr) and its .debug_frame, consulted in that
// order. Addresses are file addresses (link-time virtual addresses). A
// Module is safe for concurrent use; it caches each row it computes,
// guarded by a mutex.
type Module struct {
	Path string
	Arch *Arch

	file   *elf.File // owned when Open opened it
	owned  bool
	tables []*cfi.Table

	mu   sync.RWMutex // guards rows
	rows map[uint64]rowResult
}

type rowResult struct {
	row *cfi.Row
	err error
}

// maxCachedRows bounds a Module's row cache; past it rows are computed
// afresh each time.
const maxCachedRows = 1 << 16

// OpenModule reads the call frame information of the ELF file at path.
func OpenModule(path string) (*Module, error) {
	f, err := elf.Open(path)
	if err != nil {
		return nil, err
	}
	m, err := NewModule(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	m.Path, m.owned = path, true
	return m, nil
}

// NewModule reads the call frame information of f, which must stay open
// while the Module is used. A file without any is not an error: its
// Module finds no rows.
func NewModule(f *elf.File) (*Module, error) {
	m := &Module{file: f, rows: make(map[uint64]rowResult)}
	switch f.Machine {
	case elf.EM_X86_64:
		m.Arch = AMD64
	case elf.EM_AARCH64:
		m.Arch = ARM64
	default:
		return nil, fmt.Errorf("unwind: unsupported machine %v", f.Machine)
	}
	big := f.Data == elf.ELFDATA2MSB
	ptr := 8
	if f.Class == elf.ELFCLASS32 {
		ptr = 4
	}
	data := func(name string) ([]byte, uint64, error) {
		s := f.Section(name)
		if s == nil || s.Type == elf.SHT_NOBITS {
			return nil, 0, nil
		}
		b, err := f.SectionData(s)
		return b, s.Addr, err
	}
	var errs []error
	if eh, addr, err := data(".eh_frame"); err != nil {
		errs = append(errs, err)
	} else if len(eh) > 0 {
		hdr, hdrAddr, _ := data(".eh_frame_hdr")
		t, err := cfi.Parse(eh, cfi.Options{Kind: cfi.EHFrame, Addr: addr, PtrSize: ptr, BigEndian: big, Hdr: hdr, HdrAddr: hdrAddr})
		if err != nil {
			errs = append(errs, err)
		} else {
			m.tables = append(m.tables, t)
		}
	}
	if df, _, err := data(".debug_frame"); err != nil {
		errs = append(errs, err)
	} else if len(df) > 0 {
		t, err := cfi.Parse(df, cfi.Options{Kind: cfi.DebugFrame, PtrSize: ptr, BigEndian: big})
		if err != nil {
			errs = append(errs, err)
		} else {
			m.tables = append(m.tables, t)
		}
	}
	if len(m.tables) == 0 && len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return m, nil
}

// HasCFI reports whether the module has any call frame information.
func (m *Module) HasCFI() bool { return len(m.tables) > 0 }

// Row returns the unwind row for the file address addr, or an error
// wrapping cfi.ErrNoFDE when no table covers it. Cost: a map lookup when
// cached, else an FDE search and evaluation.
func (m *Module) Row(addr uint64) (*cfi.Row, error) {
	m.mu.RLock()
	r, ok := m.rows[addr]
	m.mu.RUnlock()
	if ok {
		return r.row, r.err
	}
	r.err = cfi.ErrNoFDE
	for _, t := range m.tables {
		row, err := t.Row(addr)
		if err == nil {
			r = rowResult{row: row}
			break
		}
		if !errors.Is(err, cfi.ErrNoFDE) {
			r.err = err
		}
	}
	m.mu.Lock()
	if len(m.rows) < maxCachedRows {
		m.rows[addr] = r
	}
	m.mu.Unlock()
	return r.row, r.err
}

// Close closes the file when OpenModule opened it.
func (m *Module) Close() error {
	if m.owned {
		return m.file.Close()
	}
	return nil
}

// Mapping places a Module in an address space: addresses in [Start, End)
// belong to it, and address − Bias is its file address.
type Mapping struct {
	Start, End uint64
	Bias       uint64
	Module     *Module // nil for memory without unwind information
	Name       string
}

// Space is the set of mappings of an address space, sorted by address.
// It is immutable and safe for concurrent use.
type Space struct {
	maps []Mapping
}

// NewSpace returns a Space over ms (copied and sorted; overlaps are the
// caller's error and resolve to the lower start).
func NewSpace(ms []Mapping) *Space {
	s := &Space{maps: slices.Clone(ms)}
	slices.SortFunc(s.maps, func(a, b Mapping) int {
		switch {
		case a.Start < b.Start:
			return -1
		case a.Start > b.Start:
			return 1
		}
		return 0
	})
	return s
}

// Find returns the mapping that holds addr, or nil.
func (s *Space) Find(addr uint64) *Mapping {
	if s == nil {
		return nil
	}
	i, _ := slices.BinarySearchFunc(s.maps, addr, func(m Mapping, a uint64) int {
		if m.Start <= a {
			return -1
		}
		return 1
	})
	if i == 0 {
		return nil
	}
	if m := &s.maps[i-1]; addr < m.End {
		return m
	}
	return nil
}
