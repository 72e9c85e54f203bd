package mmap

import (
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// mapPiecewise maps n bytes of f read-only at an address one page past a
// multiple of 2 MB. Linux maps a 2 MB folio of the page cache whole, by
// one page-table entry, wherever the mapping's address and the file
// offset agree modulo 2 MB, and on file systems with large folios (ext4
// since Linux 6.x) a file read sequentially, by cp or cat, sits in the
// page cache in such folios. Here they never agree, so a read maps the
// pages around it (the kernel's fault-around, 64 KB by default) and no
// more.
func mapPiecewise(f *os.File, n int) ([]byte, error) {
	const huge = 2 << 20
	page := uintptr(os.Getpagesize())
	// Reserve room for the shifted mapping, place the file in it, and
	// give back what is left on either side.
	span := uintptr(n) + huge + page
	res, err := unix.MmapPtr(-1, 0, nil, span, unix.PROT_NONE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_NORESERVE)
	if err != nil {
		return nil, err
	}
	lo := uintptr(res)
	at := (lo+huge-1)&^(huge-1) + page
	p, err := unix.MmapPtr(int(f.Fd()), 0, unsafe.Add(res, at-lo), uintptr(n), unix.PROT_READ, unix.MAP_SHARED|unix.MAP_FIXED)
	if err != nil {
		unix.MunmapPtr(res, span)
		return nil, err
	}
	end := (at + uintptr(n) + page - 1) &^ (page - 1)
	unix.MunmapPtr(res, at-lo)
	if lo+span > end {
		unix.MunmapPtr(unsafe.Add(res, end-lo), lo+span-end)
	}
	return unsafe.Slice((*byte)(p), n), nil
}

// unmapPiecewise unmaps what mapPiecewise mapped: syscall.Munmap knows only
// the mappings syscall.Mmap made.
func unmapPiecewise(b []byte) error { return unix.MunmapPtr(unsafe.Pointer(&b[0]), uintptr(len(b))) }
