//go:build linux && (amd64 || arm64)

package dump_test

import (
	"os"
	"runtime"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/backtrail/backtrail/dump"
)

func TestParseSyscall(t *testing.T) {
	for _, c := range []struct {
		in     string
		ok     bool
		nr     int64
		arg0   uint64
		sp, pc uint64
	}{
		{"0 0x3 0x7f8f51bbdcdf 0x1 0x0 0x0 0x559a64df52e0 0x7f8f51bbdc90 0x7f8f51d1a7e2\n", true, 0, 3, 0x7f8f51bbdc90, 0x7f8f51d1a7e2},
		{"202 0x7ffc1 0x80 0x0 0x0 0x0 0x0 0x7ffc0 0x4011d2\n", true, 202, 0x7ffc1, 0x7ffc0, 0x4011d2},
		{"-1 0x7ffd1000 0x401000\n", true, -1, 0, 0x7ffd1000, 0x401000},
		{"running\n", false, 0, 0, 0, 0},
		{"", false, 0, 0, 0, 0},
		{"-1 0x1 0x2 0x3 0x4 0x5 0x6 0x7 0x8\n", false, 0, 0, 0, 0}, // -1 takes no arguments
		{"0 0x3 0x1\n", false, 0, 0, 0, 0},                          // a system call has six
		{"0 0x3 0x1 0x0 0x0 0x0 0x0 0xzz 0x1\n", false, 0, 0, 0, 0},
		{"x 0x1 0x2\n", false, 0, 0, 0, 0},
		{"-2 0x1 0x2\n", false, 0, 0, 0, 0},                                                              // only -1 stands alone
		{"0 0x3 0x1 0x0 0x0 0x0 0x0 0x7ffc0 0x4011d2 0x5\n", false, 0, 0, 0, 0},                          // ten fields
		{"0x1 0x7ffc0 0x4011d2\n", false, 0, 0, 0, 0},                                                    // the number is decimal
		{"0 0x3 0x7f8f51bbdcdf 0x1 0x0 0x0 0x559a64df52e0 0x7f8f51bbdc90 0x7f8f51d1", false, 0, 0, 0, 0}, // cut short
	} {
		nr, args, sp, pc, ok := dump.ParseSyscall([]byte(c.in))
		if ok != c.ok || ok && (nr != c.nr || args[0] != c.arg0 || sp != c.sp || pc != c.pc) {
			t.Errorf("parseSyscall(%q) = %d %#x %#x %#x %v, want %d %#x %#x %#x %v", c.in, nr, args[0], sp, pc, ok, c.nr, c.arg0, c.sp, c.pc, c.ok)
		}
	}
}

// TestPeek peeks a thread of this process blocked in read(2): it is read
// without stopping it, unless it runs between the reading of its registers
// and the end of the stack's copy, which the peek must then refuse.
func TestPeek(t *testing.T) {
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	defer unix.Close(p[1])
	tids := make(chan int)
	got := make(chan struct{})
	go func() {
		runtime.LockOSThread() // the thread ends with the goroutine
		defer unix.Close(p[0])
		tids <- unix.Gettid()
		var b [1]byte
		for {
			if n, _ := unix.Read(p[0], b[:]); n != 1 || b[0] == 'q' {
				return
			}
			got <- struct{}{}
		}
	}()
	tid := <-tids
	defer unix.Write(p[1], []byte{'q'})
	blocked := func() {
		// The kernel says "running" until the thread is in read.
		for range 1000 {
			if _, _, ok, _ := dump.Peek(os.Getpid(), tid, func() {}); ok {
				return
			}
			runtime.Gosched()
		}
		t.Fatal("the reader never blocked")
	}
	blocked()
	sp, pc, ok, err := dump.Peek(os.Getpid(), tid, func() {})
	if err != nil || !ok || sp == 0 || pc == 0 {
		t.Fatalf("peek of a blocked thread: sp %#x pc %#x ok %v err %v", sp, pc, ok, err)
	}
	_, _, ok, err = dump.Peek(os.Getpid(), tid, func() {
		// Wake it, and wait until it has read and blocked again.
		unix.Write(p[1], []byte{'x'})
		<-got
		blocked()
	})
	if err != nil || ok {
		t.Errorf("peek of a thread that ran during it: ok %v err %v, want refused", ok, err)
	}
	if _, _, ok, err := dump.Peek(os.Getpid(), os.Getpid()+1<<22, func() {}); err != nil || ok {
		t.Errorf("peek of no such thread: ok %v err %v", ok, err)
	}
}
