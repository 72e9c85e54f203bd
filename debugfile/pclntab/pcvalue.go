package pclntab

import "iter"

// A pc-value table (runtime/symtab.go step) is a sequence of pairs of
// varints: a zig-zag value delta, then a PC delta in units of the quantum.
// The value starts at -1 and the PC at the function's entry. A zero value
// delta ends the table, except while the PC is still the entry.

// pcdec decodes one pc-value table. After next returns true, val holds for
// PCs in [start, pc).
type pcdec struct {
	p       []byte
	entry   uint64
	start   uint64
	pc      uint64
	val     int32
	quantum uint32
}

func (t *Table) newDec(f *funcRec, off uint32) pcdec {
	d := pcdec{entry: f.entry, start: f.entry, pc: f.entry, val: -1, quantum: t.quantum}
	if off != 0 && uint64(off) < uint64(len(t.pctab)) {
		d.p = t.pctab[off:]
	}
	return d
}

// uvarint32 decodes a varint of at most 5 bytes from p, as the runtime's
// readvarint does for valid tables. n is 0 when p ends first or the varint
// is longer.
func uvarint32(p []byte) (v uint32, n int) {
	var shift uint
	for i := 0; i < len(p) && i < 5; i++ {
		c := p[i]
		v |= uint32(c&0x7f) << shift
		if c&0x80 == 0 {
			return v, i + 1
		}
		shift += 7
	}
	return 0, 0
}

// next decodes the next pair. It returns false at the end of the table or
// of the bytes, after which the decoder stays ended.
func (d *pcdec) next() bool {
	p := d.p
	if len(p) == 0 {
		return false
	}
	uv, n := uint32(p[0]), 1
	if uv == 0 && d.pc != d.entry {
		d.p = nil
		return false
	}
	if uv&0x80 != 0 {
		if uv, n = uvarint32(p); n == 0 {
			d.p = nil
			return false
		}
	}
	p = p[n:]
	if len(p) == 0 {
		d.p = nil
		return false
	}
	pcd, n := uint32(p[0]), 1
	if pcd&0x80 != 0 {
		if pcd, n = uvarint32(p); n == 0 {
			d.p = nil
			return false
		}
	}
	d.p = p[n:]
	npc := d.pc + uint64(pcd*d.quantum)
	if npc < d.pc { // wrapped around: corrupt
		d.p = nil
		return false
	}
	d.val += int32(-(uv & 1) ^ (uv >> 1))
	d.start, d.pc = d.pc, npc
	return true
}

// pcvalue returns the value of table off of f at pc, or -1, as the runtime's
// pcvalue does. The work is linear in the table's length up to pc.
func (t *Table) pcvalue(f *funcRec, off uint32, pc uint64) int32 {
	if off == 0 {
		return -1
	}
	d := t.newDec(f, off)
	for d.next() {
		if pc < d.pc {
			return d.val
		}
	}
	return -1
}

// Row is a range of PCs with one source position and inline tree index.
type Row struct {
	Start, End uint64 // [Start, End)
	File       string // "?" with Line 0 when unknown, as the runtime reports
	Line       int
	InlIndex   int32 // index into the function's inline tree; -1 outside inlined code
}

// rowDec follows one table while Rows walks the function: val holds for
// [.., end), and an ended table holds -1 to the end of the function.
type rowDec struct {
	d   pcdec
	end uint64
	val int32
}

func (r *rowDec) advanceTo(pc, limit uint64) {
	for r.end <= pc {
		if r.d.next() && r.d.pc > r.d.start {
			r.end, r.val = r.d.pc, r.d.val
			continue
		}
		if len(r.d.p) == 0 { // ended
			r.end, r.val = limit, -1
		}
	}
}

// Rows iterates over the PC ranges of function i, merging its file, line and
// inline index tables: a new Row starts wherever any of them changes. The
// rows cover [Entry, End) in order; gaps in the tables read as unknown. It
// allocates nothing; the cost is linear in the tables' size.
func (t *Table) Rows(i int) iter.Seq[Row] {
	return func(yield func(Row) bool) {
		if i < 0 || i >= t.nfunc {
			return
		}
		t.lazy()
		f, ok := t.readFunc(i)
		if !ok {
			return
		}
		start, end := max(f.entry, t.entry(i)), t.entry(i+1)
		if start >= end {
			return
		}
		inlOff := uint32(0)
		if t.hasInlTree(&f) {
			inlOff = t.pcdata(&f, pcdataInlTreeIndex)
		}
		decs := [3]rowDec{
			{d: t.newDec(&f, f.pcfile), end: f.entry},
			{d: t.newDec(&f, f.pcln), end: f.entry},
			{d: t.newDec(&f, inlOff), end: f.entry},
		}
		for k := range decs {
			if decs[k].d.p == nil { // no table: unknown throughout
				decs[k].end, decs[k].val = end, -1
			}
		}
		var pending Row
		have := false
		lastNo, lastName := int32(-1), "?" // the file table lookup, cached
		for pc := start; pc < end; {
			next := end
			for k := range decs {
				decs[k].advanceTo(pc, end)
				next = min(next, decs[k].end)
			}
			r := Row{Start: pc, End: next, File: "?", InlIndex: max(decs[2].val, -1)}
			if file, line := decs[0].val, decs[1].val; file != -1 && line != -1 {
				if file != lastNo {
					lastNo, lastName = file, t.fileName(&f, file)
				}
				r.File, r.Line = lastName, int(line)
			}
			if have && r.File == pending.File && r.Line == pending.Line && r.InlIndex == pending.InlIndex {
				pending.End = next
			} else {
				if have && !yield(pending) {
					return
				}
				pending, have = r, true
			}
			pc = next
		}
		if have {
			yield(pending)
		}
	}
}
