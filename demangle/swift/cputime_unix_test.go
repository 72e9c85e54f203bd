//go:build unix

package swift_test

import "syscall"

// cpuTime returns the CPU time used by the process so far, in nanoseconds.
// Benchmarks report it next to wall time because the build machines are
// shared: wall time there says more about the neighbours than about us.
func cpuTime() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
