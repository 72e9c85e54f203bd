package main

import (
	"bufio"
	"bytes"
	"math"
	"os"
	"os/exec"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"unsafe"
)

// TestHugeHeap checks that where the kernel gives huge pages on request,
// hugeHeap marks memory for them and that the runtime then allocates from
// it; and that GODEBUG=disablethp=1 turns it off. It runs in a process of
// its own: other tests leave free memory lower in the heap, which the
// runtime would fill first.
func TestHugeHeap(t *testing.T) {
	if os.Getenv("BACKTRAIL_TEST_HUGEHEAP") != "1" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHugeHeap$", "-test.v")
		cmd.Env = append(os.Environ(), "BACKTRAIL_TEST_HUGEHEAP=1")
		out, err := cmd.CombinedOutput()
		if err != nil || !bytes.Contains(out, []byte("--- ")) {
			t.Fatalf("%v\n%s", err, out)
		}
		if bytes.Contains(out, []byte("--- SKIP")) {
			t.Skipf("%s", out)
		}
		return
	}
	t.Setenv("GODEBUG", "disablethp=1")
	if hugeHeap(8 << 20) {
		t.Fatal("hugeHeap acted with GODEBUG=disablethp=1")
	}
	t.Setenv("GODEBUG", "")
	if hugePageOnRequest() == 0 {
		if hugeHeap(8 << 20) {
			t.Fatal("hugeHeap acted though the kernel does not give huge pages on request")
		}
		t.Skip("the kernel's transparent huge pages are not \"madvise\"; hugeHeap does nothing here, as checked")
	}
	// A piece smaller than a huge page holds none: nothing is marked.
	if hugeHeap(1 << 20) {
		t.Error("hugeHeap acted on a piece of 1 MB, under a huge page")
	}
	// A piece beyond the machine's memory is cut to a quarter of it: the
	// kernel would refuse it whole, and the runtime would die of that.
	if !hugeHeap(math.MaxInt) {
		t.Error("hugeHeap(math.MaxInt) did nothing; want a piece of a quarter of the memory")
	}
	// No collection but hugeHeap's own: the next would free its memory
	// for the runtime too.
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	if !hugeHeap(16 << 20) {
		t.Fatal("hugeHeap did nothing though the kernel gives huge pages on request")
	}
	// What the runtime allocates next lands in the marked memory, once
	// the holes lower in this test binary's heap are filled.
	var pieces [][]byte
	for range 128 {
		pieces = append(pieces, make([]byte, 64<<10))
	}
	marked := markedRanges(t)
	in := 0
	for _, b := range pieces {
		p := uint64(uintptr(unsafe.Pointer(unsafe.SliceData(b))))
		for _, r := range marked {
			if r[0] <= p && p < r[1] {
				in++
				break
			}
		}
	}
	if in < len(pieces)/2 {
		t.Errorf("%d of %d new 64 KB objects are in memory marked for huge pages (%x); want most", in, len(pieces), marked)
	}
}

// markedRanges returns this process's mappings marked for huge pages
// ("hg" among the VmFlags of /proc/self/smaps).
func markedRanges(t *testing.T) (r [][2]uint64) {
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var cur [2]uint64
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if flags, ok := strings.CutPrefix(line, "VmFlags:"); ok {
			if strings.Contains(" "+flags+" ", " hg ") {
				r = append(r, cur)
			}
			continue
		}
		span, _, _ := strings.Cut(line, " ")
		lo, hi, ok := strings.Cut(span, "-")
		if !ok {
			continue
		}
		a, err1 := strconv.ParseUint(lo, 16, 64)
		b, err2 := strconv.ParseUint(hi, 16, 64)
		if err1 == nil && err2 == nil {
			cur = [2]uint64{a, b}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return r
}
