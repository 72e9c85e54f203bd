//go:build unix

package mmap

import (
	"os"
	"syscall"
)

func mapFile(f *os.File, n int, writable bool) ([]byte, error) {
	prot := syscall.PROT_READ
	if writable {
		prot |= syscall.PROT_WRITE
	}
	return syscall.Mmap(int(f.Fd()), 0, n, prot, syscall.MAP_SHARED)
}

func unmap(b []byte) error { return syscall.Munmap(b) }
