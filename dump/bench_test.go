//go:build linux && (amd64 || arm64)

package dump_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/backtrail/backtrail/dump"
)

// BenchmarkDump dumps the target (gcc -O2) with 1000 threads parked at
// depth 10 and 100 plus a heartbeat thread, in both modes, and reports
// each thread's pause as the dump measured it (from PTRACE_SEIZE to
// PTRACE_DETACH: p50, p99, max) and the heartbeat thread's worst gap as
// the target saw it. bench/dump.sh compares with eu-stack and gdb.
//
//	go test -run '^$' -bench Dump -benchtime 5x ./dump
func BenchmarkDump(b *testing.B) {
	exe := buildTarget(&testing.T{}, variants[1])
	for _, c := range []struct{ threads, depth int }{{1000, 10}, {1000, 100}} {
		for _, freeze := range []bool{false, true} {
			name := fmt.Sprintf("threads=%d/depth=%d/freeze=%v", c.threads, c.depth, freeze)
			b.Run(name, func(b *testing.B) {
				t := &testing.T{}
				tg := start(t, exe, "-t", strconv.Itoa(c.threads), "-d", strconv.Itoa(c.depth), "-H", "200")
				defer func() {
					tg.in.Close()
					tg.cmd.Process.Kill()
					tg.cmd.Wait()
				}()
				time.Sleep(200 * time.Millisecond)
				tg.ask("hb")
				var pauses []time.Duration
				frames := 0
				b.ReportAllocs()
				for b.Loop() {
					d, err := dump.Dump(context.Background(), tg.pid, dump.Options{Freeze: freeze})
					if err != nil {
						b.Fatal(err)
					}
					for _, th := range d.Threads {
						pauses = append(pauses, th.Pause)
						frames += len(th.Frames)
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
			})
		}
	}
}
