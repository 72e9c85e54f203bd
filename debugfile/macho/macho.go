package macho

// Constants and record layouts of the Mach-O format.
//
// Sources:
//   - Apple, <mach-o/loader.h> (cctools / xnu EXTERNAL_HEADERS/mach-o/loader.h):
//     mach_header, mach_header_64, load_command, segment_command(_64),
//     section(_64), symtab_command, uuid_command, dylib_command,
//     rpath_command, version_min_command, build_version_command, and the
//     MH_*, LC_*, S_*, PLATFORM_* constants.
//   - Apple, <mach-o/fat.h>: fat_header, fat_arch, fat_arch_64.
//   - Apple, <mach-o/nlist.h> and <mach-o/stab.h>: nlist, nlist_64, N_*.
//   - Apple, <mach/machine.h>: CPU_TYPE_*, CPU_SUBTYPE_*.
//
// All header fields are 32-bit words in the file's byte order except the
// fat headers, which are always big-endian.

import "fmt"

// Magic numbers of thin files, as read in the file's own byte order, and of
// fat files, as read big-endian (mach-o/loader.h, mach-o/fat.h).
const (
	MH_MAGIC     = 0xfeedface // 32-bit, native byte order
	MH_CIGAM     = 0xcefaedfe // 32-bit, swapped byte order
	MH_MAGIC_64  = 0xfeedfacf // 64-bit, native byte order
	MH_CIGAM_64  = 0xcffaedfe // 64-bit, swapped byte order
	FAT_MAGIC    = 0xcafebabe // fat_header followed by fat_arch
	FAT_CIGAM    = 0xbebafeca
	FAT_MAGIC_64 = 0xcafebabf // fat_header followed by fat_arch_64
	FAT_CIGAM_64 = 0xbfbafeca
)

// Sizes of the fixed records (mach-o/loader.h, mach-o/fat.h, mach-o/nlist.h).
const (
	sizeofMachHeader   = 28 // mach_header
	sizeofMachHeader64 = 32 // mach_header_64: adds reserved
	sizeofLoadCommand  = 8  // load_command: cmd, cmdsize
	sizeofSegment      = 56 // segment_command
	sizeofSegment64    = 72 // segment_command_64
	sizeofSection      = 68 // section
	sizeofSection64    = 80 // section_64
	sizeofSymtab       = 24 // symtab_command
	sizeofUUID         = 24 // uuid_command
	sizeofDylib        = 24 // dylib_command
	sizeofRpath        = 12 // rpath_command
	sizeofVersionMin   = 16 // version_min_command
	sizeofBuildVersion = 24 // build_version_command, then ntools build_tool_version
	sizeofBuildTool    = 8  // build_tool_version
	sizeofFatHeader    = 8  // fat_header
	sizeofFatArch      = 20 // fat_arch
	sizeofFatArch64    = 32 // fat_arch_64: offset and size widen, reserved added
	sizeofNlist        = 12 // nlist
	sizeofNlist64      = 16 // nlist_64
)

// CPU types (mach/machine.h). Cpu fields hold these values.
const (
	CPU_ARCH_MASK     = 0xff000000 // mask for architecture bits
	CPU_ARCH_ABI64    = 0x01000000 // 64-bit ABI
	CPU_ARCH_ABI64_32 = 0x02000000 // ILP32 ABI on 64-bit hardware

	CPU_TYPE_ANY       = 0xffffffff
	CPU_TYPE_VAX       = 1
	CPU_TYPE_MC680x0   = 6
	CPU_TYPE_X86       = 7
	CPU_TYPE_I386      = CPU_TYPE_X86
	CPU_TYPE_X86_64    = CPU_TYPE_X86 | CPU_ARCH_ABI64
	CPU_TYPE_MC98000   = 10
	CPU_TYPE_HPPA      = 11
	CPU_TYPE_ARM       = 12
	CPU_TYPE_ARM64     = CPU_TYPE_ARM | CPU_ARCH_ABI64
	CPU_TYPE_ARM64_32  = CPU_TYPE_ARM | CPU_ARCH_ABI64_32
	CPU_TYPE_MC88000   = 13
	CPU_TYPE_SPARC     = 14
	CPU_TYPE_I860      = 15
	CPU_TYPE_POWERPC   = 18
	CPU_TYPE_POWERPC64 = CPU_TYPE_POWERPC | CPU_ARCH_ABI64
)

