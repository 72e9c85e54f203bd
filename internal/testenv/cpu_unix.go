//go:build unix

package testenv

import (
	"syscall"
	"time"
)

// CPUTime returns the CPU time (user and system) the process has used, or
// 0 where it cannot be read. Benchmarks report it per operation beside
// wall time because the machines they run on are shared: other processes
// inflate ns/op much more than cpu-ns/op.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
