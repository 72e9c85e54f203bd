package elf_test

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"

	"github.com/klauspost/compress/zstd"

	"github.com/backtrail/backtrail/debugfile/elf"
)

// tfile describes a small ELF file for tests; build lays it out. Section 0
// (SHT_NULL) and a trailing .shstrtab are added by build.
type tfile struct {
	class   elf.Class
	big     bool
	typ     elf.Type
	machine elf.Machine
	secs    []tsec
	progs   []tprog

	extended bool // store section and segment counts in section 0 (e_shnum 0, SHN_XINDEX, PN_XNUM)
	noSecs   bool // omit the section header table (e_shoff 0)
}

type tsec struct {
	name    string
	typ     elf.SectionType
	flags   elf.SectionFlag
	addr    uint64
	link    uint32
	info    uint32
	align   uint64
	entsize uint64
	data    []byte
	size    uint64 // sh_size for SHT_NOBITS
}

// tprog is a program header; when sec > 0 it covers that section's bytes.
type tprog struct {
	typ    elf.ProgType
	flags  elf.ProgFlag
	sec    int
	off    uint64
	vaddr  uint64
	filesz uint64
	memsz  uint64
	align  uint64
}

// offsets of the parts of a built file, for corrupting it.
type layout struct {
	phoff, shoff uint64
	secOff       []uint64 // file offset of each section's data, by index
}

type byteOrder interface {
	binary.ByteOrder
	binary.AppendByteOrder
}

func (t *tfile) order() byteOrder {
	if t.big {
		return binary.BigEndian
	}
	return binary.LittleEndian
}

func (t *tfile) is64() bool { return t.class != elf.ELFCLASS32 }

// word appends a class-sized word.
func (t *tfile) word(b []byte, v uint64) []byte {
	if t.is64() {
		return t.order().AppendUint64(b, v)
	}
	return t.order().AppendUint32(b, uint32(v))
}

func (t *tfile) build() []byte {
	b, _ := t.buildLayout()
	return b
}

func (t *tfile) buildLayout() ([]byte, layout) {
	if t.class == 0 {
		t.class = elf.ELFCLASS64
	}
	bo := t.order()
	secs := append([]tsec{{}}, t.secs...)
	var shstr []byte
	shstr = append(shstr, 0)
	nameOff := make([]uint32, len(secs)+1)
	for i, s := range secs {
		if s.name != "" {
			nameOff[i] = uint32(len(shstr))
			shstr = append(append(shstr, s.name...), 0)
		}
	}
	nameOff[len(secs)] = uint32(len(shstr))
	shstr = append(append(shstr, ".shstrtab"...), 0)
	secs = append(secs, tsec{name: ".shstrtab", typ: elf.SHT_STRTAB, data: shstr, align: 1})
	shstrndx := len(secs) - 1

	ehsize, phsize, shsize := 52, 32, 40
	if t.is64() {
		ehsize, phsize, shsize = 64, 56, 64
	}
	var lay layout
	lay.phoff = uint64(ehsize)
	if len(t.progs) == 0 {
		lay.phoff = 0
	}
	off := uint64(ehsize + phsize*len(t.progs))
	lay.secOff = make([]uint64, len(secs))
	body := []byte{}
	for i, s := range secs {
		if i == 0 || s.typ == elf.SHT_NOBITS {
			lay.secOff[i] = off
			continue
		}
		a := max(s.align, 1)
		for off%a != 0 {
			off++
			body = append(body, 0)
		}
		lay.secOff[i] = off
		body = append(body, s.data...)
		off += uint64(len(s.data))
	}
	for off%8 != 0 {
		off++
		body = append(body, 0)
	}
	lay.shoff = off
	if t.noSecs {
		lay.shoff = 0
	}

	var b []byte
	b = append(b, elf.ELFMAG...)
	data := byte(elf.ELFDATA2LSB)
	if t.big {
		data = byte(elf.ELFDATA2MSB)
	}
	b = append(b, byte(t.class), data, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0)
	typ := t.typ
	if typ == 0 {
		typ = elf.ET_DYN
	}
	machine := t.machine
	if machine == 0 {
		machine = elf.EM_X86_64
	}
	b = bo.AppendUint16(b, uint16(typ))
	b = bo.AppendUint16(b, uint16(machine))
	b = bo.AppendUint32(b, 1)
	b = t.word(b, 0x1000) // e_entry
	b = t.word(b, lay.phoff)
	b = t.word(b, lay.shoff)
	b = bo.AppendUint32(b, 0)
	b = bo.AppendUint16(b, uint16(ehsize))
	b = bo.AppendUint16(b, uint16(phsize))
	phnum, shnum, strndx := len(t.progs), len(secs), shstrndx
	if t.noSecs {
		shnum, strndx = 0, 0
	}
	if t.extended {
		phnum, shnum, strndx = elf.PN_XNUM, 0, int(elf.SHN_XINDEX)
	}
	b = bo.AppendUint16(b, uint16(phnum))
	b = bo.AppendUint16(b, uint16(shsize))
	b = bo.AppendUint16(b, uint16(shnum))
	b = bo.AppendUint16(b, uint16(strndx))

	for _, p := range t.progs {
		off, filesz, vaddr := p.off, p.filesz, p.vaddr
		if p.sec > 0 {
			off, filesz = lay.secOff[p.sec], uint64(len(secs[p.sec].data))
			if vaddr == 0 {
				vaddr = secs[p.sec].addr
			}
		}
		memsz := max(p.memsz, filesz)
		b = bo.AppendUint32(b, uint32(p.typ))
		if t.is64() {
			b = bo.AppendUint32(b, uint32(p.flags))
			b = bo.AppendUint64(b, off)
			b = bo.AppendUint64(b, vaddr)
			b = bo.AppendUint64(b, vaddr)
			b = bo.AppendUint64(b, filesz)
			b = bo.AppendUint64(b, memsz)
			b = bo.AppendUint64(b, p.align)
		} else {
			for _, v := range []uint64{off, vaddr, vaddr, filesz, memsz} {
				b = bo.AppendUint32(b, uint32(v))
			}
			b = bo.AppendUint32(b, uint32(p.flags))
			b = bo.AppendUint32(b, uint32(p.align))
		}
	}
	b = append(b, body...)
	if t.noSecs {
		return b, lay
	}
	for i, s := range secs {
		size := uint64(len(s.data))
		if s.typ == elf.SHT_NOBITS {
			size = s.size
		}
		link, info := s.link, s.info
		if i == 0 {
			size, link, info = 0, 0, 0
			if t.extended {
				size, link, info = uint64(len(secs)), uint32(shstrndx), uint32(len(t.progs))
			}
		}
		b = bo.AppendUint32(b, nameOff[i])
		b = bo.AppendUint32(b, uint32(s.typ))
		b = t.word(b, uint64(s.flags))
		b = t.word(b, s.addr)
		b = t.word(b, lay.secOff[i])
		b = t.word(b, size)
		b = bo.AppendUint32(b, link)
		b = bo.AppendUint32(b, info)
		b = t.word(b, s.align)
		b = t.word(b, s.entsize)
	}
	return b, lay
}

