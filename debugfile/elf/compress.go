package elf

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"

	"github.com/klauspost/compress/zlib"
	"github.com/klauspost/compress/zstd"

	"github.com/backtrail/backtrail/internal/bin"
	"github.com/backtrail/backtrail/internal/mmap"
)

// Limits on the uncompressed size a compressed section may claim. They are
// checked before anything is allocated. Debug sections compress about 3–10×;
// zlib cannot exceed about 1032×, so a larger ratio is corrupt or hostile.
const (
	maxUncompressedSize = 4 << 30 // bytes
	maxRatio            = 1000    // uncompressed bytes per compressed byte
	ratioFloor          = 1 << 20 // sizes up to this are allowed at any ratio
)

// Compression describes how a section's bytes are compressed.
type Compression struct {
	Type       CompressionType // ELFCOMPRESS_ZLIB for legacy ".zdebug" sections
	GNU        bool            // legacy ".zdebug" format: "ZLIB" and a big-endian size
	Size       uint64          // uncompressed size (ch_size)
	Addralign  uint64          // uncompressed alignment (ch_addralign); 1 for ".zdebug"
	HeaderSize int             // bytes before the compressed stream
}

// Compression reports how the section is compressed: nil for a section that
// is not, an error when its compression header is truncated. A section is
// compressed when it has SHF_COMPRESSED (gABI Elf32_Chdr or Elf64_Chdr), or
// when its name starts with ".zdebug" and its data with "ZLIB" (GNU). A
// ".zdebug" section without the "ZLIB" magic is taken as uncompressed, as
// binutils does.
func (s *Section) Compression() (*Compression, error) {
	if !s.inFile() {
		return nil, nil
	}
	if s.Flags&SHF_COMPRESSED != 0 {
		raw, err := s.Data()
		if err != nil {
			return nil, err
		}
		f := s.f
		b := bin.New(s.Name+" compression header", s.Offset, raw, f.Data == ELFDATA2MSB)
		c := &Compression{Type: CompressionType(b.U32())}
		if f.Class == ELFCLASS32 {
			c.Size = uint64(b.U32())
			c.Addralign = uint64(b.U32())
		} else {
			b.U32() // ch_reserved
			c.Size = b.U64()
			c.Addralign = b.U64()
		}
		if err := b.Err(); err != nil {
			return nil, formatError(err)
		}
		c.HeaderSize = b.Pos()
		return c, nil
	}
	if strings.HasPrefix(s.Name, ".zdebug") {
		raw, err := s.Data()
		if err != nil {
			return nil, err
		}
		if len(raw) < 12 || string(raw[:4]) != "ZLIB" {
			return nil, nil
		}
		b := bin.New(s.Name, s.Offset+4, raw[4:12], true)
		return &Compression{Type: ELFCOMPRESS_ZLIB, GNU: true, Size: b.U64(), Addralign: 1, HeaderSize: 12}, nil
	}
	return nil, nil
}

// SectionData returns the contents of s: its raw bytes, or for a compressed
// section the decompressed bytes. It returns nil for sections without
// bytes in the file: SHT_NOBITS, SHT_NULL and the reserved section 0.
//
// A compressed section is decompressed once, on first request, into a
// mapping of an unlinked temporary file that Close frees; later calls
// return the same slice, which must not be modified. SectionData is safe
// for concurrent use.
func (f *File) SectionData(s *Section) ([]byte, error) {
	if s.f != f {
		return nil, errors.New("elf: SectionData: section of another file")
	}
	c, err := s.Compression()
	if err != nil || c == nil {
		if err != nil {
			return nil, err
		}
		return s.Data()
	}
	if f.closed.Load() {
		return nil, ErrClosed
	}
	s.once.Do(func() { s.data, s.err = f.decompress(s, c) })
	return s.data, s.err
}

