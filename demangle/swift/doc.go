// Package swift demangles Swift symbol names in pure Go, the way the Swift
// toolchain's swift-demangle prints them.
//
// It reads the mangling grammar of docs/ABI/Mangling.rst in the Swift
// repository at commit 00f065a05d34a19ff7c7b4aacf0991ec13840f9d (Swift 6.x):
// the stable $s mangling and its _$s form from Mach-O symbol tables,
// embedded Swift ($e, _$e), and the pre-stable Swift 4.x forms $S, _$S and
// _T0, including spellings that Swift 5.x emitted before the grammar settled
// (a bare Y for async, J for @concurrent, Tw for non-constant partial apply
// thunks). Symbols from Swift 1 to 3 (the _T prefix without the 0) use an
// older, prefix-ordered mangling that the current grammar no longer
// describes; a separate parser (parseold.go) reads them into the same kind
// of tree. Macro expansion file names (@__swiftmacro_) are not supported.
//
// Supported are substitutions and word substitutions, generic signatures
// and requirements, closures and local declarations, thunks, witnesses,
// metadata and descriptors, generic and function signature specializations
// (whose arguments are themselves demangled), async and typed-throws
// functions and their partial functions (TQ0_, TY1_), SIL function types,
// automatic differentiation symbols, Punycode identifiers and operators,
// and unmangled suffixes such as ".cold" or ".123".
//
// # Output
//
// Demangle's output is byte-for-byte the default output of swift-demangle
// for the test vectors in testdata/manglings.txt. DemangleSimplified
// follows testdata/simplified-manglings.txt, which records the output of
// `swift-demangle --simplified` in the Swift 3 era: modules, conformances,
// unmangled suffixes and variable types are left out; thunks print as
// "thunk", specializations as "specialized", argument labels as
// "label : Type", protocol compositions as "protocol<...>", and contexts
// always as a prefix, with local and typed contexts in parentheses:
// "(f() -> ()).(closure #1)" where the default style says
// "closure #1 () -> () in f() -> ()".
//
// The classification markers of `swift-demangle -classify` ({T:...}, {C},
// {N}) are not produced; the tests strip them from the expected output.
//
// # Untrusted input
//
// Names come from crash reports and binaries that anyone can send, so the
// package is built for hostile input:
//
//   - Demangle and DemangleSimplified never panic and never loop. The
//     parsers consume input on every step; recursion in the parsers and the
//     printer is limited to 512 levels.
//   - Work and memory are bounded: the nodes created plus the stack pushes
//     are limited to 64 per input byte plus 4096, and to 2^18 in all (about
//     20 MiB); the printed name to 64 KiB; and the printer to 2^18 node
//     visits, which bounds the blow-up of substitutions that refer to one
//     subtree many times. Repeat counts are capped at 2048 as in the
//     reference demangler, Punycode labels at 4096 bytes, and no length
//     read from the input is used before it is checked against the bytes
//     that remain.
//   - Control bytes (0x00-0x1F) are refused. They introduce symbolic
//     references, which only occur in metadata inside binaries and which
//     Mangling.rst asks tools that read untrusted names to refuse.
//   - Input that exceeds a limit fails with an error matching ErrTooComplex;
//     input that breaks the grammar fails with ErrInvalid. In both cases the
//     caller keeps the mangled name, as swift-demangle does.
//
// FuzzDemangle checks these properties on arbitrary input, seeded from the
// test vectors; inputs that ever fail it are kept under testdata/fuzz as
// regression seeds.
//
// Demangling allocates little: nodes come from an arena that is reused
// through a sync.Pool, and a call allocates the returned string and not
// much else. The functions are safe for concurrent use.
package swift
