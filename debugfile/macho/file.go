package macho

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/backtrail/backtrail/internal/bin"
)

// ErrNotMachO is returned by NewFile when data does not start with a thin
// Mach-O magic number.
var ErrNotMachO = errors.New("macho: not a Mach-O file")

// A FormatError reports malformed input: what was wrong, where, and with
// which value.
type FormatError struct {
	Off uint64 // offset of the bad field from the start of the input
	Msg string // what was being read and what was wrong with it
	Val any    // the bad value, or nil
}

// Error formats the error as "macho: msg (val) at offset 0x…".
func (e *FormatError) Error() string {
	msg := "macho: " + e.Msg
	switch v := e.Val.(type) {
	case nil:
	case uint8, uint16, uint32, uint64, int:
		msg += fmt.Sprintf(" (%#x)", v)
	default:
		msg += fmt.Sprintf(" (%v)", v)
	}
	return msg + fmt.Sprintf(" at offset %#x", e.Off)
}

// formatError turns a cursor's error into a FormatError.
func formatError(err error) error {
	var de *bin.DecodeError
	if errors.As(err, &de) {
		return &FormatError{Off: de.Offset, Msg: de.Name + ": " + de.Err}
	}
	return err
}

// A File is a thin Mach-O file: one architecture's image, executable, dylib,
// bundle, object or dSYM companion.
//
// Sections, segments and load commands refer to the bytes the File was made
// from, without copying. A File is safe for concurrent use, except that Close
// must not run at the same time as any other method.
type File struct {
	Magic     uint32 // MH_MAGIC or MH_MAGIC_64, read in ByteOrder
	Cpu       uint32 // CPU_TYPE_*
	SubCpu    uint32 // CPU_SUBTYPE_*, possibly with CPU_SUBTYPE_MASK capability bits
	Type      Type   // MH_EXECUTE, MH_DYLIB, MH_DSYM, ...
	Ncmds     uint32
	Cmdsz     uint32 // sizeofcmds
	Flags     uint32 // MH_* header flags
	Is64      bool
	ByteOrder binary.ByteOrder

	// Loads holds every load command, in file order, as raw bytes. The
	// commands this package understands are also decoded into the fields
	// below; the rest are only here.
	Loads []Load

	Segments []*Segment // LC_SEGMENT and LC_SEGMENT_64, in file order
	// Sections lists every segment's sections in file order. A symbol's
	// n_sect numbers them from 1: Sections[n_sect-1].
	Sections []*Section

	Symtab        *Symtab        // LC_SYMTAB, or nil
	symtabOff     uint64         // of the LC_SYMTAB command
	BuildVersions []BuildVersion // LC_BUILD_VERSION and LC_VERSION_MIN_*, in file order
	ID            *Dylib         // LC_ID_DYLIB, or nil
	Dylibs        []Dylib        // LC_LOAD_DYLIB, LC_LOAD_WEAK_DYLIB, LC_REEXPORT_DYLIB, LC_LAZY_LOAD_DYLIB, LC_LOAD_UPWARD_DYLIB
	Rpaths        []string       // LC_RPATH

	uuid    [16]byte
	hasUUID bool

	data []byte // the whole thin file
	big  bool   // big-endian
	base uint64 // offset of data[0] within the input, for errors

	dwarf dwarfCache
}

// A Load is one load command, kept as raw bytes.
type Load struct {
	Cmd LoadCmd
	Off uint64 // offset of the command within the thin file
	Raw []byte // the whole command, cmd and cmdsize included
}

// A Segment is an LC_SEGMENT or LC_SEGMENT_64 command.
type Segment struct {
	Cmd      LoadCmd // LC_SEGMENT or LC_SEGMENT_64
	Name     string  // segname; empty in MH_OBJECT files
	VMAddr   uint64
	VMSize   uint64
	FileOff  uint64
	FileSize uint64
	MaxProt  uint32 // VM_PROT_* bits
	InitProt uint32 // VM_PROT_* bits
	Flags    uint32
	Sections []*Section

	file *File
	off  uint64 // of the command within the thin file
}

