//go:build !linux

package mmap

// release does nothing where the syscall package offers no madvise.
func release(b []byte) {}
