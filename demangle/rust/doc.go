// Package rust demangles Rust symbol names: the v0 scheme that rustc emits
// with -C symbol-mangling-version=v0 (and for its own standard library), and
// the legacy scheme, rustc's stable default, which wraps a path in an Itanium
// C++ nested name and appends a hash.
//
// The v0 grammar is the one in RFC 2603 (Rust symbol name mangling v0,
// https://rust-lang.github.io/rfcs/2603-rust-symbol-name-mangling-v0.html)
// as amended in rustc's documentation on symbol mangling
// (https://doc.rust-lang.org/rustc/symbol-mangling/v0.html): const generics
// of every type (str, references, arrays, tuples, structs and enum variants),
// punycode identifiers and the optional instantiating crate. The legacy
// scheme is described in the same documentation
// (https://doc.rust-lang.org/rustc/symbol-mangling/legacy.html).
//
// Each Style writes the names the way a peer tool does:
//
//   - Full: like rustc-demangle's alternate form ("{:#}"), which rustfilt and
//     Rust's own backtraces print: crate disambiguators and the legacy hash
//     are dropped, legacy escapes such as $LT$ are decoded, ThinLTO's
//     ".llvm.<hex>" suffix is dropped and other suffixes are kept.
//   - LLVM: exactly what llvm-cxxfilt-14 and llvm-symbolizer-14 print. For v0
//     names that is LLVM 14's Rust demangler, which knows fewer const generic
//     types than rustc now emits (it leaves such names alone, and so does
//     Demangle, with ErrUnsupported) and writes a suffix as " (.suffix)". For
//     legacy names LLVM 14 uses its Itanium demangler, which keeps the hash
//     as a path element and leaves the escapes as they are.
//   - Short: Full without any suffix.
//
// # Untrusted input
//
// Demangle reads symbol names from untrusted debug files and crash reports.
// It never panics, whatever the input, and its cost is bounded: recursion
// is limited to MaxDepth nested paths, types and consts (as in LLVM and
// rustc-demangle), the output to Options.MaxLength bytes (1 MiB by default;
// v0 back-references can otherwise make a short name print exponentially),
// and the number of parse steps to a multiple of that. Names that exceed a
// limit fail with ErrLimit. Fuzz targets check these guarantees.
package rust
