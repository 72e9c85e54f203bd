//go:build linux && (amd64 || arm64)

package dump

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/backtrail/backtrail/debugfile"
	"github.com/backtrail/backtrail/debugfile/elf"
	"github.com/backtrail/backtrail/unwind"
)

// redZone is how far below the stack pointer a copy starts: the x86-64
// ABI lets leaf functions use 128 bytes there.
const redZone = 128

// snapshot is what the tracer copies from one thread while it is stopped,
// or, peeked, reads of it without stopping it.
type snapshot struct {
	tid       int
	name      string
	state     string
	regs      unwind.Regs
	stackBase uint64
	stack     []byte
	stackMap  Mapping
	pause     time.Duration // from the interrupt until detach returned
	held      time.Duration // from the stop until detach returned
	unwound   *unwind.Stack // a peeked thread's stack, unwound already
}

// Dump takes the stacks of every thread of process pid. See the package
// documentation for how. The error wraps ErrNoProcess, ErrZombie or
// ErrNotPermitted (with what to do) when the process cannot be dumped;
// threads that vanish during the dump are left out with a note.
func Dump(ctx context.Context, pid int, opts Options) (*Process, error) {
	if opts.MaxFrames <= 0 {
		opts.MaxFrames = 256
	}
	if opts.StackWindow <= 0 {
		opts.StackWindow = 256 << 10
	}
	if opts.Workers <= 0 {
		opts.Workers = runtime.GOMAXPROCS(0)
	}
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	start := time.Now()
	p := &Process{PID: pid, Time: now(), Arch: hostArch}
	nthreads, err := checkProcess(pid, p)
	if err != nil {
		return nil, err
	}
	dir, err := openTaskDir(pid)
	if err != nil {
		return nil, explain(pid, err)
	}
	defer dir.close()
	// The threads are listed, and when the tracer is to take them their
	// names and states read ahead, while the maps are read and the modules
	// opened.
	peek := peekable && !opts.Stop && !opts.Freeze
	first := listThreads(dir, !opts.Freeze && !peek)
	defer first.close()
	// Each thread's stack and its guard page are a mapping each.
	maps, err := readMaps(pid, 2*nthreads+64)
	if err != nil {
		return nil, explain(pid, err)
	}
	p.Exe, _ = os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
	p.Exe = strings.TrimSuffix(p.Exe, " (deleted)")

	mods, space, notes := loadModules(pid, maps)
	defer func() {
		for _, m := range mods {
			m.close()
		}
	}()
	p.Notes = append(p.Notes, notes...)
	for _, m := range mods {
		if m.info.Path == p.Exe && m.goBin {
			p.GoProgram = true
			p.Notes = append(p.Notes, goNote)
		}
	}

	// Unwinding and symbolization run on a pool while the tracer goes on
	// capturing; results land by index, so order does not depend on
	// scheduling.
	var (
		mu sync.Mutex
		// threads holds the results by index in the dump, sized by the
		// first listing when the first result lands; a thread not dumped
		// has TID 0.
		threads []Thread
		jobs    = make(chan []*indexed, 1024)
		wg      sync.WaitGroup
	)
	live := &liveMemory{pid: pid, maps: maps}
	stacks := &stackPool{free: make(chan []byte, 256)}
	w := &worker{opts: &opts, space: space, mods: mods, live: live, dir: dir}
	for i := 0; i < opts.Workers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var frames []Frame
			for batch := range jobs {
				for _, j := range batch {
					t := w.thread(&j.snap, &frames)
					stacks.put(j.snap.stack)
					mu.Lock()
					if j.idx >= len(threads) {
						listed, _, _ := first.wait()
						threads = slices.Grow(threads, max(j.idx+1, len(listed))-len(threads))
						threads = threads[:cap(threads)]
					}
					threads[j.idx] = t
					mu.Unlock()
				}
				// A tracer preempted by the Go scheduler waits in the
				// global run queue until a P looks there; a worker that
				// went on through a backlog of batches would keep it
				// waiting, with threads stopped, for milliseconds. (A
				// sched_yield to the kernel here, to let target threads
				// woken on this CPU run sooner, hands a busy process
				// sharing the CPU a whole time slice: next to one, dumps
				// took a third longer.)
				runtime.Gosched()
			}
		}()
	}

	// The debug information of the executable and the C and C++ runtime
	// libraries is needed by nearly every thread: read it while the
	// tracer waits for threads to stop.
	if !opts.NoSymbols {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, m := range mods {
				if m.info.Path == p.Exe || strings.HasPrefix(m.info.Name, "libc.so") || strings.HasPrefix(m.info.Name, "libstdc++.so") {
					m.symbolizer(&opts)
				}
			}
		}()
	}

	tr := startTracer()
	var res captureResult
	tr.do(func() {
		out := &batcher{out: jobs}
		if opts.Freeze {
			res = captureFrozen(ctx, dir, first, maps, opts.StackWindow, out)
		} else {
			var peeker *worker
			if peek {
				peeker = w
			}
			res = captureEach(ctx, dir, first, maps, opts.StackWindow, stacks, peeker, out)
		}
		out.flush()
	})
	tr.stop()
	close(jobs)
	wg.Wait()

	p.Notes = append(p.Notes, res.notes...)
	p.MaxPause = res.maxPause
	if res.err != nil {
		return nil, res.err
	}
	p.Threads = slices.DeleteFunc(threads, func(t Thread) bool { return t.TID == 0 })
	for _, m := range mods {
		if m.sym != nil || m.info.DebugID != "" {
			p.Modules = append(p.Modules, m.info)
		}
	}
	if st, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid)); err == nil {
		p.Name = strings.TrimSpace(string(st))
	}
	p.Elapsed = time.Since(start)
	if ctx.Err() != nil {
		return p, ctx.Err()
	}
	return p, nil
}

