//go:build linux && (amd64 || arm64)

package dump_test

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/backtrail/backtrail/dump"
)

// BenchmarkDump dumps the target (gcc -O2) with 1000 threads parked at
// depth 10 and 100 plus a heartbeat thread, in the three modes (default:
// the parked threads read without stopping them; stop: each thread
// stopped in turn; freeze), and reports each thread's pause as the dump
// measured it (from PTRACE_SEIZE to PTRACE_DETACH, zero for a thread not
// stopped: p50, p99, max), how many threads were read without stopping
// them, and the heartbeat thread's worst gap as the target saw it.
// Beside them, "floor" stops and releases the same threads one at a time
// and does nothing else: no reading of memory, no unwinding, no symbols.
// It is what the kernel alone costs a dump that pauses one thread at a
// time, the part no dumper of that kind can save (bench/dump.md).
// bench/dump.sh compares with eu-stack and gdb.
//
//	go test -run '^$' -bench Dump -benchtime 5x ./dump
func BenchmarkDump(b *testing.B) {
	exe := buildTarget(&testing.T{}, variants[1])
	for _, c := range []struct{ threads, depth int }{{1000, 10}, {1000, 100}} {
		t := &testing.T{}
		tg := start(t, exe, "-t", strconv.Itoa(c.threads), "-d", strconv.Itoa(c.depth), "-H", "200")
		time.Sleep(200 * time.Millisecond)
		for _, mode := range []string{"default", "stop", "freeze", "floor"} {
			b.Run(fmt.Sprintf("threads=%d/depth=%d/%s", c.threads, c.depth, mode), func(b *testing.B) {
				tg.ask("hb")
				var pauses []time.Duration
				frames, peeked := 0, 0
				b.ReportAllocs()
				if mode == "floor" {
					runtime.LockOSThread() // the thread that seizes is the tracer
					defer runtime.UnlockOSThread()
				}
				for b.Loop() {
					if mode == "floor" {
						pauses = append(pauses, stopRelease(b, tg.pid)...)
						continue
					}
					d, err := dump.Dump(context.Background(), tg.pid, dump.Options{Freeze: mode == "freeze", Stop: mode == "stop"})
					if err != nil {
						b.Fatal(err)
					}
					for _, th := range d.Threads {
						pauses = append(pauses, th.Pause)
						frames += len(th.Frames)
						if th.Peeked {
							peeked++
						}
					}
				}
				b.StopTimer()
				hb := tg.ask("hb")
				slices.Sort(pauses)
				q := func(f float64) float64 { return float64(pauses[int(f*float64(len(pauses)-1))].Microseconds()) }
				b.ReportMetric(q(0.5), "pause-p50-µs")
				b.ReportMetric(q(0.99), "pause-p99-µs")
				b.ReportMetric(q(1), "pause-max-µs")
				_, v, _ := strings.Cut(hb, "max_us=")
				v, _, _ = strings.Cut(v, " ")
				hbMax, _ := strconv.Atoi(v)
				b.ReportMetric(float64(hbMax), "heartbeat-max-µs")
				b.ReportMetric(float64(frames)/float64(b.N), "frames/op")
				b.ReportMetric(float64(peeked)/float64(b.N), "unstopped/op")
			})
		}
		tg.in.Close()
		tg.cmd.Process.Kill()
		tg.cmd.Wait()
	}
}

// stopRelease seizes and interrupts, waits for (blocking), reads the
// registers of and detaches each thread of pid in turn, with the dump's
// own calls, and returns each one's pause. The calling goroutine must be
// locked to its thread.
func stopRelease(b *testing.B, pid int) []time.Duration {
	ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		b.Fatal(err)
	}
	pauses := make([]time.Duration, 0, len(ents))
	for _, e := range ents {
		tid, _ := strconv.Atoi(e.Name())
		t0 := time.Now()
		if err := dump.Seize(tid); err != nil {
			b.Fatalf("seize %d: %v", tid, err)
		}
		var ws unix.WaitStatus
		for {
			if _, err := unix.Wait4(tid, &ws, unix.WALL, nil); err != unix.EINTR {
				if err != nil {
					b.Fatalf("wait %d: %v", tid, err)
				}
				break
			}
		}
		if _, err := dump.GetRegs(tid); err != nil {
			b.Fatalf("registers of %d: %v", tid, err)
		}
		// The target's threads only sleep or wake from sleeps: a stop is
		// the interrupt's, never a signal to pass on.
		if err := dump.Detach(tid, 0); err != nil {
			b.Fatalf("detach %d: %v", tid, err)
		}
		pauses = append(pauses, time.Since(t0))
	}
	return pauses
}
