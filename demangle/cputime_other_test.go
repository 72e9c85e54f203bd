//go:build !unix

package demangle_test

// cpuTime is not measured on this platform.
func cpuTime() int64 { return 0 }
