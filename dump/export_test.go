//go:build linux && (amd64 || arm64)

package dump

import "runtime"

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
