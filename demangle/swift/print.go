package swift

import "strings"

// This file prints a node tree the way swift-demangle does: by default with
// every detail, or simplified (no module names, no conformances, short
// thunk and witness names), in the style of simplified-manglings.txt.

type printer struct {
	out    []byte
	simple bool
	limit  bool // a resource limit was hit
	depth  int
	visits int
	maxOut int
	bad    bool
	nest   int // depth of payload demangling, see payload
}

const (
	maxOutput = 1 << 16 // bytes of demangled text
	maxVisits = 1 << 18 // print calls; substitutions make the tree a DAG
)

func (pr *printer) s(str string) { pr.out = append(pr.out, str...) }
func (pr *printer) b(c byte)     { pr.out = append(pr.out, c) }
func (pr *printer) u(v uint64)   { pr.out = appendUint(pr.out, v) }

func appendUint(b []byte, v uint64) []byte {
	var buf [20]byte
	i := len(buf)
	for {
		i--
		buf[i] = byte('0' + v%10)
		v /= 10
		if v == 0 {
			break
		}
	}
	return append(b, buf[i:]...)
}

func (pr *printer) kids(n *node, sep string) {
	for i, c := range n.kids {
		if i > 0 && sep != "" {
			pr.s(sep)
		}
		pr.print(c, false)
	}
}

// appendGenericParamName names a generic parameter A, B, ..., Z, AB, BB,
// ... and appends its depth when it is not 0.
func appendGenericParamName(b []byte, depth, index uint64) []byte {
	for {
		b = append(b, byte('A'+index%26))
		index /= 26
		if index == 0 {
			break
		}
	}
	if depth != 0 {
		b = appendUint(b, depth)
	}
	return b
}

func (pr *printer) print(n *node, asPrefix bool) *node {
	// Every type is wrapped in a Type node that prints as its child.
	for n != nil && n.kind == kType {
		n = n.kid(0)
	}
	if n == nil {
		pr.bad = true
		return nil
	}
	pr.visits++
	if pr.depth >= maxDepth || pr.visits > maxVisits || len(pr.out) > maxOutput {
		pr.bad, pr.limit = true, true
		return nil
	}
	// The kinds that make up most trees are handled here, the rest in
	// printOther; this function runs once per node, so it stays small,
	// as a large frame would cost every call.
	pr.depth++
	var r *node
	switch n.kind {
	case kGlobal, kTypeList:
		pr.kids(n, "")
	case kIdentifier:
		pr.s(n.text)
	case kModule:
		if !pr.simple {
			pr.s(n.text)
		}
	case kClass, kStructure, kEnum, kProtocol, kTypeAlias, kOtherNominalType:
		r = pr.entity(n, asPrefix, typeNone, true, "", -1, "")
	case kFunction:
		r = pr.entity(n, asPrefix, typeFunctionStyle, true, "", -1, "")
	case kVariable:
		r = pr.entity(n, asPrefix, typeWithColon, true, "", -1, "")
	case kFunctionType, kUncurriedFunctionType, kNoEscapeFunctionType:
		pr.functionType(nil, n)
	case kArgumentTuple, kReturnType:
		pr.print(n.kid(0), false)
	case kTuple:
		pr.b('(')
		pr.kids(n, ", ")
		pr.b(')')
	case kBoundGenericClass, kBoundGenericStructure, kBoundGenericEnum, kBoundGenericProtocol,
		kBoundGenericOtherNominalType, kBoundGenericTypeAlias:
		pr.boundGeneric(n)
	case kDependentGenericParamType:
		pr.out = appendGenericParamName(pr.out, n.kid(0).indexOr(), n.kid(1).indexOr())
	case kDependentMemberType:
		pr.print(n.kid(0), false)
		pr.b('.')
		pr.print(n.kid(1), false)
	default:
		r = pr.printOther(n, asPrefix)
	}
	pr.depth--
	return r
}

