package unwind

import (
	"errors"
	"fmt"
	"slices"

	"github.com/backtrail/backtrail/debugfile/cfi"
)

// Memory reads the target's memory: like io.ReaderAt at a 64-bit address.
// Implementations return n < len(p) with a non-nil error for bytes they
// cannot read.
type Memory interface {
	ReadAt(p []byte, addr uint64) (n int, err error)
}

// Method says how a frame's caller was found.
type Method uint8

// Methods.
const (
	MethodContext Method = iota // frame 0: the thread's registers
	MethodCFI                   // call frame information
	MethodSignal                // the interrupted context saved by a signal
	MethodFP                    // the frame-pointer chain
)

var methodNames = [...]string{"context", "cfi", "signal", "fp"}

func (m Method) String() string {
	if int(m) < len(methodNames) {
		return methodNames[m]
	}
	return fmt.Sprintf("Method(%d)", uint8(m))
}

// Frame is one frame of a walk, innermost first.
type Frame struct {
	PC uint64
	SP uint64
	// Exact says PC is the instruction itself (frame 0, or the instruction
	// a signal interrupted) rather than a return address; symbolizers look
	// up PC−1 for return addresses.
	Exact  bool
	Method Method // how this frame was found
	// Signal says this frame is a signal trampoline: the next frame is the
	// interrupted one.
	Signal bool
}

// Stack is the result of a walk.
type Stack struct {
	Frames    []Frame
	Truncated bool   // Options.MaxFrames was reached before the outermost frame
	Stop      string // why the walk ended before the outermost frame ("" when it reached it or was truncated)
}

// Options bound and steer a walk. The zero value means defaults.
type Options struct {
	// MaxFrames caps the frames returned (default 256).
	MaxFrames int
	// StackLo and StackHi, when StackHi is not 0, bound where frame
	// pointers may point: the thread's stack mapping.
	StackLo, StackHi uint64
	// BigEndian selects the byte order of memory (arm64 and x86-64 on
	// Linux are little-endian).
	BigEndian bool
	// NoFramePointers disables the frame-pointer fallback.
	NoFramePointers bool
}

// errEnd marks the outermost frame: the return address column is
// undefined.
var errEnd = errors.New("outermost frame")

// Unwind walks the stack of a thread whose registers are regs, reading
// memory through mem and finding unwind information in space. It never
// fails: a walk that cannot go on stops, and Stack.Stop says why. Cost:
// per frame, a mapping search and a cached row lookup, plus the memory
// reads its rules ask for.
func Unwind(regs Regs, mem Memory, space *Space, opts Options) Stack {
	if opts.MaxFrames <= 0 {
		opts.MaxFrames = 256
	}
	// The frames are gathered on the goroutine's stack and copied out
	// once: grown by append on the heap, a walk cleared about twice the
	// room it kept, and the growth was a sixth of the CPU of a dump of
	// 1000 threads 100 frames deep (bench/dump.md).
	var buf [256]Frame
	frames, truncated, stop := walk(regs, mem, space, opts, buf[:0])
	st := Stack{Truncated: truncated, Stop: stop}
	if len(frames) > 0 {
		st.Frames = slices.Clone(frames)
	}
	return st
}

// walk is Unwind, appending the frames to frames and returning the rest
// of the Stack apart.
func walk(regs Regs, mem Memory, space *Space, opts Options, frames []Frame) (_ []Frame, truncated bool, stop string) {
	arch := regs.Arch
	w := &words{mem: mem, big: opts.BigEndian}
	cur := regs
	exact := true
	method := MethodContext
	for {
		pc, ok := cur.Get(arch.PC)
		if !ok || pc == 0 {
			if !ok {
				stop = "PC unknown"
			}
			return frames, false, stop
		}
		if len(frames) == opts.MaxFrames {
			return frames, true, ""
		}
		fr := Frame{PC: pc, SP: cur.SP(), Exact: exact, Method: method}
		next, how, signal, err := step(&cur, exact, w, space, opts)
		fr.Signal = signal
		frames = append(frames, fr)
		if errors.Is(err, errEnd) {
			return frames, false, ""
		}
		if err != nil {
			return frames, false, err.Error()
		}
		nsp, npc := next.SP(), next.PC()
		if !signal {
			if nsp < fr.SP {
				return frames, false, fmt.Sprintf("stack pointer went down from %#x to %#x", fr.SP, nsp)
			}
			if nsp == fr.SP && npc == pc {
				return frames, false, fmt.Sprintf("no progress at pc %#x sp %#x", pc, nsp)
			}
		}
		cur, exact, method = next, signal, how
	}
}

// step computes the caller's registers. signal says the frame at cur is a
// signal trampoline, so the caller's PC is exact.
func step(cur *Regs, exact bool, w *words, space *Space, opts Options) (next Regs, how Method, signal bool, err error) {
	pc := cur.PC()
	lookup := pc
	if !exact && lookup > 0 {
		lookup--
	}
	var cfiErr error
	if m := space.Find(lookup); m != nil && m.Module != nil {
		row, err := m.Module.Row(lookup - m.Bias)
		if err == nil {
			next, err = applyRow(row, cur, w)
			if err == nil || errors.Is(err, errEnd) {
				return next, MethodCFI, row.Signal, err
			}
		}
		if !errors.Is(err, cfi.ErrNoFDE) {
			cfiErr = err
		}
	}
	if next, ok := sigreturn(cur, w); ok {
		return next, MethodSignal, true, nil
	}
	if opts.NoFramePointers {
		if cfiErr != nil {
			return next, 0, false, cfiErr
		}
		return next, 0, false, fmt.Errorf("no unwind information for pc %#x", pc)
	}
	next, err = framePointer(cur, w, opts)
	if err != nil {
		if cfiErr != nil {
			err = fmt.Errorf("%v; frame pointer: %v", cfiErr, err)
		}
		return next, 0, false, err
	}
	return next, MethodFP, false, nil
}

