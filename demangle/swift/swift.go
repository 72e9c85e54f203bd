package swift

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
)

// Sentinel errors. Errors returned by Demangle and DemangleSimplified match
// one of them with errors.Is.
var (
	// ErrNotMangled means the name has no Swift mangling prefix.
	ErrNotMangled = errors.New("not a Swift mangled name")
	// ErrInvalid means the name has a Swift prefix but does not follow the
	// grammar, or uses a construct this package does not read (symbolic
	// references, which only occur inside binaries, are one).
	ErrInvalid = errors.New("invalid Swift mangling")
	// ErrTooComplex means the name would exceed a resource limit: input
	// that nests too deeply, or that expands to too many nodes or too much
	// text. Real symbols stay far below the limits.
	ErrTooComplex = errors.New("mangling exceeds the demangler's limits")
)

// SyntaxError describes why a name could not be demangled.
type SyntaxError struct {
	Name   string // the input, shortened if long
	Offset int    // byte offset in the input where demangling stopped
	Reason string
	Err    error // ErrInvalid or ErrTooComplex
}

// Error reports the input, the reason and the offset.
func (e *SyntaxError) Error() string {
	return fmt.Sprintf("swift: demangle %q: %s at offset %d", e.Name, e.Reason, e.Offset)
}

// Unwrap returns the sentinel, for errors.Is.
func (e *SyntaxError) Unwrap() error { return e.Err }

const (
	prefixNone = iota
	prefixCurrent
	prefixSwift4 // _T0: labels are mangled inside the parameter tuple
	prefixLegacy // _T: Swift 1-3
)

// manglingPrefix returns the length and kind of name's mangling prefix:
// $s, $S or $e (current), the same with an underscore, _T0 (Swift 4), or
// _T (legacy). It runs on every name a symbolizer sees, so it looks at the
// bytes instead of trying each prefix in turn.
func manglingPrefix(name string) (int, int) {
	if len(name) < 2 {
		return 0, prefixNone
	}
	var c byte // the letter after the "$"
	plen := 2
	switch name[:2] {
	case "_T":
		if len(name) > 2 && name[2] == '0' {
			return 3, prefixSwift4
		}
		return 2, prefixLegacy
	case "_$":
		if len(name) == 2 {
			return 0, prefixNone
		}
		c, plen = name[2], 3
	default:
		if name[0] != '$' {
			return 0, prefixNone
		}
		c = name[1]
	}
	switch c {
	case 's', 'S', 'e':
		return plen, prefixCurrent
	}
	return 0, prefixNone
}

// IsMangled reports whether name starts with a Swift mangling prefix: $s,
// _$s, $S, _$S, $e, _$e, _T0 or the legacy _T. It does not check the rest
// of the name; Demangle does. Macro expansion file names (@__swiftmacro_)
// are not supported.
func IsMangled(name string) bool {
	_, k := manglingPrefix(name)
	return k != prefixNone
}

// Demangle returns name demangled as `swift-demangle` prints it by default,
// or an error saying why it is not a valid Swift mangling. It never panics,
// and its time and memory are bounded by a small multiple of len(name).
// It is safe for concurrent use.
func Demangle(name string) (string, error) {
	s, f := demangle(name, false, 0)
	return s, f.err(name)
}

// DemangleSimplified is Demangle in the style of `swift-demangle
// --simplified`: without module names, conformances, unmangled suffixes,
// variable types and specialization details, and with thunks and witnesses
// shortened.
func DemangleSimplified(name string) (string, error) {
	s, f := demangle(name, true, 0)
	return s, f.err(name)
}

// failure is why demangle failed; the error value is only built at the API
// boundary, because nested demanglings fail often and cheaply.
type failure struct {
	sentinel error // nil on success
	offset   int
	reason   string
}

func (f failure) err(name string) error {
	switch f.sentinel {
	case nil:
		return nil
	case ErrNotMangled:
		return fmt.Errorf("swift: demangle %q: %w", shorten(name), ErrNotMangled)
	}
	return &SyntaxError{Name: shorten(name), Offset: f.offset, Reason: f.reason, Err: f.sentinel}
}

// state is the reusable memory of one demangling.
type state struct {
	p       parser
	a       arena
	pr      printer
	oldSubs []*node
}

var statePool = sync.Pool{New: func() any { return new(state) }}

func shorten(name string) string {
	if len(name) > 80 {
		return name[:77] + "..."
	}
	return name
}

func demangle(name string, simple bool, nest int) (string, failure) {
	plen, pk := manglingPrefix(name)
	if pk == prefixNone {
		return "", failure{sentinel: ErrNotMangled}
	}
	if i := controlByte(name); i >= 0 {
		return "", failure{ErrInvalid, i, "control byte (symbolic reference)"}
	}
	st := statePool.Get().(*state)
	out, f := st.demangle(name, plen, pk, simple, nest)
	statePool.Put(st)
	return out, f
}

// demangle parses and prints name, which has a prefix of length plen and
// kind pk. The stack and substitution slices are not cleared afterwards:
// like the child slices, they only point into this state's arena.
func (st *state) demangle(name string, plen, pk int, simple bool, nest int) (string, failure) {
	st.a.reset()
	p := &st.p
	p.init(name, &st.a, nest)
	var root *node
	if pk == prefixLegacy {
		o := oldParser{p: p, subs: st.oldSubs[:0]}
		root = o.topLevel()
		st.oldSubs = o.subs[:0]
		if root == nil {
			p.fail("unexpected character")
		}
	} else {
		p.old = pk == prefixSwift4
		root = p.parse(plen)
	}
	if root == nil {
		err := ErrInvalid
		reason := p.errMsg
		if p.limited {
			err, reason = ErrTooComplex, "mangling too complex"
		}
		return "", failure{err, p.errPos, reason}
	}
	pr := &st.pr
	pr.out = pr.out[:0]
	pr.simple = simple
	pr.depth, pr.visits, pr.bad, pr.limit = 0, 0, false, false
	pr.nest = nest
	pr.print(root, false)
	if pr.bad {
		err, reason := ErrInvalid, "malformed tree"
		if pr.limit {
			err, reason = ErrTooComplex, "demangled name too large"
		}
		return "", failure{err, len(name), reason}
	}
	if len(pr.out) == 0 {
		// A lone module in the simplified style prints as nothing;
		// swift-demangle then shows the mangled name.
		return "", failure{ErrInvalid, len(name), "nothing to print"}
	}
	return string(pr.out), failure{}
}

// controlByte returns the index of the first byte below 0x20 in s, or -1.
// It runs on every input, so it tests eight bytes at a time: a byte b is
// below 0x20 when b-0x20 borrows into its high bit and b's own high bit is
// clear (a borrow only crosses into the next byte from a byte that set its
// high bit this way, so the first flagged byte is exact).
func controlByte(s string) int {
	const lo, hi = 0x2020202020202020, 0x8080808080808080
	i := 0
	for ; i+8 <= len(s); i += 8 {
		w := binary.LittleEndian.Uint64([]byte(s[i : i+8]))
		if (w-lo)&^w&hi != 0 {
			break
		}
	}
	for ; i < len(s); i++ {
		if s[i] < 0x20 {
			return i
		}
	}
	return -1
}

// demangleNested demangles a symbol named inside another one.
func demangleNested(name string, simple bool, nest int) (string, bool) {
	s, f := demangle(name, simple, nest)
	return s, f.sentinel == nil
}
