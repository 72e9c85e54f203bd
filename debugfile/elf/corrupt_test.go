package elf_test

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/backtrail/backtrail/debugfile/elf"
)

// wantFormatError checks that err is a FormatError at offset off whose
// message contains msg.
func wantFormatError(t *testing.T, what string, err error, off uint64, msg string) {
	t.Helper()
	var fe *elf.FormatError
	if !errors.As(err, &fe) {
		t.Errorf("%s: error %v, want a FormatError", what, err)
		return
	}
	if fe.Off != off || !strings.Contains(err.Error(), msg) {
		t.Errorf("%s: error %q (offset %#x), want %q at offset %#x", what, err, fe.Off, msg, off)
	}
}

// TestCorruptHeaders damages one field of the sample file's headers at a
// time. Offsets are those of ELF64 (gABI "ELF Header", "Section Header").
func TestCorruptHeaders(t *testing.T) {
	good, lay := sampleFile(elf.ELFCLASS64, false).buildLayout()
	le := binary.LittleEndian
	shdr := func(i int) uint64 { return lay.shoff + uint64(i)*64 }
	nsec := len(lay.secOff)
	tests := []struct {
		name   string
		change func(b []byte) []byte
		off    uint64
		msg    string
	}{
		{"empty", func(b []byte) []byte { return nil }, 0, "too short for the ELF identification: size 0x0"},
		{"ident only", func(b []byte) []byte { return b[:16] }, 0, "too short for the 64-byte ELFCLASS64 header"},
		{"header-1", func(b []byte) []byte { return b[:63] }, 0, "size 0x3f"},
		{"magic", func(b []byte) []byte { b[3] = 'X'; return b }, 0, "bad magic number 7f 45 4c 58"},
		{"class", func(b []byte) []byte { b[4] = 3; return b }, 4, "unknown class 3"},
		{"data", func(b []byte) []byte { b[5] = 0; return b }, 5, "unknown data encoding ELFDATANONE"},
		{"EI_VERSION", func(b []byte) []byte { b[6] = 2; return b }, 6, "unknown EI_VERSION 2"},
		{"e_version", func(b []byte) []byte { le.PutUint32(b[20:], 9); return b }, 20, "unknown e_version 0x9"},
		{"e_shentsize", func(b []byte) []byte { le.PutUint16(b[58:], 40); return b }, 58, "e_shentsize smaller than a 64-byte section header: 0x28"},
		{"e_shoff", func(b []byte) []byte { le.PutUint64(b[40:], uint64(len(b))); return b }, 40, "e_shoff past the end of the file"},
		{"e_shnum", func(b []byte) []byte { le.PutUint16(b[60:], 0xfe00); return b }, 40, "section header table (65024 entries of 0x40 bytes) runs past the end"},
		{"e_shstrndx", func(b []byte) []byte { le.PutUint16(b[62:], uint16(nsec)); return b }, 62, "section name table index out of range"},
		{"e_phentsize", func(b []byte) []byte { le.PutUint16(b[54:], 8); return b }, 54, "e_phentsize smaller than a 56-byte program header: 0x8"},
		{"e_phnum", func(b []byte) []byte { le.PutUint16(b[56:], 0xfff0); return b }, 32, "program header table (65520 entries of 0x38 bytes) runs past the end"},
		{"e_phoff", func(b []byte) []byte { le.PutUint64(b[32:], 1<<63); return b }, 32, "e_phoff 0x8000000000000000"},
		{"sh_name", func(b []byte) []byte { le.PutUint32(b[shdr(3):], 1<<20); return b }, shdr(3), "section 3: sh_name past the end"},
		{"shstrtab sh_offset", func(b []byte) []byte { le.PutUint64(b[shdr(nsec-1)+24:], 1<<40); return b }, shdr(nsec - 1), `section 17 (""): sh_offset+sh_size [0x10000000000,`},
		{"truncated section headers", func(b []byte) []byte { return b[:len(b)-1] }, 40, "runs past the end of the file"},
	}
	for _, tt := range tests {
		b := tt.change(append([]byte(nil), good...))
		f, err := elf.NewFile(b)
		if err == nil {
			f.Close()
		}
		wantFormatError(t, tt.name, err, tt.off, tt.msg)
	}
}

