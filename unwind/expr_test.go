package unwind_test

import (
	"errors"
	"testing"

	"github.com/backtrail/backtrail/unwind"
)

func TestEval(t *testing.T) {
	regs := unwind.NewRegs(unwind.AMD64)
	regs.Set(7, 0x1000) // rsp
	regs.Set(6, 0x2000) // rbp
	mem := &memory{regions: []region{{0x1000, make([]byte, 0x100)}}}
	mem.put(0x1010, 0xcafe)
	mem.put(0x1020, 0x1122334455667788)
	for _, tc := range []struct {
		name string
		expr []byte
		push []uint64
		want uint64
		err  string
	}{
		{"breg7", []byte{0x77, 0x10}, nil, 0x1010, ""},
		{"breg7 deref", []byte{0x77, 0x10, 0x06}, nil, 0xcafe, ""},
		{"bregx negative", []byte{0x92, 0x06, 0x70}, nil, 0x2000 - 16, ""},
		{"lit plus", []byte{0x35, 0x37, 0x22}, nil, 12, ""},
		{"pushed CFA plus_uconst", []byte{0x23, 0x08}, []uint64{0x500}, 0x508, ""},
		{"const1s minus", []byte{0x09, 0xff, 0x31, 0x1c}, nil, ^uint64(1), ""},
		{"const2u const4s const8u", []byte{0x0a, 0x34, 0x12, 0x0d, 0xfe, 0xff, 0xff, 0xff, 0x22}, nil, 0x1232, ""},
		{"deref_size 4", []byte{0x0c, 0x20, 0x10, 0, 0, 0x94, 4}, nil, 0x55667788, ""},
		{"glibc sigreturn rip", []byte{0x77, 0xa8, 0x01, 0x06}, nil, 0, ""},
		{"unreadable", []byte{0x77, 0x80, 0x02, 0x06}, nil, 0, "read 8 bytes"},
		{"dup mul", []byte{0x3a, 0x12, 0x1e}, nil, 100, ""},
		{"over swap minus", []byte{0x35, 0x3a, 0x14, 0x16, 0x1c}, nil, ^uint64(4), ""},
		{"rot", []byte{0x31, 0x32, 0x33, 0x17, 0x13, 0x13}, nil, 3, ""},
		{"pick", []byte{0x31, 0x32, 0x33, 0x15, 0x02}, nil, 1, ""},
		{"and or xor not neg", []byte{0x3c, 0x3a, 0x1a, 0x20, 0x1f}, nil, 9, ""},
		{"shl shr shra", []byte{0x31, 0x40, 0x24, 0x30, 0x1f, 0x08, 0x02, 0x26, 0x31, 0x25}, nil, 0, ""},
		{"div mod", []byte{0x11, 0x79, 0x33, 0x1b}, nil, ^uint64(1), ""},
		{"mod", []byte{0x3a, 0x33, 0x1d}, nil, 1, ""},
		{"abs", []byte{0x11, 0x7b, 0x19}, nil, 5, ""},
		{"comparisons", []byte{0x33, 0x35, 0x2d, 0x33, 0x35, 0x2b, 0x22}, nil, 1, ""},
		{"bra taken", []byte{0x31, 0x28, 0x01, 0x00, 0x38, 0x39}, nil, 9, ""},
		{"bra not taken", []byte{0x30, 0x28, 0x01, 0x00, 0x38}, nil, 8, ""},
		{"skip", []byte{0x2f, 0x01, 0x00, 0x38, 0x39}, nil, 9, ""},
		{"reg value", []byte{0x56}, nil, 0x2000, ""},
		{"empty", nil, nil, 0, "empty stack"},
		{"underflow", []byte{0x22}, nil, 0, "underflow"},
		{"division by zero", []byte{0x31, 0x30, 0x1b}, nil, 0, "division by zero"},
		{"unknown register", []byte{0x71, 0x00}, nil, 0, "register 1 unknown"},
		{"unsupported", []byte{0x9c}, nil, 0, "unsupported operation 0x9c"},
		{"loop", []byte{0x2f, 0xfd, 0xff}, nil, 0, "steps"},
		{"branch out", []byte{0x2f, 0x10, 0x00}, nil, 0, "out of the expression"},
		{"overflow", func() []byte {
			var b []byte
			for i := 0; i <= unwind.MaxExprStack; i++ {
				b = append(b, 0x30)
			}
			return b
		}(), nil, 0, "overflow"},
		{"truncated", []byte{0x0e, 1, 2}, nil, 0, "need 8 bytes"},
	} {
		v, err := unwind.Eval(tc.expr, &regs, mem, false, tc.push...)
		if tc.err != "" {
			var ee *unwind.ExprError
			if err == nil || !errors.As(err, &ee) || !contains(err.Error(), tc.err) {
				t.Errorf("%s: %#x, %v; want an ExprError with %q", tc.name, v, err, tc.err)
			}
			continue
		}
		if err != nil || v != tc.want {
			t.Errorf("%s: %#x, %v; want %#x", tc.name, v, err, tc.want)
		}
	}
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}

// FuzzEval evaluates arbitrary expressions: bounded, never panicking,
// failing only with ExprError.
func FuzzEval(f *testing.F) {
	f.Add([]byte{0x77, 0x10, 0x06}, uint64(0x1000))
	f.Add([]byte{0x2f, 0xfd, 0xff}, uint64(0))
	f.Add([]byte{0x31, 0x28, 0x01, 0x00, 0x38, 0x39, 0x94, 0x04}, uint64(7))
	f.Fuzz(func(t *testing.T, expr []byte, push uint64) {
		regs := unwind.NewRegs(unwind.AMD64)
		for r := 0; r < 17; r++ {
			regs.Set(r, 0x1000+uint64(r)*8)
		}
		mem := &memory{regions: []region{{0x1000, make([]byte, 0x100)}}}
		_, err := unwind.Eval(expr, &regs, mem, false, push)
		var ee *unwind.ExprError
		if err != nil && !errors.As(err, &ee) {
			t.Fatalf("error %v (%T) is not an ExprError", err, err)
		}
	})
}
