package elf

import (
	"fmt"
	"strings"

	"github.com/backtrail/backtrail/internal/bin"
)

// Symbol is an entry of a symbol table.
type Symbol struct {
	Name    string
	Info    uint8        // st_info: type in the low four bits, binding in the high four
	Other   uint8        // st_other: visibility in the low two bits
	Section SectionIndex // st_shndx, resolved through SHT_SYMTAB_SHNDX when it is SHN_XINDEX
	Value   uint64
	Size    uint64

	// Symbol versioning, for dynamic symbols only (.gnu.version,
	// .gnu.version_d, .gnu.version_r). Version is empty for local and
	// unversioned symbols. Library is the needed file a reference is bound
	// to, empty for definitions. HiddenVersion marks a non-default version
	// (printed name@VERSION rather than name@@VERSION).
	Version       string
	Library       string
	HiddenVersion bool
}

// Type returns the symbol's type, ELF32_ST_TYPE(st_info).
func (s *Symbol) Type() SymType { return SymType(s.Info & 0xf) }

// Bind returns the symbol's binding, ELF32_ST_BIND(st_info).
func (s *Symbol) Bind() SymBind { return SymBind(s.Info >> 4) }

// Visibility returns the symbol's visibility, ELF32_ST_VISIBILITY(st_other).
func (s *Symbol) Visibility() SymVis { return SymVis(s.Other & 3) }

// Symbols returns the entries of the static symbol table (SHT_SYMTAB,
// usually ".symtab"), without the null symbol at index 0, so that symbol i
// of the table is at index i-1. It returns ErrNoSymbols when there is no
// such table. Linear in the table's size; the names share one copy of the
// string table.
func (f *File) Symbols() ([]Symbol, error) {
	syms, _, err := f.symbols(SHT_SYMTAB)
	return syms, err
}

// DynamicSymbols returns the entries of the dynamic symbol table
// (SHT_DYNSYM, ".dynsym") like Symbols, with their versions when the file
// has symbol versioning. Malformed version tables leave the versions empty
// rather than failing, since the symbols are usable without them.
func (f *File) DynamicSymbols() ([]Symbol, error) {
	syms, s, err := f.symbols(SHT_DYNSYM)
	if err == nil {
		f.addVersions(s, syms)
	}
	return syms, err
}

// symbols reads the first symbol table of type t.
func (f *File) symbols(t SectionType) ([]Symbol, *Section, error) {
	s := f.sectionByType(t)
	if s == nil {
		return nil, nil, ErrNoSymbols
	}
	data, err := tableData(s)
	if err != nil {
		return nil, nil, err
	}
	entsize := uint64(sym64Size)
	if f.Class == ELFCLASS32 {
		entsize = sym32Size
	}
	stride := entsize
	if s.Entsize != 0 {
		if s.Entsize < entsize {
			return nil, nil, &FormatError{Off: s.hdrOff, Msg: fmt.Sprintf("section %d (%q): sh_entsize smaller than a %d-byte symbol:", s.Index, s.Name, entsize), Val: s.Entsize}
		}
		stride = s.Entsize
	}
	n := uint64(len(data)) / stride
	if n <= 1 {
		return nil, s, nil
	}
	strs, err := f.linkedData(s)
	if err != nil {
		return nil, nil, err
	}
	names := string(strs) // one copy; every name is a substring of it

	var shndx []byte // SHT_SYMTAB_SHNDX entries, read when first needed
	shndxRead := false

	big := f.Data == ELFDATA2MSB
	base := s.Offset
	syms := make([]Symbol, n-1) // n is bounded by the section's bytes in the file
	for i := uint64(1); i < n; i++ {
		off := i * stride
		b := bin.New(s.Name, base+off, data[off:off+entsize], big)
		sym := &syms[i-1]
		name := b.U32()
		var shn uint16
		if f.Class == ELFCLASS32 {
			sym.Value = uint64(b.U32())
			sym.Size = uint64(b.U32())
			sym.Info = b.U8()
			sym.Other = b.U8()
			shn = b.U16()
		} else {
			sym.Info = b.U8()
			sym.Other = b.U8()
			shn = b.U16()
			sym.Value = b.U64()
			sym.Size = b.U64()
		}
		sym.Section = SectionIndex(shn)
		if sym.Section == SHN_XINDEX {
			if !shndxRead {
				shndx, shndxRead = f.shndxTable(s), true
			}
			if j := i * 4; j+4 <= uint64(len(shndx)) {
				sym.Section = SectionIndex(f.ByteOrder.Uint32(shndx[j:]))
			}
		}
		if name == 0 {
			continue
		}
		if uint64(name) >= uint64(len(names)) {
			return nil, nil, &FormatError{Off: base + off, Msg: fmt.Sprintf("%s symbol %d: st_name past the end of the %#x-byte string table:", s.Name, i, len(names)), Val: name}
		}
		end := strings.IndexByte(names[name:], 0)
		if end < 0 {
			return nil, nil, &FormatError{Off: base + off, Msg: fmt.Sprintf("%s symbol %d: unterminated name at st_name", s.Name, i), Val: name}
		}
		sym.Name = names[name : int(name)+end]
	}
	return syms, s, nil
}

