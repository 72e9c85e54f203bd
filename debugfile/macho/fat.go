package macho

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/backtrail/backtrail/internal/bin"
	"github.com/backtrail/backtrail/internal/mmap"
)

// ErrNotFat is returned by NewFatFile when data is not a fat (universal)
// Mach-O file: it has another magic number, or it is a Java class file, which
// shares FAT_MAGIC.
var ErrNotFat = errors.New("macho: not a fat Mach-O file")

// maxFatArches is the largest nfat_arch taken for a fat file. Java class
// files start with FAT_MAGIC too, followed by 16-bit minor and major version
// numbers, which read together as a count of at least 45; no fat file has
// that many architectures. file(1) draws the same line.
const maxFatArches = 30

// A FatFile is a fat (universal) Mach-O file: several thin files, one per
// architecture. Open also presents a thin file as a FatFile with one arch.
//
// A FatFile is safe for concurrent use, except that Close must not run at
// the same time as any other method.
type FatFile struct {
	// Magic is FAT_MAGIC or FAT_MAGIC_64, or for a thin file from Open,
	// the thin file's magic (MH_MAGIC, MH_MAGIC_64).
	Magic  uint32
	Arches []FatArch

	region *mmap.Region // what Open mapped, or nil
}

// A FatArch is one architecture of a fat file: a fat_arch or fat_arch_64
// record and the thin file it points to.
type FatArch struct {
	Cpu    uint32 // CPU_TYPE_*
	SubCpu uint32 // CPU_SUBTYPE_*
	Offset uint64 // of the thin file within the fat file
	Size   uint64 // of the thin file
	Align  uint32 // log2 of the thin file's alignment
	File   *File  // the thin file, parsed from the fat file's bytes
}

// NewFatFile parses a fat Mach-O file with 32-bit (FAT_MAGIC) or 64-bit
// (FAT_MAGIC_64) arch records, and the thin file of each architecture. The
// thin files refer to data without copying.
//
// NewFatFile returns ErrNotFat when data is not a fat file, including for a
// thin Mach-O file and a Java class file, and a *FormatError when the fat
// header or one of the thin files is malformed. Offsets in errors count from
// the start of data.
func NewFatFile(data []byte) (*FatFile, error) {
	if len(data) < sizeofFatHeader {
		return nil, ErrNotFat
	}
	magic := binary.BigEndian.Uint32(data)
	if magic != FAT_MAGIC && magic != FAT_MAGIC_64 {
		return nil, ErrNotFat
	}
	narch := binary.BigEndian.Uint32(data[4:])
	if narch > maxFatArches {
		return nil, ErrNotFat
	}
	if narch == 0 {
		return nil, &FormatError{Off: 4, Msg: "fat header: file contains no architectures", Val: narch}
	}
	archSize := uint64(sizeofFatArch)
	if magic == FAT_MAGIC_64 {
		archSize = sizeofFatArch64
	}
	end := sizeofFatHeader + uint64(narch)*archSize
	if end > uint64(len(data)) {
		return nil, &FormatError{Off: 4, Msg: fmt.Sprintf("fat header: nfat_arch records run past the end of the file (%#x bytes)", len(data)), Val: narch}
	}

	ff := &FatFile{Magic: magic, Arches: make([]FatArch, 0, narch)}
	b := bin.New("fat_arch", 0, data[:end], true)
	b.Skip(sizeofFatHeader)
	for i := range narch {
		at := b.Off()
		var a FatArch
		a.Cpu = b.U32()
		a.SubCpu = b.U32()
		if magic == FAT_MAGIC_64 {
			a.Offset, a.Size = b.U64(), b.U64()
			a.Align = b.U32()
			b.U32() // reserved
		} else {
			a.Offset, a.Size = uint64(b.U32()), uint64(b.U32())
			a.Align = b.U32()
		}
		if err := b.Err(); err != nil {
			return nil, formatError(err)
		}
		name := fmt.Sprintf("fat arch %d (%s)", i, ArchName(a.Cpu, a.SubCpu))
		if a.Offset > uint64(len(data)) || a.Size > uint64(len(data))-a.Offset {
			return nil, &FormatError{Off: at + 8, Msg: fmt.Sprintf("%s: %#x bytes at %#x run past the end of the file (%#x bytes)", name, a.Size, a.Offset, len(data))}
		}
		for _, o := range ff.Arches {
			if o.Cpu == a.Cpu && o.SubCpu&^CPU_SUBTYPE_MASK == a.SubCpu&^CPU_SUBTYPE_MASK {
				return nil, &FormatError{Off: at, Msg: name + ": duplicate architecture"}
			}
		}
		f, err := newFile(data[a.Offset:a.Offset+a.Size:a.Offset+a.Size], a.Offset)
		if errors.Is(err, ErrNotMachO) {
			return nil, &FormatError{Off: a.Offset, Msg: name + ": not a thin Mach-O file"}
		}
		if err != nil {
			return nil, err
		}
		a.File = f
		ff.Arches = append(ff.Arches, a)
	}
	return ff, nil
}

// Open maps the file at path read-only and parses it as a fat or a thin
// Mach-O file. A thin file is presented as a FatFile with one arch at offset
// 0, and Magic tells which it was. Close unmaps the file.
func Open(path string) (*FatFile, error) {
	r, err := mmap.OpenPiecewise(path)
	if err != nil {
		return nil, err
	}
	ff, err := newUniversal(r.Data)
	if err != nil {
		r.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	ff.region = r
	return ff, nil
}

// newUniversal parses data as a fat file, or as a thin file wrapped in a
// FatFile.
func newUniversal(data []byte) (*FatFile, error) {
	ff, err := NewFatFile(data)
	if !errors.Is(err, ErrNotFat) {
		return ff, err
	}
	f, err := NewFile(data)
	if errors.Is(err, ErrNotMachO) {
		return nil, ErrNotMachO
	}
	if err != nil {
		return nil, err
	}
	return &FatFile{
		Magic: f.Magic,
		Arches: []FatArch{{
			Cpu:    f.Cpu,
			SubCpu: f.SubCpu,
			Size:   uint64(len(data)),
			File:   f,
		}},
	}, nil
}

// Lookup returns the first thin file whose architecture ArchName names
// arch, or nil. It accepts the names ParseArch accepts.
func (ff *FatFile) Lookup(arch string) *File {
	cpu, sub, ok := ParseArch(arch)
	if !ok {
		return nil
	}
	want := ArchName(cpu, sub)
	for _, a := range ff.Arches {
		if ArchName(a.Cpu, a.SubCpu) == want {
			return a.File
		}
	}
	return nil
}

// Close releases the decompressed sections of every arch and, if Open made
// the FatFile, unmaps the file. No data from the FatFile or its Files may be
// used afterwards.
func (ff *FatFile) Close() error {
	var errs []error
	for _, a := range ff.Arches {
		if a.File != nil {
			errs = append(errs, a.File.Close())
		}
	}
	if ff.region != nil {
		errs = append(errs, ff.region.Close())
		ff.region = nil
	}
	return errors.Join(errs...)
}
