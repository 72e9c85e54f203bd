package swift

// This file builds the node tree for the current mangling ($s, $S, _T0,
// $e). The mangling is postfix: operands come first and an operator
// character says what they were, so the parser keeps a stack of finished
// nodes and each operator pops its operands. See Mangling.rst.

const (
	maxRepeat      = 2048    // S<n>X and A<n>x repeat counts, as in the reference demangler
	maxBuiltinSize = 4096    // Builtin.Int<n>, FPIEEE<n>, Vec<n>
	maxNumber      = 1 << 31 // naturals above this are rejected, not wrapped
	maxDepth       = 512     // recursion bound for the parsers and the printer
	maxPayloadNest = 3       // demangled names nested in specialization payloads
	maxWork        = 1 << 18 // nodes created plus stack pushes, about 20 MiB
)

type parser struct {
	text   string
	pos    int
	stack  []*node
	subs   []*node
	words  [26]string
	nwords int
	// Literal identifier pieces whose words are not yet in words: word
	// substitutions are rare enough that splitting is done on first use.
	pending []string
	old     bool // _T0: argument labels live inside the parameter tuple
	a       *arena
	work    int // nodes created plus nodes pushed; bounded by budget
	budget  int
	errPos  int
	errMsg  string
	limited bool // a resource limit, not the grammar, stopped the parse
	nest    int
	scratch []byte
	// std caches the nodes of the standard types (S<c>, then Sc<c>);
	// stdSet says which entries belong to the current parse.
	std    [256]*node
	stdSet [4]uint64
}

func (p *parser) init(text string, a *arena, nest int) {
	p.text = text
	p.pos = 0
	p.stack = p.stack[:0]
	p.subs = p.subs[:0]
	p.nwords = 0
	clear(p.pending)
	p.pending = p.pending[:0]
	p.old = false
	p.a = a
	p.work = 0
	// The budget scales with the input so long real symbols work, while
	// repeat counts cannot make a short input expensive; the cap bounds
	// memory for inputs of any length.
	p.budget = min(64*len(text)+4096, maxWork)
	p.errPos = -1
	p.errMsg = ""
	p.limited = false
	p.nest = nest
	p.stdSet = [4]uint64{}
}

func (p *parser) fail(msg string) *node {
	if p.errPos < 0 {
		p.errPos = p.pos
		if p.errPos > len(p.text) {
			p.errPos = len(p.text)
		}
		p.errMsg = msg
	}
	return nil
}

func (p *parser) peek() byte {
	if p.pos < len(p.text) {
		return p.text[p.pos]
	}
	return 0
}

// next consumes one byte; past the end it returns 0 but still advances, so
// that every next can be undone by one pushBack.
func (p *parser) next() byte {
	var c byte
	if p.pos < len(p.text) {
		c = p.text[p.pos]
	}
	p.pos++
	return c
}

func (p *parser) pushBack() { p.pos-- }

func (p *parser) nextIf(c byte) bool {
	if p.pos < len(p.text) && p.text[p.pos] == c {
		p.pos++
		return true
	}
	return false
}

func (p *parser) nextIfStr(s string) bool {
	if p.pos >= 0 && p.pos+len(s) <= len(p.text) && p.text[p.pos:p.pos+len(s)] == s {
		p.pos += len(s)
		return true
	}
	return false
}

// Node construction. Every helper returns nil when a required operand is
// nil, which is how a malformed mangling propagates to the top.

func (p *parser) create(k kind) *node {
	p.work++
	return p.a.alloc(k)
}

func (p *parser) createText(k kind, s string) *node {
	n := p.create(k)
	n.text = s
	return n
}

func (p *parser) createIndex(k kind, i uint64) *node {
	n := p.create(k)
	n.index = i
	return n
}

func (p *parser) add(parent, child *node) *node {
	if parent == nil || child == nil {
		return nil
	}
	p.a.add(parent, child)
	return parent
}

func (p *parser) with1(k kind, c *node) *node {
	if c == nil {
		return nil
	}
	n := p.create(k)
	p.a.add(n, c)
	return n
}

func (p *parser) with2(k kind, c1, c2 *node) *node {
	if c1 == nil || c2 == nil {
		return nil
	}
	n := p.create(k)
	p.a.add(n, c1)
	p.a.add(n, c2)
	return n
}

func (p *parser) with3(k kind, c1, c2, c3 *node) *node {
	if c1 == nil || c2 == nil || c3 == nil {
		return nil
	}
	n := p.create(k)
	p.a.add(n, c1)
	p.a.add(n, c2)
	p.a.add(n, c3)
	return n
}

func (p *parser) with4(k kind, c1, c2, c3, c4 *node) *node {
	if c1 == nil || c2 == nil || c3 == nil || c4 == nil {
		return nil
	}
	n := p.create(k)
	p.a.add(n, c1)
	p.a.add(n, c2)
	p.a.add(n, c3)
	p.a.add(n, c4)
	return n
}

func (p *parser) typ(c *node) *node { return p.with1(kType, c) }

func (p *parser) swiftType(k kind, name string) *node {
	return p.typ(p.with2(k, p.createText(kModule, "Swift"), p.createText(kIdentifier, name)))
}

func (p *parser) depParam(depth, index uint64) *node {
	n := p.create(kDependentGenericParamType)
	p.a.add(n, p.createIndex(kIndex, depth))
	p.a.add(n, p.createIndex(kIndex, index))
	return n
}

// changeKind copies n with another kind, leaving n (which a substitution may
// still reference) untouched.
func (p *parser) changeKind(n *node, k kind) *node {
	if n == nil {
		return nil
	}
	c := p.create(k)
	c.text = n.text
	c.index = n.index
	for _, k := range n.kids {
		p.a.add(c, k)
	}
	return c
}

// Stack operations.

func (p *parser) push(n *node) {
	p.work++
	p.stack = append(p.stack, n)
}

func (p *parser) pop() *node {
	if len(p.stack) == 0 {
		return nil
	}
	n := p.stack[len(p.stack)-1]
	p.stack = p.stack[:len(p.stack)-1]
	return n
}

func (p *parser) popKind(k kind) *node {
	if len(p.stack) == 0 || p.stack[len(p.stack)-1].kind != k {
		return nil
	}
	return p.pop()
}

func (p *parser) popIf(pred func(kind) bool) *node {
	if len(p.stack) == 0 || !pred(p.stack[len(p.stack)-1].kind) {
		return nil
	}
	return p.pop()
}

func (p *parser) popTypeAndGetChild() *node {
	t := p.popKind(kType)
	if t == nil || len(t.kids) == 0 {
		return nil
	}
	return t.kids[0]
}

func (p *parser) popTypeAndGetAnyGeneric() *node {
	c := p.popTypeAndGetChild()
	if c != nil && isAnyGeneric(c.kind) {
		return c
	}
	return nil
}

func (p *parser) addSubst(n *node) {
	if n != nil {
		p.subs = append(p.subs, n)
	}
}

// Numbers.

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
func isLower(c byte) bool { return c >= 'a' && c <= 'z' }
func isUpper(c byte) bool { return c >= 'A' && c <= 'Z' }

// natural reads [0-9]+; ok is false when there is none or it overflows.
func (p *parser) natural() (uint64, bool) {
	// Indexes and lengths are everywhere; scanning with locals keeps the
	// position in a register.
	s, i := p.text, p.pos
	if uint(i) >= uint(len(s)) || !isDigit(s[i]) {
		return 0, false
	}
	var n uint64
	for ; i < len(s) && isDigit(s[i]); i++ {
		n = n*10 + uint64(s[i]-'0')
		if n > maxNumber {
			p.pos = i + 1
			return 0, false
		}
	}
	p.pos = i
	return n, true
}

// index reads INDEX: '_' is 0, NATURAL '_' is NATURAL+1.
func (p *parser) index() (uint64, bool) {
	if p.nextIf('_') {
		return 0, true
	}
	n, ok := p.natural()
	if ok && p.nextIf('_') {
		return n + 1, true
	}
	return 0, false
}

func (p *parser) indexNode() *node {
	i, ok := p.index()
	if !ok {
		return nil
	}
	return p.createIndex(kNumber, i)
}

// parse demangles p.text[prefixLen:] into a Global node.
func (p *parser) parse(prefixLen int) *node {
	p.pos = prefixLen
	for p.pos < len(p.text) {
		if p.work > p.budget {
			p.limited = true
			return p.fail("mangling too complex")
		}
		start := p.pos
		n := p.operator()
		if n == nil {
			p.pos = start
			return p.fail("cannot demangle operator " + quoteByte(p.text[start]))
		}
		p.push(n)
	}
	top := p.create(kGlobal)
	// An unmangled suffix ends the input but is printed last, after the
	// function attributes that it would otherwise hide.
	suffix := p.popKind(kSuffix)
	parent := top
	for {
		attr := p.popIf(isFunctionAttr)
		if attr == nil {
			break
		}
		p.a.add(parent, attr)
		if attr.kind == kPartialApplyForwarder || attr.kind == kPartialApplyObjCForwarder {
			parent = attr
		}
	}
	for _, n := range p.stack {
		if n.kind == kType && len(n.kids) > 0 {
			p.a.add(parent, n.kids[0])
		} else {
			p.a.add(parent, n)
		}
	}
	if suffix != nil {
		p.a.add(top, suffix)
	}
	if len(top.kids) == 0 {
		return p.fail("empty mangling")
	}
	return top
}

func (p *parser) operator() *node {
	c := p.next()
	switch c {
	case 'A':
		return p.multiSubstitutions()
	case 'B':
		return p.builtinType()
	case 'C':
		return p.anyGenericType(kClass)
	case 'D':
		return p.typeMangling()
	case 'E':
		return p.extensionContext()
	case 'F':
		return p.plainFunction()
	case 'G':
		return p.boundGenericType()
	case 'H':
		return p.conformanceOperator()
	case 'I':
		return p.implFunctionType()
	case 'J':
		// Swift 5.4 spelled @Sendable (then @concurrent) as a bare 'J'.
		return p.createText(kConcurrentFunctionType, "@concurrent ")
	case 'K':
		return p.create(kThrowsAnnotation)
	case 'L':
		return p.localIdentifier()
	case 'M':
		return p.metatype()
	case 'N':
		return p.with1(kTypeMetadata, p.popKind(kType))
	case 'O':
		return p.anyGenericType(kEnum)
	case 'P':
		return p.anyGenericType(kProtocol)
	case 'Q':
		return p.archetype()
	case 'R':
		return p.genericRequirement()
	case 'S':
		return p.standardSubstitution()
	case 'T':
		return p.thunkOrSpecialization()
	case 'V':
		return p.anyGenericType(kStructure)
	case 'W':
		return p.witness()
	case 'X':
		return p.specialType()
	case 'Y':
		return p.typeAnnotation()
	case 'Z':
		return p.with1(kStatic, p.popIf(isEntity))
	case 'a':
		return p.anyGenericType(kTypeAlias)
	case 'c':
		return p.popFunctionType(kFunctionType, false)
	case 'd':
		return p.create(kVariadicMarker)
	case 'f':
		return p.functionEntity()
	case 'g':
		return p.retroactiveConformance()
	case 'h':
		return p.typ(p.with1(kShared, p.popTypeAndGetChild()))
	case 'i':
		return p.subscript()
	case 'l':
		return p.genericSignature(false)
	case 'm':
		return p.typ(p.with1(kMetatype, p.popKind(kType)))
	case 'n':
		return p.typ(p.with1(kOwned, p.popTypeAndGetChild()))
	case 'o':
		return p.operatorIdentifier()
	case 'p':
		return p.typ(p.protocolList())
	case 'q':
		return p.typ(p.genericParamIndex())
	case 'r':
		return p.genericSignature(true)
	case 's':
		return p.createText(kModule, "Swift")
	case 't':
		return p.popTuple()
	case 'u':
		return p.genericType()
	case 'v':
		return p.variable()
	case 'w':
		return p.valueWitness()
	case 'x':
		return p.typ(p.depParam(0, 0))
	case 'y':
		return p.create(kEmptyList)
	case 'z':
		return p.typ(p.with1(kInOut, p.popTypeAndGetChild()))
	case '_':
		return p.create(kFirstElementMarker)
	case '.':
		p.pushBack()
		s := p.text[p.pos:]
		p.pos = len(p.text)
		return p.createText(kSuffix, s)
	case '$':
		return p.integerType()
	}
	p.pushBack()
	return p.identifier()
}

