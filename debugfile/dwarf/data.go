package dwarf

import (
	"fmt"
	"sort"
	"sync"

	"github.com/backtrail/backtrail/internal/bin"
)

// Sections holds the raw (decompressed) DWARF sections of one object file.
// Any of them may be nil. The slices are read, never written, and must stay
// valid as long as the Data made from them.
type Sections struct {
	Info       []byte // .debug_info
	Abbrev     []byte // .debug_abbrev
	Line       []byte // .debug_line
	LineStr    []byte // .debug_line_str
	Str        []byte // .debug_str
	StrOffsets []byte // .debug_str_offsets
	Addr       []byte // .debug_addr
	Ranges     []byte // .debug_ranges (DWARF 2–4)
	RngLists   []byte // .debug_rnglists (DWARF 5)
	Aranges    []byte // .debug_aranges
}

// Data is the DWARF of one object. It is safe for concurrent use: units can
// be read in parallel.
type Data struct {
	sec   Sections
	big   bool
	units []Unit
	split SplitLoader // see SetSplitLoader

	mu         sync.Mutex // guards abbrevs and abbrevRead
	abbrevs    map[abbrevKey]*abbrevTable
	abbrevRead int // bytes of .debug_abbrev parsed so far, over all tables
}

type abbrevKey struct {
	off uint64
	f   format
}

// Unit is a unit header from .debug_info.
type Unit struct {
	Offset   uint64 // of the unit header within .debug_info
	End      uint64 // offset just past the unit
	Version  uint16
	Type     uint8 // DW_UT_* (DWARF 5), DW_UT_compile for earlier versions
	AddrSize uint8
	Dwarf64  bool
	Abbrev   uint64 // offset of the abbreviation table
	DWOID    uint64 // skeleton and split units

	first uint64 // offset of the unit's root entry
	index int    // position in Data.units
}

func (u *Unit) format() format {
	return format{addrSize: u.AddrSize, dwarf64: u.Dwarf64, version: u.Version}
}

// New indexes the unit headers of s. bigEndian is the object's byte order.
// It reads only headers: the cost is proportional to the number of units.
func New(s Sections, bigEndian bool) (*Data, error) {
	d := &Data{sec: s, big: bigEndian, abbrevs: make(map[abbrevKey]*abbrevTable)}
	b := bin.New(".debug_info", 0, s.Info, bigEndian)
	for b.Len() > 0 {
		u, err := d.parseUnitHeader(&b)
		if err != nil {
			return d, err
		}
		u.index = len(d.units)
		d.units = append(d.units, u)
	}
	return d, nil
}

func (d *Data) parseUnitHeader(b *bin.Buf) (Unit, error) {
	var u Unit
	u.Offset = b.Off()
	length := uint64(b.U32())
	if length == 0xffffffff {
		u.Dwarf64 = true
		length = b.U64()
	} else if length >= 0xfffffff0 {
		return u, &bin.DecodeError{Name: ".debug_info", Offset: u.Offset, Err: fmt.Sprintf("reserved unit length %#x", length)}
	}
	start := b.Off()
	if b.Err() != nil || length > uint64(b.Len()) {
		return u, &bin.DecodeError{Name: ".debug_info", Offset: u.Offset, Err: fmt.Sprintf("unit length %#x exceeds section", length)}
	}
	u.End = start + length
	u.Version = b.U16()
	off := func() uint64 {
		if u.Dwarf64 {
			return b.U64()
		}
		return uint64(b.U32())
	}
	switch {
	case u.Version >= 2 && u.Version <= 4:
		u.Type = DW_UT_compile
		u.Abbrev = off()
		u.AddrSize = b.U8()
	case u.Version == 5:
		u.Type = b.U8()
		u.AddrSize = b.U8()
		u.Abbrev = off()
		switch u.Type {
		case DW_UT_skeleton, DW_UT_split_compile:
			u.DWOID = b.U64()
		case DW_UT_type, DW_UT_split_type:
			b.U64()
			off()
		}
	default:
		return u, &bin.DecodeError{Name: ".debug_info", Offset: u.Offset, Err: fmt.Sprintf("unsupported DWARF version %d", u.Version)}
	}
	if err := b.Err(); err != nil {
		return u, err
	}
	if u.AddrSize != 4 && u.AddrSize != 8 && u.AddrSize != 2 {
		return u, &bin.DecodeError{Name: ".debug_info", Offset: u.Offset, Err: fmt.Sprintf("unsupported address size %d", u.AddrSize)}
	}
	u.first = b.Off()
	if u.first > u.End {
		return u, &bin.DecodeError{Name: ".debug_info", Offset: u.Offset, Err: "unit header longer than unit"}
	}
	b.Seek(int(u.End))
	return u, nil
}

// Sections returns the sections d reads.
func (d *Data) Sections() Sections { return d.sec }

// Units returns the unit headers in section order.
func (d *Data) Units() []Unit { return d.units }

// BigEndian reports the byte order the Data was opened with.
func (d *Data) BigEndian() bool { return d.big }

// unitAt returns the unit whose entries contain the .debug_info offset off.
func (d *Data) unitAt(off uint64) *Unit {
	i := sort.Search(len(d.units), func(i int) bool { return d.units[i].End > off })
	if i < len(d.units) && d.units[i].first <= off {
		return &d.units[i]
	}
	return nil
}

// unitContaining returns the unit whose header or entries hold offset off.
func (d *Data) unitContaining(off uint64) *Unit {
	i := sort.Search(len(d.units), func(i int) bool { return d.units[i].End > off })
	if i < len(d.units) && d.units[i].Offset <= off {
		return &d.units[i]
	}
	return nil
}

func (d *Data) abbrevTable(u *Unit) (*abbrevTable, error) {
	k := abbrevKey{off: u.Abbrev, f: u.format()}
	d.mu.Lock()
	t, read := d.abbrevs[k], d.abbrevRead
	d.mu.Unlock()
	if t != nil {
		return t, nil
	}
	// Units may start their tables anywhere in .debug_abbrev, also inside
	// another unit's table; bound the bytes parsed in all, or many units
	// could make the parse quadratic in the section size. Tables that do
	// not overlap, as compilers write them, are each parsed once per unit
	// format.
	if limit := 2*len(d.sec.Abbrev) + 1<<16; read > limit {
		return nil, &bin.DecodeError{Name: ".debug_abbrev", Offset: u.Abbrev,
			Err: fmt.Sprintf("unit at %#x: abbreviation tables overlap: %d bytes parsed for a section of %d", u.Offset, read, len(d.sec.Abbrev))}
	}
	t, n, err := parseAbbrev(d.sec.Abbrev, u.Abbrev, u.format())
	d.mu.Lock()
	d.abbrevRead += n
	d.mu.Unlock()
	if err != nil {
		return nil, fmt.Errorf("unit at %#x: %w", u.Offset, err)
	}
	d.mu.Lock()
	if old := d.abbrevs[k]; old != nil {
		t = old
	} else {
		d.abbrevs[k] = t
	}
	d.mu.Unlock()
	return t, nil
}