// printOther handles every kind that print does not.
func (pr *printer) printOther(n *node, asPrefix bool) *node {
	switch n.kind {
	case kType:
		pr.print(n.kid(0), false)
	case kTypeMangling:
		if n.kid(0).kindIs(kLabelList) {
			t := n.kid(1).kid(0)
			if t != nil && isFunctionTypeKind(t.kind) {
				pr.functionType(n.kid(0), t)
				return nil
			}
			pr.print(n.kid(1), false)
			return nil
		}
		pr.print(n.kid(0), false)
	case kSuffix:
		if !pr.simple {
			pr.s(" with unmangled suffix ")
			pr.quoted(n.text)
		}
	case kBuiltinTypeName:
		if i := strings.Index(n.text, "FPIEEE"); pr.simple && i >= 0 {
			// Swift 3 named the IEEE float builtins Builtin.Float<n>.
			pr.s(n.text[:i])
			pr.s("Float")
			pr.s(n.text[i+len("FPIEEE"):])
			return nil
		}
		pr.s(n.text)
	case kMetatypeRepresentation, kImplConvention,
		kImplFunctionAttribute, kImplParameterResultDifferentiability:
		pr.s(n.text)
	case kClangType:
		pr.s(n.text)
	case kTupleElementName:
		pr.s(n.text)
		pr.s(pr.labelSep())
	case kNumber, kIndex:
		pr.u(n.index)
	case kInfixOperator:
		pr.s(n.text)
		pr.s(" infix")
	case kPrefixOperator:
		pr.s(n.text)
		pr.s(" prefix")
	case kPostfixOperator:
		pr.s(n.text)
		pr.s(" postfix")
	case kLocalDeclName:
		pr.print(n.kid(1), false)
		pr.s(" #")
		pr.u(n.kid(0).indexOr() + 1)
	case kPrivateDeclName:
		if n.numKids() > 1 {
			pr.b('(')
			pr.print(n.kid(1), false)
			pr.s(" in ")
			pr.s(n.kid(0).textOr())
			pr.b(')')
		} else {
			pr.s("(in ")
			pr.s(n.kid(0).textOr())
			pr.b(')')
		}
	case kRelatedEntityDeclName:
		pr.s("related decl '")
		pr.s(n.kid(0).textOr())
		pr.s("' for ")
		pr.print(n.kid(1), false)
	case kErrorType:
		pr.s("<ERROR TYPE>")
	case kDynamicSelf:
		pr.s("Self")
	case kVariadicMarker:
		pr.s("...")
	case kEmptyList, kFirstElementMarker, kLabelList, kSpecializationPassID:
	case kInOut:
		pr.prefixed("inout ", n)
	case kShared:
		pr.prefixed("__shared ", n)
	case kOwned:
		pr.prefixed("__owned ", n)
	case kIsolated:
		pr.prefixed("isolated ", n)
	case kSending:
		pr.prefixed("sending ", n)
	case kCompileTimeLiteral:
		pr.prefixed("_const ", n)
	case kNoDerivative:
		pr.prefixed("@noDerivative ", n)
	case kWeak:
		pr.prefixed("weak ", n)
	case kUnowned:
		pr.prefixed("unowned ", n)
	case kUnmanaged:
		pr.prefixed("unowned(unsafe) ", n)
	case kSILBoxType:
		pr.prefixed("@box ", n)
	case kStatic:
		pr.s("static ")
		if pr.simple {
			// The Swift 3 style keeps "static" in front and the storage in
			// the prefix chain: "static T.(x).(closure #1)".
			return pr.print(n.kid(0), asPrefix)
		}
		pr.print(n.kid(0), false)
	case kSILBoxTypeWithLayout:
		if n.numKids() == 3 {
			pr.print(n.kid(1), false)
			pr.b(' ')
		}
		pr.print(n.kid(0), false)
		if n.numKids() == 3 {
			pr.s(" <")
			pr.kids(n.kid(2), ", ")
			pr.b('>')
		}
	case kSILBoxLayout:
		pr.b('{')
		for i, c := range n.kids {
			if i > 0 {
				pr.b(',')
			}
			pr.b(' ')
			pr.print(c, false)
		}
		pr.s(" }")
	case kSILBoxImmutableField:
		pr.prefixed("let ", n)
	case kSILBoxMutableField:
		pr.prefixed("var ", n)
	case kTupleElement:
		if l := n.firstKid(kTupleElementName); l != nil {
			pr.s(l.text)
			pr.s(pr.labelSep())
		}
		pr.print(n.firstKid(kType), false)
		if n.firstKid(kVariadicMarker) != nil {
			pr.s("...")
		}
	case kProtocolList:
		pr.protocolList(n.kid(0))
	case kProtocolListWithClass:
		pr.print(n.kid(1), false)
		pr.s(" & ")
		pr.kids(n.kid(0).kid(0), " & ")
	case kProtocolListWithAnyObject:
		if l := n.kid(0).kid(0); l.numKids() > 0 {
			pr.kids(l, " & ")
			pr.s(" & ")
		}
		if !pr.simple {
			pr.s("Swift.")
		}
		pr.s("AnyObject")
	case kMetatype:
		idx := 0
		if n.numKids() == 2 {
			pr.print(n.kid(0), false)
			pr.b(' ')
			idx = 1
		}
		t := n.kid(idx).kid(0)
		pr.withParens(t)
		if isExistential(t) {
			pr.s(".Protocol")
		} else {
			pr.s(".Type")
		}
	case kExistentialMetatype:
		idx := 0
		if n.numKids() == 2 {
			pr.print(n.kid(0), false)
			pr.b(' ')
			idx = 1
		}
		pr.print(n.kid(idx), false)
		pr.s(".Type")
	case kConstrainedExistentialSelf:
		pr.s("Self")
	case kDependentGenericType:
		pr.print(n.kid(0), false)
		if pr.simple || needSpaceBeforeType(n.kid(1)) {
			pr.b(' ')
		}
		pr.print(n.kid(1), false)
	case kDependentGenericSignature, kDependentPseudogenericSignature:
		pr.genericSignature(n)
	case kDependentGenericConformanceRequirement:
		pr.print(n.kid(0), false)
		pr.s(": ")
		pr.print(n.kid(1), false)
	case kDependentGenericInverseConformanceRequirement:
		pr.print(n.kid(0), false)
		pr.s(": ~")
		switch n.kid(1).indexOr() {
		case 0:
			pr.s("Swift.Copyable")
		case 1:
			pr.s("Swift.Escapable")
		default:
			pr.s("Swift.<bit ")
			pr.u(n.kid(1).indexOr())
			pr.b('>')
		}
	case kDependentGenericSameTypeRequirement:
		pr.print(n.kid(0), false)
		pr.s(" == ")
		pr.print(n.kid(1), false)
	case kDependentGenericSameShapeRequirement:
		pr.print(n.kid(0), false)
		pr.s(".shape == ")
		pr.print(n.kid(1), false)
		pr.s(".shape")
	case kDependentGenericLayoutRequirement:
		pr.layoutRequirement(n)
	case kDependentGenericParamPackMarker:
		pr.s("pack ")
		pr.print(n.kid(0), false)
	case kDependentGenericParamValueMarker:
		pr.print(n.kid(0), false)
		pr.s(" : ")
		pr.print(n.kid(1), false)
	case kDependentAssociatedTypeRef:
		if n.numKids() > 1 {
			pr.print(n.kid(1), false)
			pr.b('.')
		}
		pr.print(n.kid(0), false)
	case kAssociatedTypeRef:
		pr.print(n.kid(0), false)
		pr.b('.')
		pr.print(n.kid(1), false)
	case kAssocTypePath:
		pr.kids(n, ".")
	case kSelfTypeRef:
		pr.print(n.kid(0), false)
		pr.s(".Self")
	case kQualifiedArchetype:
		pr.s("(archetype ")
		pr.u(n.kid(0).indexOr())
		pr.s(" of ")
		pr.print(n.kid(1), false)
		pr.b(')')
	case kOpaqueReturnType:
		pr.s("some")
	case kOpaqueReturnTypeOf:
		pr.s("<<opaque return type of ")
		pr.kids(n, "")
		pr.s(">>")
	case kOpaqueType:
		pr.print(n.kid(0), false)
		pr.b('.')
		pr.print(n.kid(1), false)
	case kInteger:
		pr.u(n.index)
	case kNegativeInteger:
		pr.b('-')
		pr.u(n.index)
	case kBuiltinFixedArray:
		pr.s("Builtin.FixedArray<")
		pr.print(n.kid(0), false)
		pr.s(", ")
		pr.print(n.kid(1), false)
		pr.b('>')
	case kPackExpansion:
		pr.s("repeat ")
		pr.print(n.kid(0), false)
	case kPackElement:
		pr.s("/* level: ")
		pr.u(n.kid(1).indexOr())
		pr.s(" */ each ")
		pr.print(n.kid(0), false)
	case kPack, kSILPackDirect, kSILPackIndirect:
		switch n.kind {
		case kSILPackDirect:
			pr.s("@direct ")
		case kSILPackIndirect:
			pr.s("@indirect ")
		}
		pr.s("Pack{")
		pr.kids(n, ", ")
		pr.b('}')
	case kConstrainedExistential:
		pr.s("any ")
		pr.print(n.kid(0), false)
		pr.b('<')
		pr.print(n.kid(1), false)
		pr.b('>')
	case kConstrainedExistentialRequirementList:
		pr.kids(n, ", ")
	case kSugaredOptional:
		pr.withParens(n.kid(0))
		pr.b('?')
	case kSugaredArray:
		pr.b('[')
		pr.print(n.kid(0), false)
		pr.b(']')
	case kSugaredDictionary:
		pr.b('[')
		pr.print(n.kid(0), false)
		pr.s(" : ")
		pr.print(n.kid(1), false)
		pr.b(']')
	case kSugaredParen:
		pr.b('(')
		pr.print(n.kid(0), false)
		pr.b(')')
	case kSugaredInlineArray:
		pr.b('[')
		pr.print(n.kid(0), false)
		pr.s(" of ")
		pr.print(n.kid(1), false)
		pr.b(']')

	case kAutoClosureType, kEscapingAutoClosureType, kThinFunctionType, kCFunctionPointer,
		kObjCBlock, kEscapingObjCBlock:
		pr.functionType(nil, n)
	case kThrowsAnnotation:
		pr.s(" throws")
	case kTypedThrowsAnnotation:
		pr.s(" throws(")
		pr.print(n.kid(0), false)
		pr.b(')')
	case kAsyncAnnotation:
		pr.s(" async")
	case kConcurrentFunctionType:
		pr.s(n.text)
	case kGlobalActorFunctionType:
		pr.b('@')
		pr.print(n.kid(0), false)
		pr.b(' ')
	case kIsolatedAnyFunctionType:
		pr.s("@isolated(any) ")
	case kNonIsolatedCallerFunctionType:
		pr.s("nonisolated(nonsending) ")
	case kSendingResultFunctionType:
		pr.s("sending ")
	case kImplFunctionType:
		pr.implFunctionType(n)
	case kImplParameter, kImplResult:
		pr.kids(n, " ")
	case kImplYield:
		pr.s("@yields ")
		pr.kids(n, " ")
	case kImplErrorResult:
		pr.s("@error ")
		pr.kids(n, " ")
	case kImplEscaping:
		pr.s("@escaping")
	case kImplErasedIsolation:
		pr.s("@isolated(any)")
	case kImplSendingResult:
		pr.s("sending")
	case kImplCoroutineKind:
		pr.b('@')
		pr.s(n.text)
	case kImplDifferentiabilityKind:
		pr.s(differentiability(byte(n.index)))
	case kImplFunctionConvention:
		pr.s("@convention(")
		pr.s(n.kid(0).textOr())
		if c := n.kid(1); c != nil {
			pr.s(", mangledCType: \"")
			pr.print(c, false)
			pr.b('"')
		}
		pr.b(')')
	case kImplFunctionConventionName:
		pr.s(n.text)
	case kImplPatternSubstitutions, kImplInvocationSubstitutions:
		pr.kids(n, ", ")

	case kBoundGenericFunction:
		return pr.entity(n, asPrefix, typeFunctionStyle, true, "", -1, "")

	case kExtension:
		if !pr.simple {
			pr.s("(extension in ")
			pr.print(n.kid(0), true)
			pr.s("):")
		}
		pr.print(n.kid(1), false)
		if n.numKids() == 3 {
			pr.print(n.kid(2), false)
		}
	case kAnonymousContext:
		if !pr.simple {
			pr.print(n.kid(1), false)
			pr.s(".(unknown context at ")
			pr.print(n.kid(0), false)
			pr.b(')')
			if l := n.kid(2); l.numKids() > 0 {
				pr.b('<')
				pr.kids(l, ", ")
				pr.b('>')
			}
		}
	case kSubscript:
		return pr.entity(n, asPrefix, typeFunctionStyle, false, "", -1, "subscript")
	case kGenericTypeParamDecl:
		return pr.entity(n, asPrefix, typeNone, true, "", -1, "")
	case kMacro:
		return pr.entity(n, asPrefix, typeFunctionStyle, true, "", -1, "")
	case kAllocator:
		name := "init"
		if n.kid(0).kindIs(kClass) {
			name = "__allocating_init"
		}
		return pr.entity(n, asPrefix, typeFunctionStyle, n.numKids() > 2, name, -1, "")
	case kConstructor:
		return pr.entity(n, asPrefix, typeFunctionStyle, n.numKids() > 2, "init", -1, "")
	case kDestructor:
		return pr.entity(n, asPrefix, typeNone, false, "deinit", -1, "")
	case kDeallocator:
		return pr.entity(n, asPrefix, typeNone, false, "__deallocating_deinit", -1, "")
	case kIsolatedDeallocator:
		return pr.entity(n, asPrefix, typeNone, false, "__isolated_deallocating_deinit", -1, "")
	case kIVarInitializer:
		return pr.entity(n, asPrefix, typeNone, false, "__ivar_initializer", -1, "")
	case kIVarDestroyer:
		return pr.entity(n, asPrefix, typeNone, false, "__ivar_destroyer", -1, "")
	case kExplicitClosure:
		return pr.entity(n, asPrefix, typeFunctionStyle, false, "closure #", int64(n.kid(1).indexOr())+1, "")
	case kImplicitClosure:
		return pr.entity(n, asPrefix, typeFunctionStyle, false, "implicit closure #", int64(n.kid(1).indexOr())+1, "")
	case kDefaultArgumentInitializer:
		return pr.entity(n, asPrefix, typeNone, false, "default argument ", int64(n.kid(1).indexOr()), "")
	case kInitializer:
		return pr.entity(n, asPrefix, typeNone, false, "variable initialization expression", -1, "")
	case kPropertyWrapperBackingInitializer:
		return pr.entity(n, asPrefix, typeNone, false, "property wrapper backing initializer", -1, "")
	case kPropertyWrapperInitFromProjectedValue:
		return pr.entity(n, asPrefix, typeNone, false, "property wrapper init from projected value", -1, "")
	case kGetter, kGlobalGetter:
		return pr.storage(n.kid(0), asPrefix, "getter")
	case kSetter:
		return pr.storage(n.kid(0), asPrefix, "setter")
	case kMaterializeForSet:
		return pr.storage(n.kid(0), asPrefix, "materializeForSet")
	case kWillSet:
		return pr.storage(n.kid(0), asPrefix, "willset")
	case kDidSet:
		return pr.storage(n.kid(0), asPrefix, "didset")
	case kReadAccessor:
		return pr.storage(n.kid(0), asPrefix, "read")
	case kRead2Accessor:
		return pr.storage(n.kid(0), asPrefix, "read2")
	case kModifyAccessor:
		return pr.storage(n.kid(0), asPrefix, "modify")
	case kModify2Accessor:
		return pr.storage(n.kid(0), asPrefix, "modify2")
	case kInitAccessor:
		return pr.storage(n.kid(0), asPrefix, "init")
	case kBorrowAccessor:
		return pr.storage(n.kid(0), asPrefix, "borrow")
	case kMutateAccessor:
		return pr.storage(n.kid(0), asPrefix, "mutate")
	case kUnsafeAddressor:
		return pr.storage(n.kid(0), asPrefix, "unsafeAddressor")
	case kUnsafeMutableAddressor:
		return pr.storage(n.kid(0), asPrefix, "unsafeMutableAddressor")
	case kOwningAddressor:
		return pr.storage(n.kid(0), asPrefix, "owningAddressor")
	case kOwningMutableAddressor:
		return pr.storage(n.kid(0), asPrefix, "owningMutableAddressor")
	case kNativeOwningAddressor:
		return pr.storage(n.kid(0), asPrefix, "nativeOwningAddressor")
	case kNativeOwningMutableAddressor:
		return pr.storage(n.kid(0), asPrefix, "nativeOwningMutableAddressor")
	case kNativePinningAddressor:
		return pr.storage(n.kid(0), asPrefix, "nativePinningAddressor")
	case kNativePinningMutableAddressor:
		return pr.storage(n.kid(0), asPrefix, "nativePinningMutableAddressor")

	case kProtocolConformance:
		if n.numKids() == 4 {
			pr.s("property behavior storage of ")
			pr.print(n.kid(2), false)
			pr.s(" in ")
			pr.print(n.kid(0), false)
			pr.s(" : ")
			pr.print(n.kid(1), false)
			return nil
		}
		pr.print(n.kid(0), false)
		if !pr.simple {
			pr.s(" : ")
			pr.print(n.kid(1), false)
			pr.s(" in ")
			pr.print(n.kid(2), false)
		}
	case kConcreteProtocolConformance:
		pr.s("concrete protocol conformance ")
		pr.print(n.kid(0), false)
		pr.s(" to ")
		pr.print(n.kid(1), false)
		if l := n.kid(2); l.numKids() > 0 {
			pr.s(" with conditional requirements: ")
			pr.print(l, false)
		}
	case kAnyProtocolConformanceList:
		pr.b('(')
		pr.kids(n, ", ")
		pr.b(')')
	case kProtocolConformanceRefInTypeModule:
		pr.s("protocol conformance ref (type's module) ")
		pr.print(n.kid(0), false)
	case kProtocolConformanceRefInProtocolModule:
		pr.s("protocol conformance ref (protocol's module) ")
		pr.print(n.kid(0), false)
	case kProtocolConformanceRef:
		pr.s("protocol conformance ref (retroactive) ")
		pr.print(n.kid(0), false)
	case kDependentProtocolConformanceRoot:
		pr.s("dependent root protocol conformance ")
		pr.print(n.kid(0), false)
	case kDependentProtocolConformanceInherited:
		pr.s("dependent inherited protocol conformance ")
		pr.print(n.kid(0), false)
	case kDependentProtocolConformanceAssociated:
		pr.s("dependent associated protocol conformance ")
		pr.print(n.kid(0), false)
	case kDependentAssociatedConformance:
		pr.s("dependent associated conformance ")
		pr.kids(n, "")
	case kPackProtocolConformance:
		pr.s("pack protocol conformance ")
		pr.kids(n, "")
	case kRetroactiveConformance:
		pr.s("retroactive @ ")
		pr.print(n.kid(0), false)
		pr.b(' ')
		pr.print(n.kid(1), false)
	case kUnknownIndex:
		pr.s("unknown index")

	case kGenericSpecialization:
		pr.specialization(n, "generic specialization")
	case kGenericSpecializationPrespecialized:
		pr.specialization(n, "generic pre-specialization")
	case kGenericSpecializationNotReAbstracted:
		pr.specialization(n, "generic not re-abstracted specialization")
	case kGenericSpecializationInResilienceDomain:
		pr.specialization(n, "generic specialization")
	case kGenericPartialSpecialization:
		pr.specialization(n, "generic partial specialization")
	case kGenericPartialSpecializationNotReAbstracted:
		pr.specialization(n, "generic not-reabstracted partial specialization")
	case kInlinedGenericFunction:
		pr.specialization(n, "inlined generic function")
	case kFunctionSignatureSpecialization:
		pr.specialization(n, "function signature specialization")
	case kGenericSpecializationParam:
		pr.print(n.kid(0), false)
		for i := 1; i < n.numKids(); i++ {
			if i == 1 {
				pr.s(" with ")
			} else {
				pr.s(" and ")
			}
			pr.print(n.kid(i), false)
		}
	case kFunctionSignatureSpecializationParam, kFunctionSignatureSpecializationReturn:
		pr.funcSigSpecParams(n)
	case kFunctionSignatureSpecializationParamKind:
		pr.funcSigSpecKind(n.index)
	case kFunctionSignatureSpecializationParamPayload:
		pr.payload(n.text)
	case kIsSerialized:
		pr.s("serialized")
	case kAsyncRemoved:
		pr.s("async demotion")
	case kDroppedArgument:
		pr.s("param")
		pr.u(n.index)
		pr.s("-removed")

	case kObjCAttribute:
		pr.s("@objc ")
	case kNonObjCAttribute:
		pr.s("@nonobjc ")
	case kDynamicAttribute:
		pr.s("dynamic ")
	case kDirectMethodReferenceAttribute:
		pr.s("super ")
	case kVTableAttribute:
		pr.s("override ")
	case kDistributedThunk:
		if !pr.simple {
			pr.s("distributed thunk ")
		}
	case kDistributedAccessor:
		if !pr.simple {
			pr.s("distributed accessor for ")
		}
	case kMergedFunction:
		if !pr.simple {
			pr.s("merged ")
		}
	case kDynamicallyReplaceableFunctionVar:
		pr.s("dynamically replaceable variable for ")
	case kDynamicallyReplaceableFunctionKey:
		pr.s("dynamically replaceable key for ")
	case kDynamicallyReplaceableFunctionImpl:
		pr.s("dynamically replaceable thunk for ")
	case kAsyncFunctionPointer:
		pr.s("async function pointer to ")
	case kCoroFunctionPointer:
		pr.s("coro function pointer to ")
	case kDefaultOverride:
		pr.s("default override of ")
	case kBackDeploymentThunk:
		pr.s("back deployment thunk for ")
	case kBackDeploymentFallback:
		pr.s("back deployment fallback for ")
	case kHasSymbolQuery:
		pr.s("#_hasSymbol query for ")
	case kAccessibleFunctionRecord:
		if !pr.simple {
			pr.s("accessible function runtime record for ")
		}
	case kAsyncAwaitResumePartialFunction, kAsyncSuspendResumePartialFunction:
		if !pr.simple {
			pr.b('(')
			pr.print(n.kid(0), false)
			pr.b(')')
			if n.kind == kAsyncAwaitResumePartialFunction {
				pr.s(" await resume partial function for ")
			} else {
				pr.s(" suspend resume partial function for ")
			}
		}
	case kOutlinedVariable:
		pr.s("outlined variable #")
		pr.u(n.index)
		pr.s(" of ")
	case kOutlinedReadOnlyObject:
		pr.s("outlined read-only object #")
		pr.u(n.index)
		pr.s(" of ")
	case kOutlinedBridgedMethod:
		pr.s("outlined bridged method (")
		pr.s(n.text)
		pr.s(") of ")
	case kPartialApplyForwarder, kPartialApplyObjCForwarder:
		switch {
		case pr.simple:
			pr.s("partial apply")
		case n.kind == kPartialApplyForwarder:
			pr.s("partial apply forwarder")
		default:
			pr.s("partial apply ObjC forwarder")
		}
		if n.numKids() > 0 {
			pr.s(" for ")
			pr.kids(n, "")
		}

	case kReabstractionThunk, kReabstractionThunkHelper:
		if pr.simple {
			pr.s("thunk")
			return nil
		}
		pr.s("reabstraction thunk ")
		if n.kind == kReabstractionThunkHelper {
			pr.s("helper ")
		}
		i := 0
		if n.numKids() == 3 {
			pr.print(n.kid(0), false)
			pr.b(' ')
			i = 1
		}
		pr.s("from ")
		pr.print(n.kid(i+1), false)
		pr.s(" to ")
		pr.print(n.kid(i), false)
	case kReabstractionThunkHelperWithSelf:
		if pr.simple {
			pr.s("thunk")
			return nil
		}
		pr.s("reabstraction thunk ")
		i := 0
		if n.numKids() == 4 {
			pr.print(n.kid(0), false)
			pr.b(' ')
			i = 1
		}
		pr.s("from ")
		pr.print(n.kid(i+2), false)
		pr.s(" to ")
		pr.print(n.kid(i+1), false)
		pr.s(" self ")
		pr.print(n.kid(i), false)
	case kReabstractionThunkHelperWithGlobalActor:
		pr.print(n.kid(0), false)
		pr.s(" with global actor constraint ")
		pr.print(n.kid(1), false)
	case kProtocolWitness:
		pr.s("protocol witness for ")
		pr.print(n.kid(1), false)
		pr.s(" in conformance ")
		pr.print(n.kid(0), false)
	case kProtocolSelfConformanceWitness:
		pr.s("protocol self-conformance witness for ")
		pr.print(n.kid(0), false)
	case kVTableThunk:
		pr.s("vtable thunk for ")
		pr.print(n.kid(1), false)
		pr.s(" dispatching to ")
		pr.print(n.kid(0), false)
	case kCurryThunk:
		pr.prefixed("curry thunk of ", n)
	case kDispatchThunk:
		pr.prefixed("dispatch thunk of ", n)
	case kMethodDescriptor:
		pr.prefixed("method descriptor for ", n)
	case kCoroutineContinuationPrototype:
		pr.prefixed("coroutine continuation prototype for ", n)
	case kObjCAsyncCompletionHandlerImpl, kPredefinedObjCAsyncCompletionHandlerImpl:
		if n.kind == kPredefinedObjCAsyncCompletionHandlerImpl {
			pr.s("predefined ")
		}
		pr.s("@objc completion handler block implementation for ")
		if n.numKids() >= 4 {
			pr.print(n.kid(3), false)
			pr.b(' ')
		}
		pr.print(n.kid(0), false)
		pr.s(" with result type ")
		pr.print(n.kid(1), false)
		switch n.kid(2).indexOr() {
		case 1:
			pr.s(" nonzero on error ")
		case 2:
			pr.s(" zero on error ")
		}
	case kKeyPathGetterThunkHelper, kKeyPathSetterThunkHelper:
		if n.kind == kKeyPathGetterThunkHelper {
			pr.s("key path getter for ")
		} else {
			pr.s("key path setter for ")
		}
		pr.print(n.kid(0), false)
		pr.s(" : ")
		for i := 1; i < n.numKids(); i++ {
			if n.kid(i).kind == kIsSerialized {
				pr.s(", ")
			}
			pr.print(n.kid(i), false)
		}
	case kKeyPathEqualsThunkHelper, kKeyPathHashThunkHelper:
		pr.s("key path index ")
		if n.kind == kKeyPathEqualsThunkHelper {
			pr.s("equality")
		} else {
			pr.s("hash")
		}
		pr.s(" operator for ")
		last := n.numKids()
		serialized := false
		if n.kid(last - 1).kindIs(kIsSerialized) {
			last--
			serialized = true
		}
		if n.kid(last - 1).kindIs(kDependentGenericSignature) {
			pr.print(n.kid(last-1), false)
			last--
		}
		pr.b('(')
		for i := 0; i < last; i++ {
			if i > 0 {
				pr.s(", ")
			}
			pr.print(n.kid(i), false)
		}
		pr.b(')')
		if serialized {
			pr.s(", serialized")
		}

	case kValueWitness:
		i := n.kid(0).indexOr()
		if i < uint64(len(valueWitnessNames)) {
			pr.s(valueWitnessNames[i].name)
		}
		if pr.simple {
			pr.s(" for ")
		} else {
			pr.s(" value witness for ")
		}
		pr.print(n.kid(1), false)
	case kNonConstantPartialApplyThunk:
		pr.prefixed("thunk for non-constant partial apply in ", n)
	case kWitnessTableOffset:
		pr.prefixed("witness table offset for ", n)
	case kValueWitnessTable:
		pr.prefixed("value witness table for ", n)
	case kFieldOffset:
		pr.print(n.kid(0), false)
		pr.s("field offset for ")
		pr.print(n.kid(1), false)
	case kDirectness:
		if n.index == 0 {
			pr.s("direct ")
		} else {
			pr.s("indirect ")
		}
	case kEnumCase:
		pr.prefixed("enum case for ", n)
	case kProtocolWitnessTable:
		pr.prefixed("protocol witness table for ", n)
	case kProtocolWitnessTablePattern:
		pr.prefixed("protocol witness table pattern for ", n)
	case kGenericProtocolWitnessTable:
		pr.prefixed("generic protocol witness table for ", n)
	case kGenericProtocolWitnessTableInstantiationFunction:
		pr.prefixed("instantiation function for generic protocol witness table for ", n)
	case kResilientProtocolWitnessTable:
		pr.prefixed("resilient protocol witness table for ", n)
	case kProtocolWitnessTableAccessor:
		pr.prefixed("protocol witness table accessor for ", n)
	case kProtocolSelfConformanceWitnessTable:
		pr.prefixed("protocol self-conformance witness table for ", n)
	case kLazyProtocolWitnessTableAccessor, kLazyProtocolWitnessTableCacheVariable:
		if n.kind == kLazyProtocolWitnessTableAccessor {
			pr.s("lazy protocol witness table accessor for type ")
		} else {
			pr.s("lazy protocol witness table cache variable for type ")
		}
		pr.print(n.kid(0), false)
		pr.s(" and conformance ")
		pr.print(n.kid(1), false)
	case kAssociatedTypeMetadataAccessor:
		pr.s("associated type metadata accessor for ")
		pr.print(n.kid(1), false)
		pr.s(" in ")
		pr.print(n.kid(0), false)
	case kAssociatedTypeWitnessTableAccessor:
		pr.s("associated type witness table accessor for ")
		pr.print(n.kid(1), false)
		pr.s(" : ")
		pr.print(n.kid(2), false)
		pr.s(" in ")
		pr.print(n.kid(0), false)
	case kBaseWitnessTableAccessor:
		pr.s("base witness table accessor for ")
		pr.print(n.kid(1), false)
		pr.s(" in ")
		pr.print(n.kid(0), false)
	case kAssociatedTypeDescriptor:
		pr.prefixed("associated type descriptor for ", n)
	case kProtocolRequirementsBaseDescriptor:
		pr.prefixed("protocol requirements base descriptor for ", n)
	case kDefaultAssociatedTypeMetadataAccessor:
		pr.prefixed("default associated type metadata accessor for ", n)
	case kAssociatedConformanceDescriptor, kDefaultAssociatedConformanceAccessor:
		if n.kind == kAssociatedConformanceDescriptor {
			pr.s("associated conformance descriptor for ")
		} else {
			pr.s("default associated conformance accessor for ")
		}
		pr.print(n.kid(0), false)
		pr.b('.')
		pr.print(n.kid(1), false)
		pr.s(": ")
		pr.print(n.kid(2), false)
	case kBaseConformanceDescriptor:
		pr.s("base conformance descriptor for ")
		pr.print(n.kid(0), false)
		pr.s(": ")
		pr.print(n.kid(1), false)
	case kAssociatedTypeGenericParamRef:
		pr.s("generic parameter reference for associated type ")
		pr.kids(n, "")
	case kGlobalVariableOnceFunction, kGlobalVariableOnceToken:
		if n.kind == kGlobalVariableOnceToken {
			pr.s("one-time initialization token for ")
		} else {
			pr.s("one-time initialization function for ")
		}
		if pr.printContext(n.kid(0)) {
			pr.print(n.kid(0), false)
			pr.b('.')
		}
		pr.print(n.kid(1), false)
	case kGlobalVariableOnceDeclList:
		if n.numKids() == 1 {
			pr.print(n.kid(0), false)
		} else {
			pr.b('(')
			pr.kids(n, ", ")
			pr.b(')')
		}

	case kOutlinedCopy:
		pr.outlined("outlined copy of ", n)
	case kOutlinedConsume:
		pr.outlined("outlined consume of ", n)
	case kOutlinedRetain:
		pr.outlined("outlined retain of ", n)
	case kOutlinedRelease:
		pr.outlined("outlined release of ", n)
	case kOutlinedInitializeWithTake:
		pr.outlined("outlined init with take of ", n)
	case kOutlinedInitializeWithCopy:
		pr.outlined("outlined init with copy of ", n)
	case kOutlinedAssignWithTake:
		pr.outlined("outlined assign with take of ", n)
	case kOutlinedAssignWithCopy:
		pr.outlined("outlined assign with copy of ", n)
	case kOutlinedDestroy:
		pr.outlined("outlined destroy of ", n)
	case kOutlinedInitializeWithTakeNoValueWitness:
		pr.outlined("outlined init with take of ", n)
	case kOutlinedInitializeWithCopyNoValueWitness:
		pr.outlined("outlined init with copy of ", n)
	case kOutlinedAssignWithTakeNoValueWitness:
		pr.outlined("outlined assign with take of ", n)
	case kOutlinedAssignWithCopyNoValueWitness:
		pr.outlined("outlined assign with copy of ", n)
	case kOutlinedDestroyNoValueWitness:
		pr.outlined("outlined destroy of ", n)
	case kOutlinedEnumTagStore:
		pr.outlined("outlined store enum tag of ", n)
	case kOutlinedEnumProjectDataForLoad:
		pr.outlined("outlined enum project data for load of ", n)
	case kOutlinedEnumGetTag:
		pr.outlined("outlined enum get tag of ", n)

	case kTypeMetadata:
		pr.prefixed("type metadata for ", n)
	case kTypeMetadataAccessFunction:
		pr.prefixed("type metadata accessor for ", n)
	case kTypeMetadataLazyCache:
		pr.prefixed("lazy cache variable for type metadata for ", n)
	case kFullTypeMetadata:
		pr.prefixed("full type metadata for ", n)
	case kMetaclass:
		pr.prefixed("metaclass for ", n)
	case kNominalTypeDescriptor:
		pr.prefixed("nominal type descriptor for ", n)
	case kNominalTypeDescriptorRecord:
		pr.prefixed("nominal type descriptor runtime record for ", n)
	case kGenericTypeMetadataPattern:
		pr.prefixed("generic type metadata pattern for ", n)
	case kTypeMetadataInstantiationCache:
		pr.prefixed("type metadata instantiation cache for ", n)
	case kTypeMetadataInstantiationFunction:
		pr.prefixed("type metadata instantiation function for ", n)
	case kTypeMetadataSingletonInitializationCache:
		pr.prefixed("type metadata singleton initialization cache for ", n)
	case kTypeMetadataCompletionFunction:
		pr.prefixed("type metadata completion function for ", n)
	case kTypeMetadataDemanglingCache:
		pr.prefixed("demangling cache variable for type metadata for ", n)
	case kClassMetadataBaseOffset:
		pr.prefixed("class metadata base offset for ", n)
	case kProtocolDescriptor:
		pr.prefixed("protocol descriptor for ", n)
	case kProtocolDescriptorRecord:
		pr.prefixed("protocol descriptor runtime record for ", n)
	case kProtocolConformanceDescriptor:
		pr.prefixed("protocol conformance descriptor for ", n)
	case kProtocolConformanceDescriptorRecord:
		pr.prefixed("protocol conformance descriptor runtime record for ", n)
	case kProtocolSelfConformanceDescriptor:
		pr.prefixed("protocol self-conformance descriptor for ", n)
	case kReflectionMetadataBuiltinDescriptor:
		pr.prefixed("reflection metadata builtin descriptor ", n)
	case kReflectionMetadataFieldDescriptor:
		pr.prefixed("reflection metadata field descriptor ", n)
	case kReflectionMetadataAssocTypeDescriptor:
		pr.prefixed("reflection metadata associated type descriptor ", n)
	case kReflectionMetadataSuperclassDescriptor:
		pr.prefixed("reflection metadata superclass descriptor ", n)
	case kMethodLookupFunction:
		pr.prefixed("method lookup function for ", n)
	case kObjCMetadataUpdateFunction:
		pr.prefixed("ObjC metadata update function for ", n)
	case kObjCResilientClassStub:
		pr.prefixed("ObjC resilient class stub for ", n)
	case kFullObjCResilientClassStub:
		pr.prefixed("full ObjC resilient class stub for ", n)
	case kPropertyDescriptor:
		pr.prefixed("property descriptor for ", n)
	case kOpaqueTypeDescriptor:
		pr.prefixed("opaque type descriptor for ", n)
	case kOpaqueTypeDescriptorRecord:
		pr.prefixed("opaque type descriptor runtime record for ", n)
	case kOpaqueTypeDescriptorAccessor:
		pr.prefixed("opaque type descriptor accessor for ", n)
	case kOpaqueTypeDescriptorAccessorImpl:
		pr.prefixed("opaque type descriptor accessor impl for ", n)
	case kOpaqueTypeDescriptorAccessorKey:
		pr.prefixed("opaque type descriptor accessor key for ", n)
	case kOpaqueTypeDescriptorAccessorVar:
		pr.prefixed("opaque type descriptor accessor var for ", n)
	case kUniquable:
		pr.prefixed("uniquable ", n)
	case kMetadataInstantiationCache:
		pr.prefixed("metadata instantiation cache for ", n)
	case kNoncanonicalSpecializedGenericTypeMetadata:
		pr.prefixed("noncanonical specialized generic type metadata for ", n)
	case kNoncanonicalSpecializedGenericTypeMetadataCache:
		pr.prefixed("cache variable for noncanonical specialized generic type metadata for ", n)
	case kCanonicalSpecializedGenericTypeMetadataAccessFunction:
		pr.prefixed("canonical specialized generic type metadata accessor for ", n)
	case kCanonicalPrespecializedGenericTypeCachingOnceToken:
		pr.prefixed("flag for loading of canonical specialized generic type metadata for ", n)
	case kModuleDescriptor:
		pr.prefixed("module descriptor ", n)
	case kExtensionDescriptor:
		pr.prefixed("extension descriptor ", n)
	case kAnonymousDescriptor:
		pr.prefixed("anonymous descriptor ", n)

	case kAutoDiffFunction, kAutoDiffDerivativeVTableThunk:
		pr.autoDiffFunction(n)
	case kAutoDiffFunctionKind:
		switch byte(n.index) {
		case 'f':
			pr.s("forward-mode derivative")
		case 'r':
			pr.s("reverse-mode derivative")
		case 'd':
			pr.s("differential")
		case 'p':
			pr.s("pullback")
		}
	case kIndexSubset:
		pr.b('{')
		first := true
		for i := 0; i < len(n.text); i++ {
			if n.text[i] != 'S' {
				continue
			}
			if !first {
				pr.s(", ")
			}
			pr.u(uint64(i))
			first = false
		}
		pr.b('}')
	case kAutoDiffSubsetParametersThunk:
		pr.autoDiffSubsetThunk(n)
	case kAutoDiffSelfReorderingReabstractionThunk:
		pr.s("autodiff self-reordering reabstraction thunk ")
		if n.numKids() < 3 {
			pr.bad = true
			return nil
		}
		from, to := n.kid(0), n.kid(1)
		if pr.simple {
			pr.s("for ")
			pr.print(from, false)
			return nil
		}
		i := 2
		var sig *node
		if n.kid(2).kindIs(kDependentGenericSignature) {
			sig = n.kid(2)
			i = 3
		}
		pr.s("for ")
		pr.print(n.kid(i), false)
		if sig != nil {
			pr.print(sig, false)
			pr.b(' ')
		}
		pr.s(" from ")
		pr.print(from, false)
		pr.s(" to ")
		pr.print(to, false)
	case kDifferentiabilityWitness:
		pr.differentiabilityWitness(n)
	case kDifferentiableFunctionType:
		pr.s(differentiability(byte(n.index)))
		pr.b(' ')
	default:
		pr.bad = true
	}
	return nil
}

