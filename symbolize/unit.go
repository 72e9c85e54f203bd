package symbolize

import (
	"cmp"
	"slices"
	"unsafe"

	"github.com/backtrail/backtrail/debugfile/dwarf"
	"github.com/backtrail/backtrail/symcache"
)

// This file turns one DWARF unit into address pieces, each resolving to a
// location (file, function and the chain of call sites it was inlined
// through) and a line, answering exactly as llvm-symbolizer does:
//   - the innermost subroutine entry of an address is found in a map built
//     from the unit's subroutine ranges in depth-first order, later (deeper)
//     ranges splitting earlier ones (LLVM's DWARFUnit::updateAddressDieMap);
//   - the line row is the last row at or below the address in the sequence
//     with the lowest end above it (DWARFDebugLine::LineTable::lookupAddress);
//   - the innermost frame takes its file and line from that row; each
//     enclosing frame takes them from the call site of the frame inside it.

// piece assigns the addresses [lo, hi) to the code of location loc at a
// line, column and discriminator.
type piece struct {
	lo, hi              uint64
	loc                 uint32 // unit-local location index
	line, column, discr uint32
}

// span assigns the addresses [lo, hi) to item i: a subroutine or a line
// row.
type span struct {
	lo, hi uint64
	i      uint32
}

// unitConverter holds the scratch state of one worker; its slices and maps
// are reused from unit to unit.
type unitConverter struct {
	d      *dwarf.Data
	ui     dwarf.UnitInfo
	lt     dwarf.LineTable
	out    *unitTables
	dies   dieMap
	seqs   []seq
	rows   []span // line pieces: i is the row index
	subs   []span // subroutine pieces: i is the subroutine index
	pieces []piece

	fileOf    []uint32          // line-table file index → local file, unset until needed
	funcOf    []uint32          // subroutine → local function
	inlined   map[uint64]uint32 // dwarf.UnitInfo.NameKey → local function, for inlined subroutines
	callLoc   []uint32          // subroutine → location of its call site
	scopeFile []uint32          // subroutine → file of the location in scopeLoc
	scopeLoc  []uint32          // subroutine → the location of its code in that file
	lang      symcache.Language
}

type seq struct {
	first, end int // rows[first] .. rows[end] (the end_sequence row)
	lo, hi     uint64
}

const unset = symcache.None - 1

// read reads unit u's entries and line table, and computes which
// subroutine and which line row answer for each address; emitOwned then
// fills out.
func (c *unitConverter) read(u *dwarf.Unit, out *unitTables) error {
	c.out = out
	if err := c.d.ReadUnit(u, &c.ui); err != nil {
		return err
	}
	// Most locations are call sites, one per inlined subroutine: about
	// one per subroutine range, and up to a fifth more (lines of a
	// function at one inlining context). An estimate short by a few
	// percent would cost a copy of the whole table; one too long costs
	// only address space (see reserve).
	nr := len(c.ui.SubRanges)
	c.out.reset(nr + nr/4 + 64)
	if err := c.d.ReadLineTable(&c.ui, &c.lt); err != nil {
		return err
	}
	c.lang = languageOf(c.ui.Language)
	c.fileOf = fill(c.fileOf, c.lt.NumFiles(), unset)
	n := len(c.ui.Subroutines)
	c.funcOf = fill(c.funcOf, n, unset)
	c.callLoc = fill(c.callLoc, n, unset)
	c.scopeFile = fill(c.scopeFile, n, unset)
	c.scopeLoc = fill(c.scopeLoc, n, unset)
	if c.inlined == nil {
		c.inlined = make(map[uint64]uint32)
	}
	clear(c.inlined)
	c.buildDIEPieces()
	c.buildRowPieces()
	return nil
}

// emitOwned fills the tables given to read with the pieces of the unit's
// addresses inside owned, with the symbols of cover (sorted, inside owned)
// applied.
func (c *unitConverter) emitOwned(owned []dwarf.UnitRange, cover []symRange) {
	out := c.out
	// Pieces and ranges are about as many as rows or subroutine ranges,
	// a few percent more with the symbols and gaps (see read's estimate).
	estimate := max(len(c.rows), len(c.subs))
	estimate += estimate/8 + 64
	c.pieces = reserve(c.pieces, estimate)
	out.ranges = reserve(out.ranges, estimate)
	c.merge(owned)
	// Each owned range is a run of its own: other units may own the
	// addresses between.
	pi, si := 0, 0
	for _, o := range owned {
		pj := pi
		for pj < len(c.pieces) && c.pieces[pj].lo < o.Hi {
			pj++
		}
		sj := si
		for sj < len(cover) && cover[sj].lo < o.Hi {
			sj++
		}
		out.applySymbols(c.pieces[pi:pj], cover[si:sj])
		pi, si = pj, sj
	}
}

