package cfi

import (
	"errors"
	"fmt"
	"iter"
	"slices"

	"github.com/backtrail/backtrail/internal/bin"
)

// Kind says which section a Table reads.
type Kind uint8

// Section kinds.
const (
	EHFrame    Kind = iota + 1 // .eh_frame: pointer encodings, CIE id 0, CIE pointers relative
	DebugFrame                 // .debug_frame: absolute addresses, CIE id all ones, CIE pointers section offsets
)

func (k Kind) String() string {
	switch k {
	case EHFrame:
		return ".eh_frame"
	case DebugFrame:
		return ".debug_frame"
	}
	return "cfi"
}

// Options describe where a section was loaded and how to read it.
type Options struct {
	Kind Kind // required

	// Addr is the virtual address of the section, the base of pcrel
	// pointers (.eh_frame only).
	Addr uint64
	// PtrSize is the size of an address, 4 or 8 (default 8). A
	// .debug_frame CIE of version 4 states its own.
	PtrSize int
	// BigEndian selects the byte order.
	BigEndian bool

	// Hdr is the .eh_frame_hdr section, loaded at HdrAddr. When its search
	// table is usable, lookups binary-search it and Parse does not scan
	// the section.
	Hdr     []byte
	HdrAddr uint64

	// TextAddr and DataAddr are the bases of textrel and datarel pointers
	// in .eh_frame (rare outside i386).
	TextAddr, DataAddr uint64
}

// FormatError reports malformed call frame information: the section, the
// offset of the bad entry or field, and what was wrong.
type FormatError struct {
	Section string
	Off     uint64
	Msg     string
}

func (e *FormatError) Error() string {
	return fmt.Sprintf("cfi: %s at offset %#x: %s", e.Section, e.Off, e.Msg)
}

// ErrNoFDE is returned when no FDE covers a program counter.
var ErrNoFDE = errors.New("cfi: no FDE covers the address")

func formatError(name string, err error) error {
	var de *bin.DecodeError
	if errors.As(err, &de) {
		return &FormatError{Section: name, Off: de.Offset, Msg: de.Err}
	}
	return err
}

// Table finds the FDE and the unwind row for a program counter in one
// section. It is immutable and safe for concurrent use.
type Table struct {
	data []byte
	opts Options
	name string

	// The .eh_frame_hdr search table: count pairs of sdata4 values
	// relative to HdrAddr (initial location, FDE address), sorted.
	hdr      []byte
	hdrCount int

	index []entry // sorted by begin; used without hdr

	// ScanErr is the first error met while scanning the section to build
	// the index, or nil. Entries before it are indexed; a bad CIE only
	// drops its own FDEs.
	ScanErr error
}

type entry struct {
	begin, end uint64
	off        uint64
}

// CIE is a Common Information Entry: what the FDEs that share it have in
// common.
type CIE struct {
	Offset       uint64 // offset in the section
	Version      uint8
	Augmentation string
	AddrSize     uint8 // .debug_frame version 4; else the table's PtrSize
	SegSize      uint8
	CodeAlign    uint64
	DataAlign    int64
	RAReg        uint64 // the return address column

	FDEEnc, LSDAEnc uint8 // pointer encodings (DW_EH_PE_*); DW_EH_PE_omit when absent
	Personality     uint64
	PersonalityInd  bool // Personality is the address of the pointer
	Signal          bool // 'S': FDEs describe signal trampolines; their callers' PCs are exact
	BKey            bool // 'B': AArch64 return addresses are signed with the B key
	MTETagged       bool // 'G': AArch64 MTE-tagged stack frames

	Initial []byte // initial instructions
	initOff uint64 // offset of Initial, for errors
}

// FDE is a Frame Description Entry: the rules for one function.
type FDE struct {
	Offset       uint64 // offset in the section
	CIE          *CIE
	Begin, End   uint64 // the PCs covered: [Begin, End)
	LSDA         uint64
	Instructions []byte

	t       *Table
	instOff uint64
}

