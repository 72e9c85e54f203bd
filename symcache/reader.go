package symcache

import (
	"errors"
	"fmt"
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
	h      header
	data   []byte
	files  []byte
	funcs  []byte
	locs   []byte
	starts []uint32
	rlocs  []uint32
	strs   []byte
	region *mmap.Region
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

// Parse validates data as a symcache and returns a File reading it in
// place. data must not change while the File is used. Cost is linear in the
// number of records: every stored index is checked once here so that
// lookups need no checks.
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
		// Tables are read in place as []uint32; copy misaligned input.
		data = append(make([]byte, 0, len(data)+8), data...)
	}
	var h header
	h.version = Version
	h.flags = le.Uint32(data[12:])
	copy(h.debugID[:], data[16:32])
	h.debugAge = le.Uint32(data[32:])
	h.language = Language(data[36])
	h.addrBase = le.Uint64(data[40:])
	h.arch = getRef(data[48:])
	h.codeID = getRef(data[56:])
	h.name = getRef(data[64:])
	h.producer = getRef(data[72:])
	h.nFiles = le.Uint32(data[80:])
	h.nFuncs = le.Uint32(data[84:])
	h.nLocs = le.Uint32(data[88:])
	h.nRanges = le.Uint32(data[92:])
	stringsOff := le.Uint64(data[96:])
	h.stringsLen = le.Uint64(data[104:])
	h.imageBase = le.Uint64(data[112:])
	h.layout()
	if stringsOff != h.stringsOff {
		return nil, &FormatError{Off: 96, Msg: fmt.Sprintf("string table at %#x, counts put it at %#x", stringsOff, h.stringsOff)}
	}
	if h.stringsOff > uint64(len(data)) || h.stringsLen > uint64(len(data))-h.stringsOff {
		return nil, &FormatError{Off: 104, Msg: fmt.Sprintf("tables end at %#x beyond file size %#x", h.stringsOff+h.stringsLen, len(data))}
	}
	f := &File{h: h, data: data}
	f.files = data[h.filesOff : h.filesOff+uint64(h.nFiles)*fileSize]
	f.funcs = data[h.funcsOff : h.funcsOff+uint64(h.nFuncs)*funcSize]
	f.locs = data[h.locsOff : h.locsOff+uint64(h.nLocs)*locSize]
	f.strs = data[h.stringsOff : h.stringsOff+h.stringsLen]
	if h.nRanges > 0 {
		f.starts = unsafe.Slice((*uint32)(unsafe.Pointer(&data[h.startsOff])), h.nRanges)
		f.rlocs = unsafe.Slice((*uint32)(unsafe.Pointer(&data[h.rlocsOff])), h.nRanges)
		if !littleEndianHost {
			f.starts, f.rlocs = swapped(f.starts), swapped(f.rlocs)
		}
	}
	if err := f.validate(); err != nil {
		return nil, err
	}
	return f, nil
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
	if uint64(r.off)+uint64(r.len) > uint64(len(f.strs)) {
		return &FormatError{Off: off, Msg: fmt.Sprintf("string [%#x,+%#x) beyond string table of %#x bytes", r.off, r.len, len(f.strs))}
	}
	return nil
}

func (f *File) validate() error {
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
	for i := uint32(0); i < h.nFuncs; i++ {
		p := f.funcs[int(i)*funcSize:]
		off := h.funcsOff + uint64(i)*funcSize
		if err := f.checkRef(off, getRef(p)); err != nil {
			return err
		}
		if df := le.Uint32(p[12:]); df != None && df >= h.nFiles {
			return &FormatError{Off: off + 12, Msg: fmt.Sprintf("function %d: file index %d out of range", i, df)}
		}
	}
	for i := uint32(0); i < h.nLocs; i++ {
		p := f.locs[int(i)*locSize:]
		off := h.locsOff + uint64(i)*locSize
		if fi := le.Uint32(p); fi != None && fi >= h.nFiles {
			return &FormatError{Off: off, Msg: fmt.Sprintf("location %d: file index %d out of range", i, fi)}
		}
		if fn := le.Uint32(p[8:]); fn != None && fn >= h.nFuncs {
			return &FormatError{Off: off + 8, Msg: fmt.Sprintf("location %d: function index %d out of range", i, fn)}
		}
		// Parents come before children, which also rules out cycles, so
		// walking inline parents always ends.
		if pa := le.Uint32(p[12:]); pa != None && pa >= i {
			return &FormatError{Off: off + 12, Msg: fmt.Sprintf("location %d: parent %d not before it", i, pa)}
		}
	}
	for i, s := range f.starts {
		if i > 0 && s <= f.starts[i-1] {
			return &FormatError{Off: h.startsOff + uint64(i)*4, Msg: fmt.Sprintf("range %d: start %#x not above previous %#x", i, s, f.starts[i-1])}
		}
		if l := f.rlocs[i]; l != None && l >= h.nLocs {
			return &FormatError{Off: h.rlocsOff + uint64(i)*4, Msg: fmt.Sprintf("range %d: location %d out of range", i, l)}
		}
	}
	// Range bounds are computed as base + start; they must not wrap.
	if n := len(f.starts); n > 0 && h.addrBase > ^uint64(0)-uint64(f.starts[n-1]) {
		return &FormatError{Off: 40, Msg: fmt.Sprintf("address base %#x plus range start %#x overflows", h.addrBase, f.starts[n-1])}
	}
	return nil
}

