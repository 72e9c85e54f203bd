package swift

// This file reads the Swift 1–3 mangling (prefix _T, but not _T0). It is
// prefix-ordered and read by recursive descent. Mangling.rst no longer
// describes it; the shapes of the trees it builds match the current parser's
// so that one printer serves both.

type oldParser struct {
	p     *parser // node factory, input and error position
	subs  []*node
	depth int
}

func (o *oldParser) enter() bool {
	o.depth++
	if o.depth > maxDepth || o.p.work > o.p.budget {
		o.p.limited = true
		return false
	}
	return true
}

func (o *oldParser) leave() { o.depth-- }

func (o *oldParser) empty() bool { return o.p.pos >= len(o.p.text) }

// natural reads [0-9]+. The legacy demangler let large values wrap, and the
// fixtures depend on that, so this one does too; values are only used as
// counts that the printer caps, or as lengths that are checked.
func (o *oldParser) natural() (uint64, bool) {
	s, i := o.p.text, o.p.pos
	if uint(i) >= uint(len(s)) || !isDigit(s[i]) {
		return 0, false
	}
	var n uint64
	for ; i < len(s) && isDigit(s[i]); i++ {
		n = n*10 + uint64(s[i]-'0')
	}
	o.p.pos = i
	return n, true
}

func (o *oldParser) index() (uint64, bool) {
	if o.p.nextIf('_') {
		return 0, true
	}
	n, ok := o.natural()
	if !ok || !o.p.nextIf('_') {
		return 0, false
	}
	return n + 1, true
}

func (o *oldParser) indexNode() *node {
	i, ok := o.index()
	if !ok {
		return nil
	}
	return o.p.createIndex(kNumber, i)
}

func (o *oldParser) topLevel() *node {
	p := o.p
	if !p.nextIfStr("_T") {
		return nil
	}
	top := p.create(kGlobal)
	// Most names have no attribute; one peek spares them the string
	// comparisons below.
	if p.peek() == 'T' {
		switch {
		case p.nextIfStr("TS"):
			for {
				spec := o.specializedAttribute()
				if spec == nil {
					return nil
				}
				p.a.add(top, spec)
				// Each specialization header has its own substitutions.
				o.subs = o.subs[:0]
				if !p.nextIfStr("_TTS") {
					break
				}
			}
			if !p.nextIfStr("_T") {
				return nil
			}
		case p.nextIfStr("To"):
			p.a.add(top, p.create(kObjCAttribute))
		case p.nextIfStr("TO"):
			p.a.add(top, p.create(kNonObjCAttribute))
		case p.nextIfStr("TD"):
			p.a.add(top, p.create(kDynamicAttribute))
		case p.nextIfStr("Td"):
			p.a.add(top, p.create(kDirectMethodReferenceAttribute))
		case p.nextIfStr("TV"):
			p.a.add(top, p.create(kVTableAttribute))
		}
	}
	g := o.global()
	if g == nil {
		return nil
	}
	p.a.add(top, g)
	if !o.empty() {
		p.a.add(top, p.createText(kSuffix, p.text[p.pos:]))
		p.pos = len(p.text)
	}
	return top
}

func (o *oldParser) global() *node {
	if !o.enter() {
		return nil
	}
	n := o.globalImpl()
	o.leave()
	return n
}

func (o *oldParser) globalImpl() *node {
	p := o.p
	if o.empty() {
		return nil
	}
	switch p.next() {
	case 'M':
		var k kind
		switch p.next() {
		case 'P':
			k = kGenericTypeMetadataPattern
		case 'a':
			k = kTypeMetadataAccessFunction
		case 'L':
			k = kTypeMetadataLazyCache
		case 'm':
			k = kMetaclass
		case 'n':
			k = kNominalTypeDescriptor
		case 'f':
			k = kFullTypeMetadata
		case 'p':
			return p.with1(kProtocolDescriptor, o.protocolName())
		default:
			p.pushBack()
			k = kTypeMetadata
		}
		return p.with1(k, o.typ())
	case 'P':
		if !p.nextIf('A') {
			break
		}
		k := kPartialApplyForwarder
		if p.nextIf('o') {
			k = kPartialApplyObjCForwarder
		}
		fwd := p.create(k)
		if p.nextIfStr("__T") {
			fwd = p.add(fwd, o.global())
		}
		return fwd
	case 't':
		return p.with1(kTypeMangling, o.typ())
	case 'w':
		if p.pos+2 > len(p.text) {
			return nil
		}
		i, ok := valueWitnessIndex(p.text[p.pos : p.pos+2])
		if !ok {
			return nil
		}
		p.pos += 2
		return p.with2(kValueWitness, p.createIndex(kIndex, i), o.typ())
	case 'W':
		switch p.next() {
		case 'V':
			return p.with1(kValueWitnessTable, o.typ())
		case 'v':
			var d uint64
			switch {
			case p.nextIf('d'):
			case p.nextIf('i'):
				d = 1
			default:
				return nil
			}
			return p.with2(kFieldOffset, p.createIndex(kDirectness, d), o.entity())
		case 'o':
			return p.with1(kWitnessTableOffset, o.entity())
		case 'P':
			return p.with1(kProtocolWitnessTable, o.protocolConformance())
		case 'G':
			return p.with1(kGenericProtocolWitnessTable, o.protocolConformance())
		case 'I':
			return p.with1(kGenericProtocolWitnessTableInstantiationFunction, o.protocolConformance())
		case 'l':
			t := o.typ()
			return p.with2(kLazyProtocolWitnessTableAccessor, t, o.protocolConformance())
		case 'L':
			t := o.typ()
			return p.with2(kLazyProtocolWitnessTableCacheVariable, t, o.protocolConformance())
		case 'a':
			return p.with1(kProtocolWitnessTableAccessor, o.protocolConformance())
		case 't':
			c := o.protocolConformance()
			return p.with2(kAssociatedTypeMetadataAccessor, c, o.declName())
		case 'T':
			c := o.protocolConformance()
			n := o.declName()
			return p.with3(kAssociatedTypeWitnessTableAccessor, c, n, o.protocolName())
		}
		p.pushBack() // report the offset of the unknown letter
		return nil
	case 'T':
		switch p.next() {
		case 'R':
			return o.reabstractSignature(p.create(kReabstractionThunkHelper))
		case 'r':
			return o.reabstractSignature(p.create(kReabstractionThunk))
		case 'W':
			c := o.protocolConformance()
			return p.with2(kProtocolWitness, c, o.entity())
		}
		p.pushBack()
		return nil
	}
	p.pushBack()
	return o.entity()
}

