package elf

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/backtrail/backtrail/internal/bin"
	"github.com/backtrail/backtrail/internal/mmap"
)

// FormatError reports malformed ELF data: what is wrong, the offending value,
// and the file offset of the field or record that holds it.
type FormatError struct {
	Off uint64 // file offset of the bad field or record
	Msg string // what is wrong, naming the field
	Val any    // the offending value, or nil
}

// Error formats the error as "elf: <what is wrong> [<value>] at offset <hex>".
func (e *FormatError) Error() string {
	msg := "elf: " + e.Msg
	switch v := e.Val.(type) {
	case nil:
	case fmt.Stringer:
		msg += fmt.Sprintf(" %v", v)
	case string:
		msg += fmt.Sprintf(" %q", v)
	case []byte:
		msg += fmt.Sprintf(" % x", v)
	case uint64, uint32, uint16, uint8, int, int64:
		msg += fmt.Sprintf(" %#x", v)
	default:
		msg += fmt.Sprintf(" %v", v)
	}
	return msg + fmt.Sprintf(" at offset %#x", e.Off)
}

// formatError turns a cursor's DecodeError into a FormatError; other errors
// pass through.
func formatError(err error) error {
	var de *bin.DecodeError
	if errors.As(err, &de) {
		return &FormatError{Off: de.Offset, Msg: de.Name + ": " + de.Err}
	}
	return err
}

var (
	// ErrNoSymbols is returned by Symbols and DynamicSymbols when the file
	// has no such symbol table.
	ErrNoSymbols = errors.New("elf: no symbol table")

	// ErrClosed is returned for data requested after Close.
	ErrClosed = errors.New("elf: file closed")
)

// FileHeader holds the fields of the ELF header that describe the file.
type FileHeader struct {
	Class      Class
	Data       Data
	Version    Version
	OSABI      OSABI
	ABIVersion uint8
	ByteOrder  binary.ByteOrder
	Type       Type
	Machine    Machine
	Entry      uint64
	Flags      uint32 // e_flags, processor-specific
}

// ProgHeader is a program header: one segment of the process image.
type ProgHeader struct {
	Type   ProgType
	Flags  ProgFlag
	Off    uint64 // p_offset
	Vaddr  uint64
	Paddr  uint64
	Filesz uint64
	Memsz  uint64
	Align  uint64
}

// Prog is a program header together with the file it came from.
type Prog struct {
	ProgHeader
	Index int // position in the program header table

	f      *File
	hdrOff uint64 // file offset of the program header, for errors
}

// Data returns the segment's bytes in the file, [Off, Off+Filesz), without
// copying.
func (p *Prog) Data() ([]byte, error) {
	return p.f.slice(p.Off, p.Filesz, p.hdrOff, fmt.Sprintf("program header %d (%v): p_offset+p_filesz", p.Index, p.Type))
}

// SectionHeader is a section header as stored in the file.
type SectionHeader struct {
	Name      string
	Type      SectionType
	Flags     SectionFlag
	Addr      uint64
	Offset    uint64
	Size      uint64 // sh_size: bytes in the file, compressed if the section is
	Link      uint32
	Info      uint32
	Addralign uint64
	Entsize   uint64
}

// Section is a section header together with the file it came from. Sections
// are shared; their decompressed contents are cached on first use.
type Section struct {
	SectionHeader
	Index int // position in the section header table

	f      *File
	hdrOff uint64 // file offset of the section header, for errors

	once sync.Once // guards data and err, the decompressed contents
	data []byte
	err  error
}

// Data returns the section's raw bytes in the file without copying: still
// compressed for a compressed section, nil for a section without bytes in
// the file (see inFile). Use File.SectionData for the contents.
func (s *Section) Data() ([]byte, error) {
	if !s.inFile() {
		return nil, nil
	}
	return s.f.slice(s.Offset, s.Size, s.hdrOff, fmt.Sprintf("section %d (%q): sh_offset+sh_size", s.Index, s.Name))
}

