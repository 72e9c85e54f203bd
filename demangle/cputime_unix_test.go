//go:build unix

package demangle_test

import "syscall"

// cpuTime returns the CPU time used by the process so far, in nanoseconds:
// on the shared build machines it says more about our cost than wall time.
func cpuTime() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