func (p *parser) integerType() *node {
	neg := p.nextIf('n')
	i, ok := p.index()
	if !ok {
		return nil
	}
	if neg {
		return p.typ(p.createIndex(kNegativeInteger, i))
	}
	return p.typ(p.createIndex(kInteger, i))
}

// Identifiers.

func isWordStart(c byte) bool { return !isDigit(c) && c != '_' && c != 0 }

func isWordEnd(c, prev byte) bool {
	return c == '_' || c == 0 || (!isUpper(prev) && isUpper(c))
}

func (p *parser) identifier() *node {
	if !isDigit(p.peek()) {
		return nil
	}
	hasWords, puny := false, false
	if p.nextIf('0') {
		if p.nextIf('0') {
			puny = true
		} else {
			hasWords = true
		}
	}
	// The common case, one literal run, slices the input and allocates
	// nothing; several pieces are joined in the scratch buffer.
	var single string
	buf := p.scratch[:0]
	pieces := 0
	for {
		for hasWords && (isLower(p.peek()) || isUpper(p.peek())) {
			c := p.next()
			var w int
			if isLower(c) {
				w = int(c - 'a')
			} else {
				w = int(c - 'A')
				hasWords = false
			}
			p.flushWords()
			if w >= p.nwords {
				return nil
			}
			single, buf, pieces = addPiece(single, buf, pieces, p.words[w])
		}
		if p.nextIf('0') {
			break
		}
		n, ok := p.natural()
		if !ok || n == 0 {
			return nil
		}
		if puny {
			p.nextIf('_')
		}
		if uint64(p.pos)+n > uint64(len(p.text)) {
			return nil
		}
		s := p.text[p.pos : p.pos+int(n)]
		if puny {
			d, ok := decodePunycode(s)
			if !ok {
				return nil
			}
			single, buf, pieces = addPiece(single, buf, pieces, d)
		} else {
			single, buf, pieces = addPiece(single, buf, pieces, s)
			if p.nwords < len(p.words) {
				p.pending = append(p.pending, s)
			}
		}
		p.pos += int(n)
		if !hasWords {
			break
		}
	}
	var text string
	switch pieces {
	case 0:
		return nil
	case 1:
		text = single
	default:
		text = string(buf)
	}
	p.scratch = buf[:0]
	if text == "" {
		return nil
	}
	id := p.createText(kIdentifier, text)
	p.addSubst(id)
	return id
}

func addPiece(single string, buf []byte, pieces int, s string) (string, []byte, int) {
	switch pieces {
	case 0:
		single = s
	case 1:
		buf = append(buf, single...)
		fallthrough
	default:
		buf = append(buf, s...)
	}
	return single, buf, pieces + 1
}

func (p *parser) flushWords() {
	for _, s := range p.pending {
		p.recordWords(s)
	}
	clear(p.pending)
	p.pending = p.pending[:0]
}

// recordWords adds the words of a literal identifier piece to the word
// substitution table: runs of at least two characters split at '_' and at
// a lower-to-upper case change.
func (p *parser) recordWords(s string) {
	start := -1
	for i := 0; i <= len(s); i++ {
		var c byte
		if i < len(s) {
			c = s[i]
		}
		if start >= 0 && isWordEnd(c, s[i-1]) {
			if i-start >= 2 && p.nwords < len(p.words) {
				p.words[p.nwords] = s[start:i]
				p.nwords++
			}
			start = -1
		}
		if start < 0 && isWordStart(c) {
			start = i
		}
	}
}

// opChars maps the letters of a mangled operator name to the operator
// characters they stand for; a space marks letters that are not used.
const opChars = "& @/= >    <*!|+?%-~   ^ ."

func decodeOperator(s string, buf []byte) (string, bool) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x80 {
			buf = append(buf, c)
			continue
		}
		if !isLower(c) || opChars[c-'a'] == ' ' {
			return "", false
		}
		buf = append(buf, opChars[c-'a'])
	}
	return string(buf), true
}

func (p *parser) operatorIdentifier() *node {
	id := p.popKind(kIdentifier)
	if id == nil {
		return nil
	}
	op, ok := decodeOperator(id.text, p.scratch[:0])
	if !ok {
		return nil
	}
	switch p.next() {
	case 'i':
		return p.createText(kInfixOperator, op)
	case 'p':
		return p.createText(kPrefixOperator, op)
	case 'P':
		return p.createText(kPostfixOperator, op)
	}
	return nil
}

func (p *parser) localIdentifier() *node {
	if p.nextIf('L') {
		disc := p.popKind(kIdentifier)
		name := p.popIf(isDeclName)
		return p.with2(kPrivateDeclName, disc, name)
	}
	if p.nextIf('l') {
		return p.with1(kPrivateDeclName, p.popKind(kIdentifier))
	}
	if c := p.peek(); (c >= 'a' && c <= 'j') || (c >= 'A' && c <= 'J') {
		p.next()
		k := p.createText(kIdentifier, p.text[p.pos-1:p.pos])
		name := p.pop()
		return p.with2(kRelatedEntityDeclName, k, name)
	}
	disc := p.indexNode()
	name := p.popIf(isDeclName)
	return p.with2(kLocalDeclName, disc, name)
}

// Substitutions.

func (p *parser) multiSubstitutions() *node {
	repeat := -1
	for {
		c := p.next()
		switch {
		case c == 0:
			return nil
		case isLower(c):
			n := p.pushMultiSubst(repeat, int(c-'a'))
			if n == nil {
				return nil
			}
			p.push(n)
			repeat = -1
		case isUpper(c):
			return p.pushMultiSubst(repeat, int(c-'A'))
		case c == '_':
			idx := repeat + 27
			if idx < 0 || idx >= len(p.subs) {
				return nil
			}
			return p.subs[idx]
		default:
			p.pushBack()
			n, ok := p.natural()
			if !ok {
				return nil
			}
			repeat = int(n)
		}
	}
}

func (p *parser) pushMultiSubst(repeat, idx int) *node {
	if idx >= len(p.subs) || repeat > maxRepeat {
		return nil
	}
	n := p.subs[idx]
	for ; repeat > 1; repeat-- {
		p.push(n)
	}
	return n
}

var stdTypes = [128]struct {
	k    kind
	name string
}{
	'A': {kStructure, "AutoreleasingUnsafeMutablePointer"},
	'a': {kStructure, "Array"},
	'B': {kProtocol, "BinaryFloatingPoint"},
	'b': {kStructure, "Bool"},
	'D': {kStructure, "Dictionary"},
	'd': {kStructure, "Double"},
	'E': {kProtocol, "Encodable"},
	'e': {kProtocol, "Decodable"},
	'F': {kProtocol, "FloatingPoint"},
	'f': {kStructure, "Float"},
	'G': {kProtocol, "RandomNumberGenerator"},
	'H': {kProtocol, "Hashable"},
	'h': {kStructure, "Set"},
	'I': {kStructure, "DefaultIndices"},
	'i': {kStructure, "Int"},
	'J': {kStructure, "Character"},
	'j': {kProtocol, "Numeric"},
	'K': {kProtocol, "BidirectionalCollection"},
	'k': {kProtocol, "RandomAccessCollection"},
	'L': {kProtocol, "Comparable"},
	'l': {kProtocol, "Collection"},
	'M': {kProtocol, "MutableCollection"},
	'm': {kProtocol, "RangeReplaceableCollection"},
	'N': {kStructure, "ClosedRange"},
	'n': {kStructure, "Range"},
	'O': {kStructure, "ObjectIdentifier"},
	'P': {kStructure, "UnsafePointer"},
	'p': {kStructure, "UnsafeMutablePointer"},
	'Q': {kProtocol, "Equatable"},
	'q': {kEnum, "Optional"},
	'R': {kStructure, "UnsafeBufferPointer"},
	'r': {kStructure, "UnsafeMutableBufferPointer"},
	'S': {kStructure, "String"},
	's': {kStructure, "Substring"},
	'T': {kProtocol, "Sequence"},
	't': {kProtocol, "IteratorProtocol"},
	'U': {kProtocol, "UnsignedInteger"},
	'u': {kStructure, "UInt"},
	'V': {kStructure, "UnsafeRawPointer"},
	'v': {kStructure, "UnsafeMutableRawPointer"},
	'W': {kStructure, "UnsafeRawBufferPointer"},
	'w': {kStructure, "UnsafeMutableRawBufferPointer"},
	'X': {kProtocol, "RangeExpression"},
	'x': {kProtocol, "Strideable"},
	'Y': {kProtocol, "RawRepresentable"},
	'y': {kProtocol, "StringProtocol"},
	'Z': {kProtocol, "SignedInteger"},
	'z': {kProtocol, "BinaryInteger"},
}

var stdTypes2 = [128]struct {
	k    kind
	name string
}{
	'A': {kProtocol, "Actor"},
	'C': {kStructure, "CheckedContinuation"},
	'c': {kStructure, "UnsafeContinuation"},
	'E': {kStructure, "CancellationError"},
	'e': {kStructure, "UnownedSerialExecutor"},
	'F': {kProtocol, "Executor"},
	'f': {kProtocol, "SerialExecutor"},
	'G': {kStructure, "TaskGroup"},
	'g': {kStructure, "ThrowingTaskGroup"},
	'h': {kProtocol, "TaskExecutor"},
	'I': {kProtocol, "AsyncIteratorProtocol"},
	'i': {kProtocol, "AsyncSequence"},
	'J': {kStructure, "UnownedJob"},
	'M': {kClass, "MainActor"},
	'P': {kStructure, "TaskPriority"},
	'S': {kStructure, "AsyncStream"},
	's': {kStructure, "AsyncThrowingStream"},
	'T': {kStructure, "Task"},
	't': {kStructure, "UnsafeCurrentTask"},
}

func (p *parser) standardSubstitution() *node {
	switch c := p.next(); c {
	case 'o':
		return p.createText(kModule, "__C")
	case 'C':
		return p.createText(kModule, "__C_Synthesized")
	case 'g':
		opt := p.typ(p.with2(kBoundGenericEnum, p.swiftType(kEnum, "Optional"),
			p.with1(kTypeList, p.popKind(kType))))
		p.addSubst(opt)
		return opt
	}
	p.pushBack()
	repeat := uint64(1)
	if isDigit(p.peek()) {
		n, ok := p.natural()
		if !ok || n > maxRepeat {
			return nil
		}
		repeat = n
	}
	second := p.nextIf('c')
	c := p.next()
	if c >= 128 {
		return nil
	}
	t := stdTypes[c]
	if second {
		t = stdTypes2[c]
	}
	if t.name == "" {
		return nil
	}
	// Standard types recur often in one symbol; nodes are immutable once
	// built, so one copy per parse serves every use.
	slot := int(c)
	if second {
		slot += 128
	}
	n := p.std[slot]
	if p.stdSet[slot/64]&(1<<(slot%64)) == 0 {
		n = p.swiftType(t.k, t.name)
		p.std[slot] = n
		p.stdSet[slot/64] |= 1 << (slot % 64)
	}
	for ; repeat > 1; repeat-- {
		p.push(n)
	}
	return n
}

