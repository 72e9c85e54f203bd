package swift

// kind names what a node of the demangled tree stands for. The names follow
// the node kinds of the Swift compiler's demangler, so that a reader can hold
// this package's tree next to `swift-demangle -tree-only` output.
type kind uint16

const (
	kInvalid kind = iota
	kAllocator
	kAnonymousContext
	kAnyProtocolConformanceList
	kArgumentTuple
	kAssociatedConformanceDescriptor
	kAssociatedTypeDescriptor
	kAssociatedTypeMetadataAccessor
	kAssociatedTypeRef
	kAssociatedTypeWitnessTableAccessor
	kAsyncAnnotation
	kAsyncAwaitResumePartialFunction
	kAsyncFunctionPointer
	kAsyncRemoved
	kAsyncSuspendResumePartialFunction
	kAutoClosureType
	kAutoDiffDerivativeVTableThunk
	kAutoDiffFunction
	kAutoDiffFunctionKind
	kAutoDiffSelfReorderingReabstractionThunk
	kAutoDiffSubsetParametersThunk
	kBackDeploymentFallback
	kBackDeploymentThunk
	kBaseConformanceDescriptor
	kBaseWitnessTableAccessor
	kBoundGenericClass
	kBoundGenericEnum
	kBoundGenericFunction
	kBoundGenericOtherNominalType
	kBoundGenericProtocol
	kBoundGenericStructure
	kBoundGenericTypeAlias
	kBuiltinFixedArray
	kBuiltinTypeName
	kCFunctionPointer
	kCanonicalPrespecializedGenericTypeCachingOnceToken
	kCanonicalSpecializedGenericTypeMetadataAccessFunction
	kClangType
	kClass
	kClassMetadataBaseOffset
	kCompileTimeLiteral
	kConcreteProtocolConformance
	kConcurrentFunctionType
	kConstrainedExistential
	kConstrainedExistentialRequirementList
	kConstrainedExistentialSelf
	kConstructor
	kCoroFunctionPointer
	kCoroutineContinuationPrototype
	kCurryThunk
	kDeallocator
	kDefaultArgumentInitializer
	kDefaultAssociatedConformanceAccessor
	kDefaultAssociatedTypeMetadataAccessor
	kDefaultOverride
	kDependentAssociatedConformance
	kDependentAssociatedTypeRef
	kDependentGenericConformanceRequirement
	kDependentGenericInverseConformanceRequirement
	kDependentGenericLayoutRequirement
	kDependentGenericParamCount
	kDependentGenericParamPackMarker
	kDependentGenericParamType
	kDependentGenericParamValueMarker
	kDependentGenericSameShapeRequirement
	kDependentGenericSameTypeRequirement
	kDependentGenericSignature
	kDependentGenericType
	kDependentMemberType
	kDependentProtocolConformanceAssociated
	kDependentProtocolConformanceInherited
	kDependentProtocolConformanceRoot
	kDependentPseudogenericSignature
	kDestructor
	kDidSet
	kDifferentiabilityWitness
	kDifferentiableFunctionType
	kDirectMethodReferenceAttribute
	kDirectness
	kDispatchThunk
	kDistributedAccessor
	kDistributedThunk
	kDroppedArgument
	kDynamicAttribute
	kDynamicSelf
	kDynamicallyReplaceableFunctionImpl
	kDynamicallyReplaceableFunctionKey
	kDynamicallyReplaceableFunctionVar
	kEmptyList
	kEnum
	kEnumCase
	kErrorType
	kEscapingAutoClosureType
	kEscapingObjCBlock
	kExistentialMetatype
	kExplicitClosure
	kExtension
	kFieldOffset
	kFirstElementMarker
	kFullObjCResilientClassStub
	kFullTypeMetadata
	kFunction
	kFunctionSignatureSpecialization
	kFunctionSignatureSpecializationParam
	kFunctionSignatureSpecializationParamKind
	kFunctionSignatureSpecializationParamPayload
	kFunctionSignatureSpecializationReturn
	kFunctionType
	kGenericPartialSpecialization
	kGenericPartialSpecializationNotReAbstracted
	kGenericProtocolWitnessTable
	kGenericProtocolWitnessTableInstantiationFunction
	kGenericSpecialization
	kGenericSpecializationInResilienceDomain
	kGenericSpecializationNotReAbstracted
	kGenericSpecializationParam
	kGenericSpecializationPrespecialized
	kGenericTypeMetadataPattern
	kGenericTypeParamDecl
	kGetter
	kGlobal
	kGlobalActorFunctionType
	kGlobalGetter
	kGlobalVariableOnceDeclList
	kGlobalVariableOnceFunction
	kGlobalVariableOnceToken
	kHasSymbolQuery
	kIVarDestroyer
	kIVarInitializer
	kIdentifier
	kImplConvention
	kImplDifferentiabilityKind
	kImplErasedIsolation
	kImplErrorResult
	kImplEscaping
	kImplFunctionAttribute
	kImplFunctionConvention
	kImplFunctionConventionName
	kImplFunctionType
	kImplCoroutineKind
	kImplInvocationSubstitutions
	kImplParameter
	kImplParameterResultDifferentiability
	kImplPatternSubstitutions
	kImplResult
	kImplSendingResult
	kImplYield
	kImplicitClosure
	kInOut
	kIndex
	kIndexSubset
	kInfixOperator
	kInitAccessor
	kInitializer
	kInlinedGenericFunction
	kInteger
	kIsSerialized
	kIsolated
	kIsolatedAnyFunctionType
	kIsolatedDeallocator
	kKeyPathEqualsThunkHelper
	kKeyPathGetterThunkHelper
	kKeyPathHashThunkHelper
	kKeyPathSetterThunkHelper
	kLabelList
	kLazyProtocolWitnessTableAccessor
	kLazyProtocolWitnessTableCacheVariable
	kLocalDeclName
	kMacro
	kMaterializeForSet
	kMergedFunction
	kMetaclass
	kMetadataInstantiationCache
	kMetatype
	kMetatypeRepresentation
	kMethodDescriptor
	kMethodLookupFunction
	kModify2Accessor
	kModifyAccessor
	kModule
	kModuleDescriptor
	kNativeOwningAddressor
	kNativeOwningMutableAddressor
	kNativePinningAddressor
	kNativePinningMutableAddressor
	kNegativeInteger
	kNoDerivative
	kNoEscapeFunctionType
	kNominalTypeDescriptor
	kNominalTypeDescriptorRecord
	kNonIsolatedCallerFunctionType
	kNonObjCAttribute
	kNoncanonicalSpecializedGenericTypeMetadata
	kNoncanonicalSpecializedGenericTypeMetadataCache
	kNumber
	kObjCAttribute
	kObjCBlock
	kObjCMetadataUpdateFunction
	kObjCResilientClassStub
	kOpaqueReturnType
	kOpaqueReturnTypeIndex
	kOpaqueReturnTypeOf
	kOpaqueType
	kOpaqueTypeDescriptor
	kOpaqueTypeDescriptorAccessor
	kOpaqueTypeDescriptorAccessorImpl
	kOpaqueTypeDescriptorAccessorKey
	kOpaqueTypeDescriptorAccessorVar
	kOpaqueTypeDescriptorRecord
	kOtherNominalType
	kOutlinedAssignWithCopy
	kOutlinedAssignWithCopyNoValueWitness
	kOutlinedAssignWithTake
	kOutlinedAssignWithTakeNoValueWitness
	kOutlinedBridgedMethod
	kOutlinedConsume
	kOutlinedCopy
	kOutlinedDestroy
	kOutlinedDestroyNoValueWitness
	kOutlinedEnumGetTag
	kOutlinedEnumProjectDataForLoad
	kOutlinedEnumTagStore
	kOutlinedInitializeWithCopy
	kOutlinedInitializeWithCopyNoValueWitness
	kOutlinedInitializeWithTake
	kOutlinedInitializeWithTakeNoValueWitness
	kOutlinedReadOnlyObject
	kOutlinedRelease
	kOutlinedRetain
	kOutlinedVariable
	kOwned
	kOwningAddressor
	kOwningMutableAddressor
	kPack
	kPackElement
	kPackElementLevel
	kPackExpansion
	kPackProtocolConformance
	kPartialApplyForwarder
	kPartialApplyObjCForwarder
	kPostfixOperator
	kPredefinedObjCAsyncCompletionHandlerImpl
	kObjCAsyncCompletionHandlerImpl
	kPrefixOperator
	kPrivateDeclName
	kPropertyDescriptor
	kPropertyWrapperBackingInitializer
	kPropertyWrapperInitFromProjectedValue
	kProtocol
	kProtocolConformance
	kProtocolConformanceDescriptor
	kProtocolConformanceDescriptorRecord
	kProtocolConformanceRef
	kProtocolConformanceRefInProtocolModule
	kProtocolConformanceRefInTypeModule
	kProtocolDescriptor
	kProtocolDescriptorRecord
	kProtocolList
	kProtocolListWithAnyObject
	kProtocolListWithClass
	kProtocolRequirementsBaseDescriptor
	kProtocolSelfConformanceDescriptor
	kProtocolSelfConformanceWitness
	kProtocolSelfConformanceWitnessTable
	kProtocolWitness
	kProtocolWitnessTable
	kProtocolWitnessTableAccessor
	kProtocolWitnessTablePattern
	kQualifiedArchetype
	kRead2Accessor
	kReabstractionThunk
	kReabstractionThunkHelper
	kReabstractionThunkHelperWithGlobalActor
	kReabstractionThunkHelperWithSelf
	kReadAccessor
	kReflectionMetadataAssocTypeDescriptor
	kReflectionMetadataBuiltinDescriptor
	kReflectionMetadataFieldDescriptor
	kReflectionMetadataSuperclassDescriptor
	kRelatedEntityDeclName
	kResilientProtocolWitnessTable
	kRetroactiveConformance
	kReturnType
	kSILBoxImmutableField
	kSILBoxLayout
	kSILBoxMutableField
	kSILBoxType
	kSILBoxTypeWithLayout
	kSILPackDirect
	kSILPackIndirect
	kSelfTypeRef
	kSending
	kSendingResultFunctionType
	kSetter
	kShared
	kSpecializationPassID
	kStatic
	kStructure
	kSubscript
	kSuffix
	kSugaredArray
	kSugaredDictionary
	kSugaredInlineArray
	kSugaredOptional
	kSugaredParen
	kThinFunctionType
	kThrowsAnnotation
	kTuple
	kTupleElement
	kTupleElementName
	kType
	kTypeAlias
	kTypeList
	kTypeMangling
	kTypeMetadata
	kTypeMetadataAccessFunction
	kTypeMetadataCompletionFunction
	kTypeMetadataDemanglingCache
	kTypeMetadataInstantiationCache
	kTypeMetadataInstantiationFunction
	kTypeMetadataLazyCache
	kTypeMetadataSingletonInitializationCache
	kTypedThrowsAnnotation
	kUncurriedFunctionType
	kUniquable
	kUnknownIndex
	kUnmanaged
	kUnowned
	kUnsafeAddressor
	kUnsafeMutableAddressor
	kValueWitness
	kValueWitnessTable
	kVTableAttribute
	kVTableThunk
	kVariable
	kVariadicMarker
	kWeak
	kWillSet
	kAccessibleFunctionRecord
	kExtensionDescriptor
	kAnonymousDescriptor
	kAssociatedTypeGenericParamRef
	kBorrowAccessor
	kMutateAccessor
	kAssocTypePath
	kWitnessTableOffset
	kNonConstantPartialApplyThunk
)

