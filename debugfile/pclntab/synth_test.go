package pclntab_test

import (
	"debug/gosym"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/backtrail/backtrail/debugfile/pclntab"
)

// The local toolchain writes only the Go 1.20 layout. The older layouts
// are tested on tables written here, following the linkers of Go 1.12–1.15,
// 1.16–1.17 and 1.18–1.19 (cmd/link/internal/ld/pcln.go) and the runtime
// structures of those releases, in both byte orders and pointer sizes. The
// expected answers come from a model of the specification below, not from
// decoding the bytes, and debug/gosym checks the writer independently.

// pv says that a table has value val up to offset end (exclusive) from the
// function's entry.
type pv struct {
	end uint32
	val int32
}

type synthInl struct {
	funcID    uint8
	name      string
	file      int32 // call site, old layout only
	line      int32
	parentPC  uint32
	startLine int32 // Go 1.20 layout only
	parent    int16 // old layout only
}

type synthFunc struct {
	name      string
	size      uint32
	startLine int32
	funcID    uint8
	npcdata   int // without an inline tree; with one, 3
	file      []pv
	line      []pv
	inl       []pv
	tree      []synthInl
}

type synth struct {
	ver     pclntab.Version
	big     bool
	ptr     int
	quantum uint32
	addr    uint64 // of the table
	text    uint64 // of the first function
	rodata  uint64 // of the inline trees: go:func.* from Go 1.18
	files   []string
	funcs   []synthFunc
}

// Raw function IDs in the synthetic tables, as numbered by Go 1.20.
const (
	rawGopanic = 9
	rawWrapper = 21
)

// synthFuncs is the specification shared by every layout. Offsets are
// multiples of 4 so any quantum divides them.
func synthFuncs(ver pclntab.Version) []synthFunc {
	gname := "main.G[go.shape.int]"
	if ver < pclntab.Version118 {
		gname = "main.G"
	}
	return []synthFunc{
		{name: "main.a", size: 0x40, startLine: 5, npcdata: 0,
			file: []pv{{0x40, 0}},
			line: []pv{{0x10, 10}, {0x20, 11}, {0x3c, 12}}, // the last 4 bytes have no line
		},
		{name: "main.b", size: 0x80, startLine: 18, npcdata: 3,
			file: []pv{{0x20, 0}, {0x40, 1}, {0x80, 0}},
			line: []pv{{0x08, 20}, {0x10, 21}, {0x20, 31}, {0x30, 41}, {0x40, 32}, {0x60, 22}, {0x64, 61}, {0x68, 71}, {0x70, 51}, {0x80, 23}},
			inl:  []pv{{0x10, -1}, {0x20, 0}, {0x30, 1}, {0x40, 0}, {0x60, -1}, {0x64, 3}, {0x68, 4}, {0x70, 2}, {0x80, -1}},
			// Tree: b → inl1 → G; b → (*T).M (a wrapper) → inner or gopanic.
			// Lookup hides the wrapper above inner, not above gopanic.
			tree: []synthInl{
				{name: "main.inl1", file: 0, line: 20, parentPC: 0x08, startLine: 30, parent: -1},
				{name: gname, file: 1, line: 32, parentPC: 0x38, startLine: 40, parent: 0},
				{name: "main.(*T).M", funcID: rawWrapper, file: 0, line: 22, parentPC: 0x50, startLine: 50, parent: -1},
				{name: "main.inner", file: 0, line: 51, parentPC: 0x6c, startLine: 60, parent: 2},
				{name: "runtime.gopanic", funcID: rawGopanic, file: 0, line: 51, parentPC: 0x6c, startLine: 700, parent: 2},
			},
		},
		{name: "runtime.gopanic", size: 0x20, startLine: 700, funcID: rawGopanic, npcdata: 2,
			file: []pv{{0x20, 2}},
			line: []pv{{0x20, 701}},
		},
		{name: "runtime.deferreturn", size: 0x24, startLine: 800, funcID: rawWrapper, npcdata: 1,
			file: []pv{{0x24, 2}},
			line: []pv{{0x24, 801}},
		},
		{name: gname, size: 0x10, startLine: 40, npcdata: 3,
			file: []pv{{0x10, 1}},
			line: []pv{{0x10, 41}},
			inl:  []pv{{0x10, -1}},
		},
	}
}

