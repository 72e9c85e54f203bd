package symcache

import (
	"errors"
	"fmt"
	"io"
	"slices"
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

// Location is a source location record (docs/symcache.md §5): where the
// code of Function is, and, for inlined code, the location it was inlined
// into (Parent).
type Location struct {
	File          uint32 // file index, or None
	Line          uint32
	Column        uint32 // stored clamped to 16 bits
	Discriminator uint32 // stored clamped to 16 bits
	Function      uint32 // function index, or None
	Parent        uint32 // location index, or None
}

// Builder accumulates the tables of a symcache. Strings, files, functions
// and locations are deduplicated. A Builder is not safe for concurrent use;
// parallel producers build their parts separately and add them in a fixed
// order, so the output does not depend on scheduling.
type Builder struct {
	info    Info
	strings []byte
	strIdx  map[string]strRef
	files   []uint32 // string index (position in strRefs)
	fileIdx map[string]uint32
	funcs   []Function
	funcRef []strRef
	funcIdx map[Function]uint32
	locs    []Location
	starts  []uint64
	rlocs   []uint32
	fileRef []strRef
}

// NewBuilder returns an empty Builder for an object described by info.
func NewBuilder(info Info) *Builder {
	return &Builder{
		info:    info,
		strIdx:  make(map[string]strRef),
		fileIdx: make(map[string]uint32),
		funcIdx: make(map[Function]uint32),
	}
}

func (b *Builder) str(s string) strRef {
	if r, ok := b.strIdx[s]; ok {
		return r
	}
	r := strRef{off: uint32(len(b.strings)), len: uint32(len(s))}
	b.strings = append(b.strings, s...)
	b.strIdx[s] = r
	return r
}

// File returns the index of the file with the given path, adding it.
func (b *Builder) File(path string) uint32 {
	if i, ok := b.fileIdx[path]; ok {
		return i
	}
	i := uint32(len(b.fileRef))
	b.fileRef = append(b.fileRef, b.str(path))
	b.fileIdx[path] = i
	return i
}

// Function returns the index of f, adding it.
func (b *Builder) Function(f Function) uint32 {
	if i, ok := b.funcIdx[f]; ok {
		return i
	}
	i := uint32(len(b.funcs))
	b.funcs = append(b.funcs, f)
	b.funcRef = append(b.funcRef, b.str(f.Name))
	b.funcIdx[f] = i
	return i
}

// Location appends l and returns its index. Its Parent must already have
// been added. Locations are not deduplicated here: producers know which
// can repeat (within one compilation unit) and deduplicate those cheaply.
func (b *Builder) Location(l Location) uint32 {
	l.Column = min(l.Column, 0xffff)
	l.Discriminator = min(l.Discriminator, 0xffff)
	i := uint32(len(b.locs))
	b.locs = append(b.locs, l)
	return i
}

// Range records that addresses from start up to the next range's start
// resolve to location loc (None: nothing known). Ranges may be added in any
// order; where two start at the same address the one added last wins.
func (b *Builder) Range(start uint64, loc uint32) {
	b.starts = append(b.starts, start)
	b.rlocs = append(b.rlocs, loc)
}

// ErrTooLarge is returned when a table exceeds what the format can index.
var ErrTooLarge = errors.New("symcache: object too large for format")

// WriteTo writes the symcache. It sorts the ranges, merges neighbours that
// resolve to the same location and drops leading unknown ranges.
func (b *Builder) WriteTo(w io.Writer) (int64, error) {
	starts, rlocs := b.normalizedRanges()
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
	if len(starts) > 0 {
		h.addrBase = starts[0]
		if starts[len(starts)-1]-h.addrBase > 0xffffffff {
			return 0, fmt.Errorf("%w: address span %#x exceeds 4 GiB", ErrTooLarge, starts[len(starts)-1]-h.addrBase)
		}
	}
	if uint64(len(b.strings)) > 0xffffffff || len(b.locs) >= int(None) || len(starts) >= int(None) {
		return 0, ErrTooLarge
	}
	h.nFiles = uint32(len(b.fileRef))
	h.nFuncs = uint32(len(b.funcs))
	h.nLocs = uint32(len(b.locs))
	h.nRanges = uint32(len(starts))
	h.layout()
	h.stringsLen = uint64(len(b.strings))
	total := h.stringsOff + h.stringsLen
	out := make([]byte, total)
	h.encode(out)
	for i, r := range b.fileRef {
		putRef(out[h.filesOff+uint64(i)*fileSize:], r)
	}
	for i, f := range b.funcs {
		p := out[h.funcsOff+uint64(i)*funcSize:]
		putRef(p, b.funcRef[i])
		entry := None
		if f.Entry != NoAddr && f.Entry >= h.addrBase && f.Entry-h.addrBase < uint64(None) {
			entry = uint32(f.Entry - h.addrBase)
		}
		le.PutUint32(p[8:], entry)
		le.PutUint32(p[12:], f.DeclFile)
		le.PutUint32(p[16:], f.DeclLine)
		p[20] = byte(f.Language)
	}
	for i, l := range b.locs {
		p := out[h.locsOff+uint64(i)*locSize:]
		le.PutUint32(p, l.File)
		le.PutUint32(p[4:], l.Line)
		le.PutUint32(p[8:], l.Function)
		le.PutUint32(p[12:], l.Parent)
		le.PutUint16(p[16:], uint16(l.Column))
		le.PutUint16(p[18:], uint16(l.Discriminator))
	}
	for i, s := range starts {
		le.PutUint32(out[h.startsOff+uint64(i)*4:], uint32(s-h.addrBase))
		le.PutUint32(out[h.rlocsOff+uint64(i)*4:], rlocs[i])
	}
	copy(out[h.stringsOff:], b.strings)
	n, err := w.Write(out)
	return int64(n), err
}

// normalizedRanges sorts ranges by start (the last added wins among equal
// starts), then drops ranges that repeat their predecessor's location.
func (b *Builder) normalizedRanges() ([]uint64, []uint32) {
	idx := make([]int32, len(b.starts))
	for i := range idx {
		idx[i] = int32(i)
	}
	slices.SortStableFunc(idx, func(x, y int32) int {
		sx, sy := b.starts[x], b.starts[y]
		switch {
		case sx < sy:
			return -1
		case sx > sy:
			return 1
		}
		return 0
	})
	starts := make([]uint64, 0, len(idx))
	rlocs := make([]uint32, 0, len(idx))
	for _, i := range idx {
		s, l := b.starts[i], b.rlocs[i]
		if n := len(starts); n > 0 && starts[n-1] == s {
			rlocs[n-1] = l
			if n > 1 && rlocs[n-2] == l {
				starts, rlocs = starts[:n-1], rlocs[:n-1]
			}
			continue
		}
		if n := len(rlocs); n > 0 && rlocs[n-1] == l || n == 0 && l == None {
			continue
		}
		starts = append(starts, s)
		rlocs = append(rlocs, l)
	}
	return starts, rlocs
}

// Locations returns the locations added so far.
func (b *Builder) Locations() []Location { return b.locs }

// FunctionAt returns function i as added.
func (b *Builder) FunctionAt(i uint32) Function { return b.funcs[i] }

// LocationAt returns location i as added (column and discriminator
// clamped).
func (b *Builder) LocationAt(i uint32) Location { return b.locs[i] }