// CPU subtypes (mach/machine.h). SubCpu fields hold these values, possibly
// with capability bits in CPU_SUBTYPE_MASK.
const (
	CPU_SUBTYPE_MASK        = 0xff000000 // capability bits
	CPU_SUBTYPE_LIB64       = 0x80000000 // 64-bit libraries (x86_64 executables)
	CPU_SUBTYPE_PTRAUTH_ABI = 0x80000000 // arm64e: versioned pointer authentication ABI

	CPU_SUBTYPE_I386_ALL   = 3
	CPU_SUBTYPE_X86_ALL    = 3
	CPU_SUBTYPE_X86_64_ALL = 3
	CPU_SUBTYPE_X86_ARCH1  = 4
	CPU_SUBTYPE_X86_64_H   = 8 // Haswell feature subset

	CPU_SUBTYPE_ARM_ALL    = 0
	CPU_SUBTYPE_ARM_V4T    = 5
	CPU_SUBTYPE_ARM_V6     = 6
	CPU_SUBTYPE_ARM_V5TEJ  = 7
	CPU_SUBTYPE_ARM_XSCALE = 8
	CPU_SUBTYPE_ARM_V7     = 9
	CPU_SUBTYPE_ARM_V7F    = 10 // Cortex A9
	CPU_SUBTYPE_ARM_V7S    = 11 // Swift
	CPU_SUBTYPE_ARM_V7K    = 12
	CPU_SUBTYPE_ARM_V8     = 13
	CPU_SUBTYPE_ARM_V6M    = 14
	CPU_SUBTYPE_ARM_V7M    = 15
	CPU_SUBTYPE_ARM_V7EM   = 16
	CPU_SUBTYPE_ARM_V8M    = 17

	CPU_SUBTYPE_ARM64_ALL = 0
	CPU_SUBTYPE_ARM64_V8  = 1
	CPU_SUBTYPE_ARM64E    = 2

	CPU_SUBTYPE_ARM64_32_ALL = 0
	CPU_SUBTYPE_ARM64_32_V8  = 1

	CPU_SUBTYPE_POWERPC_ALL   = 0
	CPU_SUBTYPE_POWERPC_601   = 1
	CPU_SUBTYPE_POWERPC_602   = 2
	CPU_SUBTYPE_POWERPC_603   = 3
	CPU_SUBTYPE_POWERPC_603e  = 4
	CPU_SUBTYPE_POWERPC_603ev = 5
	CPU_SUBTYPE_POWERPC_604   = 6
	CPU_SUBTYPE_POWERPC_604e  = 7
	CPU_SUBTYPE_POWERPC_620   = 8
	CPU_SUBTYPE_POWERPC_750   = 9
	CPU_SUBTYPE_POWERPC_7400  = 10
	CPU_SUBTYPE_POWERPC_7450  = 11
	CPU_SUBTYPE_POWERPC_970   = 100
)

// A Type is a Mach-O file type, mach_header.filetype (mach-o/loader.h).
type Type uint32

// File types.
const (
	MH_OBJECT      Type = 0x1 // relocatable object file
	MH_EXECUTE     Type = 0x2 // demand paged executable file
	MH_FVMLIB      Type = 0x3 // fixed VM shared library file
	MH_CORE        Type = 0x4 // core file
	MH_PRELOAD     Type = 0x5 // preloaded executable file
	MH_DYLIB       Type = 0x6 // dynamically bound shared library
	MH_DYLINKER    Type = 0x7 // dynamic link editor
	MH_BUNDLE      Type = 0x8 // dynamically bound bundle file
	MH_DYLIB_STUB  Type = 0x9 // shared library stub for static linking only
	MH_DSYM        Type = 0xa // companion file with only debug sections
	MH_KEXT_BUNDLE Type = 0xb // x86_64 kexts
	MH_FILESET     Type = 0xc // a file composed of other Mach-Os
	MH_GPU_EXECUTE Type = 0xd // GPU program
	MH_GPU_DYLIB   Type = 0xe // GPU support functions
)

