package debugfile

import (
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/backtrail/backtrail/debugfile/macho"
	"github.com/backtrail/backtrail/debugfile/pclntab"
)

func machoObjects(data []byte) ([]*Object, error) {
	ff, err := macho.NewFatFile(data)
	if errors.Is(err, macho.ErrNotFat) {
		f, err := macho.NewFile(data)
		if err != nil {
			return nil, err
		}
		return []*Object{machoObject(f)}, nil
	}
	if err != nil {
		return nil, err
	}
	objs := make([]*Object, 0, len(ff.Arches))
	for _, a := range ff.Arches {
		objs = append(objs, machoObject(a.File))
	}
	return objs, nil
}

func machoObject(f *macho.File) *Object {
	o := &Object{Format: FormatMachO, macho: f, Arch: f.Arch()}
	if u, ok := f.UUID(); ok {
		o.DebugID = DebugID{UUID: u}
		o.CodeID = hex.EncodeToString(u[:])
	}
	o.ImageVMAddr = f.ImageBase()
	for _, s := range f.Segments {
		if s.Name != "__PAGEZERO" {
			o.ImageSize += s.VMSize
		}
	}
	o.Features = Features{
		Symtab:     f.HasSymbols(),
		DebugInfo:  f.HasDWARF(),
		UnwindInfo: f.HasUnwindInfo(),
		Pclntab:    f.Section("", "__gopclntab") != nil,
		DebugOnly:  f.Type == macho.MH_DSYM,
	}
	switch f.Type {
	case macho.MH_EXECUTE:
		o.Kind = KindExecutable
	case macho.MH_DYLIB, macho.MH_BUNDLE:
		o.Kind = KindLibrary
	case macho.MH_DSYM:
		o.Kind = KindDebug
	case macho.MH_OBJECT:
		o.Kind = KindObject
	case macho.MH_CORE:
		o.Kind = KindCore
	}
	return o
}

// machoSymbols returns the symbols that may name an address, as
// llvm-symbolizer picks them: defined in a section, not debugging stabs,
// with the leading underscore of C names removed. Mach-O symbols have no
// size; like llvm, each reaches the next symbol of its section, or the
// section's end.
func machoSymbols(f *macho.File) ([]Symbol, error) {
	syms, err := f.Symbols()
	if errors.Is(err, macho.ErrNoSymbols) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	type entry struct {
		sect int
		addr uint64
		sym  int // index into syms, or -1 for a section end
	}
	var es []entry
	for i, s := range syms {
		if s.IsSection() && f.SymbolSection(s) != nil {
			es = append(es, entry{int(s.Sect), s.Value, i})
		}
	}
	for i, s := range f.Sections {
		es = append(es, entry{i + 1, s.Addr + s.Size, -1})
	}
	slices.SortStableFunc(es, func(a, b entry) int {
		if a.sect != b.sect {
			return a.sect - b.sect
		}
		switch {
		case a.addr < b.addr:
			return -1
		case a.addr > b.addr:
			return 1
		}
		return 0
	})
	out := make([]Symbol, 0, len(es))
	for i, e := range es {
		if e.sym < 0 {
			continue
		}
		j := i + 1
		for j < len(es) && es[j].sect == e.sect && es[j].addr == e.addr {
			j++
		}
		var size uint64
		if j < len(es) && es[j].sect == e.sect {
			size = es[j].addr - e.addr
		}
		name := syms[e.sym].Name
		name = strings.TrimPrefix(name, "_")
		out = append(out, Symbol{Name: name, Addr: e.addr, Size: size})
	}
	return out, nil
}

func machoPclntab(f *macho.File) (*pclntab.Table, error) {
	s := f.Section("", "__gopclntab")
	if s == nil {
		return nil, nil
	}
	data, err := s.Data()
	if err != nil || len(data) == 0 {
		return nil, err
	}
	var mem []pclntab.Region
	for _, sec := range f.Sections {
		if sec.Seg == "__DWARF" || !sec.HasData() {
			continue
		}
		if b, err := sec.Data(); err == nil && len(b) > 0 {
			mem = append(mem, pclntab.Region{Addr: sec.Addr, Data: b})
		}
	}
	return pclntab.Parse(data, pclntab.Options{Addr: s.Addr, Memory: mem})
}

// dsymDWARF returns the DWARF file inside a .dSYM bundle directory: the one
// Mach-O file in Contents/Resources/DWARF.
func dsymDWARF(dir string) (string, error) {
	d := filepath.Join(dir, "Contents", "Resources", "DWARF")
	ents, err := os.ReadDir(d)
	if err != nil {
		return "", fmt.Errorf("open %s: not a .dSYM bundle: %w", dir, err)
	}
	var found []string
	for _, e := range ents {
		p := filepath.Join(d, e.Name())
		if !e.Type().IsRegular() {
			continue
		}
		if isMachO(p) {
			found = append(found, p)
		}
	}
	switch len(found) {
	case 0:
		return "", fmt.Errorf("open %s: no Mach-O file in Contents/Resources/DWARF", dir)
	case 1:
		return found[0], nil
	}
	return "", fmt.Errorf("open %s: several Mach-O files in Contents/Resources/DWARF: %s", dir, strings.Join(found, ", "))
}

func isMachO(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	var b [8]byte
	n, _ := f.Read(b[:])
	return Sniff(b[:n]) == FormatMachO
}