func (pr *printer) labelSep() string {
	if pr.simple {
		return " : "
	}
	return ": "
}

func (pr *printer) prefixed(s string, n *node) {
	pr.s(s)
	pr.print(n.kid(0), false)
}

func (pr *printer) outlined(s string, n *node) {
	pr.s(s)
	pr.print(n.kid(0), false)
	if sig := n.kid(1); sig != nil {
		pr.s(" with ")
		pr.print(sig, false)
	}
}

func (pr *printer) quoted(s string) {
	const hex = "0123456789ABCDEF"
	pr.b('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '\\':
			pr.s(`\\`)
		case '\t':
			pr.s(`\t`)
		case '\n':
			pr.s(`\n`)
		case '\r':
			pr.s(`\r`)
		case '"':
			pr.s(`\"`)
		case 0:
			pr.s(`\0`)
		default:
			if c < 0x20 || c >= 0x7f {
				pr.s(`\x`)
				pr.b(hex[c>>4])
				pr.b(hex[c&15])
			} else {
				pr.b(c)
			}
		}
	}
	pr.b('"')
}

func differentiability(c byte) string {
	switch c {
	case 'f':
		return "@differentiable(_forward)"
	case 'r':
		return "@differentiable(reverse)"
	case 'd':
		return "@differentiable"
	case 'l':
		return "@differentiable(_linear)"
	}
	return ""
}

