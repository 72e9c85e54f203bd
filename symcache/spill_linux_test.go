package symcache_test

import (
	"bytes"
	"errors"
	"strings"
	"syscall"
	"testing"
)

// TestSpillWriteError builds a symcache whose temporary storage cannot
// grow (the process's file size limit stands in for a full disk): WriteTo
// returns the write's error and writes nothing.
func TestSpillWriteError(t *testing.T) {
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &old); err != nil {
		t.Fatal(err)
	}
	lim := old
	lim.Cur = 1100 << 10 // past the 1 MiB kept in memory, short of the locations' 1.4 MB
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &lim); err != nil {
		t.Fatal(err)
	}
	c := spillSpec()
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &old); err != nil {
		t.Fatal(err)
	}
	defer c.b.Close()
	var out bytes.Buffer
	n, err := c.b.WriteTo(&out)
	if !errors.Is(err, syscall.EFBIG) || !strings.Contains(err.Error(), "temporary storage") || n != 0 || out.Len() != 0 {
		t.Fatalf("WriteTo = %d, %v (%d bytes written); want 0 and the file size error", n, err, out.Len())
	}
}
