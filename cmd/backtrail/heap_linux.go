package main

import (
	"bytes"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// hugeHeap grows the Go heap by n bytes in one piece, asks the kernel to
// back that piece with transparent huge pages, and frees it for what the
// command allocates next; it reports whether it did.
//
// A short-lived command that allocates a few megabytes touches each page
// of its heap for the first time, and the kernel faults each 4 KB page in
// alone: a dump of 1000 threads took 1,960 page faults, most of them in
// its heap, which on a paravirtualized guest cost 16–25 µs each. A huge
// page is faulted in once for 2 MB; with them the dump took 1,180 faults
// and 124 ms of CPU time instead of 149 (bench/dump.md, twelfth round).
// The runtime leaves huge pages to the kernel's default, which on most
// distributions ("madvise") gives them only to memory marked for them,
// and it maps its heap in pieces as it grows, so a mark on the heap as it
// stands would not reach what comes after. Hence the piece allocated
// here, and the collection that frees it: the runtime allocates from the
// lowest free addresses, in the marked piece once the pages it had are
// used up, and the kernel backs only the huge pages touched.
//
// It does nothing where the kernel gives huge pages to all memory or to
// none, or GODEBUG has disablethp=1, and where allocating the piece could
// fail: in a 32-bit address space, or when the kernel refuses to commit
// more memory than it has; and the piece is at most a quarter of the
// machine's memory. The collection costs a few milliseconds; on a
// machine short of free huge pages the kernel may compact memory at the
// first touch of each 2 MB.
func hugeHeap(n int) bool {
	if unsafe.Sizeof(uintptr(0)) < 8 || strictOvercommit() {
		return false // the piece might not fit, and the runtime dies of that
	}
	huge := hugePageOnRequest()
	if huge == 0 || strings.Contains(os.Getenv("GODEBUG"), "disablethp=1") {
		return false
	}
	// The kernel's default overcommit refuses an allocation bigger than
	// its memory, and the runtime dies of a refusal: the piece is kept to
	// a quarter of the machine's memory (a dump of 100,000 threads would
	// ask for 3.2 GB).
	var si unix.Sysinfo_t
	if unix.Sysinfo(&si) != nil {
		return false
	}
	n = int(min(uint64(n), uint64(si.Totalram)*uint64(si.Unit)/4))
	// The piece would set off a collection of its own, which would find
	// it live: one collection is enough.
	percent := debug.SetGCPercent(-1)
	b := make([]byte, n)
	debug.SetGCPercent(percent)
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	beg := (p + huge - 1) &^ (huge - 1)
	end := (p + uintptr(n)) &^ (huge - 1)
	if beg >= end {
		return false
	}
	if unix.Madvise(b[beg-p:end-p], unix.MADV_HUGEPAGE) != nil {
		return false
	}
	runtime.KeepAlive(b)
	runtime.GC()
	return true
}

// hugePageOnRequest returns the size of a transparent huge page if the
// kernel gives them only to memory marked for them, and 0 if it gives
// them to all memory or to none.
func hugePageOnRequest() uintptr {
	mode, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	if err != nil || !bytes.Contains(mode, []byte("[madvise]")) {
		return 0
	}
	size, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size")
	if err != nil {
		return 0
	}
	n, err := strconv.ParseUint(string(bytes.TrimSpace(size)), 10, 64)
	if err != nil || n&(n-1) != 0 {
		return 0
	}
	return uintptr(n)
}

// strictOvercommit reports whether the kernel commits no more anonymous
// memory than it has (vm.overcommit_memory 2), where the piece of
// hugeHeap counts in full though never touched.
func strictOvercommit() bool {
	b, err := os.ReadFile("/proc/sys/vm/overcommit_memory")
	return err == nil && string(bytes.TrimSpace(b)) == "2"
}
