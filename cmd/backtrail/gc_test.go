package main

import (
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strings"
	"testing"
	"time"
)

// TestCollectFrom checks that collectFrom turns collection off with a
// memory limit, and that the first collection restores GOGC and lifts the
// limit; and that it leaves a GOGC the user set alone.
func TestCollectFrom(t *testing.T) {
	t.Cleanup(func() {
		debug.SetGCPercent(100)
		debug.SetMemoryLimit(math.MaxInt64)
	})
	read := func() (percent, limit int64) {
		s := []metrics.Sample{{Name: "/gc/gogc:percent"}, {Name: "/gc/gomemlimit:bytes"}}
		metrics.Read(s)
		return int64(s[0].Value.Uint64()), int64(s[1].Value.Uint64())
	}
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	debug.SetGCPercent(100)
	collectFrom(1 << 40)
	if p, l := read(); p != -1 && p != 0 || l != 1<<40 {
		t.Fatalf("after collectFrom: GOGC %d, limit %d; want off and %d", p, l, int64(1<<40))
	}
	runtime.GC()
	deadline := time.Now().Add(5 * time.Second)
	for {
		p, l := read()
		if p == 100 && l == math.MaxInt64 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after a collection: GOGC %d, limit %d; want 100 and none", p, l)
		}
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}

	t.Setenv("GOGC", "50")
	debug.SetGCPercent(50)
	collectFrom(1 << 40)
	if p, l := read(); p != 50 || l != math.MaxInt64 {
		t.Errorf("with GOGC=50 set: GOGC %d, limit %d after collectFrom; want both untouched", p, l)
	}
}

// TestBigFile checks what symbolize takes for many addresses on its
// standard input: a regular file over the size, and nothing else.
func TestBigFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, size int) *os.File {
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		if _, err := f.Write(make([]byte, size)); err != nil {
			t.Fatal(err)
		}
		return f
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	for _, c := range []struct {
		name string
		r    io.Reader
		want bool
	}{
		{"file over the size", write("big", 2<<20), true},
		{"file of the size", write("even", 1<<20), false},
		{"small file", write("small", 100), false},
		{"pipe", r, false},
		{"reader", strings.NewReader(strings.Repeat("0x1\n", 1<<20)), false},
	} {
		if got := bigFile(c.r, 1<<20); got != c.want {
			t.Errorf("%s: bigFile = %v, want %v", c.name, got, c.want)
		}
	}
}
