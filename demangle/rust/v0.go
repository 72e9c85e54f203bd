package rust

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The v0 grammar, from RFC 2603 and rustc's documentation:
//
//	<symbol-name>  = "_R" [<decimal-number>] <path> [<instantiating-crate>] [<vendor-specific-suffix>]
//	<path>         = "C" <identifier>                    crate root
//	               | "M" <impl-path> <type>              <T>
//	               | "X" <impl-path> <type> <path>       <T as Trait>
//	               | "Y" <type> <path>                   <T as Trait>
//	               | "N" <namespace> <path> <identifier> ...::ident
//	               | "I" <path> {<generic-arg>} "E"      ...<T, U>
//	               | <backref>
//	<impl-path>    = [<disambiguator>] <path>
//	<identifier>   = [<disambiguator>] <undisambiguated-identifier>
//	<disambiguator> = "s" <base-62-number>
//	<undisambiguated-identifier> = ["u"] <decimal-number> ["_"] <bytes>
//	<generic-arg>  = <lifetime> | <type> | "K" <const>
//	<lifetime>     = "L" <base-62-number>
//	<binder>       = "G" <base-62-number>
//	<type>         = <basic-type> | <path> | "A" <type> <const> | "S" <type>
//	               | "T" {<type>} "E" | "R" [<lifetime>] <type> | "Q" [<lifetime>] <type>
//	               | "P" <type> | "O" <type> | "F" <fn-sig> | "D" <dyn-bounds> <lifetime>
//	               | <backref>
//	<fn-sig>       = [<binder>] ["U"] ["K" <abi>] {<type>} "E" <type>
//	<abi>          = "C" | <undisambiguated-identifier>
//	<dyn-bounds>   = [<binder>] {<dyn-trait>} "E"
//	<dyn-trait>    = <path> {"p" <undisambiguated-identifier> <type>}
//	<const>        = <type> <const-data> | "p" | <backref>
//	<const-data>   = ["n"] {<hex-digit>} "_"            integers, bool, char
//	               | "e" bytes as hex digits "_"          str
//	               | "R" <const> | "Q" <const>            &, &mut
//	               | "A" {<const>} "E" | "T" {<const>} "E" arrays, tuples
//	               | "V" <path> ("U" | "T" {<const>} "E" | "S" {<identifier> <const>} "E")
//	<backref>      = "B" <base-62-number>                 offset from after "_R"
//
// Names are parsed and printed in one pass, as LLVM and rustc-demangle do: a
// back-reference is printed by parsing again from its target. The printer
// keeps the first error and stops printing after it.

// basicTypes holds the names of the one-letter basic types.
var basicTypes = [26]string{
	'a' - 'a': "i8", 'b' - 'a': "bool", 'c' - 'a': "char", 'd' - 'a': "f64",
	'e' - 'a': "str", 'f' - 'a': "f32", 'h' - 'a': "u8", 'i' - 'a': "isize",
	'j' - 'a': "usize", 'l' - 'a': "i32", 'm' - 'a': "u32", 'n' - 'a': "i128",
	'o' - 'a': "u128", 'p' - 'a': "_", 's' - 'a': "i16", 't' - 'a': "u16",
	'u' - 'a': "()", 'v' - 'a': "...", 'x' - 'a': "i64", 'y' - 'a': "u64",
	'z' - 'a': "!",
}

// basicType returns the name of the basic type c, or "".
func basicType(c byte) string {
	if 'a' <= c && c <= 'z' {
		return basicTypes[c-'a']
	}
	return ""
}

// printer parses and prints a v0 name.
type printer struct {
	sym  string // what follows "_R", without a suffix in the LLVM style
	off  int    // offset of sym in the whole name, for error offsets
	pos  int    // next byte of sym
	llvm bool   // print as LLVM 14 does, rather than as rustc-demangle does

	out      []byte
	max      int // the longest output allowed
	quiet    int // printing is off while > 0 (impl paths, instantiating crate)
	depth    int // current nesting of paths, types and consts
	steps    int // parse steps taken
	maxSteps int
	bound    uint64 // lifetimes bound by enclosing binders
	err      error
}

