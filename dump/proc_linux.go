//go:build linux && (amd64 || arm64)

package dump

import (
	"fmt"
	"os"
	"strconv"
	"syscall"
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
	var path [32]byte
	p := append(strconv.AppendInt(path[:0], int64(tid), 10), "/stat"...)
	fd, err := syscall.Openat(d.fd, string(p), syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return taskInfo{cpu: -1}
	}
	var buf [512]byte
	n, err := syscall.Read(fd, buf[:])
	syscall.Close(fd)
	if err != nil || n <= 0 {
		return taskInfo{cpu: -1}
	}
	if s, err := parseStat(buf[:n]); err == nil {
		return taskInfo{s.Comm, string(s.State), s.CPU, s.RTPriority}
	}
	return taskInfo{cpu: -1}
}
