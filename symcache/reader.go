package symcache

import (
	"errors"
	"fmt"
	"io"
	"iter"
	"os"
	"sync/atomic"
	"unsafe"

	"github.com/backtrail/backtrail/internal/mmap"
)

// Errors returned by Parse. They are wrapped in a FormatError that says
// where the problem is.
var (
	ErrMagic   = errors.New("not a symcache file")
	ErrVersion = errors.New("unsupported symcache version")
)

// FormatError reports a malformed symcache.
type FormatError struct {
	Off uint64 // offset of the bad field
	Msg string
	Err error // ErrMagic, ErrVersion or nil
}

func (e *FormatError) Error() string {
	return fmt.Sprintf("symcache: %s at offset %#x", e.Msg, e.Off)
}

func (e *FormatError) Unwrap() error { return e.Err }

// File is a parsed symcache. It is immutable and safe for concurrent use.
// Strings it returns point into the file's bytes and are valid as long as
// those bytes are (until Close for a File from Open).
type File struct {
	h       header
	data    []byte
	files   []byte
	funcs   table
	locs    table
	starts  []uint32
	offs    []uint32
	entries []byte
	strs    []byte
	region  *mmap.Region

	// buckets[k] is the number of blocks that start below k<<shift (block
	// starts relative to the address base), for k up to the bucket of the
	// last start plus one. The addresses of bucket k can only be in blocks
	// buckets[k]-1 to buckets[k+1]-1, so Lookup binary-searches those few
	// starts instead of all: in a big file the full search's last steps
	// are each a cache miss. There are at most as many buckets as blocks.
	buckets []uint32
	shift   uint

	// Parse checks the layout; range entries are checked a block at a
	// time as lookups first read them, so that opening a big file costs
	// little. A bit of blocksOK says that a block passed; one of
	// blocksBad that it failed, and reads as unknown addresses. The
	// records a range reaches are not checked ahead: each field is
	// compared with its table's size as it is read, which the lookups'
	// dependent loads hide, where checking a block's chains ahead was a
	// cache miss per record (1M random addresses on a 264 MB symcache:
	// +0.7 CPU-s).
	blocksOK, blocksBad []atomic.Uint32
}

// table is a packed table of fixed-width records (docs/symcache.md §1).
type table struct {
	data  []byte
	bits  uint64
	shift [8]uint8  // bit offset of each field in a record
	mask  [8]uint64 // of each field's width
}

func newTable(data []byte, widths []uint8) table {
	t := table{data: data}
	for k, w := range widths {
		t.shift[k] = uint8(t.bits)
		t.mask[k] = 1<<w - 1
		t.bits += uint64(w)
	}
	return t
}

// get returns field k of record i, which must be below the table's count
// of records. Fields are at most 32 bits wide and start at most 7 bits into
// a byte, so one 8-byte load holds each, and the table's 8 bytes of padding
// keep that load inside the table.
func (t *table) get(i uint32, k int) uint32 {
	bit := uint64(i)*t.bits + uint64(t.shift[k])
	return uint32(load8(t.data, bit>>3) >> (bit & 7) & t.mask[k])
}

// at returns the address of the byte that holds field k of record i, for
// prefetch: unlike get, it reads nothing, and i may be past the table.
func (t *table) at(i uint32, k int) uintptr {
	return byteAt(t.data, (uint64(i)*t.bits+uint64(t.shift[k]))>>3)
}

// load8 returns the little-endian number in the 8 bytes of b at off, for
// the records of packed tables and the files, where the bytes are known to
// be inside b: Parse checks the tables' bounds, a block's check its
// entries' locations, and each index read from a record is compared with
// its table's size before it is used (Func checks its caller's). It does
// not check again: the bounds checks of reading a frame's fields took
// 14–20 % of a lookup (BenchmarkLookup; the entries' bounds checks cost
// nothing measurable). Built with -tags checked, as the fuzz targets and
// the race-detector run are, it checks, so that an index that escaped its
// comparison fails there instead of being read out of range.
func load8(b []byte, off uint64) uint64 {
	if checked {
		return le.Uint64(b[off:])
	}
	return le.Uint64((*[8]byte)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(b)), off))[:])
}