type indexed struct {
	idx  int
	snap snapshot
}

// batcher hands snapshots to the workers a few at a time: one wakeup per
// batch rather than per thread.
type batcher struct {
	out   chan<- []*indexed
	batch []*indexed
}

func (b *batcher) send(x *indexed) {
	b.batch = append(b.batch, x)
	if len(b.batch) == 8 {
		b.flush()
	}
}

func (b *batcher) flush() {
	if len(b.batch) > 0 {
		b.out <- b.batch
		b.batch = nil
	}
}

type captureResult struct {
	notes    []string
	maxPause time.Duration
	err      error
}

// checkProcess fails for a missing or zombie process, and returns its
// number of threads.
func checkProcess(pid int, p *Process) (threads int, err error) {
	// The main thread's stat file, not the process's: for the process
	// the kernel adds up the times of every thread, 0.2–0.8 ms for a
	// thousand of them where the thread's takes 20–35 µs. The name,
	// state and parent are the main thread's in both.
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/stat", pid, pid))
	if errors.Is(err, os.ErrNotExist) || pid <= 0 {
		return 0, fmt.Errorf("process %d: %w", pid, ErrNoProcess)
	}
	if err != nil {
		return 0, explain(pid, err)
	}
	st, err := parseStat(b)
	if err != nil {
		return 0, fmt.Errorf("process %d: %w", pid, err)
	}
	p.Name = st.Comm
	if st.State == 'Z' || st.State == 'X' {
		return 0, fmt.Errorf("process %d (%s) has exited and waits for its parent %d to reap it: %w", pid, st.Comm, st.PPID, ErrZombie)
	}
	return st.Threads, nil
}

// Threads returns how many threads process pid has, as its main thread's
// stat file counts them, for a caller that sizes what it prepares for a
// dump. It fails as Dump does for a process that is missing or a zombie.
func Threads(pid int) (int, error) {
	var p Process
	return checkProcess(pid, &p)
}

// readMaps reads the process's mappings, with room for about n.
func readMaps(pid, n int) ([]Mapping, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/maps", pid))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	maps, err := parseMaps(f, n)
	if err == nil && len(maps) == 0 {
		// A process we may not trace shows an empty maps file.
		err = syscall.EPERM
	}
	return maps, err
}

// explain turns a permission error into advice.
func explain(pid int, err error) error {
	if errors.Is(err, syscall.ESRCH) || errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("process %d: %w", pid, ErrNoProcess)
	}
	if !errors.Is(err, syscall.EPERM) && !errors.Is(err, syscall.EACCES) {
		return fmt.Errorf("process %d: %w", pid, err)
	}
	var why []string
	if uid := strings.Fields(statusField(pid, "Uid")); len(uid) > 0 && uid[0] != fmt.Sprint(os.Getuid()) {
		why = append(why, fmt.Sprintf("it belongs to uid %s and you are uid %d: run as that user or as root", uid[0], os.Getuid()))
	}
	if t := statusField(pid, "TracerPid"); t != "" && t != "0" {
		why = append(why, fmt.Sprintf("it is already traced by process %s (a debugger?)", t))
	}
	if b, e := os.ReadFile("/proc/sys/kernel/yama/ptrace_scope"); e == nil {
		switch s := strings.TrimSpace(string(b)); s {
		case "1":
			why = append(why, "kernel.yama.ptrace_scope is 1: only a parent may trace its children unless you have CAP_SYS_PTRACE (run as root, or sysctl kernel.yama.ptrace_scope=0)")
		case "2", "3":
			why = append(why, "kernel.yama.ptrace_scope is "+s+": only CAP_SYS_PTRACE may trace (3: nobody)")
		}
	}
	if len(why) == 0 {
		why = append(why, "tracing needs the same user and no extra privileges on the target, or CAP_SYS_PTRACE; in a container add --cap-add=SYS_PTRACE")
	}
	return fmt.Errorf("process %d: ptrace %w: %v; %s", pid, ErrNotPermitted, err, strings.Join(why, "; "))
}

// stackRange returns the part of the stack mapping to copy.
func stackRange(maps []Mapping, sp uint64, window int) (lo, hi uint64, mp *Mapping) {
	mp = findMapping(maps, sp)
	if mp == nil || !mp.Readable() {
		return 0, 0, nil
	}
	lo = max(sp-redZone, mp.Start)
	hi = min(sp+uint64(window), mp.End)
	return lo, hi, mp
}