func (pr *printer) protocolList(list *node) {
	if list == nil {
		pr.bad = true
		return
	}
	if pr.simple {
		// The simplified style predates 'Any' and '&' compositions.
		switch len(list.kids) {
		case 0:
			pr.s("protocol<>")
		case 1:
			pr.print(list.kids[0], false)
		default:
			pr.s("protocol<")
			pr.kids(list, ", ")
			pr.b('>')
		}
		return
	}
	if len(list.kids) == 0 {
		pr.s("Any")
		return
	}
	pr.kids(list, " & ")
}

func isFunctionTypeKind(k kind) bool {
	switch k {
	case kFunctionType, kUncurriedFunctionType, kNoEscapeFunctionType, kAutoClosureType,
		kEscapingAutoClosureType, kThinFunctionType, kCFunctionPointer, kObjCBlock,
		kEscapingObjCBlock:
		return true
	}
	return false
}

func needSpaceBeforeType(n *node) bool {
	for n != nil && n.kind == kType {
		n = n.kid(0)
	}
	if n == nil {
		return true
	}
	switch n.kind {
	case kFunctionType, kNoEscapeFunctionType, kUncurriedFunctionType, kDependentGenericType:
		return false
	}
	return true
}

func isExistential(n *node) bool {
	for n != nil && n.kind == kType {
		n = n.kid(0)
	}
	if n == nil {
		return false
	}
	switch n.kind {
	case kExistentialMetatype, kProtocolList, kProtocolListWithClass, kProtocolListWithAnyObject:
		return true
	}
	return false
}

