//go:build linux && amd64

package dump

import (
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/backtrail/backtrail/unwind"
)

const hostArch = "x86_64"

// getRegs reads tid's general registers into DWARF numbering. Tracer
// thread only.
func getRegs(tid int) (unwind.Regs, error) {
	var r unix.PtraceRegs
	if err := ptrace(unix.PTRACE_GETREGS, tid, 0, uintptr(unsafe.Pointer(&r))); err != nil {
		return unwind.Regs{}, err
	}
	regs := unwind.NewRegs(unwind.AMD64)
	for i, v := range []uint64{r.Rax, r.Rdx, r.Rcx, r.Rbx, r.Rsi, r.Rdi, r.Rbp, r.Rsp,
		r.R8, r.R9, r.R10, r.R11, r.R12, r.R13, r.R14, r.R15, r.Rip} {
		regs.Set(i, v)
	}
	return regs, nil
}

// peekable says that the dump reads a thread blocked in the kernel without
// stopping it (taskDir.peek): the stack pointer and program counter that
// /proc shows are nearly always enough to unwind x86-64 code built without
// frame pointers, whose call frame rules start from the stack pointer.
const peekable = true

// syscallRegs returns the registers /proc shows of a thread blocked in
// system call nr (-1: outside one) with arguments args, in DWARF
// numbering: the arguments are still in the registers they were passed
// in (rdi, rsi, rdx, r10, r8, r9), the others unknown.
func syscallRegs(nr int64, args [6]uint64, sp, pc uint64) unwind.Regs {
	regs := unwind.NewRegs(unwind.AMD64)
	if nr >= 0 {
		for i, reg := range [6]int{5, 4, 1, 10, 8, 9} {
			regs.Set(reg, args[i])
		}
	}
	regs.Set(7, sp)
	regs.Set(16, pc)
	return regs
}