// tsym is a symbol for symtab.
type tsym struct {
	name  string
	info  uint8
	other uint8
	shndx uint16
	value uint64
	size  uint64
}

// symtab returns a symbol table (with the null symbol first) and its string
// table.
func (t *tfile) symtab(syms []tsym) (tab, strs []byte) {
	if t.class == 0 {
		t.class = elf.ELFCLASS64
	}
	bo := t.order()
	strs = []byte{0}
	if t.is64() {
		tab = make([]byte, 24)
	} else {
		tab = make([]byte, 16)
	}
	for _, s := range syms {
		name := uint32(0)
		if s.name != "" {
			name = uint32(len(strs))
			strs = append(append(strs, s.name...), 0)
		}
		tab = bo.AppendUint32(tab, name)
		if t.is64() {
			tab = append(tab, s.info, s.other)
			tab = bo.AppendUint16(tab, s.shndx)
			tab = bo.AppendUint64(tab, s.value)
			tab = bo.AppendUint64(tab, s.size)
		} else {
			tab = bo.AppendUint32(tab, uint32(s.value))
			tab = bo.AppendUint32(tab, uint32(s.size))
			tab = append(tab, s.info, s.other)
			tab = bo.AppendUint16(tab, s.shndx)
		}
	}
	return tab, strs
}

// note returns one note, padded for the given alignment.
func (t *tfile) note(align int, name string, typ uint32, desc []byte) []byte {
	bo := t.order()
	var b []byte
	b = bo.AppendUint32(b, uint32(len(name)+1))
	b = bo.AppendUint32(b, uint32(len(desc)))
	b = bo.AppendUint32(b, typ)
	b = append(append(b, name...), 0)
	for len(b)%align != 0 {
		b = append(b, 0)
	}
	b = append(b, desc...)
	for len(b)%align != 0 {
		b = append(b, 0)
	}
	return b
}