// Types.

func (p *parser) popContext() *node {
	if m := p.popModule(); m != nil {
		return m
	}
	if t := p.popKind(kType); t != nil {
		if len(t.kids) != 1 || !isContext(t.kids[0].kind) {
			return nil
		}
		return t.kids[0]
	}
	return p.popIf(isContext)
}

func (p *parser) popModule() *node {
	if id := p.popKind(kIdentifier); id != nil {
		return p.changeKind(id, kModule)
	}
	return p.popKind(kModule)
}

func (p *parser) anyGenericType(k kind) *node {
	name := p.popIf(isDeclName)
	ctx := p.popContext()
	t := p.typ(p.with2(k, ctx, name))
	p.addSubst(t)
	return t
}

func isProtocolNode(t *node) bool {
	if t.kindIs(kType) {
		t = t.kid(0)
	}
	return t.kindIs(kProtocol)
}

func (p *parser) popProtocol() *node {
	if t := p.popKind(kType); t != nil {
		if len(t.kids) < 1 || !isProtocolNode(t) {
			return nil
		}
		return t
	}
	name := p.popIf(isDeclName)
	ctx := p.popContext()
	return p.typ(p.with2(kProtocol, ctx, name))
}

func (p *parser) builtinType() *node {
	var name string
	switch p.next() {
	case 'b':
		name = "Builtin.BridgeObject"
	case 'B':
		name = "Builtin.UnsafeValueBuffer"
	case 'e':
		name = "Builtin.Executor"
	case 'c':
		name = "Builtin.RawUnsafeContinuation"
	case 'D':
		name = "Builtin.DefaultActorStorage"
	case 'd':
		name = "Builtin.NonDefaultDistributedActorStorage"
	case 'j':
		name = "Builtin.Job"
	case 'P':
		name = "Builtin.PackIndex"
	case 'A':
		name = "Builtin.ImplicitActor"
	case 'I':
		name = "Builtin.IntLiteral"
	case 'O':
		name = "Builtin.UnknownObject"
	case 'o':
		name = "Builtin.NativeObject"
	case 'p':
		name = "Builtin.RawPointer"
	case 't':
		name = "Builtin.SILToken"
	case 'w':
		name = "Builtin.Word"
	case 'f', 'i':
		pfx := "Builtin.FPIEEE"
		if p.text[p.pos-1] == 'i' {
			pfx = "Builtin.Int"
		}
		size, ok := p.index()
		if !ok || size <= 1 || size-1 > maxBuiltinSize {
			return nil
		}
		name = pfx + utoa(size-1)
	case 'v':
		elts, ok := p.index()
		if !ok || elts <= 1 || elts-1 > maxBuiltinSize {
			return nil
		}
		et := p.popTypeAndGetChild()
		if et == nil || et.kind != kBuiltinTypeName || len(et.text) < 8 || et.text[:8] != "Builtin." {
			return nil
		}
		name = "Builtin.Vec" + utoa(elts-1) + "x" + et.text[8:]
	case 'V':
		elem := p.popKind(kType)
		size := p.popKind(kType)
		return p.typ(p.with2(kBuiltinFixedArray, size, elem))
	default:
		return nil
	}
	return p.typ(p.createText(kBuiltinTypeName, name))
}

func (p *parser) typeMangling() *node {
	t := p.popKind(kType)
	labels := p.popFunctionParamLabels(t)
	if labels != nil {
		return p.with2(kTypeMangling, labels, t)
	}
	return p.with1(kTypeMangling, t)
}

func (p *parser) extensionContext() *node {
	sig := p.popKind(kDependentGenericSignature)
	mod := p.popModule()
	t := p.popTypeAndGetAnyGeneric()
	ext := p.with2(kExtension, mod, t)
	if sig != nil {
		ext = p.add(ext, sig)
	}
	return ext
}

func (p *parser) plainFunction() *node {
	sig := p.popKind(kDependentGenericSignature)
	t := p.popFunctionType(kFunctionType, false)
	labels := p.popFunctionParamLabels(t)
	if sig != nil {
		t = p.typ(p.with2(kDependentGenericType, sig, t))
	}
	name := p.popIf(isDeclName)
	ctx := p.popContext()
	if labels != nil {
		return p.with4(kFunction, ctx, name, labels, t)
	}
	return p.with3(kFunction, ctx, name, t)
}

func (p *parser) popFunctionType(k kind, hasClangType bool) *node {
	fn := p.create(k)
	if hasClangType {
		ct := p.clangType()
		if ct == nil {
			return nil
		}
		p.a.add(fn, ct)
	}
	// The optional parts are mangled in a fixed order after the result and
	// parameters, so they come off the stack in reverse.
	if n := p.popKind(kSendingResultFunctionType); n != nil {
		p.a.add(fn, n)
	}
	for _, k := range [...]kind{kGlobalActorFunctionType, kIsolatedAnyFunctionType, kNonIsolatedCallerFunctionType} {
		if n := p.popKind(k); n != nil {
			p.a.add(fn, n)
			break
		}
	}
	if n := p.popKind(kDifferentiableFunctionType); n != nil {
		p.a.add(fn, n)
	}
	if n := p.popIf(func(k kind) bool { return k == kThrowsAnnotation || k == kTypedThrowsAnnotation }); n != nil {
		p.a.add(fn, n)
	}
	if n := p.popKind(kConcurrentFunctionType); n != nil {
		p.a.add(fn, n)
	}
	if n := p.popKind(kAsyncAnnotation); n != nil {
		p.a.add(fn, n)
	}
	fn = p.add(fn, p.popFunctionParams(kArgumentTuple))
	fn = p.add(fn, p.popFunctionParams(kReturnType))
	return p.typ(fn)
}

func (p *parser) clangType() *node {
	n, ok := p.natural()
	if !ok || uint64(p.pos)+n > uint64(len(p.text)) {
		return nil
	}
	s := p.text[p.pos : p.pos+int(n)]
	p.pos += int(n)
	return p.createText(kClangType, s)
}

func (p *parser) popFunctionParams(k kind) *node {
	var params *node
	if p.popKind(kEmptyList) != nil {
		params = p.typ(p.create(kTuple))
	} else {
		params = p.popKind(kType)
	}
	return p.with1(k, params)
}

func (p *parser) popFunctionParamLabels(t *node) *node {
	if !p.old && p.popKind(kEmptyList) != nil {
		return p.create(kLabelList)
	}
	if !t.kindIs(kType) {
		return nil
	}
	fn := t.kid(0)
	if fn.kindIs(kDependentGenericType) {
		fn = fn.kid(1).kid(0)
	}
	if !fn.kindIs(kFunctionType) && !fn.kindIs(kNoEscapeFunctionType) {
		return nil
	}
	args := fn.firstKid(kArgumentTuple)
	if args == nil {
		return nil
	}
	params := args.kid(0).kid(0)
	if params == nil {
		return nil
	}
	num := 1
	if params.kind == kTuple {
		num = len(params.kids)
	}
	if num == 0 {
		return nil
	}
	labels := p.create(kLabelList)
	hasLabels := false
	for i := 0; i < num; i++ {
		var l *node
		if p.old {
			// Old-style manglings label tuple elements in place; the label
			// list is rebuilt from them and the elements left unlabeled,
			// through copies because the tuple may be shared.
			if params.kind != kTuple {
				l = p.create(kFirstElementMarker)
			} else {
				el := params.kids[i]
				if name := el.firstKid(kTupleElementName); name != nil {
					l = p.createText(kIdentifier, name.text)
					cp := p.create(el.kind)
					for _, c := range el.kids {
						if c != name {
							p.a.add(cp, c)
						}
					}
					params.kids[i] = cp
				} else {
					l = p.create(kFirstElementMarker)
				}
			}
		} else {
			l = p.pop()
		}
		if l == nil || (l.kind != kIdentifier && l.kind != kFirstElementMarker) {
			return nil
		}
		p.a.add(labels, l)
		if l.kind == kIdentifier {
			hasLabels = true
		}
	}
	if !hasLabels {
		return p.create(kLabelList)
	}
	if !p.old {
		reverseKids(labels, 0)
	}
	return labels
}

func (p *parser) popTuple() *node {
	root := p.create(kTuple)
	if p.popKind(kEmptyList) == nil {
		for {
			first := p.popKind(kFirstElementMarker) != nil
			el := p.create(kTupleElement)
			if v := p.popKind(kVariadicMarker); v != nil {
				p.a.add(el, v)
			}
			if id := p.popKind(kIdentifier); id != nil {
				p.a.add(el, p.createText(kTupleElementName, id.text))
			}
			t := p.popKind(kType)
			if t == nil {
				return nil
			}
			p.a.add(el, t)
			p.a.add(root, el)
			if first {
				break
			}
		}
		reverseKids(root, 0)
	}
	return p.typ(root)
}

func (p *parser) popTypeList() *node {
	root := p.create(kTypeList)
	if p.popKind(kEmptyList) == nil {
		for {
			first := p.popKind(kFirstElementMarker) != nil
			t := p.popKind(kType)
			if t == nil {
				return nil
			}
			p.a.add(root, t)
			if first {
				break
			}
		}
		reverseKids(root, 0)
	}
	return root
}

func (p *parser) protocolList() *node {
	list := p.create(kTypeList)
	pl := p.with1(kProtocolList, list)
	if p.popKind(kEmptyList) == nil {
		for {
			first := p.popKind(kFirstElementMarker) != nil
			proto := p.popProtocol()
			if proto == nil {
				return nil
			}
			p.a.add(list, proto)
			if first {
				break
			}
		}
		reverseKids(list, 0)
	}
	return pl
}

func (p *parser) popRetroactiveConformances() *node {
	var list *node
	for {
		c := p.popKind(kRetroactiveConformance)
		if c == nil {
			break
		}
		if list == nil {
			list = p.create(kTypeList)
		}
		p.a.add(list, c)
	}
	reverseKids(list, 0)
	return list
}

// boundGenerics pops the argument lists of a bound generic type, innermost
// level first.
func (p *parser) boundGenerics() (lists []*node, retro *node, ok bool) {
	retro = p.popRetroactiveConformances()
	for {
		l := p.create(kTypeList)
		lists = append(lists, l)
		for {
			t := p.popKind(kType)
			if t == nil {
				break
			}
			p.a.add(l, t)
		}
		reverseKids(l, 0)
		if p.popKind(kEmptyList) != nil {
			break
		}
		if p.popKind(kFirstElementMarker) == nil {
			return nil, nil, false
		}
	}
	return lists, retro, true
}

func (p *parser) boundGenericType() *node {
	lists, retro, ok := p.boundGenerics()
	if !ok {
		return nil
	}
	nominal := p.popTypeAndGetAnyGeneric()
	b := p.boundGenericArgs(nominal, lists, 0, 0)
	if b == nil {
		return nil
	}
	if retro != nil {
		p.a.add(b, retro)
	}
	t := p.typ(b)
	p.addSubst(t)
	return t
}