// Data returns the segment's file bytes without copying: FileSize bytes from
// FileOff. It fails when they lie outside the file.
func (s *Segment) Data() ([]byte, error) {
	at := s.off + 40 // segment_command_64.fileoff
	if s.Cmd == LC_SEGMENT {
		at = s.off + 32
	}
	return s.file.slice(s.FileOff, s.FileSize, at, "segment "+s.Name)
}

// A Section is one section of a segment.
type Section struct {
	Name      string // sectname: up to 16 bytes
	Seg       string // segname of the section, which in MH_OBJECT files differs from its segment's name
	Addr      uint64
	Size      uint64
	Offset    uint32 // file offset of the data
	Align     uint32 // log2 of the alignment
	Reloff    uint32
	Nreloc    uint32
	Flags     uint32 // section type (SECTION_TYPE) and attributes
	Reserved1 uint32
	Reserved2 uint32
	Reserved3 uint32 // section_64 only

	seg *Segment
	off uint64 // of the section header within the thin file
}

// Type returns the section type, Flags&SECTION_TYPE: S_REGULAR, S_ZEROFILL, ...
func (s *Section) Type() uint32 { return s.Flags & SECTION_TYPE }

// HasData reports whether the section has bytes in the file. Zero-fill
// sections have none, and neither do the sections a dSYM companion copies
// from its executable without their contents (offset 0, or a segment that
// has no file bytes).
func (s *Section) HasData() bool {
	switch s.Type() {
	case S_ZEROFILL, S_GB_ZEROFILL, S_THREAD_LOCAL_ZEROFILL:
		return false
	}
	return s.Offset != 0 && s.Size != 0 && s.seg.FileSize != 0
}

// Data returns the section's bytes without copying: Size bytes from Offset.
// It returns nil and no error when the section has no data in the file (see
// HasData), and fails when the data lie outside the file. The data of a
// compressed __zdebug section is returned as stored; DWARFSection
// decompresses it.
func (s *Section) Data() ([]byte, error) {
	if !s.HasData() {
		return nil, nil
	}
	at := s.off + 48 // section_64.offset
	if s.seg.Cmd == LC_SEGMENT {
		at = s.off + 40
	}
	return s.seg.file.slice(uint64(s.Offset), s.Size, at, "section "+s.Seg+","+s.Name)
}

// slice returns data[off:off+size], or a FormatError naming what and the
// offset at of the field that gave off.
func (f *File) slice(off, size, at uint64, what string) ([]byte, error) {
	n := uint64(len(f.data))
	if off > n || size > n-off {
		return nil, &FormatError{Off: f.base + at, Msg: fmt.Sprintf("%s: %#x bytes at %#x run past the end of the file (%#x bytes)", what, size, off, n)}
	}
	return f.data[off : off+size : off+size], nil
}

// A Symtab is an LC_SYMTAB command: where the nlist entries and their string
// table lie.
type Symtab struct {
	Symoff  uint32
	Nsyms   uint32
	Stroff  uint32
	Strsize uint32
}

// A Version is a version number packed as xxxx.yy.zz in 32 bits, as in
// LC_BUILD_VERSION and LC_ID_DYLIB.
type Version uint32

// String formats v as "major.minor" or "major.minor.patch".
func (v Version) String() string {
	if v&0xff != 0 {
		return fmt.Sprintf("%d.%d.%d", v>>16, v>>8&0xff, v&0xff)
	}
	return fmt.Sprintf("%d.%d", v>>16, v>>8&0xff)
}

// A BuildVersion says which platform and OS version an image was built for.
type BuildVersion struct {
	Cmd      LoadCmd // LC_BUILD_VERSION or one of LC_VERSION_MIN_*
	Platform Platform
	MinOS    Version
	SDK      Version
}

// A Dylib is an LC_ID_DYLIB or a dependency command such as LC_LOAD_DYLIB.
type Dylib struct {
	Cmd            LoadCmd
	Name           string // install name
	Time           uint32
	CurrentVersion Version
	CompatVersion  Version
}

// NewFile parses a thin Mach-O file, 32 or 64 bit, in either byte order. It
// reads the header and the load commands; section data, symbols and DWARF
// are read on demand. The File refers to data without copying, so data must
// stay unchanged while the File is in use.
//
// NewFile returns ErrNotMachO when data does not start with a Mach-O magic
// number, and a *FormatError when the header or a load command is malformed.
func NewFile(data []byte) (*File, error) {
	return newFile(data, 0)
}