func newPrinter(sym string, off int, llvm bool, max int) *printer {
	return &printer{
		sym:      sym,
		off:      off,
		llvm:     llvm,
		max:      max,
		maxSteps: 4*max + 1<<16,
		out:      make([]byte, 0, min(max, 2*len(sym)+16)),
	}
}

// fail records a syntax error at the current position, unless there is an
// error already.
func (p *printer) fail(format string, args ...any) {
	if p.err == nil {
		p.err = &SyntaxError{Offset: p.off + p.pos, Msg: fmt.Sprintf(format, args...)}
	}
}

// failWith records err unless there is an error already.
func (p *printer) failWith(err error) {
	if p.err == nil {
		p.err = err
	}
}

func (p *printer) print(s string) {
	if p.quiet > 0 || p.err != nil {
		return
	}
	if len(p.out)+len(s) > p.max {
		p.failWith(fmt.Errorf("%w: output longer than %d bytes", ErrLimit, p.max))
		return
	}
	p.out = append(p.out, s...)
}

func (p *printer) printByte(c byte) {
	if p.quiet > 0 || p.err != nil {
		return
	}
	if len(p.out)+1 > p.max {
		p.failWith(fmt.Errorf("%w: output longer than %d bytes", ErrLimit, p.max))
		return
	}
	p.out = append(p.out, c)
}

// enter starts a nested path, type or const; it reports false, having
// recorded an error, if that would exceed a limit. Each successful enter is
// paired with a leave.
func (p *printer) enter() bool {
	if p.err != nil {
		return false
	}
	if p.depth >= MaxDepth {
		p.failWith(fmt.Errorf("%w: nested deeper than %d at offset %d", ErrLimit, MaxDepth, p.off+p.pos))
		return false
	}
	p.steps++
	if p.steps > p.maxSteps {
		p.failWith(fmt.Errorf("%w: more than %d parse steps", ErrLimit, p.maxSteps))
		return false
	}
	p.depth++
	return true
}

func (p *printer) leave() { p.depth-- }

func (p *printer) peek() byte {
	if p.err != nil || p.pos >= len(p.sym) {
		return 0
	}
	return p.sym[p.pos]
}

// next consumes and returns the next byte; at the end of the name it
// records an error and returns 0.
func (p *printer) next() byte {
	if p.err != nil {
		return 0
	}
	if p.pos >= len(p.sym) {
		p.fail("unexpected end of name")
		return 0
	}
	c := p.sym[p.pos]
	p.pos++
	return c
}

func (p *printer) eat(c byte) bool {
	if p.err == nil && p.pos < len(p.sym) && p.sym[p.pos] == c {
		p.pos++
		return true
	}
	return false
}

// base62 parses <base-62-number> = {<0-9a-zA-Z>} "_", whose value is one
// more than the digits' ("_" is 0, "0_" is 1).
func (p *printer) base62() uint64 {
	if p.eat('_') {
		return 0
	}
	start := p.pos
	var v uint64
	for {
		c := p.next()
		var d uint64
		switch {
		case c == '_':
			if v == ^uint64(0) {
				p.fail("base-62 number overflows")
				return 0
			}
			return v + 1
		case '0' <= c && c <= '9':
			d = uint64(c - '0')
		case 'a' <= c && c <= 'z':
			d = uint64(c-'a') + 10
		case 'A' <= c && c <= 'Z':
			d = uint64(c-'A') + 36
		default:
			if p.err == nil {
				p.pos--
				p.fail("invalid base-62 digit %q", c)
			}
			return 0
		}
		if v > (^uint64(0)-d)/62 {
			p.pos = start
			p.fail("base-62 number overflows")
			return 0
		}
		v = v*62 + d
	}
}

