package itanium

import "strings"

// Style selects how a name is written; see the package comment.
type Style uint8

const (
	LLVM  Style = iota // as llvm-cxxfilt-14 writes it
	Full               // as GNU c++filt writes it
	Short              // the qualified name alone, GNU-style
)

// Bounds on the work done for one name.
const (
	MaxDepth  = 200     // nesting of the grammar, and of the printed tree
	MaxNodes  = 1 << 14 // nodes of the arena
	MaxOutput = 1 << 16 // bytes of output

	// maxSteps bounds the nodes visited by the printer: substitutions
	// let a short name print a subtree many times, and a subtree of
	// empty packs prints nothing, so the output bound alone does not
	// bound the time.
	maxSteps = 1 << 18
)

type kind uint8

const (
	kName       kind = iota // text
	kNested                 // a::b
	kTemplate               // a<list>
	kAbiTag                 // a[abi:text]
	kSpecialSub             // a standard abbreviation: flags is the letter, expanded if b == 1
	kCtor                   // constructor (destructor if flags&ctorDtor) of class a; b is an inherited base or -1
	kOperator               // operator text
	kConversion             // operator a
	kBuiltin                // text; flags&builtinNullptr for Dn
	kQual                   // a with the cv-qualifiers in flags
	kPointer                // a*
	kRef                    // a& (flags&refL) or a&& (flags&refR)
	kPtrMem                 // member type b of class a
	kFunc                   // function type returning a with parameters list, qualifiers flags
	kArray                  // array of a, dimension text
	kEncoding               // function b returning a (or -1), parameters list, qualifiers flags
	kLocal                  // entity b in function a
	kLambda                 // closure type: parameters list, number text
	kUnnamed                // unnamed type, number text
	kPack                   // template argument pack: list
	kParamPack              // template parameter that names the pack a
	kExpansion              // pack expansion of a
	kFwdRef                 // forward template reference, index lo, resolved to a
	kLiteral                // integer or bool literal (type code flags) or enumeration literal (type a): value text
	kSpecial                // special name: text selects the prefix, a the entity
	kStd                    // std::a
	kAddress                // &a, a function's address
)

// Qualifier and flag bits of node.flags.
const (
	qConst    = 1 << iota
	qVolatile // also ctorDtor for kCtor, builtinNullptr for kBuiltin
	qRestrict
	refL
	refR
	localEnc // kEncoding: the function of a local name

	ctorDtor       = qVolatile
	builtinNullptr = qVolatile
)

type node struct {
	kind   kind
	flags  uint8
	a, b   int32
	lo, hi int32 // a list in Demangler.lists
	text   string
}

// A nameState carries what the name of an encoding tells about the
// function's type.
type nameState struct {
	ctorDtorConv bool  // a constructor, destructor or conversion: no return type
	endsWithArgs bool  // a template: a return type is mangled
	quals        uint8 // of a method: cv and ref qualifiers
}

// A Demangler demangles names, keeping its memory between calls. The zero
// value is ready to use. It is not safe for concurrent use.
type Demangler struct {
	s      string
	pos    int
	depth  int
	failed bool

	nodes []node
	lists []int32
	stack []int32 // list items under construction
	subs  []int32
	fwd   []int32 // unresolved forward template references

	// subsTable is, for each substitution, the template parameter table
	// (tableID) whose parameters it uses, or -1. The peers resolve a
	// parameter taken from another table (a lambda's function's, say)
	// differently: such substitutions are declined.
	subsTable []int32
	tpUses    int // template parameters resolved so far

	// The template parameter table: the list lo..hi, if tpSet.
	tpLo, tpHi int32
	tpSet      bool
	// tagDepth counts the template argument lists being parsed whose
	// arguments will form the table: a parameter there has no meaning
	// that both peers agree on.
	tagDepth int

	inConv   bool // parsing the type of a conversion operator
	convNest int  // template argument lists and nested names entered since
	fwdOK    bool // template parameters may refer forward

	// subsLimit, if not -1, is the size of the substitution table beyond
	// which the peers number entries differently (after an inheriting
	// constructor's base).
	subsLimit int

	p   printer
	buf []byte // Demangle's output, kept for its memory
}

func (d *Demangler) fail() int32 {
	d.failed = true
	return -1
}

func (d *Demangler) peek() byte {
	if d.pos < len(d.s) {
		return d.s[d.pos]
	}
	return 0
}

func (d *Demangler) peekAt(i int) byte {
	if d.pos+i < len(d.s) {
		return d.s[d.pos+i]
	}
	return 0
}

func (d *Demangler) consume(c byte) bool {
	if d.pos < len(d.s) && d.s[d.pos] == c {
		d.pos++
		return true
	}
	return false
}

func (d *Demangler) add(n node) int32 {
	if len(d.nodes) >= MaxNodes {
		return d.fail()
	}
	d.nodes = append(d.nodes, n)
	return int32(len(d.nodes) - 1)
}

func (d *Demangler) leaf(k kind, text string) int32 {
	return d.add(node{kind: k, a: -1, b: -1, text: text})
}

func (d *Demangler) unary(k kind, a int32, flags uint8) int32 {
	if a < 0 {
		return d.fail()
	}
	return d.add(node{kind: k, flags: flags, a: a, b: -1})
}