func isSimpleType(n *node) bool {
	for n != nil && n.kind == kType {
		n = n.kid(0)
	}
	if n == nil {
		return true
	}
	switch n.kind {
	case kProtocolList:
		return n.kid(0).numKids() <= 1
	case kProtocolListWithAnyObject:
		return n.kid(0).kid(0).numKids() == 0
	case kAssociatedTypeRef, kBoundGenericClass, kBoundGenericEnum, kBoundGenericStructure,
		kBoundGenericProtocol, kBoundGenericOtherNominalType, kBoundGenericTypeAlias,
		kBoundGenericFunction, kBuiltinTypeName, kBuiltinFixedArray, kClass,
		kDependentGenericType, kDependentMemberType, kDependentGenericParamType, kDynamicSelf,
		kEnum, kErrorType, kExistentialMetatype, kMetatype, kMetatypeRepresentation, kModule,
		kTuple, kProtocol, kReturnType, kSILBoxType, kSILBoxTypeWithLayout, kStructure,
		kOtherNominalType, kTupleElementName, kTypeAlias, kTypeList, kLabelList,
		kSugaredOptional, kSugaredArray, kSugaredDictionary, kSugaredParen, kSugaredInlineArray,
		kPack, kSILPackDirect, kSILPackIndirect, kInteger, kNegativeInteger,
		kOpaqueType, kOpaqueReturnType, kSelfTypeRef, kQualifiedArchetype, kImplFunctionType:
		return true
	}
	return false
}

