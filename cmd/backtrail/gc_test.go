package main

import (
	"math"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
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