// optBase62 parses [tag <base-62-number>], whose value is 0 when absent and
// one more than the number's otherwise.
func (p *printer) optBase62(tag byte) uint64 {
	if !p.eat(tag) {
		return 0
	}
	v := p.base62()
	if v == ^uint64(0) {
		p.fail("base-62 number overflows")
		return 0
	}
	return v + 1
}

// decimal parses <decimal-number> = "0" | <1-9> {<0-9>}.
func (p *printer) decimal() uint64 {
	c := p.peek()
	if c < '0' || c > '9' {
		p.fail("expected a decimal number, found %q", c)
		return 0
	}
	if c == '0' {
		p.pos++
		return 0
	}
	var v uint64
	for p.pos < len(p.sym) && isDigit(p.sym[p.pos]) {
		d := uint64(p.sym[p.pos] - '0')
		if v > (^uint64(0)-d)/10 {
			p.fail("decimal number overflows")
			return 0
		}
		v = v*10 + d
		p.pos++
	}
	return v
}

// ident is an undisambiguated identifier.
type ident struct {
	name     string
	punycode bool
}

// ident parses <undisambiguated-identifier>.
func (p *printer) ident() ident {
	start := p.pos
	puny := p.eat('u')
	n := p.decimal()
	p.eat('_')
	if p.err != nil {
		return ident{}
	}
	if left := len(p.sym) - p.pos; n > uint64(left) {
		p.pos = start
		p.fail("identifier of %d bytes but %d left", n, left)
		return ident{}
	}
	s := p.sym[p.pos : p.pos+int(n)]
	if p.llvm {
		// LLVM accepts only the characters of Rust identifiers, the
		// punycode delimiter among them.
		for i := 0; i < len(s); i++ {
			if !isIdentByte(s[i]) {
				p.pos += i
				p.fail("invalid identifier byte %q", s[i])
				return ident{}
			}
		}
	}
	if puny && !p.llvm {
		// rustc-demangle requires deltas after the last '_'.
		if i := strings.LastIndexByte(s, '_'); i == len(s)-1 || s == "" {
			p.fail("punycode identifier %q without deltas", s)
			return ident{}
		}
	}
	p.pos += int(n)
	return ident{s, puny}
}

// printIdent prints an identifier, decoding punycode.
func (p *printer) printIdent(id ident) {
	if p.quiet > 0 || p.err != nil {
		// Not printing: not decoding either, as in LLVM.
		return
	}
	if !id.punycode {
		p.print(id.name)
		return
	}
	ascii, enc := "", id.name
	if i := strings.LastIndexByte(id.name, '_'); i >= 0 {
		ascii, enc = id.name[:i], id.name[i+1:]
	}
	if p.llvm {
		s, ok := decodePunycode(ascii, enc, 4096)
		if !ok {
			p.fail("invalid punycode identifier %q", id.name)
			return
		}
		p.print(s)
		return
	}
	// rustc-demangle decodes up to 128 characters and otherwise writes
	// the identifier as standard punycode in braces.
	if s, ok := decodePunycode(ascii, enc, 128); ok {
		p.print(s)
		return
	}
	p.print("punycode{")
	if ascii != "" {
		p.print(ascii)
		p.print("-")
	}
	p.print(enc)
	p.print("}")
}

// backref parses the number of a <backref> whose 'B' has been consumed and,
// when printing, calls f with the position moved to its target.
func (p *printer) backref(f func()) {
	start := p.pos - 1
	target := p.base62()
	if p.err != nil {
		return
	}
	// rustc-demangle wants the target before the 'B'; LLVM only before
	// the end of the back-reference, which when printing makes no
	// difference: a back-reference to itself recurses until MaxDepth.
	limit := start
	if p.llvm {
		limit = p.pos
	}
	if target >= uint64(limit) {
		p.pos = start
		p.fail("back-reference to offset %d, not before itself", target)
		return
	}
	if p.quiet > 0 {
		// Neither LLVM nor rustc-demangle follows back-references
		// when not printing.
		return
	}
	if !p.llvm {
		// rustc-demangle counts the jump as a level of nesting.
		if !p.enter() {
			return
		}
		defer p.leave()
	}
	saved := p.pos
	p.pos = int(target)
	f()
	p.pos = saved
}