// Parse reads the call frame section data. It fails only when the
// .eh_frame_hdr cannot be used and not a single entry could be read.
// Cost: with a usable .eh_frame_hdr, constant; otherwise one pass over the
// section and a sort of its FDEs.
func Parse(data []byte, opts Options) (*Table, error) {
	if opts.PtrSize == 0 {
		opts.PtrSize = 8
	}
	if opts.PtrSize != 4 && opts.PtrSize != 8 {
		return nil, fmt.Errorf("cfi: pointer size %d is not 4 or 8", opts.PtrSize)
	}
	if opts.Kind != EHFrame && opts.Kind != DebugFrame {
		return nil, fmt.Errorf("cfi: unknown section kind %d", opts.Kind)
	}
	t := &Table{data: data, opts: opts, name: opts.Kind.String()}
	if opts.Kind == EHFrame && len(opts.Hdr) > 0 && t.useHdr() {
		return t, nil
	}
	t.scan()
	if len(t.index) == 0 && t.ScanErr != nil {
		return nil, t.ScanErr
	}
	return t, nil
}

// useHdr sets up binary search over the .eh_frame_hdr table when it is in
// the datarel/sdata4 encoding that every linker writes and points at this
// section.
func (t *Table) useHdr() bool {
	h := t.opts.Hdr
	b := bin.New(".eh_frame_hdr", 0, h, t.opts.BigEndian)
	if b.U8() != 1 {
		return false
	}
	ptrEnc, countEnc, tableEnc := b.U8(), b.U8(), b.U8()
	ehPtr, _ := t.readPtr(&b, ptrEnc, t.opts.HdrAddr, 0, t.opts.HdrAddr)
	count, _ := t.readPtr(&b, countEnc, t.opts.HdrAddr, 0, t.opts.HdrAddr)
	if b.Err() != nil || tableEnc != DW_EH_PE_datarel|DW_EH_PE_sdata4 || countEnc == DW_EH_PE_omit {
		return false
	}
	if ehPtr != t.opts.Addr || count > uint64(b.Len()/8) || count == 0 {
		return false
	}
	t.hdr = h[b.Pos() : b.Pos()+int(count)*8]
	t.hdrCount = int(count)
	return true
}

// Len returns the number of FDEs the table can find.
func (t *Table) Len() int {
	if t.hdr != nil {
		return t.hdrCount
	}
	return len(t.index)
}

// scan walks every entry of the section, indexing FDEs.
func (t *Table) scan() {
	cies := map[uint64]*CIE{}
	badCIE := map[uint64]bool{}
	off := uint64(0)
	for off < uint64(len(t.data)) {
		hdr, err := t.entryHeader(off)
		if err != nil {
			t.keepErr(err)
			break
		}
		next := hdr.end
		if hdr.length == 0 || hdr.isCIE {
			off = next
			continue
		}
		cie := cies[hdr.cieOff]
		if cie == nil && !badCIE[hdr.cieOff] {
			cie, err = t.parseCIE(hdr.cieOff)
			if err != nil {
				badCIE[hdr.cieOff] = true
				t.keepErr(err)
			} else {
				cies[hdr.cieOff] = cie
			}
		}
		if cie != nil {
			fde, err := t.parseFDEBody(hdr, cie)
			if err != nil {
				t.keepErr(err)
			} else if fde.End > fde.Begin {
				t.index = append(t.index, entry{fde.Begin, fde.End, off})
			}
		}
		off = next
	}
	slices.SortStableFunc(t.index, func(a, b entry) int {
		switch {
		case a.begin < b.begin:
			return -1
		case a.begin > b.begin:
			return 1
		}
		return 0
	})
}

func (t *Table) keepErr(err error) {
	if t.ScanErr == nil {
		t.ScanErr = err
	}
}

// header is the common start of a CIE or FDE.
type header struct {
	off    uint64 // of the length field
	length uint64 // 0 for a terminator
	body   uint64 // offset after the CIE id / CIE pointer
	end    uint64 // offset of the next entry
	is64   bool
	isCIE  bool
	cieOff uint64 // FDE: offset of its CIE
}

