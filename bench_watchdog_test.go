//go:build unix

package backtrail_test

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/backtrail/backtrail"
)

// BenchmarkWatchdogAtRest measures the process CPU time, as a percentage
// of one core, over two seconds in which 100 watched loops are idle, with
// and without a watchdog. The difference is the watchdog's cost at rest.
// The work per op is the whole measurement, so run with -benchtime=1x.
func BenchmarkWatchdogAtRest(b *testing.B) {
	for _, withWatchdog := range []bool{false, true} {
		name := "idle-process"
		if withWatchdog {
			name = "watchdog-100-loops"
		}
		b.Run(name, func(b *testing.B) {
			var pct float64
			for b.Loop() {
				var w *backtrail.Watchdog
				if withWatchdog {
					w = backtrail.NewWatchdog(backtrail.WatchdogOptions{})
					for range 100 {
						l := w.Loop("idle")
						l.Begin()
						l.End()
					}
				}
				runtime.GC()
				const span = 2 * time.Second
				c0, t0 := cpuTime(), time.Now()
				time.Sleep(span)
				pct = 100 * float64(cpuTime()-c0) / float64(time.Since(t0))
				if w != nil {
					w.Close()
				}
			}
			b.ReportMetric(pct, "cpu-%")
		})
	}
}

// BenchmarkSnapshotPause measures the longest stall a ticking goroutine
// sees while an all-goroutine snapshot is taken with 10,000 goroutines
// parked, for the watchdog's snapshot (the goroutine profile) and for
// runtime.Stack(buf, true). The ticker sleeps 100 µs at a time and records
// its worst oversleep while the snapshot runs; "baseline" is the same ticker
// with no snapshot, which shows the machine's own noise.
func BenchmarkSnapshotPause(b *testing.B) {
	const parked = 10000
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range parked {
		wg.Add(1)
		go func() { defer wg.Done(); <-stop }()
	}
	defer func() { close(stop); wg.Wait() }()
	buf := make([]byte, 64<<20)
	for _, tc := range []struct {
		name string
		take func()
	}{
		{"baseline", func() { time.Sleep(20 * time.Millisecond) }},
		{"watchdog-snapshot", func() {
			if _, err := backtrail.TakeSnapshot(); err != nil {
				b.Fatal(err)
			}
		}},
		{"runtime.Stack-all", func() { runtime.Stack(buf, true) }},
	} {
		b.Run(tc.name+"/goroutines=10k", func(b *testing.B) {
			var worst time.Duration
			for b.Loop() {
				var maxGap atomic.Int64
				var measuring atomic.Bool
				var ticks atomic.Int64
				quit := make(chan struct{})
				done := make(chan struct{})
				go func() {
					defer close(done)
					for {
						select {
						case <-quit:
							return
						default:
						}
						t := time.Now()
						time.Sleep(100 * time.Microsecond)
						if measuring.Load() {
							if g := time.Since(t) - 100*time.Microsecond; int64(g) > maxGap.Load() {
								maxGap.Store(int64(g))
							}
						}
						ticks.Add(1)
					}
				}()
				for ticks.Load() < 5 { // the ticker is running
					time.Sleep(100 * time.Microsecond)
				}
				measuring.Store(true)
				tc.take()
				for n := ticks.Load(); ticks.Load() < n+3; { // it ticked after the snapshot
					time.Sleep(100 * time.Microsecond)
				}
				measuring.Store(false)
				close(quit)
				<-done
				worst = max(worst, time.Duration(maxGap.Load()))
			}
			b.ReportMetric(float64(worst)/1e6, "pause-ms")
		})
	}
}