// readStack copies the stack of a stopped thread into scratch, which
// holds at least stackWindow+redZone bytes, and records where it came
// from in s; s.stack aliases scratch. maps and scratch are the caller's
// own: readStack replaces *maps when sp is in no mapping it lists.
func readStack(pid int, maps *[]Mapping, regs *unwind.Regs, stackWindow int, scratch []byte, s *snapshot) {
	sp := regs.SP()
	lo, hi, mp := stackRange(*maps, sp, stackWindow)
	if mp == nil {
		// A thread created after the maps were read: read them again.
		if m, err := readMaps(pid, len(*maps)+64); err == nil {
			*maps = m
			lo, hi, mp = stackRange(*maps, sp, stackWindow)
		}
	}
	if mp == nil {
		return
	}
	n, _ := readMem(pid, lo, scratch[:hi-lo])
	s.stackBase, s.stack, s.stackMap = lo, scratch[:n], *mp
}

// stackPool recycles the buffers that copied stacks are kept in until
// they are unwound: the workers give a buffer back once its thread is
// done. A dump of many threads then touches a few hundred buffers' worth
// of memory rather than a new copy per thread, each one page faults.
type stackPool struct {
	free chan []byte
}

// clone returns a copy of b, in a free buffer when one is large enough.
func (p *stackPool) clone(b []byte) []byte {
	select {
	case buf := <-p.free:
		if cap(buf) >= len(b) {
			return append(buf[:0], b...)
		}
		p.put(buf)
	default:
	}
	// Rounded up so that the buffer can serve other threads.
	return append(make([]byte, 0, (len(b)+4095)&^4095), b...)
}

// put gives b back for another copy.
func (p *stackPool) put(b []byte) {
	if cap(b) == 0 {
		return
	}
	select {
	case p.free <- b:
	default:
	}
}

// stopWindow is how many threads captureEach has asked to stop at once.
// The kernel takes tens of microseconds, more on a busy machine, to
// schedule an interrupted thread into its stop, and that wait, not the
// reading, is most of the cost of a thread; with two interrupts in flight
// the waits overlap. Each thread is still read and released the moment
// it is seen stopped: at most it waits for the read of the one thread that
// stopped just before it, a few tens of microseconds.
const stopWindow = 2

// yieldEvery is how long the tracer runs before it yields to the Go
// scheduler, at a moment when it holds no thread. It never blocks in the
// scheduler otherwise (its system calls are raw), and the scheduler
// preempts a goroutine that has run for 10 ms wherever it is: between a
// thread's interrupt and its detach, that thread would wait for the
// tracer to get a P back.
const yieldEvery = 4 * time.Millisecond

// relistAhead is how many threads before the end of its list captureEach
// lists the threads again, on another goroutine, to find those started
// during the dump: listing a thousand threads takes 1–3 ms, the time of a
// few dozen threads stopped by the tracer. peekRelistAhead is the same for
// the peekers, which read a hundred in that time.
const (
	relistAhead     = 64
	peekRelistAhead = 256
)

