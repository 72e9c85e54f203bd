package elf

// Constants of the ELF format, spelled as the specifications spell them.
//
// Sources:
//
//   - System V Application Binary Interface, generic ABI (gABI), draft of
//     10 June 2013, chapters 4 (Object Files) and 5 (Program Loading):
//     https://www.sco.com/developers/gabi/latest/contents.html
//     ELFCOMPRESS_ZSTD (2) was added to the gABI in 2022, after this draft;
//     binutils, LLVM and elfutils implement it.
//   - Linux Standard Base Core Specification 5.0, "Object Format":
//     SHT_GNU_versym, SHT_GNU_verdef, SHT_GNU_verneed, PT_GNU_EH_FRAME,
//     PT_GNU_STACK, PT_GNU_RELRO and the symbol versioning structures.
//   - GNU extensions as defined by binutils' include/elf/common.h: ELFOSABI_GNU,
//     STT_GNU_IFUNC, STB_GNU_UNIQUE, SHF_GNU_RETAIN, the NT_GNU_* note types,
//     PT_GNU_PROPERTY, and the legacy ".zdebug" section compression ("ZLIB",
//     8-byte big-endian size, zlib stream; binutils bfd/compress.c).
//   - The GDB manual, "Debugging Information in Separate Files":
//     .gnu_debuglink and .gnu_debugaltlink.
//   - Processor supplements for the EM_*, SHT_ARM_EXIDX, PT_ARM_EXIDX and
//     SHT_MIPS_DWARF values.
//   - The Go linker (cmd/link/internal/ld/elf.go): the ".note.go.buildid"
//     note, name "Go", type 4.

import "strconv"

// Identification (e_ident) indexes and values.
const (
	EI_CLASS      = 4  // index of the file class
	EI_DATA       = 5  // index of the data encoding
	EI_VERSION    = 6  // index of the file version
	EI_OSABI      = 7  // index of the OS/ABI identification
	EI_ABIVERSION = 8  // index of the ABI version
	EI_NIDENT     = 16 // size of e_ident

	ELFMAG = "\x7fELF" // the magic number that starts every ELF file
)

// Special values of header fields.
const (
	// PN_XNUM in e_phnum means the program header count is in sh_info of
	// section header 0.
	PN_XNUM = 0xffff
)

// Version is the ELF format version (EI_VERSION, e_version).
type Version uint8

// Versions.
const (
	EV_NONE    Version = 0
	EV_CURRENT Version = 1
)

var versionStrings = []intName{
	{0, "EV_NONE"},
	{1, "EV_CURRENT"},
}

// String returns the spec name of the value, or its number if it has none.
func (v Version) String() string { return stringName(uint64(v), versionStrings) }

// Class is the file class (EI_CLASS): 32- or 64-bit.
type Class uint8

// Classes.
const (
	ELFCLASSNONE Class = 0
	ELFCLASS32   Class = 1
	ELFCLASS64   Class = 2
)

var classStrings = []intName{
	{0, "ELFCLASSNONE"},
	{1, "ELFCLASS32"},
	{2, "ELFCLASS64"},
}

// String returns the spec name of the value, or its number if it has none.
func (c Class) String() string { return stringName(uint64(c), classStrings) }

// Data is the data encoding (EI_DATA): the byte order.
type Data uint8

// Data encodings.
const (
	ELFDATANONE Data = 0
	ELFDATA2LSB Data = 1 // little endian
	ELFDATA2MSB Data = 2 // big endian
)

var dataStrings = []intName{
	{0, "ELFDATANONE"},
	{1, "ELFDATA2LSB"},
	{2, "ELFDATA2MSB"},
}

// String returns the spec name of the value, or its number if it has none.
func (d Data) String() string { return stringName(uint64(d), dataStrings) }

// OSABI is the OS or ABI extension the file uses (EI_OSABI).
type OSABI uint8