// DWARFSection returns the decompressed contents of the DWARF section with
// the given name, which may be given without its leading dot: "debug_info"
// reads ".debug_info" or, failing that, ".zdebug_info". It returns nil and
// no error when the file has neither or only an SHT_NOBITS placeholder.
func (f *File) DWARFSection(name string) ([]byte, error) {
	name = strings.TrimPrefix(name, ".")
	s := f.Section("." + name)
	if s == nil && strings.HasPrefix(name, "debug_") {
		s = f.Section(".z" + name)
	}
	if s == nil {
		return nil, nil
	}
	return f.SectionData(s)
}

// maxTotal is the most that a file's compressed sections may claim together,
// and that WriteDecompressed may write: the per-section limit applied to the
// whole file. Section headers may share their bytes, so the per-section
// check alone would let a small file claim gigabytes many times over.
func (f *File) maxTotal() uint64 {
	return maxRatio*uint64(len(f.data)) + ratioFloor
}

// checkClaims checks, once, that the uncompressed sizes all compressed
// sections claim add up to at most maxTotal.
func (f *File) checkClaims() error {
	f.claimsOnce.Do(func() {
		var total uint64
		for _, s := range f.Sections {
			c, err := s.Compression()
			if err != nil || c == nil {
				continue
			}
			if total += min(c.Size, maxUncompressedSize); total > f.maxTotal() {
				f.claimsErr = &FormatError{Off: s.hdrOff, Msg: fmt.Sprintf("compressed sections up to section %d (%q) claim more than %d times the file's %#x bytes:", s.Index, s.Name, maxRatio, len(f.data)), Val: total}
				return
			}
		}
	})
	return f.claimsErr
}

// decompress inflates s into a new temporary-file mapping after bounding the size
// its header claims, and checks that the stream yields exactly that size.
func (f *File) decompress(s *Section, c *Compression) ([]byte, error) {
	raw, err := s.Data()
	if err != nil {
		return nil, err
	}
	src := raw[c.HeaderSize:]
	at := s.Offset + uint64(c.HeaderSize)
	what := fmt.Sprintf("section %d (%q)", s.Index, s.Name)
	switch {
	case c.Type != ELFCOMPRESS_ZLIB && c.Type != ELFCOMPRESS_ZSTD:
		return nil, &FormatError{Off: s.Offset, Msg: what + ": unsupported compression type", Val: c.Type}
	case c.Size > maxUncompressedSize || uint64(int(c.Size)) != c.Size:
		return nil, &FormatError{Off: s.Offset, Msg: fmt.Sprintf("%s: uncompressed size exceeds the %d GiB limit:", what, maxUncompressedSize>>30), Val: c.Size}
	case c.Size > ratioFloor && c.Size/maxRatio > uint64(len(src)):
		return nil, &FormatError{Off: s.Offset, Msg: fmt.Sprintf("%s: uncompressed size is more than %d times the %#x compressed bytes:", what, maxRatio, len(src)), Val: c.Size}
	}
	if err := f.checkClaims(); err != nil {
		return nil, err
	}
	if c.Size == 0 {
		if err := decode(c.Type, nil, src); err != nil {
			return nil, &FormatError{Off: at, Msg: fmt.Sprintf("%s: %v", what, err)}
		}
		return []byte{}, nil
	}
	r, err := mmap.Temp(int(c.Size))
	if err != nil {
		return nil, fmt.Errorf("elf: %s: %w", what, err)
	}
	if err := decode(c.Type, r.Data, src); err != nil {
		r.Close()
		return nil, &FormatError{Off: at, Msg: fmt.Sprintf("%s: %v", what, err)}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed.Load() {
		r.Close()
		return nil, ErrClosed
	}
	f.regions = append(f.regions, r)
	return r.Data, nil
}

// decode decompresses src into dst, which must be filled exactly.
func decode(t CompressionType, dst, src []byte) error {
	if t == ELFCOMPRESS_ZSTD {
		return unzstd(dst, src)
	}
	return inflate(dst, src)
}

func inflate(dst, src []byte) error {
	zr, err := zlib.NewReader(bytes.NewReader(src))
	if err != nil {
		return fmt.Errorf("zlib: %w", err)
	}
	defer zr.Close()
	n, err := io.ReadFull(zr, dst)
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return fmt.Errorf("zlib stream holds %#x bytes, the header says %#x", n, len(dst))
	}
	if err != nil {
		return fmt.Errorf("zlib: %w", err)
	}
	// Reading on to the end checks the Adler-32 checksum and that nothing
	// follows.
	var one [1]byte
	if _, err := io.ReadFull(zr, one[:]); err == nil {
		return fmt.Errorf("zlib stream holds more than the %#x bytes the header says", len(dst))
	} else if err != io.EOF {
		return fmt.Errorf("zlib: %w", err)
	}
	return nil
}