func (p *parser) boundGenericArgs(nominal *node, lists []*node, idx, depth int) *node {
	if depth > maxDepth {
		p.limited = true
		return nil
	}
	if nominal == nil || idx >= len(lists) || len(nominal.kids) == 0 {
		return nil
	}
	ctx := nominal.kids[0]
	consumes := true
	switch nominal.kind {
	case kVariable, kExplicitClosure, kSubscript:
		consumes = false
	}
	args := lists[idx]
	if consumes {
		idx++
	}
	if idx < len(lists) {
		var parent *node
		if ctx.kind == kExtension {
			parent = p.boundGenericArgs(ctx.kid(1), lists, idx, depth+1)
			parent = p.with2(kExtension, ctx.kid(0), parent)
			if len(ctx.kids) == 3 {
				parent = p.add(parent, ctx.kids[2])
			}
		} else {
			parent = p.boundGenericArgs(ctx, lists, idx, depth+1)
		}
		nn := p.with1(nominal.kind, parent)
		if nn == nil {
			return nil
		}
		for _, c := range nominal.kids[1:] {
			p.a.add(nn, c)
		}
		nominal = nn
	}
	if !consumes || len(args.kids) == 0 {
		return nominal
	}
	var k kind
	switch nominal.kind {
	case kClass:
		k = kBoundGenericClass
	case kStructure:
		k = kBoundGenericStructure
	case kEnum:
		k = kBoundGenericEnum
	case kProtocol:
		k = kBoundGenericProtocol
	case kOtherNominalType:
		k = kBoundGenericOtherNominalType
	case kTypeAlias:
		k = kBoundGenericTypeAlias
	case kFunction, kConstructor:
		return p.with2(kBoundGenericFunction, nominal, args)
	default:
		return nil
	}
	return p.with2(k, p.typ(nominal), args)
}

func (p *parser) retroactiveConformance() *node {
	i, ok := p.index()
	if !ok {
		return nil
	}
	c := p.popAnyConformance()
	if c == nil {
		return nil
	}
	return p.with2(kRetroactiveConformance, p.createIndex(kIndex, i), c)
}

func isAnyConformance(k kind) bool {
	switch k {
	case kConcreteProtocolConformance, kPackProtocolConformance,
		kDependentProtocolConformanceRoot, kDependentProtocolConformanceInherited,
		kDependentProtocolConformanceAssociated:
		return true
	}
	return false
}

func (p *parser) popAnyConformance() *node { return p.popIf(isAnyConformance) }

func (p *parser) popAnyConformanceList() *node {
	list := p.create(kAnyProtocolConformanceList)
	if p.popKind(kEmptyList) == nil {
		for {
			first := p.popKind(kFirstElementMarker) != nil
			c := p.popAnyConformance()
			if c == nil {
				return nil
			}
			p.a.add(list, c)
			if first {
				break
			}
		}
		reverseKids(list, 0)
	}
	return list
}

func (p *parser) conformanceOperator() *node {
	switch p.next() {
	case 'A':
		idx := p.dependentConformanceIndex()
		proto := p.popProtocol()
		t := p.popKind(kType)
		assoc := p.with2(kDependentAssociatedConformance, t, proto)
		nested := p.popIf(isDependentConformance)
		return p.with3(kDependentProtocolConformanceAssociated, nested, assoc, idx)
	case 'C':
		list := p.popAnyConformanceList()
		ref := p.popKind(kProtocolConformanceRefInTypeModule)
		if ref == nil {
			ref = p.popKind(kProtocolConformanceRefInProtocolModule)
		}
		if ref == nil {
			mod := p.popModule()
			proto := p.popProtocol()
			ref = p.with2(kProtocolConformanceRef, proto, mod)
		}
		t := p.popKind(kType)
		return p.with3(kConcreteProtocolConformance, t, ref, list)
	case 'D':
		idx := p.dependentConformanceIndex()
		proto := p.popProtocol()
		t := p.popKind(kType)
		return p.with3(kDependentProtocolConformanceRoot, t, proto, idx)
	case 'I':
		idx := p.dependentConformanceIndex()
		proto := p.popProtocol()
		nested := p.popIf(isDependentConformance)
		return p.with3(kDependentProtocolConformanceInherited, nested, proto, idx)
	case 'P':
		return p.with1(kProtocolConformanceRefInTypeModule, p.popProtocol())
	case 'p':
		return p.with1(kProtocolConformanceRefInProtocolModule, p.popProtocol())
	case 'X':
		return p.with1(kPackProtocolConformance, p.popAnyConformanceList())
	case 'c':
		return p.with1(kProtocolConformanceDescriptorRecord, p.popProtocolConformance())
	case 'n':
		return p.with1(kNominalTypeDescriptorRecord, p.popKind(kType))
	case 'o':
		return p.with1(kOpaqueTypeDescriptorRecord, p.pop())
	case 'r':
		return p.with1(kProtocolDescriptorRecord, p.popProtocol())
	case 'F':
		return p.create(kAccessibleFunctionRecord)
	}
	return nil
}

func isDependentConformance(k kind) bool {
	return k == kDependentProtocolConformanceRoot || k == kDependentProtocolConformanceInherited ||
		k == kDependentProtocolConformanceAssociated
}

func (p *parser) dependentConformanceIndex() *node {
	i, ok := p.index()
	if !ok || i == 0 {
		return nil
	}
	if i == 1 {
		return p.create(kUnknownIndex)
	}
	return p.createIndex(kIndex, i-2)
}

func (p *parser) popProtocolConformance() *node {
	sig := p.popKind(kDependentGenericSignature)
	mod := p.popModule()
	proto := p.popProtocol()
	t := p.popKind(kType)
	var id *node
	if t == nil {
		id = p.popKind(kIdentifier)
		t = p.popKind(kType)
	}
	if sig != nil {
		t = p.typ(p.with2(kDependentGenericType, sig, t))
	}
	c := p.with3(kProtocolConformance, t, proto, mod)
	if id != nil {
		p.add(c, id)
	}
	return c
}

// Generics.

func (p *parser) genericParamIndex() *node {
	if p.nextIf('d') {
		d, ok1 := p.index()
		i, ok2 := p.index()
		if !ok1 || !ok2 {
			return nil
		}
		return p.depParam(d+1, i)
	}
	if p.nextIf('z') {
		return p.depParam(0, 0)
	}
	if p.nextIf('s') {
		return p.create(kConstrainedExistentialSelf)
	}
	i, ok := p.index()
	if !ok {
		return nil
	}
	return p.depParam(0, i+1)
}

func (p *parser) genericSignature(hasCounts bool) *node {
	sig := p.create(kDependentGenericSignature)
	if hasCounts {
		for !p.nextIf('l') {
			var count uint64
			if !p.nextIf('z') {
				i, ok := p.index()
				if !ok {
					return nil
				}
				count = i + 1
			}
			p.a.add(sig, p.createIndex(kDependentGenericParamCount, count))
		}
	} else {
		p.a.add(sig, p.createIndex(kDependentGenericParamCount, 1))
	}
	n := len(sig.kids)
	for {
		r := p.popIf(isRequirement)
		if r == nil {
			break
		}
		p.a.add(sig, r)
	}
	reverseKids(sig, n)
	return sig
}

func (p *parser) genericType() *node {
	sig := p.popKind(kDependentGenericSignature)
	t := p.popKind(kType)
	return p.typ(p.with2(kDependentGenericType, sig, t))
}

func (p *parser) popAssocTypeName() *node {
	proto := p.popKind(kType)
	if proto != nil && !isProtocolNode(proto) {
		return nil
	}
	id := p.popKind(kIdentifier)
	if id == nil {
		return nil
	}
	ref := p.with1(kDependentAssociatedTypeRef, id)
	if proto != nil {
		p.a.add(ref, proto)
	}
	return ref
}

func (p *parser) popAssocTypePath() *node {
	path := p.create(kAssocTypePath)
	for {
		first := p.popKind(kFirstElementMarker) != nil
		name := p.popIf(isDeclName)
		if name == nil {
			return nil
		}
		p.a.add(path, name)
		if first {
			break
		}
	}
	reverseKids(path, 0)
	return path
}

func (p *parser) assocTypeSimple(base *node) *node {
	name := p.popAssocTypeName()
	var bt *node
	if base != nil {
		bt = p.typ(base)
	} else {
		bt = p.popKind(kType)
	}
	return p.typ(p.with2(kDependentMemberType, bt, name))
}

func (p *parser) assocTypeCompound(base *node) *node {
	var names []*node
	for {
		first := p.popKind(kFirstElementMarker) != nil
		n := p.popAssocTypeName()
		if n == nil {
			return nil
		}
		names = append(names, n)
		if first {
			break
		}
	}
	var bt *node
	if base != nil {
		bt = p.typ(base)
	} else {
		bt = p.popKind(kType)
	}
	for i := len(names) - 1; i >= 0; i-- {
		bt = p.typ(p.with2(kDependentMemberType, bt, names[i]))
	}
	return bt
}

func (p *parser) genericRequirement() *node {
	const (
		generic = iota
		assoc
		compound
		subst
	)
	const (
		cProtocol = iota
		cBaseClass
		cSameType
		cSameShape
		cLayout
		cPack
		cInverse
		cValue
	)
	var tk, ck int
	switch p.next() {
	case 'V':
		ck, tk = cValue, generic
	case 'v':
		ck, tk = cPack, generic
	case 'c':
		ck, tk = cBaseClass, assoc
	case 'C':
		ck, tk = cBaseClass, compound
	case 'b':
		ck, tk = cBaseClass, generic
	case 'B':
		ck, tk = cBaseClass, subst
	case 't':
		ck, tk = cSameType, assoc
	case 'T':
		ck, tk = cSameType, compound
	case 's':
		ck, tk = cSameType, generic
	case 'S':
		ck, tk = cSameType, subst
	case 'h':
		ck, tk = cSameShape, generic
	case 'm':
		ck, tk = cLayout, assoc
	case 'M':
		ck, tk = cLayout, compound
	case 'l':
		ck, tk = cLayout, generic
	case 'L':
		ck, tk = cLayout, subst
	case 'p':
		ck, tk = cProtocol, assoc
	case 'P':
		ck, tk = cProtocol, compound
	case 'Q':
		ck, tk = cProtocol, subst
	case 'i':
		ck, tk = cInverse, generic
	case 'I':
		ck, tk = cInverse, subst
	case 'j':
		ck, tk = cInverse, assoc
	case 'J':
		ck, tk = cInverse, compound
	default:
		ck, tk = cProtocol, generic
		p.pushBack()
	}
	var inverseBit *node
	if ck == cInverse {
		inverseBit = p.indexNode()
		if inverseBit == nil {
			return nil
		}
	}
	var ct *node
	switch tk {
	case generic:
		ct = p.typ(p.genericParamIndex())
	case assoc:
		ct = p.assocTypeSimple(p.genericParamIndex())
		p.addSubst(ct)
	case compound:
		ct = p.assocTypeCompound(p.genericParamIndex())
		p.addSubst(ct)
	case subst:
		ct = p.popKind(kType)
	}
	if ct == nil {
		return nil
	}
	switch ck {
	case cValue:
		return p.with2(kDependentGenericParamValueMarker, ct, p.popKind(kType))
	case cPack:
		return p.with1(kDependentGenericParamPackMarker, ct)
	case cInverse:
		return p.with2(kDependentGenericInverseConformanceRequirement, ct, inverseBit)
	case cProtocol:
		return p.with2(kDependentGenericConformanceRequirement, ct, p.popProtocol())
	case cBaseClass:
		return p.with2(kDependentGenericConformanceRequirement, ct, p.popKind(kType))
	case cSameType:
		return p.with2(kDependentGenericSameTypeRequirement, ct, p.popKind(kType))
	case cSameShape:
		return p.with2(kDependentGenericSameShapeRequirement, ct, p.popKind(kType))
	}
	var size, align *node
	c := p.next()
	switch c {
	case 'U', 'R', 'N', 'C', 'D', 'T', 'B', 'S':
	case 'E', 'M':
		size = p.indexNode()
		align = p.indexNode()
		if size == nil || align == nil {
			return nil
		}
	case 'e', 'm':
		size = p.indexNode()
		if size == nil {
			return nil
		}
	default:
		return nil
	}
	req := p.with2(kDependentGenericLayoutRequirement, ct, p.createText(kIdentifier, p.text[p.pos-1:p.pos]))
	if size != nil {
		p.a.add(req, size)
	}
	if align != nil {
		p.a.add(req, align)
	}
	return req
}