// wbuf is a growing little- or big-endian buffer.
type wbuf struct {
	b []byte
	o interface {
		binary.ByteOrder
		binary.AppendByteOrder
	}
	ptr int
}

func (w *wbuf) u8(v uint8)   { w.b = append(w.b, v) }
func (w *wbuf) u32(v uint32) { w.b = w.o.AppendUint32(w.b, v) }
func (w *wbuf) uptr(v uint64) {
	if w.ptr == 4 {
		w.u32(uint32(v))
	} else {
		w.b = w.o.AppendUint64(w.b, v)
	}
}
func (w *wbuf) align(n int) {
	for len(w.b)%n != 0 {
		w.b = append(w.b, 0)
	}
}
func (w *wbuf) putU32(off int, v uint32) { w.o.PutUint32(w.b[off:], v) }
func (w *wbuf) putPtr(off int, v uint64) {
	if w.ptr == 4 {
		w.o.PutUint32(w.b[off:], uint32(v))
	} else {
		w.o.PutUint64(w.b[off:], v)
	}
}

// encodePV writes a pc-value table: zig-zag value deltas and PC deltas in
// quanta, ended by a zero byte.
func encodePV(pvs []pv, quantum uint32) []byte {
	var b []byte
	val, pc := int32(-1), uint32(0)
	for _, p := range pvs {
		d := p.val - val
		b = binary.AppendUvarint(b, uint64(uint32(d<<1^d>>31)))
		b = binary.AppendUvarint(b, uint64((p.end-pc)/quantum))
		val, pc = p.val, p.end
	}
	return append(b, 0)
}

func (s *synth) order() interface {
	binary.ByteOrder
	binary.AppendByteOrder
} {
	if s.big {
		return binary.BigEndian
	}
	return binary.LittleEndian
}

// entries returns each function's address and the end of the last.
func (s *synth) entries() []uint64 {
	e := []uint64{s.text}
	for _, f := range s.funcs {
		e = append(e, e[len(e)-1]+uint64(f.size)+0x10) // 16 bytes of padding between functions
	}
	e[len(e)-1] -= 0x10
	return e
}

