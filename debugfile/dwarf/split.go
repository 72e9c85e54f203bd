package dwarf

import (
	"fmt"

	"github.com/backtrail/backtrail/internal/bin"
)

// Split DWARF (-gsplit-dwarf, "Fission") leaves a skeleton unit in the
// binary: the unit's address ranges, its line table and the tables of
// addresses the split unit indexes. Everything else — the subroutines,
// their names and inline chains — is in a split unit, in a .dwo file per
// compilation or merged into one .dwp package. DWARF 5 standardized the
// GNU extension that DWARF 4 producers emit; both are read here.

// Skeleton is what a skeleton unit says about the split unit it stands for.
type Skeleton struct {
	DWOName string // the .dwo file, as written: often relative to CompDir
	CompDir string
	ID      uint64 // the DWO id the skeleton and its split unit share
}

// SplitLoader returns the split DWARF that holds the unit a skeleton
// stands for: the Data of a .dwo file, or of one unit's contributions to a
// .dwp package, made with Data.Split. It is called from the goroutines
// that read units, possibly at once, and may return nil when there is
// none.
type SplitLoader func(Skeleton) (*Data, error)

// SetSplitLoader makes ReadUnit and ReadRoot read the entries of skeleton
// units from the split units load returns. Without a loader, or when it
// finds no split unit with the skeleton's id, a skeleton reads as a unit
// without subroutines: its address ranges and line table are still there,
// as llvm-symbolizer reads it. Call it before reading units.
func (d *Data) SetSplitLoader(load SplitLoader) { d.split = load }

// Split returns the Data of split DWARF sections s — the .dwo sections of
// a file, or a package's contributions for one unit (Package.Unit) — whose
// skeleton units are in d: their indexed addresses, and before DWARF 5
// their range lists, are read from d's sections, as the format says.
func (d *Data) Split(s Sections) (*Data, error) {
	s.Addr, s.Ranges, s.Aranges = d.sec.Addr, d.sec.Ranges, nil
	return New(s, d.big)
}

// skeleton reports whether ui, whose root was read, is a skeleton unit.
func (ui *UnitInfo) skeleton() bool {
	return ui.Unit.Type == DW_UT_skeleton || ui.Unit.Version < 5 && ui.hasDWOID
}

func (ui *UnitInfo) dwoIdentity() uint64 {
	if ui.Unit.Version >= 5 {
		return ui.Unit.DWOID
	}
	return ui.dwoID
}

// splitReader loads the split unit of skeleton ui, whose root skel read,
// and returns a reader of its entries, past its root. The root's name,
// producer and language complete ui's. It returns nil when the loader
// finds no split unit of the skeleton's id (the skeleton then stands
// alone, and the loader says why), and an error naming the split file
// when the split unit it found cannot be read.
func (d *Data) splitReader(ui *UnitInfo, skel *entryReader) (*entryReader, error) {
	id := ui.dwoIdentity()
	sd, err := d.split(Skeleton{DWOName: string(ui.DWOName), CompDir: string(ui.CompDir), ID: id})
	if err != nil || sd == nil {
		return nil, nil
	}
	su := sd.splitUnit(id)
	if su == nil {
		return nil, nil
	}
	r, err := sd.newEntryReader(su)
	if err != nil {
		return nil, splitError(ui, err)
	}
	// The split unit inherits the skeleton's bases for the tables that
	// stay in the binary. Its own string offsets and range lists start
	// at its contribution: past the tables' headers in DWARF 5, at 0 in
	// the GNU extension.
	r.addrBase, r.baseAddr, r.lines = skel.addrBase, skel.baseAddr, ui.Unit
	if su.Version >= 5 {
		r.rnglistsBase = 12
		if su.Dwarf64 {
			r.rnglistsBase = 20
		}
	} else {
		r.strOffBase, r.rangesBase = 0, skel.dwoRangesBase
	}
	var root UnitInfo
	r.noRanges = true // the skeleton's ranges are the unit's
	children, err := r.readRoot(&root)
	r.noRanges = false
	if err != nil {
		return nil, splitError(ui, err)
	}
	if !children {
		return nil, nil
	}
	if ui.Name == nil {
		ui.Name = root.Name
	}
	if ui.Producer == nil {
		ui.Producer = root.Producer
	}
	if ui.Language == 0 {
		ui.Language = root.Language
	}
	return r, nil
}

// splitError says that the split unit of skeleton ui is malformed: err
// names a section of the split file, which this names.
func splitError(ui *UnitInfo, err error) error {
	return fmt.Errorf("split unit %#x in %s: %w", ui.dwoIdentity(), ui.DWOName, err)
}

// SplitSections returns the sections of the split DWARF that ui's entries
// were read from (ui.Split): the .dwo file's, or the package's
// contributions for the unit and its shared strings. Builders hand their
// pages back once done with them, as with the binary's own sections.
func (ui *UnitInfo) SplitSections() (Sections, bool) {
	if !ui.Split {
		return Sections{}, false
	}
	return ui.r.d.sec, true
}

// HasSplitUnit reports whether d holds the split compilation unit with DWO
// id id.
func (d *Data) HasSplitUnit(id uint64) bool { return d.splitUnit(id) != nil }