func (p *parser) archetype() *node {
	switch p.next() {
	case 'a':
		id := p.popKind(kIdentifier)
		base := p.popTypeAndGetChild()
		t := p.typ(p.with2(kAssociatedTypeRef, base, id))
		p.addSubst(t)
		return t
	case 'O':
		return p.with1(kOpaqueReturnTypeOf, p.popContext())
	case 'o':
		i, ok := p.index()
		if !ok {
			return nil
		}
		lists, retro, ok := p.boundGenerics()
		if !ok {
			return nil
		}
		name := p.pop()
		if name == nil {
			return nil
		}
		args := p.create(kTypeList)
		for j := len(lists) - 1; j >= 0; j-- {
			p.a.add(args, lists[j])
		}
		o := p.with3(kOpaqueType, name, p.createIndex(kIndex, i), args)
		if retro != nil {
			p.a.add(o, retro)
		}
		t := p.typ(o)
		p.addSubst(t)
		return t
	case 'r':
		return p.typ(p.create(kOpaqueReturnType))
	case 'R':
		i, ok := p.index()
		if !ok {
			return nil
		}
		return p.typ(p.with1(kOpaqueReturnType, p.createIndex(kOpaqueReturnTypeIndex, i)))
	case 'u':
		return p.typ(p.create(kOpaqueReturnType))
	case 'U':
		i, ok := p.index()
		if !ok {
			return nil
		}
		return p.typ(p.with1(kOpaqueReturnType, p.createIndex(kOpaqueReturnTypeIndex, i)))
	case 'x':
		t := p.assocTypeSimple(nil)
		p.addSubst(t)
		return t
	case 'X':
		t := p.assocTypeCompound(nil)
		p.addSubst(t)
		return t
	case 'y':
		t := p.assocTypeSimple(p.genericParamIndex())
		p.addSubst(t)
		return t
	case 'Y':
		t := p.assocTypeCompound(p.genericParamIndex())
		p.addSubst(t)
		return t
	case 'z':
		t := p.assocTypeSimple(p.depParam(0, 0))
		p.addSubst(t)
		return t
	case 'Z':
		t := p.assocTypeCompound(p.depParam(0, 0))
		p.addSubst(t)
		return t
	case 'p':
		count := p.popKind(kType)
		pattern := p.popKind(kType)
		return p.typ(p.with2(kPackExpansion, pattern, count))
	case 'e':
		lvl, ok := p.index()
		if !ok {
			return nil
		}
		t := p.popKind(kType)
		return p.typ(p.with2(kPackElement, t, p.createIndex(kPackElementLevel, lvl)))
	case 'P':
		return p.typ(p.popPack(kPack))
	case 'S':
		switch p.next() {
		case 'd':
			return p.typ(p.popPack(kSILPackDirect))
		case 'i':
			return p.typ(p.popPack(kSILPackIndirect))
		}
	}
	return nil
}

func (p *parser) popPack(k kind) *node {
	root := p.create(k)
	if p.popKind(kEmptyList) == nil {
		for {
			first := p.popKind(kFirstElementMarker) != nil
			t := p.popKind(kType)
			if t == nil {
				return nil
			}
			p.a.add(root, t)
			if first {
				break
			}
		}
		reverseKids(root, 0)
	}
	return root
}

// Entities.

func (p *parser) functionEntity() *node {
	const (
		none = iota
		typeAndName
		typeAndIndex
		justIndex
	)
	var args int
	var k kind
	switch p.next() {
	case 'D':
		k = kDeallocator
	case 'd':
		k = kDestructor
	case 'Z':
		k = kIsolatedDeallocator
	case 'E':
		k = kIVarDestroyer
	case 'e':
		k = kIVarInitializer
	case 'i':
		k = kInitializer
	case 'C':
		args, k = typeAndName, kAllocator
	case 'c':
		args, k = typeAndName, kConstructor
	case 'U':
		args, k = typeAndIndex, kExplicitClosure
	case 'u':
		args, k = typeAndIndex, kImplicitClosure
	case 'A':
		args, k = justIndex, kDefaultArgumentInitializer
	case 'p':
		return p.entity(kGenericTypeParamDecl)
	case 'm':
		return p.entity(kMacro)
	case 'P':
		k = kPropertyWrapperBackingInitializer
	case 'W':
		k = kPropertyWrapperInitFromProjectedValue
	default:
		return nil
	}
	var nameOrIndex, paramType, labels *node
	switch args {
	case typeAndName:
		nameOrIndex = p.popKind(kPrivateDeclName)
		paramType = p.popKind(kType)
		labels = p.popFunctionParamLabels(paramType)
	case typeAndIndex:
		nameOrIndex = p.indexNode()
		paramType = p.popKind(kType)
	case justIndex:
		nameOrIndex = p.indexNode()
	}
	e := p.with1(k, p.popContext())
	switch args {
	case justIndex:
		e = p.add(e, nameOrIndex)
	case typeAndName:
		if e != nil && labels != nil {
			p.a.add(e, labels)
		}
		e = p.add(e, paramType)
		if e != nil && nameOrIndex != nil {
			p.a.add(e, nameOrIndex)
		}
	case typeAndIndex:
		e = p.add(e, nameOrIndex)
		e = p.add(e, paramType)
	}
	return e
}

func (p *parser) entity(k kind) *node {
	t := p.popKind(kType)
	labels := p.popFunctionParamLabels(t)
	name := p.popIf(isDeclName)
	ctx := p.popContext()
	if labels != nil {
		return p.with4(k, ctx, name, labels, t)
	}
	return p.with3(k, ctx, name, t)
}

func (p *parser) variable() *node { return p.accessor(p.entity(kVariable)) }

func (p *parser) subscript() *node {
	priv := p.popKind(kPrivateDeclName)
	t := p.popKind(kType)
	labels := p.popFunctionParamLabels(t)
	ctx := p.popContext()
	s := p.with1(kSubscript, ctx)
	if s != nil && labels != nil {
		p.a.add(s, labels)
	}
	s = p.add(s, t)
	if s != nil && priv != nil {
		p.a.add(s, priv)
	}
	return p.accessor(s)
}

func (p *parser) accessor(child *node) *node {
	var k kind
	switch p.next() {
	case 'm':
		k = kMaterializeForSet
	case 's':
		k = kSetter
	case 'g':
		k = kGetter
	case 'G':
		k = kGlobalGetter
	case 'w':
		k = kWillSet
	case 'W':
		k = kDidSet
	case 'r':
		k = kReadAccessor
	case 'M':
		k = kModifyAccessor
	case 'i':
		k = kInitAccessor
	case 'x':
		k = kModify2Accessor
	case 'y':
		k = kRead2Accessor
	case 'b':
		k = kBorrowAccessor
	case 'z':
		k = kMutateAccessor
	case 'a':
		switch p.next() {
		case 'O':
			k = kOwningMutableAddressor
		case 'o':
			k = kNativeOwningMutableAddressor
		case 'p':
			k = kNativePinningMutableAddressor
		case 'u':
			k = kUnsafeMutableAddressor
		default:
			return nil
		}
	case 'l':
		switch p.next() {
		case 'O':
			k = kOwningAddressor
		case 'o':
			k = kNativeOwningAddressor
		case 'p':
			k = kNativePinningAddressor
		case 'u':
			k = kUnsafeAddressor
		default:
			return nil
		}
	case 'p':
		return child
	default:
		return nil
	}
	return p.with1(k, child)
}

// Metadata, witnesses and thunks.

func (p *parser) metatype() *node {
	var k kind
	switch p.next() {
	case 'a':
		k = kTypeMetadataAccessFunction
	case 'A':
		return p.with1(kReflectionMetadataAssocTypeDescriptor, p.popProtocolConformance())
	case 'b':
		k = kCanonicalSpecializedGenericTypeMetadataAccessFunction
	case 'B':
		k = kReflectionMetadataBuiltinDescriptor
	case 'c':
		return p.with1(kProtocolConformanceDescriptor, p.popProtocolConformance())
	case 'C':
		t := p.popKind(kType)
		if t == nil || !isAnyGeneric(t.kid(0).kindOr()) {
			return nil
		}
		return p.with1(kReflectionMetadataSuperclassDescriptor, t.kids[0])
	case 'D':
		k = kTypeMetadataDemanglingCache
	case 'f':
		k = kFullTypeMetadata
	case 'F':
		k = kReflectionMetadataFieldDescriptor
	case 'g':
		return p.with1(kOpaqueTypeDescriptorAccessor, p.pop())
	case 'h':
		return p.with1(kOpaqueTypeDescriptorAccessorImpl, p.pop())
	case 'i':
		k = kTypeMetadataInstantiationFunction
	case 'I':
		k = kTypeMetadataInstantiationCache
	case 'j':
		return p.with1(kOpaqueTypeDescriptorAccessorKey, p.pop())
	case 'J':
		return p.with1(kNoncanonicalSpecializedGenericTypeMetadataCache, p.pop())
	case 'k':
		return p.with1(kOpaqueTypeDescriptorAccessorVar, p.pop())
	case 'K':
		return p.with1(kMetadataInstantiationCache, p.pop())
	case 'l':
		k = kTypeMetadataSingletonInitializationCache
	case 'L':
		k = kTypeMetadataLazyCache
	case 'm':
		k = kMetaclass
	case 'M':
		k = kCanonicalPrespecializedGenericTypeCachingOnceToken
	case 'n':
		k = kNominalTypeDescriptor
	case 'N':
		k = kNoncanonicalSpecializedGenericTypeMetadata
	case 'o':
		k = kClassMetadataBaseOffset
	case 'p':
		return p.with1(kProtocolDescriptor, p.popProtocol())
	case 'P':
		k = kGenericTypeMetadataPattern
	case 'q':
		return p.with1(kUniquable, p.pop())
	case 'Q':
		return p.with1(kOpaqueTypeDescriptor, p.pop())
	case 'r':
		k = kTypeMetadataCompletionFunction
	case 's':
		k = kObjCResilientClassStub
	case 'S':
		return p.with1(kProtocolSelfConformanceDescriptor, p.popProtocol())
	case 't':
		k = kFullObjCResilientClassStub
	case 'u':
		k = kMethodLookupFunction
	case 'U':
		k = kObjCMetadataUpdateFunction
	case 'V':
		return p.with1(kPropertyDescriptor, p.popIf(isEntity))
	case 'X':
		switch p.next() {
		case 'E':
			return p.with1(kExtensionDescriptor, p.popContext())
		case 'M':
			return p.with1(kModuleDescriptor, p.popModule())
		case 'Y':
			types := p.popTypeList()
			name := p.popKind(kIdentifier)
			ctx := p.popContext()
			return p.with1(kAnonymousDescriptor, p.with3(kAnonymousContext, name, ctx, types))
		case 'X':
			return p.with1(kAnonymousDescriptor, p.popContext())
		case 'A':
			path := p.popAssocTypePath()
			t := p.popKind(kType)
			return p.with2(kAssociatedTypeGenericParamRef, t, path)
		}
		return nil
	case 'z':
		k = kCanonicalPrespecializedGenericTypeCachingOnceToken
	default:
		return nil
	}
	return p.with1(k, p.popKind(kType))
}