func (f *File) str(r strRef) string {
	if r.len == 0 {
		return ""
	}
	return unsafe.String(&f.strs[r.off], r.len)
}

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
// object (not module-relative). It allocates nothing. Cost: a binary search
// over the ranges.
func (f *File) Lookup(addr uint64) (Loc, bool) {
	if len(f.starts) == 0 || addr < f.h.addrBase || addr-f.h.addrBase > 0xffffffff {
		return Loc{}, false
	}
	rel := uint32(addr - f.h.addrBase)
	// The last range whose start is <= rel.
	lo, hi := 0, len(f.starts)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if f.starts[m] <= rel {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo == 0 {
		return Loc{}, false
	}
	l := f.rlocs[lo-1]
	if l == None {
		return Loc{}, false
	}
	return Loc{f: f, i: l}, true
}

// Loc is a source location in a symcache. The zero Loc is invalid.
type Loc struct {
	f *File
	i uint32
}

// Records are found with int arithmetic: a uint32 index times the record
// size would wrap in files of more than 4 GiB.
func (l Loc) rec() []byte { return l.f.locs[int(l.i)*locSize : int(l.i)*locSize+locSize] }

// Line returns the line number, 0 when unknown.
func (l Loc) Line() uint32 { return le.Uint32(l.rec()[4:]) }

// Column returns the column number, 0 when unknown.
func (l Loc) Column() uint32 { return uint32(le.Uint16(l.rec()[16:])) }

// Discriminator returns the DWARF discriminator of the location.
func (l Loc) Discriminator() uint32 { return uint32(le.Uint16(l.rec()[18:])) }

// File returns the source file path, "" when unknown.
func (l Loc) File() string {
	fi := le.Uint32(l.rec())
	if fi == None {
		return ""
	}
	return l.f.str(getRef(l.f.files[int(fi)*fileSize:]))
}

// FunctionIndex returns the index of the location's function, or None.
func (l Loc) FunctionIndex() uint32 { return le.Uint32(l.rec()[8:]) }

// Function returns the location's function; ok is false when unknown.
func (l Loc) Function() (fn Func, ok bool) {
	i := l.FunctionIndex()
	if i == None {
		return Func{}, false
	}
	return Func{f: l.f, i: i}, true
}

// Parent returns the location this one was inlined into.
func (l Loc) Parent() (Loc, bool) {
	p := le.Uint32(l.rec()[12:])
	if p == None {
		return Loc{}, false
	}
	return Loc{f: l.f, i: p}, true
}

// Index returns the location's index in the file, a stable identity.
func (l Loc) Index() uint32 { return l.i }

// Func is a function of a symcache.
type Func struct {
	f *File
	i uint32
}

// NumFuncs returns the number of function records.
func (f *File) NumFuncs() int { return int(f.h.nFuncs) }

// Func returns function record i, 0 <= i < NumFuncs.
func (f *File) Func(i int) Func { return Func{f: f, i: uint32(i)} }

func (fn Func) rec() []byte { return fn.f.funcs[int(fn.i)*funcSize : int(fn.i)*funcSize+funcSize] }

// Index returns the function's index, a stable identity within the file.
func (fn Func) Index() uint32 { return fn.i }

// Name returns the function's raw name, mangled when the producer recorded
// a linkage name.
func (fn Func) Name() string { return fn.f.str(getRef(fn.rec())) }

// Entry returns the function's start address, if known.
func (fn Func) Entry() (uint64, bool) {
	e := le.Uint32(fn.rec()[8:])
	if e == None {
		return 0, false
	}
	return fn.f.h.addrBase + uint64(e), true
}

// DeclFile returns the file that declares the function, "" when unknown.
func (fn Func) DeclFile() string {
	fi := le.Uint32(fn.rec()[12:])
	if fi == None {
		return ""
	}
	return fn.f.str(getRef(fn.f.files[int(fi)*fileSize:]))
}

// DeclLine returns the line of the function's declaration, 0 when unknown.
func (fn Func) DeclLine() uint32 { return le.Uint32(fn.rec()[16:]) }

// Language returns the language the function was written in.
func (fn Func) Language() Language { return Language(fn.rec()[20]) }

// NumRanges returns the number of address ranges.
func (f *File) NumRanges() int { return len(f.starts) }

// Range returns range i: its start address, the start of the next range
// (or the end of the address space for the last), and its location.
func (f *File) Range(i int) (start, end uint64, loc Loc, ok bool) {
	start = f.h.addrBase + uint64(f.starts[i])
	end = ^uint64(0)
	if i+1 < len(f.starts) {
		end = f.h.addrBase + uint64(f.starts[i+1])
	}
	if l := f.rlocs[i]; l != None {
		return start, end, Loc{f: f, i: l}, true
	}
	return start, end, Loc{}, false
}