// node is one vertex of the demangled tree. Substitutions make the tree a
// DAG: a node may have several parents, so nodes are never mutated once
// another node refers to them, except while the operator that made them is
// still assembling them.
type node struct {
	kind  kind
	text  string
	index uint64
	kids  []*node
	inl   [3]*node // backing store for the first children
}

func (n *node) numKids() int {
	if n == nil {
		return 0
	}
	return len(n.kids)
}

// kid returns the i-th child or nil, so that malformed trees print as
// errors instead of panicking.
func (n *node) kid(i int) *node {
	if n == nil || i < 0 || i >= len(n.kids) {
		return nil
	}
	return n.kids[i]
}

func (n *node) kindIs(k kind) bool { return n != nil && n.kind == k }

func (n *node) kindOr() kind {
	if n == nil {
		return kInvalid
	}
	return n.kind
}

func (n *node) indexOr() uint64 {
	if n == nil {
		return 0
	}
	return n.index
}

func (n *node) textOr() string {
	if n == nil {
		return ""
	}
	return n.text
}

// firstKid returns the first child of kind k.
func (n *node) firstKid(k kind) *node {
	if n == nil {
		return nil
	}
	for _, c := range n.kids {
		if c.kind == k {
			return c
		}
	}
	return nil
}

// arena hands out nodes and child slices from reusable blocks. A demangling
// builds a few dozen short-lived nodes; allocating them one by one would
// dominate the cost of a call.
type arena struct {
	blocks [][]node
	cur    []node // blocks[bi], or nil before the first node
	bi, ni int
	kids   [][]*node
	ki, ko int
}

