//go:build unix

package backtrail_test

import (
	"syscall"
	"testing"
	"time"
)

// cpuTime returns the CPU time the process has used. Benchmarks report it
// per op beside wall time because the machines they run on are shared:
// other processes inflate ns/op but not cpu-ns/op.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU reports the CPU time per op since c0.
func reportCPU(b *testing.B, c0 time.Duration) {
	b.ReportMetric(float64(cpuTime()-c0)/float64(b.N), "cpu-ns/op")
}