// path parses and prints a <path>. In a value path generic arguments are
// written "::<…>", in a type "<…>". With open set, the generic arguments of
// an 'I' path are left open (for a dyn trait's associated types) and path
// reports whether they were.
func (p *printer) path(inValue, open bool) (opened bool) {
	if !p.enter() {
		return false
	}
	defer p.leave()
	switch tag := p.next(); tag {
	case 'C':
		p.optBase62('s')
		p.printIdent(p.ident())
	case 'M', 'X', 'Y':
		if tag != 'Y' {
			// The impl's own path is not printed.
			p.quiet++
			p.optBase62('s')
			p.path(inValue, false)
			p.quiet--
		}
		p.print("<")
		p.typ()
		if tag != 'M' {
			p.print(" as ")
			p.path(false, false)
		}
		p.print(">")
	case 'N':
		ns := p.next()
		if !isLower(ns) && !isUpper(ns) {
			if p.err == nil {
				p.pos--
				p.fail("invalid namespace %q", ns)
			}
			return false
		}
		p.path(inValue, false)
		dis := p.optBase62('s')
		id := p.ident()
		if p.err != nil {
			return false
		}
		if isUpper(ns) {
			p.print("::{")
			switch ns {
			case 'C':
				p.print("closure")
			case 'S':
				p.print("shim")
			default:
				p.printByte(ns)
			}
			if id.name != "" {
				p.print(":")
				p.printIdent(id)
			}
			p.print("#")
			p.print(strconv.FormatUint(dis, 10))
			p.print("}")
		} else if id.name != "" {
			p.print("::")
			p.printIdent(id)
		}
	case 'I':
		p.path(inValue, false)
		if inValue {
			p.print("::")
		}
		p.print("<")
		for i := 0; p.err == nil && !p.eat('E'); i++ {
			if i > 0 {
				p.print(", ")
			}
			p.genericArg()
		}
		if open {
			return true
		}
		p.print(">")
	case 'B':
		p.backref(func() { opened = p.path(inValue, open) })
		return opened
	default:
		if p.err == nil {
			p.pos--
			p.fail("invalid path tag %q", tag)
		}
	}
	return false
}

// genericArg parses and prints a <generic-arg>.
func (p *printer) genericArg() {
	switch {
	case p.eat('L'):
		p.lifetime(p.base62())
	case p.eat('K'):
		p.constant(false)
	default:
		p.typ()
	}
}

// lifetime prints the lifetime with de Bruijn index i: 0 is the erased
// lifetime '_, 1 the innermost bound one.
func (p *printer) lifetime(i uint64) {
	if p.err != nil {
		return
	}
	if i == 0 {
		p.print("'_")
		return
	}
	if !p.llvm && p.quiet > 0 {
		// rustc-demangle does not track bound lifetimes when not
		// printing.
		return
	}
	if i-1 >= p.bound {
		p.fail("lifetime %d not bound", i)
		return
	}
	depth := p.bound - i
	switch {
	case depth < 26:
		p.print("'")
		p.printByte(byte('a' + depth))
	case p.llvm:
		p.print("'z")
		p.print(strconv.FormatUint(depth-26+1, 10))
	default:
		p.print("'_")
		p.print(strconv.FormatUint(depth, 10))
	}
}

// binder parses an optional <binder> and prints its lifetimes, which stay
// bound until the caller restores p.bound.
func (p *printer) binder() {
	n := p.optBase62('G')
	if p.err != nil || n == 0 {
		return
	}
	if p.llvm {
		// LLVM rejects a binder that the rest of the name is too short
		// to use, to bound its output.
		if n >= uint64(len(p.sym))-p.bound {
			p.fail("binder of %d lifetimes", n)
			return
		}
	} else if p.quiet > 0 {
		return
	} else if n > uint64(p.max) {
		p.failWith(fmt.Errorf("%w: binder of %d lifetimes", ErrLimit, n))
		return
	}
	p.print("for<")
	for i := uint64(0); i < n && p.err == nil; i++ {
		if i > 0 {
			p.print(", ")
		}
		p.bound++
		p.lifetime(1)
	}
	p.print("> ")
}