func (t *Table) entryHeader(off uint64) (header, error) {
	h := header{off: off}
	b := bin.New(t.name, 0, t.data, t.opts.BigEndian)
	b.Seek(int(off))
	length := uint64(b.U32())
	if length == 0xffffffff {
		length = b.U64()
		h.is64 = true
	}
	if err := b.Err(); err != nil {
		return h, formatError(t.name, err)
	}
	start := uint64(b.Pos())
	if length > uint64(b.Len()) {
		return h, &FormatError{t.name, off, fmt.Sprintf("entry length %#x runs past the end of the section (%#x bytes left)", length, b.Len())}
	}
	h.length, h.end = length, start+length
	if length == 0 {
		return h, nil
	}
	idPos := start
	var id uint64
	if h.is64 {
		id = b.U64()
	} else {
		id = uint64(b.U32())
	}
	if err := b.Err(); err != nil || uint64(b.Pos()) > h.end {
		return h, &FormatError{t.name, off, "entry too short for its CIE id"}
	}
	h.body = uint64(b.Pos())
	if t.opts.Kind == EHFrame {
		h.isCIE = id == 0
		if !h.isCIE {
			if id > idPos {
				return h, &FormatError{t.name, off, fmt.Sprintf("CIE pointer %#x points before the section", id)}
			}
			h.cieOff = idPos - id
		}
	} else {
		h.isCIE = id == 0xffffffff || h.is64 && id == ^uint64(0)
		h.cieOff = id
	}
	return h, nil
}

// parseCIE reads the CIE at off.
func (t *Table) parseCIE(off uint64) (*CIE, error) {
	h, err := t.entryHeader(off)
	if err != nil {
		return nil, err
	}
	if !h.isCIE || h.length == 0 {
		return nil, &FormatError{t.name, off, "CIE pointer does not point at a CIE"}
	}
	b := bin.New(t.name, 0, t.data[:h.end], t.opts.BigEndian)
	b.Seek(int(h.body))
	c := &CIE{Offset: off, FDEEnc: DW_EH_PE_absptr, LSDAEnc: DW_EH_PE_omit, AddrSize: uint8(t.opts.PtrSize)}
	c.Version = b.U8()
	switch {
	case t.opts.Kind == EHFrame && (c.Version == 1 || c.Version == 3):
	case t.opts.Kind == DebugFrame && (c.Version == 1 || c.Version == 3 || c.Version == 4):
	default:
		if b.Err() == nil {
			return nil, &FormatError{t.name, off, fmt.Sprintf("unsupported CIE version %d", c.Version)}
		}
	}
	c.Augmentation = string(b.CString())
	aug := c.Augmentation
	if len(aug) >= 2 && aug[:2] == "eh" { // GCC 2.x: an eh_ptr follows
		b.Skip(t.opts.PtrSize)
		aug = aug[2:]
	}
	if c.Version == 4 {
		c.AddrSize = b.U8()
		c.SegSize = b.U8()
		if b.Err() == nil && c.AddrSize != 4 && c.AddrSize != 8 && c.AddrSize != 2 {
			return nil, &FormatError{t.name, off, fmt.Sprintf("CIE address size %d", c.AddrSize)}
		}
	}
	c.CodeAlign = b.ULEB()
	c.DataAlign = b.SLEB()
	if c.Version == 1 {
		c.RAReg = uint64(b.U8())
	} else {
		c.RAReg = b.ULEB()
	}
	if len(aug) > 0 && aug[0] == 'z' {
		n := b.ULEB()
		if b.Err() == nil && n > uint64(b.Len()) {
			return nil, &FormatError{t.name, off, fmt.Sprintf("augmentation data length %#x past the end of the CIE", n)}
		}
		start := b.Pos()
		ab := bin.New(t.name, uint64(start), b.Bytes(int(n)), t.opts.BigEndian)
	letters:
		for _, l := range aug[1:] {
			switch l {
			case 'L':
				c.LSDAEnc = ab.U8()
			case 'R':
				c.FDEEnc = ab.U8()
			case 'P':
				enc := ab.U8()
				c.Personality, c.PersonalityInd = t.readPtr(&ab, enc, t.opts.Addr+uint64(start), 0, t.opts.DataAddr)
			case 'S':
				c.Signal = true
			case 'B':
				c.BKey = true
			case 'G':
				c.MTETagged = true
			default:
				// The data length lets us skip what we don't know; the
				// letters read so far are good.
				break letters
			}
		}
		if ab.Err() != nil {
			return nil, &FormatError{t.name, off, fmt.Sprintf("augmentation data of %q does not fit its length", c.Augmentation)}
		}
	} else {
		for _, l := range aug {
			switch l {
			case 'S':
				c.Signal = true
			case 'B':
				c.BKey = true
			default:
				if b.Err() == nil {
					return nil, &FormatError{t.name, off, fmt.Sprintf("unknown augmentation %q", c.Augmentation)}
				}
			}
		}
	}
	if err := b.Err(); err != nil {
		return nil, formatError(t.name, err)
	}
	if c.CodeAlign == 0 {
		return nil, &FormatError{t.name, off, "code alignment factor 0"}
	}
	c.initOff = uint64(b.Pos())
	c.Initial = t.data[b.Pos():h.end:h.end]
	return c, nil
}

