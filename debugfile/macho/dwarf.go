package macho

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/backtrail/backtrail/internal/mmap"
)

// ErrNoSection is returned by DWARFSection when the file has no such
// section.
var ErrNoSection = errors.New("macho: no such section")

// Bounds on the declared size of a compressed section, checked before
// anything is allocated. zlib cannot expand data more than about 1032 times,
// but DWARF compresses far less, so a larger ratio means a hostile or broken
// header. The floor lets tiny sections, whose zlib overhead dominates, have
// any ratio.
const (
	maxDecompressed = 4 << 30 // bytes
	maxRatio        = 64      // decompressed size / compressed size
	minLimit        = 64 << 10
)

// dwarfCache holds the decompressed __zdebug sections. mu guards entries;
// each entry is filled once, by the first caller that needs it.
type dwarfCache struct {
	mu      sync.Mutex
	entries map[*Section]*inflated
}

type inflated struct {
	once   sync.Once
	region *mmap.Region
	err    error
}

// machoName turns a DWARF section name such as "debug_info" into the
// Mach-O section name with prefix, "__debug_info", truncated to the 16 bytes
// of sectname: "debug_str_offsets" becomes "__debug_str_offs".
func machoName(prefix, name string) string {
	s := prefix + name
	if len(s) > 16 {
		s = s[:16]
	}
	return s
}

// dwarfSection returns the section called sectname, preferring the __DWARF
// segment, or nil.
func (f *File) dwarfSection(sectname string) *Section {
	if s := f.Section("__DWARF", sectname); s != nil {
		return s
	}
	return f.Section("", sectname)
}

// DWARFSection returns the contents of a DWARF section. name is the DWARF
// name without prefix ("debug_info", "debug_str_offsets", "apple_names"; a
// leading "." is ignored), which DWARFSection maps to the Mach-O name
// ("__debug_info", "__debug_str_offs"). It looks in the __DWARF segment
// first, then in any segment.
//
// A plain section is returned without copying. A legacy compressed section
// (__zdebug_info: "ZLIB", a big-endian 64-bit size, then a zlib stream) is
// decompressed on first use into memory outside the Go heap, which Close
// frees; later calls return the same bytes. The result must not be modified.
// DWARFSection is safe for concurrent use.
//
// It returns an error wrapping ErrNoSection when the file has neither form
// of the section, and a *FormatError when the section lies outside the file,
// declares an implausible size (over 4 GiB, or over 64 times its compressed
// size and over 64 KiB), or does not decompress to exactly the declared size
// with a valid checksum.
func (f *File) DWARFSection(name string) ([]byte, error) {
	name = strings.TrimPrefix(name, ".")
	if s := f.dwarfSection(machoName("__", name)); s != nil {
		return s.Data()
	}
	z := f.dwarfSection(machoName("__z", name))
	if z == nil {
		return nil, fmt.Errorf("%w: %s", ErrNoSection, machoName("__", name))
	}
	return f.inflate(z)
}

// inflate returns the decompressed contents of s, decompressing once.
func (f *File) inflate(s *Section) ([]byte, error) {
	c := &f.dwarf
	c.mu.Lock()
	e := c.entries[s]
	if e == nil {
		e = new(inflated)
		if c.entries == nil {
			c.entries = make(map[*Section]*inflated)
		}
		c.entries[s] = e
	}
	c.mu.Unlock()

	e.once.Do(func() { e.region, e.err = f.decompress(s) })
	if e.err != nil {
		return nil, e.err
	}
	return e.region.Data, nil
}

// decompress reads a "ZLIB" section into a new temporary-file mapping.
func (f *File) decompress(s *Section) (*mmap.Region, error) {
	what := "section " + s.Seg + "," + s.Name
	off := f.base + uint64(s.Offset)
	raw, err := s.Data()
	if err != nil {
		return nil, err
	}
	if len(raw) < 12 || string(raw[:4]) != "ZLIB" {
		return nil, &FormatError{Off: off, Msg: what + ": no ZLIB header"}
	}
	size := binary.BigEndian.Uint64(raw[4:12])
	comp := raw[12:]
	limit := max(uint64(len(comp))*maxRatio, minLimit)
	if size > maxDecompressed || size > limit || uint64(int(size)) != size {
		return nil, &FormatError{
			Off: off + 4,
			Msg: fmt.Sprintf("%s: implausible uncompressed size for %#x compressed bytes (limit %#x)", what, len(comp), min(limit, maxDecompressed)),
			Val: size,
		}
	}
	zr, err := zlib.NewReader(bytes.NewReader(comp))
	if err != nil {
		return nil, &FormatError{Off: off + 12, Msg: what + ": " + err.Error()}
	}
	r, err := mmap.Temp(int(size))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if n, err := io.ReadFull(zr, r.Data); err != nil {
		r.Close()
		if err == io.ErrUnexpectedEOF || err == io.EOF {
			return nil, &FormatError{Off: off + 4, Msg: fmt.Sprintf("%s: zlib stream ends after %#x bytes, before the declared size", what, n), Val: size}
		}
		return nil, &FormatError{Off: off + 12, Msg: what + ": " + err.Error()}
	}
	// Reading past the declared size must meet the end of the stream, which
	// is also where zlib checks the Adler-32 checksum.
	var one [1]byte
	if n, err := io.ReadFull(zr, one[:]); n != 0 || err != io.EOF {
		r.Close()
		if n != 0 {
			return nil, &FormatError{Off: off + 4, Msg: what + ": zlib stream is longer than the declared size", Val: size}
		}
		return nil, &FormatError{Off: off + 12, Msg: what + ": " + err.Error()}
	}
	return r, nil
}

// Close frees the decompressed sections. It does not unmap the data the File
// was made from: FatFile.Close does that for files from Open. No data from
// DWARFSection may be used afterwards.
func (f *File) Close() error {
	c := &f.dwarf
	c.mu.Lock()
	defer c.mu.Unlock()
	var errs []error
	for _, e := range c.entries {
		if e.region != nil {
			errs = append(errs, e.region.Close())
		}
	}
	c.entries = nil
	return errors.Join(errs...)
}
