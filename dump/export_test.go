//go:build linux && (amd64 || arm64)

package dump

import (
	"runtime"

	"github.com/backtrail/backtrail/unwind"
)

// StackRange exposes stackRange: the part of a stack mapping a dump copies.
var StackRange = stackRange

// Seize, GetRegs and Detach expose the tracer's calls, for BenchmarkDump's
// floor; they must run on one locked thread.
var (
	Seize   = seize
	GetRegs = getRegs
	Detach  = detach
)

// MayRealtime reports whether this process may take a real-time priority,
// by lending this thread the lowest one the way the tracer does and
// giving it back.
func MayRealtime() bool {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var p tracerPriority
	p.set(2) // SCHED_FIFO 1
	defer p.set(0)
	return !p.failed
}

// ParseSyscall exposes parseSyscall: the fields of a /proc syscall file.
var ParseSyscall = parseSyscall

// Peek peeks thread tid of process pid (taskDir.peek), calling read where
// the dump copies the stack, and returns the stack pointer and program
// counter it read.
func Peek(pid, tid int, read func()) (sp, pc uint64, ok bool, err error) {
	dir, err := openTaskDir(pid)
	if err != nil {
		return 0, 0, false, err
	}
	defer dir.close()
	ok = dir.peek(tid, func(regs *unwind.Regs) {
		sp, pc = regs.SP(), regs.PC()
		read()
	})
	return sp, pc, ok, nil
}

// SetCacheBuildMax sets the size limit of the debug files whose symcache a
// dump builds, and returns a function that restores it.
func SetCacheBuildMax(n int64) (restore func()) {
	old := cacheBuildMax
	cacheBuildMax = n
	return func() { cacheBuildMax = old }
}