// captureEach stops, reads and releases the threads of the listing first
// one by one, with up to stopWindow of them asked to stop at once, then
// those of a second listing it had not seen, in the order of a queue
// (which moves the tracer between CPUs). A thread's name and state are
// read before it is interrupted (see threadInfos).
//
// With peeker set, the listings go to a peekPool instead, which reads
// each thread's state and peeks those not running; the tracer stops only
// the threads it passes back: those running, and those that ran during
// the peek or whose walk needed a register the peek does not show (a
// frame pointer, say). Tracer thread only.
func captureEach(ctx context.Context, dir *taskDir, first *threadList, maps []Mapping, stackWindow int, stacks *stackPool, peeker *worker, out *batcher) (res captureResult) {
	pid := dir.pid
	tids, info, err := first.wait()
	if err != nil {
		res.err = explain(pid, err)
		return res
	}
	defer info.close()
	type flight struct {
		pending
		t0, deadline time.Time
	}
	var inflight, stuck []flight
	var prio tracerPriority
	defer prio.set(0)
	// rtInFlight is the highest real-time priority of a thread in flight.
	rtInFlight := func() (p int) {
		for _, f := range inflight {
			p = max(p, f.rtPriority)
		}
		return p
	}
	defer func() {
		// Every thread asked to stop is released on every path.
		for _, f := range append(inflight, stuck...) {
			if sig, err := waitStop(f.tid, stopTimeout); err == nil {
				detach(f.tid, sig)
			}
		}
	}()
	q := newQueue()
	var peeks *peekPool
	if peeker != nil {
		peeks = &peekPool{w: peeker, dir: dir, maps: maps, stackWindow: stackWindow, out: out.out, failed: make(chan pending, 64)}
		defer peeks.stop()
	}
	// listed hands a listing to the peekers, or to the queue.
	listed := func(tids []int, info *threadInfos) {
		q.add(tids, info)
		if peeks != nil {
			peeks.peek(tids, q.base)
			q.skip()
		}
	}
	listed(tids, info)
	ok, polls := 0, 0
	ran := time.Now() // since the tracer last gave the Go scheduler a turn
	scratch := make([]byte, stackWindow+redZone)
	var relist *threadList
	defer func() {
		if relist != nil {
			relist.close()
		}
	}()
	for round := 0; ; round++ {
		for q.left() > 0 || len(inflight) > 0 || peeks.outstanding() > 0 {
			if round == 0 && relist == nil && (q.left()+peeks.outstanding() <= relistAhead || peeks.nearingEnd()) {
				relist = listThreads(dir, false)
			}
			if ctx.Err() != nil {
				res.notes = append(res.notes, "interrupted: "+ctx.Err().Error())
				return res
			}
			if time.Since(ran) > yieldEvery {
				// Interrupt no more threads until those in flight are
				// released, then yield: see yieldEvery.
				if len(inflight) == 0 {
					runtime.Gosched()
					ran = time.Now()
				}
			}
			peeks.collect(ctx, q, len(inflight) == 0 && q.left() == 0)
			for len(inflight) < stopWindow && time.Since(ran) <= yieldEvery {
				p, more := q.pop(len(inflight) == 0)
				if !more {
					break
				}
				// Borrowed before the interrupt. The kernel then wakes a
				// real-time thread on another CPU than the pinned
				// tracer's, which adds ≈ 50 µs to its median pause;
				// borrowed after, its pause kept the tail of milliseconds
				// it has without borrowing (bench/dump.md).
				prio.set(max(p.rtPriority, rtInFlight()))
				f := flight{pending: p, t0: time.Now()}
				f.deadline = f.t0.Add(stopTimeout)
				if err := seize(f.tid); err != nil {
					switch {
					case errors.Is(err, syscall.ESRCH):
						res.notes = append(res.notes, fmt.Sprintf("thread %d exited before it could be read", f.tid))
					case ok+peeks.done() == 0 && len(inflight) == 0 && (errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.EACCES)):
						res.err = explain(pid, err)
						return res
					default:
						res.notes = append(res.notes, fmt.Sprintf("thread %d: %v", f.tid, err))
					}
					continue
				}
				inflight = append(inflight, f)
			}
			progress := false
			for i := 0; i < len(inflight); i++ {
				f := inflight[i]
				stopped, sig, err := pollStop(f.tid)
				if !stopped && err == nil {
					if time.Now().After(f.deadline) {
						// Uninterruptible sleep: it is released when it
						// stops, at the end.
						res.notes = append(res.notes, fmt.Sprintf("thread %d did not stop within %v", f.tid, stopTimeout))
						stuck = append(stuck, f)
						inflight = slices.Delete(inflight, i, i+1)
						i--
					}
					continue
				}
				inflight = slices.Delete(inflight, i, i+1)
				i--
				progress = true
				if err == nil {
					var s snapshot
					s, err = readStopped(pid, f.tid, sig, f.t0, &maps, stackWindow, scratch)
					s.name, s.state = f.name, f.state
					res.maxPause = max(res.maxPause, s.pause)
					if err == nil {
						ok++
						s.stack = stacks.clone(s.stack)
						out.send(&indexed{f.idx, s})
						continue
					}
				}
				if errors.Is(err, errGone) || errors.Is(err, syscall.ESRCH) {
					res.notes = append(res.notes, fmt.Sprintf("thread %d exited during the dump", f.tid))
				} else {
					res.notes = append(res.notes, fmt.Sprintf("thread %d: %v", f.tid, err))
				}
			}
			prio.set(rtInFlight())
			if progress {
				polls = 0
			} else if polls++; polls > spinPolls {
				backoff(polls - spinPolls)
			}
		}
		if round == 1 {
			break
		}
		// Threads started while we worked are dumped too, once.
		if relist == nil {
			relist = listThreads(dir, false)
		}
		if tids, _, err = relist.wait(); err != nil {
			break
		}
		tids = slices.DeleteFunc(tids, func(tid int) bool { return q.seen[tid] })
		info = nil
		if peeks == nil {
			info = readAhead(dir, tids)
			defer info.close()
		}
		listed(tids, info)
	}
	return res
}

// peekPool reads threads without stopping them for captureEach: one
// goroutine per worker, each with its own copy buffer, takes the threads
// of a listing in turn, reads each one's name and state, peeks it
// (peekThread) unless it is running, hands what it read to the workers,
// and passes the threads it could not read to the tracer. A peek needs no
// ptrace, and its reads of /proc, about 36 µs of kernel time a thread,
// were most of the tracer's work in a process of blocked threads; made by
// the tracer, they were made one at a time and kept the threads in flight
// stopped (bench/dump.md). Its methods are for the tracer; outstanding,
// done and collect of a nil pool do nothing.
type peekPool struct {
	w           *worker
	dir         *taskDir
	maps        []Mapping
	stackWindow int
	out         chan<- []*indexed
	failed      chan pending // threads to stop

	read   atomic.Int64  // threads read
	handed int           // threads handed to the peekers
	got    int           // threads passed back and collected
	idle   chan struct{} // closed when the last listing's peekers are done
	// near is closed when the peekers take the thread peekRelistAhead
	// before the end of the last listing, for the tracer, which may be
	// waiting in collect, to list the threads again; nil once collect
	// saw it.
	near    chan struct{}
	nearEnd bool // collect saw near
	quit    atomic.Bool
	wg      sync.WaitGroup
}

