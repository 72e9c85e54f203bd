// Package dump takes the stacks of every thread of a live Linux process
// (on amd64 and arm64; elsewhere Dump returns errors.ErrUnsupported),
// unwinds them and symbolizes them, inline frames included, pausing each
// thread for as little time as possible.
//
// # How a dump is taken
//
// All ptrace calls run on one goroutine locked to its OS thread (the
// tracer), fed closures over a channel, because Linux ties a tracee to the
// thread that attached it. In the default mode each thread in turn is
// attached with PTRACE_SEIZE, stopped with PTRACE_INTERRUPT, its
// registers read (PTRACE_GETREGS / PTRACE_GETREGSET), its stack copied
// with process_vm_readv (from a little below the stack pointer up to
// Options.StackWindow bytes, clamped to the stack's mapping in
// /proc/PID/maps) into a buffer allocated once, and detached at once. Two
// threads are asked to stop at a time, so that the kernel's scheduling of
// one into its stop overlaps with the other's; each is read and released
// as soon as it is seen stopped. The tracer takes the threads CPU by CPU:
// it moves to the CPU the first thread last ran on, takes the threads that
// last ran there and defers the others, then moves to each other CPU in
// turn for its threads. A thread woken on the tracer's CPU stops and
// resumes there in turn with the tracer; on another one each stop and
// release costs an interrupt between CPUs and waits behind what runs
// there (the dumper's unwinding included). The thread then runs again
// while its copied stack is unwound and symbolized by a bounded pool of
// goroutines, in parallel with the capture of the next threads; the
// copies are recycled. The tracer runs at the ordinary priority, except
// while a thread with a real-time priority (SCHED_FIFO, SCHED_RR) is in
// flight: then it borrows that thread's priority less one, so that no
// ordinary process can preempt it while it holds that thread, whose
// latency matters. For ordinary threads the two system calls and switches
// of scheduling class cost more than the preemptions they prevent. While
// it waits for a stop it polls, then sleeps in steps of 20–100 µs without
// giving up its Go P, and it yields to the Go scheduler only between
// threads, so that it never waits for a P with threads stopped. The
// kernel sends the tracer a SIGCHLD at every stop, which ends such a sleep
// early; a program that runs no child processes during the dump may
// ignore SIGCHLD (signal.Ignore) instead, as the backtrail command does:
// a thousand signals delivered cost more CPU than the early wake-ups save
// (bench/dump.md).
//
// A thread blocked in the kernel (in a system call, or asleep outside
// one) need not be stopped at all: while it is off the CPU, the kernel
// shows the stack pointer and program counter it saved on entry in
// /proc/PID/task/TID/syscall (with the system call's arguments), and its
// stack does not change. So on x86-64 the threads go first to a pool of
// goroutines, one per worker, which need no ptrace and so run beside each
// other and the tracer. For each thread in turn a goroutine of the pool
// reads its name, state, last CPU and real-time priority, and unless it
// is running reads that file, copies the stack, unwinds the copy (reading
// the process for what lies beyond it, such as the thread's own stack
// below an alternate signal stack), and checks in
// /proc/PID/task/TID/schedstat that the thread was not scheduled in from
// before the first read to after the walk. It keeps the walk if so and if
// the walk needed no other register (the rules of code built without
// frame pointers start from the stack pointer; code with them needs the
// frame pointer, which only a stop shows). Otherwise it passes the thread
// to the tracer, which stops it as above. Such a thread (Thread.Peeked)
// pauses for no time at all, and costs the dump two files opened in /proc
// and three reads of them instead of the kernel's scheduling of a stop
// and a release; Options.Stop turns this off, for every register of every
// thread. On arm64 the link register, which /proc does not show, holds
// the return address of the innermost frame (a system call's wrapper is a
// leaf), and every thread is stopped; there, and with Options.Stop, the
// threads' names, states, last CPUs and real-time priorities are read
// from /proc ahead of the tracer by another goroutine, started while the
// maps are read and the modules opened. The second listing, for threads
// started during the dump, is made while the last threads of the first
// are taken.
// Thread.Pause measures each thread's pause from PTRACE_INTERRUPT until
// its detach returned, and Thread.Held the part after it had stopped. With
// Options.Freeze every thread is stopped first (re-reading /proc/PID/task
// until no new thread appears), all are read, and then all are released:
// one consistent snapshot, at the price of a longer pause.
//
// The tracee is never left stopped: every path (errors, a cancelled
// context, a thread exiting mid-dump) detaches what it attached, and if the
// dumping process dies the kernel detaches its tracees. A thread that
// vanishes between listing and attaching (ESRCH, or an exit seen by wait)
// is reported with a note, not as an error.
//
// # Unwinding and symbolization
//
// Modules come from /proc/PID/maps: each file is opened through
// /proc/PID/root (so containers' files are found) or, when that path does
// not resolve, /proc/PID/map_files. The load bias is computed from the
// PT_LOAD segment that the file's first mapping maps. Stacks are unwound
// by package unwind with each module's .eh_frame/.debug_frame (the vDSO's
// is read from memory), falling back to frame pointers. Frames are
// symbolized by package symbolize with inline frames, the debug
// information found next to the binary, by .gnu_debuglink, under
// /usr/lib/debug/.build-id, or downloaded from a debuginfod server into
// Options.CacheDir. A separate debug file with compressed sections (as
// distributions ship them) is copied there uncompressed on first use, so
// later dumps map its DWARF instead of inflating it. A debug file in the
// cache (up to 64 MB) also gets its symcache beside it on first use, which
// later dumps open in a millisecond or two; any other module's DWARF is
// indexed lazily, one compilation unit at a time as addresses reach it. A
// module is opened for symbols when a frame first falls in it (the
// executable and the C and C++ runtimes while threads are captured).
// Modules and the symbolization of each address are cached for the whole
// dump, so a thousand threads in the same functions cost one lookup per
// distinct address.
//
// A Go program's OS threads show the Go scheduler's view (runtime.futex,
// runtime.mcall, …), not goroutines; Dump says so in Process.Notes.
//
// # Untrusted input
//
// The target's registers, memory and files are untrusted: memory is read
// only within its mappings and a bounded window per thread, unwinding is
// bounded by package unwind (frames capped, Options.MaxFrames), and files
// are parsed by the fuzzed readers of debugfile.
package dump
