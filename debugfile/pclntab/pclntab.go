package pclntab

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync"

	"github.com/backtrail/backtrail/internal/bin"
)

// Magic numbers at the start of the table, one per layout
// (internal/abi/symtab.go PCLnTabMagic). Read in the wrong byte order none of
// them matches another, which is how the byte order is found.
const (
	Magic12  = 0xfffffffb // Go 1.2–1.15
	Magic116 = 0xfffffffa // Go 1.16–1.17
	Magic118 = 0xfffffff0 // Go 1.18–1.19
	Magic120 = 0xfffffff1 // Go 1.20 and later
)

// Version is a table layout, named for the first Go release that wrote it.
type Version uint8

// The table layouts.
const (
	VersionUnknown Version = iota
	Version12              // magic 0xfffffffb, Go 1.2–1.15
	Version116             // magic 0xfffffffa, Go 1.16–1.17
	Version118             // magic 0xfffffff0, Go 1.18–1.19
	Version120             // magic 0xfffffff1, Go 1.20 and later
)

var versionNames = [...]string{"unknown", "go1.2", "go1.16", "go1.18", "go1.20"}

// String returns the first release that wrote the layout, e.g. "go1.20".
func (v Version) String() string {
	if int(v) < len(versionNames) {
		return versionNames[v]
	}
	return fmt.Sprintf("Version(%d)", uint8(v))
}

// Magic returns the layout's magic number, or 0 for VersionUnknown.
func (v Version) Magic() uint32 {
	switch v {
	case Version12:
		return Magic12
	case Version116:
		return Magic116
	case Version118:
		return Magic118
	case Version120:
		return Magic120
	}
	return 0
}

// ErrUnknownMagic is wrapped by the FormatError Parse returns for data that
// does not start with a known magic number.
var ErrUnknownMagic = errors.New("pclntab: unknown magic number")

// FormatError reports malformed table data: where, what, and the bad value.
type FormatError struct {
	Offset uint64 // offset within the table (or within the region named in What)
	What   string // what was wrong
	Value  any    // the offending value, or nil
	Err    error  // a sentinel such as ErrUnknownMagic, or nil
}

// Error formats the error as "pclntab: what 'value' at offset 0x…".
func (e *FormatError) Error() string {
	msg := "pclntab: " + e.What
	if e.Value != nil {
		msg += fmt.Sprintf(" '%v'", e.Value)
	}
	return msg + fmt.Sprintf(" at offset %#x", e.Offset)
}

// Unwrap returns e.Err.
func (e *FormatError) Unwrap() error { return e.Err }

// fromBin turns a byte cursor's error into a FormatError.
func fromBin(err error) error {
	var de *bin.DecodeError
	if errors.As(err, &de) {
		return &FormatError{Offset: de.Offset, What: de.Name + ": " + de.Err}
	}
	return err
}

// A Region is a range of the program's memory image: a section's contents at
// its link-time virtual address.
type Region struct {
	Addr uint64
	Data []byte
}

// Options says what the table alone does not: see the package documentation.
// The zero value is valid; it gives no inline trees for tables from Go 1.18
// on and, for Go 1.26 tables, entries relative to runtime.text.
type Options struct {
	// Addr is the virtual address of the table's first byte. With Memory it
	// lets Parse find the moduledata, and so TextStart and GoFunc when they
	// are zero.
	Addr uint64

	// TextStart overrides the address of runtime.text, to which Go 1.18+
	// entries are relative. Zero means: the moduledata's, else the header's.
	// Tables before Go 1.18 hold absolute addresses and ignore it.
	TextStart uint64

	// GoFunc overrides the address of go:func.* (moduledata.gofunc), the base
	// of Go 1.18+ funcdata offsets. Zero means: the moduledata's.
	GoFunc uint64

	// Memory is the program's loaded sections (rodata, data and the like;
	// passing every allocated section with contents is fine). It must cover
	// GoFunc and, before Go 1.18, the inline trees' absolute addresses. The
	// Table keeps it; its bytes must not change.
	Memory []Region
}

// Table is a parsed pc-line table. It is immutable and safe for concurrent
// use.
type Table struct {
	data    []byte
	ver     Version
	big     bool
	ptrSize int
	quantum uint32
	nfunc   int
	nfiles  int

	textStart uint64
	hdrText   uint64 // the header's textStart field (Go 1.18+)

	funcnametab []byte // names; Version12: the whole table
	cutab       []byte // Go 1.16+
	filetab     []byte // Version12: the uint32 offset array, count included
	pctab       []byte // Version12: the whole table
	functab     []byte // (nfunc*2+1) fields of fsz bytes
	funcdata    []byte // base of func offsets; Version12: the whole table
	fsz         int    // functab field size: 4 from Go 1.18, else ptrSize
	fixed       int    // size of the fixed part of _func

	gofunc    []byte // bytes from go:func.* on (Go 1.18+), or nil
	mem       []Region
	md        Moduledata
	mdOK      bool
	inlineErr error // why inline trees cannot be read, or nil

	lazyOnce sync.Once
	printed  map[uint32]string // name offset → name as printed, generics only
	funcIDs  [256]FuncID       // raw funcID → normalized
}

