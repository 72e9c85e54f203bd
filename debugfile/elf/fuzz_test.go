package elf_test

import (
	"bytes"
	"errors"
	"testing"
	"unsafe"

	"github.com/backtrail/backtrail/debugfile/elf"
)

// FuzzNewFile parses arbitrary bytes and then uses every accessor, checking
// invariants rather than only the absence of panics.
func FuzzNewFile(f *testing.F) {
	for _, class := range []elf.Class{elf.ELFCLASS32, elf.ELFCLASS64} {
		for _, big := range []bool{false, true} {
			f.Add(sampleFile(class, big).build())
		}
	}
	ext := sampleFile(elf.ELFCLASS64, false)
	ext.extended = true
	f.Add(ext.build())
	noSecs := sampleFile(elf.ELFCLASS32, true)
	noSecs.noSecs = true
	f.Add(noSecs.build())
	// The fixtures under testdata are 0.1 to 1.4 MB, which makes mutation
	// slow; TestTruncated feeds crash's prefixes through the same checks.
	f.Add(shndxFile().build())
	f.Add(noteFile(8).build())
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := elf.NewFile(data)
		if err != nil {
			var fe *elf.FormatError
			if !errors.As(err, &fe) {
				t.Fatalf("NewFile error %v (%T) is not a FormatError", err, err)
			}
			return
		}
		exercise(t, data, file)
	})
}

// exercise calls every accessor of f, parsed from data, and checks that
// results lie inside data or have the size the file claims. Errors must be
// FormatErrors or ErrNoSymbols.
func exercise(t *testing.T, data []byte, f *elf.File) {
	t.Helper()
	defer func() {
		if err := f.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	}()
	checkErr := func(what string, err error) {
		t.Helper()
		var fe *elf.FormatError
		if err != nil && !errors.As(err, &fe) && !errors.Is(err, elf.ErrNoSymbols) {
			t.Errorf("%s: error %v (%T) is not a FormatError", what, err, err)
		}
	}
	inside := func(what string, b []byte) {
		t.Helper()
		if len(b) == 0 {
			return
		}
		// b must be a subslice of data.
		start := uintptr(unsafe.Pointer(unsafe.SliceData(data)))
		p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
		if p < start || p-start > uintptr(len(data)) || uintptr(len(b)) > uintptr(len(data))-(p-start) {
			t.Errorf("%s: %d bytes not inside the %d-byte input", what, len(b), len(data))
		}
	}
	for _, p := range f.Progs {
		b, err := p.Data()
		checkErr("Prog.Data", err)
		if err == nil {
			inside("Prog.Data", b)
			if uint64(len(b)) != p.Filesz || p.Off+p.Filesz > uint64(len(data)) {
				t.Errorf("program header %d: %d bytes, header says %#x at %#x", p.Index, len(b), p.Filesz, p.Off)
			}
		}
	}
	for _, s := range f.Sections {
		raw, err := s.Data()
		checkErr("Section.Data", err)
		if err == nil {
			inside("Section.Data", raw)
			if raw != nil && uint64(len(raw)) != s.Size {
				t.Errorf("section %d: %d bytes, sh_size %#x", s.Index, len(raw), s.Size)
			}
		}
		c, cerr := s.Compression()
		checkErr("Compression", cerr)
		b, err := f.SectionData(s)
		checkErr("SectionData", err)
		if err != nil {
			continue
		}
		switch {
		case c != nil:
			if uint64(len(b)) != c.Size {
				t.Errorf("section %d: decompressed %d bytes, header says %#x", s.Index, len(b), c.Size)
			}
			if c.Size > 4<<30 || (c.Size > 1<<20 && c.Size/1000 > uint64(len(raw))) {
				t.Errorf("section %d: decompressed %#x bytes from %#x", s.Index, c.Size, len(raw))
			}
		case cerr == nil:
			inside("SectionData", b)
			if len(b) != len(raw) {
				t.Errorf("section %d: SectionData %d bytes, raw %d", s.Index, len(b), len(raw))
			}
		}
	}
	for _, get := range []func() ([]elf.Symbol, error){f.Symbols, f.DynamicSymbols} {
		syms, err := get()
		checkErr("symbols", err)
		if len(syms) > len(data)/16 {
			t.Errorf("%d symbols from %d bytes", len(syms), len(data))
		}
		for _, s := range syms {
			_, _, _ = s.Type(), s.Bind(), s.Visibility()
		}
	}
	inside("BuildID", f.BuildID())
	_ = f.GoBuildID()
	_, _, _ = f.DebugLink()
	_, id, _ := f.DebugAltLink()
	inside("DebugAltLink", id)
	notes, err := f.Notes()
	checkErr("Notes", err)
	for _, n := range notes {
		inside("Note.Desc", n.Desc)
	}
	for _, name := range []string{"debug_info", "debug_line", "debug_str"} {
		_, err := f.DWARFSection(name)
		checkErr("DWARFSection", err)
	}
	// A copy is at most 1000 times the input (plus 1 MiB), as compressed
	// sections may claim; more means bytes written more than once.
	copied := cappedBuffer{max: 1000*len(data) + 1<<20}
	if err := f.WriteDecompressed(&copied); err == nil {
		g, err := elf.NewFile(copied.Bytes())
		switch {
		case err != nil:
			t.Errorf("WriteDecompressed wrote a file NewFile rejects: %v", err)
		case len(g.Sections) != len(f.Sections) || g.HasCompressedSections():
			t.Errorf("WriteDecompressed: %d sections (compressed: %v), want %d uncompressed", len(g.Sections), g.HasCompressedSections(), len(f.Sections))
		default:
			for i, s := range f.Sections {
				want, err := f.SectionData(s)
				if err != nil || s.Flags&elf.SHF_COMPRESSED == 0 {
					continue
				}
				if have, err := g.Sections[i].Data(); err != nil || !bytes.Equal(have, want) {
					t.Errorf("WriteDecompressed: section %d: %d bytes (%v), want %d", i, len(have), err, len(want))
				}
			}
		}
	} else if errors.Is(err, errOverCap) {
		t.Errorf("WriteDecompressed of %d bytes wrote more than %d", len(data), copied.max)
	} else {
		checkErr("WriteDecompressed", err)
	}
	_ = f.Features()
	base := f.ImageBase()
	if off, ok := f.VaddrToOffset(base); ok {
		if _, ok := f.OffsetToVaddr(off); !ok {
			t.Errorf("VaddrToOffset(%#x) = %#x, but OffsetToVaddr fails", base, off)
		}
	}
	_ = f.IsPIE()
}

// cappedBuffer is a bytes.Buffer that refuses to grow past max bytes.
type cappedBuffer struct {
	bytes.Buffer
	max int
}

var errOverCap = errors.New("cappedBuffer: over its limit")

func (b *cappedBuffer) Write(p []byte) (int, error) {
	if b.Len()+len(p) > b.max {
		return 0, errOverCap
	}
	return b.Buffer.Write(p)
}
