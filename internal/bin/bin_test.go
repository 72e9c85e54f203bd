package bin_test

import (
	"errors"
	"testing"

	"github.com/backtrail/backtrail/internal/bin"
)

func TestLEB128(t *testing.T) {
	tests := []struct {
		in []byte
		u  uint64
		s  int64
	}{
		{[]byte{0x02}, 2, 2},
		{[]byte{0x7f}, 127, -1},
		{[]byte{0x80, 0x01}, 128, 128},
		{[]byte{0xe5, 0x8e, 0x26}, 624485, 624485},
		{[]byte{0xc0, 0xbb, 0x78}, 0x1e1dc0, -123456},
		{[]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, ^uint64(0), -1},
	}
	for _, tt := range tests {
		b := bin.New("t", 0, tt.in, false)
		if got := b.ULEB(); got != tt.u || b.Err() != nil || b.Len() != 0 {
			t.Errorf("ULEB(% x) = %d, err %v, left %d; want %d", tt.in, got, b.Err(), b.Len(), tt.u)
		}
		b = bin.New("t", 0, tt.in, false)
		if got := b.SLEB(); got != tt.s || b.Err() != nil {
			t.Errorf("SLEB(% x) = %d, err %v; want %d", tt.in, got, b.Err(), tt.s)
		}
	}
}

func TestFirstErrorKept(t *testing.T) {
	b := bin.New(".debug_info", 0x100, []byte{1, 2, 3}, false)
	if v := b.U16(); v != 0x0201 {
		t.Fatalf("U16 = %#x", v)
	}
	if v := b.U32(); v != 0 {
		t.Fatalf("short U32 = %#x, want 0", v)
	}
	if v := b.U8(); v != 0 {
		t.Fatalf("U8 after error = %#x, want 0", v)
	}
	var err *bin.DecodeError
	if !errors.As(b.Err(), &err) || err.Offset != 0x102 || err.Name != ".debug_info" {
		t.Fatalf("err = %#v, want DecodeError at .debug_info+0x102", b.Err())
	}
}

func TestUnterminated(t *testing.T) {
	b := bin.New("s", 0, []byte{0x80, 0x80}, false)
	b.ULEB()
	if b.Err() == nil {
		t.Fatal("unterminated LEB128 accepted")
	}
	b = bin.New("s", 0, []byte("abc"), false)
	if s := b.CString(); s != nil || b.Err() == nil {
		t.Fatalf("CString without NUL = %q, err %v", s, b.Err())
	}
	b = bin.New("s", 0, []byte("abc\x00d"), true)
	if s := string(b.CString()); s != "abc" || b.Len() != 1 {
		t.Fatalf("CString = %q, left %d", s, b.Len())
	}
}

func TestBigEndian(t *testing.T) {
	b := bin.New("s", 0, []byte{1, 2, 3, 4, 5, 6, 7, 8, 9}, true)
	if v := b.U24(); v != 0x010203 {
		t.Fatalf("U24 = %#x", v)
	}
	if v := b.U32(); v != 0x04050607 {
		t.Fatalf("U32 = %#x", v)
	}
}

func FuzzBuf(f *testing.F) {
	f.Add([]byte{0x80, 0x01, 'a', 0, 1, 2, 3, 4, 5, 6, 7, 8})
	f.Fuzz(func(t *testing.T, data []byte) {
		b := bin.New("fuzz", 0, data, len(data)%2 == 0)
		for b.Err() == nil && b.Len() > 0 {
			switch b.Len() % 5 {
			case 0:
				b.ULEB()
			case 1:
				b.SLEB()
			case 2:
				b.CString()
			case 3:
				b.Uint(1 << (b.Len() % 4))
			default:
				b.U24()
			}
			if b.Len() < 0 {
				t.Fatal("negative length")
			}
		}
	})
}
