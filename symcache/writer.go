package symcache

import (
	"bufio"
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"slices"
	"sync"
)

// Info is what a symcache records about the object it was built from.
type Info struct {
	DebugID  [16]byte // the UUID part of the debug id
	DebugAge uint32   // the appendix of the debug id (0 for ELF and Mach-O)
	CodeID   string
	Arch     string
	Name     string // object file name, for display
	Producer string // DW_AT_producer of the first unit, or the tool that made the symbols
	Language Language
	// ImageVMAddr is the address the image prefers to be loaded at
	// (Mach-O __TEXT vmaddr, ELF first PT_LOAD), for converting
	// addresses relative to a loaded image into file addresses.
	ImageVMAddr uint64
}

// Function is a function record (docs/symcache.md §4).
type Function struct {
	Name     string // raw: mangled when the producer gave a linkage name
	Entry    uint64 // start address, or NoAddr
	DeclFile uint32 // file index, or None
	DeclLine uint32
	Language Language
}

// NoAddr marks an unknown function entry address.
const NoAddr = ^uint64(0)

// Location is a location record (docs/symcache.md §5): the code of
// Function in File and, for inlined code, the location it was inlined into
// (Parent). A range names a location for its file, function and parents,
// and gives the line, column and discriminator itself; the location's own
// line, column and discriminator are those of a call site, for locations
// that are some other's Parent.
type Location struct {
	File          uint32 // file index, or None
	Line          uint32
	Column        uint32
	Discriminator uint32
	Function      uint32 // function index, or None
	Parent        uint32 // location index, or None
}

// Range says that the addresses from Start up to the next range's start
// are the code of location Loc at Line, Column and Discriminator; Loc None
// says nothing is known about them (docs/symcache.md §6).
type Range struct {
	Start         uint64
	Loc           uint32
	Line          uint32
	Column        uint32
	Discriminator uint32
}

// Builder accumulates the tables of a symcache and writes it. Strings,
// files and functions are deduplicated; locations are not (producers know
// which can repeat and deduplicate those cheaply). Location records and
// range entries are encoded as they are added and kept in temporary
// storage that moves to an unlinked temporary file as it grows, so a big
// build holds neither in memory. A Builder is not safe for concurrent use;
// parallel producers build their parts separately and add them in a fixed
// order, so the output does not depend on scheduling.
type Builder struct {
	info Info
	err  error // the first misuse, returned by WriteTo

	seed    [2]maphash.Seed
	strs    spill
	names   chunks[nameRec]
	nameIdx map[uint64]uint32 // by the first half of a name's hash: its first nameRec
	files   []strRef
	fileIdx map[string]uint32
	funcs   chunks[funcRec]

	locs   spill // locRecSize-byte records as added
	nLocs  uint32
	locMax [locFields]uint32

	run     []Range // the run being added
	runs    []run
	blocks  chunks[block] // of all runs, as encoded
	entries spill
	buf     []byte // scratch for encoding a record or a block
}

// nameRec is a string of the string table. Strings are identified by a
// 128-bit hash of their content: a collision among the strings of any
// debug file is far less likely than a hardware fault, and it spares the
// Builder from keeping the strings (or views into the input) to compare.
type nameRec struct {
	hash1   uint64 // the second half of the hash; the first is the key in nameIdx
	ref     strRef
	next    uint32 // the next string whose hash's first half is the same, or None
	firstFn uint32 // the last function added with this name, or None
}

type funcRec struct {
	name     strRef
	entry    uint64
	declFile uint32
	declLine uint32
	lang     Language
	sameName uint32 // the function added before with the same name, or None
}

// A run is a sequence of ranges added with increasing starts, ended by a
// range that does not increase or by an unknown range (which it keeps as
// its end). Runs are encoded as they end and ordered by address when the
// file is written.
type run struct {
	first, last uint64   // starts of the first and last entries
	blocks      [2]int   // of Builder.blocks
	bytes       [2]int64 // of Builder.entries
	tail        entryState
	tailCount   int // entries in the last block
	end         uint64
	hasEnd      bool
}

func (r *run) empty() bool { return r.blocks[0] == r.blocks[1] }

// start is where the run's addresses begin.
func (r *run) start() uint64 {
	if r.empty() {
		return r.end
	}
	return r.first
}

type block struct {
	start uint64
	off   int64
}