var typeNames = map[Type]string{
	MH_OBJECT:      "MH_OBJECT",
	MH_EXECUTE:     "MH_EXECUTE",
	MH_FVMLIB:      "MH_FVMLIB",
	MH_CORE:        "MH_CORE",
	MH_PRELOAD:     "MH_PRELOAD",
	MH_DYLIB:       "MH_DYLIB",
	MH_DYLINKER:    "MH_DYLINKER",
	MH_BUNDLE:      "MH_BUNDLE",
	MH_DYLIB_STUB:  "MH_DYLIB_STUB",
	MH_DSYM:        "MH_DSYM",
	MH_KEXT_BUNDLE: "MH_KEXT_BUNDLE",
	MH_FILESET:     "MH_FILESET",
	MH_GPU_EXECUTE: "MH_GPU_EXECUTE",
	MH_GPU_DYLIB:   "MH_GPU_DYLIB",
}

// String returns the spec name, such as "MH_DSYM".
func (t Type) String() string { return name(typeNames, t) }

// Header flags, mach_header.flags (mach-o/loader.h).
const (
	MH_NOUNDEFS                      = 0x1
	MH_INCRLINK                      = 0x2
	MH_DYLDLINK                      = 0x4
	MH_BINDATLOAD                    = 0x8
	MH_PREBOUND                      = 0x10
	MH_SPLIT_SEGS                    = 0x20
	MH_LAZY_INIT                     = 0x40
	MH_TWOLEVEL                      = 0x80
	MH_FORCE_FLAT                    = 0x100
	MH_NOMULTIDEFS                   = 0x200
	MH_NOFIXPREBINDING               = 0x400
	MH_PREBINDABLE                   = 0x800
	MH_ALLMODSBOUND                  = 0x1000
	MH_SUBSECTIONS_VIA_SYMBOLS       = 0x2000
	MH_CANONICAL                     = 0x4000
	MH_WEAK_DEFINES                  = 0x8000
	MH_BINDS_TO_WEAK                 = 0x10000
	MH_ALLOW_STACK_EXECUTION         = 0x20000
	MH_ROOT_SAFE                     = 0x40000
	MH_SETUID_SAFE                   = 0x80000
	MH_NO_REEXPORTED_DYLIBS          = 0x100000
	MH_PIE                           = 0x200000
	MH_DEAD_STRIPPABLE_DYLIB         = 0x400000
	MH_HAS_TLV_DESCRIPTORS           = 0x800000
	MH_NO_HEAP_EXECUTION             = 0x1000000
	MH_APP_EXTENSION_SAFE            = 0x2000000
	MH_NLIST_OUTOFSYNC_WITH_DYLDINFO = 0x4000000
	MH_SIM_SUPPORT                   = 0x8000000
	MH_DYLIB_IN_CACHE                = 0x80000000
)

// A LoadCmd is a load command type, load_command.cmd (mach-o/loader.h).
type LoadCmd uint32

// LC_REQ_DYLD is set in the commands dyld must understand to load the image.
const LC_REQ_DYLD = 0x80000000

