package debugfile

import (
	"encoding/hex"
	"errors"
	"strings"

	"github.com/backtrail/backtrail/debugfile/elf"
	"github.com/backtrail/backtrail/debugfile/pclntab"
)

func elfObject(f *elf.File) (*Object, error) {
	o := &Object{Format: FormatELF, elf: f, BigEndian: f.Data == elf.ELFDATA2MSB}
	o.Arch = elfArch(f)
	o.BuildID = f.BuildID()
	o.GoBuildID = f.GoBuildID()
	if len(o.BuildID) > 0 {
		o.CodeID = hex.EncodeToString(o.BuildID)
		o.DebugID = debugIDFromBuildID(o.BuildID, o.BigEndian)
	} else if text := f.Section(".text"); text != nil {
		// Without a build id Sentry identifies the file by a hash of its
		// first text page; do the same so the ids agree.
		if b, err := text.Data(); err == nil && len(b) > 0 {
			o.DebugID = debugIDFromText(b, o.BigEndian)
		}
	}
	o.ImageVMAddr = f.ImageBase()
	o.ImageSize = f.ImageSize()
	ft := f.Features()
	o.Features = Features{
		Symtab:     ft.Symtab || ft.Dynsym,
		DebugInfo:  ft.DWARF,
		UnwindInfo: ft.Unwind,
		Pclntab:    ft.GoPclntab,
		DebugOnly:  ft.DebugOnly,
	}
	switch {
	case ft.DebugOnly:
		o.Kind = KindDebug
	case f.Type == elf.ET_EXEC:
		o.Kind = KindExecutable
	case f.Type == elf.ET_DYN:
		o.Kind = KindLibrary
		for _, p := range f.Progs {
			if p.Type == elf.PT_INTERP {
				o.Kind = KindExecutable
			}
		}
	case f.Type == elf.ET_REL:
		o.Kind = KindObject
	case f.Type == elf.ET_CORE:
		o.Kind = KindCore
	}
	return o, nil
}

func elfArch(f *elf.File) string {
	switch f.Machine {
	case elf.EM_X86_64:
		return "x86_64"
	case elf.EM_386:
		return "x86"
	case elf.EM_AARCH64:
		return "arm64"
	case elf.EM_ARM:
		return "arm"
	case elf.EM_PPC64:
		return "ppc64"
	case elf.EM_S390:
		return "s390x"
	case elf.EM_MIPS:
		if f.Class == elf.ELFCLASS64 {
			return "mips64"
		}
		return "mips"
	case elf.EM_RISCV:
		if f.Class == elf.ELFCLASS64 {
			return "riscv64"
		}
		return "riscv32"
	}
	return strings.ToLower(strings.TrimPrefix(f.Machine.String(), "EM_"))
}

// elfSymbols returns the symbols of .symtab (or .dynsym when there is no
// .symtab) that may name an address, chosen as llvm-symbolizer chooses them:
// defined in a section, of type function, object, GNU ifunc or untyped,
// without ARM/AArch64/RISC-V mapping symbols ($x, $d, …); local symbols
// carry the name of the STT_FILE symbol before them.
func elfSymbols(f *elf.File) ([]Symbol, error) {
	syms, err := f.Symbols()
	if errors.Is(err, elf.ErrNoSymbols) || err == nil && len(syms) == 0 {
		syms, err = f.DynamicSymbols()
		if errors.Is(err, elf.ErrNoSymbols) {
			return nil, nil
		}
	}
	if err != nil {
		return nil, err
	}
	out := make([]Symbol, 0, len(syms))
	file := ""
	for i := range syms {
		s := &syms[i]
		t := s.Type()
		if t == elf.STT_FILE {
			file = s.Name
			continue
		}
		if s.Section == elf.SHN_UNDEF || s.Section >= elf.SHN_LORESERVE {
			continue
		}
		switch t {
		case elf.STT_FUNC, elf.STT_OBJECT, elf.STT_GNU_IFUNC:
		case elf.STT_NOTYPE:
			if strings.HasPrefix(s.Name, "$") {
				continue
			}
		default:
			continue
		}
		sym := Symbol{Name: s.Name, Addr: s.Value, Size: s.Size}
		if s.Bind() == elf.STB_LOCAL {
			sym.File = file
		}
		out = append(out, sym)
	}
	return out, nil
}

func elfPclntab(f *elf.File) (*pclntab.Table, error) {
	s := f.Section(".gopclntab")
	if s == nil {
		return nil, nil
	}
	data, err := f.SectionData(s)
	if err != nil || len(data) == 0 {
		return nil, err
	}
	// The table's moduledata, and in older toolchains its funcdata, live
	// in other allocated sections: hand them all over as memory.
	var mem []pclntab.Region
	for _, sec := range f.Sections {
		if sec.Flags&elf.SHF_ALLOC == 0 || sec.Type != elf.SHT_PROGBITS {
			continue
		}
		if b, err := f.SectionData(sec); err == nil && len(b) > 0 {
			mem = append(mem, pclntab.Region{Addr: sec.Addr, Data: b})
		}
	}
	return pclntab.Parse(data, pclntab.Options{Addr: s.Addr, Memory: mem})
}
