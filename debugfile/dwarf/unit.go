package dwarf

// UnitInfo is what symbolication needs from one unit: the root entry's
// attributes and every subroutine entry (DW_TAG_subprogram and
// DW_TAG_inlined_subroutine) with its address ranges and call site. A
// UnitInfo can be reused across ReadUnit calls to recycle its slices.
type UnitInfo struct {
	Unit        *Unit
	Name        []byte
	CompDir     []byte
	Producer    []byte
	Language    Language
	StmtList    uint64
	HasStmtList bool
	Ranges      []Range // of the unit entry

	// DWOName is the file a skeleton unit's split unit lives in
	// (DW_AT_dwo_name, DW_AT_GNU_dwo_name), as written: often relative to
	// CompDir. Split is set when the entries below were read from that
	// split unit (see Data.SetSplitLoader).
	DWOName []byte
	Split   bool

	// Subroutines in depth-first order, the order DWARF consumers use to
	// decide which entry owns an address when ranges nest: the entries
	// with address attributes, and those without that enclose them (as
	// their parents).
	Subroutines []Subroutine
	SubRanges   []Range // Subroutine.Ranges index into this

	r *entryReader
	// Naming attributes of the entries name resolution has visited, and
	// where each entry's are (-1: no entry there); decoded once per unit.
	refs     []refEntry
	refIndex map[uint64]int32
	// Resolutions by abstract origin: the inlined copies of one function
	// share them.
	byOrigin     map[uint64]resolved
	lastResolved int // the subroutine resolve answered last, -1 for none
	last         resolved
	walkStack    []int32
	walkSeen     []int32
	walkNames    []int32
	others       map[int]*entryReader // readers of other units, for cross-unit references
	dwoID        uint64               // DW_AT_GNU_dwo_id (before DWARF 5 the header has none)
	hasDWOID     bool
}

// Subroutine is a DW_TAG_subprogram or DW_TAG_inlined_subroutine entry.
// Its names are not decoded by the scan but on demand (SubroutineName):
// most entries never need them, and those that do mostly share them.
type Subroutine struct {
	Offset   uint64 // of the entry within .debug_info
	LowPC    uint64
	CallFile uint64 // line table file index of the call site (inlined)
	Parent   int32  // index of the nearest enclosing subroutine entry, or -1
	// Ranges is the half-open index range of the entry's address ranges in
	// UnitInfo.SubRanges.
	Ranges        [2]uint32
	CallLine      uint32
	CallColumn    uint32
	Discriminator uint32
	Inlined       bool // DW_TAG_inlined_subroutine
	HasLowPC      bool

	// named: the entry has naming attributes of its own, read when asked
	// for. Otherwise origin is its DW_AT_abstract_origin (0: none).
	named  bool
	origin uint64
}

// refEntry holds the attributes that name a subroutine, for entries reached
// through DW_AT_abstract_origin and DW_AT_specification. Names stay
// undecoded values until a resolution picks one: most entries have both a
// name and a linkage name, and only one is wanted.
type refEntry struct {
	linkage     strValue // form 0: none
	name        strValue
	origin      uint64 // 0: none (no entry lives at offset 0)
	spec        uint64
	declFile    uint64
	declLine    uint32
	hasDeclFile bool
	hasDeclLine bool
	r           *entryReader // of the entry's unit, to decode the names
}

func kindOf(t Tag) uint8 {
	switch t {
	case DW_TAG_subprogram, DW_TAG_inlined_subroutine:
		return kindSubroutine
	case DW_TAG_enumeration_type,
		DW_TAG_array_type, DW_TAG_subroutine_type, DW_TAG_base_type, DW_TAG_pointer_type,
		DW_TAG_const_type, DW_TAG_volatile_type, DW_TAG_typedef, DW_TAG_reference_type,
		DW_TAG_rvalue_reference_type, DW_TAG_ptr_to_member_type, DW_TAG_variable,
		DW_TAG_formal_parameter, DW_TAG_member, DW_TAG_enumerator, DW_TAG_template_type_param,
		DW_TAG_template_value_param, DW_TAG_inheritance, DW_TAG_GNU_template_parameter_pack:
		// Types and data: their subtrees describe no code, so a
		// DW_AT_sibling lets the scan jump over them. Structures, classes
		// and unions are not among them: gcc puts the out-of-line code of
		// a local class's member functions inside the class's entry.
		return kindData
	}
	return kindOther
}

const (
	kindOther = iota
	kindSubroutine
	kindData
)

// ReadRoot reads only the root entry of unit u into ui: its name,
// compilation directory, producer, language and line table offset, not its
// address ranges nor any subroutine. It costs one entry.
func (d *Data) ReadRoot(u *Unit, ui *UnitInfo) error {
	r, err := d.newEntryReader(u)
	if err != nil {
		return err
	}
	*ui = UnitInfo{Unit: u, r: r, lastResolved: -1}
	r.noRanges = true
	if _, err = r.readRoot(ui); err != nil {
		return err
	}
	if d.split != nil && ui.skeleton() {
		// The skeleton's root rarely names the producer and language.
		_, err = d.splitReader(ui, r)
	}
	return err
}