// Open maps the symcache at path and parses it.
func Open(path string) (*File, error) {
	r, err := mmap.Open(path)
	if err != nil {
		return nil, err
	}
	f, err := Parse(r.Data)
	if err != nil {
		r.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	f.region = r
	return f, nil
}

// Close releases the mapping made by Open. It does nothing for a File from
// Parse.
func (f *File) Close() error {
	if f.region == nil {
		return nil
	}
	return f.region.Close()
}

// IsSymcache reports whether data starts with the symcache magic.
func IsSymcache(data []byte) bool {
	return len(data) >= 4 && [4]byte(data[:4]) == Magic
}

// IsFile reports whether the file at path starts with the symcache magic.
func IsFile(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	var b [4]byte
	n, _ := io.ReadFull(f, b[:])
	return IsSymcache(b[:n])
}

// Parse validates data's layout as a symcache and returns a File reading
// it in place. data must not change while the File is used. It checks the
// header, the bounds of every table, the files and the block index, at a
// cost linear in the number of blocks (about 4 % of the file), not in its
// size, so that symbolizing a few addresses from a big file reads little
// of it. A block of range entries is checked when a lookup first reads
// it, and one that fails reads as unknown addresses; each index read from
// a location or function record is compared with its table's size, and
// one beyond it reads as absent. Check validates everything at once.
func Parse(data []byte) (*File, error) {
	if len(data) < 8 || [4]byte(data[:4]) != Magic {
		return nil, &FormatError{Off: 0, Msg: "bad magic", Err: ErrMagic}
	}
	if v := le.Uint32(data[4:]); v != Version {
		return nil, &FormatError{Off: 4, Msg: fmt.Sprintf("version %d, want %d", v, Version), Err: ErrVersion}
	}
	if len(data) < headerSize {
		return nil, &FormatError{Off: 0, Msg: fmt.Sprintf("file of %d bytes shorter than header", len(data))}
	}
	if hs := le.Uint32(data[8:]); hs != headerSize {
		return nil, &FormatError{Off: 8, Msg: fmt.Sprintf("header size %d, want %d", hs, headerSize)}
	}
	if uintptr(unsafe.Pointer(&data[0]))%8 != 0 {
		// Block starts and offsets are read in place as []uint32; copy
		// misaligned input.
		data = append(make([]byte, 0, len(data)+8), data...)
	}
	var h header
	h.decode(data)
	for k, w := range h.funcWidths {
		if w > 32 {
			return nil, &FormatError{Off: 108 + uint64(k), Msg: fmt.Sprintf("function field width %d above 32", w)}
		}
	}
	for k, w := range h.locWidths {
		if w > 32 {
			return nil, &FormatError{Off: 114 + uint64(k), Msg: fmt.Sprintf("location field width %d above 32", w)}
		}
	}
	// Records of zero-width fields take no space; bound their number by
	// the file's bits so that validating them is linear in its size.
	if n := max(h.nFuncs, h.nLocs); uint64(n) > 8*uint64(len(data)) {
		return nil, &FormatError{Off: 84, Msg: fmt.Sprintf("%d records for a file of %#x bytes", n, len(data))}
	}
	h.layout()
	if h.size != uint64(len(data)) {
		return nil, &FormatError{Off: 80, Msg: fmt.Sprintf("counts give a file of %#x bytes, have %#x", h.size, len(data))}
	}
	f := &File{h: h, data: data}
	f.files = data[h.filesOff : h.filesOff+uint64(h.nFiles)*fileSize]
	f.funcs = newTable(data[h.funcsOff:h.funcsOff+packedSize(h.nFuncs, recordBits(h.funcWidths[:]))], h.funcWidths[:])
	f.locs = newTable(data[h.locsOff:h.locsOff+packedSize(h.nLocs, recordBits(h.locWidths[:]))], h.locWidths[:])
	f.entries = data[h.entriesOff : h.entriesOff+uint64(h.entriesLen)]
	f.strs = data[h.stringsOff:]
	if h.nBlocks > 0 {
		f.starts = unsafe.Slice((*uint32)(unsafe.Pointer(&data[h.startsOff])), h.nBlocks)
		f.offs = unsafe.Slice((*uint32)(unsafe.Pointer(&data[h.offsOff])), h.nBlocks)
		if !littleEndianHost {
			f.starts, f.offs = swapped(f.starts), swapped(f.offs)
		}
	}
	if err := f.validateLayout(); err != nil {
		return nil, err
	}
	f.blocksOK = make([]atomic.Uint32, (len(f.starts)+31)/32)
	f.blocksBad = make([]atomic.Uint32, len(f.blocksOK))
	f.indexBlocks()
	return f, nil
}

// indexBlocks fills f.buckets, with the smallest bucket size (a power of
// two) that makes no more buckets than blocks.
func (f *File) indexBlocks() {
	n := len(f.starts)
	if n == 0 {
		return
	}
	last := uint64(f.starts[n-1])
	shift := uint(0)
	for last>>shift >= uint64(n) {
		shift++
	}
	buckets := make([]uint32, last>>shift+2)
	b := 0
	for k := range buckets {
		for b < n && uint64(f.starts[b]) < uint64(k)<<shift {
			b++
		}
		buckets[k] = uint32(b)
	}
	f.buckets, f.shift = buckets, shift
}

var littleEndianHost = func() bool {
	x := uint16(1)
	return *(*byte)(unsafe.Pointer(&x)) == 1
}()

func swapped(s []uint32) []uint32 {
	out := make([]uint32, len(s))
	for i, v := range s {
		out[i] = v>>24 | v>>8&0xff00 | v<<8&0xff0000 | v<<24
	}
	return out
}

func (f *File) checkRef(off uint64, r strRef) error {
	if !f.inStrs(r) {
		return &FormatError{Off: off, Msg: fmt.Sprintf("string [%#x,+%#x) beyond string table of %#x bytes", r.off, r.len, len(f.strs))}
	}
	return nil
}

// validateLayout checks what Parse checks beyond the header: the header's
// strings, the files, and that blocks start in increasing order with
// their entries in order inside the entries table.
func (f *File) validateLayout() error {
	h := &f.h
	for i, off := range []uint64{48, 56, 64, 72} {
		if err := f.checkRef(off, [...]strRef{h.arch, h.codeID, h.name, h.producer}[i]); err != nil {
			return err
		}
	}
	for i := uint32(0); i < h.nFiles; i++ {
		if err := f.checkRef(h.filesOff+uint64(i)*fileSize, getRef(f.files[int(i)*fileSize:])); err != nil {
			return err
		}
	}
	if (h.nBlocks == 0) != (h.entriesLen == 0) {
		return &FormatError{Off: 92, Msg: fmt.Sprintf("%d blocks of range entries in %d bytes", h.nBlocks, h.entriesLen)}
	}
	for b := range f.starts {
		switch {
		case b > 0 && f.starts[b] <= f.starts[b-1]:
			return &FormatError{Off: h.startsOff + uint64(b)*4, Msg: fmt.Sprintf("block %d: start %#x not above previous %#x", b, f.starts[b], f.starts[b-1])}
		case b == 0 && f.offs[b] != 0:
			return &FormatError{Off: h.offsOff, Msg: fmt.Sprintf("block 0: entries start at %#x, not 0", f.offs[b])}
		case b > 0 && f.offs[b] <= f.offs[b-1] || f.offs[b] >= h.entriesLen:
			return &FormatError{Off: h.offsOff + uint64(b)*4, Msg: fmt.Sprintf("block %d: entries at %#x out of order or beyond %#x bytes", b, f.offs[b], h.entriesLen)}
		}
	}
	return nil
}

// Check validates all of the file's content that Parse leaves to be
// checked on first use: every range entry, location and function record,
// and the count of ranges. It returns the first error found. After it
// succeeds, lookups check no block again.
func (f *File) Check() error {
	h := &f.h
	n := uint64(0)
	for b := range f.starts {
		nb, err := f.checkEntries(b)
		if err != nil {
			return err
		}
		n += nb
	}
	if n != uint64(h.nRanges) {
		return &FormatError{Off: 96, Msg: fmt.Sprintf("%d ranges, the entries hold %d", h.nRanges, n)}
	}
	for i := uint32(0); i < h.nFuncs; i++ {
		if err := f.checkFunc(i); err != nil {
			return err
		}
	}
	for i := uint32(0); i < h.nLocs; i++ {
		if err := f.checkLoc(i); err != nil {
			return err
		}
	}
	for k := range f.blocksOK {
		f.blocksOK[k].Store(^uint32(0))
	}
	return nil
}

// blockOK reports whether block b passed its check. A block is read only
// when blockOK or else checkBlock says so; the two are not one function,
// which the compiler would not inline (12 % of a lookup in a small file).
func (f *File) blockOK(b int) bool { return f.blocksOK[uint(b)/32].Load()>>(uint(b)%32)&1 != 0 }

// checkBlock checks block b's range entries, unless a lookup found them
// bad before, records the outcome and reports whether they passed.
// Lookups of several goroutines may check one block at once; they find
// the same.
func (f *File) checkBlock(b int) bool {
	w, bit := uint(b)/32, uint32(1)<<(uint(b)%32)
	if f.blocksBad[w].Load()&bit != 0 {
		return false
	}
	if _, err := f.checkEntries(b); err != nil {
		f.blocksBad[w].Or(bit)
		return false
	}
	f.blocksOK[w].Or(bit)
	return true
}

// checkEntries decodes block b's range entries, checks them, and returns
// how many there are.
func (f *File) checkEntries(b int) (uint64, error) {
	h := &f.h
	lo, hi := f.blockBytes(b)
	limit := uint64(None) // the entries' addresses must stay below the next block's
	if b+1 < len(f.starts) {
		limit = uint64(f.starts[b+1]) - 1
	}
	n := uint64(0)
	c := cursor{b: f.entries[lo:hi], entryState: entryState{addr: uint64(f.starts[b])}}
	for first := true; ; first = false {
		p := c.p
		prev := c.addr
		if !c.next(first) {
			if c.bad != "" {
				return 0, &FormatError{Off: h.entriesOff + uint64(lo) + uint64(p), Msg: fmt.Sprintf("block %d: range entry: %s", b, c.bad)}
			}
			return n, nil
		}
		off := h.entriesOff + uint64(lo) + uint64(p)
		switch {
		case c.addr > limit || !first && c.addr <= prev:
			return 0, &FormatError{Off: off, Msg: fmt.Sprintf("block %d: range entry at %#x beyond %#x", b, c.addr, limit)}
		case h.addrBase > ^uint64(0)-c.addr:
			// Range bounds are computed as base + start; they must not wrap.
			return 0, &FormatError{Off: 40, Msg: fmt.Sprintf("address base %#x plus range start %#x overflows", h.addrBase, c.addr)}
		case c.loc > h.nLocs:
			return 0, &FormatError{Off: off, Msg: fmt.Sprintf("block %d: range entry names location %d of %d", b, c.loc-1, h.nLocs)}
		}
		n++
	}
}

// checkLoc checks location record i's fields.
func (f *File) checkLoc(i uint32) error {
	h := &f.h
	// Records are packed, so errors name the record's first byte.
	off := h.locsOff + uint64(i)*f.locs.bits/8
	if fi := f.locs.get(i, locFile); fi > h.nFiles {
		return &FormatError{Off: off, Msg: fmt.Sprintf("location %d: file index %d out of range", i, fi-1)}
	}
	if fn := f.locs.get(i, locFunction); fn > h.nFuncs {
		return &FormatError{Off: off, Msg: fmt.Sprintf("location %d: function index %d out of range", i, fn-1)}
	}
	// Parents come before children, which also rules out cycles, so
	// walking inline parents always ends.
	if pa := f.locs.get(i, locParent); pa > i {
		return &FormatError{Off: off, Msg: fmt.Sprintf("location %d: parent %d not before it", i, pa-1)}
	}
	return nil
}

// checkFunc checks function record i.
func (f *File) checkFunc(i uint32) error {
	h := &f.h
	off := h.funcsOff + uint64(i)*f.funcs.bits/8
	if err := f.checkRef(off, strRef{f.funcs.get(i, fnName), f.funcs.get(i, fnNameLen)}); err != nil {
		return err
	}
	if df := f.funcs.get(i, fnDeclFile); df > h.nFiles {
		return &FormatError{Off: off, Msg: fmt.Sprintf("function %d: file index %d out of range", i, df-1)}
	}
	if e := f.funcs.get(i, fnEntry); e != 0 {
		if _, ok := f.entry(e); !ok {
			return &FormatError{Off: off, Msg: fmt.Sprintf("function %d: entry %#x overflows from address base %#x", i, e-1, h.addrBase)}
		}
	}
	return nil
}

// blockBytes returns where block b's entries are.
func (f *File) blockBytes(b int) (lo, hi uint32) {
	hi = uint32(len(f.entries))
	if b+1 < len(f.offs) {
		hi = f.offs[b+1]
	}
	return f.offs[b], hi
}

// str returns the string r refers to, "" when it is not inside the
// string table (in a file Check would refuse).
func (f *File) str(r strRef) string {
	if r.len == 0 || !f.inStrs(r) {
		return ""
	}
	if checked {
		b := f.strs[r.off : r.off+r.len]
		return unsafe.String(&b[0], len(b))
	}
	return unsafe.String((*byte)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(f.strs)), r.off)), r.len)
}