func (d *Demangler) binary(k kind, a, b int32) int32 {
	if a < 0 || b < 0 {
		return d.fail()
	}
	return d.add(node{kind: k, a: a, b: b})
}

// endList moves the items pushed on the stack since mark into a list and
// returns its bounds.
func (d *Demangler) endList(mark int) (int32, int32) {
	lo := int32(len(d.lists))
	d.lists = append(d.lists, d.stack[mark:]...)
	d.stack = d.stack[:mark]
	return lo, int32(len(d.lists))
}

// enter counts a level of recursion and reports whether another is
// allowed; leave undoes it.
func (d *Demangler) enter() bool {
	d.depth++
	if d.depth > MaxDepth || d.failed {
		d.failed = true
		return false
	}
	return true
}

func (d *Demangler) leave() { d.depth-- }

func (d *Demangler) reset(s string) {
	d.s, d.pos, d.depth, d.failed = s, 0, 0, false
	d.nodes, d.lists, d.stack, d.subs, d.fwd = d.nodes[:0], d.lists[:0], d.stack[:0], d.subs[:0], d.fwd[:0]
	d.subsTable, d.tpUses = d.subsTable[:0], 0
	d.tpSet, d.tagDepth = false, 0
	d.inConv, d.convNest, d.fwdOK = false, 0, false
	d.subsLimit = -1
}

// Demangle demangles name in the given style. It reports false if the
// name is malformed, uses a construct this package does not implement, or
// exceeds a bound; package demangle then uses its complete demangler.
func (d *Demangler) Demangle(name string, style Style) (string, bool) {
	b, ok := d.Append(d.buf[:0], name, style)
	d.buf = b[:0]
	if !ok {
		return "", false
	}
	return string(b), true
}

// Append is Demangle writing to the end of dst.
func (d *Demangler) Append(dst []byte, name string, style Style) ([]byte, bool) {
	root, suffix, ok := d.parse(name, style)
	if !ok {
		return dst, false
	}
	return d.print(dst, root, suffix, style)
}

// parse reads a whole name, returning the root node and the clone suffix.
func (d *Demangler) parse(name string, style Style) (int32, string, bool) {
	block := false
	switch {
	case strings.HasPrefix(name, "___Z"):
		// Clang's block invocation functions, which all styles read.
		name, block = name[4:], true
	case strings.HasPrefix(name, "_ZGT") && style == LLVM:
		// GCC's transaction clones, which LLVM 14 leaves alone.
		return -1, "", false
	case strings.HasPrefix(name, "_Z"):
		name = name[2:]
	case strings.HasPrefix(name, "__Z") && style == Short:
		// Mach-O's extra underscore, which only the Short style takes off.
		name = name[3:]
	default:
		return -1, "", false
	}
	suffix := ""
	if i := strings.IndexByte(name, '.'); i >= 0 && style == LLVM && !block {
		// LLVM 14 takes everything from the first '.' for a clone
		// suffix, even inside an identifier.
		name, suffix = name[:i], name[i:]
	}
	d.reset(name)
	root := d.encoding()
	if d.failed || root < 0 {
		return -1, "", false
	}
	rest := d.s[d.pos:]
	if block {
		return d.blockInvoke(root, rest)
	}
	if rest == "" || style == LLVM {
		return root, suffix, rest == ""
	}
	if rest[0] != '.' {
		return -1, "", false
	}
	// GNU reads clone suffixes only after a function's parameters.
	if !isGNUCloneSuffix(rest) || d.nodes[root].kind != kEncoding {
		return -1, "", false
	}
	return root, rest, true
}

// blockInvoke reads the rest of a block invocation function's name,
// "_block_invoke" and an optional number, and makes its special name.
func (d *Demangler) blockInvoke(enc int32, rest string) (int32, string, bool) {
	rest, ok := strings.CutPrefix(rest, "_block_invoke")
	if !ok {
		return -1, "", false
	}
	if r, ok := strings.CutPrefix(rest, "_"); ok {
		if r == "" || !isDigit(r[0]) {
			return -1, "", false
		}
		rest = r
	}
	for rest != "" && isDigit(rest[0]) {
		rest = rest[1:]
	}
	if rest != "" && rest[0] != '.' {
		return -1, "", false
	}
	n := d.add(node{kind: kSpecial, a: enc, b: -1, text: "invocation function for block in "})
	return n, "", n >= 0
}

// isGNUCloneSuffix reports whether s is a sequence of clone suffixes as
// GNU c++filt reads them: ".name" ('.' and lower-case letters, digits and
// '_'), each followed by any number of ".digits".
func isGNUCloneSuffix(s string) bool {
	for s != "" {
		if len(s) < 2 || s[0] != '.' || !isCloneByte(s[1]) {
			return false
		}
		i := 2
		for i < len(s) && isCloneByte(s[i]) {
			i++
		}
		for i+1 < len(s) && s[i] == '.' && isDigit(s[i+1]) {
			i += 2
			for i < len(s) && isDigit(s[i]) {
				i++
			}
		}
		s = s[i:]
	}
	return true
}

