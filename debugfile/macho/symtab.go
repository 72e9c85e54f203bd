package macho

import (
	"errors"
	"fmt"
	"strings"

	"github.com/backtrail/backtrail/internal/bin"
)

// ErrNoSymbols is returned by Symbols when the file has no LC_SYMTAB.
var ErrNoSymbols = errors.New("macho: no symbol table")

// A Symbol is one nlist or nlist_64 entry of the symbol table.
type Symbol struct {
	Name  string // as stored: C names keep their leading underscore
	Type  uint8  // n_type: N_STAB, N_PEXT, N_TYPE and N_EXT bits
	Sect  uint8  // n_sect: 1-based index into File.Sections, or NO_SECT; see File.SymbolSection
	Desc  uint16 // n_desc
	Value uint64 // n_value: for a section symbol, its address
}

// IsStab reports whether s is a debugging (stab) entry rather than a symbol.
func (s Symbol) IsStab() bool { return s.Type&N_STAB != 0 }

// IsExternal reports whether s is visible outside its object file.
func (s Symbol) IsExternal() bool { return s.Type&N_EXT != 0 }

// IsSection reports whether s is defined in a section (N_SECT and not a
// stab): the kind of symbol that names code or data at address Value.
func (s Symbol) IsSection() bool {
	return s.Type&N_STAB == 0 && s.Type&N_TYPE == N_SECT && s.Sect != NO_SECT
}

// IsUndefined reports whether s is an undefined reference (N_UNDF, not a
// stab).
func (s Symbol) IsUndefined() bool { return s.Type&(N_STAB|N_TYPE) == N_UNDF }

// SymbolSection returns the section a section symbol is defined in,
// Sections[s.Sect-1], or nil when s is not a section symbol or n_sect is out
// of range. A function symbol's code runs at most to the end of its section.
func (f *File) SymbolSection(s Symbol) *Section {
	if !s.IsSection() || int(s.Sect) > len(f.Sections) {
		return nil
	}
	return f.Sections[s.Sect-1]
}

// Symbols reads the LC_SYMTAB symbol table, in table order. It returns
// ErrNoSymbols when the file has none, and a *FormatError when the table or
// its string table lies outside the file or a name offset lies outside the
// string table.
//
// Each call reads the table again and allocates the result: one Symbol per
// entry, and one copy of the string table, which all names share.
func (f *File) Symbols() ([]Symbol, error) {
	st := f.Symtab
	if st == nil {
		return nil, ErrNoSymbols
	}
	size := uint64(sizeofNlist)
	if f.Is64 {
		size = sizeofNlist64
	}
	// Errors point at symoff and stroff in the LC_SYMTAB command.
	syms, err := f.slice(uint64(st.Symoff), uint64(st.Nsyms)*size, f.symtabOff+8, "LC_SYMTAB symbols")
	if err != nil {
		return nil, err
	}
	strs, err := f.slice(uint64(st.Stroff), uint64(st.Strsize), f.symtabOff+16, "LC_SYMTAB strings")
	if err != nil {
		return nil, err
	}
	strtab := string(strs)

	out := make([]Symbol, st.Nsyms)
	b := bin.New("symbol table", f.base+uint64(st.Symoff), syms, f.big)
	for i := range out {
		s := &out[i]
		strx := b.U32()
		s.Type = b.U8()
		s.Sect = b.U8()
		s.Desc = b.U16()
		if f.Is64 {
			s.Value = b.U64()
		} else {
			s.Value = uint64(b.U32())
		}
		if strx == 0 {
			continue // index 0 means no name
		}
		if uint64(strx) >= uint64(len(strtab)) {
			return nil, &FormatError{
				Off: f.base + uint64(st.Symoff) + uint64(i)*size,
				Msg: fmt.Sprintf("symbol %d: n_strx outside the string table (%#x bytes)", i, len(strtab)),
				Val: strx,
			}
		}
		name := strtab[strx:]
		if j := strings.IndexByte(name, 0); j >= 0 {
			name = name[:j]
		}
		s.Name = name
	}
	if err := b.Err(); err != nil {
		return nil, formatError(err)
	}
	return out, nil
}