const locRecSize = 4 * locFields

// NewBuilder returns an empty Builder for an object described by info.
// Close releases its temporary storage.
func NewBuilder(info Info) *Builder {
	return &Builder{
		info:    info,
		buf:     make([]byte, 0, 64),
		seed:    [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()},
		nameIdx: make(map[uint64]uint32),
		fileIdx: make(map[string]uint32),
	}
}

// Close releases the Builder's temporary storage.
func (b *Builder) Close() error {
	return errors.Join(b.strs.close(), b.locs.close(), b.entries.close())
}

func (b *Builder) fail(format string, args ...any) {
	if b.err == nil {
		b.err = fmt.Errorf("symcache: "+format, args...)
	}
}

// name returns the record of string s, adding it.
func (b *Builder) name(s string) *nameRec {
	h0, h1 := maphash.String(b.seed[0], s), maphash.String(b.seed[1], s)
	i, ok := b.nameIdx[h0]
	last := None
	for ok && i != None {
		if n := b.names.at(i); n.hash1 == h1 {
			return n
		}
		last, i = i, b.names.at(i).next
	}
	if b.strs.n+int64(len(s)) > int64(None) {
		b.fail("string table exceeds 4 GiB: %w", ErrTooLarge)
	}
	i = b.names.add(nameRec{hash1: h1, ref: strRef{off: uint32(b.strs.n), len: uint32(len(s))}, next: None, firstFn: None})
	b.strs.writeString(s)
	if last == None {
		b.nameIdx[h0] = i
	} else {
		b.names.at(last).next = i
	}
	return b.names.at(i)
}

func (b *Builder) str(s string) strRef { return b.name(s).ref }

// File returns the index of the file with the given path, adding it.
func (b *Builder) File(path string) uint32 {
	if i, ok := b.fileIdx[path]; ok {
		return i
	}
	i := uint32(len(b.files))
	b.files = append(b.files, b.str(path))
	b.fileIdx[path] = i
	return i
}

// Function returns the index of f, adding it.
func (b *Builder) Function(f Function) uint32 {
	n := b.name(f.Name)
	for i := n.firstFn; i != None; i = b.funcs.at(i).sameName {
		g := b.funcs.at(i)
		if g.entry == f.Entry && g.declFile == f.DeclFile && g.declLine == f.DeclLine && g.lang == f.Language {
			return i
		}
	}
	if f.DeclFile != None && f.DeclFile >= uint32(len(b.files)) {
		b.fail("function %q: file %d not added", f.Name, f.DeclFile)
	}
	i := b.funcs.add(funcRec{name: n.ref, entry: f.Entry, declFile: f.DeclFile, declLine: f.DeclLine, lang: f.Language, sameName: n.firstFn})
	n.firstFn = i
	return i
}

// Location appends l and returns its index. Its Parent, file and
// function must already have been added.
func (b *Builder) Location(l Location) uint32 {
	i := b.nLocs
	switch {
	case l.File != None && l.File >= uint32(len(b.files)):
		b.fail("location %d: file %d not added", i, l.File)
	case l.Function != None && l.Function >= uint32(b.funcs.len()):
		b.fail("location %d: function %d not added", i, l.Function)
	case l.Parent != None && l.Parent >= i:
		b.fail("location %d: parent %d not added before it", i, l.Parent)
	case i == None-1:
		b.fail("more than %d locations: %w", i, ErrTooLarge)
	}
	// Indexes are stored plus one, so that 0 means None.
	rec := [locFields]uint32{locFile: l.File + 1, locLine: l.Line, locColumn: l.Column, locDiscr: l.Discriminator,
		locFunction: l.Function + 1, locParent: l.Parent + 1}
	raw := b.buf[:locRecSize]
	for k, v := range rec {
		b.locMax[k] = max(b.locMax[k], v)
		le.PutUint32(raw[4*k:], v)
	}
	b.locs.write(raw)
	b.nLocs++
	return i
}