// peek hands the listing tids, whose first thread is at base in the dump,
// to the peekers.
func (pp *peekPool) peek(tids []int, base int) {
	pp.handed += len(tids)
	idle, near := make(chan struct{}), make(chan struct{})
	pp.idle, pp.near, pp.nearEnd = idle, near, false
	nearAt := max(len(tids)-peekRelistAhead, 0)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(pp.w.opts.Workers, len(tids)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			maps := pp.maps // readStack replaces it when a stack is in no mapping read
			scratch := make([]byte, pp.stackWindow+redZone)
			b := &batcher{out: pp.out}
			defer b.flush()
			for !pp.quit.Load() {
				i := int(next.Add(1)) - 1
				if i >= len(tids) {
					return
				}
				if i == nearAt {
					close(near)
				}
				p := pending{tid: tids[i], idx: base + i, taskInfo: pp.dir.threadInfo(tids[i])}
				if p.state != "R" {
					if s, ok := peekThread(pp.dir, p.tid, &maps, pp.stackWindow, scratch, pp.w); ok {
						s.name, s.state = p.name, p.state
						b.send(&indexed{p.idx, s})
						pp.read.Add(1)
						continue
					}
				}
				pp.failed <- p
			}
		}()
	}
	pp.wg.Add(1)
	go func() {
		defer pp.wg.Done()
		wg.Wait()
		close(idle)
	}()
}

// outstanding returns how many threads handed to the peekers were neither
// read nor collected.
func (pp *peekPool) outstanding() int {
	if pp == nil {
		return 0
	}
	return pp.handed - int(pp.read.Load()) - pp.got
}

// nearingEnd reports whether the peekers have taken the thread
// peekRelistAhead before the end of the last listing (see near).
func (pp *peekPool) nearingEnd() bool { return pp != nil && pp.nearEnd }

// done returns how many threads the peekers read.
func (pp *peekPool) done() int {
	if pp == nil {
		return 0
	}
	return int(pp.read.Load())
}

// collect pushes the threads passed back onto q; with wait, it first waits
// for one, for the peekers to finish or for ctx to end, while any are out.
func (pp *peekPool) collect(ctx context.Context, q *queue, wait bool) {
	if pp == nil {
		return
	}
	if wait && pp.outstanding() > 0 {
		select {
		case p := <-pp.failed:
			pp.got++
			q.push(p)
		case <-pp.idle:
		case <-pp.near:
			pp.near, pp.nearEnd = nil, true
		case <-ctx.Done():
		}
	}
	for {
		select {
		case p := <-pp.failed:
			pp.got++
			q.push(p)
		default:
			return
		}
	}
}

// stop ends the peeks (an interrupted dump drops the rest) and waits for
// the peekers, which send to the workers, to finish.
func (pp *peekPool) stop() {
	pp.quit.Store(true)
	finished := make(chan struct{})
	go func() {
		pp.wg.Wait()
		close(finished)
	}()
	for {
		select {
		case <-pp.failed:
		case <-finished:
			return
		}
	}
}

// pending is a thread captureEach is to interrupt.
type pending struct {
	tid int
	idx int // its place in the dump: its place in the listing
	taskInfo
}

// queue hands captureEach the threads to interrupt: those of a listing in
// order, except that a thread that last ran on another CPU than the one
// the tracer is on waits in that CPU's group; once the listing is done, the
// tracer moves to each group's CPU in turn and takes its threads.
//
// A thread asked to stop is woken on the CPU it last ran on or on the
// waker's, and makes the system calls of its stop and of its release
// there. On the tracer's CPU it simply runs in turn with the tracer; on
// another one every stop and every release costs an interrupt between
// the CPUs, and the thread waits there behind whatever runs, the
// dumper's own unwinding included. Taking the threads CPU by CPU made a
// dump of 1000 threads about 15 % faster on a 2-CPU machine, without
// longer pauses (bench/dump.md).
type queue struct {
	tids     []int
	info     *threadInfos
	next     int
	base     int // idx of tids[0]
	seen     map[int]bool
	cpu      tracerCPU
	groups   map[int][]pending // by CPU
	cur      []pending         // the group being taken
	deferred int               // threads in groups and cur
	arrived  []pending         // passed back by the peekers, to take before the listing
}

func newQueue() *queue {
	q := &queue{seen: map[int]bool{}, groups: map[int][]pending{}}
	q.cpu.init()
	return q
}

// add queues another listing's threads, after the others.
func (q *queue) add(tids []int, info *threadInfos) {
	q.base += len(q.tids)
	q.tids, q.info, q.next = tids, info, 0
}

// left says how many threads are still to be taken.
func (q *queue) left() int {
	return len(q.tids) - q.next + q.deferred + len(q.arrived)
}

// skip leaves the rest of the listing to the peekers.
func (q *queue) skip() {
	for _, tid := range q.tids[q.next:] {
		q.seen[tid] = true
	}
	q.next = len(q.tids)
}

// push adds a thread the peekers passed back.
func (q *queue) push(p pending) { q.arrived = append(q.arrived, p) }

// pop returns the next thread to interrupt, with more false if there is
// none for now. The tracer moves to another CPU only when idle, with no
// thread in flight.
func (q *queue) pop(idle bool) (p pending, more bool) {
	for len(q.arrived) > 0 || q.next < len(q.tids) {
		if len(q.arrived) > 0 {
			p, q.arrived = q.arrived[0], q.arrived[1:]
		} else {
			i := q.next
			q.next++
			tid := q.tids[i]
			if q.seen[tid] {
				continue
			}
			q.seen[tid] = true
			p = pending{tid: tid, idx: q.base + i, taskInfo: q.info.get(i)}
		}
		if q.cpu.cur < 0 {
			// The tracer goes where the first thread is.
			if idle {
				q.cpu.move(p.cpu)
			}
			if q.cpu.cur < 0 {
				return p, true
			}
		}
		if p.cpu != q.cpu.cur && q.cpu.usable(p.cpu) {
			q.groups[p.cpu] = append(q.groups[p.cpu], p)
			q.deferred++
			continue
		}
		return p, true
	}
	for len(q.cur) == 0 {
		if !idle || len(q.groups) == 0 {
			return p, false
		}
		cpu := -1
		for c := range q.groups {
			if cpu < 0 || c < cpu {
				cpu = c
			}
		}
		q.cur = q.groups[cpu]
		delete(q.groups, cpu)
		q.cpu.move(cpu)
	}
	p, q.cur = q.cur[0], q.cur[1:]
	q.deferred--
	return p, true
}