// applyRow computes the caller's registers from row.
func applyRow(row *cfi.Row, cur *Regs, w *words) (Regs, error) {
	arch := cur.Arch
	var cfa uint64
	if row.CFA.Expr != nil {
		v, err := eval(row.CFA.Expr, cur, w)
		if err != nil {
			return Regs{}, fmt.Errorf("CFA: %w", err)
		}
		cfa = v
	} else {
		v, ok := cur.Get(int(min(row.CFA.Reg, 1<<16)))
		if !ok {
			return Regs{}, fmt.Errorf("CFA register %s unknown", arch.RegName(int(min(row.CFA.Reg, 1<<16))))
		}
		cfa = v + uint64(row.CFA.Offset)
	}
	next := *cur
	for _, r := range row.Rules {
		if r.Reg >= NumRegs {
			continue
		}
		reg := int(r.Reg)
		switch r.Kind {
		case cfi.RuleUndefined:
			next.Clear(reg)
		case cfi.RuleOffset:
			v, err := w.read(cfa + uint64(r.Offset))
			if err != nil {
				return Regs{}, fmt.Errorf("%s saved at CFA%+d: %w", arch.RegName(reg), r.Offset, err)
			}
			next.Set(reg, v)
		case cfi.RuleValOffset:
			next.Set(reg, cfa+uint64(r.Offset))
		case cfi.RuleRegister:
			v, ok := cur.Get(int(min(r.Register, 1<<16)))
			if !ok {
				next.Clear(reg)
			} else {
				next.Set(reg, v)
			}
		case cfi.RuleExpression, cfi.RuleValExpression:
			v, err := eval(r.Expr, cur, w, cfa)
			if err != nil {
				return Regs{}, fmt.Errorf("%s: %w", arch.RegName(reg), err)
			}
			if r.Kind == cfi.RuleExpression {
				if v, err = w.read(v); err != nil {
					return Regs{}, fmt.Errorf("%s: %w", arch.RegName(reg), err)
				}
			}
			next.Set(reg, v)
		}
	}
	ra := row.Rule(row.RAReg)
	if ra.Kind == cfi.RuleUndefined {
		return next, errEnd
	}
	if ra.Kind == cfi.RuleUnspecified && int(row.RAReg) == arch.PC {
		// On x86-64 the return address column is the PC itself: without a
		// rule the caller is unknown.
		return next, fmt.Errorf("no rule for the return address")
	}
	pc, ok := next.Get(int(min(row.RAReg, 1<<16)))
	if !ok {
		return next, fmt.Errorf("return address (%s) unknown", arch.RegName(int(min(row.RAReg, 1<<16))))
	}
	if row.RASigned || arch == ARM64 {
		pc = stripPAC(pc)
	}
	next.Set(arch.PC, pc)
	// By convention the CFA is the caller's stack pointer, unless a rule
	// restores it (signal trampolines restore the interrupted one).
	if r := row.Rule(uint64(arch.SP)); r.Kind == cfi.RuleUnspecified || r.Kind == cfi.RuleSameValue {
		next.Set(arch.SP, cfa)
	}
	return next, nil
}

// framePointer follows the frame-pointer chain: the saved frame pointer
// at [fp] and the return address at [fp+8], with sanity checks.
func framePointer(cur *Regs, w *words, opts Options) (Regs, error) {
	arch := cur.Arch
	fp, ok := cur.Get(arch.FP)
	sp := cur.SP()
	switch {
	case !ok || fp == 0:
		return Regs{}, fmt.Errorf("no unwind information for pc %#x and no frame pointer", cur.PC())
	case fp%8 != 0:
		return Regs{}, fmt.Errorf("frame pointer %#x misaligned", fp)
	case fp < sp:
		return Regs{}, fmt.Errorf("frame pointer %#x below the stack pointer %#x", fp, sp)
	case opts.StackHi != 0 && (fp < opts.StackLo || fp+16 > opts.StackHi):
		return Regs{}, fmt.Errorf("frame pointer %#x outside the stack [%#x, %#x)", fp, opts.StackLo, opts.StackHi)
	}
	savedFP, err := w.read(fp)
	if err != nil {
		return Regs{}, err
	}
	ret, err := w.read(fp + 8)
	if err != nil {
		return Regs{}, err
	}
	next := *cur
	if arch == ARM64 {
		ret = stripPAC(ret)
		next.Set(arch.LR, ret)
	}
	next.Set(arch.FP, savedFP)
	next.Set(arch.SP, fp+16)
	next.Set(arch.PC, ret)
	if ret == 0 {
		return next, errEnd
	}
	return next, nil
}
