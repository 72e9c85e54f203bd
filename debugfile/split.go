package debugfile

import (
	"cmp"
	"fmt"
	"path/filepath"
	"sync"

	"github.com/backtrail/backtrail/debugfile/dwarf"
)

// FollowSplitDWARF makes the DWARF of f's objects (see Object.DWARF) read
// the units that -gsplit-dwarf left in separate files, as llvm-symbolizer
// and gdb find them: in binary+".dwp" (or f.Path+".dwp"), else in each
// unit's .dwo file, named by its skeleton — joined to the unit's
// compilation directory when relative — then by the same relative name, and
// by its base name, beside binary. binary is the program f's DWARF
// describes: f's own path, or the program whose separate debug file f is.
// A split unit's file that is missing, unreadable or of another build (its
// id differs) leaves that unit with what its skeleton holds: line numbers,
// and names from the symbol table.
//
// A package named by dwp, when not "", is used instead of one beside the
// binary (llvm-symbolizer's --dwp).
//
// The paths come from the DWARF itself, so only follow them for files the
// user pointed at, never for files received from elsewhere. The split
// files stay open until f is closed.
func (f *File) FollowSplitDWARF(binary, dwp string) {
	packages := []string{binary + ".dwp", f.Path + ".dwp"}
	if dwp != "" {
		packages = []string{dwp}
	}
	f.split = &splitFiles{binary: binary, packages: packages, files: make(map[string]*splitFile), dwpUnits: make(map[uint64]*dwarf.Data),
		failed: make(map[dwarf.Skeleton]bool)}
}

// splitFiles finds and keeps the split DWARF files of one File.
type splitFiles struct {
	binary   string
	packages []string // where a .dwp may be, in order

	mu       sync.Mutex
	dwpRead  bool
	dwp      *dwarf.Package
	dwpUnits map[uint64]*dwarf.Data
	files    map[string]*splitFile // by path, opened or not
	opened   []*File
	failed   map[dwarf.Skeleton]bool
	errs     []error // one per skeleton whose split unit was not found
}

// SplitDWARFErrors returns why split units could not be read so far (see
// FollowSplitDWARF): one error for each skeleton whose split unit was not
// found, was of another build or could not be read, in the order met.
func (f *File) SplitDWARFErrors() []error {
	if f.split == nil {
		return nil
	}
	f.split.mu.Lock()
	defer f.split.mu.Unlock()
	return append([]error(nil), f.split.errs...)
}

// splitFile is the split DWARF of a .dwo file, or of a .dwp package with
// its index, or why it has none.
type splitFile struct {
	sec   dwarf.Sections
	index *dwarf.Package
	err   error
}

// loader returns the SplitLoader of skeletons in d.
func (s *splitFiles) loader(d *dwarf.Data) dwarf.SplitLoader {
	made := make(map[string]*dwarf.Data) // by path: the name and the unit's root may each ask
	return func(sk dwarf.Skeleton) (*dwarf.Data, error) {
		s.mu.Lock()
		defer s.mu.Unlock()
		if u, ok := s.dwpUnit(d, sk.ID); ok {
			return u, nil
		}
		var firstErr error
		for _, p := range s.dwoPaths(sk) {
			sd, err := made[p], error(nil)
			if sd == nil {
				f := s.open(p) // its errors name the file
				if err = f.err; err == nil {
					if sd, err = d.Split(f.sec); err != nil {
						err = fmt.Errorf("%s: %w", p, err)
					}
				}
				if err != nil {
					firstErr = cmp.Or(firstErr, err)
					continue
				}
				made[p] = sd
			}
			if sd.HasSplitUnit(sk.ID) {
				return sd, nil
			}
			firstErr = cmp.Or(firstErr, fmt.Errorf("%s: no split unit with id %#x", p, sk.ID))
		}
		if firstErr == nil {
			firstErr = fmt.Errorf("split DWARF %s (id %#x) not found", sk.DWOName, sk.ID)
		}
		if !s.failed[sk] {
			s.failed[sk] = true
			s.errs = append(s.errs, firstErr)
		}
		return nil, firstErr
	}
}

// dwpUnit returns the split unit id from the package beside the binary.
func (s *splitFiles) dwpUnit(d *dwarf.Data, id uint64) (*dwarf.Data, bool) {
	if !s.dwpRead {
		s.dwpRead = true
		for _, p := range s.packages {
			if !isFile(p) {
				continue
			}
			if f := s.open(p); f.err == nil && f.index != nil {
				s.dwp = f.index
				break
			}
		}
	}
	if s.dwp == nil {
		return nil, false
	}
	if u, ok := s.dwpUnits[id]; ok {
		return u, u != nil
	}
	var u *dwarf.Data
	if sec, ok := s.dwp.Unit(id); ok {
		u, _ = d.Split(sec)
	}
	s.dwpUnits[id] = u
	return u, u != nil
}

// dwoPaths lists where the .dwo file of sk may be, most likely first.
func (s *splitFiles) dwoPaths(sk dwarf.Skeleton) []string {
	if sk.DWOName == "" {
		return nil
	}
	var out []string
	add := func(p string) {
		for _, q := range out {
			if q == p {
				return
			}
		}
		if isFile(p) {
			out = append(out, p)
		}
	}
	name := sk.DWOName
	dir := filepath.Dir(s.binary)
	if filepath.IsAbs(name) {
		add(name)
	} else {
		if sk.CompDir != "" {
			add(filepath.Join(sk.CompDir, name))
		}
		add(filepath.Join(dir, name))
	}
	add(filepath.Join(dir, filepath.Base(name)))
	return out
}

// open reads the split DWARF sections of the file at p, once.
func (s *splitFiles) open(p string) *splitFile {
	if f, ok := s.files[p]; ok {
		return f
	}
	f := &splitFile{}
	s.files[p] = f
	df, err := Open(p)
	if err != nil {
		f.err = err
		return f
	}
	s.opened = append(s.opened, df)
	if len(df.Objects) != 1 || df.Objects[0].elf == nil {
		f.err = fmt.Errorf("%s: not an ELF split DWARF file", p)
		return f
	}
	f.sec, f.index, f.err = df.Objects[0].splitSections()
	if f.err != nil {
		f.err = fmt.Errorf("%s: %w", p, f.err)
	}
	return f
}

func (s *splitFiles) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, f := range s.opened {
		f.Close()
	}
	s.opened = nil
}

// splitSections reads the .dwo sections of a split DWARF file, and the
// unit index of a package.
func (o *Object) splitSections() (dwarf.Sections, *dwarf.Package, error) {
	var s dwarf.Sections
	var index []byte
	for _, x := range []struct {
		name string
		dst  *[]byte
	}{
		{"debug_info.dwo", &s.Info}, {"debug_abbrev.dwo", &s.Abbrev}, {"debug_line.dwo", &s.Line},
		{"debug_str.dwo", &s.Str}, {"debug_str_offsets.dwo", &s.StrOffsets}, {"debug_rnglists.dwo", &s.RngLists},
		{"debug_cu_index", &index},
	} {
		b, err := o.elf.DWARFSection(x.name)
		if err != nil {
			return s, nil, fmt.Errorf("%s: %w", x.name, err)
		}
		*x.dst = b
	}
	if len(s.Info) == 0 {
		return s, nil, fmt.Errorf("no .debug_info.dwo section")
	}
	if index == nil {
		return s, nil, nil
	}
	p, err := dwarf.NewPackage(s, index, o.BigEndian)
	return s, p, err
}