const (
	nodeBlock = 256
	kidBlock  = 1024
)

// reset makes the whole arena available again. Nodes are not cleared here
// but when they are handed out again, which touches each node once instead
// of twice; until then they may keep the strings of earlier inputs alive,
// as long as the arena itself lives in the pool.
func (a *arena) reset() {
	a.bi, a.ni, a.ki, a.ko = 0, 0, 0, 0
	if len(a.blocks) > 0 {
		a.cur = a.blocks[0]
	}
}

func (a *arena) alloc(k kind) *node {
	if a.ni == len(a.cur) {
		a.grow()
	}
	n := &a.cur[a.ni]
	a.ni++
	*n = node{kind: k}
	// Most nodes have at most three children; keeping them in the node
	// saves a trip to the child slab.
	n.kids = n.inl[:0:len(n.inl)]
	return n
}

// grow moves to the next node block, allocating it on first use.
func (a *arena) grow() {
	if a.cur != nil {
		a.bi++
	}
	if a.bi == len(a.blocks) {
		a.blocks = append(a.blocks, make([]node, nodeBlock))
	}
	a.cur = a.blocks[a.bi]
	a.ni = 0
}

// kidSlice returns an empty slice with capacity c carved from the arena.
func (a *arena) kidSlice(c int) []*node {
	if c > kidBlock {
		return make([]*node, 0, c)
	}
	if len(a.kids) == 0 {
		a.kids = append(a.kids, make([]*node, kidBlock))
	}
	if a.ko+c > kidBlock {
		a.ki++
		a.ko = 0
		if a.ki == len(a.kids) {
			a.kids = append(a.kids, make([]*node, kidBlock))
		}
	}
	s := a.kids[a.ki][a.ko : a.ko : a.ko+c]
	a.ko += c
	return s
}

