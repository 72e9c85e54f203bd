// Package elf reads ELF files (System V gABI, ELF32 and ELF64, either byte
// order) for symbolication: headers, program headers, sections with their
// names, compressed debug sections, notes and symbol tables. It reads the
// gABI (draft of 10 June 2013, plus ELFCOMPRESS_ZSTD), the symbol
// versioning of the Linux Standard Base Core 5.0, and the GNU extensions
// that debuggers rely on: build IDs, .gnu_debuglink, .gnu_debugaltlink and
// ".zdebug" compression.
//
// The reader is zero-copy. NewFile parses a byte slice, and Open maps a
// file read-only; raw section, segment and note data are subslices of that
// memory. Compressed sections (SHF_COMPRESSED with ELFCOMPRESS_ZLIB or
// ELFCOMPRESS_ZSTD, and GNU ".zdebug_*" sections) are decompressed once, on
// first use, into mappings of unlinked temporary files that Close frees.
//
// Addresses: ImageBase follows Sentry and Breakpad (the first PT_LOAD's
// p_vaddr), and OffsetToVaddr and VaddrToOffset translate through the
// PT_LOAD segments. Features summarises what a file can contribute:
// symbols, DWARF, unwind tables, a Go pclntab, or only debug data.
//
// # Untrusted input
//
// Every input is assumed hostile. NewFile and every method are bounded: no
// count or size read from the file is used to allocate or index before it
// is checked against the bytes that hold it (header tables, symbol tables,
// notes, version tables), and a compressed section may claim at most 4 GiB
// and at most 1000 times its compressed size (sizes up to 1 MiB are always
// allowed); all compressed sections together, and the copy WriteDecompressed
// writes, at most 1000 times the file's size plus 1 MiB (section headers may
// share their bytes). Decompression must yield exactly the size the header
// claims.
// Symbol, string and version tables are read only uncompressed, as
// toolchains write them, so what is allocated for them is bounded by the
// file's size.
// Malformed input yields a *FormatError naming the field, the value and the
// file offset; it never panics. The package is fuzzed (FuzzNewFile) through
// NewFile, SectionData, Symbols, DynamicSymbols, notes and Features.
package elf