// build writes the table and the region holding the inline trees.
func (s *synth) build() (pcln []byte, mem []pclntab.Region) {
	o := s.order()
	entries := s.entries()
	fileVal := func(v int32) int32 { // pcfile values are 1-based before Go 1.16
		if s.ver == pclntab.Version12 && v >= 0 {
			return v + 1
		}
		return v
	}

	// Strings and pc tables go in blobs whose offsets are fixed up below.
	var names, pctab []byte
	nameOff := map[string]uint32{}
	addName := func(n string) uint32 {
		if off, ok := nameOff[n]; ok {
			return off
		}
		nameOff[n] = uint32(len(names))
		names = append(append(names, n...), 0)
		return nameOff[n]
	}
	pctab = []byte{0} // offset 0 means "no table"
	addPV := func(pvs []pv, conv func(int32) int32) uint32 {
		if pvs == nil {
			return 0
		}
		c := slices.Clone(pvs)
		for i := range c {
			c[i].val = conv(c[i].val)
		}
		off := uint32(len(pctab))
		pctab = append(pctab, encodePV(c, s.quantum)...)
		return off
	}
	id := func(v int32) int32 { return v }
	type fref struct{ name, file, line, inl uint32 }
	refs := make([]fref, len(s.funcs))
	for i, f := range s.funcs {
		refs[i] = fref{addName(f.name), addPV(f.file, fileVal), addPV(f.line, id), addPV(f.inl, id)}
		for _, n := range f.tree {
			addName(n.name)
		}
	}
	var filestr []byte
	fileOffs := make([]uint32, len(s.files))
	for i, f := range s.files {
		fileOffs[i] = uint32(len(filestr))
		filestr = append(append(filestr, f...), 0)
	}

	// The inline trees, in their own region.
	treeOff := make([]uint64, len(s.funcs))
	rod := &wbuf{o: o, ptr: s.ptr}
	rod.u32(0xdeadbeef) // so no tree is at offset 0
	type patch struct {
		off  int
		name string
	}
	var namePatches []patch
	for i, f := range s.funcs {
		if f.tree == nil {
			continue
		}
		rod.align(4)
		treeOff[i] = uint64(len(rod.b))
		for _, n := range f.tree {
			if s.ver >= pclntab.Version120 {
				rod.u8(n.funcID)
				rod.b = append(rod.b, 0, 0, 0)
				rod.u32(nameOff[n.name])
				rod.u32(n.parentPC)
				rod.u32(uint32(n.startLine))
				continue
			}
			rod.b = o.AppendUint16(rod.b, uint16(n.parent))
			rod.u8(n.funcID)
			rod.u8(0)
			rod.u32(uint32(fileVal(n.file)))
			rod.u32(uint32(n.line))
			namePatches = append(namePatches, patch{len(rod.b), n.name})
			rod.u32(nameOff[n.name])
			rod.u32(n.parentPC)
		}
	}

	w := &wbuf{o: o, ptr: s.ptr}
	w.u32(s.ver.Magic())
	w.b = append(w.b, 0, 0, byte(s.quantum), byte(s.ptr))
	w.uptr(uint64(len(s.funcs)))
	var hdrOffs int
	if s.ver >= pclntab.Version116 {
		w.uptr(uint64(len(s.files)))
		if s.ver == pclntab.Version118 {
			w.uptr(s.text)
		} else if s.ver == pclntab.Version120 {
			w.uptr(0) // as Go 1.26 writes it: runtime.text comes from the moduledata
		}
		hdrOffs = len(w.b)
		for range 5 {
			w.uptr(0)
		}
	}
	var pclnStart, nameStart, pctabStart int
	if s.ver >= pclntab.Version116 {
		nameStart = len(w.b)
		w.putPtr(hdrOffs, uint64(nameStart))
		w.b = append(w.b, names...)
		w.putPtr(hdrOffs+s.ptr, uint64(len(w.b)))
		for _, off := range fileOffs { // one compilation unit
			w.u32(off)
		}
		w.putPtr(hdrOffs+2*s.ptr, uint64(len(w.b)))
		w.b = append(w.b, filestr...)
		pctabStart = len(w.b)
		w.putPtr(hdrOffs+3*s.ptr, uint64(pctabStart))
		w.b = append(w.b, pctab...)
		w.align(s.ptr)
		pclnStart = len(w.b)
		w.putPtr(hdrOffs+4*s.ptr, uint64(pclnStart))
	}

	// The function table, then the _func records.
	ftab := len(w.b)
	fsz := s.ptr
	if s.ver >= pclntab.Version118 {
		fsz = 4
	}
	for range s.funcs {
		w.b = append(w.b, make([]byte, 2*fsz)...)
	}
	w.b = append(w.b, make([]byte, fsz)...)
	putF := func(k int, v uint64) {
		if fsz == 4 {
			w.putU32(ftab+k*4, uint32(v))
		} else {
			w.putPtr(ftab+k*fsz, v)
		}
	}
	rel := func(e uint64) uint64 {
		if s.ver >= pclntab.Version118 {
			return e - s.text
		}
		return e
	}
	putF(2*len(s.funcs), rel(entries[len(s.funcs)]))
	var fileTabPatch int
	if s.ver == pclntab.Version12 {
		fileTabPatch = len(w.b)
		w.u32(0)
	}
	var tabPatches []struct {
		off int
		v   uint32
	}
	var namePatch12 []struct {
		off int
		v   uint32
	}
	for i, f := range s.funcs {
		w.align(s.ptr)
		start := len(w.b)
		base := pclnStart
		putF(2*i, rel(entries[i]))
		putF(2*i+1, uint64(start-base))
		if s.ver >= pclntab.Version118 {
			w.u32(uint32(entries[i] - s.text))
		} else {
			w.uptr(entries[i])
		}
		if s.ver == pclntab.Version12 {
			namePatch12 = append(namePatch12, struct {
				off int
				v   uint32
			}{len(w.b), refs[i].name})
		}
		w.u32(refs[i].name)
		w.u32(0) // args
		w.u32(0) // deferreturn
		w.u32(0) // pcsp
		pcoff := func(v uint32) {
			if s.ver == pclntab.Version12 && v != 0 {
				tabPatches = append(tabPatches, struct {
					off int
					v   uint32
				}{len(w.b), v})
			}
			w.u32(v)
		}
		pcoff(refs[i].file)
		pcoff(refs[i].line)
		npcdata := f.npcdata
		if f.tree != nil {
			npcdata = 3
		}
		w.u32(uint32(npcdata))
		if s.ver >= pclntab.Version116 {
			w.u32(0) // cuOffset
		}
		if s.ver >= pclntab.Version120 {
			w.u32(uint32(f.startLine))
		}
		nfuncdata := 0
		if f.tree != nil {
			nfuncdata = 4
		}
		w.u8(f.funcID)
		w.u8(0)
		w.u8(0)
		w.u8(uint8(nfuncdata))
		for k := range npcdata {
			if k == 2 && f.tree != nil {
				pcoff(refs[i].inl)
			} else {
				w.u32(0)
			}
		}
		if nfuncdata == 0 {
			continue
		}
		if s.ver >= pclntab.Version118 {
			for range 3 {
				w.u32(0xffffffff)
			}
			w.u32(uint32(treeOff[i]))
			continue
		}
		if s.ptr == 8 && (len(w.b)-start)%8 != 0 {
			w.u32(0)
		}
		for range 3 {
			w.uptr(0)
		}
		w.uptr(s.rodata + treeOff[i])
	}

	if s.ver == pclntab.Version12 {
		// Names, pc tables and the file table follow the functions; their
		// offsets are from the start of the table.
		nameStart = len(w.b)
		w.b = append(w.b, names...)
		pctabStart = len(w.b)
		w.b = append(w.b, pctab...)
		for _, p := range namePatch12 {
			w.putU32(p.off, p.v+uint32(nameStart))
		}
		for _, p := range tabPatches {
			w.putU32(p.off, p.v+uint32(pctabStart))
		}
		strStart := len(w.b)
		w.b = append(w.b, filestr...)
		w.align(4)
		w.putU32(fileTabPatch, uint32(len(w.b)))
		w.u32(uint32(len(s.files) + 1))
		for _, off := range fileOffs {
			w.u32(uint32(strStart) + off)
		}
		for _, p := range namePatches {
			rod.putU32(p.off, nameOff[p.name]+uint32(nameStart))
		}
	}
	s.writeModuledata(rod, entries, nameStart, pclnStart)
	return w.b, []pclntab.Region{{Addr: s.rodata, Data: rod.b}}
}