// parseFDEBody reads the FDE whose header is h and whose CIE is c.
func (t *Table) parseFDEBody(h header, c *CIE) (*FDE, error) {
	b := bin.New(t.name, 0, t.data[:h.end], t.opts.BigEndian)
	b.Seek(int(h.body))
	f := &FDE{Offset: h.off, CIE: c, t: t}
	if t.opts.Kind == EHFrame {
		var ind bool
		f.Begin, ind = t.readPtr(&b, c.FDEEnc, t.opts.Addr, 0, t.opts.DataAddr)
		if ind {
			return nil, &FormatError{t.name, h.off, "indirect initial location"}
		}
		n, _ := t.readPtr(&b, c.FDEEnc&0x0f, 0, 0, 0)
		f.End = f.Begin + n
		if len(c.Augmentation) > 0 && c.Augmentation[0] == 'z' {
			alen := b.ULEB()
			if b.Err() == nil && alen > uint64(b.Len()) {
				return nil, &FormatError{t.name, h.off, fmt.Sprintf("FDE augmentation length %#x past the end of the entry", alen)}
			}
			end := b.Pos() + int(alen)
			if c.LSDAEnc != DW_EH_PE_omit && alen > 0 {
				f.LSDA, _ = t.readPtr(&b, c.LSDAEnc, t.opts.Addr, f.Begin, t.opts.DataAddr)
			}
			if b.Err() == nil && b.Pos() > end {
				return nil, &FormatError{t.name, h.off, "LSDA pointer overruns the augmentation data"}
			}
			b.Seek(end)
		}
	} else {
		b.Skip(int(c.SegSize))
		size := int(c.AddrSize)
		f.Begin = b.Uint(size)
		f.End = f.Begin + b.Uint(size)
	}
	if err := b.Err(); err != nil {
		return nil, formatError(t.name, err)
	}
	if f.End < f.Begin {
		f.End = ^uint64(0)
	}
	f.instOff = uint64(b.Pos())
	f.Instructions = t.data[b.Pos():h.end:h.end]
	return f, nil
}

// fdeAt parses the FDE at off.
func (t *Table) fdeAt(off uint64) (*FDE, error) {
	h, err := t.entryHeader(off)
	if err != nil {
		return nil, err
	}
	if h.isCIE || h.length == 0 {
		return nil, &FormatError{t.name, off, "expected an FDE"}
	}
	c, err := t.parseCIE(h.cieOff)
	if err != nil {
		return nil, err
	}
	return t.parseFDEBody(h, c)
}

// FDE returns the FDE covering pc, or ErrNoFDE. Cost: a binary search and
// parsing one FDE and its CIE.
func (t *Table) FDE(pc uint64) (*FDE, error) {
	if t.hdr != nil {
		return t.hdrLookup(pc)
	}
	i, _ := slices.BinarySearchFunc(t.index, pc, func(e entry, pc uint64) int {
		if e.begin <= pc {
			return -1
		}
		return 1
	})
	// t.index[i-1] is the last entry starting at or before pc; nested or
	// overlapping entries are rare, so look back a little.
	for j := i - 1; j >= 0 && j >= i-4; j-- {
		if e := t.index[j]; pc >= e.begin && pc < e.end {
			return t.fdeAt(e.off)
		}
	}
	return nil, ErrNoFDE
}