func (o *oldParser) reabstractSignature(thunk *node) *node {
	p := o.p
	if p.nextIf('G') {
		thunk = p.add(thunk, o.genericSignature(false))
	}
	thunk = p.add(thunk, o.typ())
	return p.add(thunk, o.typ())
}

func (o *oldParser) specializedAttribute() *node {
	p := o.p
	notReAbstracted := false
	if p.nextIf('g') || func() bool { notReAbstracted = p.nextIf('r'); return notReAbstracted }() {
		k := kGenericSpecialization
		if notReAbstracted {
			k = kGenericSpecializationNotReAbstracted
		}
		spec := p.create(k)
		if p.nextIf('q') {
			p.a.add(spec, p.create(kIsSerialized))
		}
		if o.empty() {
			return nil
		}
		p.a.add(spec, p.createIndex(kSpecializationPassID, uint64(p.next())-'0'))
		for !p.nextIf('_') {
			param := p.with1(kGenericSpecializationParam, o.typ())
			if param == nil {
				return nil
			}
			for !p.nextIf('_') {
				c := o.protocolConformance()
				if c == nil {
					return nil
				}
				p.a.add(param, c)
			}
			p.a.add(spec, param)
		}
		return spec
	}
	if p.nextIf('f') {
		spec := p.create(kFunctionSignatureSpecialization)
		if p.nextIf('q') {
			p.a.add(spec, p.create(kIsSerialized))
		}
		if o.empty() {
			return nil
		}
		p.a.add(spec, p.createIndex(kSpecializationPassID, uint64(p.next())-'0'))
		for n := uint64(0); !p.nextIf('_'); n++ {
			param := o.funcSigSpecializationParam(n)
			if param == nil {
				return nil
			}
			p.a.add(spec, param)
		}
		return spec
	}
	return nil
}

func (o *oldParser) funcSigSpecializationParam(n uint64) *node {
	p := o.p
	param := p.createIndex(kFunctionSignatureSpecializationParam, n)
	kindNode := func(v uint64) { p.a.add(param, p.createIndex(kFunctionSignatureSpecializationParamKind, v)) }
	payload := func(s string) { p.a.add(param, p.createText(kFunctionSignatureSpecializationParamPayload, s)) }
	switch {
	case p.nextIfStr("n_"):
		return param
	case p.nextIfStr("cl"):
		kindNode(fsClosureProp)
		name := o.identifier(kIdentifier)
		if name == nil {
			return nil
		}
		payload(name.text)
		for !o.empty() && p.peek() != '_' {
			t := o.typ()
			if t == nil {
				break
			}
			p.a.add(param, t)
		}
		if !p.nextIf('_') {
			return nil
		}
		return param
	case p.nextIfStr("cp"):
		switch {
		case p.nextIfStr("fr"), p.nextIf('g'):
			k := uint64(fsConstantPropFunction)
			if p.text[p.pos-1] == 'g' {
				k = fsConstantPropGlobal
			}
			kindNode(k)
			name := o.identifier(kIdentifier)
			if name == nil || !p.nextIf('_') {
				return nil
			}
			payload(name.text)
			return param
		case p.nextIf('i'), p.nextIfStr("fl"):
			k := uint64(fsConstantPropInteger)
			if p.text[p.pos-1] == 'l' {
				k = fsConstantPropFloat
			}
			start := p.pos
			for !o.empty() && p.peek() != '_' {
				p.next()
			}
			if !p.nextIf('_') || p.pos-1 == start {
				return nil
			}
			kindNode(k)
			payload(p.text[start : p.pos-1])
			return param
		case p.nextIfStr("se"):
			enc, ok := o.natural()
			if !ok {
				return nil
			}
			var es string
			switch enc {
			case 0:
				es = "u8"
			case 1:
				es = "u16"
			default:
				return nil
			}
			if !p.nextIf('v') {
				return nil
			}
			str := o.identifier(kIdentifier)
			if str == nil || !p.nextIf('_') {
				return nil
			}
			kindNode(fsConstantPropString)
			payload(es)
			payload(str.text)
			return param
		}
		return nil
	case p.nextIfStr("i_"):
		kindNode(fsBoxToValue)
		return param
	case p.nextIfStr("k_"):
		kindNode(fsBoxToStack)
		return param
	case p.nextIfStr("r_"):
		kindNode(fsInOutToOut)
		return param
	}
	var v uint64
	if p.nextIf('d') {
		v |= fsDead
	}
	if p.nextIf('g') {
		v |= fsOwnedToGuaranteed
	}
	if p.nextIf('o') {
		v |= fsGuaranteedToOwned
	}
	if p.nextIf('s') {
		v |= fsSROA
	}
	if !p.nextIf('_') || v == 0 {
		return nil
	}
	kindNode(v)
	return param
}