// typ parses and prints a <type>.
func (p *printer) typ() {
	if p.err != nil {
		return
	}
	if !p.llvm {
		// rustc-demangle does not count basic types as nesting.
		if t := basicType(p.peek()); t != "" {
			p.pos++
			p.print(t)
			return
		}
	}
	if !p.enter() {
		return
	}
	defer p.leave()
	start := p.pos
	tag := p.next()
	if t := basicType(tag); t != "" {
		p.print(t)
		return
	}
	switch tag {
	case 'A', 'S':
		p.print("[")
		p.typ()
		if tag == 'A' {
			p.print("; ")
			p.constant(true)
		}
		p.print("]")
	case 'T':
		p.print("(")
		n := 0
		for ; p.err == nil && !p.eat('E'); n++ {
			if n > 0 {
				p.print(", ")
			}
			p.typ()
		}
		if n == 1 {
			p.print(",")
		}
		p.print(")")
	case 'R', 'Q':
		p.print("&")
		if p.eat('L') {
			if lt := p.base62(); lt != 0 {
				p.lifetime(lt)
				p.print(" ")
			}
		}
		if tag == 'Q' {
			p.print("mut ")
		}
		p.typ()
	case 'P':
		p.print("*const ")
		p.typ()
	case 'O':
		p.print("*mut ")
		p.typ()
	case 'F':
		p.fnSig()
	case 'D':
		p.dynBounds()
		if !p.eat('L') {
			p.fail("expected the lifetime of a dyn type")
			return
		}
		if lt := p.base62(); lt != 0 {
			p.print(" + ")
			p.lifetime(lt)
		}
	case 'B':
		p.backref(p.typ)
	default:
		p.pos = start
		p.path(false, false)
	}
}

// fnSig parses and prints a <fn-sig>.
func (p *printer) fnSig() {
	bound := p.bound
	defer func() { p.bound = bound }()
	p.binder()
	if p.eat('U') {
		p.print("unsafe ")
	}
	if p.eat('K') {
		p.print("extern \"")
		if p.eat('C') {
			p.print("C")
		} else {
			id := p.ident()
			if p.err == nil && (id.punycode || !p.llvm && id.name == "") {
				p.fail("invalid ABI %q", id.name)
			}
			// A '-' in the ABI's name is mangled as '_'.
			p.print(strings.ReplaceAll(id.name, "_", "-"))
		}
		p.print("\" ")
	}
	p.print("fn(")
	for i := 0; p.err == nil && !p.eat('E'); i++ {
		if i > 0 {
			p.print(", ")
		}
		p.typ()
	}
	p.print(")")
	if !p.eat('u') {
		p.print(" -> ")
		p.typ()
	}
}

// dynBounds parses and prints <dyn-bounds>.
func (p *printer) dynBounds() {
	bound := p.bound
	defer func() { p.bound = bound }()
	p.print("dyn ")
	p.binder()
	for i := 0; p.err == nil && !p.eat('E'); i++ {
		if i > 0 {
			p.print(" + ")
		}
		open := p.path(false, true)
		for p.err == nil && p.eat('p') {
			if open {
				p.print(", ")
			} else {
				p.print("<")
				open = true
			}
			id := p.ident()
			if p.llvm {
				// LLVM 14 prints the name as it is, even punycode.
				p.print(id.name)
			} else {
				p.printIdent(id)
			}
			p.print(" = ")
			p.typ()
		}
		if open {
			p.print(">")
		}
	}
}