// tableData returns the raw bytes of a symbol, string or version table.
// Toolchains compress only debug sections; refusing compressed tables keeps
// their size, and so every allocation made from them, bounded by the file's.
func tableData(s *Section) ([]byte, error) {
	if s.Flags&SHF_COMPRESSED != 0 {
		return nil, &FormatError{Off: s.hdrOff, Msg: fmt.Sprintf("section %d (%q): compressed %v not supported", s.Index, s.Name, s.Type)}
	}
	return s.Data()
}

// linkedData returns the raw bytes of the section that s's sh_link names,
// such as a symbol table's string table.
func (f *File) linkedData(s *Section) ([]byte, error) {
	if s.Link == 0 || uint64(s.Link) >= uint64(len(f.Sections)) {
		return nil, &FormatError{Off: s.hdrOff, Msg: fmt.Sprintf("section %d (%q): sh_link is not a section index:", s.Index, s.Name), Val: s.Link}
	}
	return tableData(f.Sections[s.Link])
}

// shndxTable returns the SHT_SYMTAB_SHNDX section that extends the symbol
// table symtab, or nil.
func (f *File) shndxTable(symtab *Section) []byte {
	for _, s := range f.Sections {
		if s.Type == SHT_SYMTAB_SHNDX && int(s.Link) == symtab.Index {
			data, err := tableData(s)
			if err != nil {
				return nil
			}
			return data
		}
	}
	return nil
}

// verName is a version and, for references, the library that provides it.
type verName struct {
	name, file string
}

// addVersions fills in the versions of the dynamic symbols syms read from
// dynsym, from the SHT_GNU_versym table that links to it.
func (f *File) addVersions(dynsym *Section, syms []Symbol) {
	if dynsym == nil || len(syms) == 0 {
		return
	}
	var versym []byte
	for _, s := range f.Sections {
		if s.Type == SHT_GNU_versym && int(s.Link) == dynsym.Index {
			versym, _ = tableData(s)
			break
		}
	}
	if len(versym) < 2*(len(syms)+1) {
		return
	}
	names := map[uint16]verName{}
	for _, s := range f.Sections {
		switch s.Type {
		case SHT_GNU_verdef:
			f.readVerdef(s, names)
		case SHT_GNU_verneed:
			f.readVerneed(s, names)
		}
	}
	for i := range syms {
		v := f.ByteOrder.Uint16(versym[2*(i+1):])
		ndx := v &^ VERSYM_HIDDEN
		if ndx <= VER_NDX_GLOBAL {
			continue
		}
		if n, ok := names[ndx]; ok {
			syms[i].Version, syms[i].Library = n.name, n.file
			syms[i].HiddenVersion = v&VERSYM_HIDDEN != 0
		}
	}
}

// readVerdef adds the version definitions of s (Elf_Verdef entries, each
// with Elf_Verdaux names) to names. The base definition, which names the
// file itself, is skipped.
func (f *File) readVerdef(s *Section, names map[uint16]verName) {
	data, err1 := tableData(s)
	strs, err2 := f.linkedData(s)
	if err1 != nil || err2 != nil {
		return
	}
	b := bin.New(s.Name, s.Offset, data, f.Data == ELFDATA2MSB)
	off := 0
	// Every entry is at least 20 bytes and vd_next moves forward, so the
	// walk ends within len(data)/20 steps whatever sh_info claims.
	for i := 0; i < int(s.Info) && i <= len(data)/20; i++ {
		b.Seek(off)
		version := b.U16()
		flags := b.U16()
		ndx := b.U16()
		cnt := b.U16()
		b.U32() // vd_hash
		aux := b.U32()
		next := b.U32()
		if b.Err() != nil || version != 1 {
			return
		}
		if cnt > 0 && flags&VER_FLG_BASE == 0 {
			b.Seek(off + int(aux))
			if name, ok := bin.CStringAt(strs, uint64(b.U32())); ok && b.Err() == nil {
				names[ndx] = verName{name: string(name)}
			}
		}
		if next == 0 {
			return
		}
		off += int(next)
	}
}

// readVerneed adds the versions that s (Elf_Verneed entries, each with
// Elf_Vernaux entries) requires to names, with the library that provides
// each.
func (f *File) readVerneed(s *Section, names map[uint16]verName) {
	data, err1 := tableData(s)
	strs, err2 := f.linkedData(s)
	if err1 != nil || err2 != nil {
		return
	}
	b := bin.New(s.Name, s.Offset, data, f.Data == ELFDATA2MSB)
	off := 0
	steps := len(data) / 16 // every entry is at least 16 bytes and links move forward
	for i := 0; i < int(s.Info) && steps >= 0; i++ {
		b.Seek(off)
		version := b.U16()
		cnt := b.U16()
		file := b.U32()
		aux := b.U32()
		next := b.U32()
		if b.Err() != nil || version != 1 {
			return
		}
		lib, _ := bin.CStringAt(strs, uint64(file))
		a := off + int(aux)
		for j := 0; j < int(cnt) && steps >= 0; j++ {
			steps--
			b.Seek(a)
			b.U32() // vna_hash
			b.U16() // vna_flags
			other := b.U16()
			name := b.U32()
			anext := b.U32()
			if b.Err() != nil {
				return
			}
			if n, ok := bin.CStringAt(strs, uint64(name)); ok {
				names[other] = verName{name: string(n), file: string(lib)}
			}
			if anext == 0 {
				break
			}
			a += int(anext)
		}
		steps--
		if next == 0 {
			return
		}
		off += int(next)
	}
}