// Load command types.
const (
	LC_SEGMENT                  LoadCmd = 0x1
	LC_SYMTAB                   LoadCmd = 0x2
	LC_SYMSEG                   LoadCmd = 0x3
	LC_THREAD                   LoadCmd = 0x4
	LC_UNIXTHREAD               LoadCmd = 0x5
	LC_LOADFVMLIB               LoadCmd = 0x6
	LC_IDFVMLIB                 LoadCmd = 0x7
	LC_IDENT                    LoadCmd = 0x8
	LC_FVMFILE                  LoadCmd = 0x9
	LC_PREPAGE                  LoadCmd = 0xa
	LC_DYSYMTAB                 LoadCmd = 0xb
	LC_LOAD_DYLIB               LoadCmd = 0xc
	LC_ID_DYLIB                 LoadCmd = 0xd
	LC_LOAD_DYLINKER            LoadCmd = 0xe
	LC_ID_DYLINKER              LoadCmd = 0xf
	LC_PREBOUND_DYLIB           LoadCmd = 0x10
	LC_ROUTINES                 LoadCmd = 0x11
	LC_SUB_FRAMEWORK            LoadCmd = 0x12
	LC_SUB_UMBRELLA             LoadCmd = 0x13
	LC_SUB_CLIENT               LoadCmd = 0x14
	LC_SUB_LIBRARY              LoadCmd = 0x15
	LC_TWOLEVEL_HINTS           LoadCmd = 0x16
	LC_PREBIND_CKSUM            LoadCmd = 0x17
	LC_LOAD_WEAK_DYLIB          LoadCmd = 0x18 | LC_REQ_DYLD
	LC_SEGMENT_64               LoadCmd = 0x19
	LC_ROUTINES_64              LoadCmd = 0x1a
	LC_UUID                     LoadCmd = 0x1b
	LC_RPATH                    LoadCmd = 0x1c | LC_REQ_DYLD
	LC_CODE_SIGNATURE           LoadCmd = 0x1d
	LC_SEGMENT_SPLIT_INFO       LoadCmd = 0x1e
	LC_REEXPORT_DYLIB           LoadCmd = 0x1f | LC_REQ_DYLD
	LC_LAZY_LOAD_DYLIB          LoadCmd = 0x20
	LC_ENCRYPTION_INFO          LoadCmd = 0x21
	LC_DYLD_INFO                LoadCmd = 0x22
	LC_DYLD_INFO_ONLY           LoadCmd = 0x22 | LC_REQ_DYLD
	LC_LOAD_UPWARD_DYLIB        LoadCmd = 0x23 | LC_REQ_DYLD
	LC_VERSION_MIN_MACOSX       LoadCmd = 0x24
	LC_VERSION_MIN_IPHONEOS     LoadCmd = 0x25
	LC_FUNCTION_STARTS          LoadCmd = 0x26
	LC_DYLD_ENVIRONMENT         LoadCmd = 0x27
	LC_MAIN                     LoadCmd = 0x28 | LC_REQ_DYLD
	LC_DATA_IN_CODE             LoadCmd = 0x29
	LC_SOURCE_VERSION           LoadCmd = 0x2a
	LC_DYLIB_CODE_SIGN_DRS      LoadCmd = 0x2b
	LC_ENCRYPTION_INFO_64       LoadCmd = 0x2c
	LC_LINKER_OPTION            LoadCmd = 0x2d
	LC_LINKER_OPTIMIZATION_HINT LoadCmd = 0x2e
	LC_VERSION_MIN_TVOS         LoadCmd = 0x2f
	LC_VERSION_MIN_WATCHOS      LoadCmd = 0x30
	LC_NOTE                     LoadCmd = 0x31
	LC_BUILD_VERSION            LoadCmd = 0x32
	LC_DYLD_EXPORTS_TRIE        LoadCmd = 0x33 | LC_REQ_DYLD
	LC_DYLD_CHAINED_FIXUPS      LoadCmd = 0x34 | LC_REQ_DYLD
	LC_FILESET_ENTRY            LoadCmd = 0x35 | LC_REQ_DYLD
	LC_ATOM_INFO                LoadCmd = 0x36
)