// TestCorruptTables damages data that NewFile does not read, so only the
// accessor that needs it fails.
func TestCorruptTables(t *testing.T) {
	good, lay := sampleFile(elf.ELFCLASS64, false).buildLayout()
	le := binary.LittleEndian
	shdr := func(i int) uint64 { return lay.shoff + uint64(i)*64 }

	t.Run("section data", func(t *testing.T) {
		b := append([]byte(nil), good...)
		le.PutUint64(b[shdr(3)+32:], 1<<20) // .text sh_size
		f := newFile(t, b)
		_, err := f.Section(".text").Data()
		wantFormatError(t, ".text", err, shdr(3), `section 3 (".text"): sh_offset+sh_size`)
	})
	t.Run("st_name", func(t *testing.T) {
		b := append([]byte(nil), good...)
		le.PutUint32(b[lay.secOff[6]+2*24:], 1<<20) // symbol 2 of .symtab
		f := newFile(t, b)
		_, err := f.Symbols()
		wantFormatError(t, "Symbols", err, lay.secOff[6]+2*24, ".symtab symbol 2: st_name past the end")
	})
	t.Run("sh_link", func(t *testing.T) {
		b := append([]byte(nil), good...)
		le.PutUint32(b[shdr(6)+40:], 99)
		f := newFile(t, b)
		_, err := f.Symbols()
		wantFormatError(t, "Symbols", err, shdr(6), `section 6 (".symtab"): sh_link is not a section index: 0x63`)
	})
	t.Run("sh_entsize", func(t *testing.T) {
		b := append([]byte(nil), good...)
		le.PutUint64(b[shdr(6)+56:], 8)
		f := newFile(t, b)
		_, err := f.Symbols()
		wantFormatError(t, "Symbols", err, shdr(6), "sh_entsize smaller than a 24-byte symbol: 0x8")
	})
	t.Run("compressed symtab", func(t *testing.T) {
		b := append([]byte(nil), good...)
		le.PutUint64(b[shdr(6)+8:], uint64(elf.SHF_COMPRESSED))
		f := newFile(t, b)
		_, err := f.Symbols()
		wantFormatError(t, "Symbols", err, shdr(6), `section 6 (".symtab"): compressed SHT_SYMTAB not supported`)
	})
	t.Run("note", func(t *testing.T) {
		b := append([]byte(nil), good...)
		le.PutUint32(b[lay.secOff[1]+4:], 0x7fffffff) // descsz of the build ID
		f := newFile(t, b)
		if id := f.BuildID(); id != nil {
			t.Errorf("BuildID = %x from a broken note", id)
		}
		_, err := f.Notes()
		wantFormatError(t, "Notes", err, lay.secOff[1]+16, ".note.gnu.build-id: need 2147483647 bytes")
	})
}