// splitUnit returns the split compilation unit with DWO id id.
func (d *Data) splitUnit(id uint64) *Unit {
	for i := range d.units {
		u := &d.units[i]
		switch {
		case u.Version >= 5:
			if u.Type == DW_UT_split_compile && u.DWOID == id {
				return u
			}
		case u.Type == DW_UT_compile:
			// Before DWARF 5 the id is an attribute of the root.
			var ui UnitInfo
			if d.ReadRoot(u, &ui) == nil && ui.hasDWOID && ui.dwoID == id {
				return u
			}
		}
	}
	return nil
}

// Package is the index of a .dwp file: where each split compilation unit's
// contribution to each section lies. The sections of a package are those
// of a .dwo file, with the units of many; a unit's offsets into them are
// relative to its contributions.
type Package struct {
	rows map[uint64]Sections // by DWO id
}

// Section identifiers of the unit index (DWARF 5 section 7.3.5.3; the
// GNU version 2 index numbers them alike up to 7, and has no range lists).
const (
	sectInfo       = 1
	sectAbbrev     = 3
	sectLine       = 4
	sectStrOffsets = 6
	sectRngLists   = 8 // DWARF 5 only; DW_SECT_MACRO in version 2
)

// NewPackage reads the .debug_cu_index of a .dwp package whose .dwo
// sections (.debug_info.dwo, .debug_abbrev.dwo, …) are s. Every
// contribution the index lists must lie inside its section. The type unit
// index is not read: type units describe no code.
func NewPackage(s Sections, cuIndex []byte, bigEndian bool) (*Package, error) {
	b := bin.New(".debug_cu_index", 0, cuIndex, bigEndian)
	// DWARF 5 has a 2-byte version and 2 bytes of padding where version 2
	// has 4 bytes: read as one 4-byte value (little-endian) both are the
	// version; big-endian, DWARF 5's comes first.
	version := b.U32()
	if bigEndian && version>>16 == 5 {
		version = 5
	}
	nsec, nunits, nslots := b.U32(), b.U32(), b.U32()
	if err := b.Err(); err != nil {
		return nil, err
	}
	if version != 2 && version != 5 {
		return nil, &bin.DecodeError{Name: ".debug_cu_index", Offset: 0, Err: fmt.Sprintf("unsupported index version %d", version)}
	}
	// Hash table (8 bytes a slot), index table (4), section row (4 a
	// section), then offsets and sizes (4 a section a unit): each count
	// must fit in what is left, or a tiny index could claim a huge table.
	left := uint64(b.Len())
	if uint64(nslots)*12 > left || uint64(nsec) > 16 || uint64(nsec)*4+uint64(nunits)*uint64(nsec)*8 > left-uint64(nslots)*12 {
		return nil, &bin.DecodeError{Name: ".debug_cu_index", Offset: 0,
			Err: fmt.Sprintf("%d slots and %d units of %d sections exceed the index's %d bytes", nslots, nunits, nsec, len(cuIndex))}
	}
	hashes := b.Bytes(int(nslots) * 8)
	indexes := b.Bytes(int(nslots) * 4)
	ids := make([]uint32, nsec)
	for i := range ids {
		ids[i] = b.U32()
	}
	offsets := b.Bytes(int(nunits * nsec * 4))
	sizes := b.Bytes(int(nunits * nsec * 4))
	if err := b.Err(); err != nil {
		return nil, err
	}
	u32 := func(p []byte, i uint32) uint32 {
		x := bin.New(".debug_cu_index", 0, p[i*4:i*4+4], bigEndian)
		return x.U32()
	}
	p := &Package{rows: make(map[uint64]Sections)}
	for slot := range nslots {
		row := u32(indexes, slot)
		if row == 0 {
			continue
		}
		if row > nunits {
			return nil, &bin.DecodeError{Name: ".debug_cu_index", Offset: 16 + uint64(nslots)*8 + uint64(slot)*4,
				Err: fmt.Sprintf("row %d of %d units", row, nunits)}
		}
		x := bin.New(".debug_cu_index", 0, hashes[slot*8:slot*8+8], bigEndian)
		id := x.U64()
		if _, dup := p.rows[id]; dup {
			continue
		}
		var u Sections
		u.Str = s.Str // the strings are shared, not contributed
		for k, sect := range ids {
			at := (row-1)*nsec + uint32(k)
			off, size := uint64(u32(offsets, at)), uint64(u32(sizes, at))
			var src []byte
			var dst *[]byte
			switch {
			case sect == sectInfo:
				src, dst = s.Info, &u.Info
			case sect == sectAbbrev:
				src, dst = s.Abbrev, &u.Abbrev
			case sect == sectLine:
				src, dst = s.Line, &u.Line
			case sect == sectStrOffsets:
				src, dst = s.StrOffsets, &u.StrOffsets
			case sect == sectRngLists && version == 5:
				src, dst = s.RngLists, &u.RngLists
			default:
				continue
			}
			if off > uint64(len(src)) || size > uint64(len(src))-off {
				return nil, &bin.DecodeError{Name: ".debug_cu_index", Offset: 0,
					Err: fmt.Sprintf("unit %#x: contribution [%#x, +%#x) of section %d beyond its %#x bytes", id, off, size, sect, len(src))}
			}
			*dst = src[off : off+size]
		}
		p.rows[id] = u
	}
	return p, nil
}

// Unit returns the sections of the split unit with DWO id id: its
// contributions, and the package's shared strings. ok is false when the
// package has no such unit.
func (p *Package) Unit(id uint64) (s Sections, ok bool) {
	s, ok = p.rows[id]
	return s, ok
}

// Len returns the number of units in the package's index.
func (p *Package) Len() int { return len(p.rows) }