// Sniff reports the layout of data from its magic number, and whether it is
// big-endian. It checks nothing else.
func Sniff(data []byte) (v Version, bigEndian bool) {
	if len(data) < 8 {
		return VersionUnknown, false
	}
	le := binary.LittleEndian.Uint32(data)
	be := binary.BigEndian.Uint32(data)
	for _, c := range []Version{Version12, Version116, Version118, Version120} {
		switch c.Magic() {
		case le:
			return c, false
		case be:
			return c, true
		}
	}
	return VersionUnknown, false
}

// header is what Parse and FindModuledata read from the start of the table.
type header struct {
	ver     Version
	big     bool
	ptrSize int
	quantum uint32
	nfunc   uint64
	nfiles  uint64
	text    uint64    // Go 1.18+
	offs    [5]uint64 // funcname, cu, filetab, pctab, pcln (Go 1.16+)
	size    int
}

func readHeader(data []byte) (header, error) {
	var h header
	h.ver, h.big = Sniff(data)
	if h.ver == VersionUnknown {
		var m any
		if len(data) >= 4 {
			m = fmt.Sprintf("%#x", binary.LittleEndian.Uint32(data))
		}
		return h, &FormatError{What: "magic", Value: m, Err: ErrUnknownMagic}
	}
	if data[4] != 0 || data[5] != 0 {
		return h, &FormatError{Offset: 4, What: "nonzero header padding"}
	}
	h.quantum = uint32(data[6])
	switch h.quantum {
	case 1, 2, 4:
	default:
		return h, &FormatError{Offset: 6, What: "instruction size quantum", Value: h.quantum}
	}
	h.ptrSize = int(data[7])
	if h.ptrSize != 4 && h.ptrSize != 8 {
		return h, &FormatError{Offset: 7, What: "pointer size", Value: h.ptrSize}
	}
	b := bin.New("pcHeader", 0, data, h.big)
	b.Skip(8)
	h.nfunc = b.Uint(h.ptrSize)
	if h.ver >= Version116 {
		h.nfiles = b.Uint(h.ptrSize)
		if h.ver >= Version118 {
			h.text = b.Uint(h.ptrSize)
		}
		for i := range h.offs {
			h.offs[i] = b.Uint(h.ptrSize)
		}
	}
	if err := b.Err(); err != nil {
		return h, fromBin(err)
	}
	h.size = b.Pos()
	return h, nil
}

// Parse reads the table in data, the contents of .gopclntab, __gopclntab or
// the runtime.pcheader symbol onwards. It checks the header and the function
// table (in range, sorted); the rest is checked as it is read. Parse keeps
// data and opts.Memory without copying. Its cost is linear in the number of
// functions and, when it looks for the moduledata, in the size of Memory.
func Parse(data []byte, opts Options) (*Table, error) {
	h, err := readHeader(data)
	if err != nil {
		return nil, err
	}
	t := &Table{
		data:    data,
		ver:     h.ver,
		big:     h.big,
		ptrSize: h.ptrSize,
		quantum: h.quantum,
		hdrText: h.text,
		mem:     opts.Memory,
	}
	t.fsz = h.ptrSize
	switch h.ver {
	case Version12:
		t.fixed = h.ptrSize + 32
	case Version116:
		t.fixed = h.ptrSize + 36
	case Version118:
		t.fsz, t.fixed = 4, 40
	case Version120:
		t.fsz, t.fixed = 4, 44
	}

	// Where the header's table offsets are, for errors.
	offsField := func(i int) uint64 { return uint64(h.size - (5-i)*h.ptrSize) }

	// The function table: nfunc (entry, offset) pairs and the end PC.
	var ftabOff uint64
	if h.ver == Version12 {
		ftabOff = uint64(h.size)
	} else {
		ftabOff = h.offs[4]
		if ftabOff < uint64(h.size) || ftabOff > uint64(len(data)) {
			return nil, &FormatError{Offset: offsField(4), What: "function table offset", Value: ftabOff}
		}
	}
	rest := uint64(len(data)) - min(ftabOff, uint64(len(data)))
	if rest < uint64(t.fsz) || h.nfunc > (rest/uint64(t.fsz)-1)/2 {
		return nil, &FormatError{Offset: 8, What: "function count", Value: h.nfunc}
	}
	t.nfunc = int(h.nfunc)
	ftabLen := (2*t.nfunc + 1) * t.fsz
	t.functab = data[ftabOff : ftabOff+uint64(ftabLen)]

	if h.ver == Version12 {
		t.funcnametab, t.pctab, t.funcdata = data, data, data
		// A uint32 offset of the file table follows the function table; the
		// file table is a uint32 count (itself included) then offsets.
		b := bin.New("pclntab", 0, data, h.big)
		b.Seek(int(ftabOff) + ftabLen)
		fileOff := b.U32()
		b.Seek(int(fileOff))
		n := b.U32()
		if err := b.Err(); err != nil {
			return nil, fromBin(err)
		}
		if n == 0 || uint64(n) > uint64(b.Len()+4)/4 {
			return nil, &FormatError{Offset: uint64(fileOff), What: "file count", Value: n}
		}
		t.filetab = data[fileOff : uint64(fileOff)+4*uint64(n)]
		t.nfiles = int(n) - 1
	} else {
		// Each table runs to the start of the next one above it.
		var tabs [5][]byte
		for i, off := range h.offs {
			if off < uint64(h.size) || off > uint64(len(data)) {
				return nil, &FormatError{Offset: offsField(i), What: "table offset", Value: off}
			}
			end := uint64(len(data))
			for _, o := range h.offs {
				if o > off && o < end {
					end = o
				}
			}
			tabs[i] = data[off:end]
		}
		t.funcnametab, t.cutab, t.filetab, t.pctab = tabs[0], tabs[1], tabs[2], tabs[3]
		t.funcdata = data[ftabOff:]
		if h.nfiles > uint64(len(t.filetab)) {
			return nil, &FormatError{Offset: 8 + uint64(h.ptrSize), What: "file count", Value: h.nfiles}
		}
		t.nfiles = int(h.nfiles)
	}

	// Entries must not decrease: lookups binary-search them.
	prev := t.rawEntry(0)
	for i := 1; i <= t.nfunc; i++ {
		e := t.rawEntry(i)
		if e < prev {
			return nil, &FormatError{Offset: ftabOff + uint64(2*i*t.fsz), What: "function table not sorted at entry", Value: e}
		}
		prev = e
	}

	// The moduledata gives runtime.text and go:func.* where the caller does not.
	if opts.Addr != 0 && len(opts.Memory) > 0 {
		if md, err := findModuledata(h, opts.Addr, opts.Memory); err == nil {
			t.md, t.mdOK = md, true
		}
	}
	switch {
	case h.ver < Version118:
	case opts.TextStart != 0:
		t.textStart = opts.TextStart
	case t.mdOK && t.md.Text != 0:
		t.textStart = t.md.Text
	default:
		t.textStart = h.text
	}
	t.setupInline(opts)
	return t, nil
}

