//go:build linux && (amd64 || arm64)

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
	if err := ptrace(unix.PTRACE_SEIZE, tid, 0, 0); err != nil {
		return err
	}
	if err := ptrace(unix.PTRACE_INTERRUPT, tid, 0, 0); err != nil {
		ptrace(unix.PTRACE_DETACH, tid, 0, 0)
		return err
	}
	return nil
}

// raw makes a system call that returns within microseconds without
// telling the Go scheduler, which must not be used for calls that block.
// The tracer makes tens of thousands of them; announced, each one that
// outlasts a scheduler tick makes sysmon hand the tracer's P to another
// thread and the tracer take it back, and keeps sysmon polling every
// 20 µs, which together cost more CPU than the calls. Pointers passed as
// uintptr escape to the heap and stay alive through the call
// (go:uintptrescapes).
//
//go:uintptrescapes
func raw(trap, a1, a2, a3, a4, a5 uintptr) (uintptr, error) {
	r, _, e := unix.RawSyscall6(trap, a1, a2, a3, a4, a5, 0)
	if e != 0 {
		return r, e
	}
	return r, nil
}

// ptrace makes a ptrace request with raw.
//
//go:uintptrescapes
func ptrace(req, tid int, addr, data uintptr) error {
	_, err := raw(unix.SYS_PTRACE, uintptr(req), uintptr(tid), addr, data, 0)
	return err
}

// pollStop checks once, without blocking, whether tid has stopped after
// seize. It returns the signal to deliver on detach: a signal that arrived
// while we held the thread (signal-delivery-stop) must not be lost.
// Tracer thread only.
func pollStop(tid int) (stopped bool, sig int, err error) {
	var ws unix.WaitStatus
	for {
		r, err := raw(unix.SYS_WAIT4, uintptr(tid), uintptr(unsafe.Pointer(&ws)), unix.WALL|unix.WNOHANG, 0, 0)
		wpid := int(r)
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
// growing steps from 20 µs to maxSleep, which leaves the CPU to the
// threads we wait for (on a busy machine they may need ours to reach their
// stop). A thread's stop sends SIGCHLD, which the kernel gives to the
// tracer thread when it can, and the signal ends the sleep early (EINTR);
// maxSleep bounds the wait when it goes to another thread, comes just
// before the sleep, or is ignored (see the package doc). The call is raw:
// an announced sleep lets the Go scheduler give the tracer's P away, and a
// tracer that must then wait for a P to come back holds its stopped
// threads for milliseconds.
func backoff(n int) {
	ts := unix.NsecToTimespec(int64(min(10<<min(n, 7), maxSleep)) * 1000)
	raw(unix.SYS_NANOSLEEP, uintptr(unsafe.Pointer(&ts)), 0, 0, 0, 0)
}

// maxSleep is the longest sleep of backoff, in microseconds.
const maxSleep = 100

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

// tracerCPU moves the tracer's OS thread from CPU to CPU, among those it
// may run on. The thread exits after the dump: its affinity is never
// restored. Tracer thread only.
type tracerCPU struct {
	allowed unix.CPUSet
	cur     int // the CPU it is bound to, -1 if none
	failed  bool
}

func (c *tracerCPU) init() {
	c.cur = -1
	c.failed = unix.SchedGetaffinity(0, &c.allowed) != nil
}

// usable says whether the tracer may move to cpu.
func (c *tracerCPU) usable(cpu int) bool {
	return !c.failed && cpu >= 0 && c.allowed.IsSet(cpu)
}

// move binds the tracer to cpu, if usable. After a failure (a cpuset that
// changed, say) the tracer stays where it is.
func (c *tracerCPU) move(cpu int) {
	if !c.usable(cpu) || cpu == c.cur {
		return
	}
	var set unix.CPUSet
	set.Set(cpu)
	if unix.SchedSetaffinity(0, &set) != nil {
		c.failed = true
		return
	}
	c.cur = cpu
}

// tracerPriority gives the tracer, while it has a thread with a real-time
// priority in flight, the real-time priority one below that thread's, as
// a priority-inheriting mutex lends its holder the priority of the
// thread that waits for it. A thread under SCHED_FIFO or SCHED_RR is one
// whose latency matters, and a tracer at normal priority that holds it
// stopped can be preempted by any process for milliseconds. One below, so
// that the interrupted thread still preempts the tracer to reach its stop
// and runs the moment it is released. Other threads leave the tracer as
// it is: for them the two switches per thread cost more time than the
// preemptions they prevent, and their own wait for a CPU, as they stop
// and as they resume, is of the same order (bench/dump.md). A tracer that
// may not take a real-time priority (no CAP_SYS_NICE, RLIMIT_RTPRIO)
// stays as it is. Tracer thread only.
type tracerPriority struct {
	cur    int // the priority lent, 0 if none
	own    *unix.SchedAttr
	failed bool
}

// set lends the tracer real-time priority prio-1 (at least 1), or gives
// it back its own scheduling for 0.
func (p *tracerPriority) set(prio int) {
	if p.failed || prio == p.cur {
		return
	}
	if p.own == nil {
		own, err := unix.SchedGetAttr(0, 0)
		if err != nil {
			p.failed = true
			return
		}
		p.own = own
	}
	attr := *p.own
	if prio > 0 {
		attr = unix.SchedAttr{Policy: unix.SCHED_FIFO, Priority: uint32(max(prio-1, 1))}
	}
	if err := unix.SchedSetAttr(0, &attr, 0); err != nil {
		// Giving the priority back is always permitted; taking one
		// that was refused once is not tried again.
		p.failed = prio > 0
		return
	}
	p.cur = prio
}

// detach lets tid run again, delivering sig if non-zero. Tracer thread
// only.
func detach(tid, sig int) error {
	return ptrace(unix.PTRACE_DETACH, tid, 0, uintptr(sig))
}

// readMem copies target memory at addr into p with process_vm_readv. The
// range must lie in one readable mapping: the kernel transfers nothing of
// an iovec that touches an unmapped page.
func readMem(pid int, addr uint64, p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	local := unix.Iovec{Base: (*byte)(unsafe.Pointer(&p[0]))}
	local.SetLen(len(p))
	remote := unix.RemoteIovec{Base: uintptr(addr), Len: len(p)}
	n, err := raw(unix.SYS_PROCESS_VM_READV, uintptr(pid), uintptr(unsafe.Pointer(&local)), 1, uintptr(unsafe.Pointer(&remote)), 1)
	if err != nil {
		return 0, fmt.Errorf("process_vm_readv %#x+%#x: %w", addr, len(p), err)
	}
	return int(n), nil
}