func (pr *printer) withParens(n *node) {
	if isSimpleType(n) {
		pr.print(n, false)
		return
	}
	pr.b('(')
	pr.print(n, false)
	pr.b(')')
}

func (pr *printer) genericSignature(n *node) {
	pr.b('<')
	i := 0
	for ; i < len(n.kids) && n.kids[i].kind == kDependentGenericParamCount; i++ {
		if i > 0 {
			pr.s("><")
		}
		count := n.kids[i].index
		for j := uint64(0); j < count; j++ {
			if j > 0 {
				pr.s(", ")
			}
			// Malformed symbols can claim huge counts; real ones never
			// come near this.
			if j >= 128 {
				pr.s("...")
				break
			}
			pr.out = appendGenericParamName(pr.out, uint64(i), j)
		}
	}
	if i < len(n.kids) {
		if pr.simple {
			pr.s(" where ...")
		} else {
			pr.s(" where ")
			for j := i; j < len(n.kids); j++ {
				if j > i {
					pr.s(", ")
				}
				pr.print(n.kids[j], false)
			}
		}
	}
	pr.b('>')
}

func (pr *printer) layoutRequirement(n *node) {
	pr.print(n.kid(0), false)
	pr.s(": ")
	var name string
	switch n.kid(1).textOr() {
	case "U":
		name = "_UnknownLayout"
	case "R":
		name = "_RefCountedObject"
	case "N":
		name = "_NativeRefCountedObject"
	case "C":
		name = "AnyObject"
	case "D":
		name = "_NativeClass"
	case "T", "E", "e":
		name = "_Trivial"
	case "M", "m":
		name = "_TrivialAtMost"
	case "S":
		name = "_TrivialStride"
	case "B":
		name = "_BridgeObject"
	}
	pr.s(name)
	if n.numKids() > 2 {
		pr.b('(')
		pr.print(n.kid(2), false)
		if n.numKids() > 3 {
			pr.s(", ")
			pr.print(n.kid(3), false)
		}
		pr.b(')')
	}
}

// Nominal types and bound generics.

func isSwiftModule(n *node) bool { return n.kindIs(kModule) && n.text == "Swift" }

func isNamed(n *node, k kind, name string) bool {
	return n.kindIs(k) && isSwiftModule(n.kid(0)) && n.kid(1).kindIs(kIdentifier) && n.kid(1).text == name
}

func (pr *printer) boundGeneric(n *node) {
	if n.numKids() < 2 {
		pr.bad = true
		return
	}
	args := n.kid(1)
	if n.numKids() == 2 && n.kind != kBoundGenericClass {
		if n.kind == kBoundGenericProtocol {
			pr.kids(args, "")
			pr.s(" as ")
			pr.print(n.kid(0), false)
			return
		}
		t := n.kid(0).kid(0)
		switch {
		case args.numKids() == 1 && isNamed(t, kEnum, "Optional"):
			pr.withParens(args.kid(0))
			pr.b('?')
			return
		case args.numKids() == 1 && isNamed(t, kEnum, "ImplicitlyUnwrappedOptional"):
			pr.withParens(args.kid(0))
			pr.b('!')
			return
		case args.numKids() == 1 && isNamed(t, kStructure, "Array"):
			pr.b('[')
			pr.print(args.kid(0), false)
			pr.b(']')
			return
		case args.numKids() == 2 && isNamed(t, kStructure, "Dictionary"):
			pr.b('[')
			pr.print(args.kid(0), false)
			pr.s(" : ")
			pr.print(args.kid(1), false)
			pr.b(']')
			return
		}
	}
	pr.print(n.kid(0), false)
	pr.b('<')
	pr.kids(args, ", ")
	pr.b('>')
}

// Entities.

const (
	typeNone = iota
	typeWithColon
	typeFunctionStyle
)

// printContext reports whether a context is shown as a qualifier.
func (pr *printer) printContext(ctx *node) bool {
	if ctx.kindIs(kModule) && pr.simple {
		return false
	}
	return true
}

func (pr *printer) storage(n *node, asPrefix bool, extra string) *node {
	switch {
	case n.kindIs(kVariable):
		return pr.entity(n, asPrefix, typeWithColon, true, extra, -1, "")
	case n.kindIs(kSubscript):
		return pr.entity(n, asPrefix, typeWithColon, false, extra, -1, "subscript")
	}
	pr.bad = true
	return nil
}