func (f *File) inStrs(r strRef) bool { return uint64(r.off)+uint64(r.len) <= uint64(len(f.strs)) }

// Info returns what the symcache records about its object.
func (f *File) Info() Info {
	return Info{
		DebugID:     f.h.debugID,
		DebugAge:    f.h.debugAge,
		CodeID:      f.str(f.h.codeID),
		Arch:        f.str(f.h.arch),
		Name:        f.str(f.h.name),
		Producer:    f.str(f.h.producer),
		Language:    f.h.language,
		ImageVMAddr: f.h.imageBase,
	}
}

// Counts returns the number of files, functions, locations and ranges.
func (f *File) Counts() (files, funcs, locs, ranges int) {
	return int(f.h.nFiles), int(f.h.nFuncs), int(f.h.nLocs), int(f.h.nRanges)
}

// Size returns the size of the symcache in bytes.
func (f *File) Size() int { return len(f.data) }

// Lookup returns the innermost location of addr, a file address of the
// object (not module-relative). It allocates nothing. Cost: a binary
// search over the blocks and the decoding of part of one, and the first
// time a block is read, its check (see Parse).
func (f *File) Lookup(addr uint64) (Loc, bool) {
	lo, hi := f.bucket(addr)
	if lo > hi {
		return Loc{}, false
	}
	rel := addr - f.h.addrBase
	b := f.searchBlock(rel, int(lo), int(hi))
	if b < 0 || !(f.blockOK(b) || f.checkBlock(b)) {
		return Loc{}, false
	}
	return f.decodeBlock(b, rel)
}

