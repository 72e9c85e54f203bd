package itanium

import "strings"

// A printer writes the tree that the parser built. Its methods follow
// LLVM's ItaniumDemangle.h (LLVM 14): each node prints a left part and a
// right part around what encloses it, so that "void (*)(int)" comes out
// of a pointer to a function type.
type printer struct {
	out   []byte
	style Style
	steps int
	depth int
	fail  bool
	// stale is set when the last thing done was erasing a ", ", after
	// which GNU c++filt still takes the last character for a ' '.
	stale bool

	// The pack expansion being printed: the element printed now and the
	// pack's size, -1 while no pack has been met.
	packIdx, packMax int
}

// print writes the tree at root and the clone suffix to dst.
func (d *Demangler) print(dst []byte, root int32, suffix string, style Style) ([]byte, bool) {
	p := &d.p
	*p = printer{out: dst, style: style, packIdx: -1, packMax: -1}
	start := len(dst)
	if n := &d.nodes[root]; style == Short && n.kind == kEncoding {
		d.pr(n.b)
	} else {
		d.pr(root)
	}
	switch {
	case suffix == "" || style == Short:
	case style == LLVM:
		p.write(" (")
		p.write(suffix)
		p.write(")")
	default:
		// GNU: " [clone .name.1]" for each ".name" and its numbers.
		for suffix != "" {
			i := 1
			for i < len(suffix) && (suffix[i] != '.' || i+1 < len(suffix) && isDigit(suffix[i+1])) {
				i++
			}
			p.write(" [clone ")
			p.write(suffix[:i])
			p.write("]")
			suffix = suffix[i:]
		}
	}
	if p.fail || len(p.out)-start > MaxOutput || len(p.out) == start {
		return dst, false
	}
	return p.out, true
}

func (p *printer) write(s string) {
	p.out = append(p.out, s...)
	p.stale = false
}

func (p *printer) last() byte {
	if len(p.out) == 0 {
		return 0
	}
	return p.out[len(p.out)-1]
}

// enter counts a node's visit and reports whether printing goes on.
func (d *Demangler) visit(n int32) bool {
	p := &d.p
	p.steps++
	p.depth++
	if n < 0 || p.steps > maxSteps || p.depth > MaxDepth || len(p.out) > MaxOutput {
		p.fail = true
	}
	return !p.fail
}

func (d *Demangler) pr(n int32) {
	d.left(n)
	d.right(n)
}

// syntax resolves the nodes that stand for others: a forward reference,
// and a template parameter that names a pack, which stands for the pack's
// element of the expansion being printed (starting the expansion if none
// has started). It returns -1 for nothing to print.
func (d *Demangler) syntax(n int32) int32 {
	for i := 0; n >= 0 && i < MaxDepth; i++ {
		switch nd := &d.nodes[n]; nd.kind {
		case kFwdRef:
			n = nd.a
		case kParamPack:
			pack := &d.nodes[nd.a]
			p := &d.p
			if p.packMax < 0 {
				p.packMax, p.packIdx = int(pack.hi-pack.lo), 0
			}
			if p.packIdx >= int(pack.hi-pack.lo) {
				return -1
			}
			n = d.lists[int(pack.lo)+p.packIdx]
		default:
			return n
		}
	}
	return -1
}

// hasRHS reports whether n prints a right part: it is, or it qualifies
// or points to, a function or array type.
func (d *Demangler) hasRHS(n int32) bool {
	for i := 0; i < MaxDepth; i++ {
		n = d.syntax(n)
		if n < 0 {
			return false
		}
		switch nd := &d.nodes[n]; nd.kind {
		case kQual, kPointer, kRef:
			n = nd.a
		case kPtrMem:
			n = nd.b
		case kFunc, kArray, kEncoding:
			return true
		default:
			return false
		}
	}
	return false
}

// hasKind reports whether n is, under cv-qualifiers, of kind k (a
// function or array type).
func (d *Demangler) hasKind(n int32, k kind) bool {
	for i := 0; i < MaxDepth; i++ {
		n = d.syntax(n)
		if n < 0 {
			return false
		}
		switch nd := &d.nodes[n]; {
		case nd.kind == kQual:
			n = nd.a
		case k == kFunc:
			return nd.kind == kFunc || nd.kind == kEncoding
		default:
			return nd.kind == k
		}
	}
	return false
}

// parenthesized reports whether a pointer, reference or pointer to member
// to n is written in parentheses: "int (*) [2]", "void (&)()".
func (d *Demangler) parenthesized(n int32) bool {
	return d.hasKind(n, kArray) || d.hasKind(n, kFunc)
}