// Range adds r. Ranges are added in runs of increasing starts; a range
// that does not start above its predecessor begins a new run, and an
// unknown range (Loc None) ends its run. Runs may come in any order, but
// must not overlap: each run's addresses, from its first start to its last
// start (or its unknown end), must lie below the next run's first start;
// a run's unknown end may coincide with the next run's start. Neighbours
// that say the same are merged. The locations named must already have
// been added.
func (b *Builder) Range(r Range) {
	if n := len(b.run); n > 0 && r.Start <= b.run[n-1].Start {
		b.endRun(nil)
	}
	if r.Loc == None {
		b.endRun(&r.Start)
		return
	}
	if r.Loc >= b.nLocs {
		b.fail("range at %#x: location %d not added", r.Start, r.Loc)
		return
	}
	if n := len(b.run); n > 0 {
		p := &b.run[n-1]
		if p.Loc == r.Loc && p.Line == r.Line && p.Column == r.Column && p.Discriminator == r.Discriminator {
			return
		}
	}
	b.run = append(b.run, r)
}

// endRun encodes the run being added into blocks, with an unknown end at
// *end unless end is nil.
func (b *Builder) endRun(end *uint64) {
	if len(b.run) == 0 && end == nil {
		return
	}
	r := run{blocks: [2]int{b.blocks.len(), b.blocks.len()}, bytes: [2]int64{b.entries.n, b.entries.n}}
	if end != nil {
		r.end, r.hasEnd = *end, true
	}
	if n := len(b.run); n > 0 {
		r.first, r.last = b.run[0].Start, b.run[n-1].Start
	}
	for i := 0; i < len(b.run); i += blockEntries {
		blk := b.run[i:min(len(b.run), i+blockEntries)]
		b.blocks.add(block{start: blk[0].Start, off: b.entries.n})
		var prev entryState
		buf := b.buf[:0]
		for j := range blk {
			x := &blk[j]
			cur := entryState{addr: x.Start, line: x.Line, column: x.Column, discr: x.Discriminator, loc: x.Loc + 1}
			buf = appendEntry(buf, j == 0, &prev, &cur)
			prev = cur
		}
		b.entries.write(buf)
		b.buf = buf
		r.tail, r.tailCount = prev, len(blk)
	}
	b.run = b.run[:0]
	r.blocks[1], r.bytes[1] = b.blocks.len(), b.entries.n
	b.runs = append(b.runs, r)
}

// ErrTooLarge is returned when a table exceeds what the format can index.
var ErrTooLarge = errors.New("symcache: object too large for format")

// WriteTo writes the symcache to w. It orders the runs of ranges by
// address, writes unknown ends only where the next run does not begin,
// and streams the tables from temporary storage. A w that can be written
// at offsets (an *os.File of a regular file or device, not opened for
// appending) gets three parts of the file written at once and is left
// positioned after the symcache. After an error, WriteTo can be called
// again: nothing the Builder holds is consumed by writing.
func (b *Builder) WriteTo(w io.Writer) (int64, error) {
	b.endRun(nil)
	if b.err != nil {
		return 0, b.err
	}
	var h header
	h.version = Version
	h.debugID = b.info.DebugID
	h.debugAge = b.info.DebugAge
	h.language = b.info.Language
	h.imageBase = b.info.ImageVMAddr
	h.arch = b.str(b.info.Arch)
	h.codeID = b.str(b.info.CodeID)
	h.name = b.str(b.info.Name)
	h.producer = b.str(b.info.Producer)
	if b.err != nil {
		return 0, b.err
	}

	plan, err := b.planRanges()
	if err != nil {
		return 0, err
	}
	if err := errors.Join(b.strs.flush(), b.locs.flush(), b.entries.flush()); err != nil {
		return 0, fmt.Errorf("symcache: temporary storage lost data: %w", err)
	}
	if len(plan.blocks) > 0 {
		h.addrBase = plan.blocks[0].start
	}
	if plan.maxAddr-h.addrBase > uint64(None) {
		return 0, fmt.Errorf("%w: address span %#x exceeds 4 GiB", ErrTooLarge, plan.maxAddr-h.addrBase)
	}
	if plan.entriesLen > int64(None) || int64(len(plan.blocks)) >= int64(None) || int64(plan.nRanges) >= int64(None) || int64(b.funcs.len()) >= int64(None) {
		return 0, ErrTooLarge
	}
	h.nFiles = uint32(len(b.files))
	h.nFuncs = uint32(b.funcs.len())
	h.nLocs = b.nLocs
	h.nBlocks = uint32(len(plan.blocks))
	h.nRanges = uint32(plan.nRanges)
	h.entriesLen = uint32(plan.entriesLen)
	h.stringsLen = uint32(b.strs.n)
	funcs := b.funcFields(h.addrBase)
	for k := range h.funcWidths {
		h.funcWidths[k] = width(funcs.max[k])
	}
	for k := range h.locWidths {
		h.locWidths[k] = width(b.locMax[k])
	}
	h.layout()

	if f, base, ok := positioned(w); ok {
		return b.writeAt(f, base, &h, plan, &funcs)
	}
	if bb, ok := w.(*bytes.Buffer); ok {
		bb.Grow(int(h.size)) // one allocation, not a doubling per write
	}
	cw := newCountWriter(w, 0)
	b.writeFront(cw, &h, &funcs)
	b.writeLocs(cw, &h, 0, h.nLocs)
	b.writeBack(cw, &h, plan)
	return cw.n, cw.flush()
}