// TestCompressionLimits checks the bounds on what a compressed section may
// claim, and that the stream must yield exactly the claimed size.
func TestCompressionLimits(t *testing.T) {
	payload := sampleDWARF(3000)
	z, zs := zlibBytes(payload), zstdBytes(payload)
	bad := append([]byte(nil), z...)
	bad[len(bad)-1] ^= 0xff // Adler-32
	tests := []struct {
		name string
		body func(t *tfile) []byte
		msg  string
	}{
		{"over 4 GiB", func(t *tfile) []byte { return t.chdr(elf.ELFCOMPRESS_ZLIB, 5<<30, z) }, "uncompressed size exceeds the 4 GiB limit: 0x140000000"},
		{"ratio", func(t *tfile) []byte { return t.chdr(elf.ELFCOMPRESS_ZSTD, 64<<20, zs) }, "uncompressed size is more than 1000 times"},
		{"gnu ratio", func(t *tfile) []byte { return zdebug(1<<30, z) }, "uncompressed size is more than 1000 times"},
		{"zlib short", func(t *tfile) []byte { return t.chdr(elf.ELFCOMPRESS_ZLIB, 3001, z) }, "zlib stream holds 0xbb8 bytes, the header says 0xbb9"},
		{"zlib long", func(t *tfile) []byte { return t.chdr(elf.ELFCOMPRESS_ZLIB, 2999, z) }, "zlib stream holds more than the 0xbb7 bytes"},
		{"zlib checksum", func(t *tfile) []byte { return t.chdr(elf.ELFCOMPRESS_ZLIB, 3000, bad) }, "zlib: zlib: invalid checksum"},
		{"zstd short", func(t *tfile) []byte { return t.chdr(elf.ELFCOMPRESS_ZSTD, 3001, zs) }, "zstd"},
		{"zstd long", func(t *tfile) []byte { return t.chdr(elf.ELFCOMPRESS_ZSTD, 2999, zs) }, "zstd"},
		{"zstd garbage", func(t *tfile) []byte { return t.chdr(elf.ELFCOMPRESS_ZSTD, 3000, z) }, "zstd"},
		{"type", func(t *tfile) []byte { return t.chdr(7, 3000, z) }, "unsupported compression type 7"},
		{"gnu short", func(t *tfile) []byte { return zdebug(3001, z) }, "zlib stream holds 0xbb8 bytes"},
		{"truncated header", func(t *tfile) []byte { h := t.chdr(elf.ELFCOMPRESS_ZLIB, 3000, nil); return h[:len(h)-4] }, ".debug_info compression header: need"},
	}
	for _, class := range []elf.Class{elf.ELFCLASS32, elf.ELFCLASS64} {
		for _, tt := range tests {
			tf := &tfile{class: class}
			body := tt.body(tf)
			name, flags := ".debug_info", elf.SHF_COMPRESSED
			if string(body[:min(4, len(body))]) == "ZLIB" {
				name, flags = ".zdebug_info", 0
			}
			if class == elf.ELFCLASS32 && tt.name == "over 4 GiB" {
				continue // ch_size has 32 bits
			}
			tf.secs = []tsec{{name: name, typ: elf.SHT_PROGBITS, flags: flags, data: body}}
			f := newFile(t, tf.build())
			b, err := f.DWARFSection("debug_info")
			if err == nil {
				t.Errorf("%v %s: %d bytes, no error", class, tt.name, len(b))
				continue
			}
			var fe *elf.FormatError
			if !errors.As(err, &fe) || !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("%v %s: error %q, want a FormatError with %q", class, tt.name, err, tt.msg)
			}
			// The error is cached with the section.
			if _, err2 := f.DWARFSection("debug_info"); err2 == nil || err2.Error() != err.Error() {
				t.Errorf("%v %s: second call: %v", class, tt.name, err2)
			}
		}
	}
}

// TestCompressionTotal checks the bound on what the compressed sections of
// a file claim together: zstd turns 1 MiB of zeros into a few bytes, which a
// section may claim on its own, but many such sections in a small file are
// a decompression bomb.
func TestCompressionTotal(t *testing.T) {
	zeros := zstdBytes(make([]byte, 1<<20))
	for _, tt := range []struct {
		sections int
		ok       bool
	}{{1, true}, {40, false}} {
		tf := &tfile{class: elf.ELFCLASS64}
		for i := range tt.sections {
			tf.secs = append(tf.secs, tsec{name: fmt.Sprintf(".debug_x%d", i), typ: elf.SHT_PROGBITS, flags: elf.SHF_COMPRESSED, align: 1,
				data: tf.chdr(elf.ELFCOMPRESS_ZSTD, 1<<20, zeros)})
		}
		data := tf.build()
		f := newFile(t, data)
		for _, s := range f.Sections {
			if s.Flags&elf.SHF_COMPRESSED == 0 {
				continue
			}
			b, err := f.SectionData(s)
			var fe *elf.FormatError
			switch {
			case tt.ok && (err != nil || len(b) != 1<<20):
				t.Errorf("%d sections in %d bytes: section %d: %d bytes, %v", tt.sections, len(data), s.Index, len(b), err)
			case !tt.ok && (!errors.As(err, &fe) || !strings.Contains(err.Error(), "claim more than 1000 times")):
				t.Errorf("%d sections in %d bytes: section %d: %d bytes, error %v; want the total claimed refused", tt.sections, len(data), s.Index, len(b), err)
			}
		}
		if err := f.WriteDecompressed(io.Discard); (err == nil) != tt.ok {
			t.Errorf("%d sections: WriteDecompressed: %v", tt.sections, err)
		}
	}
}