// collapse applies the rules of reference collapsing to a reference: a
// reference to a reference is an lvalue reference unless both are rvalue
// references. It returns the kind and the referenced type.
func (d *Demangler) collapse(n int32) (uint8, int32) {
	ref, to := d.nodes[n].flags, d.nodes[n].a
	for i := 0; i < MaxDepth; i++ {
		s := d.syntax(to)
		if s < 0 || d.nodes[s].kind != kRef {
			return ref, to
		}
		if d.nodes[s].flags == refL {
			ref = refL
		}
		to = d.nodes[s].a
	}
	d.p.fail = true
	return ref, -1
}

func (d *Demangler) left(n int32) {
	if d.visit(n) {
		d.leftNode(n)
	}
	d.p.depth--
}

func (d *Demangler) leftNode(n int32) {
	p := &d.p
	nd := &d.nodes[n]
	switch nd.kind {
	case kName:
		p.write(nd.text)
	case kBuiltin:
		switch {
		case nd.flags&builtinNullptr == 0:
			p.write(nd.text)
		case p.style == LLVM:
			p.write("std::nullptr_t")
		default:
			p.write("decltype(nullptr)")
		}
	case kNested, kLocal:
		d.pr(nd.a)
		p.write("::")
		d.pr(nd.b)
	case kStd:
		p.write("std::")
		d.pr(nd.a)
	case kTemplate:
		d.pr(nd.a)
		d.templateArgList(nd.lo, nd.hi)
	case kAbiTag:
		d.pr(nd.a)
		p.write("[abi:")
		p.write(nd.text)
		p.write("]")
	case kSpecialSub:
		p.write(d.specialSubName(nd))
	case kCtor:
		if nd.flags&ctorDtor != 0 {
			p.write("~")
		}
		p.write(d.ctorName(nd))
	case kOperator:
		p.write("operator")
		p.write(nd.text)
	case kConversion:
		p.write("operator ")
		d.pr(nd.a)
	case kQual:
		d.left(nd.a)
		writeQuals(p, nd.flags)
	case kPointer:
		d.left(nd.a)
		if d.hasKind(nd.a, kArray) {
			p.write(" ")
		}
		if d.parenthesized(nd.a) {
			p.write("(")
		}
		p.write("*")
	case kRef:
		ref, to := d.collapse(n)
		if to < 0 {
			return
		}
		d.left(to)
		if d.hasKind(to, kArray) {
			p.write(" ")
		}
		if d.parenthesized(to) {
			p.write("(")
		}
		if ref == refL {
			p.write("&")
		} else {
			p.write("&&")
		}
	case kPtrMem:
		d.left(nd.b)
		if d.parenthesized(nd.b) {
			p.write("(")
		} else {
			p.write(" ")
		}
		d.pr(nd.a)
		p.write("::*")
	case kFunc:
		d.left(nd.a)
		// The GNU styles write no space after a return type that
		// opened a parenthesis: "int (A::*(A*))(int)".
		if p.style == LLVM || !d.hasRHS(nd.a) {
			p.write(" ")
		}
	case kArray:
		d.left(nd.a)
	case kEncoding:
		if ret := d.returnType(nd); ret >= 0 {
			d.left(ret)
			if !d.hasRHS(ret) {
				p.write(" ")
			}
		}
		d.pr(nd.b)
	case kLambda:
		if p.style == LLVM {
			p.write("'lambda")
			p.write(nd.text)
			p.write("'(")
			d.commaList(nd.lo, nd.hi)
			p.write(")")
			break
		}
		p.write("{lambda(")
		d.commaList(nd.lo, nd.hi)
		p.write(")#")
		d.writeOrdinal(nd.text)
		p.write("}")
	case kUnnamed:
		if p.style == LLVM {
			p.write("'unnamed")
			p.write(nd.text)
			p.write("'")
			break
		}
		p.write("{unnamed type#")
		d.writeOrdinal(nd.text)
		p.write("}")
	case kPack:
		d.commaList(nd.lo, nd.hi)
	case kParamPack, kFwdRef:
		if s := d.syntax(n); s >= 0 {
			d.left(s)
		}
	case kExpansion:
		d.expansion(nd.a)
	case kAddress:
		d.printAddress(nd.a)
	case kLiteral:
		d.printLiteral(nd)
	case kSpecial:
		switch {
		case nd.text == "TH" && p.style == LLVM:
			p.write("thread-local initialization routine for ")
		case nd.text == "TH":
			p.write("TLS init function for ")
		case nd.text == "TW" && p.style == LLVM:
			p.write("thread-local wrapper routine for ")
		case nd.text == "TW":
			p.write("TLS wrapper function for ")
		default:
			p.write(nd.text)
		}
		d.pr(nd.a)
	default:
		p.fail = true
	}
}

