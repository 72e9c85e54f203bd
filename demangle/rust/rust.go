package rust

import (
	"errors"
	"fmt"
	"strings"
)

// Style selects how a demangled name is written; the package comment says
// what each style prints.
type Style int

const (
	Full  Style = iota // rustc-demangle's alternate form: no hash, no crate disambiguators
	LLVM               // exactly what llvm-cxxfilt-14 prints
	Short              // Full without the symbol's suffix
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

// Limits on the work Demangle does for one name.
const (
	// DefaultMaxLength is the longest demangled name Demangle writes when
	// Options.MaxLength is zero.
	DefaultMaxLength = 1 << 20

	// MaxDepth is the deepest nesting of paths, types and consts Demangle
	// follows, the limit that LLVM's and rustc-demangle's demanglers use.
	MaxDepth = 500
)

// Options control Demangle. The zero value asks for the Full style and the
// default limits.
type Options struct {
	Style Style

	// MaxLength bounds the demangled name in bytes; Demangle fails with
	// ErrLimit rather than write more. Zero means DefaultMaxLength.
	MaxLength int
}

var (
	// ErrNotRust is returned for a name that uses neither Rust scheme.
	ErrNotRust = errors.New("rust: not a Rust symbol name")

	// ErrLimit is returned, wrapped, when demangling a name would exceed
	// MaxDepth, Options.MaxLength or the step budget derived from it.
	ErrLimit = errors.New("rust: symbol exceeds a demangling limit")

	// ErrUnsupported is returned, wrapped, in the LLVM style for a valid v0
	// name that llvm-cxxfilt-14 cannot demangle: one with a const generic
	// argument that is not an integer, bool or char, such as a &str, an
	// array, a tuple or a struct (which the adt_const_params feature
	// allows).
	ErrUnsupported = errors.New("rust: symbol not demangled by llvm-cxxfilt-14")
)

// A SyntaxError reports a malformed symbol name.
type SyntaxError struct {
	Offset int    // byte offset in the name where the error was found
	Msg    string // what is wrong
}

// Error returns the message, with the offset.
func (e *SyntaxError) Error() string {
	return fmt.Sprintf("rust: invalid symbol at offset %d: %s", e.Offset, e.Msg)
}

// Demangle demangles a Rust symbol name of either scheme, written in the
// style opts asks for. A v0 name starts with "_R" (or, except in the LLVM
// style, "__R" or "R", as on macOS and Windows); a legacy name is an Itanium
// nested name "_ZN…E" (or "__ZN…E", "ZN…E"), normally ending in a
// "17h<16 hex digits>" hash element. The name may end in a suffix such as
// ".llvm.1234" or ".cold".
//
// On failure the error is ErrNotRust, *SyntaxError, or one that wraps
// ErrLimit or ErrUnsupported. Demangle is safe for concurrent use; its cost
// is linear in the output, which the options bound.
func Demangle(name string, opts Options) (string, error) {
	max := opts.MaxLength
	if max <= 0 {
		max = DefaultMaxLength
	}
	switch opts.Style {
	case Full, LLVM, Short:
	default:
		return "", fmt.Errorf("rust: unknown style %d", int(opts.Style))
	}
	if opts.Style == LLVM {
		switch {
		case strings.HasPrefix(name, "_R"):
			return demangleV0LLVM(name, max)
		case strings.HasPrefix(name, "_ZN"):
			return demangleLegacyLLVM(name, max)
		}
		return "", ErrNotRust
	}
	return demangleRustc(name, opts.Style, max)
}

// demangleRustc demangles in the Full and Short styles, following
// rustc-demangle: first ThinLTO's ".llvm.<hex>" suffix is dropped, then the
// legacy scheme is tried before v0, and what follows the name must be a
// suffix of period-separated words.
func demangleRustc(name string, style Style, max int) (string, error) {
	s := name
	if i := strings.Index(s, ".llvm."); i >= 0 && isLLVMHash(s[i+len(".llvm."):]) {
		s = s[:i]
	}
	var (
		out    string
		suffix string
		err    error
	)
	if inner, ok := legacyInner(s); ok {
		out, suffix, err = demangleLegacyFull(inner, len(s)-len(inner), max)
	} else if inner, ok := v0Inner(s); ok {
		out, suffix, err = demangleV0Full(inner, len(s)-len(inner), max)
	} else {
		return "", ErrNotRust
	}
	if err != nil {
		return "", err
	}
	if suffix != "" {
		if suffix[0] != '.' || !symbolLike(suffix) {
			return "", &SyntaxError{Offset: len(s) - len(suffix), Msg: fmt.Sprintf("unexpected %q after the path", suffix)}
		}
		if style == Full {
			if len(out)+len(suffix) > max {
				return "", fmt.Errorf("%w: output longer than %d bytes", ErrLimit, max)
			}
			out += suffix
		}
	}
	return out, nil
}

// isLLVMHash reports whether s is what ThinLTO appends after ".llvm.":
// upper-case hex digits and '@'.
func isLLVMHash(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'A' <= c && c <= 'F' || c == '@') {
			return false
		}
	}
	return true
}

// symbolLike reports whether s holds only ASCII letters, digits and
// punctuation, as the suffixes that compilers and linkers append do.
func symbolLike(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c >= 0x7f {
			return false
		}
	}
	return true
}

// v0Inner returns what follows a v0 prefix ("_R", "R" or "__R") if the name
// has one.
func v0Inner(s string) (string, bool) {
	switch {
	case strings.HasPrefix(s, "_R"):
		return s[2:], true
	case strings.HasPrefix(s, "__R"):
		return s[3:], true
	case strings.HasPrefix(s, "R"):
		return s[1:], true
	}
	return "", false
}