// writeModuledata appends a decoy and then the moduledata to the region of
// the inline trees, with the fields FindModuledata checks and reads at the
// word indexes of each layout (runtime/symtab.go moduledata).
func (s *synth) writeModuledata(rod *wbuf, entries []uint64, nameStart, pclnStart int) {
	var ftab, minpc, text, types, rodata, gofunc int
	switch s.ver {
	case pclntab.Version12:
		ftab, minpc, text, types, rodata, gofunc = 3, 10, 12, 25, -1, -1
	case pclntab.Version116:
		ftab, minpc, text, types, rodata, gofunc = 16, 20, 22, 35, -1, -1
	case pclntab.Version118:
		ftab, minpc, text, types, rodata, gofunc = 16, 20, 22, 35, 37, 38
	case pclntab.Version120:
		ftab, minpc, text, types, rodata, gofunc = 16, 20, 22, 37, 39, 40
	}
	md := make([]uint64, 48)
	md[0] = s.addr
	if s.ver == pclntab.Version12 {
		md[ftab] = s.addr + 8 + uint64(s.ptr)
	} else {
		md[1] = s.addr + uint64(nameStart)
		md[ftab] = s.addr + uint64(pclnStart)
	}
	md[ftab+1] = uint64(len(s.funcs) + 1)
	md[minpc], md[minpc+1] = entries[0], entries[len(entries)-1]
	md[text], md[text+1] = s.text, entries[len(entries)-1]
	md[types], md[types+1] = s.rodata, s.rodata+0x100
	if gofunc >= 0 {
		md[rodata], md[gofunc] = s.rodata, s.rodata
	}
	rod.align(8)
	rod.uptr(s.addr) // a decoy: points to the table, but nothing else agrees
	rod.uptr(0)
	for _, v := range md {
		rod.uptr(v)
	}
}