var loadCmdNames = map[LoadCmd]string{
	LC_SEGMENT:                  "LC_SEGMENT",
	LC_SYMTAB:                   "LC_SYMTAB",
	LC_SYMSEG:                   "LC_SYMSEG",
	LC_THREAD:                   "LC_THREAD",
	LC_UNIXTHREAD:               "LC_UNIXTHREAD",
	LC_LOADFVMLIB:               "LC_LOADFVMLIB",
	LC_IDFVMLIB:                 "LC_IDFVMLIB",
	LC_IDENT:                    "LC_IDENT",
	LC_FVMFILE:                  "LC_FVMFILE",
	LC_PREPAGE:                  "LC_PREPAGE",
	LC_DYSYMTAB:                 "LC_DYSYMTAB",
	LC_LOAD_DYLIB:               "LC_LOAD_DYLIB",
	LC_ID_DYLIB:                 "LC_ID_DYLIB",
	LC_LOAD_DYLINKER:            "LC_LOAD_DYLINKER",
	LC_ID_DYLINKER:              "LC_ID_DYLINKER",
	LC_PREBOUND_DYLIB:           "LC_PREBOUND_DYLIB",
	LC_ROUTINES:                 "LC_ROUTINES",
	LC_SUB_FRAMEWORK:            "LC_SUB_FRAMEWORK",
	LC_SUB_UMBRELLA:             "LC_SUB_UMBRELLA",
	LC_SUB_CLIENT:               "LC_SUB_CLIENT",
	LC_SUB_LIBRARY:              "LC_SUB_LIBRARY",
	LC_TWOLEVEL_HINTS:           "LC_TWOLEVEL_HINTS",
	LC_PREBIND_CKSUM:            "LC_PREBIND_CKSUM",
	LC_LOAD_WEAK_DYLIB:          "LC_LOAD_WEAK_DYLIB",
	LC_SEGMENT_64:               "LC_SEGMENT_64",
	LC_ROUTINES_64:              "LC_ROUTINES_64",
	LC_UUID:                     "LC_UUID",
	LC_RPATH:                    "LC_RPATH",
	LC_CODE_SIGNATURE:           "LC_CODE_SIGNATURE",
	LC_SEGMENT_SPLIT_INFO:       "LC_SEGMENT_SPLIT_INFO",
	LC_REEXPORT_DYLIB:           "LC_REEXPORT_DYLIB",
	LC_LAZY_LOAD_DYLIB:          "LC_LAZY_LOAD_DYLIB",
	LC_ENCRYPTION_INFO:          "LC_ENCRYPTION_INFO",
	LC_DYLD_INFO:                "LC_DYLD_INFO",
	LC_DYLD_INFO_ONLY:           "LC_DYLD_INFO_ONLY",
	LC_LOAD_UPWARD_DYLIB:        "LC_LOAD_UPWARD_DYLIB",
	LC_VERSION_MIN_MACOSX:       "LC_VERSION_MIN_MACOSX",
	LC_VERSION_MIN_IPHONEOS:     "LC_VERSION_MIN_IPHONEOS",
	LC_FUNCTION_STARTS:          "LC_FUNCTION_STARTS",
	LC_DYLD_ENVIRONMENT:         "LC_DYLD_ENVIRONMENT",
	LC_MAIN:                     "LC_MAIN",
	LC_DATA_IN_CODE:             "LC_DATA_IN_CODE",
	LC_SOURCE_VERSION:           "LC_SOURCE_VERSION",
	LC_DYLIB_CODE_SIGN_DRS:      "LC_DYLIB_CODE_SIGN_DRS",
	LC_ENCRYPTION_INFO_64:       "LC_ENCRYPTION_INFO_64",
	LC_LINKER_OPTION:            "LC_LINKER_OPTION",
	LC_LINKER_OPTIMIZATION_HINT: "LC_LINKER_OPTIMIZATION_HINT",
	LC_VERSION_MIN_TVOS:         "LC_VERSION_MIN_TVOS",
	LC_VERSION_MIN_WATCHOS:      "LC_VERSION_MIN_WATCHOS",
	LC_NOTE:                     "LC_NOTE",
	LC_BUILD_VERSION:            "LC_BUILD_VERSION",
	LC_DYLD_EXPORTS_TRIE:        "LC_DYLD_EXPORTS_TRIE",
	LC_DYLD_CHAINED_FIXUPS:      "LC_DYLD_CHAINED_FIXUPS",
	LC_FILESET_ENTRY:            "LC_FILESET_ENTRY",
	LC_ATOM_INFO:                "LC_ATOM_INFO",
}

// String returns the spec name, such as "LC_UUID".
func (c LoadCmd) String() string { return name(loadCmdNames, c) }

