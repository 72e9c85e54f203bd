// Package bin is the byte cursor shared by every binary-format reader in
// backtrail: fixed-width integers in either byte order, LEB128, NUL-terminated
// strings, all bounds-checked.
//
// # Untrusted input
//
// A Buf never reads outside its slice and never panics. The first error is
// kept and every later read returns zero, so a record parser can read straight
// through and check Err once at the end (the model is debug/dwarf's buf).
package bin

import (
	"bytes"
	"encoding/binary"
	"fmt"
)

// DecodeError reports malformed input: which data, where, and what was wrong.
type DecodeError struct {
	Name   string // what was being read, e.g. ".debug_info" or "load command 3"
	Offset uint64 // offset of the bad field within Name
	Err    string
}

func (e *DecodeError) Error() string {
	return fmt.Sprintf("decoding %s at offset %#x: %s", e.Name, e.Offset, e.Err)
}

// Buf is a read cursor. The zero value is an empty little-endian buffer.
// A Buf is a small value; copy it to remember a position.
type Buf struct {
	data []byte
	pos  int
	base uint64 // offset of data[0] within the named object, for errors
	name string
	big  bool
	err  error
}

// New returns a cursor over data. base is the offset of data[0] within the
// object called name; both only label errors.
func New(name string, base uint64, data []byte, bigEndian bool) Buf {
	return Buf{data: data, base: base, name: name, big: bigEndian}
}

// Err returns the first error the cursor met, or nil.
func (b *Buf) Err() error { return b.err }

// Off returns the current offset within the named object.
func (b *Buf) Off() uint64 { return b.base + uint64(b.pos) }

// Pos returns the current position within the slice the cursor was made over.
func (b *Buf) Pos() int { return b.pos }

// Len returns the number of unread bytes.
func (b *Buf) Len() int { return len(b.data) - b.pos }

// Data returns the slice the cursor was made over.
func (b *Buf) Data() []byte { return b.data }

// BigEndian reports the cursor's byte order.
func (b *Buf) BigEndian() bool { return b.big }

// Name returns the label used in errors.
func (b *Buf) Name() string { return b.name }

// Seek moves to position pos of the slice.
func (b *Buf) Seek(pos int) {
	if pos < 0 || pos > len(b.data) {
		b.Errorf("seek to %#x beyond end %#x", pos, len(b.data))
		return
	}
	b.pos = pos
}

// Errorf records an error at the current offset unless one is already kept.
func (b *Buf) Errorf(format string, args ...any) {
	if b.err == nil {
		b.err = &DecodeError{Name: b.name, Offset: b.Off(), Err: fmt.Sprintf(format, args...)}
	}
	b.pos = len(b.data)
}

func (b *Buf) need(n int) bool {
	if b.err != nil {
		return false
	}
	if n < 0 || n > len(b.data)-b.pos {
		b.Errorf("need %d bytes, %d left", n, len(b.data)-b.pos)
		return false
	}
	return true
}

// Skip advances n bytes.
func (b *Buf) Skip(n int) {
	if b.need(n) {
		b.pos += n
	}
}

// Bytes returns the next n bytes without copying.
func (b *Buf) Bytes(n int) []byte {
	if !b.need(n) {
		return nil
	}
	p := b.data[b.pos : b.pos+n : b.pos+n]
	b.pos += n
	return p
}

// U8 reads one byte.
func (b *Buf) U8() uint8 {
	if b.pos >= len(b.data) || b.err != nil {
		b.need(1)
		return 0
	}
	v := b.data[b.pos]
	b.pos++
	return v
}

// U16 reads a 2-byte integer.
func (b *Buf) U16() uint16 {
	if !b.need(2) {
		return 0
	}
	p := b.data[b.pos:]
	b.pos += 2
	if b.big {
		return binary.BigEndian.Uint16(p)
	}
	return binary.LittleEndian.Uint16(p)
}

// U24 reads a 3-byte integer (DW_FORM_strx3, DW_FORM_addrx3).
func (b *Buf) U24() uint32 {
	if !b.need(3) {
		return 0
	}
	p := b.data[b.pos:]
	b.pos += 3
	if b.big {
		return uint32(p[0])<<16 | uint32(p[1])<<8 | uint32(p[2])
	}
	return uint32(p[2])<<16 | uint32(p[1])<<8 | uint32(p[0])
}

// U32 reads a 4-byte integer.
func (b *Buf) U32() uint32 {
	if !b.need(4) {
		return 0
	}
	p := b.data[b.pos:]
	b.pos += 4
	if b.big {
		return binary.BigEndian.Uint32(p)
	}
	return binary.LittleEndian.Uint32(p)
}

// U64 reads an 8-byte integer.
func (b *Buf) U64() uint64 {
	if !b.need(8) {
		return 0
	}
	p := b.data[b.pos:]
	b.pos += 8
	if b.big {
		return binary.BigEndian.Uint64(p)
	}
	return binary.LittleEndian.Uint64(p)
}

// Uint reads an n-byte unsigned integer, n in 1, 2, 4 or 8.
func (b *Buf) Uint(n int) uint64 {
	switch n {
	case 1:
		return uint64(b.U8())
	case 2:
		return uint64(b.U16())
	case 4:
		return uint64(b.U32())
	case 8:
		return b.U64()
	}
	b.Errorf("unsupported integer size %d", n)
	return 0
}

// ULEB reads an unsigned LEB128 number. Bits beyond 64 are dropped, as
// producers pad but never need them.
func (b *Buf) ULEB() uint64 {
	var v uint64
	var shift uint
	for i := b.pos; i < len(b.data); i++ {
		c := b.data[i]
		if shift < 64 {
			v |= uint64(c&0x7f) << shift
		}
		shift += 7
		if c&0x80 == 0 {
			if b.err != nil {
				return 0
			}
			b.pos = i + 1
			return v
		}
	}
	b.Errorf("unterminated LEB128")
	return 0
}

// SLEB reads a signed LEB128 number.
func (b *Buf) SLEB() int64 {
	var v int64
	var shift uint
	for i := b.pos; i < len(b.data); i++ {
		c := b.data[i]
		if shift < 64 {
			v |= int64(c&0x7f) << shift
		}
		shift += 7
		if c&0x80 == 0 {
			if b.err != nil {
				return 0
			}
			if shift < 64 && c&0x40 != 0 {
				v |= -1 << shift
			}
			b.pos = i + 1
			return v
		}
	}
	b.Errorf("unterminated LEB128")
	return 0
}

// CString reads a NUL-terminated string and returns it without the NUL and
// without copying.
func (b *Buf) CString() []byte {
	if b.err != nil {
		return nil
	}
	for i := b.pos; i < len(b.data); i++ {
		if b.data[i] == 0 {
			s := b.data[b.pos:i:i]
			b.pos = i + 1
			return s
		}
	}
	b.Errorf("unterminated string")
	return nil
}

// CStringAt returns the NUL-terminated string starting at off in data, or
// false when off is out of range or the string has no terminator.
func CStringAt(data []byte, off uint64) ([]byte, bool) {
	if off >= uint64(len(data)) {
		return nil, false
	}
	s := data[off:]
	i := bytes.IndexByte(s, 0)
	if i < 0 {
		return nil, false
	}
	return s[:i:i], true
}