func (d *Demangler) right(n int32) {
	if d.visit(n) {
		d.rightNode(n)
	}
	d.p.depth--
}

func (d *Demangler) rightNode(n int32) {
	p := &d.p
	nd := &d.nodes[n]
	switch nd.kind {
	case kQual, kPointer:
		if nd.kind == kPointer && d.parenthesized(nd.a) {
			p.write(")")
		}
		d.right(nd.a)
	case kRef:
		_, to := d.collapse(n)
		if to < 0 {
			return
		}
		if d.parenthesized(to) {
			p.write(")")
		}
		d.right(to)
	case kPtrMem:
		if d.parenthesized(nd.b) {
			p.write(")")
		}
		d.right(nd.b)
	case kFunc:
		p.write("(")
		d.commaList(nd.lo, nd.hi)
		p.write(")")
		d.right(nd.a)
		writeQuals(p, nd.flags)
	case kArray:
		if p.last() != ']' {
			p.write(" ")
		}
		p.write("[")
		p.write(nd.text)
		p.write("]")
		d.right(nd.a)
	case kEncoding:
		p.write("(")
		if nd.flags&localEnc == 0 || p.style != Short {
			d.commaList(nd.lo, nd.hi)
		}
		p.write(")")
		if ret := d.returnType(nd); ret >= 0 {
			d.right(ret)
		}
		writeQuals(p, nd.flags)
	case kParamPack, kFwdRef:
		if s := d.syntax(n); s >= 0 {
			d.right(s)
		}
	}
}

// returnType returns the return type that an encoding prints: the GNU
// styles leave out that of the function of a local name.
func (d *Demangler) returnType(nd *node) int32 {
	if nd.flags&localEnc != 0 && d.p.style != LLVM {
		return -1
	}
	return nd.a
}

func writeQuals(p *printer, q uint8) {
	if q&qConst != 0 {
		p.write(" const")
	}
	if q&qVolatile != 0 {
		p.write(" volatile")
	}
	if q&qRestrict != 0 {
		p.write(" restrict")
	}
	if q&refL != 0 {
		p.write(" &")
	}
	if q&refR != 0 {
		p.write(" &&")
	}
}

// commaList prints the list lo..hi separated by ", ", leaving out the
// elements that print nothing (empty packs) with their separators.
func (d *Demangler) commaList(lo, hi int32) {
	p := &d.p
	first := true
	for _, e := range d.lists[lo:hi] {
		before := len(p.out)
		if !first {
			p.write(", ")
		}
		after := len(p.out)
		d.pr(e)
		if len(p.out) == after {
			if after != before {
				p.out = p.out[:before]
				p.stale = true
			}
			continue
		}
		first = false
	}
}

// templateArgList prints template arguments in angle brackets, spaced as
// each style spaces them: a space between two '>' ("A<B<int> >"), and in
// the GNU styles after an operator that ends in '<' ("operator<< <char>").
// GNU c++filt writes no space before the '>' of a list that ends with an
// empty pack: it erases the pack's ", " but still takes the ' ' for the
// last character.
func (d *Demangler) templateArgList(lo, hi int32) {
	p := &d.p
	if p.style != LLVM && p.last() == '<' {
		p.write(" ")
	}
	p.write("<")
	d.commaList(lo, hi)
	if p.last() == '>' && !(p.style == Full && p.stale) {
		p.write(" ")
	}
	p.write(">")
}

// expansion prints a pack expansion: the pattern once for each element of
// the pack that it names, or nothing for an empty pack.
func (d *Demangler) expansion(pattern int32) {
	p := &d.p
	idx, max := p.packIdx, p.packMax
	defer func() { p.packIdx, p.packMax = idx, max }()
	p.packIdx, p.packMax = -1, -1
	start := len(p.out)
	d.pr(pattern)
	switch {
	case p.packMax < 0:
		// An expansion of something other than a template
		// parameter pack, which the peers write differently.
		p.fail = true
	case p.packMax == 0:
		p.out = p.out[:start]
	}
	for i := 1; i < p.packMax && !p.fail; i++ {
		p.write(", ")
		p.packIdx = i
		d.pr(pattern)
	}
}

// printAddress prints the address of a function: LLVM 14 puts the whole
// function in parentheses; c++filt does so only for a template (which has
// a return type), and writes just the name of another, "&f"; the Short
// style keeps the parentheses of a template around its name alone.
func (d *Demangler) printAddress(enc int32) {
	p := &d.p
	nd := &d.nodes[enc]
	switch {
	case p.style == LLVM || p.style == Full && nd.a >= 0:
		p.write("&(")
		d.pr(enc)
		p.write(")")
	case nd.a >= 0:
		p.write("&(")
		d.pr(nd.b)
		p.write(")")
	default:
		p.write("&")
		d.pr(nd.b)
	}
}

