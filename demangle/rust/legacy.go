package rust

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// A legacy name is an Itanium nested name whose elements are the path's
// identifiers, with characters outside [A-Za-z0-9_] escaped: "$LT$" for '<',
// "$u20$" for ' ', ".." for "::" and so on. The last element is normally
// "h" and a 16-digit hash of the instance.

// legacyInner returns what follows the "ZN" of a legacy prefix ("_ZN",
// "ZN" or, as on macOS, "__ZN").
func legacyInner(s string) (string, bool) {
	switch {
	case len(s) > 4 && strings.HasPrefix(s, "_ZN"):
		return s[3:], true
	case len(s) > 3 && strings.HasPrefix(s, "ZN"):
		return s[2:], true
	case len(s) > 5 && strings.HasPrefix(s, "__ZN"):
		return s[4:], true
	}
	return "", false
}

// legacyElements splits the elements of a legacy name, inner being what
// follows "ZN", and returns them with what follows the closing 'E'. off is
// inner's offset in the whole name. Lengths with leading zeros are accepted
// when lenient is set (as rustc-demangle does) and rejected otherwise (as
// LLVM's Itanium demangler does).
func legacyElements(inner string, off int, lenient bool) (elems []string, rest string, err error) {
	i := 0
	for {
		if i >= len(inner) {
			return nil, "", &SyntaxError{Offset: off + i, Msg: "missing E at the end of the path"}
		}
		if inner[i] == 'E' {
			break
		}
		start := i
		n := 0
		for i < len(inner) && isDigit(inner[i]) {
			n = n*10 + int(inner[i]-'0')
			i++
			if n > len(inner) {
				return nil, "", &SyntaxError{Offset: off + start, Msg: "element longer than the name"}
			}
		}
		switch {
		case i == start:
			return nil, "", &SyntaxError{Offset: off + i, Msg: fmt.Sprintf("expected an element length, found %q", inner[i])}
		case !lenient && inner[start] == '0':
			return nil, "", &SyntaxError{Offset: off + start, Msg: "element length with a leading zero"}
		case n > len(inner)-i:
			return nil, "", &SyntaxError{Offset: off + start, Msg: fmt.Sprintf("element of %d bytes but %d left", n, len(inner)-i)}
		}
		elems = append(elems, inner[i:i+n])
		i += n
	}
	if len(elems) == 0 {
		return nil, "", &SyntaxError{Offset: off, Msg: "empty path"}
	}
	return elems, inner[i+1:], nil
}

// demangleLegacyFull writes a legacy name as rustc-demangle's alternate form
// does, dropping the hash and decoding the escapes, and returns what follows
// the name.
func demangleLegacyFull(inner string, off, max int) (out, suffix string, err error) {
	for i := 0; i < len(inner); i++ {
		if inner[i] >= utf8.RuneSelf {
			return "", "", &SyntaxError{Offset: off + i, Msg: "non-ASCII byte"}
		}
	}
	elems, suffix, err := legacyElements(inner, off, true)
	if err != nil {
		return "", "", err
	}
	var b strings.Builder
	for i, e := range elems {
		if i == len(elems)-1 && isRustHash(e) {
			break
		}
		if i > 0 {
			b.WriteString("::")
		}
		writeLegacyElement(&b, e)
		if b.Len() > max {
			return "", "", fmt.Errorf("%w: output longer than %d bytes", ErrLimit, max)
		}
	}
	return b.String(), suffix, nil
}

// isRustHash reports whether a legacy element is the hash: 'h' and hex
// digits.
func isRustHash(e string) bool {
	if !strings.HasPrefix(e, "h") {
		return false
	}
	for i := 1; i < len(e); i++ {
		if !isHex(e[i]) && !('A' <= e[i] && e[i] <= 'F') {
			return false
		}
	}
	return true
}

// legacyEscapes maps the two-letter escapes of legacy names.
var legacyEscapes = map[string]byte{
	"SP": '@', "BP": '*', "RF": '&', "LT": '<', "GT": '>', "LP": '(', "RP": ')', "C": ',',
}

// writeLegacyElement decodes one element. At an escape it does not know it
// stops decoding and writes the rest as it is.
func writeLegacyElement(b *strings.Builder, e string) {
	if strings.HasPrefix(e, "_$") {
		e = e[1:]
	}
	for e != "" {
		switch {
		case e[0] == '.':
			if strings.HasPrefix(e, "..") {
				b.WriteString("::")
				e = e[2:]
			} else {
				b.WriteByte('.')
				e = e[1:]
			}
		case e[0] == '$':
			end := strings.IndexByte(e[1:], '$')
			if end < 0 {
				b.WriteString(e)
				return
			}
			esc := e[1 : end+1]
			if c, ok := legacyEscapes[esc]; ok {
				b.WriteByte(c)
			} else if r, ok := legacyUnicodeEscape(esc); ok {
				b.WriteRune(r)
			} else {
				b.WriteString(e)
				return
			}
			e = e[end+2:]
		default:
			i := strings.IndexAny(e[1:], "$.")
			if i < 0 {
				b.WriteString(e)
				return
			}
			b.WriteString(e[:i+1])
			e = e[i+1:]
		}
	}
}

// legacyUnicodeEscape decodes "u" and lower-case hex digits, as in "$u7e$",
// to a character that is not a control character.
func legacyUnicodeEscape(esc string) (rune, bool) {
	if len(esc) < 2 || esc[0] != 'u' || len(esc) > 9 {
		return 0, false
	}
	var v rune
	for i := 1; i < len(esc); i++ {
		c := esc[i]
		if !isHex(c) {
			return 0, false
		}
		v = v<<4 | rune(hexValue(c))
	}
	if !utf8.ValidRune(v) || isControl(v) {
		return 0, false
	}
	return v, true
}

// isControl reports whether r is in Unicode's Cc category, as Rust's
// char::is_control does.
func isControl(r rune) bool {
	return r < 0x20 || 0x7f <= r && r < 0xa0
}

// demangleLegacyLLVM writes a legacy name as llvm-cxxfilt-14 does. LLVM 14
// has no legacy Rust demangler: its Itanium demangler reads the name as a
// C++ nested name, so the hash stays as the last element, the escapes stay
// as they are, an element starting "_GLOBAL__N" becomes
// "(anonymous namespace)", and a suffix is written as " (.suffix)". Names
// that are more than a nested name, such as a C++ function with parameters,
// are not accepted.
func demangleLegacyLLVM(name string, max int) (string, error) {
	inner := name[len("_ZN"):]
	elems, rest, err := legacyElements(inner, len("_ZN"), false)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for i, e := range elems {
		if e == "" {
			return "", &SyntaxError{Offset: len("_ZN"), Msg: "empty element"}
		}
		if i > 0 {
			b.WriteString("::")
		}
		if strings.HasPrefix(e, "_GLOBAL__N") {
			e = "(anonymous namespace)"
		}
		b.WriteString(e)
	}
	switch {
	case rest == "":
	case rest[0] == '.':
		b.WriteString(" (")
		b.WriteString(rest)
		b.WriteString(")")
	default:
		return "", &SyntaxError{Offset: len(name) - len(rest), Msg: fmt.Sprintf("unexpected %q after the nested name", rest)}
	}
	if b.Len() > max {
		return "", fmt.Errorf("%w: output longer than %d bytes", ErrLimit, max)
	}
	return b.String(), nil
}