func (o *oldParser) identifier(k kind) *node {
	p := o.p
	if o.empty() {
		return nil
	}
	puny := p.nextIf('X')
	isOp := false
	if p.nextIf('o') {
		isOp = true
		if k != kIdentifier {
			return nil
		}
		switch p.next() {
		case 'p':
			k = kPrefixOperator
		case 'P':
			k = kPostfixOperator
		case 'i':
			k = kInfixOperator
		default:
			return nil
		}
	}
	n, ok := o.natural()
	if rem := len(p.text) - p.pos; !ok || rem < 0 || n > uint64(rem) {
		return nil
	}
	s := p.text[p.pos : p.pos+int(n)]
	p.pos += int(n)
	if puny {
		d, ok := decodePunycode(s)
		if !ok {
			return nil
		}
		s = d
	}
	if s == "" {
		return nil
	}
	if isOp {
		op, ok := decodeOperator(s, nil)
		if !ok {
			return nil
		}
		s = op
	}
	return p.createText(k, s)
}

func isStartOfNominalType(c byte) bool { return c == 'C' || c == 'V' || c == 'O' }

func isStartOfEntity(c byte) bool {
	switch c {
	case 'F', 'I', 'v', 'P', 's', 'Z':
		return true
	}
	return isStartOfNominalType(c)
}

func (o *oldParser) module() *node {
	p := o.p
	if p.nextIf('s') {
		return p.createText(kModule, "Swift")
	}
	if p.nextIf('S') {
		m := o.substitutionIndex()
		if !m.kindIs(kModule) {
			return nil
		}
		return m
	}
	m := o.identifier(kModule)
	if m == nil {
		return nil
	}
	o.subs = append(o.subs, m)
	return m
}

func (o *oldParser) context() *node {
	if !o.enter() {
		return nil
	}
	n := o.contextImpl()
	o.leave()
	return n
}

func (o *oldParser) contextImpl() *node {
	p := o.p
	if o.empty() {
		return nil
	}
	switch p.next() {
	case 'E':
		mod := o.module()
		if mod == nil {
			return nil
		}
		return p.with2(kExtension, mod, o.context())
	case 'e':
		mod := o.module()
		if mod == nil {
			return nil
		}
		sig := o.genericSignature(false)
		if sig == nil {
			return nil
		}
		ctx := o.context()
		return p.with3(kExtension, mod, ctx, sig)
	case 'S':
		return o.substitutionIndex()
	case 's':
		return p.createText(kModule, "Swift")
	case 'G':
		return o.boundGenericType()
	}
	p.pushBack()
	if isStartOfEntity(p.peek()) {
		return o.entity()
	}
	return o.module()
}

func (o *oldParser) swiftType(k kind, name string) *node {
	p := o.p
	return p.with2(k, p.createText(kModule, "Swift"), p.createText(kIdentifier, name))
}