// newFile parses the thin file data, which lies at offset base of the input.
func newFile(data []byte, base uint64) (*File, error) {
	if len(data) < 4 {
		return nil, ErrNotMachO
	}
	f := &File{data: data, base: base}
	var big bool
	switch binary.LittleEndian.Uint32(data) {
	case MH_MAGIC:
	case MH_CIGAM:
		big = true
	case MH_MAGIC_64:
		f.Is64 = true
	case MH_CIGAM_64:
		f.Is64, big = true, true
	case FAT_CIGAM, FAT_CIGAM_64:
		return nil, fmt.Errorf("%w (fat file magic %#x: use NewFatFile)", ErrNotMachO, binary.BigEndian.Uint32(data))
	default:
		return nil, ErrNotMachO
	}
	f.big = big
	f.ByteOrder = binary.ByteOrder(binary.LittleEndian)
	if big {
		f.ByteOrder = binary.BigEndian
	}

	b := bin.New("mach header", base, data, big)
	f.Magic = b.U32()
	f.Cpu = b.U32()
	f.SubCpu = b.U32()
	f.Type = Type(b.U32())
	f.Ncmds = b.U32()
	f.Cmdsz = b.U32()
	f.Flags = b.U32()
	if f.Is64 {
		b.U32() // reserved
	}
	if err := b.Err(); err != nil {
		return nil, formatError(err)
	}
	hdr := b.Pos()
	if uint64(f.Cmdsz) > uint64(len(data)-hdr) {
		return nil, &FormatError{Off: base + 20, Msg: fmt.Sprintf("mach header: sizeofcmds runs past the end of the file (%#x bytes)", len(data)), Val: f.Cmdsz}
	}
	if uint64(f.Ncmds)*sizeofLoadCommand > uint64(f.Cmdsz) {
		return nil, &FormatError{Off: base + 16, Msg: fmt.Sprintf("mach header: ncmds too large for sizeofcmds %#x", f.Cmdsz), Val: f.Ncmds}
	}

	f.Loads = make([]Load, 0, f.Ncmds)
	cmds := data[hdr : hdr+int(f.Cmdsz)]
	off := 0
	for i := range f.Ncmds {
		if len(cmds)-off < sizeofLoadCommand {
			return nil, &FormatError{Off: base + uint64(hdr+off), Msg: fmt.Sprintf("load command %d: runs past sizeofcmds, %#x bytes left", i, len(cmds)-off)}
		}
		cmd := LoadCmd(f.ByteOrder.Uint32(cmds[off:]))
		size := f.ByteOrder.Uint32(cmds[off+4:])
		if size < sizeofLoadCommand || uint64(size) > uint64(len(cmds)-off) {
			return nil, &FormatError{Off: base + uint64(hdr+off) + 4, Msg: fmt.Sprintf("load command %d (%v): bad cmdsize, %#x bytes of commands left", i, cmd, len(cmds)-off), Val: size}
		}
		raw := cmds[off : off+int(size) : off+int(size)]
		l := Load{Cmd: cmd, Off: uint64(hdr + off), Raw: raw}
		f.Loads = append(f.Loads, l)
		if err := f.parseLoad(i, l, big); err != nil {
			return nil, err
		}
		off += int(size)
	}
	return f, nil
}

