package dwarf

// maxRefChain bounds the abstract_origin/specification graph walked to name
// one entry; real producers need two or three hops.
const maxRefChain = 64

// SubroutineName returns the name of subroutine i the way DWARF consumers such as
// llvm-symbolizer choose it: a DW_AT_linkage_name (or
// DW_AT_MIPS_linkage_name) found on the entry or on any entry reached
// through DW_AT_abstract_origin and DW_AT_specification, else the first
// DW_AT_name found that way. linkage reports which kind was found. The
// bytes are views into the string sections.
func (ui *UnitInfo) SubroutineName(i int) (name []byte, linkage bool) {
	s := &ui.Subroutines[i]
	if e := ui.find(&s.names, func(e *refEntry) bool { return e.linkage != nil }); e != nil {
		return e.linkage, true
	}
	if e := ui.find(&s.names, func(e *refEntry) bool { return e.name != nil }); e != nil {
		return e.name, false
	}
	return nil, false
}

// SubroutineDecl returns the declaration line and line-table file index of
// subroutine i, found like SubroutineName. The file index refers to the line table of
// the unit that holds the declaring entry; unit reports that unit.
func (ui *UnitInfo) SubroutineDecl(i int) (file uint64, line uint32, unit *Unit, ok bool) {
	s := &ui.Subroutines[i]
	if e := ui.find(&s.names, func(e *refEntry) bool { return e.hasDeclLine }); e != nil {
		line = e.declLine
		ok = true
	}
	if e := ui.find(&s.names, func(e *refEntry) bool { return e.hasDeclFile }); e != nil {
		return e.declFile, line, e.unit, true
	}
	return 0, line, nil, ok
}

// find walks the reference graph from start depth-first, abstract origin
// pushed before specification (so the specification is visited first), and
// returns the first entry that matches.
func (ui *UnitInfo) find(start *refEntry, match func(*refEntry) bool) *refEntry {
	// Each step pops one entry and pushes at most two, so these never
	// outgrow their arrays: the walk allocates nothing, however hostile
	// the graph.
	var stackBuf [maxRefChain + 1]*refEntry
	var seenBuf [2*maxRefChain + 1]*refEntry
	stack := append(stackBuf[:0], start)
	seen := append(seenBuf[:0], start)
	for steps := 0; len(stack) > 0 && steps < maxRefChain; steps++ {
		e := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if match(e) {
			return e
		}
		for _, off := range [2]uint64{e.origin, e.spec} {
			if off == 0 {
				continue
			}
			if t := ui.refAt(off); t != nil && !contains(seen, t) {
				seen = append(seen, t)
				stack = append(stack, t)
			}
		}
	}
	return nil
}

func contains(s []*refEntry, e *refEntry) bool {
	for _, x := range s {
		if x == e {
			return true
		}
	}
	return false
}

// refAt decodes the naming attributes of the entry at .debug_info offset
// off, once per unit scan. It returns nil for offsets that hold no entry.
func (ui *UnitInfo) refAt(off uint64) *refEntry {
	if e, ok := ui.names[off]; ok {
		return e
	}
	e := ui.readRefEntry(off)
	ui.names[off] = e
	return e
}

func (ui *UnitInfo) readRefEntry(off uint64) *refEntry {
	r := ui.r
	if off < r.u.first || off >= r.u.End {
		u := r.d.unitAt(off)
		if u == nil {
			return nil
		}
		if r = ui.others[u.index]; r == nil {
			var err error
			if r, err = ui.r.d.readerWithBases(u); err != nil {
				return nil
			}
			if ui.others == nil {
				ui.others = make(map[int]*entryReader)
			}
			ui.others[u.index] = r
		}
	}
	save, saveErr := r.pos, r.err
	defer func() { r.pos, r.err = save, saveErr }()
	r.pos = int(off)
	code := r.uleb()
	a := r.tab.get(code)
	if a == nil || r.err != nil {
		return nil
	}
	e := &refEntry{unit: r.u}
	for i := range a.attrs {
		sp := &a.attrs[i]
		if !r.readNameAttr(e, sp) {
			r.read(sp.form, sp.implicit)
		}
	}
	if r.err != nil {
		return nil
	}
	return e
}

// readerWithBases returns a reader for u with the bases of its root entry
// set, for decoding entries reached from another unit.
func (d *Data) readerWithBases(u *Unit) (*entryReader, error) {
	r, err := d.newEntryReader(u)
	if err != nil {
		return nil, err
	}
	var scratch UnitInfo
	r.noRanges = true
	if _, err := r.readRoot(&scratch); err != nil {
		return nil, err
	}
	r.noRanges = false
	return r, nil
}
