package debugfile

import "errors"

// Symbol is a symbol table entry that may name an address: a function, or
// a data or untyped symbol (assembly routines are often untyped).
type Symbol struct {
	Name string // raw (mangled); Mach-O's leading underscore removed
	Addr uint64
	Size uint64 // 0 when unknown: the symbol then reaches the next one
	// File is the source file of an ELF local symbol (the STT_FILE symbol
	// before it), shown when DWARF knows no file for an address.
	File string
}

// Symbols returns the object's symbols that may name an address, chosen as
// llvm-symbolizer chooses them, in table order. An object without a symbol
// table has none.
func (o *Object) Symbols() ([]Symbol, error) {
	switch {
	case o.elf != nil:
		return elfSymbols(o.elf)
	case o.macho != nil:
		return machoSymbols(o.macho)
	}
	return nil, errors.New("object has no container")
}