// threadList is a listing of a process's threads, made on a goroutine of
// its own, and the names and states of its threads if they are read
// ahead.
type threadList struct {
	done chan struct{}
	tids []int
	err  error
	info *threadInfos // nil unless read ahead
}

// listThreads lists dir's threads on a goroutine of its own and then, if
// readInfo, reads their names and states ahead (see readAhead).
func listThreads(dir *taskDir, readInfo bool) *threadList {
	l := &threadList{done: make(chan struct{})}
	go func() {
		defer close(l.done)
		l.tids, l.err = dir.tasks()
		if l.err == nil && readInfo {
			l.info = readAhead(dir, l.tids)
		}
	}()
	return l
}

// wait returns the listing once it is made.
func (l *threadList) wait() ([]int, *threadInfos, error) {
	<-l.done
	return l.tids, l.info, l.err
}

// close stops the reading ahead and waits for it: the directory it reads
// is closed after the dump.
func (l *threadList) close() {
	<-l.done
	l.info.close()
}

// threadInfos has the names, states, last CPUs and real-time priorities
// of a list of threads, read in order by a goroutine of its own ahead of
// the tracer: three system calls per thread that the tracer, which holds
// threads stopped, then need not make. They are read before the threads
// are interrupted, as Thread.State says; the tracer reads those it reaches
// first itself.
type threadInfos struct {
	dir   *taskDir
	tids  []int
	infos []taskInfo
	ready atomic.Int64 // entries filled
	taken atomic.Int64 // entries the tracer has asked for
	stop  atomic.Bool
	done  chan struct{}
}

func readAhead(dir *taskDir, tids []int) *threadInfos {
	ti := &threadInfos{dir: dir, tids: tids, infos: make([]taskInfo, len(tids)), done: make(chan struct{})}
	go func() {
		defer close(ti.done)
		for i, tid := range tids {
			if ti.stop.Load() {
				return
			}
			if int64(i) < ti.taken.Load() {
				// The tracer got there first and read it.
				continue
			}
			ti.infos[i] = dir.threadInfo(tid)
			ti.ready.Store(int64(i + 1))
			if i%16 == 15 {
				// As the workers do (see Dump).
				runtime.Gosched()
			}
		}
	}()
	return ti
}

// get returns what was read of the i-th thread.
func (ti *threadInfos) get(i int) taskInfo {
	ti.taken.Store(int64(i + 1))
	if int64(i) < ti.ready.Load() {
		return ti.infos[i]
	}
	return ti.dir.threadInfo(ti.tids[i])
}

// close stops the reading and waits for it: the directory it reads is
// closed after the dump. Closing nil, or twice, does nothing.
func (ti *threadInfos) close() {
	if ti == nil {
		return
	}
	ti.stop.Store(true)
	<-ti.done
}

// readStopped copies the registers and stack of thread tid, stopped since
// an interrupt at t0, and releases it with sig. s.stack aliases scratch,
// which holds at least stackWindow+redZone bytes and was used before: a
// buffer allocated once keeps allocation, zeroing and page faults out of
// the time the thread is held. Tracer thread only.
func readStopped(pid, tid, sig int, t0 time.Time, maps *[]Mapping, stackWindow int, scratch []byte) (s snapshot, err error) {
	s.tid = tid
	stopped := time.Now()
	s.regs, err = getRegs(tid)
	if err == nil {
		readStack(pid, maps, &s.regs, stackWindow, scratch, &s)
	}
	derr := detach(tid, sig)
	end := time.Now()
	s.pause, s.held = end.Sub(t0), end.Sub(stopped)
	if err != nil {
		return s, fmt.Errorf("registers: %w", err)
	}
	if derr != nil && !errors.Is(derr, syscall.ESRCH) {
		return s, fmt.Errorf("detach: %w", derr)
	}
	return s, nil
}

// peekThread reads and unwinds thread tid without stopping it (see
// captureEach), and reports whether that worked. The walk runs before the
// peek's second look at the thread, so that what it reads beyond the copy
// (a signal stack elsewhere, a stack deeper than the window, or all of it
// when the stack pointer is in no mapping read) is read while the thread
// is known not to have run. maps and scratch are the caller's own; the
// thread is read through /proc and its memory, never ptrace, so any
// goroutine may peek.
func peekThread(dir *taskDir, tid int, maps *[]Mapping, stackWindow int, scratch []byte, w *worker) (snapshot, bool) {
	s := snapshot{tid: tid}
	var st unwind.Stack
	ok := dir.peek(tid, func(regs *unwind.Regs) {
		readStack(dir.pid, maps, regs, stackWindow, scratch, &s)
		s.regs = *regs
		st = w.unwind(&s)
	})
	if !ok || st.Stop != "" {
		return s, false
	}
	s.unwound, s.stack = &st, nil // s.stack aliases scratch
	return s, true
}