// Model: what the specification says, computed without the encoding.

func valueAt(pvs []pv, off uint32) int32 {
	for _, p := range pvs {
		if off < p.end {
			return p.val
		}
	}
	return -1
}

func (s *synth) printName(n string) string {
	if n == "main.G[go.shape.int]" {
		return "main.G[...]"
	}
	return n
}

func (s *synth) funcID(raw uint8) pclntab.FuncID {
	switch raw {
	case 0:
		return pclntab.FuncIDNormal
	case rawGopanic:
		return pclntab.FuncIDPanic
	case rawWrapper:
		return pclntab.FuncIDWrapper
	}
	return pclntab.FuncIDRuntime
}

func (s *synth) wantFrame(fi int, off uint32, inl bool) pclntab.Frame {
	f := s.funcs[fi]
	e := s.entries()[fi]
	fr := pclntab.Frame{PC: e + uint64(off), Entry: e, File: "?"}
	file, line := valueAt(f.file, off), valueAt(f.line, off)
	if file >= 0 && line >= 0 {
		fr.File, fr.Line = s.files[file], int(line)
	}
	idx := int32(-1)
	if inl && f.tree != nil {
		idx = valueAt(f.inl, off)
	}
	if idx >= 0 {
		n := f.tree[idx]
		fr.Function, fr.Inlined, fr.FuncID = s.printName(n.name), true, s.funcID(n.funcID)
		if s.ver >= pclntab.Version120 {
			fr.StartLine = int(n.startLine)
		}
	} else {
		fr.Function, fr.FuncID = s.printName(f.name), s.funcID(f.funcID)
		if s.ver >= pclntab.Version120 {
			fr.StartLine = int(f.startLine)
		}
	}
	return fr
}

// wantChain is the chain for off in function fi, wrappers hidden as
// runtime.Callers does.
func (s *synth) wantChain(fi int, off uint32, inl bool) []pclntab.Frame {
	f := s.funcs[fi]
	chain := []pclntab.Frame{s.wantFrame(fi, off, inl)}
	callee := chain[0].FuncID
	idx := int32(-1)
	if inl && f.tree != nil {
		idx = valueAt(f.inl, off)
	}
	for idx >= 0 {
		off = f.tree[idx].parentPC
		fr := s.wantFrame(fi, off, inl)
		if fr.FuncID != pclntab.FuncIDWrapper || callee == pclntab.FuncIDPanic {
			chain = append(chain, fr)
		}
		callee = fr.FuncID
		idx = valueAt(f.inl, off)
	}
	return chain
}

func (s *synth) wantRows(fi int, inl bool) []pclntab.Row {
	f := s.funcs[fi]
	e := s.entries()[fi]
	var rows []pclntab.Row
	for off := uint32(0); off < f.size+0x10 && e+uint64(off) < s.entries()[len(s.funcs)]; off++ {
		if fi+1 < len(s.funcs) && e+uint64(off) >= s.entries()[fi+1] {
			break
		}
		fr := s.wantFrame(fi, off, false)
		idx := int32(-1)
		if inl && f.tree != nil {
			idx = valueAt(f.inl, off)
		}
		pc := e + uint64(off)
		if n := len(rows); n > 0 && rows[n-1].File == fr.File && rows[n-1].Line == fr.Line && rows[n-1].InlIndex == idx {
			rows[n-1].End = pc + 1
			continue
		}
		rows = append(rows, pclntab.Row{Start: pc, End: pc + 1, File: fr.File, Line: fr.Line, InlIndex: idx})
	}
	return rows
}

func synthTables() []*synth {
	var ss []*synth
	for _, ver := range []pclntab.Version{pclntab.Version12, pclntab.Version116, pclntab.Version118, pclntab.Version120} {
		for _, big := range []bool{false, true} {
			for _, ptr := range []int{4, 8} {
				q := uint32(1)
				if big {
					q = 4
				}
				ss = append(ss, &synth{
					ver: ver, big: big, ptr: ptr, quantum: q,
					addr: 0x500000, text: 0x401000, rodata: 0x480000,
					files: []string{"/src/main.go", "/src/inl.go", "/go/src/runtime/panic.go"},
					funcs: synthFuncs(ver),
				})
			}
		}
	}
	return ss
}