// parseLoad decodes the commands this package understands into f.
func (f *File) parseLoad(i uint32, l Load, big bool) error {
	b := bin.New(fmt.Sprintf("load command %d (%v)", i, l.Cmd), f.base+l.Off, l.Raw, big)
	b.Skip(sizeofLoadCommand)
	switch l.Cmd {
	case LC_SEGMENT, LC_SEGMENT_64:
		return f.parseSegment(&b, l)

	case LC_SYMTAB:
		if f.Symtab != nil {
			b.Errorf("second LC_SYMTAB")
			break
		}
		st := &Symtab{Symoff: b.U32(), Nsyms: b.U32(), Stroff: b.U32(), Strsize: b.U32()}
		if b.Err() == nil {
			f.Symtab = st
			f.symtabOff = l.Off
		}

	case LC_UUID:
		u := b.Bytes(16)
		if b.Err() == nil && !f.hasUUID {
			copy(f.uuid[:], u)
			f.hasUUID = true
		}

	case LC_BUILD_VERSION:
		v := BuildVersion{Cmd: l.Cmd, Platform: Platform(b.U32()), MinOS: Version(b.U32()), SDK: Version(b.U32())}
		ntools := b.U32()
		if b.Err() == nil && uint64(ntools)*sizeofBuildTool > uint64(b.Len()) {
			return &FormatError{Off: b.Off() - 4, Msg: fmt.Sprintf("%s: ntools too large for cmdsize %#x", b.Name(), len(l.Raw)), Val: ntools}
		}
		if b.Err() == nil {
			f.BuildVersions = append(f.BuildVersions, v)
		}

	case LC_VERSION_MIN_MACOSX, LC_VERSION_MIN_IPHONEOS, LC_VERSION_MIN_TVOS, LC_VERSION_MIN_WATCHOS:
		v := BuildVersion{Cmd: l.Cmd, MinOS: Version(b.U32()), SDK: Version(b.U32())}
		switch l.Cmd {
		case LC_VERSION_MIN_MACOSX:
			v.Platform = PLATFORM_MACOS
		case LC_VERSION_MIN_IPHONEOS:
			v.Platform = PLATFORM_IOS
		case LC_VERSION_MIN_TVOS:
			v.Platform = PLATFORM_TVOS
		case LC_VERSION_MIN_WATCHOS:
			v.Platform = PLATFORM_WATCHOS
		}
		if b.Err() == nil {
			f.BuildVersions = append(f.BuildVersions, v)
		}

	case LC_ID_DYLIB, LC_LOAD_DYLIB, LC_LOAD_WEAK_DYLIB, LC_REEXPORT_DYLIB, LC_LAZY_LOAD_DYLIB, LC_LOAD_UPWARD_DYLIB:
		nameOff := b.U32()
		d := Dylib{Cmd: l.Cmd, Time: b.U32(), CurrentVersion: Version(b.U32()), CompatVersion: Version(b.U32())}
		d.Name = lcString(&b, nameOff)
		if b.Err() != nil {
			break
		}
		if l.Cmd == LC_ID_DYLIB {
			if f.ID == nil {
				f.ID = &d
			}
		} else {
			f.Dylibs = append(f.Dylibs, d)
		}

	case LC_RPATH:
		p := lcString(&b, b.U32())
		if b.Err() == nil {
			f.Rpaths = append(f.Rpaths, p)
		}
	}
	return formatError(b.Err())
}

// lcString reads an lc_str: a string at offset off from the start of the
// command, NUL-terminated or running to the end of the command.
func lcString(b *bin.Buf, off uint32) string {
	if b.Err() != nil {
		return ""
	}
	if uint64(off) < uint64(b.Pos()) || uint64(off) > uint64(len(b.Data())) {
		b.Errorf("string offset %#x outside command (%#x..%#x)", off, b.Pos(), len(b.Data()))
		return ""
	}
	s := b.Data()[off:]
	if i := indexNUL(s); i >= 0 {
		s = s[:i]
	}
	return string(s)
}

func indexNUL(s []byte) int {
	for i, c := range s {
		if c == 0 {
			return i
		}
	}
	return -1
}

// fixedString returns a NUL-padded name such as segname or sectname; a name
// that fills all its bytes has no NUL.
func fixedString(s []byte) string {
	if i := indexNUL(s); i >= 0 {
		s = s[:i]
	}
	return string(s)
}

