package elf

import "strings"

// ImageBase returns the virtual address the image is linked at: the p_vaddr
// of the first PT_LOAD program header, or 0 when there is none (relocatable
// objects, files without program headers).
//
// The rule is the one Sentry's symbolic (ElfObject::load_address) and
// Breakpad's dump_syms (GetLoadingAddress) use, so that addresses relative
// to the image agree with theirs: the first PT_LOAD's p_vaddr as is, neither
// aligned down to p_align nor reduced by p_offset. The gABI requires PT_LOAD
// entries sorted by p_vaddr, so this is also the lowest one. It is typically
// 0 for PIE executables and shared libraries and 0x400000 (x86-64) for
// ET_EXEC executables. Separate debug files keep the program headers, so
// they have the same image base as the stripped file.
func (f *File) ImageBase() uint64 {
	for _, p := range f.Progs {
		if p.Type == PT_LOAD {
			return p.Vaddr
		}
	}
	return 0
}

// ImageSize returns the span of the loaded image: from the lowest PT_LOAD
// address to the end of the highest segment in memory, 0 without segments.
func (f *File) ImageSize() uint64 {
	var lo, hi uint64
	first := true
	for _, p := range f.Progs {
		if p.Type != PT_LOAD {
			continue
		}
		if first || p.Vaddr < lo {
			lo = p.Vaddr
		}
		hi = max(hi, p.Vaddr+p.Memsz)
		first = false
	}
	return hi - lo
}

// IsPIE reports whether the file is position independent, that is ET_DYN:
// a PIE executable or a shared library. Its addresses are relative to a load
// bias chosen at run time; an ET_EXEC file runs at its link-time addresses.
func (f *File) IsPIE() bool { return f.Type == ET_DYN }

// OffsetToVaddr maps a file offset to the virtual address it is loaded at,
// through the first PT_LOAD segment whose file bytes contain it.
func (f *File) OffsetToVaddr(off uint64) (uint64, bool) {
	for _, p := range f.Progs {
		if p.Type == PT_LOAD && off >= p.Off && off-p.Off < p.Filesz {
			return p.Vaddr + (off - p.Off), true
		}
	}
	return 0, false
}

// VaddrToOffset maps a virtual address to the file offset it is loaded from,
// through the first PT_LOAD segment whose file bytes contain it. Addresses in
// a segment's zero-filled tail (p_memsz beyond p_filesz) have no offset.
func (f *File) VaddrToOffset(vaddr uint64) (uint64, bool) {
	for _, p := range f.Progs {
		if p.Type == PT_LOAD && vaddr >= p.Vaddr && vaddr-p.Vaddr < p.Filesz {
			return p.Off + (vaddr - p.Vaddr), true
		}
	}
	return 0, false
}

// Features says what a file offers a symbolicator.
type Features struct {
	Symtab    bool // a static symbol table (SHT_SYMTAB) with symbols
	Dynsym    bool // a dynamic symbol table (SHT_DYNSYM) with symbols
	DWARF     bool // .debug_info or .zdebug_info with contents
	Unwind    bool // .eh_frame, .eh_frame_hdr, .debug_frame or .zdebug_frame with contents
	DebugOnly bool // a separate debug file: its code sections are SHT_NOBITS
	GoPclntab bool // a Go pclntab: .gopclntab, or the runtime.pclntab symbol, with contents
}

// Features reports which symbolication data the file holds. A section
// counts only when it has bytes in this file, so a separate debug file has
// no Unwind from its SHT_NOBITS .eh_frame. Linear in the number of sections,
// and in the symbol table when a Go binary's pclntab has to be found by
// symbol.
func (f *File) Features() Features {
	var ft Features
	entsize := uint64(sym64Size)
	if f.Class == ELFCLASS32 {
		entsize = sym32Size
	}
	code, codeNobits := 0, 0
	goNamed := false
	for _, s := range f.Sections {
		has := hasContents(s)
		switch {
		case s.Type == SHT_SYMTAB:
			ft.Symtab = ft.Symtab || has && s.Size >= 2*entsize
		case s.Type == SHT_DYNSYM:
			ft.Dynsym = ft.Dynsym || has && s.Size >= 2*entsize
		}
		switch s.Name {
		case ".debug_info", ".zdebug_info":
			ft.DWARF = ft.DWARF || has
		case ".eh_frame", ".eh_frame_hdr", ".debug_frame", ".zdebug_frame":
			ft.Unwind = ft.Unwind || has
		case ".gopclntab":
			ft.GoPclntab = ft.GoPclntab || has
		case ".go.buildinfo", ".note.go.buildid":
			goNamed = true
		}
		if s.Flags&SHF_ALLOC != 0 && s.Flags&SHF_EXECINSTR != 0 {
			code++
			if s.Type == SHT_NOBITS {
				codeNobits++
			}
		}
	}
	ft.DebugOnly = code > 0 && code == codeNobits
	// Only Go's linker makes a pclntab, and it always names these
	// sections; reading the whole symbol table of any other file (24 ms
	// for a 1 GB C++ binary) would find nothing.
	if !ft.GoPclntab && ft.Symtab && goNamed {
		ft.GoPclntab = f.hasPclntabSymbol()
	}
	return ft
}

// hasContents reports whether s has bytes in the file.
func hasContents(s *Section) bool {
	return s.inFile() && s.Size > 0
}

// hasPclntabSymbol reports whether the symbol table defines runtime.pclntab
// (or, from Go 1.20 on, go:func.*, which lies in the pclntab) in a section
// with contents. PIE and externally linked Go binaries keep the pclntab in
// .data.rel.ro, without a .gopclntab section.
func (f *File) hasPclntabSymbol() bool {
	syms, err := f.Symbols()
	if err != nil {
		return false
	}
	for i := range syms {
		s := &syms[i]
		if s.Name != "runtime.pclntab" && !strings.HasPrefix(s.Name, "go:func.") {
			continue
		}
		if int(s.Section) < len(f.Sections) && hasContents(f.Sections[s.Section]) {
			return true
		}
	}
	return false
}
