// Package dwarf reads DWARF debugging information, versions 2 to 5
// (https://dwarfstd.org/doc/DWARF5.pdf), for symbolication: unit headers,
// the subroutine entries (DW_TAG_subprogram, DW_TAG_inlined_subroutine) with
// their address ranges, call sites and names, line number programs, and
// which unit owns which addresses. It knows no container format: callers
// hand it the (decompressed) sections.
//
// It is built for converting huge files fast: it reads in place over the
// section bytes (zero copy; strings are views into .debug_str), caches
// abbreviation tables with each attribute's size precomputed so entries of
// no interest are skipped with one addition, jumps over type subtrees with
// DW_AT_sibling, and reads units independently so they can be converted in
// parallel.
//
// # Untrusted input
//
// Every read is bounds-checked and errors name the section and hex offset.
// No count or size read from the input allocates before it is checked
// against the bytes that remain; range lists, abbreviation tables and
// reference chains have budgets proportional to the input, so hostile
// files cost time and memory linear in their size. Nothing panics. The
// readers are fuzzed (FuzzReadUnit, FuzzLineTable).
package dwarf