// inFile reports whether s may have bytes in the file: not SHT_NOBITS or
// SHT_NULL, and not section 0, which the gABI reserves whatever its header
// holds (with extended numbering its fields hold counts, not a section).
func (s *Section) inFile() bool {
	return s.Index != 0 && s.Type != SHT_NOBITS && s.Type != SHT_NULL
}

// File is an ELF file parsed from memory. Raw section and segment data are
// subslices of the input; they stay valid until Close when Open mapped the
// file, and as long as the caller's slice otherwise.
//
// A File is safe for concurrent use. Its exported fields must not be
// modified.
type File struct {
	FileHeader
	Progs    []*Prog
	Sections []*Section

	data   []byte
	mapped *mmap.Region // what Open mapped, nil for NewFile

	closed  atomic.Bool
	mu      sync.Mutex     // guards regions and the transition to closed
	regions []*mmap.Region // decompressed sections, freed by Close

	claimsOnce sync.Once
	claimsErr  error // from checkClaims
}

// Open maps the named file read-only and parses it. Close unmaps it.
func Open(path string) (*File, error) {
	r, err := mmap.OpenPiecewise(path)
	if err != nil {
		return nil, err
	}
	f, err := NewFile(r.Data)
	if err != nil {
		r.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	f.mapped = r
	return f, nil
}

// Close releases the buffers holding decompressed sections and, if Open
// mapped the file, the mapping. Data returned earlier must not be used
// afterwards, and Close must not run concurrently with other methods; later
// calls that need the file's bytes return ErrClosed. Close is idempotent.
func (f *File) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed.Swap(true) {
		return nil
	}
	var first error
	for _, r := range f.regions {
		if err := r.Close(); err != nil && first == nil {
			first = err
		}
	}
	f.regions = nil
	if f.mapped != nil {
		if err := f.mapped.Close(); err != nil && first == nil {
			first = err
		}
		f.mapped = nil
	}
	return first
}

// slice returns data[off:off+n], or a FormatError saying what asked for it
// in the header at hdrOff.
func (f *File) slice(off, n, hdrOff uint64, what string) ([]byte, error) {
	if f.closed.Load() {
		return nil, ErrClosed
	}
	size := uint64(len(f.data))
	if off > size || n > size-off {
		return nil, &FormatError{Off: hdrOff, Msg: fmt.Sprintf("%s [%#x, %#x+%#x) past the end of the file (size %#x)", what, off, off, n, size)}
	}
	return f.data[off : off+n : off+n], nil
}

// Section returns the first section with the given name, or nil.
func (f *File) Section(name string) *Section {
	for _, s := range f.Sections {
		if s.Name == name {
			return s
		}
	}
	return nil
}

// sectionByType returns the first section of type t, or nil.
func (f *File) sectionByType(t SectionType) *Section {
	for _, s := range f.Sections {
		if s.Type == t {
			return s
		}
	}
	return nil
}

// header field offsets that differ by class, for errors.
type headerLayout struct {
	size, phdrSize, shdrSize int
	phoff, shoff, phentsize  uint64 // offsets of e_phoff, e_shoff, e_phentsize
}

var (
	layout32 = headerLayout{ehdr32Size, phdr32Size, shdr32Size, 28, 32, 42}
	layout64 = headerLayout{ehdr64Size, phdr64Size, shdr64Size, 32, 40, 54}
)