// chdr returns an SHF_COMPRESSED section body: the class's Elf_Chdr
// followed by stream.
func (t *tfile) chdr(typ elf.CompressionType, size uint64, stream []byte) []byte {
	if t.class == 0 {
		t.class = elf.ELFCLASS64
	}
	bo := t.order()
	var b []byte
	b = bo.AppendUint32(b, uint32(typ))
	if t.is64() {
		b = bo.AppendUint32(b, 0)
		b = bo.AppendUint64(b, size)
		b = bo.AppendUint64(b, 1)
	} else {
		b = bo.AppendUint32(b, uint32(size))
		b = bo.AppendUint32(b, 1)
	}
	return append(b, stream...)
}

// zdebug returns a GNU ".zdebug" section body.
func zdebug(size uint64, stream []byte) []byte {
	b := binary.BigEndian.AppendUint64([]byte("ZLIB"), size)
	return append(b, stream...)
}

func zlibBytes(data []byte) []byte {
	var buf bytes.Buffer
	w := zlib.NewWriter(&buf)
	w.Write(data)
	w.Close()
	return buf.Bytes()
}

func zstdBytes(data []byte) []byte {
	e, err := zstd.NewWriter(nil)
	if err != nil {
		panic(err)
	}
	defer e.Close()
	return e.EncodeAll(data, nil)
}

// sampleDWARF is stand-in section contents: compressible, not all the same.
func sampleDWARF(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7) ^ byte(i>>5)
	}
	return b
}

// sampleFile returns a small file with every feature the reader supports:
// PT_LOAD and PT_NOTE segments, a GNU build ID note (in both), a Go build ID
// note, symbols with versions, a debug link, a zlib and a zstd compressed
// section and a ".zdebug" one.
func sampleFile(class elf.Class, big bool) *tfile {
	t := &tfile{class: class, big: big, typ: elf.ET_DYN, machine: elf.EM_X86_64}
	if big {
		t.machine = elf.EM_PPC64
	}
	buildID := []byte{0xf1, 0xc3, 0xbc, 0xc0, 0x27, 0x98, 0x65, 0xfe}
	info := sampleDWARF(3000)
	syms, strs := t.symtab([]tsym{
		{name: "hello.c", info: 4, shndx: uint16(elf.SHN_ABS)},
		{name: "main", info: 0x12, shndx: 3, value: 0x1000, size: 0x20},
		{name: "data", info: 0x11, shndx: 4, value: 0x2000, size: 8},
		{name: "weak", info: 0x22, shndx: 3, value: 0x1020, size: 4},
	})
	dynsyms, dynstr := t.symtab([]tsym{
		{name: "printf", info: 0x12},
		{name: "main", info: 0x12, shndx: 3, value: 0x1000, size: 0x20},
	})
	dynstr = append(dynstr, "libc.so.6\x00GLIBC_2.2.5\x00"...)
	libc := uint32(len(dynstr) - len("libc.so.6\x00GLIBC_2.2.5\x00"))
	glibc := libc + uint32(len("libc.so.6\x00"))
	bo := t.order()
	var versym []byte
	for _, v := range []uint16{0, 2, 1} {
		versym = bo.AppendUint16(versym, v)
	}
	var verneed []byte
	verneed = bo.AppendUint16(verneed, 1) // vn_version
	verneed = bo.AppendUint16(verneed, 1) // vn_cnt
	verneed = bo.AppendUint32(verneed, libc)
	verneed = bo.AppendUint32(verneed, 16) // vn_aux
	verneed = bo.AppendUint32(verneed, 0)  // vn_next
	verneed = bo.AppendUint32(verneed, 0x09691a75)
	verneed = bo.AppendUint16(verneed, 0) // vna_flags
	verneed = bo.AppendUint16(verneed, 2) // vna_other
	verneed = bo.AppendUint32(verneed, glibc)
	verneed = bo.AppendUint32(verneed, 0)
	gnuNote := t.note(4, "GNU", 3, buildID)
	goNote := t.note(4, "Go", 4, []byte("abc/def"))
	debuglink := append([]byte("sample.debug\x00\x00\x00\x00"), bo.AppendUint32(nil, 0xdeadbeef)...)
	t.secs = []tsec{
		/* 1 */ {name: ".note.gnu.build-id", typ: elf.SHT_NOTE, flags: elf.SHF_ALLOC, addr: 0x200, align: 4, data: gnuNote},
		/* 2 */ {name: ".note.go.buildid", typ: elf.SHT_NOTE, flags: elf.SHF_ALLOC, addr: 0x240, align: 4, data: goNote},
		/* 3 */ {name: ".text", typ: elf.SHT_PROGBITS, flags: elf.SHF_ALLOC | elf.SHF_EXECINSTR, addr: 0x1000, align: 16, data: bytes.Repeat([]byte{0x90}, 0x40)},
		/* 4 */ {name: ".data", typ: elf.SHT_PROGBITS, flags: elf.SHF_ALLOC | elf.SHF_WRITE, addr: 0x2000, align: 8, data: make([]byte, 16)},
		/* 5 */ {name: ".bss", typ: elf.SHT_NOBITS, flags: elf.SHF_ALLOC | elf.SHF_WRITE, addr: 0x2010, align: 8, size: 0x100},
		/* 6 */ {name: ".symtab", typ: elf.SHT_SYMTAB, link: 7, info: 2, align: 8, data: syms},
		/* 7 */ {name: ".strtab", typ: elf.SHT_STRTAB, align: 1, data: strs},
		/* 8 */ {name: ".dynsym", typ: elf.SHT_DYNSYM, flags: elf.SHF_ALLOC, link: 9, info: 1, align: 8, data: dynsyms},
		/* 9 */ {name: ".dynstr", typ: elf.SHT_STRTAB, flags: elf.SHF_ALLOC, align: 1, data: dynstr},
		/* 10 */ {name: ".gnu.version", typ: elf.SHT_GNU_versym, flags: elf.SHF_ALLOC, link: 8, align: 2, entsize: 2, data: versym},
		/* 11 */ {name: ".gnu.version_r", typ: elf.SHT_GNU_verneed, flags: elf.SHF_ALLOC, link: 9, info: 1, align: 8, data: verneed},
		/* 12 */ {name: ".debug_info", typ: elf.SHT_PROGBITS, flags: elf.SHF_COMPRESSED, align: 8, data: t.chdr(elf.ELFCOMPRESS_ZLIB, uint64(len(info)), zlibBytes(info))},
		/* 13 */ {name: ".debug_line", typ: elf.SHT_PROGBITS, flags: elf.SHF_COMPRESSED, align: 8, data: t.chdr(elf.ELFCOMPRESS_ZSTD, uint64(len(info)), zstdBytes(info))},
		/* 14 */ {name: ".zdebug_str", typ: elf.SHT_PROGBITS, align: 1, data: zdebug(uint64(len(info)), zlibBytes(info))},
		/* 15 */ {name: ".gnu_debuglink", typ: elf.SHT_PROGBITS, align: 4, data: debuglink},
		/* 16 */ {name: ".eh_frame", typ: elf.SHT_PROGBITS, flags: elf.SHF_ALLOC, addr: 0x1800, align: 8, data: make([]byte, 8)},
	}
	t.progs = []tprog{
		{typ: elf.PT_LOAD, flags: elf.PF_R | elf.PF_X, sec: 3, align: 0x1000},
		{typ: elf.PT_LOAD, flags: elf.PF_R | elf.PF_W, sec: 4, memsz: 0x110, align: 0x1000},
		{typ: elf.PT_NOTE, flags: elf.PF_R, sec: 1, align: 4},
	}
	return t
}