func (o *oldParser) substitutionIndex() *node {
	p := o.p
	if o.empty() {
		return nil
	}
	switch p.next() {
	case 'o':
		return p.createText(kModule, "__C")
	case 'C':
		return p.createText(kModule, "__C_Synthesized")
	case 'a':
		return o.swiftType(kStructure, "Array")
	case 'b':
		return o.swiftType(kStructure, "Bool")
	case 'c':
		return o.swiftType(kStructure, "UnicodeScalar")
	case 'd':
		return o.swiftType(kStructure, "Double")
	case 'f':
		return o.swiftType(kStructure, "Float")
	case 'i':
		return o.swiftType(kStructure, "Int")
	case 'V':
		return o.swiftType(kStructure, "UnsafeRawPointer")
	case 'v':
		return o.swiftType(kStructure, "UnsafeMutableRawPointer")
	case 'P':
		return o.swiftType(kStructure, "UnsafePointer")
	case 'p':
		return o.swiftType(kStructure, "UnsafeMutablePointer")
	case 'q':
		return o.swiftType(kEnum, "Optional")
	case 'Q':
		return o.swiftType(kEnum, "ImplicitlyUnwrappedOptional")
	case 'R':
		return o.swiftType(kStructure, "UnsafeBufferPointer")
	case 'r':
		return o.swiftType(kStructure, "UnsafeMutableBufferPointer")
	case 'S':
		return o.swiftType(kStructure, "String")
	case 'u':
		return o.swiftType(kStructure, "UInt")
	}
	p.pushBack()
	i, ok := o.index()
	if !ok || i >= uint64(len(o.subs)) {
		return nil
	}
	return o.subs[i]
}

func (o *oldParser) declName() *node {
	p := o.p
	switch {
	case p.nextIf('L'):
		disc := o.indexNode()
		if disc == nil {
			return nil
		}
		return p.with2(kLocalDeclName, disc, o.identifier(kIdentifier))
	case p.nextIf('P'):
		disc := o.identifier(kIdentifier)
		if disc == nil {
			return nil
		}
		return p.with2(kPrivateDeclName, disc, o.identifier(kIdentifier))
	}
	return o.identifier(kIdentifier)
}

func (o *oldParser) declaration(k kind) *node {
	ctx := o.context()
	if ctx == nil {
		return nil
	}
	name := o.declName()
	d := o.p.with2(k, ctx, name)
	if d != nil {
		o.subs = append(o.subs, d)
	}
	return d
}

func (o *oldParser) protocolName() *node {
	return o.p.typ(o.protocolNameImpl())
}

func (o *oldParser) protocolNameGivenContext(ctx *node) *node {
	name := o.declName()
	proto := o.p.with2(kProtocol, ctx, name)
	if proto != nil {
		o.subs = append(o.subs, proto)
	}
	return proto
}

func (o *oldParser) protocolNameImpl() *node {
	p := o.p
	if p.nextIf('S') {
		sub := o.substitutionIndex()
		switch {
		case sub.kindIs(kProtocol):
			return sub
		case sub.kindIs(kModule):
			return o.protocolNameGivenContext(sub)
		}
		return nil
	}
	if p.nextIf('s') {
		return o.protocolNameGivenContext(p.createText(kModule, "Swift"))
	}
	return o.declaration(kProtocol)
}

func (o *oldParser) nominalType() *node {
	p := o.p
	switch {
	case p.nextIf('S'):
		return o.substitutionIndex()
	case p.nextIf('V'):
		return o.declaration(kStructure)
	case p.nextIf('O'):
		return o.declaration(kEnum)
	case p.nextIf('C'):
		return o.declaration(kClass)
	case p.nextIf('P'):
		return o.declaration(kProtocol)
	}
	return nil
}

func (o *oldParser) boundGenericType() *node {
	n := o.nominalType()
	if n == nil {
		return nil
	}
	return o.boundGenericArgs(n, 0)
}

func (o *oldParser) boundGenericArgs(nominal *node, depth int) *node {
	p := o.p
	if depth > maxDepth {
		p.limited = true
		return nil
	}
	if len(nominal.kids) == 0 {
		return nil
	}
	parent := nominal.kids[0]
	switch parent.kind {
	case kModule, kFunction, kExtension:
	default:
		parent = o.boundGenericArgs(parent, depth+1)
		if parent == nil || len(nominal.kids) < 2 {
			return nil
		}
		nominal = p.with2(nominal.kind, parent, nominal.kids[1])
	}
	args := p.create(kTypeList)
	for !p.nextIf('_') {
		t := o.typ()
		if t == nil {
			return nil
		}
		p.a.add(args, t)
		if o.empty() {
			return nil
		}
	}
	if len(args.kids) == 0 {
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
	default:
		return nil
	}
	return p.with2(k, p.typ(nominal), args)
}

func (o *oldParser) entity() *node {
	if !o.enter() {
		return nil
	}
	n := o.entityImpl()
	o.leave()
	return n
}