// add appends child to parent's children. The common case, a free slot,
// stays small enough to be inlined into the parser's helpers.
func (a *arena) add(parent, child *node) {
	if len(parent.kids) < cap(parent.kids) {
		parent.kids = append(parent.kids, child)
		return
	}
	a.addGrow(parent, child)
}

func (a *arena) addGrow(parent, child *node) {
	s := a.kidSlice(2 * cap(parent.kids))
	s = append(s, parent.kids...)
	parent.kids = append(s, child)
}

func reverseKids(n *node, from int) {
	if n == nil || from >= len(n.kids) {
		return
	}
	s := n.kids[from:]
	for i, j := 0, len(s)-1; i < j; i, j = i+1, j-1 {
		s[i], s[j] = s[j], s[i]
	}
}

// isContext reports whether a node of kind k can be the parent context of a
// declaration.
func isContext(k kind) bool {
	switch k {
	case kAllocator, kAnonymousContext, kAutoDiffFunction, kClass, kConstructor,
		kDeallocator, kDefaultArgumentInitializer, kDestructor, kDidSet, kEnum,
		kExplicitClosure, kExtension, kFunction, kGetter, kGlobalGetter,
		kIVarInitializer, kIVarDestroyer, kImplicitClosure, kInitializer,
		kInitAccessor, kIsolatedDeallocator, kMaterializeForSet, kModifyAccessor,
		kModify2Accessor, kModule, kNativeOwningAddressor, kNativeOwningMutableAddressor,
		kNativePinningAddressor, kNativePinningMutableAddressor, kOtherNominalType,
		kOwningAddressor, kOwningMutableAddressor, kProtocol, kReadAccessor,
		kRead2Accessor, kSetter, kStatic, kStructure, kSubscript, kTypeAlias,
		kUnsafeAddressor, kUnsafeMutableAddressor, kVariable, kWillSet,
		kOpaqueReturnTypeOf, kPropertyWrapperBackingInitializer,
		kPropertyWrapperInitFromProjectedValue, kMacro, kBorrowAccessor, kMutateAccessor:
		return true
	}
	return false
}