// noteFile returns a file with a GNU property note and a build ID note
// (aabbcc) aligned to align, in a section and a PT_NOTE segment.
func noteFile(align int) *tfile {
	tf := &tfile{}
	prop := tf.note(align, "GNU", uint32(elf.NT_GNU_PROPERTY_TYPE_0), []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12})
	id := tf.note(align, "GNU", uint32(elf.NT_GNU_BUILD_ID), []byte{0xaa, 0xbb, 0xcc})
	tf.secs = []tsec{{name: ".note", typ: elf.SHT_NOTE, flags: elf.SHF_ALLOC, align: uint64(align), data: append(prop, id...)}}
	tf.progs = []tprog{{typ: elf.PT_NOTE, sec: 1, align: uint64(align)}}
	return tf
}

// shndxFile returns a big-endian ELF32 file whose second symbol's section
// index, 70000, is in an SHT_SYMTAB_SHNDX table.
func shndxFile() *tfile {
	tf := &tfile{class: elf.ELFCLASS32, big: true}
	tab, strs := tf.symtab([]tsym{
		{name: "near", info: 0x12, shndx: 1},
		{name: "far", info: 0x12, shndx: uint16(elf.SHN_XINDEX)},
	})
	shndx := make([]byte, 8)
	shndx = tf.order().AppendUint32(shndx, 70000)
	tf.secs = []tsec{
		{name: ".text", typ: elf.SHT_PROGBITS, data: []byte{0}},
		{name: ".symtab", typ: elf.SHT_SYMTAB, link: 3, align: 4, entsize: 16, data: tab},
		{name: ".strtab", typ: elf.SHT_STRTAB, data: strs},
		{name: ".symtab_shndx", typ: elf.SHT_SYMTAB_SHNDX, link: 2, align: 4, entsize: 4, data: shndx},
	}
	return tf
}