// entity prints a declaration: its context (as a "ctx." prefix, or as an
// " in ctx" suffix when the name has spaces), its name and its type. It
// returns the context if it could not be printed as a prefix, so that the
// caller prints it as a suffix.
func (pr *printer) entity(e *node, asPrefix bool, typePr int, hasName bool, extra string, extraIndex int64, overwrite string) *node {
	var genericArgs *node
	if e.kind == kBoundGenericFunction {
		genericArgs = e.kid(1)
		e = e.kid(0)
		if e == nil {
			pr.bad = true
			return nil
		}
	}
	if pr.simple {
		pr.entitySwift3(e, asPrefix, typePr, hasName, extra, extraIndex, overwrite, genericArgs)
		return nil
	}
	multiWord := containsSpace(extra)
	if hasName && e.kid(1).kindIs(kLocalDeclName) {
		multiWord = true
	}
	if asPrefix && (typePr != typeNone || multiWord) {
		return e
	}
	var postfix *node
	ctx := e.kid(0)
	if ctx == nil {
		pr.bad = true
		return nil
	}
	if pr.printContext(ctx) {
		if multiWord {
			postfix = ctx
		} else {
			before := len(pr.out)
			postfix = pr.print(ctx, true)
			if len(pr.out) != before {
				pr.b('.')
			}
		}
	}
	if hasName || overwrite != "" {
		if extra != "" && multiWord {
			pr.s(extra)
			if extraIndex >= 0 {
				pr.u(uint64(extraIndex))
			}
			pr.s(" of ")
			extra = ""
			extraIndex = -1
		}
		before := len(pr.out)
		if overwrite != "" {
			pr.s(overwrite)
		} else {
			if name := e.kid(1); name != nil && isDeclName(name.kind) && name.kind != kPrivateDeclName {
				pr.print(name, false)
			}
			if priv := e.firstKid(kPrivateDeclName); priv != nil {
				pr.print(priv, false)
			}
		}
		if len(pr.out) != before && extra != "" {
			pr.b('.')
		}
	}
	if extra != "" {
		pr.s(extra)
		if extraIndex >= 0 {
			pr.u(uint64(extraIndex))
		}
	}
	if typePr != typeNone {
		t := e.firstKid(kType)
		if t == nil {
			pr.bad = true
			return nil
		}
		t = t.kid(0)
		if typePr == typeFunctionStyle {
			x := t
			for x.kindIs(kDependentGenericType) {
				x = x.kid(1).kid(0)
			}
			if x == nil || !isFunctionTypeKind(x.kind) || x.kind == kAutoClosureType ||
				x.kind == kEscapingAutoClosureType || x.kind == kObjCBlock || x.kind == kEscapingObjCBlock {
				typePr = typeWithColon
			}
		}
		if typePr == typeWithColon {
			if !pr.simple {
				pr.s(" : ")
				pr.entityType(e, t, genericArgs)
			}
		} else {
			if multiWord || needSpaceBeforeType(t) {
				pr.b(' ')
			}
			pr.entityType(e, t, genericArgs)
		}
	}
	if !asPrefix && postfix != nil {
		switch e.kind {
		case kDefaultArgumentInitializer, kInitializer, kPropertyWrapperBackingInitializer,
			kPropertyWrapperInitFromProjectedValue:
			pr.s(" of ")
		default:
			pr.s(" in ")
		}
		pr.print(postfix, false)
		postfix = nil
	}
	return postfix
}

// entitySwift3 prints an entity in the layout of the Swift 3 simplified
// style (simplified-manglings.txt): contexts always come first, and an
// entity that is printed as a context with its type, or whose name has
// spaces, is put in parentheses, as in "(f() -> ()).(closure #1)".
func (pr *printer) entitySwift3(e *node, asPrefix bool, typePr int, hasName bool, extra string, extraIndex int64, overwrite string, genericArgs *node) {
	ctx := e.kid(0)
	if ctx == nil {
		pr.bad = true
		return
	}
	if pr.printContext(ctx) {
		before := len(pr.out)
		pr.print(ctx, true)
		if len(pr.out) != before {
			pr.b('.')
		}
	}
	local := hasName && e.kid(1).kindIs(kLocalDeclName)
	multiWord := containsSpace(extra)
	open := multiWord || local || (asPrefix && typePr != typeNone)
	if open {
		pr.b('(')
	}
	if hasName || overwrite != "" {
		before := len(pr.out)
		if overwrite != "" {
			pr.s(overwrite)
		} else {
			if name := e.kid(1); name != nil && isDeclName(name.kind) && name.kind != kPrivateDeclName {
				pr.print(name, false)
			}
			if priv := e.firstKid(kPrivateDeclName); priv != nil {
				pr.print(priv, false)
			}
		}
		if len(pr.out) != before && extra != "" {
			pr.b('.')
		}
	}
	if extra != "" {
		pr.s(extra)
		if extraIndex >= 0 {
			pr.u(uint64(extraIndex))
		}
	}
	if open && (local || multiWord) {
		pr.b(')')
		open = false
	}
	if typePr == typeFunctionStyle && !multiWord {
		t := e.firstKid(kType).kid(0)
		x := t
		for x.kindIs(kDependentGenericType) {
			x = x.kid(1).kid(0)
		}
		if x != nil && isFunctionTypeKind(x.kind) && x.kind != kAutoClosureType &&
			x.kind != kEscapingAutoClosureType && x.kind != kObjCBlock && x.kind != kEscapingObjCBlock {
			pr.entityType(e, t, genericArgs)
		}
	}
	if open {
		pr.b(')')
	}
}

func containsSpace(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == ' ' {
			return true
		}
	}
	return false
}

func (pr *printer) entityType(e, t, genericArgs *node) {
	labels := e.firstKid(kLabelList)
	if labels == nil && genericArgs == nil {
		pr.print(t, false)
		return
	}
	if genericArgs != nil {
		pr.b('<')
		pr.kids(genericArgs, ", ")
		pr.b('>')
	}
	if t.kindIs(kDependentGenericType) {
		if genericArgs == nil {
			pr.print(t.kid(0), false)
		}
		dep := t.kid(1)
		if pr.simple || needSpaceBeforeType(dep) {
			pr.b(' ')
		}
		t = dep.kid(0)
	}
	if t == nil || !isFunctionTypeKind(t.kind) {
		pr.print(t, false)
		return
	}
	pr.functionType(labels, t)
}

func (pr *printer) functionType(labels, n *node) {
	if n.numKids() < 2 {
		pr.bad = true
		return
	}
	conv := func(c string) {
		pr.s("@convention(")
		pr.s(c)
		if ct := n.kid(0); ct.kind == kClangType {
			pr.s(", mangledCType: \"")
			pr.s(ct.text)
			pr.b('"')
		}
		pr.s(") ")
	}
	switch n.kind {
	case kAutoClosureType, kEscapingAutoClosureType:
		pr.s("@autoclosure ")
	case kThinFunctionType:
		pr.s("@convention(thin) ")
	case kCFunctionPointer:
		conv("c")
	case kEscapingObjCBlock:
		pr.s("@escaping ")
		conv("block")
	case kObjCBlock:
		conv("block")
	}
	var throws, sendable, async, diff, sending *node
	var args, result *node
	for _, c := range n.kids {
		switch c.kind {
		case kThrowsAnnotation, kTypedThrowsAnnotation:
			throws = c
		case kConcurrentFunctionType:
			sendable = c
		case kAsyncAnnotation:
			async = c
		case kDifferentiableFunctionType:
			diff = c
		case kSendingResultFunctionType:
			sending = c
		case kGlobalActorFunctionType, kIsolatedAnyFunctionType, kNonIsolatedCallerFunctionType:
			pr.print(c, false)
		case kArgumentTuple:
			args = c
		case kReturnType:
			result = c
		}
	}
	if diff != nil {
		pr.print(diff, false)
	}
	if sendable != nil {
		pr.print(sendable, false)
	}
	if args == nil || result == nil {
		pr.bad = true
		return
	}
	pr.functionParams(labels, args)
	if async != nil {
		pr.s(" async")
	}
	if throws != nil {
		pr.print(throws, false)
	}
	pr.s(" -> ")
	if sending != nil {
		pr.s("sending ")
	}
	pr.print(result, false)
}

func (pr *printer) functionParams(labels, args *node) {
	params := args.kid(0).kid(0)
	if params == nil {
		pr.bad = true
		return
	}
	if params.kind != kTuple {
		pr.b('(')
		pr.print(params, false)
		pr.b(')')
		return
	}
	hasLabels := labels.numKids() > 0
	pr.b('(')
	for i, p := range params.kids {
		if i > 0 {
			pr.s(", ")
		}
		if hasLabels {
			l := labels.kid(i)
			if l.kindIs(kIdentifier) {
				pr.s(l.text)
			} else {
				pr.b('_')
			}
			if pr.simple {
				pr.s(" : ")
			} else {
				pr.s(": ")
			}
		}
		pr.print(p, false)
	}
	pr.b(')')
}

