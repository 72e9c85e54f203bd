package mmap

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unsafe"
)

// TestOpenPiecewise checks that OpenPiecewise maps the file's bytes at an
// address that keeps the kernel from mapping 2 MB folios whole, and that
// reading one byte in every 2 MB makes a few pages resident, not the
// file: on ext4 with large folios the file written and read here sits in
// the page cache in 2 MB folios, which Open's mapping takes whole.
func TestOpenPiecewise(t *testing.T) {
	const size, huge = 32 << 20, 2 << 20
	data := make([]byte, size)
	for i := range data {
		data[i] = byte(i * 7)
	}
	path := filepath.Join(t.TempDir(), "big")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := os.ReadFile(path); err != nil { // as cat would
		t.Fatal(err)
	}
	touch := func(r *Region) (rss int) {
		for off := 0; off < size; off += huge {
			sink += r.Data[off+huge/2]
		}
		return residentKB(t, r.Data)
	}

	r, err := OpenPiecewise(path)
	if err != nil {
		t.Fatal(err)
	}
	equal := bytes.Equal(r.Data, data)
	r.Close()
	if !equal {
		t.Fatal("the mapping's bytes differ from the file's")
	}
	// A fresh mapping, none of it resident.
	r, err = OpenPiecewise(path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := r.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	}()
	if a := uintptr(unsafe.Pointer(&r.Data[0])); a%huge != uintptr(os.Getpagesize()) {
		t.Errorf("mapped at %#x: not one page past a multiple of 2 MB", a)
	}
	// The kernel maps up to fault_around_bytes (64 KB by default) around
	// each read; 16 reads may make 1 MB resident, or 4 MB with slack.
	kb := touch(r)
	if kb > 4<<10 {
		t.Errorf("16 reads made %d KB of the piecewise mapping resident", kb)
	}
	whole, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer whole.Close()
	t.Logf("resident after 16 reads: %d KB piecewise, %d KB through Open", kb, touch(whole))
}

var sink byte // keeps the reads of touch

// residentKB returns the resident size of the mapping that starts at b,
// from /proc/self/smaps.
func residentKB(t *testing.T, b []byte) int {
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	start := fmt.Sprintf("%x-", uintptr(unsafe.Pointer(&b[0])))
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, start):
			in = true
		case in && strings.HasPrefix(line, "Rss:"):
			var kb int
			fmt.Sscanf(strings.TrimPrefix(line, "Rss:"), "%d", &kb)
			return kb
		}
	}
	t.Fatalf("no mapping at %s in /proc/self/smaps", start)
	return 0
}
