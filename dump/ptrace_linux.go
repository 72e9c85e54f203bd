//go:build linux

package dump

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// tracer runs every ptrace call on one goroutine locked to its OS thread,
// because Linux makes the thread that attached a tracee its only tracer
// (the model is Delve's pkg/proc/native). Work arrives as closures over a
// channel. The goroutine never unlocks its thread: when stop ends it, the
// thread exits, and the kernel detaches whatever is still attached.
type tracer struct {
	reqs chan func()
	wg   sync.WaitGroup
}

func startTracer() *tracer {
	t := &tracer{reqs: make(chan func())}
	t.wg.Add(1)
	go func() {
		defer t.wg.Done()
		runtime.LockOSThread()
		// backoff's sleeps of tens of microseconds would otherwise
		// last the default 50 µs timer slack longer.
		unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0)
		for f := range t.reqs {
			f()
		}
	}()
	return t
}

// do runs f on the tracer thread and waits for it.
func (t *tracer) do(f func()) {
	done := make(chan struct{})
	t.reqs <- func() {
		defer close(done)
		f()
	}
	<-done
}

// stop ends the tracer goroutine and waits for it.
func (t *tracer) stop() {
	close(t.reqs)
	t.wg.Wait()
}

// errGone says a thread exited before or while it was read.
var errGone = errors.New("thread exited")

// errTimeout says a thread did not stop in time.
var errTimeout = errors.New("thread did not stop")

// stopTimeout bounds the wait for one thread to stop: a thread in
// uninterruptible sleep (state D) stops only when it leaves the kernel.
const stopTimeout = 2 * time.Second

// seize attaches to tid without stopping it and asks it to stop. Tracer
// thread only.
func seize(tid int) error {
	if err := unix.PtraceSeize(tid); err != nil {
		return err
	}
	if err := unix.PtraceInterrupt(tid); err != nil {
		unix.PtraceDetach(tid)
		return err
	}
	return nil
}

// pollStop checks once, without blocking, whether tid has stopped after
// seize. It returns the signal to deliver on detach: a signal that arrived
// while we held the thread (signal-delivery-stop) must not be lost.
// Tracer thread only.
func pollStop(tid int) (stopped bool, sig int, err error) {
	var ws unix.WaitStatus
	for {
		wpid, err := unix.Wait4(tid, &ws, unix.WALL|unix.WNOHANG, nil)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			if err == unix.ECHILD || err == unix.ESRCH {
				return false, 0, errGone
			}
			return false, 0, err
		}
		if wpid != tid {
			return false, 0, nil
		}
		switch {
		case ws.Exited() || ws.Signaled():
			return false, 0, errGone
		case ws.Stopped():
			// Under PTRACE_SEIZE, interrupt-stops and group-stops report
			// PTRACE_EVENT_STOP in bits 16–23. Anything else is a signal
			// on its way to the thread, which detach must deliver.
			if (uint32(ws)>>16)&0xff != 0 {
				return true, 0, nil
			}
			return true, int(ws.StopSignal()), nil
		}
	}
}

// spinPolls is how many times a waiting tracer polls before it sleeps:
// a stop normally comes within microseconds, and sleeping costs more.
const spinPolls = 5

// backoff sleeps the tracer's OS thread for the n-th time in a wait, in
// growing steps from 10 µs to 1 ms, which leaves the CPU to the threads
// we wait for (on a busy machine they may need ours to reach their stop).
func backoff(n int) {
	ts := unix.NsecToTimespec(int64(min(10<<min(n, 7), 1000)) * 1000)
	unix.Nanosleep(&ts, nil)
}

// waitStop waits until tid stops after seize; see pollStop. A thread that
// does not stop within timeout stays attached with errTimeout; the caller
// waits for it again before detaching. Tracer thread only.
func waitStop(tid int, timeout time.Duration) (sig int, err error) {
	var deadline time.Time
	for polls := 0; ; polls++ {
		stopped, sig, err := pollStop(tid)
		if stopped || err != nil {
			return sig, err
		}
		if polls < spinPolls {
			continue
		}
		if deadline.IsZero() {
			deadline = time.Now().Add(timeout)
		}
		if time.Now().After(deadline) {
			return 0, errTimeout
		}
		backoff(polls - spinPolls)
	}
}

// detach lets tid run again, delivering sig if non-zero. Tracer thread
// only.
func detach(tid, sig int) error {
	_, _, e := unix.Syscall6(unix.SYS_PTRACE, unix.PTRACE_DETACH, uintptr(tid), 0, uintptr(sig), 0, 0)
	if e != 0 {
		return e
	}
	return nil
}

// readMem copies target memory at addr into p with process_vm_readv. The
// range must lie in one readable mapping: the kernel transfers nothing of
// an iovec that touches an unmapped page.
func readMem(pid int, addr uint64, p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	local := []unix.Iovec{{Base: (*byte)(unsafe.Pointer(&p[0]))}}
	local[0].SetLen(len(p))
	remote := []unix.RemoteIovec{{Base: uintptr(addr), Len: len(p)}}
	n, err := unix.ProcessVMReadv(pid, local, remote, 0)
	if err != nil {
		return max(n, 0), fmt.Errorf("process_vm_readv %#x+%#x: %w", addr, len(p), err)
	}
	return n, nil
}

// holdPriority raises the tracer's OS thread to the lowest real-time
// priority, which ordinary threads do not preempt, while it holds a
// stopped thread, and release lowers it again. On a busy machine a tracer
// preempted between a thread's stop and its detach keeps that thread
// stopped for a scheduler time slice. Where not permitted (no
// CAP_SYS_NICE or RLIMIT_RTPRIO) both are no-ops after the first try.
// Tracer thread only.
type holdPriority struct{ denied bool }

func (h *holdPriority) raise() {
	if h.denied {
		return
	}
	if err := unix.SchedSetAttr(0, &unix.SchedAttr{Size: unix.SizeofSchedAttr, Policy: unix.SCHED_FIFO, Priority: 1}, 0); err != nil {
		h.denied = true
	}
}

func (h *holdPriority) release() {
	if !h.denied {
		unix.SchedSetAttr(0, &unix.SchedAttr{Size: unix.SizeofSchedAttr, Policy: unix.SCHED_NORMAL}, 0)
	}
}