// Section flags, section.flags (mach-o/loader.h): a type in the low byte and
// attributes in the rest.
const (
	SECTION_TYPE       = 0x000000ff
	SECTION_ATTRIBUTES = 0xffffff00

	S_REGULAR                             = 0x0
	S_ZEROFILL                            = 0x1 // no file data
	S_CSTRING_LITERALS                    = 0x2
	S_4BYTE_LITERALS                      = 0x3
	S_8BYTE_LITERALS                      = 0x4
	S_LITERAL_POINTERS                    = 0x5
	S_NON_LAZY_SYMBOL_POINTERS            = 0x6
	S_LAZY_SYMBOL_POINTERS                = 0x7
	S_SYMBOL_STUBS                        = 0x8
	S_MOD_INIT_FUNC_POINTERS              = 0x9
	S_MOD_TERM_FUNC_POINTERS              = 0xa
	S_COALESCED                           = 0xb
	S_GB_ZEROFILL                         = 0xc // no file data
	S_INTERPOSING                         = 0xd
	S_16BYTE_LITERALS                     = 0xe
	S_DTRACE_DOF                          = 0xf
	S_LAZY_DYLIB_SYMBOL_POINTERS          = 0x10
	S_THREAD_LOCAL_REGULAR                = 0x11
	S_THREAD_LOCAL_ZEROFILL               = 0x12 // no file data
	S_THREAD_LOCAL_VARIABLES              = 0x13
	S_THREAD_LOCAL_VARIABLE_POINTERS      = 0x14
	S_THREAD_LOCAL_INIT_FUNCTION_POINTERS = 0x15
	S_INIT_FUNC_OFFSETS                   = 0x16

	S_ATTR_PURE_INSTRUCTIONS   = 0x80000000
	S_ATTR_NO_TOC              = 0x40000000
	S_ATTR_STRIP_STATIC_SYMS   = 0x20000000
	S_ATTR_NO_DEAD_STRIP       = 0x10000000
	S_ATTR_LIVE_SUPPORT        = 0x08000000
	S_ATTR_SELF_MODIFYING_CODE = 0x04000000
	S_ATTR_DEBUG               = 0x02000000
	S_ATTR_SOME_INSTRUCTIONS   = 0x00000400
	S_ATTR_EXT_RELOC           = 0x00000200
	S_ATTR_LOC_RELOC           = 0x00000100
)

// Virtual memory protections of segments, vm_prot_t (mach/vm_prot.h).
const (
	VM_PROT_READ    = 0x1
	VM_PROT_WRITE   = 0x2
	VM_PROT_EXECUTE = 0x4
)

// A Platform is the platform an image was built for, from LC_BUILD_VERSION
// (mach-o/loader.h) or implied by an LC_VERSION_MIN_* command.
type Platform uint32

// Platforms.
const (
	PLATFORM_UNKNOWN           Platform = 0
	PLATFORM_MACOS             Platform = 1
	PLATFORM_IOS               Platform = 2
	PLATFORM_TVOS              Platform = 3
	PLATFORM_WATCHOS           Platform = 4
	PLATFORM_BRIDGEOS          Platform = 5
	PLATFORM_MACCATALYST       Platform = 6
	PLATFORM_IOSSIMULATOR      Platform = 7
	PLATFORM_TVOSSIMULATOR     Platform = 8
	PLATFORM_WATCHOSSIMULATOR  Platform = 9
	PLATFORM_DRIVERKIT         Platform = 10
	PLATFORM_VISIONOS          Platform = 11
	PLATFORM_VISIONOSSIMULATOR Platform = 12
)

var platformNames = map[Platform]string{
	PLATFORM_UNKNOWN:           "PLATFORM_UNKNOWN",
	PLATFORM_MACOS:             "PLATFORM_MACOS",
	PLATFORM_IOS:               "PLATFORM_IOS",
	PLATFORM_TVOS:              "PLATFORM_TVOS",
	PLATFORM_WATCHOS:           "PLATFORM_WATCHOS",
	PLATFORM_BRIDGEOS:          "PLATFORM_BRIDGEOS",
	PLATFORM_MACCATALYST:       "PLATFORM_MACCATALYST",
	PLATFORM_IOSSIMULATOR:      "PLATFORM_IOSSIMULATOR",
	PLATFORM_TVOSSIMULATOR:     "PLATFORM_TVOSSIMULATOR",
	PLATFORM_WATCHOSSIMULATOR:  "PLATFORM_WATCHOSSIMULATOR",
	PLATFORM_DRIVERKIT:         "PLATFORM_DRIVERKIT",
	PLATFORM_VISIONOS:          "PLATFORM_VISIONOS",
	PLATFORM_VISIONOSSIMULATOR: "PLATFORM_VISIONOSSIMULATOR",
}

