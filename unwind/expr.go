package unwind

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/backtrail/backtrail/internal/bin"
)

// Bounds of the DWARF expression evaluator.
const (
	MaxExprSteps = 1000 // operations executed, counting each pass through a loop
	MaxExprStack = 64   // values on the stack
)

// ExprError reports an expression that cannot be evaluated: the offset of
// the operation in the expression and why.
type ExprError struct {
	Off uint64
	Msg string
}

func (e *ExprError) Error() string {
	return fmt.Sprintf("unwind: DWARF expression at %#x: %s", e.Off, e.Msg)
}

// ErrMemory is wrapped by errors from reading target memory.
var ErrMemory = errors.New("unwind: memory not readable")

// Eval evaluates the DWARF expression expr (DWARF 5 §2.5) with the values
// of push on the stack, bottom first (call frame rules push the CFA), and
// returns the value on top. It implements the operations that call frame
// information uses: literals and constants, DW_OP_breg*/bregx, DW_OP_reg*
// read as values, arithmetic, logic, comparisons, stack manipulation,
// branches, DW_OP_deref and DW_OP_deref_size (through mem, in the byte
// order given by bigEndian). Location descriptions of more than one piece,
// frame-base and call operations fail with an *ExprError.
func Eval(expr []byte, regs Registers, mem Memory, bigEndian bool, push ...uint64) (uint64, error) {
	return eval(expr, regs, &words{mem: mem, big: bigEndian}, push...)
}