// constant parses and prints a <const>. In a value (an array length, or an
// element of a const) rustc-demangle needs no braces around a const that is
// not a literal; as a generic argument it does.
func (p *printer) constant(inValue bool) {
	if p.llvm {
		p.constLLVM()
		return
	}
	if !p.enter() {
		return
	}
	defer p.leave()
	tag := p.next()
	braced := false
	brace := func() {
		if !inValue {
			braced = true
			p.print("{")
		}
	}
	switch tag {
	case 'p':
		p.print("_")
	case 'h', 't', 'm', 'y', 'o', 'j':
		p.constUint()
	case 'a', 's', 'l', 'x', 'n', 'i':
		if p.eat('n') {
			p.print("-")
		}
		p.constUint()
	case 'b':
		switch v, ok := p.hexUint(); {
		case !ok:
		case v == 0:
			p.print("false")
		case v == 1:
			p.print("true")
		default:
			p.fail("bool const %d", v)
		}
	case 'c':
		start := p.pos
		v, ok := p.hexUint()
		if !ok {
			return
		}
		if v > utf8.MaxRune || !utf8.ValidRune(rune(v)) {
			p.pos = start
			p.fail("char const %#x is not a Unicode scalar value", v)
			return
		}
		p.print(quoteRust('\'', string(rune(v))))
	case 'e':
		// The str itself; a literal has type &str, hence the '*'.
		brace()
		p.print("*")
		p.constStr()
	case 'R', 'Q':
		if tag == 'R' && p.eat('e') {
			p.constStr()
			break
		}
		brace()
		if tag == 'R' {
			p.print("&")
		} else {
			p.print("&mut ")
		}
		p.constant(true)
	case 'A', 'T':
		brace()
		if tag == 'A' {
			p.print("[")
		} else {
			p.print("(")
		}
		n := 0
		for ; p.err == nil && !p.eat('E'); n++ {
			if n > 0 {
				p.print(", ")
			}
			p.constant(true)
		}
		if tag == 'A' {
			p.print("]")
		} else {
			if n == 1 {
				p.print(",")
			}
			p.print(")")
		}
	case 'V':
		brace()
		p.path(true, false)
		switch kind := p.next(); kind {
		case 'U':
		case 'T':
			p.print("(")
			for i := 0; p.err == nil && !p.eat('E'); i++ {
				if i > 0 {
					p.print(", ")
				}
				p.constant(true)
			}
			p.print(")")
		case 'S':
			p.print(" { ")
			for i := 0; p.err == nil && !p.eat('E'); i++ {
				if i > 0 {
					p.print(", ")
				}
				p.optBase62('s')
				p.printIdent(p.ident())
				p.print(": ")
				p.constant(true)
			}
			p.print(" }")
		default:
			if p.err == nil {
				p.pos--
				p.fail("invalid ADT const kind %q", kind)
			}
		}
	case 'B':
		p.backref(func() { p.constant(inValue) })
	default:
		if p.err == nil {
			p.pos--
			p.fail("invalid const type %q", tag)
		}
	}
	if braced {
		p.print("}")
	}
}

// hexNibbles parses {<hex-digit>} "_" and returns the digits.
func (p *printer) hexNibbles() (string, bool) {
	start := p.pos
	for {
		c := p.next()
		switch {
		case c == '_':
			return p.sym[start : p.pos-1], true
		case isHex(c):
		default:
			if p.err == nil {
				p.pos--
				p.fail("invalid hex digit %q", c)
			}
			return "", false
		}
	}
}

// hexUint parses hex digits as rustc-demangle does: leading zeros are
// allowed and the value must fit in 64 bits.
func (p *printer) hexUint() (uint64, bool) {
	start := p.pos
	h, ok := p.hexNibbles()
	if !ok {
		return 0, false
	}
	v, ok := parseHex(h)
	if !ok {
		p.pos = start
		p.fail("hex number %s overflows", h)
	}
	return v, ok
}

// parseHex parses hex digits, ignoring leading zeros, if they fit in 64 bits.
func parseHex(h string) (uint64, bool) {
	h = strings.TrimLeft(h, "0")
	if len(h) > 16 {
		return 0, false
	}
	var v uint64
	for i := 0; i < len(h); i++ {
		v = v<<4 | uint64(hexValue(h[i]))
	}
	return v, true
}