func isCloneByte(c byte) bool {
	return 'a' <= c && c <= 'z' || isDigit(c) || c == '_'
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// atEncodingEnd reports whether the parser is at a character that can
// follow an encoding but cannot start a type.
func (d *Demangler) atEncodingEnd() bool {
	c := d.peek()
	return c == 0 || c == 'E' || c == '.' || c == '_'
}

// encoding reads
//
//	<encoding> ::= <name> [<bare-function-type>] | <special-name>
func (d *Demangler) encoding() int32 {
	if !d.enter() {
		return -1
	}
	defer d.leave()
	if c := d.peek(); c == 'T' || c == 'G' {
		return d.specialName()
	}
	// The template parameters of an encoding are its own.
	tpLo, tpHi, tpSet, tagDepth := d.tpLo, d.tpHi, d.tpSet, d.tagDepth
	defer func() { d.tpLo, d.tpHi, d.tpSet, d.tagDepth = tpLo, tpHi, tpSet, tagDepth }()
	d.tpSet, d.tagDepth = false, 0

	var st nameState
	fwdMark := len(d.fwd)
	name := d.name(&st)
	if name < 0 {
		return d.fail()
	}
	for _, f := range d.fwd[fwdMark:] {
		n := &d.nodes[f]
		i := n.lo
		if !d.tpSet || i >= d.tpHi-d.tpLo {
			return d.fail()
		}
		n.a = d.lists[d.tpLo+i]
	}
	d.fwd = d.fwd[:fwdMark]
	if d.atEncodingEnd() {
		if st.quals != 0 {
			// A qualified name that is not a function's.
			return d.fail()
		}
		return name
	}
	if !st.endsWithArgs {
		// The parameters of a function that is not a template refer
		// to no template parameters (GNU fails where LLVM takes
		// those of its class).
		d.tpSet = false
	}
	ret := int32(-1)
	if !st.ctorDtorConv && st.endsWithArgs {
		if ret = d.typ(); ret < 0 {
			return -1
		}
		if k := d.nodes[ret].kind; k == kArray || k == kFunc {
			// No function returns an array or a function.
			return d.fail()
		}
	}
	mark := len(d.stack)
	if !d.consume('v') {
		for {
			t := d.typ()
			if t < 0 {
				return -1
			}
			d.stack = append(d.stack, t)
			if d.atEncodingEnd() {
				break
			}
		}
	}
	lo, hi := d.endList(mark)
	return d.add(node{kind: kEncoding, flags: st.quals, a: ret, b: name, lo: lo, hi: hi})
}

// specialName reads the special names this package implements.
func (d *Demangler) specialName() int32 {
	c, c1 := d.peek(), d.peekAt(1)
	d.pos += 2
	var text string
	switch {
	case c == 'T' && c1 == 'V':
		text = "vtable for "
	case c == 'T' && c1 == 'T':
		text = "VTT for "
	case c == 'T' && c1 == 'I':
		text = "typeinfo for "
	case c == 'T' && c1 == 'S':
		text = "typeinfo name for "
	case c == 'T' && (c1 == 'h' || c1 == 'v' || c1 == 'c'):
		d.pos-- // the call offset starts at h or v
		n := 1
		text = "non-virtual thunk to "
		switch c1 {
		case 'v':
			text = "virtual thunk to "
		case 'c':
			d.pos++
			n, text = 2, "covariant return thunk to "
		}
		for ; n > 0; n-- {
			if !d.callOffset() {
				return d.fail()
			}
		}
		return d.special(text, d.encoding())
	case c == 'T' && c1 == 'H':
		return d.special("TH", d.name(nil))
	case c == 'T' && c1 == 'W':
		return d.special("TW", d.name(nil))
	case c == 'G' && c1 == 'T' && (d.peek() == 't' || d.peek() == 'n'):
		// GCC's transaction clones, which LLVM 14 does not know:
		// package demangle leaves them alone in the LLVM style.
		text = "transaction clone for "
		if d.peek() == 'n' {
			text = "non-transaction clone for "
		}
		d.pos++
		return d.special(text, d.encoding())
	case c == 'G' && c1 == 'V':
		return d.special("guard variable for ", d.name(nil))
	default:
		return d.fail()
	}
	return d.special(text, d.typ())
}

// special makes a special name: the prefix text (or, for "TH" and "TW",
// the code of a prefix that depends on the style) and the entity.
func (d *Demangler) special(text string, entity int32) int32 {
	if entity < 0 {
		return d.fail()
	}
	return d.add(node{kind: kSpecial, a: entity, b: -1, text: text})
}

// callOffset reads
//
//	<call-offset> ::= h <nv-offset> _ | v <v-offset> _ <v-offset> _
func (d *Demangler) callOffset() bool {
	n := 1
	switch {
	case d.consume('h'):
	case d.consume('v'):
		n = 2
	default:
		return false
	}
	for ; n > 0; n-- {
		d.consume('n')
		if !d.number() || !d.consume('_') {
			return false
		}
	}
	return true
}

// number skips a non-negative decimal number and reports whether there
// was one.
func (d *Demangler) number() bool {
	start := d.pos
	for isDigit(d.peek()) {
		d.pos++
	}
	return d.pos > start
}

// name reads
//
//	<name> ::= <nested-name> | <local-name> | <unscoped-name>
//	       ::= <unscoped-template-name> <template-args>
//
// st is nil for a name inside a type.
func (d *Demangler) name(st *nameState) int32 {
	if !d.enter() {
		return -1
	}
	n := d.nameNode(st)
	d.leave()
	return n
}

func (d *Demangler) nameNode(st *nameState) int32 {
	switch c := d.peek(); {
	case c == 'N':
		return d.nestedName(st)
	case c == 'Z':
		return d.localName(st)
	case c == 'S' && d.peekAt(1) != 't':
		s := d.substitution()
		if s < 0 || d.peek() != 'I' {
			return d.fail()
		}
		if st != nil {
			st.endsWithArgs = true
		}
		return d.templateArgs(s, st != nil)
	}
	uses := d.tpUses
	std := strings.HasPrefix(d.s[d.pos:], "St")
	if std {
		d.pos += 2
	}
	n := d.unqualifiedName(st)
	if std {
		n = d.unary(kStd, n, 0)
	}
	if n >= 0 && d.peek() == 'I' {
		d.addSub(n, uses)
		if st != nil {
			st.endsWithArgs = true
		}
		n = d.templateArgs(n, st != nil)
	}
	return n
}

// templateArgs reads <template-args> and makes the template-id of name
// with them. tag says whether they become the template parameter table.
func (d *Demangler) templateArgs(name int32, tag bool) int32 {
	if name < 0 || !d.consume('I') {
		return d.fail()
	}
	if d.inConv {
		d.convNest++
		defer func() { d.convNest-- }()
	}
	if tag {
		d.tagDepth++
	}
	lo, hi, ok := d.readArgs()
	if !ok {
		return -1
	}
	if lo == hi {
		// No argument at all (an empty pack is one): not a mangling
		// that compilers emit, and the fallback spaces it its own way.
		return d.fail()
	}
	if tag {
		d.tagDepth--
		d.tpLo, d.tpHi, d.tpSet = lo, hi, true
	}
	return d.add(node{kind: kTemplate, a: name, b: -1, lo: lo, hi: hi})
}

// readArgs reads template arguments up to the 'E' that ends them
// and returns them as a list.
func (d *Demangler) readArgs() (lo, hi int32, ok bool) {
	mark := len(d.stack)
	for !d.consume('E') {
		a := d.templateArg()
		if a < 0 {
			return 0, 0, false
		}
		d.stack = append(d.stack, a)
	}
	lo, hi = d.endList(mark)
	return lo, hi, true
}

// templateArg reads
//
//	<template-arg> ::= <type> | J <template-arg>* E | <expr-primary>
//
// but not the expressions that can also be template arguments.
func (d *Demangler) templateArg() int32 {
	if !d.enter() {
		return -1
	}
	n := d.templateArgNode()
	d.leave()
	return n
}

func (d *Demangler) templateArgNode() int32 {
	switch d.peek() {
	case 'J':
		d.pos++
		lo, hi, ok := d.readArgs()
		if !ok {
			return -1
		}
		return d.add(node{kind: kPack, a: -1, b: -1, lo: lo, hi: hi})
	case 'L':
		return d.literal()
	case 'X':
		// Of the expressions, only a template parameter, a qualified
		// name such as is_signed<T>::value, and a function's address.
		d.pos++
		var t int32
		switch {
		case d.peek() == 'T':
			t = d.templateParam()
		case d.peek() == 's' && d.peekAt(1) == 'r' && isDigit(d.peekAt(2)):
			t = d.unresolvedName()
		case strings.HasPrefix(d.s[d.pos:], "adL"):
			t = d.address()
		default:
			return d.fail()
		}
		if t < 0 || !d.consume('E') {
			return d.fail()
		}
		return t
	}
	return d.typ()
}

// unresolvedName reads the one form of <unresolved-name> that this package
// implements, that of enable_if's conditions:
//
//	sr <unresolved-qualifier-level>+ E <simple-id>
//	<unresolved-qualifier-level>, <simple-id> ::= <source-name> [<template-args>]
//
// None of its parts is a substitution candidate (see ../srfix.go).
func (d *Demangler) unresolvedName() int32 {
	d.pos += 2 // sr
	soFar := int32(-1)
	for !d.consume('E') {
		if !isDigit(d.peek()) {
			return d.fail()
		}
		level := d.simpleID()
		if soFar < 0 {
			soFar = level
		} else {
			soFar = d.binary(kNested, soFar, level)
		}
		if soFar < 0 {
			return -1
		}
	}
	if soFar < 0 || !isDigit(d.peek()) {
		return d.fail()
	}
	return d.binary(kNested, soFar, d.simpleID())
}

// address reads the address of a function, ad L [_] Z <encoding> E.
func (d *Demangler) address() int32 {
	d.pos += 3 // adL
	d.consume('_')
	if !d.consume('Z') {
		return d.fail()
	}
	enc := d.encoding()
	if enc < 0 || d.nodes[enc].kind != kEncoding || !d.consume('E') {
		return d.fail()
	}
	return d.unary(kAddress, enc, 0)
}

// simpleID reads <simple-id> ::= <source-name> [<template-args>].
func (d *Demangler) simpleID() int32 {
	n := d.sourceName()
	if n >= 0 && d.peek() == 'I' {
		n = d.templateArgs(n, false)
	}
	return n
}

// literal reads an integer, bool or enumeration literal, L <type>
// <value> E.
func (d *Demangler) literal() int32 {
	d.pos++
	t := d.peek()
	enum := int32(-1)
	switch t {
	case 'b', 'c', 'a', 'h', 's', 't', 'i', 'j', 'l', 'm', 'x', 'y':
		d.pos++
	case 'N', 'S', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		if t == 'S' && d.peekAt(1) == 't' {
			return d.fail()
		}
		if enum = d.typ(); enum < 0 {
			return -1
		}
		t = 0
	default:
		return d.fail()
	}
	start := d.pos
	d.consume('n')
	if !d.number() {
		return d.fail()
	}
	v := d.s[start:d.pos]
	if !d.consume('E') || t == 'b' && v != "0" && v != "1" {
		return d.fail()
	}
	return d.add(node{kind: kLiteral, flags: t, a: enum, b: -1, text: v})
}

// nestedName reads
//
//	<nested-name> ::= N [<CV-qualifiers>] [<ref-qualifier>] <prefix> <unqualified-name> E
func (d *Demangler) nestedName(st *nameState) int32 {
	d.pos++
	quals := d.cvQualifiers()
	if c := d.peek(); c == 'r' || c == 'V' || c == 'K' {
		// GNU reads qualifiers in any order, and so "rs" (operator>>)
		// after K as restrict.
		return d.fail()
	}
	switch {
	case d.consume('R'):
		quals |= refL
	case d.consume('O'):
		quals |= refR
	}
	if st != nil {
		st.quals = quals
	} else if quals != 0 {
		return d.fail()
	}
	if d.inConv {
		d.convNest++
		defer func() { d.convNest-- }()
	}
	uses := d.tpUses
	soFar := int32(-1)
	if strings.HasPrefix(d.s[d.pos:], "St") {
		d.pos += 2
		soFar = d.leaf(kName, "std")
	}
	push := func(c int32) bool {
		if c < 0 {
			d.failed = true
			return false
		}
		if soFar < 0 {
			soFar = c
		} else {
			soFar = d.binary(kNested, soFar, c)
		}
		if st != nil {
			st.endsWithArgs = false
		}
		return soFar >= 0
	}
	for !d.consume('E') {
		if d.failed {
			return -1
		}
		switch c, c1 := d.peek(), d.peekAt(1); {
		case c == 'T':
			if !push(d.templateParam()) {
				return -1
			}
			d.addSub(soFar, uses)
		case c == 'I':
			if soFar < 0 || d.nodes[soFar].kind == kTemplate {
				// Two argument lists in a row, which GNU rejects.
				return d.fail()
			}
			soFar = d.templateArgs(soFar, st != nil)
			if soFar < 0 {
				return -1
			}
			if st != nil {
				st.endsWithArgs = true
			}
			d.addSub(soFar, uses)
		case c == 'S' && c1 != 't':
			if soFar >= 0 {
				// Only a prefix is a substitution; the peers
				// disagree on one inside a nested name.
				return d.fail()
			}
			s := d.substitution()
			if s >= 0 && d.nodes[s].kind == kSpecialSub && d.isCtorDtorNext() && strings.IndexByte("sido", d.nodes[s].flags) >= 0 {
				// Before a constructor or destructor, the peers
				// write the standard abbreviations for
				// std::basic_string etc. in full.
				n := d.nodes[s]
				n.b = 1
				s = d.add(n)
			}
			if !push(s) {
				return -1
			}
		case c == 'C' || c == 'D' && c1 != 'C' && c1 != 't' && c1 != 'T':
			if soFar < 0 {
				return d.fail()
			}
			if !push(d.ctorDtorName(soFar, st)) {
				return -1
			}
			soFar = d.abiTags(soFar)
			if c := d.peek(); c != 'E' && c != 'I' {
				// A constructor that is not the last part.
				return d.fail()
			}
			d.addSub(soFar, uses)
		default:
			u := d.unqualifiedName(st)
			if !push(u) {
				return -1
			}
			if d.nodes[u].kind == kConversion && d.peek() != 'E' && d.peek() != 'I' {
				// A conversion operator that is not the last
				// part: the fallback's substitutions go astray.
				return d.fail()
			}
			d.addSub(soFar, uses)
		}
	}
	if soFar < 0 || len(d.subs) == 0 || d.nodes[soFar].kind != kNested && d.nodes[soFar].kind != kTemplate {
		// A nested name of one part is not what compilers emit, and
		// the peers number its substitutions each their own way.
		return d.fail()
	}
	d.subs = d.subs[:len(d.subs)-1]
	d.subsTable = d.subsTable[:len(d.subsTable)-1]
	return soFar
}

func (d *Demangler) isCtorDtorNext() bool {
	c := d.peek()
	return c == 'C' || c == 'D' && d.peekAt(1) != 'C'
}

// cvQualifiers reads <CV-qualifiers> ::= [r] [V] [K].
func (d *Demangler) cvQualifiers() uint8 {
	var q uint8
	if d.consume('r') {
		q |= qRestrict
	}
	if d.consume('V') {
		q |= qVolatile
	}
	if d.consume('K') {
		q |= qConst
	}
	return q
}

// ctorDtorName reads <ctor-dtor-name> of the class soFar.
func (d *Demangler) ctorDtorName(soFar int32, st *nameState) int32 {
	var flags uint8
	base := int32(-1)
	if d.consume('C') {
		inherited := d.consume('I')
		switch d.peek() {
		case '1', '2', '3', '4', '5':
			d.pos++
		default:
			return d.fail()
		}
		if inherited {
			// The peers disagree on the substitutions that the base
			// class adds; references past them are declined.
			base = d.name(nil)
			if base < 0 {
				return -1
			}
			d.subsLimit = len(d.subs)
		}
	} else {
		d.pos++ // D
		switch d.peek() {
		case '0', '1', '2', '4', '5':
			d.pos++
		default:
			return d.fail()
		}
		flags = ctorDtor
	}
	if st != nil {
		st.ctorDtorConv = true
	}
	return d.add(node{kind: kCtor, flags: flags, a: soFar, b: base})
}

// unqualifiedName reads
//
//	<unqualified-name> ::= <operator-name> [<abi-tags>] | <source-name> [<abi-tags>]
//	                   ::= <unnamed-type-name>
func (d *Demangler) unqualifiedName(st *nameState) int32 {
	if d.consume('L') && !isDigit(d.peek()) {
		// GCC's mark of internal linkage, which GNU reads only
		// before a source name.
		return d.fail()
	}
	var n int32
	switch c, c1 := d.peek(), d.peekAt(1); {
	case isDigit(c):
		n = d.sourceName()
	case c == 'U' && c1 == 'l':
		n = d.lambda()
	case c == 'U' && c1 == 't':
		d.pos += 2
		n = d.leaf(kUnnamed, d.seqNumber())
	case 'a' <= c && c <= 'z':
		n = d.operatorName(st)
	default:
		return d.fail()
	}
	return d.abiTags(n)
}

// seqNumber reads the optional number and '_' that end an unnamed type or
// a closure type, and returns the number.
func (d *Demangler) seqNumber() string {
	start := d.pos
	d.number()
	num := d.s[start:d.pos]
	if !d.consume('_') {
		d.failed = true
	}
	return num
}

// lambda reads <closure-type-name> ::= Ul <lambda-sig> E [<number>] _.
func (d *Demangler) lambda() int32 {
	d.pos += 2
	mark := len(d.stack)
	for !d.consume('E') {
		if d.peek() == 'T' {
			// Template parameters of generic lambdas are printed
			// differently by each peer.
			return d.fail()
		}
		if d.consume('v') && d.peek() == 'E' {
			continue
		}
		t := d.typ()
		if t < 0 {
			return -1
		}
		d.stack = append(d.stack, t)
	}
	lo, hi := d.endList(mark)
	num := d.seqNumber()
	return d.add(node{kind: kLambda, a: -1, b: -1, lo: lo, hi: hi, text: num})
}

// abiTags reads the ABI tags, B <source-name>, that follow a name.
func (d *Demangler) abiTags(n int32) int32 {
	for n >= 0 && d.consume('B') {
		tag := d.identifier()
		if tag == "" {
			return d.fail()
		}
		n = d.add(node{kind: kAbiTag, a: n, b: -1, text: tag})
	}
	return n
}

// identifier reads <number> <identifier> and returns the identifier, or
// "".
func (d *Demangler) identifier() string {
	n := 0
	start := d.pos
	for isDigit(d.peek()) {
		n = n*10 + int(d.peek()-'0')
		d.pos++
		if n > len(d.s) {
			return ""
		}
	}
	if d.pos == start || n == 0 || n > len(d.s)-d.pos {
		return ""
	}
	id := d.s[d.pos : d.pos+n]
	d.pos += n
	return id
}

// sourceName reads <source-name>.
func (d *Demangler) sourceName() int32 {
	id := d.identifier()
	if id == "" {
		return d.fail()
	}
	if strings.HasPrefix(id, "_GLOBAL__N") {
		id = "(anonymous namespace)"
	}
	return d.leaf(kName, id)
}

// operators maps the codes of <operator-name> to the operators.
var operators = [...]struct{ code, name string }{
	{"nw", " new"}, {"na", " new[]"}, {"dl", " delete"}, {"da", " delete[]"}, {"aw", " co_await"},
	{"ps", "+"}, {"ng", "-"}, {"ad", "&"}, {"de", "*"}, {"co", "~"},
	{"pl", "+"}, {"mi", "-"}, {"ml", "*"}, {"dv", "/"}, {"rm", "%"}, {"an", "&"}, {"or", "|"}, {"eo", "^"},
	{"aS", "="}, {"pL", "+="}, {"mI", "-="}, {"mL", "*="}, {"dV", "/="}, {"rM", "%="}, {"aN", "&="},
	{"oR", "|="}, {"eO", "^="}, {"ls", "<<"}, {"rs", ">>"}, {"lS", "<<="}, {"rS", ">>="},
	{"eq", "=="}, {"ne", "!="}, {"lt", "<"}, {"gt", ">"}, {"le", "<="}, {"ge", ">="}, {"ss", "<=>"},
	{"nt", "!"}, {"aa", "&&"}, {"oo", "||"}, {"pp", "++"}, {"mm", "--"}, {"cm", ","},
	{"pm", "->*"}, {"pt", "->"}, {"cl", "()"}, {"ix", "[]"}, {"qu", "?"},
}

// operatorName reads <operator-name>, of which it implements the
// operators and the conversion operator of an encoding's name.
func (d *Demangler) operatorName(st *nameState) int32 {
	if d.pos+2 > len(d.s) {
		return d.fail()
	}
	code := d.s[d.pos : d.pos+2]
	d.pos += 2
	if code == "cv" {
		if st == nil || d.inConv {
			return d.fail()
		}
		st.ctorDtorConv = true
		d.inConv, d.convNest, d.fwdOK = true, 0, true
		t := d.typ()
		d.inConv, d.fwdOK = false, false
		return d.unary(kConversion, t, 0)
	}
	for _, op := range operators {
		if op.code == code {
			return d.leaf(kOperator, op.name)
		}
	}
	return d.fail()
}

// localName reads
//
//	<local-name> ::= Z <encoding> E <entity name> [<discriminator>]
//	             ::= Z <encoding> E s [<discriminator>]
func (d *Demangler) localName(st *nameState) int32 {
	d.pos++
	enc := d.encoding()
	if enc < 0 || !d.consume('E') {
		return d.fail()
	}
	if n := &d.nodes[enc]; n.kind == kEncoding {
		n.flags |= localEnc
	}
	var entity int32
	if d.consume('s') {
		entity = d.leaf(kName, "string literal")
	} else {
		if d.peek() == 'd' {
			return d.fail()
		}
		entity = d.name(st)
	}
	d.discriminator()
	return d.binary(kLocal, enc, entity)
}

// discriminator skips <discriminator> ::= _ <digit> | __ <number> _.
func (d *Demangler) discriminator() {
	if d.peek() != '_' {
		return
	}
	if isDigit(d.peekAt(1)) {
		d.pos += 2
		return
	}
	if d.peekAt(1) == '_' {
		i := d.pos + 2
		for i < len(d.s) && isDigit(d.s[i]) {
			i++
		}
		if i < len(d.s) && d.s[i] == '_' {
			d.pos = i + 1
		}
	}
}

// specialSubs are the standard abbreviations, by their letter after 'S'.
const specialSubs = "absiod"

// substitution reads <substitution>, returning the node it stands for.
func (d *Demangler) substitution() int32 {
	d.pos++ // S
	c := d.peek()
	if strings.IndexByte(specialSubs, c) >= 0 && c != 0 {
		d.pos++
		if c != 'a' && c != 'b' && d.peek() == 'I' {
			// Template arguments for std::string and the streams,
			// which are no templates.
			return d.fail()
		}
		n := d.add(node{kind: kSpecialSub, flags: c, a: -1, b: 0})
		if d.peek() == 'B' {
			n = d.abiTags(n)
			d.addSub(n, d.tpUses)
		}
		return n
	}
	index := 0
	if !d.consume('_') {
		id := 0
		for {
			c := d.peek()
			switch {
			case isDigit(c):
				id = id*36 + int(c-'0')
			case 'A' <= c && c <= 'Z':
				id = id*36 + int(c-'A') + 10
			case c == '_':
				index = id + 1
			default:
				return d.fail()
			}
			d.pos++
			if c == '_' {
				break
			}
			if id > MaxNodes {
				return d.fail()
			}
		}
	}
	if index >= len(d.subs) || d.subsLimit >= 0 && index >= d.subsLimit {
		return d.fail()
	}
	if t := d.subsTable[index]; t >= 0 && t != d.tableID() {
		return d.fail()
	}
	return d.subs[index]
}

// addSub adds a substitution candidate, made while the count of resolved
// template parameters went from uses to d.tpUses.
func (d *Demangler) addSub(n int32, uses int) {
	d.subs = append(d.subs, n)
	t := int32(-1)
	if uses != d.tpUses {
		t = d.tableID()
	}
	d.subsTable = append(d.subsTable, t)
}

// tableID identifies the template parameter table in force.
func (d *Demangler) tableID() int32 {
	if !d.tpSet {
		return 0
	}
	return d.tpLo + 1
}

// templateParam reads <template-param> ::= T_ | T <number> _.
func (d *Demangler) templateParam() int32 {
	d.pos++ // T
	index := 0
	if !d.consume('_') {
		start := d.pos
		n := 0
		for isDigit(d.peek()) {
			n = n*10 + int(d.peek()-'0')
			d.pos++
			if n > MaxNodes {
				return d.fail()
			}
		}
		if d.pos == start || !d.consume('_') {
			return d.fail()
		}
		index = n + 1
	}
	d.tpUses++
	if d.fwdOK {
		n := d.add(node{kind: kFwdRef, a: -1, b: -1, lo: int32(index)})
		d.fwd = append(d.fwd, n)
		return n
	}
	if !d.tpSet || d.tagDepth > 0 || index >= int(d.tpHi-d.tpLo) {
		return d.fail()
	}
	arg := d.lists[int(d.tpLo)+index]
	if d.nodes[arg].kind == kPack {
		return d.unary(kParamPack, arg, 0)
	}
	return arg
}

// typ reads the <type>s this package implements.
func (d *Demangler) typ() int32 {
	if !d.enter() {
		return -1
	}
	n := d.typNode()
	d.leave()
	return n
}

func (d *Demangler) typNode() int32 {
	uses := d.tpUses
	var t int32
	switch c, c1 := d.peek(), d.peekAt(1); c {
	case 'v', 'w', 'b', 'c', 'a', 'h', 's', 't', 'i', 'j', 'l', 'm', 'x', 'y', 'n', 'o', 'f', 'd', 'e', 'g', 'z':
		d.pos++
		return d.leaf(kBuiltin, builtins[c-'a'])
	case 'D':
		d.pos += 2
		switch c1 {
		case 'i':
			return d.leaf(kBuiltin, "char32_t")
		case 's':
			return d.leaf(kBuiltin, "char16_t")
		case 'u':
			return d.leaf(kBuiltin, "char8_t")
		case 'd':
			return d.leaf(kBuiltin, "decimal64")
		case 'e':
			return d.leaf(kBuiltin, "decimal128")
		case 'f':
			return d.leaf(kBuiltin, "decimal32")
		case 'a':
			return d.leaf(kBuiltin, "auto")
		case 'c':
			return d.leaf(kBuiltin, "decltype(auto)")
		case 'n':
			n := d.leaf(kBuiltin, "")
			if n >= 0 {
				d.nodes[n].flags = builtinNullptr
			}
			return n
		case 'p':
			t = d.unary(kExpansion, d.typ(), 0)
		default:
			return d.fail()
		}
	case 'r', 'V', 'K':
		q := d.cvQualifiers()
		c, c1 := d.peek(), d.peekAt(1)
		if c == 'F' || c == 'D' && !isBuiltinD(c1) || c == 'r' || c == 'V' || c == 'K' {
			// Qualified function types, the D types and repeated
			// qualifiers, which the peers qualify in their own ways.
			return d.fail()
		}
		t = d.typ()
		if t >= 0 && d.nodes[t].kind == kRef {
			// A qualified reference, which the fallback
			// collapses its own way.
			return d.fail()
		}
		if t >= 0 && d.nodes[t].kind == kQual {
			// The qualifiers of a template argument merge with
			// those added to it: "T const" of "int const" is
			// "int const".
			q |= d.nodes[t].flags
			t = d.nodes[t].a
		}
		t = d.unary(kQual, t, q)
	case 'P':
		d.pos++
		t = d.unary(kPointer, d.typ(), 0)
	case 'R', 'O':
		d.pos++
		if c1 == 'R' || c1 == 'O' {
			// A reference to a reference, which no compiler
			// mangles and the fallback collapses its own way.
			return d.fail()
		}
		ref := uint8(refL)
		if c == 'O' {
			ref = refR
		}
		t = d.unary(kRef, d.typ(), ref)
	case 'F':
		t = d.functionType()
	case 'A':
		t = d.arrayType()
	case 'M':
		d.pos++
		cls := d.typ()
		if cls < 0 {
			return -1
		}
		t = d.binary(kPtrMem, cls, d.typ())
	case 'T':
		t = d.templateParam()
		if t >= 0 && d.peek() == 'I' {
			if d.inConv {
				if d.convNest > 0 {
					return d.fail()
				}
				break
			}
			d.addSub(t, uses)
			t = d.templateArgs(t, false)
		}
	case 'S':
		if c1 == 't' {
			t = d.name(nil)
			break
		}
		t = d.substitution()
		if t < 0 || d.peek() != 'I' {
			return t
		}
		if d.inConv {
			if d.convNest > 0 {
				return d.fail()
			}
			return t
		}
		t = d.templateArgs(t, false)
	case 'N', 'Z', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		t = d.name(nil)
	default:
		return d.fail()
	}
	if t < 0 {
		return d.fail()
	}
	d.addSub(t, uses)
	return t
}

// isBuiltinD reports whether c follows 'D' in a builtin type that this
// package implements.
func isBuiltinD(c byte) bool {
	return strings.IndexByte("isundefac", c) >= 0 && c != 0
}

// builtins are the names of the builtin types by their letter.
var builtins = [26]string{
	'a' - 'a': "signed char", 'b' - 'a': "bool", 'c' - 'a': "char", 'd' - 'a': "double",
	'e' - 'a': "long double", 'f' - 'a': "float", 'g' - 'a': "__float128", 'h' - 'a': "unsigned char",
	'i' - 'a': "int", 'j' - 'a': "unsigned int", 'l' - 'a': "long", 'm' - 'a': "unsigned long",
	'n' - 'a': "__int128", 'o' - 'a': "unsigned __int128", 's' - 'a': "short", 't' - 'a': "unsigned short",
	'v' - 'a': "void", 'w' - 'a': "wchar_t", 'x' - 'a': "long long", 'y' - 'a': "unsigned long long",
	'z' - 'a': "...",
}

// functionType reads <function-type> ::= F [Y] <bare-function-type> [<ref-qualifier>] E.
func (d *Demangler) functionType() int32 {
	d.pos++
	d.consume('Y')
	ret := d.typ()
	if ret < 0 {
		return -1
	}
	var quals uint8
	mark := len(d.stack)
	params := false // a parameter, or v for none, as the fallback requires
	for !d.consume('E') {
		if d.consume('v') {
			params = true
			continue
		}
		if c := d.peek(); (c == 'R' || c == 'O') && d.peekAt(1) == 'E' {
			quals = refL
			if c == 'O' {
				quals = refR
			}
			d.pos += 2
			break
		}
		t := d.typ()
		if t < 0 {
			return -1
		}
		d.stack = append(d.stack, t)
		params = true
	}
	if !params {
		return d.fail()
	}
	lo, hi := d.endList(mark)
	return d.add(node{kind: kFunc, flags: quals, a: ret, b: -1, lo: lo, hi: hi})
}

// arrayType reads <array-type> ::= A [<number>] _ <type>, but not the
// arrays whose dimension is an expression.
func (d *Demangler) arrayType() int32 {
	d.pos++
	start := d.pos
	d.number()
	dim := d.s[start:d.pos]
	if !d.consume('_') {
		return d.fail()
	}
	t := d.unary(kArray, d.typ(), 0)
	if t >= 0 {
		d.nodes[t].text = dim
	}
	return t
}
