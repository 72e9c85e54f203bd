//go:build linux && (amd64 || arm64)

package dump

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"syscall"
	"unsafe"

	"github.com/backtrail/backtrail/unwind"
	"golang.org/x/sys/unix"
)

// taskDir is an open /proc/PID/task directory. A thread's files are
// opened relative to it, which spares the lookup of /proc/PID/task on
// each of thousands of threads.
type taskDir struct {
	pid int
	f   *os.File
	fd  int
}

func openTaskDir(pid int) (*taskDir, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		return nil, err
	}
	return &taskDir{pid: pid, f: f, fd: int(f.Fd())}, nil
}

func (d *taskDir) close() { d.f.Close() }

// tasks lists the thread ids: the process id first, then ascending. Each
// call reads the directory afresh.
func (d *taskDir) tasks() ([]int, error) {
	if _, err := d.f.Seek(0, 0); err != nil {
		return nil, err
	}
	names, err := d.f.Readdirnames(-1)
	if err != nil {
		return nil, err
	}
	tids := make([]int, 0, len(names))
	for _, n := range names {
		if tid, err := strconv.Atoi(n); err == nil {
			tids = append(tids, tid)
		}
	}
	sortTIDs(tids, d.pid)
	return tids, nil
}

// taskInfo is what the dump reads of a thread before it interrupts it.
type taskInfo struct {
	name, state string
	cpu         int // the CPU it last ran on, -1 if unknown
	rtPriority  int // its real-time priority, 0 if it has none
}

// threadInfo reads a thread's name (comm), state letter, last CPU and
// real-time priority from its stat file: one read for all, with three
// system calls (os.ReadFile makes ten, which adds up over thousands of
// threads).
func (d *taskDir) threadInfo(tid int) taskInfo {
	fd, err := d.openTask(tid, "stat")
	if err != nil {
		return taskInfo{cpu: -1}
	}
	var buf [512]byte
	n, err := pread(fd, buf[:])
	closeFD(fd)
	if err != nil || n <= 0 {
		return taskInfo{cpu: -1}
	}
	if s, err := parseStat(buf[:n]); err == nil {
		return taskInfo{s.Comm, string(s.State), s.CPU, s.RTPriority}
	}
	return taskInfo{cpu: -1}
}

// openTask opens file name of thread tid, read-only.
//
// It, pread and closeFD make raw system calls (see raw): a peek makes ten
// of them, ten thousand in a dump of 1000 blocked threads, and announced
// to the scheduler, those that outlasted its 20 µs tick had sysmon hand
// the caller's P to another thread and poll every 20 µs, which cost 9 % of
// a dump's CPU (bench/dump.md, eleventh round). Unlike raw, they leave
// their buffers on the caller's stack.
func (d *taskDir) openTask(tid int, name string) (int, error) {
	var path [48]byte
	p := append(append(strconv.AppendInt(path[:0], int64(tid), 10), '/'), name...)
	if len(p) >= len(path) {
		return -1, syscall.ENAMETOOLONG
	}
	path[len(p)] = 0
	fd, _, e := unix.RawSyscall6(unix.SYS_OPENAT, uintptr(d.fd), uintptr(unsafe.Pointer(&path[0])), unix.O_RDONLY|unix.O_CLOEXEC, 0, 0, 0)
	if e != 0 {
		return -1, e
	}
	return int(fd), nil
}

// pread reads file fd from its start into b.
func pread(fd int, b []byte) (int, error) {
	n, _, e := unix.RawSyscall6(unix.SYS_PREAD64, uintptr(fd), uintptr(unsafe.Pointer(unsafe.SliceData(b))), uintptr(len(b)), 0, 0, 0)
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}

// closeFD closes fd.
func closeFD(fd int) { unix.RawSyscall(unix.SYS_CLOSE, uintptr(fd), 0, 0) }

// peek reads the registers of thread tid from its syscall file, which the
// kernel fills in only while the thread is blocked (it says "running"
// otherwise), then calls read with them, which copies and walks what it
// needs of the thread's memory. It reports whether the thread stayed off
// the CPU from before the registers were read until read returned, by the count of
// times it was scheduled in (its schedstat file): only then do the
// registers and the memory read belong together. The thread is never
// stopped, so the registers are those the kernel saved on entry: the
// stack pointer, the program counter and, in a system call, its number
// and arguments (syscallRegs).
func (d *taskDir) peek(tid int, read func(regs *unwind.Regs)) bool {
	fd, err := d.openTask(tid, "schedstat")
	if err != nil {
		return false
	}
	defer closeFD(fd)
	var buf [160]byte
	runs := func() (string, bool) {
		n, err := pread(fd, buf[:])
		if err != nil || n <= 0 {
			return "", false
		}
		// "<ns on the CPU> <ns waiting for it> <times scheduled in>\n";
		// any change means it ran.
		return string(buf[:n]), true
	}
	before, ok := runs()
	if !ok {
		return false
	}
	sfd, err := d.openTask(tid, "syscall")
	if err != nil {
		return false
	}
	n, err := pread(sfd, buf[:])
	closeFD(sfd)
	if err != nil || n <= 0 {
		return false
	}
	nr, args, sp, pc, ok := parseSyscall(buf[:n])
	if !ok {
		return false // "running"
	}
	regs := syscallRegs(nr, args, sp, pc)
	read(&regs)
	after, ok := runs()
	return ok && after == before
}

// parseSyscall parses a /proc/PID/task/TID/syscall line: "NR ARG1 … ARG6
// SP PC" in a system call, "-1 SP PC" when blocked outside one, "running"
// when the thread is on a CPU. A line cut short (no newline) is refused,
// lest its last number be taken for the program counter. It allocates
// nothing: it runs once per thread peeked.
func parseSyscall(b []byte) (nr int64, args [6]uint64, sp, pc uint64, ok bool) {
	if len(b) == 0 || b[len(b)-1] != '\n' {
		return 0, args, 0, 0, false
	}
	var f [9][]byte
	n := 0
	for rest := b[:len(b)-1]; len(rest) > 0; {
		k := bytes.IndexByte(rest, ' ')
		if k < 0 {
			k = len(rest)
		}
		if k > 0 {
			if n == len(f) {
				return 0, args, 0, 0, false
			}
			f[n], n = rest[:k], n+1
		}
		rest = rest[min(k+1, len(rest)):]
	}
	if n != 3 && n != 9 {
		return 0, args, 0, 0, false
	}
	num, neg := f[0], false
	if len(num) > 1 && num[0] == '-' {
		num, neg = num[1:], true
	}
	u, good := parseUint(num, 10)
	if !good || u > 1<<31 {
		return 0, args, 0, 0, false
	}
	if nr = int64(u); neg {
		nr = -nr
	}
	if (nr == -1) != (n == 3) {
		return 0, args, 0, 0, false
	}
	var v [8]uint64
	for i, s := range f[1:n] {
		if v[i], good = parseUint(bytes.TrimPrefix(s, []byte("0x")), 16); !good {
			return 0, args, 0, 0, false
		}
	}
	rest := v[:n-1]
	copy(args[:], rest[:len(rest)-2])
	return nr, args, rest[len(rest)-2], rest[len(rest)-1], true
}