func (p *parser) witness() *node {
	switch c := p.next(); c {
	case 'C':
		return p.with1(kEnumCase, p.popIf(isEntity))
	case 'V':
		return p.with1(kValueWitnessTable, p.popKind(kType))
	case 'v':
		var d uint64
		switch p.next() {
		case 'd':
			d = 0
		case 'i':
			d = 1
		default:
			return nil
		}
		return p.with2(kFieldOffset, p.createIndex(kDirectness, d), p.popIf(isEntity))
	case 'S':
		return p.with1(kProtocolSelfConformanceWitnessTable, p.popProtocol())
	case 'P':
		return p.with1(kProtocolWitnessTable, p.popProtocolConformance())
	case 'p':
		return p.with1(kProtocolWitnessTablePattern, p.popProtocolConformance())
	case 'G':
		return p.with1(kGenericProtocolWitnessTable, p.popProtocolConformance())
	case 'I':
		return p.with1(kGenericProtocolWitnessTableInstantiationFunction, p.popProtocolConformance())
	case 'r':
		return p.with1(kResilientProtocolWitnessTable, p.popProtocolConformance())
	case 'l', 'L':
		conf := p.popProtocolConformance()
		t := p.popKind(kType)
		k := kLazyProtocolWitnessTableAccessor
		if c == 'L' {
			k = kLazyProtocolWitnessTableCacheVariable
		}
		return p.with2(k, t, conf)
	case 'a':
		return p.with1(kProtocolWitnessTableAccessor, p.popProtocolConformance())
	case 't':
		name := p.popIf(isDeclName)
		conf := p.popProtocolConformance()
		return p.with2(kAssociatedTypeMetadataAccessor, conf, name)
	case 'T':
		proto := p.popKind(kType)
		path := p.popAssocTypePath()
		conf := p.popProtocolConformance()
		return p.with3(kAssociatedTypeWitnessTableAccessor, conf, path, proto)
	case 'b':
		proto := p.popKind(kType)
		conf := p.popProtocolConformance()
		return p.with2(kBaseWitnessTableAccessor, conf, proto)
	case 'O':
		var k kind
		switch p.next() {
		case 'y':
			k = kOutlinedCopy
		case 'e':
			k = kOutlinedConsume
		case 'r':
			k = kOutlinedRetain
		case 's':
			k = kOutlinedRelease
		case 'b':
			k = kOutlinedInitializeWithTake
		case 'c':
			k = kOutlinedInitializeWithCopy
		case 'd':
			k = kOutlinedAssignWithTake
		case 'f':
			k = kOutlinedAssignWithCopy
		case 'h':
			k = kOutlinedDestroy
		case 'B':
			k = kOutlinedInitializeWithTakeNoValueWitness
		case 'C':
			k = kOutlinedInitializeWithCopyNoValueWitness
		case 'D':
			k = kOutlinedAssignWithTakeNoValueWitness
		case 'F':
			k = kOutlinedAssignWithCopyNoValueWitness
		case 'H':
			k = kOutlinedDestroyNoValueWitness
		case 'i':
			k = kOutlinedEnumTagStore
		case 'j':
			k = kOutlinedEnumProjectDataForLoad
		case 'g':
			k = kOutlinedEnumGetTag
		default:
			return nil
		}
		if sig := p.popKind(kDependentGenericSignature); sig != nil {
			return p.with2(k, p.popKind(kType), sig)
		}
		return p.with1(k, p.popKind(kType))
	case 'Z', 'z':
		list := p.create(kGlobalVariableOnceDeclList)
		var vars []*node
		for p.popKind(kFirstElementMarker) != nil {
			id := p.popIf(isDeclName)
			if id == nil {
				return nil
			}
			vars = append(vars, id)
		}
		for i := len(vars) - 1; i >= 0; i-- {
			p.a.add(list, vars[i])
		}
		ctx := p.popContext()
		k := kGlobalVariableOnceFunction
		if c == 'z' {
			k = kGlobalVariableOnceToken
		}
		return p.with2(k, ctx, list)
	case 'J':
		return p.differentiabilityWitness()
	}
	return nil
}

// valueWitnessNames lists the value witnesses by their two-letter code, in
// the order of the runtime's ValueWitnessKind.
var valueWitnessNames = [...]struct{ code, name string }{
	{"al", "allocateBuffer"},
	{"ca", "assignWithCopy"},
	{"ta", "assignWithTake"},
	{"de", "deallocateBuffer"},
	{"xx", "destroy"},
	{"XX", "destroyBuffer"},
	{"Xx", "destroyArray"},
	{"CP", "initializeBufferWithCopyOfBuffer"},
	{"Cp", "initializeBufferWithCopy"},
	{"cp", "initializeWithCopy"},
	{"TK", "initializeBufferWithTakeOfBuffer"},
	{"Tk", "initializeBufferWithTake"},
	{"tk", "initializeWithTake"},
	{"pr", "projectBuffer"},
	{"xs", "storeExtraInhabitant"},
	{"xg", "getExtraInhabitantIndex"},
	{"Cc", "initializeArrayWithCopy"},
	{"Tt", "initializeArrayWithTakeFrontToBack"},
	{"tT", "initializeArrayWithTakeBackToFront"},
	{"ug", "getEnumTag"},
	{"up", "destructiveProjectEnumData"},
	{"ui", "destructiveInjectEnumTag"},
	{"et", "getEnumTagSinglePayload"},
	{"st", "storeEnumTagSinglePayload"},
}

func valueWitnessIndex(code string) (uint64, bool) {
	for i := range valueWitnessNames {
		if valueWitnessNames[i].code == code {
			return uint64(i), true
		}
	}
	return 0, false
}

func (p *parser) valueWitness() *node {
	if p.pos+2 > len(p.text) {
		return nil
	}
	i, ok := valueWitnessIndex(p.text[p.pos : p.pos+2])
	if !ok {
		return nil
	}
	p.pos += 2
	return p.with2(kValueWitness, p.createIndex(kIndex, i), p.popKind(kType))
}

func (p *parser) specialType() *node {
	switch c := p.next(); c {
	case 'E':
		return p.popFunctionType(kNoEscapeFunctionType, false)
	case 'A':
		return p.popFunctionType(kEscapingAutoClosureType, false)
	case 'f':
		return p.popFunctionType(kThinFunctionType, false)
	case 'K':
		return p.popFunctionType(kAutoClosureType, false)
	case 'U':
		return p.popFunctionType(kUncurriedFunctionType, false)
	case 'L':
		return p.popFunctionType(kEscapingObjCBlock, false)
	case 'B':
		return p.popFunctionType(kObjCBlock, false)
	case 'C':
		return p.popFunctionType(kCFunctionPointer, false)
	case 'z':
		switch p.next() {
		case 'B':
			return p.popFunctionType(kObjCBlock, true)
		case 'C':
			return p.popFunctionType(kCFunctionPointer, true)
		}
		return nil
	case 'o':
		return p.typ(p.with1(kUnowned, p.popKind(kType)))
	case 'u':
		return p.typ(p.with1(kUnmanaged, p.popKind(kType)))
	case 'w':
		return p.typ(p.with1(kWeak, p.popKind(kType)))
	case 'b':
		return p.typ(p.with1(kSILBoxType, p.popKind(kType)))
	case 'D':
		return p.typ(p.with1(kDynamicSelf, p.popKind(kType)))
	case 'M':
		mtr := p.metatypeRepr()
		t := p.popKind(kType)
		return p.typ(p.with2(kMetatype, mtr, t))
	case 'm':
		mtr := p.metatypeRepr()
		t := p.popKind(kType)
		return p.typ(p.with2(kExistentialMetatype, mtr, t))
	case 'p':
		return p.typ(p.with1(kExistentialMetatype, p.popKind(kType)))
	case 'c':
		super := p.popKind(kType)
		protos := p.protocolList()
		return p.typ(p.with2(kProtocolListWithClass, protos, super))
	case 'l':
		return p.typ(p.with1(kProtocolListWithAnyObject, p.protocolList()))
	case 'X', 'x':
		var sig, args *node
		if c == 'X' {
			sig = p.popKind(kDependentGenericSignature)
			if sig == nil {
				return nil
			}
			args = p.popTypeList()
			if args == nil {
				return nil
			}
		}
		fields := p.popTypeList()
		if fields == nil {
			return nil
		}
		layout := p.create(kSILBoxLayout)
		for _, ft := range fields.kids {
			fk := kSILBoxImmutableField
			if ft.kid(0).kindIs(kInOut) {
				fk = kSILBoxMutableField
				ft = p.typ(ft.kid(0).kid(0))
				if ft == nil {
					return nil
				}
			}
			p.a.add(layout, p.with1(fk, ft))
		}
		box := p.with1(kSILBoxTypeWithLayout, layout)
		if sig != nil {
			p.a.add(box, sig)
			p.a.add(box, args)
		}
		return p.typ(box)
	case 'Y':
		return p.anyGenericType(kOtherNominalType)
	case 'Z':
		types := p.popTypeList()
		name := p.popIf(isDeclName)
		ctx := p.popContext()
		return p.with3(kAnonymousContext, name, ctx, types)
	case 'e':
		return p.typ(p.create(kErrorType))
	case 'S':
		switch p.next() {
		case 'q':
			return p.typ(p.with1(kSugaredOptional, p.popKind(kType)))
		case 'a':
			return p.typ(p.with1(kSugaredArray, p.popKind(kType)))
		case 'D':
			v := p.popKind(kType)
			k := p.popKind(kType)
			return p.typ(p.with2(kSugaredDictionary, k, v))
		case 'p':
			return p.typ(p.with1(kSugaredParen, p.popKind(kType)))
		case 'A':
			e := p.popKind(kType)
			n := p.popKind(kType)
			return p.typ(p.with2(kSugaredInlineArray, n, e))
		}
		return nil
	case 'P':
		reqs := p.create(kConstrainedExistentialRequirementList)
		for {
			first := p.popKind(kFirstElementMarker) != nil
			r := p.popIf(isRequirement)
			if r == nil {
				return nil
			}
			p.a.add(reqs, r)
			if first {
				break
			}
		}
		reverseKids(reqs, 0)
		base := p.popKind(kType)
		return p.typ(p.with2(kConstrainedExistential, base, reqs))
	}
	return nil
}

func (p *parser) metatypeRepr() *node {
	switch p.next() {
	case 't':
		return p.createText(kMetatypeRepresentation, "@thin")
	case 'T':
		return p.createText(kMetatypeRepresentation, "@thick")
	case 'o':
		return p.createText(kMetatypeRepresentation, "@objc_metatype")
	}
	return nil
}

func (p *parser) typeAnnotation() *node {
	switch p.next() {
	case 'a':
		return p.create(kAsyncAnnotation)
	case 'A':
		return p.create(kIsolatedAnyFunctionType)
	case 'b':
		return p.createText(kConcurrentFunctionType, "@Sendable ")
	case 'c':
		return p.with1(kGlobalActorFunctionType, p.popTypeAndGetChild())
	case 'C':
		return p.create(kNonIsolatedCallerFunctionType)
	case 'i':
		return p.typ(p.with1(kIsolated, p.popTypeAndGetChild()))
	case 'j':
		switch c := p.next(); c {
		case 'f', 'r', 'd', 'l':
			return p.createIndex(kDifferentiableFunctionType, uint64(c))
		}
		return nil
	case 'k':
		return p.typ(p.with1(kNoDerivative, p.popTypeAndGetChild()))
	case 'K':
		return p.with1(kTypedThrowsAnnotation, p.popTypeAndGetChild())
	case 't':
		return p.typ(p.with1(kCompileTimeLiteral, p.popTypeAndGetChild()))
	case 'T':
		return p.create(kSendingResultFunctionType)
	case 'u':
		return p.typ(p.with1(kSending, p.popTypeAndGetChild()))
	}
	// Before Swift 5.5 settled on Ya, a bare Y marked async functions.
	p.pushBack()
	return p.create(kAsyncAnnotation)
}

