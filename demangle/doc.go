// Package demangle turns the mangled names of C++, Rust and Swift functions
// back into the names a programmer wrote, choosing the scheme by the name's
// prefix. It is the one entry point that backtrail's symbolizer, server and
// CLI use.
//
// The schemes are:
//
//   - Itanium, the mangling of the Itanium C++ ABI
//     (https://itanium-cxx-abi.github.io/cxx-abi/abi.html#mangling), which
//     GCC and Clang use on every platform but Windows. Package
//     demangle/itanium demangles the common names, several times faster;
//     the names it declines (about 1 % of real ones: expressions, decltype
//     and rarer constructs) are demangled by
//     github.com/ianlancetaylor/demangle, adjusted to print the way the
//     peer tools do and to work around a bug of its in substitutions
//     (srfix.go). Both paths print the same; the tests check it.
//   - RustV0 and RustLegacy, rustc's two schemes (RFC 2603 and rustc's
//     documentation on symbol mangling), demangled by package
//     demangle/rust.
//   - Swift ($s, $S, $e, _T0, their Mach-O forms with a leading '_', and
//     Swift 1–3's _T), demangled by package demangle/swift as
//     swift-demangle writes them.
//
// Each Style reproduces a peer tool, and tests compare Demangle with the
// tools over thousands of names that real compilers emit (see
// peer_test.go; Swift against swift-demangle's own test vectors): Full
// prints what GNU c++filt (binutils 2.40) prints for C++, what
// rustc-demangle's alternate form prints for Rust and what swift-demangle
// prints for Swift; LLVM prints exactly what llvm-symbolizer-14 and
// llvm-cxxfilt-14 print (Swift names left alone, as they do), for backtrail
// symbolize's output to match llvm-symbolizer's; Short prints just the
// qualified name, for grouping and titles. The test lists each known
// difference from the peers with its reason.
//
// A name is never lost: Demangle returns its input unchanged when the name
// is not mangled, is malformed, or is not understood.
//
// # Untrusted input
//
// Names come from untrusted debug files and crash reports. Demangle never
// panics and its cost is bounded: Itanium names longer than 4 KiB are
// returned unchanged (the C++ demangler's time grows with the square of a
// name's nesting depth), Rust names are limited in nesting and back-reference
// expansion, and no demangled name is longer than 64 KiB. FuzzDemangle checks
// these guarantees over all schemes and styles.
package demangle
