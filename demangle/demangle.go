package demangle

import (
	"fmt"
	"strings"

	"github.com/backtrail/backtrail/demangle/rust"
	"github.com/backtrail/backtrail/demangle/swift"
)

// Style selects how a demangled name is written.
type Style int

const (
	// Full is the whole declaration the way GNU c++filt writes C++ names
	// (return type, parameters, clone suffixes as " [clone .isra.0]") and
	// rustc-demangle's alternate form writes Rust names (no hash, no crate
	// disambiguators).
	Full Style = iota

	// LLVM is exactly what llvm-cxxfilt-14 and llvm-symbolizer-14 print,
	// including their quirks: "> >" between closing template brackets,
	// clone suffixes as " (.isra.0)", legacy Rust names with their hash
	// and escapes, and names that LLVM 14 cannot demangle left alone.
	LLVM

	// Short is only the function's qualified name: template arguments
	// are kept, but not its parameters, return type, clone suffix or
	// Rust hash. It suits grouping and titles.
	Short
)

// String returns the style's name.
func (s Style) String() string {
	switch s {
	case Full:
		return "Full"
	case LLVM:
		return "LLVM"
	case Short:
		return "Short"
	}
	return fmt.Sprintf("Style(%d)", int(s))
}

// Scheme is the mangling scheme a name uses.
type Scheme int

const (
	None       Scheme = iota // not a mangled name, or one of a scheme not listed here
	Itanium                  // C++, Itanium C++ ABI
	RustLegacy               // Rust, legacy scheme: an Itanium nested name with a hash
	RustV0                   // Rust, v0 scheme
	Swift                    // Swift
)

// String returns the scheme's name.
func (s Scheme) String() string {
	switch s {
	case None:
		return "None"
	case Itanium:
		return "Itanium"
	case RustLegacy:
		return "RustLegacy"
	case RustV0:
		return "RustV0"
	case Swift:
		return "Swift"
	}
	return fmt.Sprintf("Scheme(%d)", int(s))
}

// swiftPrefixes are the prefixes of Swift's mangled names: "_T0" (Swift 4),
// "$S" (4.2), "$s" (5 and later), "$e" (Embedded Swift), each also with
// the extra leading underscore of Mach-O symbol tables, and the names of
// macro expansions.
var swiftPrefixes = []string{"$s", "$S", "$e", "_$s", "_$S", "_$e", "_T0", "__T0", "@__swiftmacro_"}

// SchemeOf returns the scheme of a mangled name by its prefix, without
// checking the rest of the name:
//
//   - Itanium: "_Z", and with the extra underscore that Mach-O symbol
//     tables add, "__Z"; "___Z" names Clang's block invocation functions.
//   - RustLegacy: an Itanium "_ZN…E" (or "__ZN…E") nested name whose last
//     element is "h" and 16 hex digits, optionally followed by a suffix
//     such as ".llvm.123".
//   - RustV0: "_R" (or "__R") and an upper-case letter or digit.
//   - Swift: "$s", "$S", "$e", "_T0", those with a leading '_', and
//     "@__swiftmacro_".
//
// SchemeOf reads only the prefix, except that for "_ZN" it walks the
// nested name's elements to find the last: its cost is linear at worst.
func SchemeOf(name string) Scheme {
	switch {
	case strings.HasPrefix(name, "_ZN") && isRustLegacy(name[1:]),
		strings.HasPrefix(name, "__ZN") && isRustLegacy(name[2:]):
		return RustLegacy
	case strings.HasPrefix(name, "_Z"), strings.HasPrefix(name, "__Z"), strings.HasPrefix(name, "___Z"):
		return Itanium
	case strings.HasPrefix(name, "_R") && len(name) > 2 && isV0Start(name[2]),
		strings.HasPrefix(name, "__R") && len(name) > 3 && isV0Start(name[3]):
		return RustV0
	}
	for _, p := range swiftPrefixes {
		if strings.HasPrefix(name, p) {
			return Swift
		}
	}
	return None
}

// isV0Start reports whether c can follow "_R": a path's upper-case tag or
// an encoding version's digit.
func isV0Start(c byte) bool {
	return 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// isRustLegacy reports whether s, which starts with "ZN", is a legacy Rust
// name: a nested name of length-prefixed elements whose last is "h" and 16
// hex digits, followed by nothing or a suffix starting with '.'.
func isRustLegacy(s string) bool {
	i, last := len("ZN"), ""
	for {
		if i >= len(s) {
			return false
		}
		if s[i] == 'E' {
			break
		}
		start, n := i, 0
		for i < len(s) && '0' <= s[i] && s[i] <= '9' {
			n = n*10 + int(s[i]-'0')
			i++
			if n > len(s) {
				return false
			}
		}
		if i == start || n > len(s)-i {
			return false
		}
		last, i = s[i:i+n], i+n
	}
	if rest := s[i+1:]; rest != "" && rest[0] != '.' {
		return false
	}
	if len(last) != len("h0123456789abcdef") || last[0] != 'h' {
		return false
	}
	for i := 1; i < len(last); i++ {
		if c := last[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// maxOutput bounds every demangled name. Real names stay well below it (the
// longest that LLVM's and Clang's libraries demangle to are under 5 KiB),
// while a hostile name can make the demanglers write up to the bound, at a
// cost of about 50 ns a byte.
const maxOutput = 1 << 16

// Demangle returns the demangled form of a mangled name in the given style,
// or name itself if it is not a mangled name of a known scheme, is
// malformed, or cannot be demangled within the limits the package comment
// states. It never panics and is safe for concurrent use.
//
// The LLVM style reads names as llvm-symbolizer-14 does, which expects the
// extra underscore of Mach-O symbol tables to have been taken off: it
// leaves "__Z…" and "__R…" names alone, but reads Clang's "___Z…_block_invoke"
// names. The Full style reads the Rust names "__R…" and "__ZN…" as
// rustc-demangle does; the Short style also reads "__Z…".
//
// Swift names are demangled by package swift: Full as swift-demangle
// prints them, Short as swift-demangle --simplified does. The LLVM style
// leaves them alone, as llvm-symbolizer-14 does.
func Demangle(name string, style Style) string {
	switch style {
	case Full, LLVM, Short:
	default:
		return name
	}
	switch SchemeOf(name) {
	case Itanium:
		return demangleItanium(name, style)
	case RustLegacy, RustV0:
		return demangleRust(name, style)
	case Swift:
		return demangleSwift(name, style)
	}
	return name
}

func demangleSwift(name string, style Style) string {
	var out string
	var err error
	switch style {
	case Full:
		out, err = swift.Demangle(name)
	case Short:
		out, err = swift.DemangleSimplified(name)
	default:
		return name
	}
	if err != nil {
		return name
	}
	return out
}

// demangleRust demangles both Rust schemes with package rust.
func demangleRust(name string, style Style) string {
	rs := rust.Full
	switch style {
	case LLVM:
		rs = rust.LLVM
	case Short:
		rs = rust.Short
	}
	out, err := rust.Demangle(name, rust.Options{Style: rs, MaxLength: maxOutput})
	if err != nil || out == "" {
		return name
	}
	return out
}