func (p *parser) implFunctionType() *node {
	fn := p.create(kImplFunctionType)
	if p.nextIf('s') {
		lists, _, ok := p.boundGenerics()
		if !ok || len(lists) != 1 {
			return nil
		}
		sig := p.popKind(kDependentGenericSignature)
		if sig == nil {
			return nil
		}
		subs := p.with1(kImplPatternSubstitutions, sig)
		for _, a := range lists[0].kids {
			p.a.add(subs, a)
		}
		p.a.add(fn, subs)
	}
	if p.nextIf('I') {
		lists, _, ok := p.boundGenerics()
		if !ok || len(lists) != 1 {
			return nil
		}
		subs := p.create(kImplInvocationSubstitutions)
		for _, a := range lists[0].kids {
			p.a.add(subs, a)
		}
		p.a.add(fn, subs)
	}
	sig := p.popKind(kDependentGenericSignature)
	if sig != nil && p.nextIf('P') {
		sig = p.changeKind(sig, kDependentPseudogenericSignature)
	}
	if p.nextIf('e') {
		p.a.add(fn, p.create(kImplEscaping))
	}
	if p.nextIf('A') {
		p.a.add(fn, p.create(kImplErasedIsolation))
	}
	switch c := p.peek(); c {
	case 'd', 'l', 'f', 'r':
		p.next()
		p.a.add(fn, p.createIndex(kImplDifferentiabilityKind, uint64(c)))
	}
	var callee string
	switch p.next() {
	case 'y':
		callee = "@callee_unowned"
	case 'g':
		callee = "@callee_guaranteed"
	case 'x':
		callee = "@callee_owned"
	case 't':
		callee = "@convention(thin)"
	default:
		return nil
	}
	p.a.add(fn, p.createText(kImplConvention, callee))
	var conv string
	var clang *node
	switch p.next() {
	case 'B':
		conv = "block"
	case 'C':
		conv = "c"
	case 'z':
		switch p.next() {
		case 'B':
			conv = "block"
		case 'C':
			conv = "c"
		default:
			return nil
		}
		if clang = p.clangType(); clang == nil {
			return nil
		}
	case 'M':
		conv = "method"
	case 'O':
		conv = "objc_method"
	case 'K':
		conv = "closure"
	case 'W':
		conv = "witness_method"
	default:
		p.pushBack()
	}
	if conv != "" {
		fc := p.with1(kImplFunctionConvention, p.createText(kImplFunctionConventionName, conv))
		if clang != nil {
			p.a.add(fc, clang)
		}
		p.a.add(fn, fc)
	}
	switch {
	case p.nextIf('A'):
		p.a.add(fn, p.createText(kImplCoroutineKind, "yield_once"))
	case p.nextIf('I'):
		p.a.add(fn, p.createText(kImplCoroutineKind, "yield_once_2"))
	case p.nextIf('G'):
		p.a.add(fn, p.createText(kImplCoroutineKind, "yield_many"))
	}
	if p.nextIf('h') {
		p.a.add(fn, p.createText(kImplFunctionAttribute, "@Sendable"))
	}
	if p.nextIf('H') {
		p.a.add(fn, p.createText(kImplFunctionAttribute, "@async"))
	}
	if p.nextIf('T') {
		p.a.add(fn, p.create(kImplSendingResult))
	}
	if sig != nil {
		p.a.add(fn, sig)
	}
	numTypes := 0
	for {
		param := p.implConvention(kImplParameter, true)
		if param == nil {
			break
		}
		if p.nextIf('w') {
			p.a.add(param, p.createText(kImplParameterResultDifferentiability, "@noDerivative"))
		}
		p.a.add(fn, param)
		numTypes++
	}
	for {
		res := p.implConvention(kImplResult, false)
		if res == nil {
			break
		}
		if p.nextIf('w') {
			p.a.add(res, p.createText(kImplParameterResultDifferentiability, "@noDerivative"))
		}
		p.a.add(fn, res)
		numTypes++
	}
	for p.nextIf('Y') {
		y := p.implConvention(kImplYield, true)
		if y == nil {
			return nil
		}
		p.a.add(fn, y)
		numTypes++
	}
	if p.nextIf('z') {
		e := p.implConvention(kImplErrorResult, false)
		if e == nil {
			return nil
		}
		p.a.add(fn, e)
		numTypes++
	}
	if !p.nextIf('_') {
		return nil
	}
	for i := 0; i < numTypes; i++ {
		t := p.popKind(kType)
		if t == nil {
			return nil
		}
		p.a.add(fn.kids[len(fn.kids)-i-1], t)
	}
	return p.typ(fn)
}

func (p *parser) implConvention(k kind, param bool) *node {
	var attr string
	c := p.next()
	if param {
		switch c {
		case 'i':
			attr = "@in"
		case 'c':
			attr = "@in_constant"
		case 'l':
			attr = "@inout"
		case 'b':
			attr = "@inout_aliasable"
		case 'n':
			attr = "@in_guaranteed"
		case 'X':
			attr = "@in_cxx"
		case 'x':
			attr = "@owned"
		case 'g':
			attr = "@guaranteed"
		case 'e':
			attr = "@deallocating"
		case 'y':
			attr = "@unowned"
		case 'v':
			attr = "@pack_owned"
		case 'p':
			attr = "@pack_guaranteed"
		case 'm':
			attr = "@pack_inout"
		}
	} else {
		switch c {
		case 'r':
			attr = "@out"
		case 'o':
			attr = "@owned"
		case 'd':
			attr = "@unowned"
		case 'u':
			attr = "@unowned_inner_pointer"
		case 'a':
			attr = "@autoreleased"
		case 'k':
			attr = "@pack_out"
		}
	}
	if attr == "" {
		p.pushBack()
		return nil
	}
	return p.with1(k, p.createText(kImplConvention, attr))
}

func (p *parser) thunkOrSpecialization() *node {
	c := p.next()
	switch c {
	case 'c':
		return p.with1(kCurryThunk, p.popIf(isEntity))
	case 'j':
		return p.with1(kDispatchThunk, p.popIf(isEntity))
	case 'q':
		return p.with1(kMethodDescriptor, p.popIf(isEntity))
	case 'o':
		return p.create(kObjCAttribute)
	case 'O':
		return p.create(kNonObjCAttribute)
	case 'D':
		return p.create(kDynamicAttribute)
	case 'd':
		return p.create(kDirectMethodReferenceAttribute)
	case 'E':
		return p.create(kDistributedThunk)
	case 'F':
		return p.create(kDistributedAccessor)
	case 'a':
		return p.create(kPartialApplyObjCForwarder)
	case 'A':
		return p.create(kPartialApplyForwarder)
	case 'm':
		return p.create(kMergedFunction)
	case 'X':
		return p.create(kDynamicallyReplaceableFunctionVar)
	case 'x':
		return p.create(kDynamicallyReplaceableFunctionKey)
	case 'I':
		return p.create(kDynamicallyReplaceableFunctionImpl)
	case 'Y', 'Q':
		k := kAsyncSuspendResumePartialFunction
		if c == 'Q' {
			k = kAsyncAwaitResumePartialFunction
		}
		return p.with1(k, p.indexNode())
	case 'C':
		return p.with1(kCoroutineContinuationPrototype, p.popKind(kType))
	case 'z', 'Z':
		flag := p.indexNode()
		sig := p.popKind(kDependentGenericSignature)
		res := p.popKind(kType)
		impl := p.popKind(kType)
		k := kObjCAsyncCompletionHandlerImpl
		if c == 'Z' {
			k = kPredefinedObjCAsyncCompletionHandlerImpl
		}
		n := p.with3(k, impl, res, flag)
		if n != nil && sig != nil {
			p.a.add(n, sig)
		}
		return n
	case 'V':
		base := p.popIf(isEntity)
		derived := p.popIf(isEntity)
		return p.with2(kVTableThunk, derived, base)
	case 'W':
		e := p.popIf(isEntity)
		conf := p.popProtocolConformance()
		return p.with2(kProtocolWitness, conf, e)
	case 'S':
		return p.with1(kProtocolSelfConformanceWitness, p.popIf(isEntity))
	case 'R', 'r', 'y':
		k := kReabstractionThunk
		switch c {
		case 'R':
			k = kReabstractionThunkHelper
		case 'y':
			k = kReabstractionThunkHelperWithSelf
		}
		thunk := p.create(k)
		if sig := p.popKind(kDependentGenericSignature); sig != nil {
			p.a.add(thunk, sig)
		}
		if k == kReabstractionThunkHelperWithSelf {
			thunk = p.add(thunk, p.popKind(kType))
		}
		thunk = p.add(thunk, p.popKind(kType))
		thunk = p.add(thunk, p.popKind(kType))
		return thunk
	case 'g':
		return p.genericSpecialization(kGenericSpecialization, nil)
	case 'G':
		return p.genericSpecialization(kGenericSpecializationNotReAbstracted, nil)
	case 'B':
		return p.genericSpecialization(kGenericSpecializationInResilienceDomain, nil)
	case 't':
		dropped := []*node{}
		p.pushBack()
		for p.nextIf('t') {
			n := uint64(0)
			if isDigit(p.peek()) {
				v, ok := p.natural()
				if !ok {
					return nil
				}
				n = v + 1
			}
			dropped = append(dropped, p.createIndex(kDroppedArgument, n))
		}
		switch p.next() {
		case 'g':
			return p.genericSpecialization(kGenericSpecialization, dropped)
		case 'G':
			return p.genericSpecialization(kGenericSpecializationNotReAbstracted, dropped)
		case 'B':
			return p.genericSpecialization(kGenericSpecializationInResilienceDomain, dropped)
		}
		return nil
	case 's':
		return p.genericSpecialization(kGenericSpecializationPrespecialized, nil)
	case 'i':
		return p.genericSpecialization(kInlinedGenericFunction, nil)
	case 'p', 'P':
		k := kGenericPartialSpecialization
		if c == 'P' {
			k = kGenericPartialSpecializationNotReAbstracted
		}
		spec := p.specAttributes(k)
		param := p.with1(kGenericSpecializationParam, p.popKind(kType))
		return p.add(spec, param)
	case 'f':
		return p.functionSpecialization()
	case 'K', 'k':
		k := kKeyPathGetterThunkHelper
		if c == 'k' {
			k = kKeyPathSetterThunkHelper
		}
		serialized := p.nextIf('q')
		var types []*node
		n := p.pop()
		if n == nil || n.kind != kType {
			return nil
		}
		for n != nil && n.kind == kType {
			types = append(types, n)
			n = p.pop()
		}
		var res *node
		if n == nil {
			return nil
		}
		if n.kind == kDependentGenericSignature {
			decl := p.pop()
			if decl == nil {
				return nil
			}
			res = p.with2(k, decl, n)
		} else {
			res = p.with1(k, n)
		}
		for i := len(types) - 1; i >= 0; i-- {
			p.a.add(res, types[i])
		}
		if serialized {
			p.a.add(res, p.create(kIsSerialized))
		}
		return res
	case 'l':
		return p.with1(kAssociatedTypeDescriptor, p.popAssocTypeName())
	case 'L':
		return p.with1(kProtocolRequirementsBaseDescriptor, p.popProtocol())
	case 'M':
		return p.with1(kDefaultAssociatedTypeMetadataAccessor, p.popAssocTypeName())
	case 'n', 'N':
		req := p.popProtocol()
		conforming := p.popAssocTypePath()
		proto := p.popKind(kType)
		k := kAssociatedConformanceDescriptor
		if c == 'N' {
			k = kDefaultAssociatedConformanceAccessor
		}
		return p.with3(k, proto, conforming, req)
	case 'b':
		req := p.popProtocol()
		proto := p.popKind(kType)
		return p.with2(kBaseConformanceDescriptor, proto, req)
	case 'H', 'h':
		k := kKeyPathEqualsThunkHelper
		if c == 'h' {
			k = kKeyPathHashThunkHelper
		}
		serialized := p.nextIf('q')
		var sig *node
		var types []*node
		n := p.pop()
		switch {
		case n == nil:
			return nil
		case n.kind == kDependentGenericSignature:
			sig = n
		case n.kind == kType:
			types = append(types, n)
		default:
			return nil
		}
		for {
			n := p.pop()
			if n == nil {
				break
			}
			if n.kind != kType {
				return nil
			}
			types = append(types, n)
		}
		res := p.create(k)
		for i := len(types) - 1; i >= 0; i-- {
			p.a.add(res, types[i])
		}
		if sig != nil {
			p.a.add(res, sig)
		}
		if serialized {
			p.a.add(res, p.create(kIsSerialized))
		}
		return res
	case 'v':
		i, ok := p.index()
		if !ok {
			return nil
		}
		if p.nextIf('r') {
			return p.createIndex(kOutlinedReadOnlyObject, i)
		}
		return p.createIndex(kOutlinedVariable, i)
	case 'e':
		s := p.bridgedMethodParams()
		if s == "" {
			return nil
		}
		return p.createText(kOutlinedBridgedMethod, s)
	case 'u':
		return p.create(kAsyncFunctionPointer)
	case 'U':
		ga := p.popKind(kType)
		thunk := p.pop()
		return p.with2(kReabstractionThunkHelperWithGlobalActor, thunk, ga)
	case 'J':
		switch p.peek() {
		case 'S':
			p.next()
			return p.autoDiffSubsetParametersThunk()
		case 'O':
			p.next()
			return p.autoDiffSelfReorderingThunk()
		case 'V':
			p.next()
			return p.autoDiffFunction(kAutoDiffDerivativeVTableThunk)
		}
		return p.autoDiffFunction(kAutoDiffFunction)
	case 'w':
		switch p.next() {
		case 'b':
			return p.create(kBackDeploymentThunk)
		case 'B':
			return p.create(kBackDeploymentFallback)
		case 'S':
			return p.create(kHasSymbolQuery)
		case 'c':
			return p.create(kCoroFunctionPointer)
		case 'd':
			return p.create(kDefaultOverride)
		}
		// Swift 5.x used a bare Tw for the thunk of a partial apply whose
		// callee is not a constant.
		p.pushBack()
		return p.with1(kNonConstantPartialApplyThunk, p.popIf(isEntity))
	}
	return nil
}

