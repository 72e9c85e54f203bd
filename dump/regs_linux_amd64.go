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