// OS/ABI identifications.
const (
	ELFOSABI_NONE       OSABI = 0 // UNIX System V
	ELFOSABI_HPUX       OSABI = 1
	ELFOSABI_NETBSD     OSABI = 2
	ELFOSABI_GNU        OSABI = 3 // GNU/Linux
	ELFOSABI_LINUX      OSABI = 3 // old name of ELFOSABI_GNU
	ELFOSABI_SOLARIS    OSABI = 6
	ELFOSABI_AIX        OSABI = 7
	ELFOSABI_IRIX       OSABI = 8
	ELFOSABI_FREEBSD    OSABI = 9
	ELFOSABI_TRU64      OSABI = 10
	ELFOSABI_MODESTO    OSABI = 11
	ELFOSABI_OPENBSD    OSABI = 12
	ELFOSABI_OPENVMS    OSABI = 13
	ELFOSABI_NSK        OSABI = 14
	ELFOSABI_AROS       OSABI = 15
	ELFOSABI_FENIXOS    OSABI = 16
	ELFOSABI_CLOUDABI   OSABI = 17
	ELFOSABI_ARM_AEABI  OSABI = 64
	ELFOSABI_ARM        OSABI = 97
	ELFOSABI_STANDALONE OSABI = 255
)

var osabiStrings = []intName{
	{0, "ELFOSABI_NONE"},
	{1, "ELFOSABI_HPUX"},
	{2, "ELFOSABI_NETBSD"},
	{3, "ELFOSABI_GNU"},
	{6, "ELFOSABI_SOLARIS"},
	{7, "ELFOSABI_AIX"},
	{8, "ELFOSABI_IRIX"},
	{9, "ELFOSABI_FREEBSD"},
	{10, "ELFOSABI_TRU64"},
	{11, "ELFOSABI_MODESTO"},
	{12, "ELFOSABI_OPENBSD"},
	{13, "ELFOSABI_OPENVMS"},
	{14, "ELFOSABI_NSK"},
	{15, "ELFOSABI_AROS"},
	{16, "ELFOSABI_FENIXOS"},
	{17, "ELFOSABI_CLOUDABI"},
	{64, "ELFOSABI_ARM_AEABI"},
	{97, "ELFOSABI_ARM"},
	{255, "ELFOSABI_STANDALONE"},
}

// String returns the spec name of the value, or its number if it has none.
func (o OSABI) String() string { return stringName(uint64(o), osabiStrings) }

// Type is the object file type (e_type).
type Type uint16

// Object file types.
const (
	ET_NONE   Type = 0
	ET_REL    Type = 1 // relocatable object
	ET_EXEC   Type = 2 // executable at a fixed address
	ET_DYN    Type = 3 // shared object or position-independent executable
	ET_CORE   Type = 4 // core dump
	ET_LOOS   Type = 0xfe00
	ET_HIOS   Type = 0xfeff
	ET_LOPROC Type = 0xff00
	ET_HIPROC Type = 0xffff
)

var typeStrings = []intName{
	{0, "ET_NONE"},
	{1, "ET_REL"},
	{2, "ET_EXEC"},
	{3, "ET_DYN"},
	{4, "ET_CORE"},
	{0xfe00, "ET_LOOS"},
	{0xfeff, "ET_HIOS"},
	{0xff00, "ET_LOPROC"},
	{0xffff, "ET_HIPROC"},
}

// String returns the spec name of the value, or its number if it has none.
func (t Type) String() string { return stringName(uint64(t), typeStrings) }

// Machine is the target architecture (e_machine).
type Machine uint16

// Machines. The list is the subset a symbolicator meets; other values are
// kept as numbers.
const (
	EM_NONE        Machine = 0
	EM_SPARC       Machine = 2
	EM_386         Machine = 3
	EM_68K         Machine = 4
	EM_MIPS        Machine = 8
	EM_MIPS_RS3_LE Machine = 10
	EM_PARISC      Machine = 15
	EM_SPARC32PLUS Machine = 18
	EM_PPC         Machine = 20
	EM_PPC64       Machine = 21
	EM_S390        Machine = 22
	EM_ARM         Machine = 40
	EM_SH          Machine = 42
	EM_SPARCV9     Machine = 43
	EM_IA_64       Machine = 50
	EM_X86_64      Machine = 62
	EM_AARCH64     Machine = 183
	EM_RISCV       Machine = 243
	EM_BPF         Machine = 247
	EM_LOONGARCH   Machine = 258
)

