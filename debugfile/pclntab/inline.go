package pclntab

import (
	"bytes"
	"unsafe"
)

// maxInlineDepth bounds the frames one Lookup adds for a PC. Real chains are
// a few frames deep; the bound only matters for hostile tables.
const maxInlineDepth = 1024

// Sizes of an inline tree entry (runtime.inlinedCall).
const (
	// Go 1.12–1.19: parent int16, funcID uint8, pad, file int32, line int32,
	// func_ int32 (name offset), parentPc int32.
	inlNodeSizeOld = 20
	// Go 1.20+: funcID uint8, pad [3]byte, nameOff int32, parentPc int32,
	// startLine int32.
	inlNodeSize120 = 16
)

// Frame is one frame of a PC's inline chain, as runtime.Frame describes it.
type Frame struct {
	Function string // as runtime.Frame.Function: the inlined function for an inlined frame
	File     string // "?" with Line 0 when the table does not say
	Line     int
	// PC is the PC File and Line are for: the looked-up PC for the first
	// frame, the call site of the inner frame's inlined call for the others.
	PC        uint64
	Entry     uint64 // entry of the physical function, also for inlined frames
	StartLine int    // line of the function's func keyword, Go 1.20+ tables only
	Inlined   bool   // the call into the frame's function was inlined
	FuncID    FuncID // how tracebacks treat the frame's function
}

// InlineNode is an entry of a function's inline tree: one inlined call.
type InlineNode struct {
	Name      string // the inlined function, as the runtime prints it
	Sym       string // the inlined function, as stored
	FuncID    FuncID
	ParentPC  uint64 // a PC of the call site; the Row holding it gives the caller's position and inline index
	StartLine int    // Go 1.20+ tables only
}

type inlNode struct {
	funcID    uint8
	nameOff   uint32
	parentPC  int32
	startLine int32
}

// inlTree returns the inline tree of f from its first entry on, or false.
func (t *Table) inlTree(f *funcRec) ([]byte, bool) {
	if t.inlineErr != nil || f.npcdata <= pcdataInlTreeIndex {
		return nil, false
	}
	v, ok := t.funcdataValue(f, funcdataInlTree)
	if !ok {
		return nil, false
	}
	var p []byte
	if t.ver >= Version118 {
		if v < uint64(len(t.gofunc)) {
			p = t.gofunc[v:]
		}
	} else {
		p = regionAt(t.mem, v)
	}
	return p, len(p) > 0
}

func (t *Table) hasInlTree(f *funcRec) bool {
	_, ok := t.inlTree(f)
	return ok
}

// node decodes entry idx of an inline tree.
func (t *Table) node(tree []byte, idx int32) (inlNode, bool) {
	var n inlNode
	if idx < 0 {
		return n, false
	}
	size := uint64(inlNodeSizeOld)
	if t.ver >= Version120 {
		size = inlNodeSize120
	}
	off := uint64(idx) * size
	if off > uint64(len(tree)) || uint64(len(tree))-off < size {
		return n, false
	}
	p := tree[off : off+size]
	o := t.order()
	if t.ver >= Version120 {
		n.funcID = p[0]
		n.nameOff = o.Uint32(p[4:])
		n.parentPC = int32(o.Uint32(p[8:]))
		n.startLine = int32(o.Uint32(p[12:]))
	} else {
		n.funcID = p[2]
		n.nameOff = o.Uint32(p[12:])
		n.parentPC = int32(o.Uint32(p[16:]))
	}
	return n, true
}

// InlineNode returns entry index of function i's inline tree, as named by
// Row.InlIndex. ok is false when the function has no inline tree, the tree
// cannot be read (see InlineErr) or index is out of range.
func (t *Table) InlineNode(i int, index int32) (InlineNode, bool) {
	if i < 0 || i >= t.nfunc {
		return InlineNode{}, false
	}
	t.lazy()
	f, ok := t.readFunc(i)
	if !ok {
		return InlineNode{}, false
	}
	tree, ok := t.inlTree(&f)
	if !ok {
		return InlineNode{}, false
	}
	n, ok := t.node(tree, index)
	if !ok {
		return InlineNode{}, false
	}
	return InlineNode{
		Name:      t.printName(n.nameOff),
		Sym:       t.symName(n.nameOff),
		FuncID:    t.funcIDs[n.funcID],
		ParentPC:  f.entry + uint64(int64(n.parentPC)),
		StartLine: int(n.startLine),
	}, true
}

// frame describes pc of f whose inline index is idx (-1: not inlined).
func (t *Table) frame(f *funcRec, tree []byte, idx int32, pc uint64) Frame {
	fr := Frame{PC: pc, Entry: f.entry}
	fr.File, fr.Line = t.fileLine(f, pc)
	if n, ok := t.node(tree, idx); ok {
		fr.Function = t.printName(n.nameOff)
		fr.StartLine = int(n.startLine)
		fr.Inlined = true
		fr.FuncID = t.funcIDs[n.funcID]
		return fr
	}
	fr.Function = t.printName(f.nameOff)
	fr.StartLine = int(f.startLine)
	fr.FuncID = t.funcIDs[f.funcID]
	return fr
}