func (o *oldParser) entityImpl() *node {
	p := o.p
	isStatic := p.nextIf('Z')
	var basic kind
	switch p.peek() {
	case 'F':
		basic = kFunction
	case 'v':
		basic = kVariable
	case 'I':
		basic = kInitializer
	case 'i':
		basic = kSubscript
	default:
		return o.nominalType()
	}
	p.pos++
	ctx := o.context()
	if ctx == nil {
		return nil
	}
	var k kind
	hasType, wrap, needName := true, false, false
	var name *node
	accessor := func(kk kind) {
		wrap, needName = true, true
		k = kk
		name = o.declName()
	}
	// The letters are tested in one switch: entities are the most common
	// legacy construct, and a chain of nextIf calls costs a test per letter.
	switch p.next() {
	case 'D':
		k, hasType = kDeallocator, false
	case 'd':
		k, hasType = kDestructor, false
	case 'e':
		k, hasType = kIVarInitializer, false
	case 'E':
		k, hasType = kIVarDestroyer, false
	case 'C':
		k = kConstructor
		if ctx.kind == kClass {
			k = kAllocator
		}
	case 'c':
		k = kConstructor
	case 'a':
		switch {
		case p.nextIf('O'):
			accessor(kOwningMutableAddressor)
		case p.nextIf('o'):
			accessor(kNativeOwningMutableAddressor)
		case p.nextIf('p'):
			accessor(kNativePinningMutableAddressor)
		case p.nextIf('u'):
			accessor(kUnsafeMutableAddressor)
		default:
			return nil
		}
	case 'l':
		switch {
		case p.nextIf('O'):
			accessor(kOwningAddressor)
		case p.nextIf('o'):
			accessor(kNativeOwningAddressor)
		case p.nextIf('p'):
			accessor(kNativePinningAddressor)
		case p.nextIf('u'):
			accessor(kUnsafeAddressor)
		default:
			return nil
		}
	case 'g':
		accessor(kGetter)
	case 'G':
		accessor(kGlobalGetter)
	case 's':
		accessor(kSetter)
	case 'm':
		accessor(kMaterializeForSet)
	case 'w':
		accessor(kWillSet)
	case 'W':
		accessor(kDidSet)
	case 'U':
		k, needName = kExplicitClosure, true
		name = o.indexNode()
	case 'u':
		k, needName = kImplicitClosure, true
		name = o.indexNode()
	default:
		p.pushBack()
		if basic != kInitializer {
			k, needName = basic, true
			name = o.declName()
			break
		}
		switch {
		case p.nextIf('A'):
			k, needName = kDefaultArgumentInitializer, true
			name = o.indexNode()
		case p.nextIf('i'):
			k = kInitializer
		default:
			return nil
		}
		hasType = false
	}
	if needName && name == nil {
		return nil
	}
	e := p.create(k)
	if wrap {
		wk := kVariable
		if basic == kSubscript {
			wk = kSubscript
		}
		w := p.create(wk)
		p.a.add(w, ctx)
		p.a.add(w, name)
		if hasType {
			w = p.add(w, o.typ())
		}
		e = p.add(e, w)
	} else {
		p.a.add(e, ctx)
		if name != nil {
			p.a.add(e, name)
		}
		if hasType {
			e = p.add(e, o.typ())
		}
	}
	if isStatic {
		return p.with1(kStatic, e)
	}
	return e
}

func (o *oldParser) protocolConformance() *node {
	t := o.typ()
	if t == nil {
		return nil
	}
	proto := o.protocolName()
	if proto == nil {
		return nil
	}
	return o.p.with3(kProtocolConformance, t, proto, o.context())
}

func (o *oldParser) typ() *node {
	if !o.enter() {
		return nil
	}
	n := o.p.typ(o.typeImpl())
	o.leave()
	return n
}

func (o *oldParser) builtinSize() (uint64, bool) {
	n, ok := o.natural()
	if !ok || !o.p.nextIf('_') || n == 0 || n > maxBuiltinSize {
		return 0, false
	}
	return n, true
}