var machineStrings = []intName{
	{0, "EM_NONE"},
	{2, "EM_SPARC"},
	{3, "EM_386"},
	{4, "EM_68K"},
	{8, "EM_MIPS"},
	{10, "EM_MIPS_RS3_LE"},
	{15, "EM_PARISC"},
	{18, "EM_SPARC32PLUS"},
	{20, "EM_PPC"},
	{21, "EM_PPC64"},
	{22, "EM_S390"},
	{40, "EM_ARM"},
	{42, "EM_SH"},
	{43, "EM_SPARCV9"},
	{50, "EM_IA_64"},
	{62, "EM_X86_64"},
	{183, "EM_AARCH64"},
	{243, "EM_RISCV"},
	{247, "EM_BPF"},
	{258, "EM_LOONGARCH"},
}

// String returns the spec name of the value, or its number if it has none.
func (m Machine) String() string { return stringName(uint64(m), machineStrings) }

// ProgType is a program header type (p_type).
type ProgType uint32

// Program header types.
const (
	PT_NULL         ProgType = 0
	PT_LOAD         ProgType = 1
	PT_DYNAMIC      ProgType = 2
	PT_INTERP       ProgType = 3
	PT_NOTE         ProgType = 4
	PT_SHLIB        ProgType = 5
	PT_PHDR         ProgType = 6
	PT_TLS          ProgType = 7
	PT_LOOS         ProgType = 0x60000000
	PT_GNU_EH_FRAME ProgType = 0x6474e550
	PT_GNU_STACK    ProgType = 0x6474e551
	PT_GNU_RELRO    ProgType = 0x6474e552
	PT_GNU_PROPERTY ProgType = 0x6474e553
	PT_HIOS         ProgType = 0x6fffffff
	PT_LOPROC       ProgType = 0x70000000
	PT_ARM_EXIDX    ProgType = 0x70000001
	PT_HIPROC       ProgType = 0x7fffffff
)

var progTypeStrings = []intName{
	{0, "PT_NULL"},
	{1, "PT_LOAD"},
	{2, "PT_DYNAMIC"},
	{3, "PT_INTERP"},
	{4, "PT_NOTE"},
	{5, "PT_SHLIB"},
	{6, "PT_PHDR"},
	{7, "PT_TLS"},
	{0x60000000, "PT_LOOS"},
	{0x6474e550, "PT_GNU_EH_FRAME"},
	{0x6474e551, "PT_GNU_STACK"},
	{0x6474e552, "PT_GNU_RELRO"},
	{0x6474e553, "PT_GNU_PROPERTY"},
	{0x6fffffff, "PT_HIOS"},
	{0x70000000, "PT_LOPROC"},
	{0x70000001, "PT_ARM_EXIDX"},
	{0x7fffffff, "PT_HIPROC"},
}

// String returns the spec name of the value, or its number if it has none.
func (t ProgType) String() string { return stringName(uint64(t), progTypeStrings) }

// ProgFlag is a set of segment permission flags (p_flags).
type ProgFlag uint32

// Segment flags.
const (
	PF_X        ProgFlag = 0x1
	PF_W        ProgFlag = 0x2
	PF_R        ProgFlag = 0x4
	PF_MASKOS   ProgFlag = 0x0ff00000
	PF_MASKPROC ProgFlag = 0xf0000000
)

var progFlagStrings = []intName{
	{0x1, "PF_X"},
	{0x2, "PF_W"},
	{0x4, "PF_R"},
}

// String returns the spec names of the flags joined by "+".
func (f ProgFlag) String() string { return flagName(uint64(f), progFlagStrings) }

// SectionType is a section header type (sh_type).
type SectionType uint32