func (pr *printer) implFunctionType(n *node) {
	const (
		attrs = iota
		inputs
		results
	)
	state := attrs
	var patternSubs, invocationSubs, sending *node
	transition := func(to int) {
		for ; state < to; state++ {
			switch state {
			case attrs:
				if patternSubs != nil {
					pr.s("@substituted ")
					pr.print(patternSubs.kid(0), false)
					pr.b(' ')
				}
				pr.b('(')
			case inputs:
				pr.s(") -> ")
				if sending != nil {
					pr.s("sending ")
				}
				pr.b('(')
			}
		}
	}
	for _, c := range n.kids {
		switch c.kind {
		case kImplParameter:
			if state == inputs {
				pr.s(", ")
			}
			transition(inputs)
			pr.print(c, false)
		case kImplResult, kImplYield, kImplErrorResult:
			if state == results {
				pr.s(", ")
			}
			transition(results)
			pr.print(c, false)
		case kImplPatternSubstitutions:
			patternSubs = c
		case kImplInvocationSubstitutions:
			invocationSubs = c
		case kImplSendingResult:
			sending = c
		default:
			pr.print(c, false)
			pr.b(' ')
		}
	}
	transition(results)
	pr.b(')')
	if patternSubs != nil {
		pr.s(" for <")
		for _, c := range patternSubs.kids[1:] {
			pr.print(c, false)
		}
		pr.b('>')
	}
	if invocationSubs != nil {
		pr.s(" for <")
		pr.kids(invocationSubs, ", ")
		pr.b('>')
	}
}

// Specializations.

func (pr *printer) specialization(n *node, desc string) {
	if pr.simple {
		pr.s("specialized ")
		return
	}
	pr.s(desc)
	pr.s(" <")
	sep := ""
	arg := 0
	for _, c := range n.kids {
		switch c.kind {
		case kSpecializationPassID, kDroppedArgument:
		case kIsSerialized, kAsyncRemoved:
			pr.s(sep)
			sep = ", "
			pr.print(c, false)
		default:
			if len(c.kids) > 0 {
				pr.s(sep)
				sep = ", "
				switch c.kind {
				case kFunctionSignatureSpecializationParam:
					pr.s("Arg[")
					pr.u(uint64(arg))
					pr.s("] = ")
					pr.funcSigSpecParams(c)
				case kFunctionSignatureSpecializationReturn:
					pr.s("Return = ")
					pr.funcSigSpecParams(c)
				default:
					pr.print(c, false)
				}
			}
			arg++
		}
	}
	pr.s("> of ")
}

func (pr *printer) funcSigSpecParams(n *node) {
	i := 0
	for i < len(n.kids) {
		k := n.kids[i].index
		switch k {
		case fsBoxToValue, fsBoxToStack, fsInOutToOut:
			pr.print(n.kids[i], false)
			i++
		case fsConstantPropFunction, fsConstantPropGlobal:
			pr.b('[')
			pr.print(n.kid(i), false)
			pr.s(" : ")
			pr.payload(n.kid(i + 1).textOr())
			pr.b(']')
			i += 2
		case fsConstantPropInteger, fsConstantPropFloat:
			pr.b('[')
			pr.print(n.kid(i), false)
			pr.s(" : ")
			pr.print(n.kid(i+1), false)
			pr.b(']')
			i += 2
		case fsConstantPropString:
			pr.b('[')
			pr.print(n.kid(i), false)
			pr.s(" : ")
			pr.print(n.kid(i+1), false)
			pr.b('\'')
			pr.print(n.kid(i+2), false)
			pr.b('\'')
			pr.b(']')
			i += 3
		case fsConstantPropKeyPath:
			// [kind : hash<Root,Value>]
			if i+3 >= len(n.kids) {
				pr.bad = true
				return
			}
			pr.b('[')
			pr.print(n.kids[i], false)
			pr.s(" : ")
			pr.s(n.kids[i+1].text)
			pr.b('<')
			pr.print(n.kids[i+2], false)
			pr.b(',')
			pr.print(n.kids[i+3], false)
			pr.s(">]")
			i += 4
		case fsClosureProp:
			pr.b('[')
			pr.print(n.kid(i), false)
			pr.s(" : ")
			pr.print(n.kid(i+1), false)
			pr.s(", Argument Types : [")
			i += 2
			for i < len(n.kids) {
				c := n.kids[i]
				if c.kind != kType {
					break
				}
				pr.print(c, false)
				i++
				if i < len(n.kids) && n.kids[i].text != "" {
					pr.s(", ")
				}
			}
			pr.b(']')
		case fsClosurePropPrevious:
			pr.b('[')
			pr.print(n.kid(i), false)
			pr.s(" : ")
			pr.print(n.kid(i+1), false)
			pr.b(']')
			i += 2
		default:
			pr.print(n.kids[i], false)
			i++
		}
		if pr.bad {
			return
		}
	}
}

func (pr *printer) funcSigSpecKind(v uint64) {
	any := false
	flag := func(bit uint64, s string) {
		if v&bit != 0 {
			if any {
				pr.s(" and ")
			}
			any = true
			pr.s(s)
		}
	}
	flag(fsExistentialToGeneric, "Existential To Protocol Constrained Generic")
	flag(fsDead, "Dead")
	flag(fsOwnedToGuaranteed, "Owned To Guaranteed")
	flag(fsGuaranteedToOwned, "Guaranteed To Owned")
	flag(fsSROA, "Exploded")
	if any {
		return
	}
	switch v {
	case fsBoxToValue:
		pr.s("Value Promoted from Box")
	case fsBoxToStack:
		pr.s("Stack Promoted from Box")
	case fsInOutToOut:
		pr.s("InOut Converted to Out")
	case fsConstantPropFunction:
		pr.s("Constant Propagated Function")
	case fsConstantPropGlobal:
		pr.s("Constant Propagated Global")
	case fsConstantPropInteger:
		pr.s("Constant Propagated Integer")
	case fsConstantPropFloat:
		pr.s("Constant Propagated Float")
	case fsConstantPropString:
		pr.s("Constant Propagated String")
	case fsConstantPropKeyPath:
		pr.s("Constant Propagated KeyPath")
	case fsClosureProp:
		pr.s("Closure Propagated")
	case fsClosurePropPrevious:
		pr.s("Closure Propagated : Same As Argument")
	default:
		pr.bad = true
	}
}

// payload prints a specialization argument, which names another symbol:
// demangled when it is one, verbatim otherwise.
func (pr *printer) payload(text string) {
	if pr.nest < maxPayloadNest && len(text) <= maxOutput {
		if s, ok := demangleNested(text, pr.simple, pr.nest+1); ok {
			pr.s(s)
			return
		}
	}
	pr.s(text)
}

// Automatic differentiation.

func (pr *printer) autoDiffFunction(n *node) {
	end := 0
	for end < len(n.kids) && n.kids[end].kind != kAutoDiffFunctionKind {
		end++
	}
	if end+2 >= len(n.kids) {
		pr.bad = true
		return
	}
	if n.kind == kAutoDiffDerivativeVTableThunk {
		pr.s("vtable thunk for ")
	}
	pr.print(n.kids[end], false)
	pr.s(" of ")
	var sig *node
	for i := 0; i < end; i++ {
		if i == end-1 && n.kids[i].kind == kDependentGenericSignature {
			sig = n.kids[i]
			break
		}
		pr.print(n.kids[i], false)
	}
	if pr.simple {
		return
	}
	pr.s(" with respect to parameters ")
	pr.print(n.kids[end+1], false)
	pr.s(" and results ")
	pr.print(n.kids[end+2], false)
	if sig != nil {
		pr.s(" with ")
		pr.print(sig, false)
	}
}

func (pr *printer) autoDiffSubsetThunk(n *node) {
	if len(n.kids) < 5 {
		pr.bad = true
		return
	}
	pr.s("autodiff subset parameters thunk for ")
	cur := len(n.kids) - 1
	toParams := n.kids[cur]
	results := n.kids[cur-1]
	params := n.kids[cur-2]
	kind := n.kids[cur-3]
	cur -= 4
	pr.print(kind, false)
	pr.s(" from ")
	if cur == 0 {
		pr.print(n.kids[0], false)
	} else {
		for i := 0; i < cur; i++ {
			pr.print(n.kids[i], false)
		}
	}
	pr.s(" with respect to parameters ")
	pr.print(params, false)
	pr.s(" and results ")
	pr.print(results, false)
	pr.s(" to parameters ")
	pr.print(toParams, false)
	if cur > 0 {
		pr.s(" of type ")
		pr.print(n.kids[cur], false)
	}
}

func (pr *printer) differentiabilityWitness(n *node) {
	k := 0
	for k < len(n.kids) && n.kids[k].kind != kIndex {
		k++
	}
	if k+2 >= len(n.kids) {
		pr.bad = true
		return
	}
	switch byte(n.kids[k].index) {
	case 'f':
		pr.s("forward-mode")
	case 'r':
		pr.s("reverse-mode")
	case 'd':
		pr.s("normal")
	case 'l':
		pr.s("linear")
	}
	pr.s(" differentiability witness for ")
	for i := 0; i < k; i++ {
		pr.print(n.kids[i], false)
	}
	pr.s(" with respect to parameters ")
	pr.print(n.kids[k+1], false)
	pr.s(" and results ")
	pr.print(n.kids[k+2], false)
	if k+3 < len(n.kids) {
		pr.s(" with ")
		pr.print(n.kids[k+3], false)
	}
}