// zstdDecoder is shared: DecodeAll is safe for concurrent use and starts no
// goroutines. WithDecodeAllCapLimit makes it stop at cap(dst), so a stream
// cannot produce more than the header claimed.
var zstdDecoder = sync.OnceValues(func() (*zstd.Decoder, error) {
	return zstd.NewReader(nil, zstd.WithDecodeAllCapLimit(true))
})

func unzstd(dst, src []byte) error {
	d, err := zstdDecoder()
	if err != nil {
		return fmt.Errorf("zstd: %w", err)
	}
	out, err := d.DecodeAll(src, dst[:0])
	if err != nil {
		return fmt.Errorf("zstd: %w", err)
	}
	if len(out) != len(dst) {
		return fmt.Errorf("zstd stream holds %#x bytes, the header says %#x", len(out), len(dst))
	}
	if len(out) > 0 && &out[0] != &dst[0] {
		copy(dst, out) // the decoder moved to a buffer of its own
	}
	return nil
}

// HasCompressedSections reports whether any section with bytes in the file
// has SHF_COMPRESSED: the sections WriteDecompressed inflates.
func (f *File) HasCompressedSections() bool {
	for _, s := range f.Sections {
		if s.Flags&SHF_COMPRESSED != 0 && s.inFile() {
			return true
		}
	}
	return false
}