// ReadUnit reads unit u's root entry and all its subroutine entries into ui.
// Cost is linear in the unit's size; entries describing types are skipped
// via DW_AT_sibling when the producer emitted it.
func (d *Data) ReadUnit(u *Unit, ui *UnitInfo) error {
	r, err := d.newEntryReader(u)
	if err != nil {
		return err
	}
	*ui = UnitInfo{Unit: u, Subroutines: ui.Subroutines[:0], SubRanges: ui.SubRanges[:0], Ranges: ui.Ranges[:0], r: r,
		refs: ui.refs[:0], refIndex: ui.refIndex, byOrigin: ui.byOrigin, walkStack: ui.walkStack, walkSeen: ui.walkSeen,
		walkNames: ui.walkNames, lastResolved: -1}
	if ui.refIndex == nil {
		ui.refIndex = make(map[uint64]int32)
		ui.byOrigin = make(map[uint64]resolved)
	}
	clear(ui.refIndex)
	clear(ui.byOrigin)
	children, err := r.readRoot(ui)
	if err != nil {
		return err
	}
	if d.split != nil && ui.skeleton() {
		sr, err := d.splitReader(ui, r)
		if err != nil {
			return err
		}
		if sr != nil {
			r, ui.r, ui.Split = sr, sr, true
			children = true
		}
	}
	if !children {
		return nil
	}
	if err := r.readEntries(ui); err != nil {
		if ui.Split {
			return splitError(ui, err)
		}
		return err
	}
	return nil
}

// readEntries reads the subroutine entries below the root into ui.
func (r *entryReader) readEntries(ui *UnitInfo) error {
	// Compilers write about one subroutine with code, and one range, per
	// 50 bytes of a unit: reserving fresh arrays by the unit's size saves
	// most of the copies of growing.
	size := r.end - r.pos
	if cap(ui.Subroutines) < size/64 {
		ui.Subroutines = make([]Subroutine, 0, size/48)
	}
	if cap(ui.SubRanges) < size/64 {
		ui.SubRanges = make([]Range, 0, size/48)
	}
	// The scan's path from the root: for each open entry, the nearest
	// subroutine entry at or above it. A subroutine entry without code is
	// recorded only while it is open, and kept only if subroutines were
	// recorded inside it: it matters only as their parent.
	type frame struct {
		sub         int32
		provisional bool
	}
	stack := make([]frame, 1, 32)
	stack[0] = frame{sub: -1}
	tab := r.tab
	u := r.u
	for r.pos < r.end && r.err == nil {
		start := r.pos
		code := r.uleb()
		if code == 0 {
			if len(stack) == 1 {
				break
			}
			if f := stack[len(stack)-1]; f.provisional && int(f.sub) == len(ui.Subroutines)-1 {
				ui.Subroutines = ui.Subroutines[:f.sub]
			}
			stack = stack[:len(stack)-1]
			continue
		}
		a := tab.get(code)
		if a == nil {
			r.pos = start
			r.fail("unit at %#x: entry at %#x has unknown abbreviation code %d", u.Offset, start, code)
			break
		}
		parent := stack[len(stack)-1].sub
		switch {
		case a.kind == kindSubroutine && (a.code || a.children):
			idx := int32(len(ui.Subroutines))
			r.readSubroutine(ui, a, uint64(start), parent)
			if a.children {
				stack = append(stack, frame{sub: idx, provisional: !a.code})
			}
			continue
		case a.kind == kindData && a.children && a.sibling:
			if r.skipSubtree(a) {
				continue
			}
		}
		r.skipAttrs(a)
		if a.children {
			stack = append(stack, frame{sub: parent})
		}
	}
	return r.err
}

// skipSubtree jumps over an entry and its children using DW_AT_sibling. It
// reports false, with the cursor unmoved, when there is no usable sibling.
func (r *entryReader) skipSubtree(a *abbrev) bool {
	save := r.pos
	var target uint64
	found := false
	for i := range a.attrs {
		s := &a.attrs[i]
		if s.attr == DW_AT_sibling {
			target, found = r.ref(r.read(s.form, s.implicit))
		} else {
			r.skipAttr(s)
		}
	}
	if r.err != nil || !found || target <= uint64(r.pos) || target > uint64(r.end) {
		// A malformed sibling is not an error worth stopping for: walk the
		// children instead.
		if r.err == nil {
			r.pos = save
		}
		return false
	}
	r.pos = int(target)
	return true
}