// captureFrozen stops every thread, re-reading the task list until it is
// stable, reads them all, and releases them all. Tracer thread only.
func captureFrozen(ctx context.Context, dir *taskDir, first *threadList, maps []Mapping, stackWindow int, out *batcher) (res captureResult) {
	pid := dir.pid
	type held struct {
		s   snapshot
		sig int
		at  time.Time // when it stopped
	}
	var order []int
	stopped := map[int]*held{}
	var t0 time.Time
	defer func() {
		// Every path releases every thread it stopped.
		for _, tid := range order {
			if h := stopped[tid]; h != nil {
				detach(tid, h.sig)
			}
		}
		if !t0.IsZero() {
			res.maxPause = time.Since(t0)
		}
	}()
	failed := map[int]bool{}
	for round := 0; round < 100; round++ {
		var tids []int
		var err error
		if round == 0 {
			tids, _, err = first.wait()
		} else {
			tids, err = dir.tasks()
		}
		if err != nil {
			res.err = explain(pid, err)
			return res
		}
		added := 0
		for _, tid := range tids {
			if stopped[tid] != nil || failed[tid] {
				continue
			}
			if ctx.Err() != nil {
				res.err = ctx.Err()
				return res
			}
			s := snapshot{tid: tid}
			if t0.IsZero() {
				t0 = time.Now()
			}
			if err := seize(tid); err != nil {
				failed[tid] = true
				if errors.Is(err, syscall.ESRCH) {
					res.notes = append(res.notes, fmt.Sprintf("thread %d exited before it could be read", tid))
					continue
				}
				if len(stopped) == 0 {
					res.err = explain(pid, err)
					return res
				}
				res.notes = append(res.notes, fmt.Sprintf("thread %d: %v", tid, err))
				continue
			}
			sig, err := waitStop(tid, stopTimeout)
			if err != nil {
				failed[tid] = true
				if errors.Is(err, errTimeout) {
					res.notes = append(res.notes, fmt.Sprintf("thread %d did not stop within %v", tid, stopTimeout))
				} else {
					res.notes = append(res.notes, fmt.Sprintf("thread %d exited during the dump", tid))
				}
				continue
			}
			order = append(order, tid)
			stopped[tid] = &held{s: s, sig: sig, at: time.Now()}
			added++
		}
		if added == 0 {
			break
		}
	}
	sortTIDs(order, pid)
	var snaps []snapshot
	var at []time.Time
	scratch := make([]byte, stackWindow+redZone)
	for _, tid := range order {
		h := stopped[tid]
		regs, err := getRegs(tid)
		if err != nil {
			res.notes = append(res.notes, fmt.Sprintf("thread %d: registers: %v", tid, err))
			continue
		}
		h.s.regs = regs
		readStack(pid, &maps, &h.s.regs, stackWindow, scratch, &h.s)
		h.s.stack = slices.Clone(h.s.stack)
		snaps = append(snaps, h.s)
		at = append(at, h.at)
	}
	for _, tid := range order {
		detach(tid, stopped[tid].sig)
		stopped[tid] = nil
	}
	end := time.Now()
	res.maxPause = end.Sub(t0)
	t0 = time.Time{}
	for i, s := range snaps {
		s.pause, s.held = res.maxPause, end.Sub(at[i])
		out.send(&indexed{i, s})
	}
	return res
}

// liveMemory reads the target's memory within its readable mappings.
type liveMemory struct {
	pid  int
	maps []Mapping
}

func (m *liveMemory) ReadAt(p []byte, addr uint64) (int, error) {
	mp := findMapping(m.maps, addr)
	if mp == nil || !mp.Readable() || addr+uint64(len(p)) > mp.End || addr+uint64(len(p)) < addr {
		return 0, fmt.Errorf("%#x: not in a readable mapping", addr)
	}
	return readMem(m.pid, addr, p)
}

// snapMemory serves reads from a thread's copied stack, and the rest from
// the live process.
type snapMemory struct {
	base uint64
	data []byte
	live *liveMemory
}

func (m *snapMemory) ReadAt(p []byte, addr uint64) (int, error) {
	if addr >= m.base && addr-m.base < uint64(len(m.data)) && uint64(len(p)) <= uint64(len(m.data))-(addr-m.base) {
		return copy(p, m.data[addr-m.base:]), nil
	}
	return m.live.ReadAt(p, addr)
}