// constUint prints an unsigned integer const as rustc-demangle does: in
// decimal if it fits in 64 bits, else as the hex digits.
func (p *printer) constUint() {
	h, ok := p.hexNibbles()
	if !ok {
		return
	}
	if v, ok := parseHex(h); ok {
		p.print(strconv.FormatUint(v, 10))
		return
	}
	p.print("0x")
	p.print(h)
}

// constStr prints the hex-encoded UTF-8 bytes of a str const as a string
// literal.
func (p *printer) constStr() {
	start := p.pos
	h, ok := p.hexNibbles()
	if !ok {
		return
	}
	if len(h)%2 != 0 {
		p.pos = start
		p.fail("odd number of hex digits in a str const")
		return
	}
	b := make([]byte, len(h)/2)
	for i := range b {
		b[i] = hexValue(h[2*i])<<4 | hexValue(h[2*i+1])
	}
	if !utf8.Valid(b) {
		p.pos = start
		p.fail("str const is not UTF-8")
		return
	}
	p.print(quoteRust('"', string(b)))
}

// constLLVM parses and prints a <const> as LLVM 14 does: integers, bool,
// char and the placeholder only.
func (p *printer) constLLVM() {
	if !p.enter() {
		return
	}
	defer p.leave()
	start := p.pos
	switch tag := p.next(); tag {
	case 'a', 's', 'l', 'x', 'n', 'i', 'h', 't', 'm', 'y', 'o', 'j':
		if p.eat('n') {
			p.print("-")
		}
		h, v := p.hexLLVM()
		if p.err != nil {
			return
		}
		if len(h) <= 16 {
			p.print(strconv.FormatUint(v, 10))
		} else {
			p.print("0x")
			p.print(h)
		}
	case 'b':
		switch h, _ := p.hexLLVM(); {
		case p.err != nil:
		case h == "0":
			p.print("false")
		case h == "1":
			p.print("true")
		default:
			p.pos = start + 1
			p.fail("bool const %s", h)
		}
	case 'c':
		h, v := p.hexLLVM()
		if p.err != nil {
			return
		}
		if len(h) > 6 {
			p.pos = start + 1
			p.fail("char const %s has more than 6 hex digits", h)
			return
		}
		p.print(quoteLLVMChar(v))
	case 'p':
		p.print("_")
	case 'B':
		p.backref(p.constLLVM)
	case 0:
	default:
		p.pos = start
		switch tag {
		case 'e', 'R', 'Q', 'A', 'T', 'V':
			p.failWith(fmt.Errorf("%w: const %q at offset %d", ErrUnsupported, tag, p.off+start))
		default:
			p.fail("invalid const type %q", tag)
		}
	}
}

// hexLLVM parses <hex-number> = "0_" | <1-9a-f> {<0-9a-f>} "_" as LLVM 14
// does: no leading zeros, no empty number, and a value that wraps when it
// has more than 16 digits.
func (p *printer) hexLLVM() (string, uint64) {
	start := p.pos
	if !isHex(p.peek()) {
		p.fail("expected a hex digit")
		return "", 0
	}
	if p.eat('0') {
		if !p.eat('_') {
			p.fail("hex number with a leading zero")
		}
		return "0", 0
	}
	var v uint64
	for p.err == nil && !p.eat('_') {
		c := p.next()
		if !isHex(c) {
			if p.err == nil {
				p.pos--
				p.fail("invalid hex digit %q", c)
			}
			return "", 0
		}
		v = v<<4 | uint64(hexValue(c))
	}
	if p.err != nil {
		return "", 0
	}
	return p.sym[start : p.pos-1], v
}

// quoteLLVMChar writes a char const as LLVM 14 does: a few C escapes,
// printable ASCII as it is, anything else as \u{hex}, valid or not.
func quoteLLVMChar(v uint64) string {
	switch v {
	case '\t':
		return `'\t'`
	case '\r':
		return `'\r'`
	case '\n':
		return `'\n'`
	case '\\':
		return `'\\'`
	case '"':
		return `'"'`
	case '\'':
		return `'\''`
	}
	if 0x20 <= v && v < 0x7f {
		return "'" + string(rune(v)) + "'"
	}
	return `'\u{` + strconv.FormatUint(v, 16) + `}'`
}

