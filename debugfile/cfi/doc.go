// Package cfi reads DWARF call frame information — the .eh_frame section of
// the Linux x86-64 and AArch64 ABIs (LSB Core 5.0 §10.6, with .eh_frame_hdr
// §10.6.2) and the .debug_frame section of DWARF 2 to 5 (DWARF 5 §6.4,
// CIE versions 1, 3 and 4) — and turns it into unwind rows: for a program
// counter, the rule that computes the canonical frame address (CFA) and the
// rule that recovers each saved register.
//
// The package is data only. It knows no registers' values and reads no
// memory: a Row says "the CFA is rsp+16, the return address is at CFA−8",
// and package unwind applies it to a thread. DWARF expressions inside rules
// (DW_CFA_def_cfa_expression, DW_CFA_expression, DW_CFA_val_expression) are
// returned as bytes for the caller's evaluator.
//
// A Table is built once per section by Parse. With an .eh_frame_hdr whose
// search table is in the usual datarel/sdata4 encoding, FDE lookup is a
// binary search over that table and the section is not scanned; otherwise
// Parse scans every entry once and builds a sorted index. CIEs are parsed
// again for each lookup (they are a few bytes long), so a Table is
// immutable after Parse and safe for concurrent use; callers that look up
// the same PCs repeatedly cache the rows (package unwind does).
//
// Supported: pointer encodings absptr, uleb128, udata2/4/8, sleb128,
// sdata2/4/8 with pcrel, textrel, datarel, funcrel and aligned application
// and the indirect flag (recorded, not dereferenced); augmentations z, R, P,
// L, S (signal frame), B (AArch64 B-key pointer authentication), G (MTE
// tagged frames) and the old GCC "eh"; every DW_CFA_* instruction of DWARF 5
// plus DW_CFA_GNU_args_size, DW_CFA_GNU_negative_offset_extended and
// DW_CFA_AARCH64_negate_ra_state (which shares its opcode with SPARC's
// DW_CFA_GNU_window_save; SPARC is not supported). A CIE with an
// augmentation this package does not know is tolerated when it starts with
// "z" (its data length lets the parser skip it); otherwise only that CIE's
// FDEs fail, with an error, and the rest of the table works.
//
// # Untrusted input
//
// Sections come from files and processes an attacker may control. Parse
// and every method are bounded: no length or count read from the input is
// used to allocate or index before it is checked against the bytes that
// remain; the index built by a scan has at most one entry per 8 bytes of
// section; evaluating a row executes each instruction byte once, keeps at
// most MaxRules register rules and at most MaxStateDepth remembered states.
// Malformed input yields a *FormatError naming the section, the offset and
// what was wrong; nothing panics. FuzzParse checks this, computing rows
// for every FDE it finds.
package cfi