// literalTypes are the types of integer literals, written before the
// value in parentheses if longer than 3 bytes, else as a suffix.
var literalTypes = [26]string{
	'a' - 'a': "signed char", 'c' - 'a': "char", 'h' - 'a': "unsigned char", 's' - 'a': "short",
	't' - 'a': "unsigned short", 'j' - 'a': "u", 'l' - 'a': "l", 'm' - 'a': "ul", 'x' - 'a': "ll",
	'y' - 'a': "ull",
}

func (d *Demangler) printLiteral(nd *node) {
	p := &d.p
	if nd.a >= 0 {
		p.write("(")
		d.pr(nd.a)
		p.write(")")
		d.writeNumber(nd.text)
		return
	}
	if nd.flags == 'b' {
		if nd.text == "1" {
			p.write("true")
		} else {
			p.write("false")
		}
		return
	}
	t := literalTypes[nd.flags-'a']
	if len(t) > 3 {
		p.write("(")
		p.write(t)
		p.write(")")
	}
	d.writeNumber(nd.text)
	if len(t) <= 3 {
		p.write(t)
	}
}

// writeNumber writes a mangled number, whose sign is 'n'.
func (d *Demangler) writeNumber(v string) {
	if v, ok := strings.CutPrefix(v, "n"); ok {
		d.p.write("-")
		d.p.write(v)
		return
	}
	d.p.write(v)
}

// writeOrdinal writes the number of a GNU-style "{lambda()#2}" from the
// mangled number: none for the first, n for the (n+2)th.
func (d *Demangler) writeOrdinal(num string) {
	p := &d.p
	if len(num) > 9 {
		p.fail = true
		return
	}
	n := 1
	if num != "" {
		n = 2
		for i := 0; i < len(num); i++ {
			n += int(num[i]-'0') * pow10(len(num)-1-i)
		}
	}
	var b [12]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			break
		}
	}
	p.out = append(p.out, b[i:]...)
}

func pow10(n int) int {
	x := 1
	for ; n > 0; n-- {
		x *= 10
	}
	return x
}

// The standard abbreviations, by their letter: short and full forms, and
// the base name of their constructors.
var specialSubNames = [26]struct{ short, full, base, llvmBase string }{
	'a' - 'a': {"std::allocator", "std::allocator", "allocator", "allocator"},
	'b' - 'a': {"std::basic_string", "std::basic_string", "basic_string", "basic_string"},
	's' - 'a': {"std::string", "std::basic_string<char, std::char_traits<char>, std::allocator<char> >", "basic_string", "string"},
	'i' - 'a': {"std::istream", "std::basic_istream<char, std::char_traits<char> >", "basic_istream", "istream"},
	'o' - 'a': {"std::ostream", "std::basic_ostream<char, std::char_traits<char> >", "basic_ostream", "ostream"},
	'd' - 'a': {"std::iostream", "std::basic_iostream<char, std::char_traits<char> >", "basic_iostream", "iostream"},
}

// specialSubName writes a standard abbreviation: in full in the Full
// style (c++filt's verbose mode) and before a constructor or destructor.
func (d *Demangler) specialSubName(nd *node) string {
	s := &specialSubNames[nd.flags-'a']
	if nd.b == 1 || d.p.style == Full {
		return s.full
	}
	return s.short
}

// ctorName returns the name of a constructor or destructor: that of its
// class without template arguments. LLVM 14 writes an empty name for a
// class with an ABI tag; c++filt names an inheriting constructor after
// the base class.
func (d *Demangler) ctorName(nd *node) string {
	n := nd.a
	if nd.b >= 0 && d.p.style != LLVM {
		n = nd.b
	}
	for i := 0; i < MaxDepth; i++ {
		switch c := &d.nodes[n]; c.kind {
		case kName:
			return c.text
		case kNested:
			n = c.b
		case kTemplate, kStd:
			n = c.a
		case kAbiTag:
			if d.p.style == LLVM {
				return ""
			}
			if nd.b >= 0 {
				// c++filt keeps the tag of an inherited base.
				d.p.fail = true
				return ""
			}
			n = c.a
		case kSpecialSub:
			s := &specialSubNames[c.flags-'a']
			if d.p.style == LLVM && c.b == 0 {
				return s.llvmBase
			}
			return s.base
		default:
			d.p.fail = true
			return ""
		}
	}
	d.p.fail = true
	return ""
}
