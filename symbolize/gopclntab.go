package symbolize

import (
	"cmp"
	"slices"

	"github.com/backtrail/backtrail/debugfile/pclntab"
	"github.com/backtrail/backtrail/symcache"
)

// buildPclntab converts a Go pc-line table, inline tree included, into t,
// with the symbols of cover applied: the innermost frame of a pc takes its
// file and line from the pc's row and its function from the row's inline
// node; each inlined call's location is the row at the node's parent pc in
// the enclosing frame.
func buildPclntab(tab *pclntab.Table, cover []symRange, t *unitTables) {
	t.reset(0)
	var pieces []piece
	var rows []pclntab.Row
	var callLoc map[int32]uint32
	file := func(name string) uint32 {
		if name == "" {
			return symcache.None
		}
		return t.file(name)
	}
	for i, fn := range tab.Funcs() {
		rows = rows[:0]
		for r := range tab.Rows(i) {
			rows = append(rows, r)
		}
		outer := t.fn(symcache.Function{Name: fn.Sym, Entry: fn.Entry, DeclFile: symcache.None, DeclLine: uint32(max(fn.StartLine, 0)), Language: symcache.LangGo})
		callLoc = make(map[int32]uint32)
		rowAt := func(pc uint64) *pclntab.Row {
			k, ok := slices.BinarySearchFunc(rows, pc, func(r pclntab.Row, pc uint64) int {
				switch {
				case r.End <= pc:
					return -1
				case r.Start > pc:
					return 1
				}
				return 0
			})
			if !ok {
				return nil
			}
			return &rows[k]
		}
		// funcOf is the function whose code a row with inline index inl is.
		funcOf := func(inl int32) uint32 {
			if inl < 0 {
				return outer
			}
			n, ok := tab.InlineNode(i, inl)
			if !ok {
				return outer
			}
			return t.fn(symcache.Function{Name: n.Sym, Entry: symcache.NoAddr, DeclFile: symcache.None, DeclLine: uint32(max(n.StartLine, 0)), Language: symcache.LangGo})
		}
		var parentOf func(inl int32, depth int) uint32
		parentOf = func(inl int32, depth int) uint32 {
			if inl < 0 || depth > 64 {
				return symcache.None
			}
			if v, ok := callLoc[inl]; ok {
				return v
			}
			n, ok := tab.InlineNode(i, inl)
			v := symcache.None
			if ok {
				if r := rowAt(n.ParentPC); r != nil && r.InlIndex != inl {
					v = t.loc(symcache.Location{File: file(r.File), Line: uint32(max(r.Line, 0)),
						Function: funcOf(r.InlIndex), Parent: parentOf(r.InlIndex, depth+1)})
				} else {
					v = t.loc(symcache.Location{File: symcache.None, Function: outer, Parent: symcache.None})
				}
			}
			callLoc[inl] = v
			return v
		}
		for _, r := range rows {
			if r.Line == 0 && (r.File == "" || r.File == "?") {
				// Alignment padding after the function's code: the
				// table covers it, but no code runs there and DWARF
				// and symbol tables leave it unnamed.
				continue
			}
			loc := t.loc(symcache.Location{File: file(r.File), Function: funcOf(r.InlIndex), Parent: parentOf(r.InlIndex, 0)})
			line := uint32(max(r.Line, 0))
			if n := len(pieces); n > 0 && pieces[n-1].hi == r.Start && pieces[n-1].loc == loc && pieces[n-1].line == line {
				pieces[n-1].hi = r.End
				continue
			}
			pieces = append(pieces, piece{lo: r.Start, hi: r.End, loc: loc, line: line})
		}
	}
	slices.SortFunc(pieces, func(a, b piece) int { return cmp.Compare(a.lo, b.lo) })
	t.applySymbols(pieces, cover)
}
