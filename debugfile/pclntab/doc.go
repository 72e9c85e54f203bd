// Package pclntab reads the Go pc-line table (runtime.pcheader, the
// .gopclntab / __gopclntab section) with its inline trees, and answers what
// the Go runtime would say about a PC: function, file, line and the chain of
// inlined calls, as runtime.CallersFrames reports them.
//
// It reads the four layouts the gc toolchain has written, named by their
// magic number (internal/abi/symtab.go):
//
//   - 0xfffffffb: Go 1.2 through 1.15 (golang.org/s/go12symtab)
//   - 0xfffffffa: Go 1.16 and 1.17 (funcnametab, cutab, filetab, pctab split out)
//   - 0xfffffff0: Go 1.18 and 1.19 (entries as offsets from runtime.text,
//     funcdata as offsets from go:func.*)
//   - 0xfffffff1: Go 1.20 and later (start lines; the 16-byte inline tree entry)
//
// in either byte order with 4- or 8-byte pointers. The layouts come from the
// runtime's pcHeader, moduledata, _func and inlinedCall
// (runtime/symtab.go, runtime/runtime2.go, runtime/symtabinl.go of each
// release) and the linker that writes them (cmd/link/internal/ld/pcln.go).
//
// # What the table needs besides itself
//
// The package knows no container format. Parse takes the section's bytes and,
// in Options, what only the container knows:
//
//   - Addr, the table's virtual address, and Memory, the program's loaded
//     sections. With them Parse finds runtime.firstmoduledata by scanning for a
//     pointer to the table (FindModuledata), which gives runtime.text and
//     go:func.* even in a stripped binary.
//   - TextStart: since Go 1.18 function entries are offsets from runtime.text.
//     The header held that address until Go 1.25 (unrelocated in position
//     independent binaries); Go 1.26 no longer stores it. Pass the address when
//     it is known some other way, e.g. the runtime.text symbol.
//   - GoFunc: since Go 1.18 inline trees are found at offsets from go:func.*
//     (moduledata.gofunc). Before Go 1.18 funcdata holds absolute addresses,
//     read through Memory.
//
// Without the inline trees, Lookup still reports the physical function and the
// file and line of the innermost inlined code, as debug/gosym does.
//
// # Names
//
// Frame.Function and Func.Name are spelled as the runtime prints them. The
// table stores linker symbol names, which differ only for instantiations of
// generic functions: the stored "main.F[go.shape.int]" prints as
// "main.F[...]"; Func.Sym keeps the stored form. One deliberate difference:
// the runtime reads name offset 0 as "no name", which blanks the table's
// first function (the linker stores its name at offset 0); this package
// returns that name.
//
// Strings returned by a Table point into the bytes given to Parse without
// copying (only the printed names of generic instantiations are allocated,
// once). They are valid as long as those bytes are, and the bytes, like
// those of Options.Memory, must not change while the Table is in use.
//
// # Untrusted input
//
// The table is read from files that may be corrupt or hostile. Parse and every
// method of Table read only inside the slices they were given and never panic;
// they are fuzzed (FuzzParse). No count read from the input is allocated
// before it is checked against the bytes that remain: Parse allocates a fixed
// amount, plus, on first use, a map of printable names bounded by the size of
// the name table. Work is bounded by the input: a Lookup decodes each of the
// function's pc-value tables at most once per frame, an inline chain has at
// most 1024 frames, and each step up the chain must go to a lower tree index
// (the linker adds parents before children), so a cyclic tree ends. Bad data
// gives FormatError from Parse, and afterwards missing answers ("?", line 0,
// fewer frames) rather than errors, as the runtime does with a PC it cannot
// resolve.
//
// # Limits
//
//   - Binaries whose text is split into several sections (textsectmap: very
//     large ppc64 and arm64 programs) map entries onto addresses differently;
//     this package assumes one text section.
//   - The 0xfffffffb layout spans Go 1.2–1.15, but its inline trees are read
//     in the Go 1.12–1.15 form. Go 1.9–1.11 trees had no parentPc; their
//     little-endian records read as having none, big-endian ones give wrong
//     inlined frames.
//   - Before Go 1.18 inline trees are found at absolute addresses, which in a
//     position-independent binary may need relocations this package does
//     not apply.
package pclntab