func (o *oldParser) typeImpl() *node {
	p := o.p
	if o.empty() {
		return nil
	}
	c := p.next()
	switch c {
	case 'B':
		var name string
		switch p.next() {
		case 'b':
			name = "Builtin.BridgeObject"
		case 'B':
			name = "Builtin.UnsafeValueBuffer"
		case 'f':
			n, ok := o.builtinSize()
			if !ok {
				return nil
			}
			name = "Builtin.FPIEEE" + utoa(n)
		case 'i':
			n, ok := o.builtinSize()
			if !ok {
				return nil
			}
			name = "Builtin.Int" + utoa(n)
		case 'v':
			elts, ok := o.natural()
			if !ok || elts == 0 || elts > maxBuiltinSize || !p.nextIf('B') {
				return nil
			}
			switch {
			case p.nextIf('i'):
				n, ok := o.builtinSize()
				if !ok {
					return nil
				}
				name = "Builtin.Vec" + utoa(elts) + "xInt" + utoa(n)
			case p.nextIf('f'):
				n, ok := o.builtinSize()
				if !ok {
					return nil
				}
				name = "Builtin.Vec" + utoa(elts) + "xFloat" + utoa(n)
			case p.nextIf('p'):
				name = "Builtin.Vec" + utoa(elts) + "xRawPointer"
			default:
				return nil
			}
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
		default:
			return nil
		}
		return p.createText(kBuiltinTypeName, name)
	case 'a':
		return o.declaration(kTypeAlias)
	case 'b':
		return o.functionType(kObjCBlock)
	case 'c':
		return o.functionType(kCFunctionPointer)
	case 'D':
		return p.with1(kDynamicSelf, o.typ())
	case 'E':
		if !p.nextIfStr("RR") {
			return nil
		}
		return p.create(kErrorType)
	case 'F':
		return o.functionType(kFunctionType)
	case 'f':
		return o.functionType(kUncurriedFunctionType)
	case 'G':
		return o.boundGenericType()
	case 'K':
		return o.functionType(kAutoClosureType)
	case 'M':
		return p.with1(kMetatype, o.typ())
	case 'P':
		if p.nextIf('M') {
			return p.with1(kExistentialMetatype, o.typ())
		}
		return o.protocolList()
	case 'Q':
		if p.nextIf('u') {
			return p.create(kOpaqueReturnType)
		}
		return o.archetype()
	case 'q':
		return o.dependentType()
	case 'x':
		return p.depParam(0, 0)
	case 'w':
		return o.assocTypeSimple()
	case 'W':
		return o.assocTypeCompound()
	case 'R':
		return p.with1(kInOut, o.typeImpl())
	case 'k':
		return p.with1(kNoDerivative, o.typeImpl())
	case 'S':
		return o.substitutionIndex()
	case 'T':
		return o.tuple(false)
	case 't':
		return o.tuple(true)
	case 'u':
		sig := o.genericSignature(false)
		if sig == nil {
			return nil
		}
		return p.with2(kDependentGenericType, sig, o.typ())
	case 'X':
		switch {
		case p.nextIf('b'):
			return p.with1(kSILBoxType, o.typ())
		case p.nextIf('B'):
			var sig *node
			if p.nextIf('G') {
				if sig = o.genericSignature(false); sig == nil {
					return nil
				}
			}
			layout := p.create(kSILBoxLayout)
			for !p.nextIf('_') {
				var fk kind
				switch {
				case p.nextIf('m'):
					fk = kSILBoxMutableField
				case p.nextIf('i'):
					fk = kSILBoxImmutableField
				default:
					return nil
				}
				f := p.with1(fk, o.typ())
				if f == nil {
					return nil
				}
				p.a.add(layout, f)
			}
			box := p.with1(kSILBoxTypeWithLayout, layout)
			if sig != nil {
				args := p.create(kTypeList)
				for !p.nextIf('_') {
					t := o.typ()
					if t == nil {
						return nil
					}
					p.a.add(args, t)
				}
				p.a.add(box, sig)
				p.a.add(box, args)
			}
			return box
		case p.nextIf('M'):
			r := o.metatypeRepr()
			return p.with2(kMetatype, r, o.typ())
		case p.nextIf('P'):
			if p.nextIf('M') {
				r := o.metatypeRepr()
				return p.with2(kExistentialMetatype, r, o.typ())
			}
			return o.protocolList()
		case p.nextIf('c'):
			super := o.typ()
			return p.with2(kProtocolListWithClass, o.protocolList(), super)
		case p.nextIf('L'):
			return p.with1(kProtocolListWithAnyObject, o.protocolList())
		case p.nextIf('f'):
			return o.functionType(kThinFunctionType)
		case p.nextIf('o'):
			return p.with1(kUnowned, o.typ())
		case p.nextIf('u'):
			return p.with1(kUnmanaged, o.typ())
		case p.nextIf('w'):
			return p.with1(kWeak, o.typ())
		case p.nextIf('F'):
			return o.implFunctionType()
		}
		return nil
	}
	if isStartOfNominalType(c) {
		k := kClass
		switch c {
		case 'V':
			k = kStructure
		case 'O':
			k = kEnum
		}
		return o.declaration(k)
	}
	return nil
}

func (o *oldParser) metatypeRepr() *node {
	p := o.p
	switch {
	case p.nextIf('t'):
		return p.createText(kMetatypeRepresentation, "@thin")
	case p.nextIf('T'):
		return p.createText(kMetatypeRepresentation, "@thick")
	case p.nextIf('o'):
		return p.createText(kMetatypeRepresentation, "@objc_metatype")
	}
	return nil
}

func (o *oldParser) functionType(k kind) *node {
	p := o.p
	throws := p.nextIf('z')
	in := o.typ()
	if in == nil {
		return nil
	}
	out := o.typ()
	if out == nil {
		return nil
	}
	fn := p.create(k)
	if throws {
		p.a.add(fn, p.create(kThrowsAnnotation))
	}
	p.a.add(fn, p.with1(kArgumentTuple, in))
	p.a.add(fn, p.with1(kReturnType, out))
	return fn
}

func (o *oldParser) tuple(variadic bool) *node {
	p := o.p
	tup := p.create(kTuple)
	var el *node
	for !p.nextIf('_') {
		if o.empty() {
			return nil
		}
		el = p.create(kTupleElement)
		if c := p.peek(); isDigit(c) || c == 'o' {
			label := o.identifier(kTupleElementName)
			if label == nil {
				return nil
			}
			p.a.add(el, label)
		}
		t := o.typ()
		if t == nil {
			return nil
		}
		p.a.add(el, t)
		p.a.add(tup, el)
	}
	if variadic && el != nil {
		p.a.add(el, p.create(kVariadicMarker))
	}
	return tup
}