func (s *synth) String() string {
	order := "le"
	if s.big {
		order = "be"
	}
	return fmt.Sprintf("%v-%s-%d", s.ver, order, s.ptr*8)
}

// options gives Parse the table's address and memory, from which it finds
// the moduledata and so runtime.text and go:func.*.
func (s *synth) options() pclntab.Options {
	_, mem := s.build()
	return pclntab.Options{Addr: s.addr, Memory: mem}
}

// TestSynthetic checks every layout, byte order and pointer size against the
// model, with and without the inline trees.
func TestSynthetic(t *testing.T) {
	for _, s := range synthTables() {
		t.Run(s.String(), func(t *testing.T) {
			data, _ := s.build()
			for _, inl := range []bool{true, false} {
				opts := s.options()
				if !inl {
					opts = pclntab.Options{TextStart: s.text}
				}
				tab, err := pclntab.Parse(data, opts)
				if err != nil {
					t.Fatal(err)
				}
				entries := s.entries()
				if tab.Version() != s.ver || tab.PtrSize() != s.ptr || tab.Quantum() != int(s.quantum) || tab.ByteOrder() != s.order() {
					t.Fatalf("Version %v, PtrSize %d, Quantum %d, ByteOrder %v", tab.Version(), tab.PtrSize(), tab.Quantum(), tab.ByteOrder())
				}
				if (tab.InlineErr() == nil) != inl {
					t.Errorf("inline trees %v: InlineErr = %v", inl, tab.InlineErr())
				}
				if s.ver >= pclntab.Version118 && tab.TextStart() != s.text {
					t.Errorf("TextStart = %#x, want %#x", tab.TextStart(), s.text)
				}
				if md, ok := tab.Moduledata(); ok != inl || (ok && (md.Text != s.text || md.MinPC != entries[0] || md.MaxPC != entries[len(s.funcs)])) {
					t.Errorf("Moduledata = %+v, %v", md, ok)
				} else if ok && s.ver >= pclntab.Version118 && (md.GoFunc != s.rodata || md.Rodata != s.rodata) {
					t.Errorf("Moduledata = %+v, want gofunc and rodata %#x", md, s.rodata)
				}
				if got := slices.Collect(tab.Files()); !slices.Equal(got, s.files) {
					t.Errorf("Files = %q, want %q", got, s.files)
				}
				if tab.NumFuncs() != len(s.funcs) {
					t.Fatalf("NumFuncs = %d, want %d", tab.NumFuncs(), len(s.funcs))
				}
				var frames []pclntab.Frame
				for i, f := range s.funcs {
					fn := tab.Func(i)
					want := pclntab.Func{Entry: entries[i], End: entries[i+1], Name: s.printName(f.name), Sym: f.name, FuncID: s.funcID(f.funcID)}
					if s.ver >= pclntab.Version120 {
						want.StartLine = int(f.startLine)
					}
					if fn != want {
						t.Errorf("Func(%d) = %+v, want %+v", i, fn, want)
					}
					if rows, want := slices.Collect(tab.Rows(i)), s.wantRows(i, inl); !slices.Equal(rows, want) {
						t.Errorf("%s: Rows\n have %v\n want %v", f.name, rows, want)
					}
					for off := uint32(0); uint64(off) < entries[i+1]-entries[i]; off++ {
						pc := entries[i] + uint64(off)
						if j, ok := tab.FindFunc(pc); !ok || j != i {
							t.Errorf("FindFunc(%#x) = %d, %v; want %d", pc, j, ok, i)
						}
						frames, _ = tab.Lookup(pc, frames[:0])
						if want := s.wantChain(i, off, inl); !slices.Equal(frames, want) {
							t.Errorf("%s+%#x: Lookup\n have %v\n want %v", f.name, off, frames, want)
						}
					}
					for k, n := range f.tree {
						node, ok := tab.InlineNode(i, int32(k))
						want := pclntab.InlineNode{Name: s.printName(n.name), Sym: n.name, FuncID: s.funcID(n.funcID), ParentPC: entries[i] + uint64(n.parentPC)}
						if s.ver >= pclntab.Version120 {
							want.StartLine = int(n.startLine)
						}
						if ok != inl || (inl && node != want) {
							t.Errorf("%s: InlineNode(%d) = %+v, %v; want %+v", f.name, k, node, ok, want)
						}
					}
					// A tree has no length; only the memory around it bounds it.
					for _, k := range []int32{-1, 1 << 30} {
						if _, ok := tab.InlineNode(i, k); ok {
							t.Errorf("%s: InlineNode(%d) found a node", f.name, k)
						}
					}
				}
				for _, pc := range []uint64{entries[0] - 1, entries[len(s.funcs)], 0, ^uint64(0)} {
					if _, ok := tab.Lookup(pc, nil); ok {
						t.Errorf("Lookup(%#x) found a function", pc)
					}
				}
			}
		})
	}
}