// readRoot decodes the unit entry and sets the reader's bases.
func (r *entryReader) readRoot(ui *UnitInfo) (children bool, err error) {
	if r.pos >= r.end {
		// A unit header with no entries, as old Apple toolchains emit
		// for empty translation units: nothing to read.
		return false, nil
	}
	start := r.pos
	code := r.uleb()
	a := r.tab.get(code)
	if a == nil || r.err != nil {
		if r.err == nil {
			r.pos = start
			r.fail("unit at %#x: root entry has unknown abbreviation code %d", r.u.Offset, code)
		}
		return false, r.err
	}
	var low, high, rng, name, compDir, producer, dwoName value
	var hasLow, hasHigh, hasRanges, hasName, hasCompDir, hasProducer, hasDWOName bool
	for i := range a.attrs {
		s := &a.attrs[i]
		v := r.read(s.form, s.implicit)
		switch s.attr {
		case DW_AT_low_pc:
			low, hasLow = v, true
		case DW_AT_high_pc:
			high, hasHigh = v, true
		case DW_AT_ranges:
			rng, hasRanges = v, true
		case DW_AT_name:
			name, hasName = v, true
		case DW_AT_comp_dir:
			compDir, hasCompDir = v, true
		case DW_AT_producer:
			producer, hasProducer = v, true
		case DW_AT_language:
			ui.Language = Language(v.u)
		case DW_AT_stmt_list:
			ui.StmtList, ui.HasStmtList = v.u, true
		case DW_AT_str_offsets_base:
			r.strOffBase = v.u
		case DW_AT_addr_base, DW_AT_GNU_addr_base:
			r.addrBase = v.u
		case DW_AT_rnglists_base:
			r.rnglistsBase = v.u
		case DW_AT_GNU_ranges_base:
			r.dwoRangesBase = v.u
		case DW_AT_dwo_name, DW_AT_GNU_dwo_name:
			dwoName, hasDWOName = v, true
		case DW_AT_GNU_dwo_id:
			ui.dwoID, ui.hasDWOID = v.u, true
		}
	}
	if r.err != nil {
		return false, r.err
	}
	// Names may be indexed strings, which need the bases read above.
	if hasName {
		ui.Name = r.str(name)
	}
	if hasCompDir {
		ui.CompDir = r.str(compDir)
	}
	if hasProducer {
		ui.Producer = r.str(producer)
	}
	if hasDWOName {
		ui.DWOName = r.str(dwoName)
	}
	if hasLow {
		r.baseAddr, _ = r.addr(low)
	}
	ui.Ranges = r.ranges(low, high, rng, hasLow, hasHigh, hasRanges, ui.Ranges[:0])
	return a.children, r.err
}

// readSubroutine decodes what a subroutine entry says about addresses and
// call sites, and appends it. Entries without code are recorded without
// decoding: they matter only as the parents of subroutines inside them.
func (r *entryReader) readSubroutine(ui *UnitInfo, a *abbrev, off uint64, parent int32) {
	s := Subroutine{Offset: off, Parent: parent, Inlined: a.tag == DW_TAG_inlined_subroutine, named: a.named || !a.code}
	s.Ranges[0] = uint32(len(ui.SubRanges))
	s.Ranges[1] = s.Ranges[0]
	if !a.code {
		r.skipAttrs(a)
		ui.Subroutines = append(ui.Subroutines, s)
		return
	}
	var low, high, rng value
	var hasHigh, hasRanges bool
	for i := range a.attrs {
		sp := &a.attrs[i]
		switch sp.role {
		case roleSkip:
			r.skipAttr(sp)
		case roleLowPC:
			low = r.value(sp)
			s.HasLowPC = true
		case roleHighPC:
			high, hasHigh = r.value(sp), true
		case roleRanges:
			rng, hasRanges = r.value(sp), true
		case roleCallFile:
			s.CallFile, _ = constant(r.value(sp))
		case roleCallLine:
			c, _ := constant(r.value(sp))
			s.CallLine = uint32(c)
		case roleCallColumn:
			c, _ := constant(r.value(sp))
			s.CallColumn = uint32(c)
		case roleDiscriminator:
			c, _ := constant(r.value(sp))
			s.Discriminator = uint32(c)
		case roleOrigin:
			s.origin, _ = r.ref(r.value(sp))
		}
	}
	if s.HasLowPC {
		s.LowPC, s.HasLowPC = r.addr(low)
	}
	ui.SubRanges = r.ranges(low, high, rng, s.HasLowPC, hasHigh, hasRanges, ui.SubRanges)
	s.Ranges[1] = uint32(len(ui.SubRanges))
	ui.Subroutines = append(ui.Subroutines, s)
}

// readNameAttr decodes attribute sp into e if it is one that names an entry,
// and reports whether it did.
func (r *entryReader) readNameAttr(e *refEntry, sp *attrSpec) bool {
	switch sp.attr {
	case DW_AT_name:
		e.name = r.strValue(sp)
	case DW_AT_linkage_name, DW_AT_MIPS_linkage_name:
		e.linkage = r.strValue(sp)
	case DW_AT_abstract_origin:
		e.origin, _ = r.ref(r.read(sp.form, sp.implicit))
	case DW_AT_specification:
		e.spec, _ = r.ref(r.read(sp.form, sp.implicit))
	case DW_AT_decl_file:
		e.declFile, e.hasDeclFile = constant(r.read(sp.form, sp.implicit))
	case DW_AT_decl_line:
		c, ok := constant(r.read(sp.form, sp.implicit))
		e.declLine, e.hasDeclLine = uint32(c), ok
	default:
		return false
	}
	return true
}