func (o *oldParser) protocolList() *node {
	p := o.p
	list := p.create(kTypeList)
	for !p.nextIf('_') {
		proto := o.protocolName()
		if proto == nil {
			return nil
		}
		p.a.add(list, proto)
	}
	return p.with1(kProtocolList, list)
}

func (o *oldParser) genericParamIndex() *node {
	p := o.p
	switch {
	case p.nextIf('d'):
		d, ok1 := o.index()
		if !ok1 {
			return nil
		}
		i, ok2 := o.index()
		if !ok2 {
			return nil
		}
		return p.depParam(d+1, i)
	case p.nextIf('x'):
		return p.depParam(0, 0)
	}
	i, ok := o.index()
	if !ok {
		return nil
	}
	return p.depParam(0, i+1)
}

func (o *oldParser) dependentType() *node {
	p := o.p
	if o.empty() {
		return nil
	}
	if c := p.peek(); c != 'd' && c != '_' && !isDigit(c) {
		base := o.typ()
		if base == nil {
			return nil
		}
		return o.dependentMemberTypeName(base)
	}
	return o.genericParamIndex()
}

func (o *oldParser) dependentMemberTypeName(base *node) *node {
	p := o.p
	var assoc *node
	if p.nextIf('S') {
		assoc = o.substitutionIndex()
		if !assoc.kindIs(kDependentAssociatedTypeRef) {
			return nil
		}
	} else {
		var proto *node
		if p.nextIf('P') {
			if proto = o.protocolName(); proto == nil {
				return nil
			}
		}
		id := o.identifier(kIdentifier)
		if id == nil {
			return nil
		}
		assoc = p.with1(kDependentAssociatedTypeRef, id)
		if proto != nil {
			p.a.add(assoc, proto)
		}
		o.subs = append(o.subs, assoc)
	}
	return p.with2(kDependentMemberType, base, assoc)
}

func (o *oldParser) assocTypeSimple() *node {
	base := o.genericParamIndex()
	if base == nil {
		return nil
	}
	return o.dependentMemberTypeName(o.p.typ(base))
}

func (o *oldParser) assocTypeCompound() *node {
	base := o.genericParamIndex()
	if base == nil {
		return nil
	}
	for !o.p.nextIf('_') {
		if o.empty() {
			return nil
		}
		base = o.dependentMemberTypeName(o.p.typ(base))
		if base == nil {
			return nil
		}
	}
	return base
}

func (o *oldParser) archetype() *node {
	if !o.enter() {
		return nil
	}
	n := o.archetypeImpl()
	o.leave()
	return n
}

func (o *oldParser) archetypeImpl() *node {
	p := o.p
	assocOf := func(root *node) *node {
		name := o.identifier(kIdentifier)
		n := p.with2(kAssociatedTypeRef, root, name)
		if n != nil {
			o.subs = append(o.subs, n)
		}
		return n
	}
	switch {
	case p.nextIf('Q'):
		root := o.archetype()
		if root == nil {
			return nil
		}
		return assocOf(root)
	case p.nextIf('S'):
		sub := o.substitutionIndex()
		if sub == nil {
			return nil
		}
		if sub.kind == kProtocol {
			n := p.with1(kSelfTypeRef, sub)
			o.subs = append(o.subs, n)
			return n
		}
		return assocOf(sub)
	case p.nextIf('s'):
		return assocOf(p.createText(kModule, "Swift"))
	case p.nextIf('d'):
		d, ok1 := o.index()
		i, ok2 := o.index()
		if !ok1 || !ok2 {
			return nil
		}
		return p.depParam(d+1, i)
	case p.nextIf('q'):
		i := o.indexNode()
		if i == nil {
			return nil
		}
		ctx := o.context()
		return p.with2(kQualifiedArchetype, i, ctx)
	}
	i, ok := o.index()
	if !ok {
		return nil
	}
	return p.depParam(0, i)
}

func (o *oldParser) genericSignature(pseudo bool) *node {
	p := o.p
	k := kDependentGenericSignature
	if pseudo {
		k = kDependentPseudogenericSignature
	}
	sig := p.create(k)
	counted := false
	for !o.empty() && p.peek() != 'R' && p.peek() != 'r' {
		var count uint64
		if p.nextIf('z') {
			count = 0
		} else {
			i, ok := o.index()
			if !ok {
				return nil
			}
			count = i + 1
		}
		p.a.add(sig, p.createIndex(kDependentGenericParamCount, count))
		counted = true
	}
	if !counted {
		p.a.add(sig, p.createIndex(kDependentGenericParamCount, 1))
	}
	if p.nextIf('r') {
		return sig
	}
	if !p.nextIf('R') {
		return nil
	}
	for !p.nextIf('r') {
		if p.work > p.budget {
			p.limited = true
			return nil
		}
		if o.empty() {
			return nil
		}
		r := o.genericRequirement()
		if r == nil {
			return nil
		}
		p.a.add(sig, r)
	}
	return sig
}