// positioned returns w as a file written at offsets, and the offset where
// writing starts, when it is one.
func positioned(w io.Writer) (io.WriterAt, int64, bool) {
	f, ok := w.(interface {
		io.WriterAt
		io.Seeker
	})
	if !ok {
		return nil, 0, false
	}
	base, err := f.Seek(0, io.SeekCurrent)
	if err != nil {
		return nil, 0, false // a pipe
	}
	if _, err := f.WriteAt(nil, base); err != nil {
		return nil, 0, false // a file opened for appending
	}
	return f, base, true
}

// writeAt writes the symcache at offset base of f in three parts at once:
// the front tables with the first half of the location records, the
// second half, and the range and string tables. A big file's locations
// are repacked from temporary storage and its range entries and strings
// copied from it, and the parts land in different places of the file (a
// 1 GB build, in two parts: 0.25 s for the front and all locations, 0.15 s
// for the rest). It leaves f's offset after the symcache, as a sequential
// write would.
func (b *Builder) writeAt(f io.WriterAt, base int64, h *header, plan *rangePlan, funcs *funcTable) (int64, error) {
	// Records from a multiple of 8 on start on a byte.
	mid := h.nLocs / 2 &^ 7
	midOff := h.locsOff + uint64(mid)*recordBits(h.locWidths[:])/8
	var (
		wg   sync.WaitGroup
		errs = make([]error, 3)
	)
	for i, part := range []func(*countWriter){
		func(cw *countWriter) {
			b.writeFront(cw, h, funcs)
			if mid > 0 { // else the second part writes the table's end
				b.writeLocs(cw, h, 0, mid)
			}
		},
		func(cw *countWriter) { b.writeLocs(cw, h, mid, h.nLocs) },
		func(cw *countWriter) { b.writeBack(cw, h, plan) },
	} {
		off := [...]uint64{0, midOff, h.startsOff}[i]
		wg.Go(func() {
			cw := newCountWriter(io.NewOffsetWriter(f, base+int64(off)), int64(off))
			part(cw)
			errs[i] = cw.flush()
		})
	}
	wg.Wait()
	err := errors.Join(errs...)
	if err == nil {
		_, err = f.(io.Seeker).Seek(base+int64(h.size), io.SeekStart)
	}
	if err != nil {
		return 0, err
	}
	return int64(h.size), nil
}

// writeFront writes the header, the files and the function records, up
// to the location records.
func (b *Builder) writeFront(cw *countWriter, h *header, funcs *funcTable) {
	var head [headerSize]byte
	h.encode(head[:])
	cw.Write(head[:])
	for _, r := range b.files {
		var rec [fileSize]byte
		putRef(rec[:], r)
		cw.Write(rec[:])
	}
	cw.pad(h.funcsOff)
	var pk packer
	pk.reset(cw, h.funcWidths[:])
	for i := range funcs.recs {
		pk.add(funcs.recs[i][:])
	}
	pk.finish(h.nFuncs)
	cw.pad(h.locsOff)
}

// writeLocs writes the location records, up to the block starts.
func (b *Builder) writeLocs(cw *countWriter, h *header, lo, hi uint32) {
	var pk packer
	pk.reset(cw, h.locWidths[:])
	if err := b.locs.each(locRecSize, int64(lo), int64(hi), func(raw []byte) {
		var rec [locFields]uint32
		for k := range rec {
			rec[k] = le.Uint32(raw[4*k:])
		}
		pk.add(rec[:])
	}); err != nil {
		cw.fail(err)
		return
	}
	if hi < h.nLocs {
		pk.drain() // hi is a multiple of 8: the records end on a byte
		return
	}
	pk.finish(h.nLocs)
	cw.pad(h.startsOff)
}

