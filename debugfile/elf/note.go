package elf

import (
	"bytes"

	"github.com/backtrail/backtrail/internal/bin"
)

// Note is one entry of an SHT_NOTE section or PT_NOTE segment.
type Note struct {
	Name string // the owner, such as "GNU" or "Go", without its NUL
	Type uint32 // n_type, meaningful together with Name (see NType)
	Desc []byte // the descriptor, not copied
}

// Notes returns the notes of every SHT_NOTE section or, in a file without
// section headers, of every PT_NOTE segment. It stops at the first malformed
// note and returns the notes before it with the error.
func (f *File) Notes() ([]Note, error) {
	var notes []Note
	collect := func(n Note) bool {
		notes = append(notes, n)
		return true
	}
	if len(f.Sections) > 0 {
		for _, s := range f.Sections {
			if s.Type != SHT_NOTE {
				continue
			}
			data, err := f.SectionData(s)
			if err == nil {
				err = f.walkNotes(s.Name, s.Offset, data, s.Addralign, collect)
			}
			if err != nil {
				return notes, err
			}
		}
		return notes, nil
	}
	for _, p := range f.Progs {
		if p.Type != PT_NOTE {
			continue
		}
		data, err := p.Data()
		if err == nil {
			err = f.walkNotes("PT_NOTE segment", p.Off, data, p.Align, collect)
		}
		if err != nil {
			return notes, err
		}
	}
	return notes, nil
}

// findNote returns the descriptor of the first note with the given name and
// type and a non-empty descriptor, looking in PT_NOTE segments first and then in SHT_NOTE sections (or
// only in the section called section, when that is not empty). Malformed
// notes end the search of their segment or section, not the whole search.
func (f *File) findNote(name string, typ uint32, section string) []byte {
	var desc []byte
	match := func(n Note) bool {
		if n.Type == typ && n.Name == name && len(n.Desc) > 0 {
			desc = n.Desc
			return false
		}
		return true
	}
	for _, p := range f.Progs {
		if p.Type != PT_NOTE {
			continue
		}
		if data, err := p.Data(); err == nil {
			f.walkNotes("PT_NOTE segment", p.Off, data, p.Align, match)
			if desc != nil {
				return desc
			}
		}
	}
	for _, s := range f.Sections {
		if s.Type != SHT_NOTE || (section != "" && s.Name != section) {
			continue
		}
		if data, err := f.SectionData(s); err == nil {
			f.walkNotes(s.Name, s.Offset, data, s.Addralign, match)
			if desc != nil {
				return desc
			}
		}
	}
	return nil
}

// walkNotes calls fn for each note in data until fn returns false. Notes are
// aligned to 8 bytes when the segment or section is, and to 4 otherwise, the
// way binutils and the Linux kernel read them: the header's three words are
// always 4 bytes, and the descriptor and the next note start at the next
// aligned offset.
func (f *File) walkNotes(name string, base uint64, data []byte, align uint64, fn func(Note) bool) error {
	a := 4
	if align == 8 {
		a = 8
	}
	b := bin.New(name, base, data, f.Data == ELFDATA2MSB)
	pad := func() {
		if r := b.Pos() % a; r != 0 {
			b.Skip(min(a-r, b.Len()))
		}
	}
	for b.Len() > 0 {
		namesz := b.U32()
		descsz := b.U32()
		typ := b.U32()
		nm := b.Bytes(int(namesz))
		pad()
		desc := b.Bytes(int(descsz))
		pad()
		if err := b.Err(); err != nil {
			return formatError(err)
		}
		if i := bytes.IndexByte(nm, 0); i >= 0 {
			nm = nm[:i]
		}
		if !fn(Note{Name: string(nm), Type: typ, Desc: desc}) {
			return nil
		}
	}
	return nil
}

// BuildID returns the GNU build ID (the NT_GNU_BUILD_ID note), found in a
// PT_NOTE segment or an SHT_NOTE section, without copying; nil if there is
// none.
func (f *File) BuildID() []byte {
	return f.findNote(noteNameGNU, uint32(NT_GNU_BUILD_ID), "")
}

// GoBuildID returns the Go toolchain's build ID, the note named "Go" of type
// 4 in ".note.go.buildid", or "" if there is none.
func (f *File) GoBuildID() string {
	return string(f.findNote(noteNameGo, noteTypeGoBuildID, ".note.go.buildid"))
}

// DebugLink returns the file name and CRC-32 of the separate debug file named
// by ".gnu_debuglink": a NUL-terminated name, padding to 4 bytes, and the
// CRC in the file's byte order.
func (f *File) DebugLink() (file string, crc uint32, ok bool) {
	s := f.Section(".gnu_debuglink")
	if s == nil {
		return "", 0, false
	}
	data, err := f.SectionData(s)
	if err != nil {
		return "", 0, false
	}
	b := bin.New(s.Name, s.Offset, data, f.Data == ELFDATA2MSB)
	name := b.CString()
	if r := b.Pos() % 4; r != 0 {
		b.Skip(4 - r)
	}
	crc = b.U32()
	if b.Err() != nil || len(name) == 0 {
		return "", 0, false
	}
	return string(name), crc, true
}

// DebugAltLink returns the file name and build ID of the supplementary debug
// file (dwz's common DWARF) named by ".gnu_debugaltlink": a NUL-terminated
// name followed by the build ID, which is not copied.
func (f *File) DebugAltLink() (file string, buildID []byte, ok bool) {
	s := f.Section(".gnu_debugaltlink")
	if s == nil {
		return "", nil, false
	}
	data, err := f.SectionData(s)
	if err != nil {
		return "", nil, false
	}
	b := bin.New(s.Name, s.Offset, data, f.Data == ELFDATA2MSB)
	name := b.CString()
	if b.Err() != nil || len(name) == 0 {
		return "", nil, false
	}
	return string(name), b.Bytes(b.Len()), true
}