// Section types.
const (
	SHT_NULL           SectionType = 0
	SHT_PROGBITS       SectionType = 1
	SHT_SYMTAB         SectionType = 2
	SHT_STRTAB         SectionType = 3
	SHT_RELA           SectionType = 4
	SHT_HASH           SectionType = 5
	SHT_DYNAMIC        SectionType = 6
	SHT_NOTE           SectionType = 7
	SHT_NOBITS         SectionType = 8
	SHT_REL            SectionType = 9
	SHT_SHLIB          SectionType = 10
	SHT_DYNSYM         SectionType = 11
	SHT_INIT_ARRAY     SectionType = 14
	SHT_FINI_ARRAY     SectionType = 15
	SHT_PREINIT_ARRAY  SectionType = 16
	SHT_GROUP          SectionType = 17
	SHT_SYMTAB_SHNDX   SectionType = 18
	SHT_RELR           SectionType = 19
	SHT_LOOS           SectionType = 0x60000000
	SHT_GNU_ATTRIBUTES SectionType = 0x6ffffff5
	SHT_GNU_HASH       SectionType = 0x6ffffff6
	SHT_GNU_LIBLIST    SectionType = 0x6ffffff7
	SHT_GNU_verdef     SectionType = 0x6ffffffd
	SHT_GNU_verneed    SectionType = 0x6ffffffe
	SHT_GNU_versym     SectionType = 0x6fffffff
	SHT_HIOS           SectionType = 0x6fffffff
	SHT_LOPROC         SectionType = 0x70000000
	SHT_ARM_EXIDX      SectionType = 0x70000001
	SHT_MIPS_DWARF     SectionType = 0x7000001e
	SHT_HIPROC         SectionType = 0x7fffffff
	SHT_LOUSER         SectionType = 0x80000000
	SHT_HIUSER         SectionType = 0xffffffff
)

var sectionTypeStrings = []intName{
	{0, "SHT_NULL"},
	{1, "SHT_PROGBITS"},
	{2, "SHT_SYMTAB"},
	{3, "SHT_STRTAB"},
	{4, "SHT_RELA"},
	{5, "SHT_HASH"},
	{6, "SHT_DYNAMIC"},
	{7, "SHT_NOTE"},
	{8, "SHT_NOBITS"},
	{9, "SHT_REL"},
	{10, "SHT_SHLIB"},
	{11, "SHT_DYNSYM"},
	{14, "SHT_INIT_ARRAY"},
	{15, "SHT_FINI_ARRAY"},
	{16, "SHT_PREINIT_ARRAY"},
	{17, "SHT_GROUP"},
	{18, "SHT_SYMTAB_SHNDX"},
	{19, "SHT_RELR"},
	{0x60000000, "SHT_LOOS"},
	{0x6ffffff5, "SHT_GNU_ATTRIBUTES"},
	{0x6ffffff6, "SHT_GNU_HASH"},
	{0x6ffffff7, "SHT_GNU_LIBLIST"},
	{0x6ffffffd, "SHT_GNU_verdef"},
	{0x6ffffffe, "SHT_GNU_verneed"},
	{0x6fffffff, "SHT_GNU_versym"},
	{0x70000000, "SHT_LOPROC"},
	{0x70000001, "SHT_ARM_EXIDX"},
	{0x7000001e, "SHT_MIPS_DWARF"},
	{0x7fffffff, "SHT_HIPROC"},
	{0x80000000, "SHT_LOUSER"},
	{0xffffffff, "SHT_HIUSER"},
}

// String returns the spec name of the value, or its number if it has none.
func (t SectionType) String() string { return stringName(uint64(t), sectionTypeStrings) }

// SectionFlag is a set of section attribute flags (sh_flags).
type SectionFlag uint64

// Section flags.
const (
	SHF_WRITE            SectionFlag = 0x1
	SHF_ALLOC            SectionFlag = 0x2
	SHF_EXECINSTR        SectionFlag = 0x4
	SHF_MERGE            SectionFlag = 0x10
	SHF_STRINGS          SectionFlag = 0x20
	SHF_INFO_LINK        SectionFlag = 0x40
	SHF_LINK_ORDER       SectionFlag = 0x80
	SHF_OS_NONCONFORMING SectionFlag = 0x100
	SHF_GROUP            SectionFlag = 0x200
	SHF_TLS              SectionFlag = 0x400
	SHF_COMPRESSED       SectionFlag = 0x800
	SHF_GNU_RETAIN       SectionFlag = 0x200000
	SHF_MASKOS           SectionFlag = 0x0ff00000
	SHF_MASKPROC         SectionFlag = 0xf0000000
	SHF_EXCLUDE          SectionFlag = 0x80000000 // GNU: processor-range flag used on all targets
)

var sectionFlagStrings = []intName{
	{0x1, "SHF_WRITE"},
	{0x2, "SHF_ALLOC"},
	{0x4, "SHF_EXECINSTR"},
	{0x10, "SHF_MERGE"},
	{0x20, "SHF_STRINGS"},
	{0x40, "SHF_INFO_LINK"},
	{0x80, "SHF_LINK_ORDER"},
	{0x100, "SHF_OS_NONCONFORMING"},
	{0x200, "SHF_GROUP"},
	{0x400, "SHF_TLS"},
	{0x800, "SHF_COMPRESSED"},
	{0x200000, "SHF_GNU_RETAIN"},
	{0x80000000, "SHF_EXCLUDE"},
}