func fill(s []uint32, n int, v uint32) []uint32 {
	s = reserve(s, n)[:n]
	for i := range s {
		s[i] = v
	}
	return s
}

// reserve returns s emptied, with room for n elements. A short s is
// replaced, not grown: fresh memory is not touched until written, so an
// estimate that overshoots costs address space, not resident memory, and
// building a unit's tables needs no copies of growing.
func reserve[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, 0, n)
	}
	return s[:0]
}

// buildDIEPieces computes which subroutine entry is innermost for each
// address, reproducing LLVM's insertion rules so that overlapping or badly
// nested ranges resolve the same way.
func (c *unitConverter) buildDIEPieces() {
	m := &c.dies
	m.reset()
	for i := range c.ui.Subroutines {
		s := &c.ui.Subroutines[i]
		for _, r := range c.ui.SubRanges[s.Ranges[0]:s.Ranges[1]] {
			if r.Lo != r.Hi {
				m.add(dieEntry{r.Lo, r.Hi, int32(i)})
			}
		}
	}
	c.subs = reserve(c.subs, len(c.ui.SubRanges))
	m.all(func(e dieEntry, next uint64, hasNext bool) {
		hi := e.hi
		if hasNext {
			hi = min(hi, next)
		}
		if e.lo < hi {
			c.subs = append(c.subs, span{e.lo, hi, uint32(e.sub)})
		}
	})
}

// buildRowPieces computes which line row answers each address.
func (c *unitConverter) buildRowPieces() {
	rows := c.lt.Rows
	c.seqs = c.seqs[:0]
	first := 0
	for i := range rows {
		if !rows[i].EndSequence {
			continue
		}
		if first < i && rows[first].Addr < rows[i].Addr {
			c.seqs = append(c.seqs, seq{first: first, end: i, lo: rows[first].Addr, hi: rows[i].Addr})
		}
		first = i + 1
	}
	slices.SortStableFunc(c.seqs, func(a, b seq) int { return cmp.Compare(a.hi, b.hi) })
	c.rows = reserve(c.rows, len(rows))
	var prevHi uint64
	sorted := true
	for k, s := range c.seqs {
		lo := s.lo
		if k > 0 {
			lo = max(lo, prevHi)
		}
		prevHi = s.hi
		for j := s.first; j < s.end; j++ {
			a, b := rows[j].Addr, rows[j+1].Addr
			a, b = max(a, lo), min(b, s.hi)
			if a < b {
				if n := len(c.rows); n > 0 && c.rows[n-1].lo > a {
					sorted = false
				}
				c.rows = append(c.rows, span{a, b, uint32(j)})
			}
		}
	}
	// Sequences are disjoint after clipping but were visited by end
	// address, which is nearly always also their start's order.
	if !sorted {
		slices.SortFunc(c.rows, func(a, b span) int { return cmp.Compare(a.lo, b.lo) })
	}
}

// merge intersects the subroutine and row pieces with the owned ranges and
// collects the pieces of known addresses.
func (c *unitConverter) merge(owned []dwarf.UnitRange) {
	si, ri := 0, 0
	for _, o := range owned {
		x := o.Lo
		for x < o.Hi {
			for si < len(c.subs) && c.subs[si].hi <= x {
				si++
			}
			for ri < len(c.rows) && c.rows[ri].hi <= x {
				ri++
			}
			y := o.Hi
			sub, row := int32(-1), -1
			if si < len(c.subs) {
				if p := c.subs[si]; p.lo <= x {
					sub, y = int32(p.i), min(y, p.hi)
				} else {
					y = min(y, p.lo)
				}
			}
			if ri < len(c.rows) {
				if p := c.rows[ri]; p.lo <= x {
					row, y = int(p.i), min(y, p.hi)
				} else {
					y = min(y, p.lo)
				}
			}
			c.emit(x, y, sub, row)
			x = y
		}
	}
}

// emit adds the piece [lo, hi) for an address whose innermost subroutine is
// sub (-1: none) and whose line row is row (-1: none): the innermost frame
// takes its file, line, column and discriminator from the row.
func (c *unitConverter) emit(lo, hi uint64, sub int32, row int) {
	p := piece{lo: lo, hi: hi, loc: symcache.None}
	file := symcache.None
	if row >= 0 {
		r := &c.lt.Rows[row]
		if file = c.file(uint64(r.File)); file != symcache.None {
			p.line, p.column, p.discr = r.Line, r.Column, r.Discriminator
		}
	}
	switch {
	case sub >= 0:
		p.loc = c.scope(sub, file)
	case file != symcache.None:
		p.loc = c.out.loc(symcache.Location{File: file, Function: symcache.None, Parent: symcache.None})
	default:
		return // nothing known
	}
	if n := len(c.pieces); n > 0 {
		q := &c.pieces[n-1]
		if q.hi == lo && q.loc == p.loc && q.line == p.line && q.column == p.column && q.discr == p.discr {
			q.hi = hi
			return
		}
	}
	c.pieces = append(c.pieces, p)
}

