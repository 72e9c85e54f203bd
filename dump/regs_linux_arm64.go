//go:build linux && arm64

package dump

import (
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/backtrail/backtrail/unwind"
)

const hostArch = "arm64"

// getRegs reads tid's general registers (PTRACE_GETREGSET, NT_PRSTATUS)
// into DWARF numbering. Tracer thread only.
func getRegs(tid int) (unwind.Regs, error) {
	var r unix.PtraceRegs
	iov := unix.Iovec{Base: (*byte)(unsafe.Pointer(&r))}
	iov.SetLen(int(unsafe.Sizeof(r)))
	if err := ptrace(unix.PTRACE_GETREGSET, tid, 1 /* NT_PRSTATUS */, uintptr(unsafe.Pointer(&iov))); err != nil {
		return unwind.Regs{}, err
	}
	regs := unwind.NewRegs(unwind.ARM64)
	for i, v := range r.Regs {
		regs.Set(i, v)
	}
	regs.Set(31, r.Sp)
	regs.Set(32, r.Pc)
	return regs, nil
}

// peekable says that the dump stops every thread to read it. /proc shows
// a blocked thread's stack pointer and program counter but not the link
// register, which holds the return address of a leaf function such as a
// system call's wrapper: a peek would seldom unwind, and only add to the
// cost of the stop that follows.
const peekable = false

// syscallRegs returns the registers /proc shows of a thread blocked in
// system call nr (-1: outside one) with arguments args, in DWARF
// numbering: the arguments in x0–x5, the stack pointer and the program
// counter.
func syscallRegs(nr int64, args [6]uint64, sp, pc uint64) unwind.Regs {
	regs := unwind.NewRegs(unwind.ARM64)
	if nr >= 0 {
		for i, v := range args {
			regs.Set(i, v)
		}
	}
	regs.Set(31, sp)
	regs.Set(32, pc)
	return regs
}
