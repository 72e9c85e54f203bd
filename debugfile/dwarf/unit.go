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

	// Subroutines in depth-first order, the order DWARF consumers use to
	// decide which entry owns an address when ranges nest.
	Subroutines []Subroutine
	SubRanges   []Range // Subroutine.Ranges index into this

	r      *entryReader
	names  map[uint64]*refEntry // referenced entries, decoded once per unit
	others map[int]*entryReader // readers of other units, for cross-unit references
}

// Subroutine is a DW_TAG_subprogram or DW_TAG_inlined_subroutine entry.
type Subroutine struct {
	Offset   uint64 // of the entry within .debug_info
	Parent   int32  // index of the nearest enclosing subroutine entry, or -1
	Inlined  bool   // DW_TAG_inlined_subroutine
	HasLowPC bool
	LowPC    uint64
	// Ranges is the half-open index range of the entry's address ranges in
	// UnitInfo.SubRanges.
	Ranges [2]uint32

	CallFile      uint64 // line table file index of the call site (inlined)
	CallLine      uint32
	CallColumn    uint32
	Discriminator uint32

	names refEntry
}

// refEntry holds the attributes that name a subroutine, for entries reached
// through DW_AT_abstract_origin and DW_AT_specification.
type refEntry struct {
	linkage     []byte
	name        []byte
	origin      uint64 // 0: none (no entry lives at offset 0)
	spec        uint64
	declFile    uint64
	declLine    uint32
	hasDeclFile bool
	hasDeclLine bool
	unit        *Unit
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

// ReadUnit reads unit u's root entry and all its subroutine entries into ui.
// Cost is linear in the unit's size; entries describing types are skipped
// via DW_AT_sibling when the producer emitted it.
func (d *Data) ReadUnit(u *Unit, ui *UnitInfo) error {
	r, err := d.newEntryReader(u)
	if err != nil {
		return err
	}
	*ui = UnitInfo{Unit: u, Subroutines: ui.Subroutines[:0], SubRanges: ui.SubRanges[:0], Ranges: ui.Ranges[:0], r: r, names: ui.names}
	if ui.names == nil {
		ui.names = make(map[uint64]*refEntry)
	} else {
		clear(ui.names)
	}
	children, err := r.readRoot(ui)
	if err != nil || !children {
		return err
	}
	stack := make([]int32, 1, 32)
	stack[0] = -1
	tab := r.tab
	for r.pos < r.end && r.err == nil {
		start := r.pos
		code := r.uleb()
		if code == 0 {
			if len(stack) == 1 {
				break
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
		parent := stack[len(stack)-1]
		switch kindOf(a.tag) {
		case kindSubroutine:
			idx := int32(len(ui.Subroutines))
			r.readSubroutine(ui, a, uint64(start), parent)
			if a.children {
				stack = append(stack, idx)
			}
			continue
		case kindData:
			if a.children && r.skipSubtree(a) {
				continue
			}
		}
		r.skipAttrs(a)
		if a.children {
			stack = append(stack, parent)
		}
	}
	if r.err != nil {
		return r.err
	}
	return nil
}

// skipSubtree jumps over an entry and its children using DW_AT_sibling. It
// reports false, with the cursor unmoved, when there is no usable sibling.
func (r *entryReader) skipSubtree(a *abbrev) bool {
	has := false
	for i := range a.attrs {
		if a.attrs[i].attr == DW_AT_sibling {
			has = true
			break
		}
	}
	if !has {
		return false
	}
	save := r.pos
	var target uint64
	found := false
	for i := range a.attrs {
		s := &a.attrs[i]
		v := r.read(s.form, s.implicit)
		if s.attr == DW_AT_sibling {
			target, found = r.ref(v)
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
	var low, high, rng, name, compDir, producer value
	var hasLow, hasHigh, hasRanges, hasName, hasCompDir, hasProducer bool
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
		case DW_AT_rnglists_base, DW_AT_GNU_ranges_base:
			r.rnglistsBase = v.u
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
	if hasLow {
		r.baseAddr, _ = r.addr(low)
	}
	ui.Ranges = r.ranges(low, high, rng, hasLow, hasHigh, hasRanges, ui.Ranges[:0])
	return a.children, r.err
}

// readSubroutine decodes a subroutine entry's attributes and appends it.
func (r *entryReader) readSubroutine(ui *UnitInfo, a *abbrev, off uint64, parent int32) {
	s := Subroutine{Offset: off, Parent: parent, Inlined: a.tag == DW_TAG_inlined_subroutine}
	var low, high, rng value
	var hasHigh, hasRanges bool
	for i := range a.attrs {
		sp := &a.attrs[i]
		switch sp.attr {
		case DW_AT_low_pc:
			low = r.read(sp.form, sp.implicit)
			s.HasLowPC = true
		case DW_AT_high_pc:
			high, hasHigh = r.read(sp.form, sp.implicit), true
		case DW_AT_ranges:
			rng, hasRanges = r.read(sp.form, sp.implicit), true
		case DW_AT_call_file:
			s.CallFile, _ = constant(r.read(sp.form, sp.implicit))
		case DW_AT_call_line:
			c, _ := constant(r.read(sp.form, sp.implicit))
			s.CallLine = uint32(c)
		case DW_AT_call_column:
			c, _ := constant(r.read(sp.form, sp.implicit))
			s.CallColumn = uint32(c)
		case DW_AT_GNU_discriminator:
			c, _ := constant(r.read(sp.form, sp.implicit))
			s.Discriminator = uint32(c)
		default:
			if !r.readNameAttr(&s.names, sp) {
				if sp.size >= 0 {
					r.skip(uint64(sp.size))
				} else {
					r.read(sp.form, sp.implicit)
				}
			}
		}
	}
	if s.HasLowPC {
		s.LowPC, s.HasLowPC = r.addr(low)
	}
	s.names.unit = r.u
	s.Ranges[0] = uint32(len(ui.SubRanges))
	ui.SubRanges = r.ranges(low, high, rng, s.HasLowPC, hasHigh, hasRanges, ui.SubRanges)
	s.Ranges[1] = uint32(len(ui.SubRanges))
	ui.Subroutines = append(ui.Subroutines, s)
}

// readNameAttr decodes attribute sp into e if it is one that names an entry,
// and reports whether it did.
func (r *entryReader) readNameAttr(e *refEntry, sp *attrSpec) bool {
	switch sp.attr {
	case DW_AT_name:
		e.name = r.str(r.read(sp.form, sp.implicit))
	case DW_AT_linkage_name, DW_AT_MIPS_linkage_name:
		e.linkage = r.str(r.read(sp.form, sp.implicit))
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
