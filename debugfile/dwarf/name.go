package dwarf

import "slices"

// maxRefChain bounds the abstract_origin/specification graph walked to name
// one entry; real producers need two or three hops.
const maxRefChain = 64

// resolved is what an entry's reference graph says about its name and
// declaration.
type resolved struct {
	name        []byte
	linkage     bool // name is a linkage name
	declFile    uint64
	declLine    uint32
	declUnit    *Unit // of the entry that gave declFile
	hasDeclFile bool
	hasDeclLine bool
}

// SubroutineName returns the name of subroutine i the way DWARF consumers
// such as llvm-symbolizer choose it: a DW_AT_linkage_name (or
// DW_AT_MIPS_linkage_name) found on the entry or on any entry reached
// through DW_AT_abstract_origin and DW_AT_specification, else the first
// DW_AT_name found that way. linkage reports which kind was found. The
// bytes are views into the string sections. Inlined copies of a function
// share one resolution, so naming all of a unit's subroutines costs about
// one graph walk per function.
func (ui *UnitInfo) SubroutineName(i int) (name []byte, linkage bool) {
	r := ui.resolve(i)
	return r.name, r.linkage
}

// SubroutineDecl returns the declaration line and line-table file index of
// subroutine i, found like SubroutineName. The file index refers to the
// line table of the unit that holds the declaring entry; unit reports that
// unit.
func (ui *UnitInfo) SubroutineDecl(i int) (file uint64, line uint32, unit *Unit, ok bool) {
	r := ui.resolve(i)
	if r.hasDeclFile {
		return r.declFile, r.declLine, r.declUnit, true
	}
	return 0, r.declLine, nil, r.hasDeclLine
}

// NameKey returns an identity of what subroutine i's names and
// declaration come from: subroutines with equal keys, such as the inlined
// copies of one function, have equal SubroutineName and SubroutineDecl.
func (ui *UnitInfo) NameKey(i int) uint64 {
	if s := &ui.Subroutines[i]; !s.named {
		return s.origin
	}
	return ui.Subroutines[i].Offset
}

// resolve returns what subroutine i's names resolve to. Callers ask for a
// subroutine's name and then its declaration, so the last answer is kept.
func (ui *UnitInfo) resolve(i int) resolved {
	if i == ui.lastResolved {
		return ui.last
	}
	s := &ui.Subroutines[i]
	var r resolved
	switch {
	case s.named:
		r = ui.walk(s.Offset)
	case s.origin != 0:
		var ok bool
		if r, ok = ui.byOrigin[s.origin]; !ok {
			r = ui.walk(s.origin)
			ui.byOrigin[s.origin] = r
		}
	}
	ui.lastResolved, ui.last = i, r
	return r
}

// walk visits the reference graph from the entry at off depth-first,
// abstract origin pushed before specification (so the specification is
// visited first), and records the first linkage name, name, declaration
// line and declaration file met: what separate searches for each would
// find, in one walk. Names are decoded only when chosen: a linkage name
// when met, plain names only when the walk found no linkage name.
func (ui *UnitInfo) walk(off uint64) resolved {
	var r resolved
	start := ui.refAt(off)
	if start < 0 {
		return r
	}
	stack := append(ui.walkStack[:0], start)
	seen := append(ui.walkSeen[:0], start)
	names := ui.walkNames[:0] // entries with a name, in visiting order
	for steps := 0; len(stack) > 0 && steps < maxRefChain; steps++ {
		k := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		e := ui.refs[k]
		if !r.linkage && e.linkage.form != 0 {
			r.name = e.r.strOf(e.linkage)
			r.linkage = r.name != nil
		}
		if !r.linkage && e.name.form != 0 {
			names = append(names, k)
		}
		if !r.hasDeclLine && e.hasDeclLine {
			r.declLine, r.hasDeclLine = e.declLine, true
		}
		if !r.hasDeclFile && e.hasDeclFile {
			r.declFile, r.declUnit, r.hasDeclFile = e.declFile, e.r.lines, true
		}
		if r.linkage && r.hasDeclLine && r.hasDeclFile {
			break
		}
		for _, o := range [2]uint64{e.origin, e.spec} {
			if o == 0 {
				continue
			}
			if t := ui.refAt(o); t >= 0 && !slices.Contains(seen, t) {
				seen = append(seen, t)
				stack = append(stack, t)
			}
		}
	}
	if !r.linkage {
		r.name = nil
		for _, k := range names {
			e := &ui.refs[k]
			if r.name = e.r.strOf(e.name); r.name != nil {
				break
			}
		}
	}
	ui.walkStack, ui.walkSeen, ui.walkNames = stack, seen, names
	return r
}

// refAt returns the index in ui.refs of the naming attributes of the entry
// at .debug_info offset off, decoding them on first use, or -1 when no
// entry lives there.
func (ui *UnitInfo) refAt(off uint64) int32 {
	if i, ok := ui.refIndex[off]; ok {
		return i
	}
	i := int32(-1)
	if e, ok := ui.readRefEntry(off); ok {
		i = int32(len(ui.refs))
		ui.refs = append(ui.refs, e)
	}
	ui.refIndex[off] = i
	return i
}

func (ui *UnitInfo) readRefEntry(off uint64) (refEntry, bool) {
	r := ui.r
	if off < r.u.first || off >= r.u.End {
		u := r.d.unitAt(off)
		if u == nil {
			return refEntry{}, false
		}
		if r = ui.others[u.index]; r == nil {
			var err error
			if r, err = ui.r.d.readerWithBases(u); err != nil {
				return refEntry{}, false
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
		return refEntry{}, false
	}
	e := refEntry{r: r}
	for i := range a.attrs {
		sp := &a.attrs[i]
		if !r.readNameAttr(&e, sp) {
			r.skipAttr(sp)
		}
	}
	if r.err != nil {
		return refEntry{}, false
	}
	return e, true
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