// String returns the spec name, such as "PLATFORM_IOS".
func (p Platform) String() string { return name(platformNames, p) }

// Symbol table entry fields, nlist.n_type and nlist.n_desc
// (mach-o/nlist.h, mach-o/stab.h).
const (
	N_STAB = 0xe0 // any of these bits set: a debugging (stab) entry
	N_PEXT = 0x10 // private external
	N_TYPE = 0x0e // mask for the type bits
	N_EXT  = 0x01 // external

	// Values of n_type & N_TYPE.
	N_UNDF = 0x0 // undefined, n_sect is NO_SECT
	N_ABS  = 0x2 // absolute, n_sect is NO_SECT
	N_SECT = 0xe // defined in section number n_sect
	N_PBUD = 0xc // prebound undefined (defined in a dylib)
	N_INDR = 0xa // indirect

	NO_SECT  = 0   // symbol is not in any section
	MAX_SECT = 255 // sections are numbered 1 to 255

	// Stab types, the whole n_type when n_type & N_STAB != 0.
	N_GSYM    = 0x20 // global symbol
	N_FNAME   = 0x22 // procedure name (f77 kludge)
	N_FUN     = 0x24 // procedure: name, section number, address
	N_STSYM   = 0x26 // static symbol
	N_LCSYM   = 0x28 // .lcomm symbol
	N_BNSYM   = 0x2e // begin nsect symbol
	N_AST     = 0x32 // AST file path
	N_OPT     = 0x3c // emitted with gcc2_compiled and in gcc source
	N_RSYM    = 0x40 // register symbol
	N_SLINE   = 0x44 // source line
	N_ENSYM   = 0x4e // end nsect symbol
	N_SSYM    = 0x60 // structure element
	N_SO      = 0x64 // main source file name
	N_OSO     = 0x66 // object file name
	N_LSYM    = 0x80 // local symbol
	N_BINCL   = 0x82 // include file beginning
	N_SOL     = 0x84 // #included file name
	N_PARAMS  = 0x86 // compiler parameters
	N_VERSION = 0x88 // compiler version
	N_OLEVEL  = 0x8a // compiler -O level
	N_PSYM    = 0xa0 // parameter
	N_EINCL   = 0xa2 // include file end
	N_ENTRY   = 0xa4 // alternate entry
	N_LBRAC   = 0xc0 // left bracket
	N_EXCL    = 0xc2 // deleted include file
	N_RBRAC   = 0xe0 // right bracket
	N_BCOMM   = 0xe2 // begin common
	N_ECOMM   = 0xe4 // end common
	N_ECOML   = 0xe8 // end common (local name)
	N_LENG    = 0xfe // second stab entry with length information

	// n_desc bits.
	REFERENCED_DYNAMICALLY = 0x0010
	N_NO_DEAD_STRIP        = 0x0020
	N_DESC_DISCARDED       = 0x0020
	N_WEAK_REF             = 0x0040
	N_WEAK_DEF             = 0x0080
	N_REF_TO_WEAK          = 0x0080
	N_ARM_THUMB_DEF        = 0x0008
	N_SYMBOL_RESOLVER      = 0x0100
	N_ALT_ENTRY            = 0x0200
	N_COLD_FUNC            = 0x0400
)

// name returns the spec name of v, or the type's prefix and v in hex.
func name[T ~uint32](names map[T]string, v T) string {
	if s, ok := names[v]; ok {
		return s
	}
	return fmt.Sprintf("%T(%#x)", v, uint32(v))
}