// loadModules opens every file with an executable mapping, and the vDSO.
func loadModules(pid int, maps []Mapping) ([]*module, *unwind.Space, []string) {
	type key struct {
		path  string
		inode uint64
		dev   string
	}
	groups := map[key][]*Mapping{}
	var keys []key
	for i := range maps {
		m := &maps[i]
		if !m.File() {
			continue
		}
		k := key{m.Path, m.Inode, m.Dev}
		if groups[k] == nil {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], m)
	}
	var mods []*module
	var space []unwind.Mapping
	var notes []string
	for _, k := range keys {
		g := groups[k]
		if !slices.ContainsFunc(g, func(m *Mapping) bool { return m.Exec() }) {
			continue
		}
		open := filePath(pid, g[0])
		if open == "" {
			notes = append(notes, fmt.Sprintf("%s: cannot open the file (not in /proc/%d/root, no map_files entry)", k.path, pid))
			continue
		}
		m, err := loadModule(open, k.path, g)
		if err != nil {
			notes = append(notes, fmt.Sprintf("%s: %v", k.path, err))
			continue
		}
		mods = append(mods, m)
		for _, mp := range g {
			space = append(space, unwind.Mapping{Start: mp.Start, End: mp.End, Bias: m.info.Bias, Module: m.cfi, Name: m.info.Name})
		}
	}
	for i := range maps {
		if maps[i].Path == "[vdso]" {
			if m := loadVDSO(pid, &maps[i]); m != nil {
				mods = append(mods, m)
				space = append(space, unwind.Mapping{Start: maps[i].Start, End: maps[i].End, Bias: m.info.Bias, Module: m.cfi, Name: m.info.Name})
			}
		}
	}
	slices.SortFunc(mods, func(a, b *module) int {
		switch {
		case a.info.Start < b.info.Start:
			return -1
		case a.info.Start > b.info.Start:
			return 1
		}
		return 0
	})
	return mods, unwind.NewSpace(space), notes
}

// loadVDSO reads the vDSO image from the process, which has no file, and
// keeps a temporary copy for the symbolizer.
func loadVDSO(pid int, mp *Mapping) *module {
	data := make([]byte, mp.End-mp.Start)
	if n, err := readMem(pid, mp.Start, data); err != nil || n != len(data) {
		return nil
	}
	ef, err := elf.NewFile(data)
	if err != nil {
		return nil
	}
	var obj *debugfile.Object
	if df, err := debugfile.NewFile(data, "[vdso]"); err == nil {
		obj, _ = df.Object("")
	}
	m, err := newModule(ef, obj, "", "[vdso]", []*Mapping{mp})
	if err != nil {
		return nil
	}
	m.info.Name = "[vdso]"
	if f, err := os.CreateTemp("", "backtrail-vdso-*.so"); err == nil {
		f.Write(data)
		f.Close()
		m.open, m.tmpPath = f.Name(), f.Name()
	}
	return m
}

// worker unwinds and symbolizes snapshots.
type worker struct {
	opts  *Options
	space *unwind.Space
	mods  []*module
	live  *liveMemory
	dir   *taskDir
}

func (w *worker) module(addr uint64) *module {
	i, _ := slices.BinarySearchFunc(w.mods, addr, func(m *module, a uint64) int {
		if m.info.Start <= a {
			return -1
		}
		return 1
	})
	if i > 0 && addr < w.mods[i-1].info.End {
		return w.mods[i-1]
	}
	return nil
}

// unwind walks the stack of s.
func (w *worker) unwind(s *snapshot) unwind.Stack {
	mem := &snapMemory{base: s.stackBase, data: s.stack, live: w.live}
	uo := unwind.Options{MaxFrames: w.opts.MaxFrames}
	if s.stackMap.End != 0 {
		uo.StackLo, uo.StackHi = s.stackMap.Start, s.stackMap.End
	}
	return unwind.Unwind(s.regs, mem, w.space, uo)
}

// thread unwinds (unless a peek did) and symbolizes snapshot s. It
// gathers the frames in *scratch, the caller's own buffer, and copies them
// out at their number: sized by a guess (half again the physical frames),
// the result was cleared and faulted in for up to half again the frames it
// held, and a buffer on the goroutine's stack was cleared for every thread.
func (w *worker) thread(s *snapshot, scratch *[]Frame) Thread {
	if s.name == "" && s.state == "" {
		ti := w.dir.threadInfo(s.tid)
		s.name, s.state = ti.name, ti.state
	}
	t := Thread{TID: s.tid, Name: s.name, State: s.state, Pause: s.pause, Held: s.held, Registers: s.regs.Map(), Peeked: s.unwound != nil}
	st := s.unwound
	if st == nil {
		u := w.unwind(s)
		st = &u
	}
	t.Truncated, t.Stop = st.Truncated, st.Stop
	frames := (*scratch)[:0]
	for i, f := range st.Frames {
		// A signal trampoline is entered, not called: its address is
		// looked up as is, as eu-stack does (libdwfl's isactivation).
		exact := f.Exact || f.Signal
		lookup := f.PC
		if !exact && lookup > 0 {
			lookup--
		}
		m := w.module(lookup)
		name := ""
		if m != nil {
			name = m.info.Name
		}
		if m == nil || w.opts.NoSymbols {
			frames = append(frames, Frame{Index: i, PC: f.PC, Exact: f.Exact, Module: name, Method: f.Method.String()})
			continue
		}
		sfs := m.frames(f.PC, exact, w.opts)
		if len(sfs) == 0 {
			frames = append(frames, Frame{Index: i, PC: f.PC, Exact: f.Exact, Module: name, Method: f.Method.String()})
			continue
		}
		for _, sf := range sfs {
			frames = append(frames, Frame{Index: i, PC: f.PC, Exact: f.Exact, Module: name, Method: f.Method.String(),
				Function: sf.Function, File: sf.File, Line: int(sf.Line), Inlined: sf.Inlined})
		}
	}
	*scratch = frames
	t.Frames = slices.Clone(frames)
	return t
}