// String returns the spec names of the flags joined by "+".
func (f SectionFlag) String() string { return flagName(uint64(f), sectionFlagStrings) }

// SectionIndex is a section header table index as used in st_shndx and
// e_shstrndx, including the reserved indexes.
type SectionIndex uint32

// Special section indexes.
const (
	SHN_UNDEF     SectionIndex = 0
	SHN_LORESERVE SectionIndex = 0xff00
	SHN_LOPROC    SectionIndex = 0xff00
	SHN_HIPROC    SectionIndex = 0xff1f
	SHN_LOOS      SectionIndex = 0xff20
	SHN_HIOS      SectionIndex = 0xff3f
	SHN_ABS       SectionIndex = 0xfff1
	SHN_COMMON    SectionIndex = 0xfff2
	SHN_XINDEX    SectionIndex = 0xffff
	SHN_HIRESERVE SectionIndex = 0xffff
)

var sectionIndexStrings = []intName{
	{0, "SHN_UNDEF"},
	{0xff00, "SHN_LOPROC"},
	{0xff20, "SHN_LOOS"},
	{0xfff1, "SHN_ABS"},
	{0xfff2, "SHN_COMMON"},
	{0xffff, "SHN_XINDEX"},
}

// String returns the spec name of the value, or its number if it has none.
func (i SectionIndex) String() string { return stringName(uint64(i), sectionIndexStrings) }

// CompressionType is the compression algorithm of an SHF_COMPRESSED section
// (ch_type).
type CompressionType uint32

// Compression types.
const (
	ELFCOMPRESS_ZLIB   CompressionType = 1
	ELFCOMPRESS_ZSTD   CompressionType = 2
	ELFCOMPRESS_LOOS   CompressionType = 0x60000000
	ELFCOMPRESS_HIOS   CompressionType = 0x6fffffff
	ELFCOMPRESS_LOPROC CompressionType = 0x70000000
	ELFCOMPRESS_HIPROC CompressionType = 0x7fffffff
)

var compressionStrings = []intName{
	{1, "ELFCOMPRESS_ZLIB"},
	{2, "ELFCOMPRESS_ZSTD"},
	{0x60000000, "ELFCOMPRESS_LOOS"},
	{0x6fffffff, "ELFCOMPRESS_HIOS"},
	{0x70000000, "ELFCOMPRESS_LOPROC"},
	{0x7fffffff, "ELFCOMPRESS_HIPROC"},
}

// String returns the spec name of the value, or its number if it has none.
func (t CompressionType) String() string { return stringName(uint64(t), compressionStrings) }

// SymType is a symbol type, the low four bits of st_info.
type SymType uint8

// Symbol types.
const (
	STT_NOTYPE    SymType = 0
	STT_OBJECT    SymType = 1
	STT_FUNC      SymType = 2
	STT_SECTION   SymType = 3
	STT_FILE      SymType = 4
	STT_COMMON    SymType = 5
	STT_TLS       SymType = 6
	STT_LOOS      SymType = 10
	STT_GNU_IFUNC SymType = 10 // GNU: indirect function, resolved at load time
	STT_HIOS      SymType = 12
	STT_LOPROC    SymType = 13
	STT_HIPROC    SymType = 15
)

var symTypeStrings = []intName{
	{0, "STT_NOTYPE"},
	{1, "STT_OBJECT"},
	{2, "STT_FUNC"},
	{3, "STT_SECTION"},
	{4, "STT_FILE"},
	{5, "STT_COMMON"},
	{6, "STT_TLS"},
	{10, "STT_GNU_IFUNC"},
	{12, "STT_HIOS"},
	{13, "STT_LOPROC"},
	{15, "STT_HIPROC"},
}

// String returns the spec name of the value, or its number if it has none.
func (t SymType) String() string { return stringName(uint64(t), symTypeStrings) }

// SymBind is a symbol binding, the high four bits of st_info.
type SymBind uint8