// writeBack writes the block starts and offsets, the range entries and
// the strings: the rest of the file.
func (b *Builder) writeBack(cw *countWriter, h *header, plan *rangePlan) {
	for _, blk := range plan.blocks {
		cw.u32(uint32(blk.start - h.addrBase))
	}
	cw.pad(h.offsOff)
	for _, blk := range plan.blocks {
		cw.u32(uint32(blk.off))
	}
	cw.pad(h.entriesOff)
	for _, part := range plan.parts {
		if part.tail != nil {
			cw.Write(part.tail)
		} else if err := b.entries.copyTo(cw, part.bytes[0], part.bytes[1]-part.bytes[0]); err != nil {
			cw.fail(err)
			return
		}
	}
	cw.pad(h.stringsOff)
	if err := b.strs.copyTo(cw, 0, b.strs.n); err != nil {
		cw.fail(err)
	}
}

// rangePlan is the range section as it will be written: the blocks with
// their final offsets, and the parts of the entries in order, each bytes
// from temporary storage or a tail written out.
type rangePlan struct {
	blocks     []block
	parts      []rangePart
	entriesLen int64
	nRanges    int
	maxAddr    uint64
}

type rangePart struct {
	bytes [2]int64
	tail  []byte
}

// planRanges orders the runs by address, checks they do not overlap, and
// decides where their unknown ends are written: appended to the run's last
// block when it has room, else as a block of its own.
func (b *Builder) planRanges() (*rangePlan, error) {
	runs := slices.Clone(b.runs)
	// Of runs that begin at one address, an unknown end alone goes first:
	// the run that begins there makes it redundant.
	slices.SortStableFunc(runs, func(x, y run) int {
		if c := cmp.Compare(x.start(), y.start()); c != 0 {
			return c
		}
		return cmp.Compare(boolInt(!x.empty()), boolInt(!y.empty()))
	})
	// Every block is copied, and a run adds at most a block and two parts.
	p := &rangePlan{blocks: make([]block, 0, b.blocks.len()+len(runs)), parts: make([]rangePart, 0, 2*len(runs))}
	open := false // whether the last range written is known, and so extends until a later start
	for i := range runs {
		r := &runs[i]
		var next *run
		if i+1 < len(runs) {
			next = &runs[i+1]
			if !r.empty() && r.last >= next.start() || r.hasEnd && r.end > next.start() {
				return nil, fmt.Errorf("symcache: ranges overlap: a run from %#x to %#x, another from %#x", r.start(), max(r.last, r.end), next.start())
			}
		}
		if !r.empty() {
			shift := p.entriesLen - r.bytes[0]
			b.blocks.slice(r.blocks[0], r.blocks[1], func(blks []block) {
				for _, blk := range blks {
					p.blocks = append(p.blocks, block{start: blk.start, off: blk.off + shift})
				}
			})
			// Runs are mostly added in address order: copy neighbours
			// in temporary storage at once.
			if n := len(p.parts); n > 0 && p.parts[n-1].tail == nil && p.parts[n-1].bytes[1] == r.bytes[0] {
				p.parts[n-1].bytes[1] = r.bytes[1]
			} else {
				p.parts = append(p.parts, rangePart{bytes: r.bytes})
			}
			p.entriesLen += r.bytes[1] - r.bytes[0]
			p.nRanges += (r.blocks[1]-r.blocks[0]-1)*blockEntries + r.tailCount
			p.maxAddr = max(p.maxAddr, r.last)
			open = true
		}
		if !r.hasEnd || !open || next != nil && next.start() == r.end {
			continue
		}
		// The unknown end: an entry that sets the location to none.
		var tail []byte
		if !r.empty() && r.tailCount < blockEntries {
			end := entryState{addr: r.end, line: r.tail.line, column: r.tail.column, discr: r.tail.discr}
			tail = appendEntry(nil, false, &r.tail, &end)
		} else {
			p.blocks = append(p.blocks, block{start: r.end, off: p.entriesLen})
			tail = appendEntry(nil, true, &entryState{}, &entryState{})
		}
		p.parts = append(p.parts, rangePart{tail: tail})
		p.entriesLen += int64(len(tail))
		p.nRanges++
		p.maxAddr = max(p.maxAddr, r.end)
		open = false
	}
	return p, nil
}