func (f *File) parseSegment(b *bin.Buf, l Load) error {
	is64 := l.Cmd == LC_SEGMENT_64
	s := &Segment{Cmd: l.Cmd, file: f, off: l.Off}
	s.Name = fixedString(b.Bytes(16))
	sectSize := sizeofSection
	if is64 {
		s.VMAddr, s.VMSize, s.FileOff, s.FileSize = b.U64(), b.U64(), b.U64(), b.U64()
		sectSize = sizeofSection64
	} else {
		s.VMAddr, s.VMSize, s.FileOff, s.FileSize = uint64(b.U32()), uint64(b.U32()), uint64(b.U32()), uint64(b.U32())
	}
	s.MaxProt = b.U32()
	s.InitProt = b.U32()
	at := b.Off()
	nsects := b.U32()
	s.Flags = b.U32()
	if b.Err() != nil {
		return formatError(b.Err())
	}
	if uint64(nsects)*uint64(sectSize) > uint64(b.Len()) {
		return &FormatError{Off: at, Msg: fmt.Sprintf("%s: nsects too large for cmdsize %#x", b.Name(), len(l.Raw)), Val: nsects}
	}
	s.Sections = make([]*Section, 0, nsects)
	for range nsects {
		sec := &Section{seg: s, off: l.Off + uint64(b.Pos())}
		sec.Name = fixedString(b.Bytes(16))
		sec.Seg = fixedString(b.Bytes(16))
		if is64 {
			sec.Addr, sec.Size = b.U64(), b.U64()
		} else {
			sec.Addr, sec.Size = uint64(b.U32()), uint64(b.U32())
		}
		sec.Offset = b.U32()
		sec.Align = b.U32()
		sec.Reloff = b.U32()
		sec.Nreloc = b.U32()
		sec.Flags = b.U32()
		sec.Reserved1 = b.U32()
		sec.Reserved2 = b.U32()
		if is64 {
			sec.Reserved3 = b.U32()
		}
		s.Sections = append(s.Sections, sec)
	}
	if err := b.Err(); err != nil {
		return formatError(err)
	}
	f.Segments = append(f.Segments, s)
	f.Sections = append(f.Sections, s.Sections...)
	return nil
}

// Data returns the bytes of the thin file, which NewFile was given.
func (f *File) Data() []byte { return f.data }

// UUID returns the image's LC_UUID, which dSYM companions share with their
// executables.
func (f *File) UUID() ([16]byte, bool) { return f.uuid, f.hasUUID }

// Arch returns the architecture's name, ArchName(f.Cpu, f.SubCpu).
func (f *File) Arch() string { return ArchName(f.Cpu, f.SubCpu) }

// Segment returns the first segment called name, or nil.
func (f *File) Segment(name string) *Segment {
	for _, s := range f.Segments {
		if s.Name == name {
			return s
		}
	}
	return nil
}

// Section returns the first section called sectname whose own segment name
// is segname, or nil. An empty segname matches any segment.
func (f *File) Section(segname, sectname string) *Section {
	for _, s := range f.Sections {
		if s.Name == sectname && (segname == "" || s.Seg == segname) {
			return s
		}
	}
	return nil
}

// ImageBase returns the vmaddr of the __TEXT segment: the address the image
// is linked at, from which module-relative addresses are counted. It is 0
// when there is no __TEXT segment, as in object files.
func (f *File) ImageBase() uint64 {
	if s := f.Segment("__TEXT"); s != nil {
		return s.VMAddr
	}
	return 0
}

// Platform returns the platform of the first LC_BUILD_VERSION or
// LC_VERSION_MIN_* command, or PLATFORM_UNKNOWN.
func (f *File) Platform() Platform {
	if len(f.BuildVersions) == 0 {
		return PLATFORM_UNKNOWN
	}
	return f.BuildVersions[0].Platform
}

// HasSymbols reports whether the file has a symbol table with entries.
func (f *File) HasSymbols() bool {
	return f.Symtab != nil && f.Symtab.Nsyms > 0
}

// HasDWARF reports whether the file has a __debug_info section with data,
// plain or compressed (__zdebug_info).
func (f *File) HasDWARF() bool {
	s := f.dwarfSection("__debug_info")
	if s == nil {
		s = f.dwarfSection("__zdebug_info")
	}
	return s != nil && s.HasData()
}

// HasUnwindInfo reports whether the file has compact unwind information
// (__TEXT,__unwind_info) or DWARF CFI (__eh_frame) with data. dSYM
// companions list these sections without their contents.
func (f *File) HasUnwindInfo() bool {
	if s := f.Section("__TEXT", "__unwind_info"); s != nil && s.HasData() {
		return true
	}
	s := f.Section("", "__eh_frame")
	return s != nil && s.HasData()
}