// quoteRust quotes s with quote as Rust's escape_debug does, except that the
// other kind of quote is not escaped: the way rustc-demangle writes char and
// str consts.
func quoteRust(quote rune, s string) string {
	var b strings.Builder
	b.WriteRune(quote)
	for _, r := range s {
		switch {
		case r == '\'' || r == '"':
			if r == quote {
				b.WriteByte('\\')
			}
			b.WriteRune(r)
		case r == 0:
			b.WriteString(`\0`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\\':
			b.WriteString(`\\`)
		case isGraphemeExtend(r) || !unicode.IsPrint(r):
			b.WriteString(`\u{`)
			b.WriteString(strconv.FormatUint(uint64(r), 16))
			b.WriteString("}")
		default:
			b.WriteRune(r)
		}
	}
	b.WriteRune(quote)
	return b.String()
}

// isGraphemeExtend reports whether r has Unicode's Grapheme_Extend property,
// whose characters escape_debug escapes.
func isGraphemeExtend(r rune) bool {
	return unicode.In(r, unicode.Mn, unicode.Me, unicode.Other_Grapheme_Extend)
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }
func isLower(c byte) bool { return 'a' <= c && c <= 'z' }
func isUpper(c byte) bool { return 'A' <= c && c <= 'Z' }
func isHex(c byte) bool   { return isDigit(c) || 'a' <= c && c <= 'f' }

func isIdentByte(c byte) bool {
	return isDigit(c) || isLower(c) || isUpper(c) || c == '_'
}

// hexValue returns the value of a hex digit of either case.
func hexValue(c byte) byte {
	switch {
	case isDigit(c):
		return c - '0'
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10
	}
	return 0
}

// demangleV0LLVM demangles a v0 name as LLVM 14's rustDemangle does: the
// name ends at its first '.', which starts a suffix printed as
// " (.suffix)"; an instantiating crate after the path is parsed but not
// printed; and a version number after "_R" is not accepted.
func demangleV0LLVM(name string, max int) (string, error) {
	sym, suffix := name[2:], ""
	if i := strings.IndexByte(sym, '.'); i >= 0 {
		sym, suffix = sym[:i], sym[i:]
	}
	p := newPrinter(sym, 2, true, max)
	p.path(true, false)
	if p.err == nil && p.pos < len(p.sym) {
		p.quiet++
		p.path(true, false)
		p.quiet--
	}
	if p.err == nil && p.pos < len(p.sym) {
		p.fail("unexpected %q after the path", p.sym[p.pos:])
	}
	if suffix != "" {
		p.print(" (")
		p.print(suffix)
		p.print(")")
	}
	if p.err != nil {
		return "", p.err
	}
	return string(p.out), nil
}

// demangleV0Full demangles a v0 name, inner being what follows its prefix,
// as rustc-demangle does, and returns what follows the path and the
// optional instantiating crate.
func demangleV0Full(inner string, off, max int) (out, rest string, err error) {
	if inner == "" || !isUpper(inner[0]) {
		// A path starts with an upper-case tag; a leading decimal
		// number would be an encoding version, and none but the
		// implicit 0 exists.
		return "", "", &SyntaxError{Offset: off, Msg: "expected a path"}
	}
	for i := 0; i < len(inner); i++ {
		if inner[i] >= utf8.RuneSelf {
			return "", "", &SyntaxError{Offset: off + i, Msg: "non-ASCII byte"}
		}
	}
	p := newPrinter(inner, off, false, max)
	p.path(true, false)
	if p.err == nil && isUpper(p.peek()) {
		p.quiet++
		p.path(true, false)
		p.quiet--
	}
	if p.err != nil {
		return "", "", p.err
	}
	return string(p.out), inner[p.pos:], nil
}