// scope returns the location of subroutine sub's code in file: its
// function and the call site it was inlined into. Rows of one subroutine
// mostly share a file, so the last one is remembered.
func (c *unitConverter) scope(sub int32, file uint32) uint32 {
	if c.scopeFile[sub] == file {
		return c.scopeLoc[sub]
	}
	l := c.out.loc(symcache.Location{File: file, Function: c.function(sub), Parent: c.callSite(sub)})
	c.scopeFile[sub], c.scopeLoc[sub] = file, l
	return l
}

// callSite returns the location that subroutine sub was inlined into: the
// call site's file and line in the enclosing subroutine. Subprograms end
// the chain.
func (c *unitConverter) callSite(sub int32) uint32 {
	if v := c.callLoc[sub]; v != unset {
		return v
	}
	s := &c.ui.Subroutines[sub]
	v := symcache.None
	if s.Inlined && s.Parent >= 0 {
		l := symcache.Location{
			File:          c.file(s.CallFile),
			Line:          s.CallLine,
			Column:        s.CallColumn,
			Discriminator: s.Discriminator,
			Function:      c.function(s.Parent),
			Parent:        c.callSite(s.Parent),
		}
		v = c.out.loc(l)
	}
	c.callLoc[sub] = v
	return v
}

// function returns the local function of subroutine sub. Inlined copies
// of one function, the most numerous subroutines, share it by name key.
func (c *unitConverter) function(sub int32) uint32 {
	if v := c.funcOf[sub]; v != unset {
		return v
	}
	s := &c.ui.Subroutines[sub]
	key := c.ui.NameKey(int(sub))
	if s.Inlined {
		if v, ok := c.inlined[key]; ok {
			c.funcOf[sub] = v
			return v
		}
	}
	v := symcache.None
	if name, _ := c.ui.SubroutineName(int(sub)); name != nil {
		f := symcache.Function{Name: bytesString(name), Entry: symcache.NoAddr, DeclFile: symcache.None, Language: c.lang}
		if !s.Inlined && s.HasLowPC {
			f.Entry = s.LowPC
		}
		if file, line, unit, ok := c.ui.SubroutineDecl(int(sub)); ok {
			f.DeclLine = line
			if unit == c.ui.Unit {
				f.DeclFile = c.file(file)
			}
		}
		// Not looked up among the unit's functions: each subroutine's
		// is made once here, inlined copies share one by name key, and
		// the Builder merges equal functions of all units. Without the
		// lookup no byte changed in the symcaches of the C++ corpora, the
		// fixtures and Go's compiler; with it a build took 3 % longer.
		v = uint32(len(c.out.funcs))
		c.out.funcs = append(c.out.funcs, f)
	}
	if s.Inlined {
		c.inlined[key] = v
	}
	c.funcOf[sub] = v
	return v
}

func (c *unitConverter) file(i uint64) uint32 {
	if i >= uint64(len(c.fileOf)) {
		return symcache.None
	}
	if v := c.fileOf[i]; v != unset {
		return v
	}
	v := symcache.None
	if p, ok := c.lt.FilePath(i); ok {
		v = c.out.file(p)
	}
	c.fileOf[i] = v
	return v
}

// bytesString views b as a string without copying. The bytes are section
// data that outlives the build.
func bytesString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

func languageOf(l dwarf.Language) symcache.Language {
	switch l {
	case dwarf.DW_LANG_C89, dwarf.DW_LANG_C, dwarf.DW_LANG_C99, dwarf.DW_LANG_C11:
		return symcache.LangC
	case dwarf.DW_LANG_C_plus_plus, dwarf.DW_LANG_C_plus_plus_11, dwarf.DW_LANG_C_plus_plus_14:
		return symcache.LangCPlusPlus
	case dwarf.DW_LANG_ObjC:
		return symcache.LangObjC
	case dwarf.DW_LANG_ObjC_plus_plus:
		return symcache.LangObjCPlusPlus
	case dwarf.DW_LANG_Rust:
		return symcache.LangRust
	case dwarf.DW_LANG_Swift:
		return symcache.LangSwift
	case dwarf.DW_LANG_Go:
		return symcache.LangGo
	}
	return symcache.LangUnknown
}