// NewFile parses the ELF file in data without copying it. The caller keeps
// data alive and unmodified while the File is in use. NewFile reads the
// headers and section names; tables and notes are parsed on request.
func NewFile(data []byte) (*File, error) {
	if len(data) < EI_NIDENT {
		return nil, &FormatError{Off: 0, Msg: "file too short for the ELF identification: size", Val: uint64(len(data))}
	}
	if string(data[:4]) != ELFMAG {
		return nil, &FormatError{Off: 0, Msg: "bad magic number", Val: data[:4]}
	}
	f := &File{data: data}
	f.Class = Class(data[EI_CLASS])
	var lay headerLayout
	switch f.Class {
	case ELFCLASS32:
		lay = layout32
	case ELFCLASS64:
		lay = layout64
	default:
		return nil, &FormatError{Off: EI_CLASS, Msg: "unknown class", Val: f.Class}
	}
	f.Data = Data(data[EI_DATA])
	switch f.Data {
	case ELFDATA2LSB:
		f.ByteOrder = binary.LittleEndian
	case ELFDATA2MSB:
		f.ByteOrder = binary.BigEndian
	default:
		return nil, &FormatError{Off: EI_DATA, Msg: "unknown data encoding", Val: f.Data}
	}
	f.Version = Version(data[EI_VERSION])
	if f.Version != EV_CURRENT {
		return nil, &FormatError{Off: EI_VERSION, Msg: "unknown EI_VERSION", Val: f.Version}
	}
	f.OSABI = OSABI(data[EI_OSABI])
	f.ABIVersion = data[EI_ABIVERSION]
	if len(data) < lay.size {
		return nil, &FormatError{Off: 0, Msg: fmt.Sprintf("file too short for the %d-byte %v header, size", lay.size, f.Class), Val: uint64(len(data))}
	}

	big := f.Data == ELFDATA2MSB
	b := bin.New("ELF header", 0, data[:lay.size], big)
	b.Skip(EI_NIDENT)
	f.Type = Type(b.U16())
	f.Machine = Machine(b.U16())
	if v := b.U32(); v != uint32(EV_CURRENT) {
		return nil, &FormatError{Off: EI_NIDENT + 4, Msg: "unknown e_version", Val: v}
	}
	word := func() uint64 {
		if f.Class == ELFCLASS32 {
			return uint64(b.U32())
		}
		return b.U64()
	}
	f.Entry = word()
	phoff := word()
	shoff := word()
	f.Flags = b.U32()
	b.U16() // e_ehsize
	phentsize := uint64(b.U16())
	phnum := uint64(b.U16())
	shentsize := uint64(b.U16())
	shnum := uint64(b.U16())
	shstrndx := uint64(b.U16())
	if err := b.Err(); err != nil {
		return nil, formatError(err) // unreachable: the length was checked
	}
	size := uint64(len(data))

	// Section header 0 extends the 16-bit counts (gABI "Extended Section
	// Numbering"). Without section headers (e_shoff 0, or e_shnum and
	// e_shentsize 0 as some strippers leave them) the counts are ignored, as
	// loaders do.
	if shoff == 0 || shnum == 0 && shentsize == 0 {
		shnum, shstrndx = 0, 0
	} else {
		if shentsize < uint64(lay.shdrSize) {
			return nil, &FormatError{Off: lay.phentsize + 4, Msg: fmt.Sprintf("e_shentsize smaller than a %d-byte section header:", lay.shdrSize), Val: shentsize}
		}
		if shoff > size || size-shoff < shentsize {
			return nil, &FormatError{Off: lay.shoff, Msg: fmt.Sprintf("e_shoff past the end of the file (size %#x):", size), Val: shoff}
		}
		sh0 := f.readSectionHeader(data[shoff:shoff+shentsize], shoff)
		if shnum == 0 {
			shnum = sh0.Size
		}
		if shstrndx == uint64(SHN_XINDEX) {
			shstrndx = uint64(sh0.Link)
		}
		if phnum == PN_XNUM {
			phnum = uint64(sh0.Info)
		}
		if shnum > (size-shoff)/shentsize {
			return nil, &FormatError{Off: lay.shoff, Msg: fmt.Sprintf("section header table (%d entries of %#x bytes) runs past the end of the file (size %#x); e_shoff", shnum, shentsize, size), Val: shoff}
		}
		if shstrndx >= shnum && shstrndx != 0 {
			return nil, &FormatError{Off: lay.phentsize + 8, Msg: fmt.Sprintf("section name table index out of range (%d sections):", shnum), Val: shstrndx}
		}
	}

	if phnum > 0 {
		if phentsize < uint64(lay.phdrSize) {
			return nil, &FormatError{Off: lay.phentsize, Msg: fmt.Sprintf("e_phentsize smaller than a %d-byte program header:", lay.phdrSize), Val: phentsize}
		}
		if phoff > size || phnum > (size-phoff)/phentsize {
			return nil, &FormatError{Off: lay.phoff, Msg: fmt.Sprintf("program header table (%d entries of %#x bytes) runs past the end of the file (size %#x); e_phoff", phnum, phentsize, size), Val: phoff}
		}
		progs := make([]Prog, phnum)
		f.Progs = make([]*Prog, phnum)
		for i := range progs {
			off := phoff + uint64(i)*phentsize
			p := &progs[i]
			p.f = f
			p.Index = i
			p.hdrOff = off
			p.ProgHeader = f.readProgHeader(data[off:off+phentsize], off)
			f.Progs[i] = p
		}
	}

	if shnum == 0 {
		return f, nil
	}
	secs := make([]Section, shnum)
	f.Sections = make([]*Section, shnum)
	nameOff := make([]uint32, shnum)
	for i := range secs {
		off := shoff + uint64(i)*shentsize
		s := &secs[i]
		s.f = f
		s.Index = i
		s.hdrOff = off
		var name uint32
		s.SectionHeader, name = f.readSectionHeader(data[off:off+shentsize], off), f.ByteOrder.Uint32(data[off:])
		nameOff[i] = name
		f.Sections[i] = s
	}
	if shstrndx == 0 {
		return f, nil
	}
	strs, err := f.Sections[shstrndx].Data()
	if err != nil {
		return nil, err
	}
	// One copy of the name table; every name is a substring of it.
	names := string(strs)
	for i, s := range f.Sections {
		n := uint64(nameOff[i])
		if i == 0 && n == 0 {
			continue
		}
		if n >= uint64(len(names)) {
			return nil, &FormatError{Off: s.hdrOff, Msg: fmt.Sprintf("section %d: sh_name past the end of the %#x-byte section name table:", i, len(names)), Val: n}
		}
		end := strings.IndexByte(names[n:], 0)
		if end < 0 {
			return nil, &FormatError{Off: s.hdrOff, Msg: fmt.Sprintf("section %d: unterminated name at sh_name", i), Val: n}
		}
		s.Name = names[n : n+uint64(end)]
	}
	return f, nil
}