// funcTable is the function records as stored (§4), with each field's
// largest value.
type funcTable struct {
	recs [][fnFields]uint32
	max  [fnFields]uint32
}

func (b *Builder) funcFields(base uint64) funcTable {
	t := funcTable{recs: make([][fnFields]uint32, b.funcs.len())}
	for i := range t.recs {
		f := b.funcs.at(uint32(i))
		entry := uint32(0)
		if f.entry != NoAddr && f.entry >= base && f.entry-base < uint64(None) {
			entry = uint32(f.entry-base) + 1
		}
		rec := [fnFields]uint32{fnName: f.name.off, fnNameLen: f.name.len, fnEntry: entry,
			fnDeclFile: f.declFile + 1, fnDeclLine: f.declLine, fnLang: uint32(f.lang)}
		for k, v := range rec {
			t.max[k] = max(t.max[k], v)
		}
		t.recs[i] = rec
	}
	return t
}

// packer writes records of fixed-width fields as a bit stream (§1).
type packer struct {
	w      io.Writer
	widths []uint8
	acc    uint64 // bits not yet written, the oldest lowest; fewer than 32
	nacc   uint
	buf    []byte
}

func (p *packer) reset(w io.Writer, widths []uint8) {
	p.w, p.widths, p.acc, p.nacc, p.buf = w, widths, 0, 0, p.buf[:0]
}

func (p *packer) add(rec []uint32) {
	for k, w := range p.widths {
		p.acc |= uint64(rec[k]) << p.nacc
		if p.nacc += uint(w); p.nacc >= 32 {
			p.buf = le.AppendUint32(p.buf, uint32(p.acc))
			p.acc >>= 32
			p.nacc -= 32
		}
	}
	if len(p.buf) >= 32<<10 {
		p.w.Write(p.buf)
		p.buf = p.buf[:0]
	}
}

// finish writes the last bits and the padding of a table of n records.
func (p *packer) finish(n uint32) {
	if n == 0 {
		return
	}
	p.padBits()
	p.buf = append(p.buf, make([]byte, 8)...)
	p.drain()
}

// drain writes the bits added so far, padded to a byte.
func (p *packer) drain() {
	p.padBits()
	p.w.Write(p.buf)
	p.buf = p.buf[:0]
}

// padBits moves the bits not yet written to buf, padded to a byte.
func (p *packer) padBits() {
	for ; p.nacc > 0; p.nacc -= min(p.nacc, 8) {
		p.buf = append(p.buf, byte(p.acc))
		p.acc >>= 8
	}
}

// countWriter counts what it writes, from a starting offset, through a
// buffer, and keeps the first error.
type countWriter struct {
	w   io.Writer     // buf, or the destination when that is a buffer already
	buf *bufio.Writer // nil when the destination is a bytes.Buffer
	n   int64
	err error
}

// newCountWriter returns a countWriter to w. A bytes.Buffer gets no
// buffer in front: a lazy index builds a symcache in memory for every
// unit it converts, and a 64 KB buffer for each was a fresh allocation.
func newCountWriter(w io.Writer, n int64) *countWriter {
	if _, ok := w.(*bytes.Buffer); ok {
		return &countWriter{w: w, n: n}
	}
	buf := bufio.NewWriterSize(w, 64<<10)
	return &countWriter{w: buf, buf: buf, n: n}
}

// fail records err unless an error came first.
func (c *countWriter) fail(err error) {
	if c.err == nil {
		c.err = err
	}
}

// flush writes out the buffer and returns the first error.
func (c *countWriter) flush() error {
	if c.err == nil && c.buf != nil {
		c.err = c.buf.Flush()
	}
	return c.err
}

func (c *countWriter) Write(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.w.Write(p)
	c.n += int64(n)
	c.err = err
	return n, err
}

func (c *countWriter) u32(v uint32) {
	var b [4]byte
	le.PutUint32(b[:], v)
	c.Write(b[:])
}

// pad writes zeros up to offset off.
func (c *countWriter) pad(off uint64) {
	var zero [8]byte
	for c.err == nil && uint64(c.n) < off {
		c.Write(zero[:min(off-uint64(c.n), 8)])
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