// TestSyntheticGosym reads the synthetic tables with debug/gosym, to check
// the writer against an independent reader.
func TestSyntheticGosym(t *testing.T) {
	for _, s := range synthTables() {
		data, _ := s.build()
		st, err := gosym.NewTable(nil, gosym.NewLineTable(data, s.text))
		if err != nil {
			t.Fatalf("%v: %v", s, err)
		}
		entries := s.entries()
		if len(st.Funcs) != len(s.funcs) {
			t.Fatalf("%v: gosym has %d functions", s, len(st.Funcs))
		}
		for i, f := range s.funcs {
			if g := st.Funcs[i]; g.Entry != entries[i] || g.End != entries[i+1] || g.Name != f.name {
				t.Errorf("%v: gosym func %d: %#x-%#x %s", s, i, g.Entry, g.End, g.Name)
			}
			for _, r := range s.wantRows(i, false) {
				if r.File == "?" {
					continue
				}
				file, line, _ := st.PCToLine(r.Start)
				if file != r.File || line != r.Line {
					t.Errorf("%v: %s %#x: gosym %s:%d, want %s:%d", s, f.name, r.Start, file, line, r.File, r.Line)
				}
			}
		}
	}
}

// TestSyntheticChains spells out main.b's chains at the boundaries of its
// inline ranges, the model aside.
func TestSyntheticChains(t *testing.T) {
	tests := []struct {
		off  uint32
		want string
	}{
		{0x0f, "main.b@21"},
		{0x10, "+main.inl1@31 main.b@21"},
		{0x1f, "+main.inl1@31 main.b@21"},
		{0x20, "+main.G[...]@41 +main.inl1@32 main.b@21"},
		{0x2f, "+main.G[...]@41 +main.inl1@32 main.b@21"},
		{0x30, "+main.inl1@32 main.b@21"},
		{0x5f, "main.b@22"},
		{0x60, "+main.inner@61 main.b@22"}, // the wrapper (*T).M is hidden
		{0x63, "+main.inner@61 main.b@22"},
		{0x64, "+runtime.gopanic@71 +main.(*T).M@51 main.b@22"}, // not above a panic
		{0x68, "+main.(*T).M@51 main.b@22"},                     // nor when it is the first frame
		{0x70, "main.b@23"},
		{0x7f, "main.b@23"},
		{0x80, "main.b@0"}, // padding: no line
	}
	for _, s := range synthTables() {
		data, _ := s.build()
		tab, err := pclntab.Parse(data, s.options())
		if err != nil {
			t.Fatal(err)
		}
		b := s.entries()[1]
		for _, tt := range tests {
			frames, ok := tab.Lookup(b+uint64(tt.off), nil)
			var got []string
			for _, f := range frames {
				name := f.Function
				if s.ver < pclntab.Version118 && name == "main.G" {
					name = "main.G[...]"
				}
				if f.Inlined {
					name = "+" + name
				}
				got = append(got, fmt.Sprintf("%s@%d", name, f.Line))
			}
			if have := strings.Join(got, " "); !ok || have != tt.want {
				t.Errorf("%v: main.b+%#x: have %q, want %q", s, tt.off, have, tt.want)
			}
		}
	}
}
