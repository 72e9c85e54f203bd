// Package macho reads Mach-O files: executables, dylibs, bundles, object
// files and dSYM debug companions, thin or fat (universal), as laid out in
// Apple's <mach-o/loader.h>, <mach-o/fat.h> and <mach-o/nlist.h>.
//
// The reader works zero-copy over bytes that are usually a read-only file
// mapping: NewFile parses a thin file, NewFatFile a fat one (FAT_MAGIC and
// FAT_MAGIC_64), and Open maps a file and parses either kind. A File has the
// header, the load commands as raw bytes, and decoded segments and sections,
// LC_SYMTAB, LC_UUID, build versions, LC_ID_DYLIB and the dylibs it loads.
// Section data are subslices of the input. Symbols reads the nlist symbol
// table, and DWARFSection returns a DWARF section by its DWARF name,
// decompressing the legacy __zdebug form once into a mapping of an unlinked
// temporary file.
//
// ArchName and ParseArch translate between CPU types and the architecture
// names used by Apple's tools and Sentry ("arm64e", "x86_64h", "armv7k").
//
// # Untrusted input
//
// Debug files come from uploads, so every entry point is built for hostile
// bytes and is fuzzed (FuzzNewFile, FuzzNewFatFile):
//
//   - Nothing panics, whatever the input. Malformed input yields a
//     *FormatError that names the record, the offset (counted from the start
//     of the input handed to NewFile or NewFatFile) and the bad value.
//   - No count or size read from the input is used before it is checked
//     against the bytes that hold it: ncmds against sizeofcmds, sizeofcmds
//     against the file, each cmdsize against what is left, nsects against
//     cmdsize, nfat_arch against the file (and at most 30, which also tells
//     fat files from Java class files), nsyms times the nlist size and the
//     string table against the file. Allocations are therefore bounded by a
//     small multiple of the input size.
//   - Section and segment data are checked against the input when they are
//     asked for, so a file with one bad section still opens and its other
//     sections still read.
//   - A compressed section's declared size must be at most 4 GiB and at most
//     64 times its compressed size (or 64 KiB) before memory is reserved for
//     it, and the stream must produce exactly that many bytes and a valid
//     checksum.
package macho
