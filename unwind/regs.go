package unwind

import "math/bits"

// Registers is the read side of a register set: the value of a DWARF
// register, and whether it is known.
type Registers interface {
	Get(reg int) (uint64, bool)
}

// Regs is a register set by DWARF number, for registers below NumRegs. The
// zero value knows no register. A Regs is a value; copy it to keep a
// state.
type Regs struct {
	Arch  *Arch
	v     [NumRegs]uint64
	valid uint64 // bit i: v[i] is known
}

// NewRegs returns an empty register set for arch.
func NewRegs(arch *Arch) Regs { return Regs{Arch: arch} }

// Get returns register reg and whether it is known.
func (r *Regs) Get(reg int) (uint64, bool) {
	if reg < 0 || reg >= NumRegs || r.valid&(1<<reg) == 0 {
		return 0, false
	}
	return r.v[reg], true
}

// Set sets register reg; registers at or beyond NumRegs are ignored.
func (r *Regs) Set(reg int, v uint64) {
	if reg >= 0 && reg < NumRegs {
		r.v[reg] = v
		r.valid |= 1 << reg
	}
}

// Clear forgets register reg.
func (r *Regs) Clear(reg int) {
	if reg >= 0 && reg < NumRegs {
		r.valid &^= 1 << reg
	}
}

// PC returns the program counter (0 when unknown).
func (r *Regs) PC() uint64 { v, _ := r.Get(r.Arch.PC); return v }

// SP returns the stack pointer (0 when unknown).
func (r *Regs) SP() uint64 { v, _ := r.Get(r.Arch.SP); return v }

// FP returns the frame pointer (0 when unknown).
func (r *Regs) FP() uint64 { v, _ := r.Get(r.Arch.FP); return v }

// Map returns the known registers by name, for reports.
func (r *Regs) Map() map[string]uint64 {
	// Sized at once to what it holds: a dump makes one map per thread,
	// growing each cost more than filling it, and a map of at most eight
	// (a thread read without stopping it shows at most eight registers)
	// needs no table, which sized for every register took 7 % of a
	// dump's CPU.
	named := r.valid & (1<<min(NumRegs, len(r.Arch.Names)) - 1)
	m := make(map[string]uint64, bits.OnesCount64(named))
	for i := 0; i < NumRegs && i < len(r.Arch.Names); i++ {
		if v, ok := r.Get(i); ok {
			m[r.Arch.Names[i]] = v
		}
	}
	return m
}
