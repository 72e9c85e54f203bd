package symbolize

import (
	"cmp"
	"slices"
	"unsafe"

	"github.com/backtrail/backtrail/debugfile/dwarf"
	"github.com/backtrail/backtrail/symcache"
)

// This file turns one DWARF unit into address pieces, each resolving to a
// chain of source locations, answering exactly as llvm-symbolizer does:
//   - the innermost subroutine entry of an address is found in a map built
//     from the unit's subroutine ranges in depth-first order, later (deeper)
//     ranges splitting earlier ones (LLVM's DWARFUnit::updateAddressDieMap);
//   - the line row is the last row at or below the address in the sequence
//     with the lowest end above it (DWARFDebugLine::LineTable::lookupAddress);
//   - the innermost frame takes its file and line from that row; each
//     enclosing frame takes them from the call site of the frame inside it.

// piece assigns the addresses [lo, hi) to location loc.
type piece struct {
	lo, hi uint64
	loc    uint32 // unit-local location index, or symcache.None
}

// unitTables are one unit's files, functions and locations with unit-local
// indices, deduplicated within the unit.
type unitTables struct {
	files  []string
	funcs  []symcache.Function // DeclFile is a unit-local file index
	locSet                     // File, Function and Parent are unit-local
	pieces []piece

	funcIdx map[symcache.Function]uint32
}

func (t *unitTables) reset() {
	t.files, t.funcs, t.pieces = t.files[:0], t.funcs[:0], t.pieces[:0]
	t.locSet.reset()
	if t.funcIdx == nil {
		t.funcIdx = make(map[symcache.Function]uint32)
	}
	clear(t.funcIdx)
}

func (t *unitTables) fn(f symcache.Function) uint32 {
	if i, ok := t.funcIdx[f]; ok {
		return i
	}
	i := uint32(len(t.funcs))
	t.funcs = append(t.funcs, f)
	t.funcIdx[f] = i
	return i
}

// dieEntry is an entry of the address → innermost subroutine map.
type dieEntry struct {
	lo, hi uint64
	sub    int32
}

// unitConverter holds the scratch state of one worker; its slices and maps
// are reused from unit to unit.
type unitConverter struct {
	d    *dwarf.Data
	ui   dwarf.UnitInfo
	lt   dwarf.LineTable
	out  *unitTables
	dies dieMap
	seqs []seq
	rows []piece // line pieces: loc holds the row index
	subs []piece // subroutine pieces: loc holds the subroutine index

	fileOf  []uint32 // line-table file index → local file, unset until needed
	funcOf  []uint32 // subroutine → local function
	callLoc []uint32 // subroutine → location of its call site
	lang    symcache.Language
}

type seq struct {
	first, end int // rows[first] .. rows[end] (the end_sequence row)
	lo, hi     uint64
}

const unset = symcache.None - 1

// convert fills out for unit u, keeping only addresses inside owned.
func (c *unitConverter) convert(u *dwarf.Unit, owned []dwarf.UnitRange, out *unitTables) error {
	c.out = out
	c.out.reset()
	if err := c.d.ReadUnit(u, &c.ui); err != nil {
		return err
	}
	if err := c.d.ReadLineTable(&c.ui, &c.lt); err != nil {
		return err
	}
	c.lang = languageOf(c.ui.Language)
	c.fileOf = fill(c.fileOf, c.lt.NumFiles(), unset)
	n := len(c.ui.Subroutines)
	c.funcOf = fill(c.funcOf, n, unset)
	c.callLoc = fill(c.callLoc, n, unset)
	c.buildDIEPieces()
	c.buildRowPieces()
	c.merge(owned)
	return nil
}

func fill(s []uint32, n int, v uint32) []uint32 {
	s = slices.Grow(s[:0], n)[:n]
	for i := range s {
		s[i] = v
	}
	return s
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
			if r.Lo == r.Hi {
				continue
			}
			if b, j, ok := m.floor(r.Lo); ok && r.Lo < m.at(b, j).hi {
				e := *m.at(b, j)
				if r.Lo > e.lo {
					m.at(b, j).hi = r.Lo
				}
				if r.Hi < e.hi {
					m.set(dieEntry{r.Hi, e.hi, e.sub})
				}
			}
			m.set(dieEntry{r.Lo, r.Hi, int32(i)})
		}
	}
	c.subs = c.subs[:0]
	m.all(func(e dieEntry, next uint64, hasNext bool) {
		hi := e.hi
		if hasNext {
			hi = min(hi, next)
		}
		if e.lo < hi {
			c.subs = append(c.subs, piece{e.lo, hi, uint32(e.sub)})
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
	c.rows = slices.Grow(c.rows[:0], len(rows))
	var prevHi uint64
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
				c.rows = append(c.rows, piece{a, b, uint32(j)})
			}
		}
	}
	// Sequences are disjoint after clipping but were visited by end
	// address; order the pieces by start for the merge.
	slices.SortFunc(c.rows, func(a, b piece) int { return cmp.Compare(a.lo, b.lo) })
}

// merge intersects the subroutine and row pieces with the owned ranges and
// emits the unit's pieces with their location chains.
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
					sub, y = int32(p.loc), min(y, p.hi)
				} else {
					y = min(y, p.lo)
				}
			}
			if ri < len(c.rows) {
				if p := c.rows[ri]; p.lo <= x {
					row, y = int(p.loc), min(y, p.hi)
				} else {
					y = min(y, p.lo)
				}
			}
			c.emit(x, y, c.chain(sub, row))
			x = y
		}
	}
}

func (c *unitConverter) emit(lo, hi uint64, loc uint32) {
	p := c.out.pieces
	if n := len(p); n > 0 && p[n-1].hi == lo && p[n-1].loc == loc {
		p[n-1].hi = hi
		return
	}
	c.out.pieces = append(p, piece{lo, hi, loc})
}

// chain returns the location for an address whose innermost subroutine is
// sub (-1: none) and whose line row is row (-1: none).
func (c *unitConverter) chain(sub int32, row int) uint32 {
	l := symcache.Location{File: symcache.None, Function: symcache.None, Parent: symcache.None}
	if row >= 0 {
		r := &c.lt.Rows[row]
		if f := c.file(uint64(r.File)); f != symcache.None {
			l.File, l.Line, l.Column, l.Discriminator = f, r.Line, r.Column, r.Discriminator
		}
	}
	if sub < 0 {
		if l.File == symcache.None {
			return symcache.None
		}
		return c.out.loc(l)
	}
	l.Function = c.function(sub)
	l.Parent = c.callSite(sub)
	return c.out.loc(l)
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

func (c *unitConverter) function(sub int32) uint32 {
	if v := c.funcOf[sub]; v != unset {
		return v
	}
	s := &c.ui.Subroutines[sub]
	name, _ := c.ui.SubroutineName(int(sub))
	if name == nil {
		c.funcOf[sub] = symcache.None
		return symcache.None
	}
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
	v := c.out.fn(f)
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
		v = uint32(len(c.out.files))
		c.out.files = append(c.out.files, p)
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