// Lookup appends to frames the frames for pc, innermost first, and reports
// whether pc is in a function. The first frame is the code at pc; each inlined
// call adds the frame of its caller, up to the physical function.
//
// The frames are those runtime.CallersFrames gives for the PCs
// runtime.Callers records for a stack whose top is pc, except that the first
// frame is always reported. Like runtime.Callers, Lookup leaves out an outer
// frame with FuncIDWrapper unless its callee has FuncIDPanic; whether to hide
// a first frame that is a wrapper depends on the physical frame below it,
// which only the caller knows.
//
// pc is the exact PC to describe: for a return address, pass the address
// minus one, as CallersFrames does. Lookup allocates nothing when frames has
// room; its cost is a binary search plus decoding the function's file, line
// and inline tables up to pc, once per frame.
func (t *Table) Lookup(pc uint64, frames []Frame) ([]Frame, bool) {
	i, ok := t.FindFunc(pc)
	if !ok {
		return frames, false
	}
	t.lazy()
	f, ok := t.readFunc(i)
	if !ok {
		return frames, false
	}
	idx := int32(-1)
	var inlOff uint32
	tree, hasTree := t.inlTree(&f)
	if hasTree {
		inlOff = t.pcdata(&f, pcdataInlTreeIndex)
		idx = max(t.pcvalue(&f, inlOff, pc), -1)
	}
	fr := t.frame(&f, tree, idx, pc)
	frames = append(frames, fr)
	if !fr.Inlined {
		return frames, true
	}
	callee := fr.FuncID
	for depth := 0; idx >= 0 && depth < maxInlineDepth; depth++ {
		n, ok := t.node(tree, idx)
		if !ok {
			break
		}
		ppc := f.entry + uint64(int64(n.parentPC))
		pidx := max(t.pcvalue(&f, inlOff, ppc), -1)
		if pidx >= idx {
			// A parent is added to the tree before its children; anything
			// else is corrupt, and this ends a cycle.
			pidx = -1
		}
		fr := t.frame(&f, tree, pidx, ppc)
		if fr.FuncID != FuncIDWrapper || callee == FuncIDPanic {
			frames = append(frames, fr)
		}
		callee = fr.FuncID
		idx = pidx
	}
	return frames, true
}

// lazy computes, once, what needs a pass over all functions or names.
func (t *Table) lazy() {
	t.lazyOnce.Do(func() {
		t.mapFuncIDs()
		t.printNames()
	})
}

// mapFuncIDs fills t.funcIDs. FuncIDWrapper's number is taken from
// runtime.deferreturn, which carries it since Go 1.17, else it is the
// largest ID in use (it is the last in every release's list).
func (t *Table) mapFuncIDs() {
	var panics [256]bool
	var maxID, wrapper uint8
	found := false
	for i := range t.nfunc {
		r, ok := t.readFunc(i)
		if !ok || r.funcID == 0 {
			continue
		}
		maxID = max(maxID, r.funcID)
		switch t.symName(r.nameOff) {
		case "runtime.deferreturn":
			wrapper, found = r.funcID, true
		case "runtime.gopanic", "runtime.sigpanic", "runtime.panicwrap":
			panics[r.funcID] = true
		}
	}
	if !found {
		wrapper = maxID
	}
	for id := 1; id < 256; id++ {
		switch {
		case id == int(wrapper):
			t.funcIDs[id] = FuncIDWrapper
		case panics[id]:
			t.funcIDs[id] = FuncIDPanic
		default:
			t.funcIDs[id] = FuncIDRuntime
		}
	}
}

// printNames maps the offsets of generic instantiations' names to their
// printed form, "pkg.F[...]" (runtime funcNamePiecesForPrint). Generics
// arrived with Go 1.18; before, the name table is shared with other data.
func (t *Table) printNames() {
	if t.ver < Version118 {
		return
	}
	tab := t.funcnametab
	for off := 0; off < len(tab); {
		j := bytes.IndexByte(tab[off:], '[')
		if j < 0 {
			break
		}
		j += off
		start := off + bytes.LastIndexByte(tab[off:j], 0) + 1
		end := bytes.IndexByte(tab[j:], 0)
		if end < 0 {
			end = len(tab)
		} else {
			end += j
		}
		name := tab[start:end]
		if k := bytes.LastIndexByte(name, ']'); k > j-start {
			if t.printed == nil {
				t.printed = make(map[uint32]string)
			}
			p := string(name[:j-start]) + "[...]" + string(name[k+1:])
			if p != unsafe.String(unsafe.SliceData(name), len(name)) {
				t.printed[uint32(start)] = p
			}
		}
		off = end + 1
	}
}