// bucket returns the blocks whose starts the search for addr must look at:
// blocks below lo start below addr's bucket, blocks from hi on start after
// it. lo > hi when addr is outside the file's address span.
func (f *File) bucket(addr uint64) (lo, hi int32) {
	k, ok := f.bucketOf(addr)
	if !ok {
		return 1, 0
	}
	lo, hi = int32(f.buckets[k]), int32(len(f.starts))
	if k+1 < uint64(len(f.buckets)) {
		hi = int32(f.buckets[k+1])
	}
	return lo, hi
}

// bucketOf returns the index in f.buckets of addr's bucket; ok is false
// when addr is outside the file's address span.
func (f *File) bucketOf(addr uint64) (k uint64, ok bool) {
	if len(f.starts) == 0 || addr < f.h.addrBase || addr-f.h.addrBase > uint64(None) {
		return 0, false
	}
	return min((addr-f.h.addrBase)>>f.shift, uint64(len(f.buckets)-1)), true
}

// searchBlock returns the last block whose start is <= rel, searching
// between the bounds from bucket, or -1 when rel is below every block.
func (f *File) searchBlock(rel uint64, lo, hi int) int {
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if uint64(f.starts[m]) <= rel {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo - 1
}

// decodeBlock returns the innermost frame of the last entry of block b at
// or below rel; ok is false when nothing is known there. The block passed
// its check, so unlike cursor it decodes without checks, and it stops at the
// first entry above rel before decoding that entry's values.
func (f *File) decodeBlock(b int, rel uint64) (Loc, bool) {
	lo, hi := f.blockBytes(b)
	e := f.entries[lo:hi]
	addr := uint64(f.starts[b])
	var line, column, discr, loc uint32
	for p := 0; p < len(e); {
		h := e[p]
		p++
		if p > 1 {
			d := uint64(h & 0x0f)
			if d == 0 {
				d, p = uleb(e, p)
			}
			if addr+d > rel {
				break
			}
			addr += d
		}
		if h&entLine != 0 {
			var d int64
			d, p = sleb(e, p)
			line = uint32(int64(line) + d)
		}
		if h&entColumn != 0 {
			var v uint64
			v, p = uleb(e, p)
			column = uint32(v)
		}
		if h&entDiscr != 0 {
			var v uint64
			v, p = uleb(e, p)
			discr = uint32(v)
		}
		if h&entLoc != 0 {
			var d int64
			d, p = sleb(e, p)
			loc = uint32(int64(loc) + d)
		}
	}
	// Returned as a Loc rather than the entry's state: five fields would
	// go through memory (see Loc).
	return newLoc(f, loc-1, line, column, discr), loc != 0
}

// uleb decodes the LEB128 number at p of checked entries, returning its
// bits and the offset after it.
func uleb(e []byte, p int) (uint64, int) {
	var v uint64
	for s := 0; ; s += 7 {
		b := e[p]
		p++
		v |= uint64(b&0x7f) << s
		if b < 0x80 {
			return v, p
		}
	}
}

// sleb decodes the SLEB128 number at p of checked entries, returning it
// and the offset after it. It repeats uleb's loop rather than
// sign-extending uleb's result: that version made lookups 4–7 % slower.
func sleb(e []byte, p int) (int64, int) {
	var v int64
	for s := 0; ; s += 7 {
		b := e[p]
		p++
		v |= int64(b&0x7f) << s
		if b < 0x80 {
			if b&0x40 != 0 {
				v |= -1 << (s + 7)
			}
			return v, p
		}
	}
}

// Span is an address range of a symcache and the innermost location of
// its addresses.
type Span struct {
	Start, End uint64 // End is the next range's start, or the end of the address space
	Loc        Loc
	Known      bool // false: nothing is known about these addresses
}

// Ranges returns the ranges in address order. A block that fails its
// check (see Parse) is one unknown range.
func (f *File) Ranges() iter.Seq[Span] {
	return func(yield func(Span) bool) {
		var s Span
		have := false
		// begin ends the span so far at rel, yields it, and begins an
		// unknown one there; it reports whether to go on.
		begin := func(rel uint64) bool {
			if have {
				s.End = f.h.addrBase + rel
				if !yield(s) {
					return false
				}
			}
			s, have = Span{Start: f.h.addrBase + rel}, true
			return true
		}
		for b := range f.starts {
			if !(f.blockOK(b) || f.checkBlock(b)) {
				if !begin(uint64(f.starts[b])) {
					return
				}
				continue
			}
			lo, hi := f.blockBytes(b)
			c := cursor{b: f.entries[lo:hi], entryState: entryState{addr: uint64(f.starts[b])}}
			for first := true; c.next(first); first = false {
				if !begin(c.addr) {
					return
				}
				if s.Known = c.loc != 0; s.Known {
					s.Loc = newLoc(f, c.loc-1, c.line, c.column, c.discr)
				}
			}
		}
		if have {
			s.End = ^uint64(0)
			yield(s)
		}
	}
}

// NumRanges returns the number of address ranges.
func (f *File) NumRanges() int { return int(f.h.nRanges) }

// Loc is a frame of a looked-up address: a location record and, for the
// innermost frame, the line, column and discriminator of the address's
// range. The zero Loc is invalid.
type Loc struct {
	f    *File
	i    uint32
	line uint32
	// cd holds the column (low half) and the discriminator. Go keeps
	// structs of at most four fields in registers; with five, every Loc
	// went through the stack and walking a chain stalled on store
	// forwarding (in-order lookups on cxx-500m took 237 ns, not 133).
	cd uint64
}

func newLoc(f *File, i, line, column, discr uint32) Loc {
	return Loc{f: f, i: i, line: line, cd: uint64(column) | uint64(discr)<<32}
}

// loc returns location record i as a frame: a call site.
func (f *File) loc(i uint32) Loc {
	return newLoc(f, i, f.locs.get(i, locLine), f.locs.get(i, locColumn), f.locs.get(i, locDiscr))
}

// Line returns the line number, 0 when unknown.
func (l Loc) Line() uint32 { return l.line }

// Column returns the column number, 0 when unknown.
func (l Loc) Column() uint32 { return uint32(l.cd) }

// Discriminator returns the DWARF discriminator of the location.
func (l Loc) Discriminator() uint32 { return uint32(l.cd >> 32) }

// File returns the source file path, "" when unknown.
func (l Loc) File() string { return l.f.fileName(l.f.locs.get(l.i, locFile)) }

// fileName returns the path of the file a record's field names (its index
// plus one), "" for none, or for an index beyond the files in a file
// Check would refuse.
func (f *File) fileName(field uint32) string {
	if field-1 >= f.h.nFiles { // 0 wraps around
		return ""
	}
	v := load8(f.files, uint64(field-1)*fileSize) // a strref
	return f.str(strRef{uint32(v), uint32(v >> 32)})
}

// FunctionIndex returns the index of the location's function, or None.
func (l Loc) FunctionIndex() uint32 {
	if fn, ok := l.Function(); ok {
		return fn.i
	}
	return None
}

// Function returns the location's function; ok is false when unknown.
func (l Loc) Function() (fn Func, ok bool) {
	i := l.f.locs.get(l.i, locFunction) - 1 // 0 wraps around
	return Func{l.f, i}, i < l.f.h.nFuncs
}

// Parent returns the location this one was inlined into.
func (l Loc) Parent() (Loc, bool) {
	p := l.f.parent(l.i)
	if p == 0 {
		return Loc{}, false
	}
	return l.f.loc(p - 1), true
}

// parent returns the parent field of location i: the parent's index plus
// one, or 0 for none. A parent must come before its child, which ends
// every walk of parents; one that does not reads as none.
func (f *File) parent(i uint32) uint32 {
	if p := f.locs.get(i, locParent); p <= i {
		return p
	}
	return 0
}

// Index returns the index of the location record, a stable identity
// within the file. Ranges that differ only in line, column or
// discriminator share it.
func (l Loc) Index() uint32 { return l.i }

// Func is a function of a symcache.
type Func struct {
	f *File
	i uint32
}

// NumFuncs returns the number of function records.
func (f *File) NumFuncs() int { return int(f.h.nFuncs) }

// Func returns function record i, 0 <= i < NumFuncs; it panics for other i.
func (f *File) Func(i int) Func {
	if uint(i) >= uint(f.h.nFuncs) {
		panic(fmt.Sprintf("symcache: function %d of %d", i, f.h.nFuncs))
	}
	return Func{f: f, i: uint32(i)}
}

// Index returns the function's index, a stable identity within the file.
func (fn Func) Index() uint32 { return fn.i }

// Name returns the function's raw name, mangled when the producer recorded
// a linkage name.
func (fn Func) Name() string {
	return fn.f.str(strRef{fn.f.funcs.get(fn.i, fnName), fn.f.funcs.get(fn.i, fnNameLen)})
}

// Entry returns the function's start address, if known.
func (fn Func) Entry() (uint64, bool) { return fn.f.entry(fn.f.funcs.get(fn.i, fnEntry)) }

// entry returns the address a function record's entry field gives: none
// for 0, nor for one beyond the address space (in a file Check refuses).
func (f *File) entry(field uint32) (uint64, bool) {
	e := uint64(field) - 1 // the offset from the address base; 0 wraps around
	if a := f.h.addrBase + e; e != ^uint64(0) && a >= e {
		return a, true
	}
	return 0, false
}

// DeclFile returns the file that declares the function, "" when unknown.
func (fn Func) DeclFile() string { return fn.f.fileName(fn.f.funcs.get(fn.i, fnDeclFile)) }

// DeclLine returns the line of the function's declaration, 0 when unknown.
func (fn Func) DeclLine() uint32 { return fn.f.funcs.get(fn.i, fnDeclLine) }

// Language returns the language the function was written in.
func (fn Func) Language() Language { return Language(fn.f.funcs.get(fn.i, fnLang)) }