// readProgHeader decodes a program header from p, which holds at least one.
func (f *File) readProgHeader(p []byte, off uint64) ProgHeader {
	b := bin.New("program header", off, p, f.Data == ELFDATA2MSB)
	var h ProgHeader
	h.Type = ProgType(b.U32())
	if f.Class == ELFCLASS32 {
		h.Off = uint64(b.U32())
		h.Vaddr = uint64(b.U32())
		h.Paddr = uint64(b.U32())
		h.Filesz = uint64(b.U32())
		h.Memsz = uint64(b.U32())
		h.Flags = ProgFlag(b.U32())
		h.Align = uint64(b.U32())
		return h
	}
	h.Flags = ProgFlag(b.U32())
	h.Off = b.U64()
	h.Vaddr = b.U64()
	h.Paddr = b.U64()
	h.Filesz = b.U64()
	h.Memsz = b.U64()
	h.Align = b.U64()
	return h
}

// readSectionHeader decodes a section header, all but its name, from p,
// which holds at least one.
func (f *File) readSectionHeader(p []byte, off uint64) SectionHeader {
	b := bin.New("section header", off, p, f.Data == ELFDATA2MSB)
	word := b.U64
	if f.Class == ELFCLASS32 {
		word = func() uint64 { return uint64(b.U32()) }
	}
	var h SectionHeader
	b.U32() // sh_name
	h.Type = SectionType(b.U32())
	h.Flags = SectionFlag(word())
	h.Addr = word()
	h.Offset = word()
	h.Size = word()
	h.Link = b.U32()
	h.Info = b.U32()
	h.Addralign = word()
	h.Entsize = word()
	return h
}