// eval is Eval reading memory through w.
func eval(expr []byte, regs Registers, w *words, push ...uint64) (uint64, error) {
	bigEndian := w.big
	var stack [MaxExprStack]uint64
	sp := 0
	for _, v := range push {
		if sp == MaxExprStack {
			return 0, &ExprError{0, "stack overflow"}
		}
		stack[sp] = v
		sp++
	}
	b := bin.New("expression", 0, expr, bigEndian)
	var opOff uint64
	fail := func(format string, args ...any) (uint64, error) {
		return 0, &ExprError{opOff, fmt.Sprintf(format, args...)}
	}
	var err error
	pushv := func(v uint64) {
		if sp == MaxExprStack {
			err = &ExprError{opOff, "stack overflow"}
			return
		}
		stack[sp] = v
		sp++
	}
	pop := func() uint64 {
		if sp == 0 {
			if err == nil {
				err = &ExprError{opOff, "stack underflow"}
			}
			return 0
		}
		sp--
		return stack[sp]
	}
	reg := func(r uint64) uint64 {
		v, ok := regs.Get(int(min(r, 1<<16)))
		if !ok && err == nil {
			err = &ExprError{opOff, fmt.Sprintf("register %d unknown", r)}
		}
		return v
	}
	deref := func(addr uint64, size int) uint64 {
		if size < 1 || size > 8 {
			err = &ExprError{opOff, fmt.Sprintf("deref size %d", size)}
			return 0
		}
		buf := &w.buf
		if n, e := w.mem.ReadAt(buf[:size], addr); n < size {
			if err == nil {
				err = &ExprError{opOff, fmt.Sprintf("read %d bytes at %#x: %v", size, addr, errors.Join(ErrMemory, e))}
			}
			return 0
		}
		var v uint64
		for i := 0; i < size; i++ {
			if bigEndian {
				v = v<<8 | uint64(buf[i])
			} else {
				v |= uint64(buf[i]) << (8 * i)
			}
		}
		return v
	}
	for steps := 0; b.Len() > 0; steps++ {
		if steps >= MaxExprSteps {
			return fail("more than %d steps", MaxExprSteps)
		}
		opOff = b.Off()
		op := b.U8()
		switch {
		case op >= 0x30 && op <= 0x4f: // DW_OP_lit0..31
			pushv(uint64(op - 0x30))
		case op >= 0x50 && op <= 0x6f: // DW_OP_reg0..31: the register's value
			pushv(reg(uint64(op - 0x50)))
		case op >= 0x70 && op <= 0x8f: // DW_OP_breg0..31
			off := b.SLEB()
			pushv(reg(uint64(op-0x70)) + uint64(off))
		default:
			switch op {
			case 0x03: // DW_OP_addr
				pushv(b.U64())
			case 0x06: // DW_OP_deref
				pushv(deref(pop(), 8))
			case 0x08: // DW_OP_const1u
				pushv(uint64(b.U8()))
			case 0x09: // DW_OP_const1s
				pushv(uint64(int64(int8(b.U8()))))
			case 0x0a:
				pushv(uint64(b.U16()))
			case 0x0b:
				pushv(uint64(int64(int16(b.U16()))))
			case 0x0c:
				pushv(uint64(b.U32()))
			case 0x0d:
				pushv(uint64(int64(int32(b.U32()))))
			case 0x0e, 0x0f:
				pushv(b.U64())
			case 0x10: // DW_OP_constu
				pushv(b.ULEB())
			case 0x11: // DW_OP_consts
				pushv(uint64(b.SLEB()))
			case 0x12: // DW_OP_dup
				v := pop()
				pushv(v)
				pushv(v)
			case 0x13: // DW_OP_drop
				pop()
			case 0x14: // DW_OP_over
				if sp < 2 {
					return fail("DW_OP_over on %d values", sp)
				}
				pushv(stack[sp-2])
			case 0x15: // DW_OP_pick
				i := int(b.U8())
				if i >= sp {
					return fail("DW_OP_pick %d on %d values", i, sp)
				}
				pushv(stack[sp-1-i])
			case 0x16: // DW_OP_swap
				a, c := pop(), pop()
				pushv(a)
				pushv(c)
			case 0x17: // DW_OP_rot
				a, c, d := pop(), pop(), pop()
				pushv(a)
				pushv(d)
				pushv(c)
			case 0x19: // DW_OP_abs
				v := int64(pop())
				if v < 0 {
					v = -v
				}
				pushv(uint64(v))
			case 0x1a:
				a, c := pop(), pop()
				pushv(c & a)
			case 0x1b: // DW_OP_div (signed)
				a, c := int64(pop()), int64(pop())
				if a == 0 {
					return fail("division by zero")
				}
				if a == -1 {
					pushv(uint64(-c))
				} else {
					pushv(uint64(c / a))
				}
			case 0x1c:
				a, c := pop(), pop()
				pushv(c - a)
			case 0x1d: // DW_OP_mod (unsigned)
				a, c := pop(), pop()
				if a == 0 {
					return fail("modulo by zero")
				}
				pushv(c % a)
			case 0x1e:
				a, c := pop(), pop()
				pushv(c * a)
			case 0x1f:
				pushv(-pop())
			case 0x20:
				pushv(^pop())
			case 0x21:
				a, c := pop(), pop()
				pushv(c | a)
			case 0x22:
				a, c := pop(), pop()
				pushv(c + a)
			case 0x23: // DW_OP_plus_uconst
				v := b.ULEB()
				pushv(pop() + v)
			case 0x24:
				a, c := pop(), pop()
				pushv(shift(c, a, func(x uint64, n uint) uint64 { return x << n }))
			case 0x25:
				a, c := pop(), pop()
				pushv(shift(c, a, func(x uint64, n uint) uint64 { return x >> n }))
			case 0x26: // DW_OP_shra
				a, c := pop(), pop()
				if a >= 64 {
					a = 63
				}
				pushv(uint64(int64(c) >> a))
			case 0x27:
				a, c := pop(), pop()
				pushv(c ^ a)
			case 0x28: // DW_OP_bra
				d := int(int16(b.U16()))
				if pop() != 0 && err == nil && b.Err() == nil {
					if !jump(&b, d) {
						return fail("branch out of the expression")
					}
				}
			case 0x29, 0x2a, 0x2b, 0x2c, 0x2d, 0x2e: // eq ge gt le lt ne (signed)
				a, c := int64(pop()), int64(pop())
				var r bool
				switch op {
				case 0x29:
					r = c == a
				case 0x2a:
					r = c >= a
				case 0x2b:
					r = c > a
				case 0x2c:
					r = c <= a
				case 0x2d:
					r = c < a
				case 0x2e:
					r = c != a
				}
				if r {
					pushv(1)
				} else {
					pushv(0)
				}
			case 0x2f: // DW_OP_skip
				d := int(int16(b.U16()))
				if b.Err() == nil && !jump(&b, d) {
					return fail("skip out of the expression")
				}
			case 0x90: // DW_OP_regx
				pushv(reg(b.ULEB()))
			case 0x92: // DW_OP_bregx
				r := b.ULEB()
				off := b.SLEB()
				pushv(reg(r) + uint64(off))
			case 0x94: // DW_OP_deref_size
				n := int(b.U8())
				pushv(deref(pop(), n))
			case 0x96: // DW_OP_nop
			default:
				return fail("unsupported operation %#x", op)
			}
		}
		if err != nil {
			return 0, err
		}
	}
	if e := b.Err(); e != nil {
		return 0, &ExprError{b.Off(), e.Error()}
	}
	if sp == 0 {
		return 0, &ExprError{uint64(len(expr)), "empty stack at the end"}
	}
	return stack[sp-1], nil
}

func shift(x, n uint64, f func(uint64, uint) uint64) uint64 {
	if n >= 64 {
		return 0
	}
	return f(x, uint(n))
}

// jump moves the cursor d bytes from its position, reporting whether the
// target lies within the expression (its end included).
func jump(b *bin.Buf, d int) bool {
	to := b.Pos() + d
	if to < 0 || to > len(b.Data()) {
		return false
	}
	b.Seek(to)
	return true
}

// words reads the memory a walk asks for, in its byte order, through one
// buffer: a buffer passed to Memory.ReadAt escapes to the heap, and a new
// one for every word read was 306k of the 354k allocations of a dump of
// 1000 threads 100 frames deep (BenchmarkDump).
type words struct {
	mem Memory
	big bool
	buf [8]byte
}

// read reads a pointer-sized word at addr.
func (w *words) read(addr uint64) (uint64, error) {
	n, err := w.mem.ReadAt(w.buf[:], addr)
	if n < 8 {
		return 0, fmt.Errorf("%w: %#x: %v", ErrMemory, addr, err)
	}
	if w.big {
		return binary.BigEndian.Uint64(w.buf[:]), nil
	}
	return binary.LittleEndian.Uint64(w.buf[:]), nil
}