// TestTruncated parses every prefix of the sample files and a selection of
// prefixes of the crash fixture; nothing may panic, and every error must be
// a FormatError.
func TestTruncated(t *testing.T) {
	inputs := [][]byte{
		sampleFile(elf.ELFCLASS32, true).build(),
		sampleFile(elf.ELFCLASS64, false).build(),
	}
	for _, data := range inputs {
		for n := 0; n <= len(data); n++ {
			checkPrefix(t, data[:n:n])
		}
	}
	crash, err := os.ReadFile("../../testdata/sentry-symbolic/linux/crash")
	if err != nil {
		t.Fatal(err)
	}
	for n := 0; n <= len(crash); n += 997 {
		checkPrefix(t, crash[:n:n])
	}
	checkPrefix(t, crash[:len(crash)-1])
}

func checkPrefix(t *testing.T, data []byte) {
	t.Helper()
	f, err := elf.NewFile(data)
	if err != nil {
		var fe *elf.FormatError
		if !errors.As(err, &fe) {
			t.Fatalf("%d bytes: %v is not a FormatError", len(data), err)
		}
		return
	}
	exercise(t, data, f)
}

// TestReservedSectionCompressed gives section 0, which is reserved, a type
// and SHF_COMPRESSED, as the fuzzer once did. It has no bytes in the file
// whatever its header says: Data and SectionData return none,
// HasCompressedSections ignores it, and WriteDecompressed copies its header
// as it is while inflating the real compressed sections.
func TestReservedSectionCompressed(t *testing.T) {
	data, lay := sampleFile(elf.ELFCLASS64, false).buildLayout()
	binary.LittleEndian.PutUint32(data[lay.shoff+4:], uint32(elf.SHT_PROGBITS))
	binary.LittleEndian.PutUint64(data[lay.shoff+8:], uint64(elf.SHF_COMPRESSED))
	binary.LittleEndian.PutUint64(data[lay.shoff+32:], 64) // sh_size
	f := newFile(t, data)
	s0 := f.Sections[0]
	if b, err := s0.Data(); b != nil || err != nil {
		t.Errorf("section 0: Data() = %d bytes, %v; want none", len(b), err)
	}
	if b, err := f.SectionData(s0); b != nil || err != nil {
		t.Errorf("section 0: SectionData = %d bytes, %v; want none", len(b), err)
	}
	if !f.HasCompressedSections() {
		t.Fatal("HasCompressedSections() = false; the sample's debug sections are compressed")
	}
	var copied cappedBuffer
	copied.max = 1 << 20
	if err := f.WriteDecompressed(&copied); err != nil {
		t.Fatal(err)
	}
	g := newFile(t, copied.Bytes())
	if g.HasCompressedSections() {
		t.Error("the copy still has compressed sections")
	}
	if s := g.Sections[0]; s.Type != elf.SHT_PROGBITS || s.Flags != elf.SHF_COMPRESSED {
		t.Errorf("the copy's section 0 has type %v and flags %v, want the original's", s.Type, s.Flags)
	}
	exercise(t, data, f)
}