func (p *parser) bridgedMethodParams() string {
	if p.nextIf('_') {
		return ""
	}
	start := p.pos
	switch p.next() {
	case 'p', 'a', 'm':
	default:
		return ""
	}
	for !p.nextIf('_') {
		switch p.next() {
		case 'n', 'b', 'g':
		default:
			return ""
		}
	}
	return p.text[start : p.pos-1]
}

func (p *parser) specAttributes(k kind) *node {
	serialized := p.nextIf('q')
	asyncRemoved := p.nextIf('a')
	p.nextIf('r')
	c := p.next()
	if c < '0' || c > '9' {
		return nil
	}
	spec := p.create(k)
	if serialized {
		p.a.add(spec, p.create(kIsSerialized))
	}
	if asyncRemoved {
		p.a.add(spec, p.create(kAsyncRemoved))
	}
	p.a.add(spec, p.createIndex(kSpecializationPassID, uint64(c-'0')))
	return spec
}

func (p *parser) genericSpecialization(k kind, dropped []*node) *node {
	spec := p.specAttributes(k)
	if spec == nil {
		return nil
	}
	for _, d := range dropped {
		p.a.add(spec, d)
	}
	list := p.popTypeList()
	if list == nil {
		return nil
	}
	for _, t := range list.kids {
		p.a.add(spec, p.with1(kGenericSpecializationParam, t))
	}
	return spec
}

// Function signature specialization parameter kinds, as numbered by the
// reference implementation; the values above 63 are flags.
const (
	fsConstantPropFunction = 0
	fsConstantPropGlobal   = 1
	fsConstantPropInteger  = 2
	fsConstantPropFloat    = 3
	fsConstantPropString   = 4
	fsClosureProp          = 5
	fsBoxToValue           = 6
	fsBoxToStack           = 7
	fsInOutToOut           = 8
	fsConstantPropKeyPath  = 9
	fsConstantPropStruct   = 10
	fsClosurePropPrevious  = 11
	fsDead                 = 1 << 6
	fsOwnedToGuaranteed    = 1 << 7
	fsSROA                 = 1 << 8
	fsGuaranteedToOwned    = 1 << 9
	fsExistentialToGeneric = 1 << 10
)

func (p *parser) functionSpecialization() *node {
	spec := p.specAttributes(kFunctionSignatureSpecialization)
	for spec != nil && !p.nextIf('_') {
		if p.pos >= len(p.text) {
			return nil
		}
		spec = p.add(spec, p.funcSpecParam(kFunctionSignatureSpecializationParam))
	}
	if !p.nextIf('n') {
		spec = p.add(spec, p.funcSpecParam(kFunctionSignatureSpecializationReturn))
	}
	if spec == nil {
		return nil
	}
	for i := len(spec.kids) - 1; i >= 0; i-- {
		param := spec.kids[i]
		if param.kind != kFunctionSignatureSpecializationParam || len(param.kids) == 0 {
			continue
		}
		pk := param.kids[0].index
		switch pk {
		case fsConstantPropFunction, fsConstantPropGlobal, fsConstantPropString,
			fsConstantPropKeyPath, fsClosureProp:
			fixed := len(param.kids)
			for {
				t := p.popKind(kType)
				if t == nil {
					break
				}
				if pk != fsClosureProp && pk != fsConstantPropKeyPath {
					return nil
				}
				p.a.add(param, t)
			}
			name := p.popKind(kIdentifier)
			if name == nil {
				return nil
			}
			text := name.text
			if pk == fsConstantPropString && len(text) > 0 && text[0] == '_' {
				// A '_' escapes a leading digit or '_' of a string constant.
				text = text[1:]
			}
			p.a.add(param, p.createText(kFunctionSignatureSpecializationParamPayload, text))
			reverseKids(param, fixed)
		}
	}
	return spec
}

func (p *parser) funcSpecParam(k kind) *node {
	param := p.create(k)
	kindNode := func(v uint64) *node {
		p.a.add(param, p.createIndex(kFunctionSignatureSpecializationParamKind, v))
		return param
	}
	switch p.next() {
	case 'n':
		return param
	case 'c':
		return kindNode(fsClosureProp)
	case 'C':
		kindNode(fsClosurePropPrevious)
		return p.addDigits(param)
	case 'p':
		switch p.next() {
		case 'f':
			return kindNode(fsConstantPropFunction)
		case 'g':
			return kindNode(fsConstantPropGlobal)
		case 'i':
			kindNode(fsConstantPropInteger)
			return p.addDigits(param)
		case 'd':
			kindNode(fsConstantPropFloat)
			return p.addDigits(param)
		case 's':
			var enc string
			switch p.next() {
			case 'b':
				enc = "u8"
			case 'w':
				enc = "u16"
			case 'c':
				enc = "objc"
			default:
				return nil
			}
			kindNode(fsConstantPropString)
			p.a.add(param, p.createText(kFunctionSignatureSpecializationParamPayload, enc))
			return param
		case 'k':
			return kindNode(fsConstantPropKeyPath)
		}
		return nil
	case 'e':
		v := uint64(fsExistentialToGeneric)
		if p.nextIf('D') {
			v |= fsDead
		}
		if p.nextIf('G') {
			v |= fsOwnedToGuaranteed
		}
		if p.nextIf('O') {
			v |= fsGuaranteedToOwned
		}
		if p.nextIf('X') {
			v |= fsSROA
		}
		return kindNode(v)
	case 'd':
		v := uint64(fsDead)
		if p.nextIf('G') {
			v |= fsOwnedToGuaranteed
		}
		if p.nextIf('O') {
			v |= fsGuaranteedToOwned
		}
		if p.nextIf('X') {
			v |= fsSROA
		}
		return kindNode(v)
	case 'g':
		v := uint64(fsOwnedToGuaranteed)
		if p.nextIf('X') {
			v |= fsSROA
		}
		return kindNode(v)
	case 'o':
		v := uint64(fsGuaranteedToOwned)
		if p.nextIf('X') {
			v |= fsSROA
		}
		return kindNode(v)
	case 'x':
		return kindNode(fsSROA)
	case 'i':
		return kindNode(fsBoxToValue)
	case 's':
		return kindNode(fsBoxToStack)
	case 'r':
		return kindNode(fsInOutToOut)
	}
	return nil
}

func (p *parser) addDigits(param *node) *node {
	start := p.pos
	p.nextIf('n') // a negative constant
	for isDigit(p.peek()) {
		p.next()
	}
	if p.pos == start {
		return nil
	}
	return p.add(param, p.createText(kFunctionSignatureSpecializationParamPayload, p.text[start:p.pos]))
}

// Automatic differentiation.

func (p *parser) autoDiffKind() *node {
	switch c := p.next(); c {
	case 'f', 'r', 'd', 'p':
		return p.createIndex(kAutoDiffFunctionKind, uint64(c))
	}
	return nil
}

func (p *parser) indexSubset() *node {
	start := p.pos
	for c := p.peek(); c == 'S' || c == 'U'; c = p.peek() {
		p.next()
	}
	if p.pos == start {
		return nil
	}
	return p.createText(kIndexSubset, p.text[start:p.pos])
}

func (p *parser) popAll(res *node) *node {
	for {
		n := p.pop()
		if n == nil {
			break
		}
		p.a.add(res, n)
	}
	reverseKids(res, 0)
	return res
}

func (p *parser) autoDiffFunction(k kind) *node {
	res := p.popAll(p.create(k))
	res = p.add(res, p.autoDiffKind())
	res = p.add(res, p.indexSubset())
	if !p.nextIf('p') {
		return nil
	}
	res = p.add(res, p.indexSubset())
	if !p.nextIf('r') {
		return nil
	}
	return res
}

func (p *parser) autoDiffSubsetParametersThunk() *node {
	res := p.popAll(p.create(kAutoDiffSubsetParametersThunk))
	res = p.add(res, p.autoDiffKind())
	res = p.add(res, p.indexSubset())
	if !p.nextIf('p') {
		return nil
	}
	res = p.add(res, p.indexSubset())
	if !p.nextIf('r') {
		return nil
	}
	res = p.add(res, p.indexSubset())
	if !p.nextIf('P') {
		return nil
	}
	return res
}

func (p *parser) autoDiffSelfReorderingThunk() *node {
	res := p.create(kAutoDiffSelfReorderingReabstractionThunk)
	if sig := p.popKind(kDependentGenericSignature); sig != nil {
		p.a.add(res, sig)
	}
	res = p.add(res, p.popKind(kType))
	res = p.add(res, p.popKind(kType))
	reverseKids(res, 0)
	return p.add(res, p.autoDiffKind())
}

func (p *parser) differentiabilityWitness() *node {
	res := p.create(kDifferentiabilityWitness)
	sig := p.popKind(kDependentGenericSignature)
	p.popAll(res)
	var k uint64
	switch c := p.next(); c {
	case 'f', 'r', 'd', 'l':
		k = uint64(c)
	default:
		return nil
	}
	res = p.add(res, p.createIndex(kIndex, k))
	res = p.add(res, p.indexSubset())
	if !p.nextIf('p') {
		return nil
	}
	res = p.add(res, p.indexSubset())
	if !p.nextIf('r') {
		return nil
	}
	if res != nil && sig != nil {
		p.a.add(res, sig)
	}
	return res
}

func utoa(u uint64) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + u%10)
		u /= 10
		if u == 0 {
			break
		}
	}
	return string(b[i:])
}

func quoteByte(c byte) string {
	if c >= 0x21 && c < 0x7f {
		return "'" + string(c) + "'"
	}
	const hex = "0123456789abcdef"
	return "0x" + string(hex[c>>4]) + string(hex[c&15])
}