// Symbol bindings.
const (
	STB_LOCAL      SymBind = 0
	STB_GLOBAL     SymBind = 1
	STB_WEAK       SymBind = 2
	STB_LOOS       SymBind = 10
	STB_GNU_UNIQUE SymBind = 10 // GNU: unique global, one definition per process
	STB_HIOS       SymBind = 12
	STB_LOPROC     SymBind = 13
	STB_HIPROC     SymBind = 15
)

var symBindStrings = []intName{
	{0, "STB_LOCAL"},
	{1, "STB_GLOBAL"},
	{2, "STB_WEAK"},
	{10, "STB_GNU_UNIQUE"},
	{12, "STB_HIOS"},
	{13, "STB_LOPROC"},
	{15, "STB_HIPROC"},
}

// String returns the spec name of the value, or its number if it has none.
func (b SymBind) String() string { return stringName(uint64(b), symBindStrings) }

// SymVis is a symbol visibility, the low two bits of st_other.
type SymVis uint8

// Symbol visibilities.
const (
	STV_DEFAULT   SymVis = 0
	STV_INTERNAL  SymVis = 1
	STV_HIDDEN    SymVis = 2
	STV_PROTECTED SymVis = 3
)

var symVisStrings = []intName{
	{0, "STV_DEFAULT"},
	{1, "STV_INTERNAL"},
	{2, "STV_HIDDEN"},
	{3, "STV_PROTECTED"},
}

// String returns the spec name of the value, or its number if it has none.
func (v SymVis) String() string { return stringName(uint64(v), symVisStrings) }

// NType is the type of a note whose name is "GNU" (n_type). Note types are
// only meaningful together with the note's name.
type NType uint32

// GNU note types.
const (
	NT_GNU_ABI_TAG         NType = 1
	NT_GNU_HWCAP           NType = 2
	NT_GNU_BUILD_ID        NType = 3
	NT_GNU_GOLD_VERSION    NType = 4
	NT_GNU_PROPERTY_TYPE_0 NType = 5
)

var ntypeStrings = []intName{
	{1, "NT_GNU_ABI_TAG"},
	{2, "NT_GNU_HWCAP"},
	{3, "NT_GNU_BUILD_ID"},
	{4, "NT_GNU_GOLD_VERSION"},
	{5, "NT_GNU_PROPERTY_TYPE_0"},
}

// String returns the spec name of the value, or its number if it has none.
func (t NType) String() string { return stringName(uint64(t), ntypeStrings) }

// Note names and the Go linker's note type.
const (
	noteNameGNU       = "GNU"
	noteNameGo        = "Go"
	noteTypeGoBuildID = 4 // cmd/link: ELF_NOTE_GOBUILDID_TAG
)

// Symbol versioning values (LSB Core, "Symbol Versioning").
const (
	VER_NDX_LOCAL  = 0      // versym: symbol is local
	VER_NDX_GLOBAL = 1      // versym: symbol is global and unversioned
	VERSYM_HIDDEN  = 0x8000 // versym: symbol is hidden (foo@VER, not foo@@VER)
	VER_FLG_BASE   = 0x1    // verdef: the version of the file itself
)

// Structure sizes in bytes, by class.
const (
	ehdr32Size = 52
	ehdr64Size = 64
	phdr32Size = 32
	phdr64Size = 56
	shdr32Size = 40
	shdr64Size = 64
	sym32Size  = 16
	sym64Size  = 24
	chdr32Size = 12
	chdr64Size = 24
)

// intName pairs a constant's value with its spec spelling.
type intName struct {
	i uint64
	s string
}

// stringName returns the spec name of i, or its number when it has none.
func stringName(i uint64, names []intName) string {
	for _, n := range names {
		if n.i == i {
			return n.s
		}
	}
	return strconv.FormatUint(i, 10)
}

// flagName returns the flags in i joined by "+", with any unnamed bits last
// in hexadecimal.
func flagName(i uint64, names []intName) string {
	s := ""
	for _, n := range names {
		if i&n.i == n.i {
			if s != "" {
				s += "+"
			}
			s += n.s
			i &^= n.i
		}
	}
	if i != 0 || s == "" {
		if s != "" {
			s += "+"
		}
		s += "0x" + strconv.FormatUint(i, 16)
	}
	return s
}