func (o *oldParser) genericRequirement() *node {
	p := o.p
	var ct *node
	switch {
	case p.nextIf('w'):
		ct = o.assocTypeSimple()
	case p.nextIf('W'):
		ct = o.assocTypeCompound()
	default:
		ct = o.genericParamIndex()
	}
	if ct == nil {
		return nil
	}
	if p.nextIf('z') {
		return p.with2(kDependentGenericSameTypeRequirement, ct, o.typ())
	}
	if p.nextIf('l') {
		var size, align *node
		c := p.next()
		switch c {
		case 'U', 'R', 'N', 'T':
		case 'E', 'M':
			s, ok := o.natural()
			if !ok || !p.nextIf('_') {
				return nil
			}
			a, ok := o.natural()
			if !ok {
				return nil
			}
			size, align = p.createIndex(kNumber, s), p.createIndex(kNumber, a)
		case 'e', 'm':
			s, ok := o.natural()
			if !ok {
				return nil
			}
			size = p.createIndex(kNumber, s)
		default:
			return nil
		}
		req := p.with2(kDependentGenericLayoutRequirement, ct, p.createText(kIdentifier, string(c)))
		if size != nil {
			p.a.add(req, size)
		}
		if align != nil {
			p.a.add(req, align)
		}
		return req
	}
	if o.empty() {
		return nil
	}
	var constraint *node
	switch p.peek() {
	case 'C':
		constraint = o.typ()
	case 'S':
		p.next()
		sub := o.substitutionIndex()
		var name *node
		switch {
		case sub.kindIs(kProtocol), sub.kindIs(kClass):
			name = sub
		case sub.kindIs(kModule):
			name = o.protocolNameGivenContext(sub)
		}
		constraint = p.typ(name)
	default:
		constraint = o.protocolName()
	}
	return p.with2(kDependentGenericConformanceRequirement, ct, constraint)
}

func (o *oldParser) implFunctionType() *node {
	p := o.p
	fn := p.create(kImplFunctionType)
	callee := o.implConvention(0)
	if callee == "" {
		return nil
	}
	p.a.add(fn, p.createText(kImplConvention, callee))
	if p.nextIf('C') {
		var conv string
		switch {
		case p.nextIf('b'):
			conv = "block"
		case p.nextIf('c'):
			conv = "c"
		case p.nextIf('m'):
			conv = "method"
		case p.nextIf('O'):
			conv = "objc_method"
		case p.nextIf('w'):
			conv = "witness_method"
		default:
			return nil
		}
		p.a.add(fn, p.with1(kImplFunctionConvention, p.createText(kImplFunctionConventionName, conv)))
	}
	if p.nextIf('G') {
		fn = p.add(fn, o.genericSignature(false))
	} else if p.nextIf('g') {
		fn = p.add(fn, o.genericSignature(true))
	}
	if fn == nil || !p.nextIf('_') {
		return nil
	}
	for !p.nextIf('_') {
		if o.empty() {
			return nil
		}
		param := o.implParameterOrResult(kImplParameter)
		if param == nil {
			return nil
		}
		p.a.add(fn, param)
	}
	for !p.nextIf('_') {
		if o.empty() {
			return nil
		}
		res := o.implParameterOrResult(kImplResult)
		if res == nil {
			return nil
		}
		p.a.add(fn, res)
	}
	return fn
}

// implConventions are the convention letters of legacy SIL function types,
// with their spelling for a callee, a parameter and a result.
var implConventions = [...]struct {
	c                 byte
	callee, param, rs string
}{
	{'a', "", "", "@autoreleased"},
	{'d', "@callee_unowned", "@unowned", "@unowned"},
	{'D', "", "", "@unowned_inner_pointer"},
	{'g', "@callee_guaranteed", "@guaranteed", ""},
	{'e', "", "@deallocating", ""},
	{'i', "", "@in", "@out"},
	{'l', "", "@inout", ""},
	{'o', "@callee_owned", "@owned", "@owned"},
	{'t', "@convention(thin)", "", ""},
}

// implConvention reads a convention letter for the callee (ctx 0), a
// parameter (1) or a result (2).
func (o *oldParser) implConvention(ctx int) string {
	p := o.p
	c := p.peek()
	for _, e := range implConventions {
		if e.c != c {
			continue
		}
		s := [3]string{e.callee, e.param, e.rs}[ctx]
		if s != "" {
			p.next()
		}
		return s
	}
	return ""
}

func (o *oldParser) implParameterOrResult(k kind) *node {
	p := o.p
	ctx := 1
	if k == kImplResult {
		ctx = 2
		if p.nextIf('z') {
			k = kImplErrorResult
		}
	}
	conv := o.implConvention(ctx)
	if conv == "" {
		return nil
	}
	t := o.typ()
	if t == nil {
		return nil
	}
	return p.with2(k, p.createText(kImplConvention, conv), t)
}