// setupInline finds the bytes at go:func.* for Go 1.18+ tables.
func (t *Table) setupInline(opts Options) {
	if t.ver < Version118 {
		if len(t.mem) == 0 {
			t.inlineErr = errors.New("pclntab: no Memory to read inline trees from")
		}
		return
	}
	gofunc := opts.GoFunc
	if gofunc == 0 && t.mdOK {
		gofunc = t.md.GoFunc
	}
	if gofunc == 0 {
		t.inlineErr = errors.New("pclntab: go:func.* address unknown (no moduledata found)")
		return
	}
	// Since Go 1.26 go:func.* lies inside the table's own section.
	if opts.Addr != 0 && gofunc >= opts.Addr && gofunc-opts.Addr < uint64(len(t.data)) {
		t.gofunc = t.data[gofunc-opts.Addr:]
		return
	}
	if p := regionAt(t.mem, gofunc); p != nil {
		t.gofunc = p
		return
	}
	t.inlineErr = fmt.Errorf("pclntab: go:func.* at %#x is in no Memory region", gofunc)
}

// regionAt returns the bytes of mem from addr to the end of its region.
func regionAt(mem []Region, addr uint64) []byte {
	for _, r := range mem {
		if addr >= r.Addr && addr-r.Addr < uint64(len(r.Data)) {
			return r.Data[addr-r.Addr:]
		}
	}
	return nil
}

// Version returns the table's layout.
func (t *Table) Version() Version { return t.ver }

// ByteOrder returns the table's byte order.
func (t *Table) ByteOrder() binary.ByteOrder {
	if t.big {
		return binary.BigEndian
	}
	return binary.LittleEndian
}

// PtrSize returns the target's pointer size, 4 or 8.
func (t *Table) PtrSize() int { return t.ptrSize }

// Quantum returns the target's instruction size quantum (minLC): 1 on x86,
// 4 on arm64 and other fixed-width architectures.
func (t *Table) Quantum() int { return int(t.quantum) }

// TextStart returns the address Go 1.18+ entries are relative to, or 0 for
// older tables.
func (t *Table) TextStart() uint64 { return t.textStart }

// HeaderTextStart returns the header's textStart field: runtime.text as
// linked, for Go 1.18–1.25 tables; 0 otherwise (Go 1.26 no longer stores it).
func (t *Table) HeaderTextStart() uint64 { return t.hdrText }

// Moduledata returns the moduledata Parse found, if it looked for one.
func (t *Table) Moduledata() (Moduledata, bool) { return t.md, t.mdOK }

// InlineErr reports why the table cannot read inline trees (no go:func.*
// address, no memory covering it), or nil when it can. Without them Lookup
// reports no inlined frames.
func (t *Table) InlineErr() error { return t.inlineErr }

// NumFuncs returns the number of functions.
func (t *Table) NumFuncs() int { return t.nfunc }

// NumFiles returns the number of entries in the file table.
func (t *Table) NumFiles() int { return t.nfiles }
