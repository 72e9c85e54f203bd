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