func (t *Table) hdrEntry(i int) (loc, fde uint64) {
	p := t.hdr[i*8:]
	var a, b uint32
	if t.opts.BigEndian {
		a = uint32(p[0])<<24 | uint32(p[1])<<16 | uint32(p[2])<<8 | uint32(p[3])
		b = uint32(p[4])<<24 | uint32(p[5])<<16 | uint32(p[6])<<8 | uint32(p[7])
	} else {
		a = uint32(p[3])<<24 | uint32(p[2])<<16 | uint32(p[1])<<8 | uint32(p[0])
		b = uint32(p[7])<<24 | uint32(p[6])<<16 | uint32(p[5])<<8 | uint32(p[4])
	}
	return t.opts.HdrAddr + uint64(int64(int32(a))), t.opts.HdrAddr + uint64(int64(int32(b)))
}

func (t *Table) hdrLookup(pc uint64) (*FDE, error) {
	lo, hi := 0, t.hdrCount
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if loc, _ := t.hdrEntry(m); loc <= pc {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo == 0 {
		return nil, ErrNoFDE
	}
	_, addr := t.hdrEntry(lo - 1)
	if addr < t.opts.Addr || addr-t.opts.Addr >= uint64(len(t.data)) {
		return nil, &FormatError{".eh_frame_hdr", uint64(lo-1) * 8, fmt.Sprintf("FDE address %#x outside .eh_frame", addr)}
	}
	f, err := t.fdeAt(addr - t.opts.Addr)
	if err != nil {
		return nil, err
	}
	if pc < f.Begin || pc >= f.End {
		return nil, ErrNoFDE
	}
	return f, nil
}

// All yields every FDE of the section in section order, and errors for
// entries that cannot be read (after which it stops when the entry's
// length is bad, and goes on otherwise). Cost: linear in the section.
func (t *Table) All() iter.Seq2[*FDE, error] {
	return func(yield func(*FDE, error) bool) {
		off := uint64(0)
		for off < uint64(len(t.data)) {
			h, err := t.entryHeader(off)
			if err != nil {
				yield(nil, err)
				return
			}
			if h.length != 0 && !h.isCIE {
				f, err := t.fdeAt(off)
				if !yield(f, err) {
					return
				}
			}
			off = h.end
		}
	}
}

// readPtr reads a pointer in encoding enc. secAddr is the address of the
// cursor's position 0 (for pcrel); funcBase and dataBase the bases of
// funcrel and datarel.
func (t *Table) readPtr(b *bin.Buf, enc uint8, secAddr, funcBase, dataBase uint64) (v uint64, indirect bool) {
	if enc == DW_EH_PE_omit {
		return 0, false
	}
	pos := secAddr + uint64(b.Pos())
	if enc&0x70 == DW_EH_PE_aligned {
		ps := uint64(t.opts.PtrSize)
		if r := pos % ps; r != 0 {
			b.Skip(int(ps - r))
			pos += ps - r
		}
	}
	switch enc & 0x0f {
	case DW_EH_PE_absptr:
		v = b.Uint(t.opts.PtrSize)
	case DW_EH_PE_uleb128:
		v = b.ULEB()
	case DW_EH_PE_udata2:
		v = uint64(b.U16())
	case DW_EH_PE_udata4:
		v = uint64(b.U32())
	case DW_EH_PE_udata8:
		v = b.U64()
	case DW_EH_PE_sleb128:
		v = uint64(b.SLEB())
	case DW_EH_PE_sdata2:
		v = uint64(int64(int16(b.U16())))
	case DW_EH_PE_sdata4:
		v = uint64(int64(int32(b.U32())))
	case DW_EH_PE_sdata8:
		v = b.U64()
	default:
		b.Errorf("unknown pointer encoding %#x", enc)
		return 0, false
	}
	switch enc & 0x70 {
	case DW_EH_PE_pcrel:
		v += pos
	case DW_EH_PE_textrel:
		v += t.opts.TextAddr
	case DW_EH_PE_datarel:
		v += dataBase
	case DW_EH_PE_funcrel:
		v += funcBase
	}
	if t.opts.PtrSize == 4 {
		v &= 0xffffffff
	}
	return v, enc&DW_EH_PE_indirect != 0
}