func isAnyGeneric(k kind) bool {
	switch k {
	case kStructure, kClass, kEnum, kProtocol, kOtherNominalType, kTypeAlias:
		return true
	}
	return false
}

func isEntity(k kind) bool { return k == kType || isContext(k) }

func isDeclName(k kind) bool {
	switch k {
	case kIdentifier, kLocalDeclName, kPrivateDeclName, kRelatedEntityDeclName,
		kPrefixOperator, kPostfixOperator, kInfixOperator:
		return true
	}
	return false
}

func isRequirement(k kind) bool {
	switch k {
	case kDependentGenericSameTypeRequirement, kDependentGenericSameShapeRequirement,
		kDependentGenericLayoutRequirement, kDependentGenericConformanceRequirement,
		kDependentGenericInverseConformanceRequirement, kDependentGenericParamPackMarker,
		kDependentGenericParamValueMarker:
		return true
	}
	return false
}

// isFunctionAttr reports the kinds that prefix a symbol in the printed form
// ("@objc ", "merged ", "generic specialization <...> of "): they are
// mangled after the entity but printed before it.
func isFunctionAttr(k kind) bool {
	switch k {
	case kFunctionSignatureSpecialization, kGenericSpecialization,
		kGenericSpecializationPrespecialized, kInlinedGenericFunction,
		kGenericSpecializationNotReAbstracted, kGenericPartialSpecialization,
		kGenericPartialSpecializationNotReAbstracted, kGenericSpecializationInResilienceDomain,
		kObjCAttribute, kNonObjCAttribute, kDynamicAttribute, kDirectMethodReferenceAttribute,
		kVTableAttribute, kPartialApplyForwarder, kPartialApplyObjCForwarder,
		kOutlinedVariable, kOutlinedReadOnlyObject, kOutlinedBridgedMethod, kMergedFunction,
		kDistributedThunk, kDistributedAccessor, kDynamicallyReplaceableFunctionImpl,
		kDynamicallyReplaceableFunctionKey, kDynamicallyReplaceableFunctionVar,
		kAsyncFunctionPointer, kAsyncAwaitResumePartialFunction,
		kAsyncSuspendResumePartialFunction, kAccessibleFunctionRecord,
		kBackDeploymentThunk, kBackDeploymentFallback, kHasSymbolQuery,
		kCoroFunctionPointer, kDefaultOverride:
		return true
	}
	return false
}