// WriteDecompressed writes a copy of the file to w in which every
// SHF_COMPRESSED section is stored inflated, as objcopy
// --decompress-debug-sections does: readers of the copy map its debug
// sections instead of inflating them again, which for a distribution's
// libc debug file is most of the cost of a first query. Legacy ".zdebug"
// sections are copied as they are.
//
// Everything up to the end of the program header table and of the last
// SHF_ALLOC section keeps its offset, so segments still describe the same
// bytes; the other sections follow in their original order, then the
// section header table. Only files whose section headers have the
// standard size are supported.
func (f *File) WriteDecompressed(w io.Writer) error {
	if f.closed.Load() {
		return ErrClosed
	}
	lay := layout64
	if f.Class == ELFCLASS32 {
		lay = layout32
	}
	if len(f.Sections) == 0 {
		_, err := w.Write(f.data)
		return err
	}
	if n := f.ByteOrder.Uint16(f.data[lay.phentsize+4:]); int(n) != lay.shdrSize {
		return &FormatError{Off: lay.phentsize + 4, Msg: "WriteDecompressed: e_shentsize is not the standard size", Val: n}
	}
	prefix := uint64(lay.size)
	for _, p := range f.Progs {
		prefix = max(prefix, p.hdrOff+uint64(lay.phdrSize))
	}
	for _, s := range f.Sections {
		if s.Flags&SHF_ALLOC != 0 && s.inFile() {
			if s.Flags&SHF_COMPRESSED != 0 {
				return &FormatError{Off: s.hdrOff, Msg: fmt.Sprintf("section %d (%q): SHF_COMPRESSED with SHF_ALLOC", s.Index, s.Name)}
			}
			prefix = max(prefix, s.Offset+s.Size)
		}
	}
	if prefix > uint64(len(f.data)) {
		return &FormatError{Off: 0, Msg: fmt.Sprintf("WriteDecompressed: headers and allocated sections end past the end of the file (size %#x) at", len(f.data)), Val: prefix}
	}

	// Lay the other sections out after the prefix, then write.
	type placed struct {
		off, size, align uint64
		flags            SectionFlag
		c                *Compression
	}
	out := make([]placed, len(f.Sections))
	pos := prefix
	for i, s := range f.Sections {
		p := placed{off: s.Offset, size: s.Size, align: s.Addralign, flags: s.Flags}
		if s.inFile() && s.Flags&SHF_ALLOC == 0 {
			if s.Flags&SHF_COMPRESSED != 0 {
				c, err := s.Compression()
				if err != nil {
					return err
				}
				p.size, p.align, p.flags, p.c = c.Size, c.Addralign, s.Flags&^SHF_COMPRESSED, c
			}
			if p.align > maxCopyAlign {
				return &FormatError{Off: s.hdrOff, Msg: fmt.Sprintf("WriteDecompressed: section %d (%q): alignment above %#x:", s.Index, s.Name, maxCopyAlign), Val: p.align}
			}
			pos = alignUp(pos, p.align)
			p.off = pos
			pos += p.size
		}
		out[i] = p
	}
	newShoff := alignUp(pos, 8)
	if newShoff > f.maxTotal() {
		// Section headers that share their bytes would be written out
		// once each.
		return &FormatError{Off: 0, Msg: fmt.Sprintf("WriteDecompressed: the sections would make a file of more than %d times the input's %#x bytes:", maxRatio, len(f.data)), Val: newShoff}
	}

	bw := bufio.NewWriterSize(w, 1<<20)
	head := slices.Clone(f.data[:prefix])
	if f.Class == ELFCLASS32 {
		f.ByteOrder.PutUint32(head[lay.shoff:], uint32(newShoff))
	} else {
		f.ByteOrder.PutUint64(head[lay.shoff:], newShoff)
	}
	bw.Write(head)
	at := prefix
	pad := func(to uint64) {
		for ; at < to; at++ {
			bw.WriteByte(0)
		}
	}
	for i, s := range f.Sections {
		p := out[i]
		if p.off < prefix || !s.inFile() {
			continue // no bytes in the file, or in the prefix already
		}
		data, err := f.SectionData(s)
		if p.c == nil {
			data, err = s.Data()
		}
		if err != nil {
			return err
		}
		pad(p.off)
		bw.Write(data)
		at += uint64(len(data))
	}
	pad(newShoff)
	for i, s := range f.Sections {
		p := out[i]
		h := slices.Clone(f.data[s.hdrOff : s.hdrOff+uint64(lay.shdrSize)])
		if f.Class == ELFCLASS32 {
			f.ByteOrder.PutUint32(h[8:], uint32(p.flags))
			f.ByteOrder.PutUint32(h[16:], uint32(p.off))
			f.ByteOrder.PutUint32(h[20:], uint32(p.size))
			f.ByteOrder.PutUint32(h[32:], uint32(p.align))
		} else {
			f.ByteOrder.PutUint64(h[8:], uint64(p.flags))
			f.ByteOrder.PutUint64(h[24:], p.off)
			f.ByteOrder.PutUint64(h[32:], p.size)
			f.ByteOrder.PutUint64(h[48:], p.align)
		}
		bw.Write(h)
	}
	return bw.Flush()
}

// maxCopyAlign bounds the alignment WriteDecompressed pads a section to:
// real sections ask for a few bytes, a page at most.
const maxCopyAlign = 1 << 16

func alignUp(n, align uint64) uint64 {
	if align <= 1 || align&(align-1) != 0 {
		return n
	}
	return (n + align - 1) &^ (align - 1)
}
