//go:build linux && (amd64 || arm64)

package dump

import (
	"runtime"
	"testing"

	"golang.org/x/sys/unix"
)

// TestTracerPriority checks that the tracer takes the real-time priority
// one below the thread it holds (at least 1), and gives back its own
// scheduling, nice value included, afterwards.
func TestTracerPriority(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	own, err := unix.SchedGetAttr(0, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.SchedSetAttr(0, own, 0)
	niced := *own
	niced.Nice = 5
	if err := unix.SchedSetAttr(0, &niced, 0); err != nil {
		t.Fatal(err)
	}
	var p tracerPriority
	check := func(lend int, policy, prio uint32, nice int32) {
		t.Helper()
		p.set(lend)
		a, err := unix.SchedGetAttr(0, 0)
		if err != nil {
			t.Fatal(err)
		}
		if a.Policy != policy || a.Priority != prio || a.Nice != nice {
			t.Errorf("after set(%d): policy %d priority %d nice %d, want %d %d %d", lend, a.Policy, a.Priority, a.Nice, policy, prio, nice)
		}
	}
	check(80, unix.SCHED_FIFO, 79, 0)
	if p.failed {
		t.Skip("no real-time priority for this process (needs CAP_SYS_NICE)")
	}
	check(1, unix.SCHED_FIFO, 1, 0)
	check(0, unix.SCHED_NORMAL, 0, 5)
	check(0, unix.SCHED_NORMAL, 0, 5)
	check(99, unix.SCHED_FIFO, 98, 0)
	check(0, unix.SCHED_NORMAL, 0, 5)
}
