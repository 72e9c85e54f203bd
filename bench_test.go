package backtrail_test

import (
	"fmt"
	"reflect"
	"runtime"
	"sort"
	"sync"
	"testing"

	"github.com/backtrail/backtrail"
)

// atDepth calls f with depth frames of this function under it.
//
//go:noinline
func atDepth(depth int, f func()) {
	if depth <= 1 {
		f()
		return
	}
	atDepth(depth-1, f)
}

// benchAtDepth runs body where Callers(0) sees exactly 32 frames: it
// measures what the harness puts below atDepth first.
func benchAtDepth(b *testing.B, body func(b *testing.B)) {
	var base int
	atDepth(1, func() { s := backtrail.Callers(0); base = s.Len() })
	atDepth(32-base, func() { body(b) })
}

func BenchmarkCallers(b *testing.B) {
	b.Run("backtrail/depth=32", func(b *testing.B) {
		b.ReportAllocs()
		benchAtDepth(b, func(b *testing.B) {
			var s backtrail.Stack
			c0 := cpuTime()
			for b.Loop() {
				s = backtrail.Callers(0)
			}
			reportCPU(b, c0)
			if s.Len() != 32 {
				b.Fatalf("captured %d frames, want 32", s.Len())
			}
		})
	})
	b.Run("runtime.Callers/depth=32", func(b *testing.B) {
		b.ReportAllocs()
		benchAtDepth(b, func(b *testing.B) {
			var pcs [64]uintptr
			n := 0
			c0 := cpuTime()
			for b.Loop() {
				n = runtime.Callers(1, pcs[:])
			}
			reportCPU(b, c0)
			if n < 32 {
				b.Fatalf("captured %d frames, want 32", n)
			}
		})
	})
}

// chain is 32 links, each a function of its own that calls the next, so
// that a stack through the chain has a different return address in each
// frame, and a last link that calls f. (Generic instantiations would be
// shorter to write, but their names cost the runtime an allocation each
// to print.)
var chain []func(i int, f func())

func init() {
	chain = []func(int, func()){
		func(i int, f func()) { chain[i+1](i+1, f) }, func(i int, f func()) { chain[i+1](i+1, f) },
		func(i int, f func()) { chain[i+1](i+1, f) }, func(i int, f func()) { chain[i+1](i+1, f) },
		func(i int, f func()) { chain[i+1](i+1, f) }, func(i int, f func()) { chain[i+1](i+1, f) },
		func(i int, f func()) { chain[i+1](i+1, f) }, func(i int, f func()) { chain[i+1](i+1, f) },
		func(i int, f func()) { chain[i+1](i+1, f) }, func(i int, f func()) { chain[i+1](i+1, f) },
		func(i int, f func()) { chain[i+1](i+1, f) }, func(i int, f func()) { chain[i+1](i+1, f) },
		func(i int, f func()) { chain[i+1](i+1, f) }, func(i int, f func()) { chain[i+1](i+1, f) },
		func(i int, f func()) { chain[i+1](i+1, f) }, func(i int, f func()) { chain[i+1](i+1, f) },
		func(i int, f func()) { chain[i+1](i+1, f) }, func(i int, f func()) { chain[i+1](i+1, f) },
		func(i int, f func()) { chain[i+1](i+1, f) }, func(i int, f func()) { chain[i+1](i+1, f) },
		func(i int, f func()) { chain[i+1](i+1, f) }, func(i int, f func()) { chain[i+1](i+1, f) },
		func(i int, f func()) { chain[i+1](i+1, f) }, func(i int, f func()) { chain[i+1](i+1, f) },
		func(i int, f func()) { chain[i+1](i+1, f) }, func(i int, f func()) { chain[i+1](i+1, f) },
		func(i int, f func()) { chain[i+1](i+1, f) }, func(i int, f func()) { chain[i+1](i+1, f) },
		func(i int, f func()) { chain[i+1](i+1, f) }, func(i int, f func()) { chain[i+1](i+1, f) },
		func(i int, f func()) { chain[i+1](i+1, f) }, func(i int, f func()) { chain[i+1](i+1, f) },
		func(_ int, f func()) { f() },
	}
}

// distinctStack captures a 32-frame stack whose addresses, unlike those of
// atDepth's recursion, differ: the chain's links and what lies below it.
func distinctStack(b *testing.B) backtrail.Stack {
	var s backtrail.Stack
	for start := len(chain) - 1; start >= 0 && s.Len() < 32; start-- {
		chain[start](start, func() { s = backtrail.Callers(0) })
	}
	seen := map[uintptr]bool{}
	for i := range s.Len() {
		seen[s.PC(i)] = true
	}
	if s.Len() != 32 || len(seen) != 32 {
		b.Fatalf("%d frames, %d addresses; want 32 of each", s.Len(), len(seen))
	}
	return s
}

func BenchmarkFrames(b *testing.B) {
	var s backtrail.Stack
	benchAtDepth(b, func(*testing.B) { s = backtrail.Callers(0) })
	if s.Len() != 32 {
		b.Fatalf("%d frames, want 32", s.Len())
	}
	d := distinctStack(b)
	b.Run("cached", func(b *testing.B) {
		b.ReportAllocs()
		s.Frames()
		c0 := cpuTime()
		for b.Loop() {
			_ = s.Frames()
		}
		reportCPU(b, c0)
	})
	// The peer: the runtime's own symbolizer over the same addresses, which
	// Frames calls, without the caches or in-app rules. The distinct stack
	// has 32 different addresses; the recursive one repeats atDepth's.
	b.Run("runtime.CallersFrames/32", func(b *testing.B) { benchCallersFrames(b, &s) })
	b.Run("runtime.CallersFrames/32-distinct", func(b *testing.B) { benchCallersFrames(b, &d) })
	b.Run("first/32", func(b *testing.B) { benchFirstFrames(b, &s) })
	b.Run("first/32-distinct", func(b *testing.B) { benchFirstFrames(b, &d) })
	// Every other address in an inlined call: the runtime's expander
	// takes the stack from the first such address on.
	p, _ := pingInlined(12)
	b.Run(fmt.Sprintf("first/%d-half-inlined", p.Len()), func(b *testing.B) { benchFirstFrames(b, &p) })
	// The same calls as runtime.Callers lists them, each inlined call's
	// site an address of its own (as on platforms without the walk, and
	// in goroutine profiles), as a new stack of known addresses.
	pcs := make([]uintptr, 64)
	pingWith(12, func() { pcs = pcs[:runtime.Callers(1, pcs)] })
	c := backtrail.MakeStack(pcs)
	b.Run(fmt.Sprintf("first-known-addresses/%d-runtime.Callers", c.Len()), func(b *testing.B) { benchKnownFrames(b, &c) })
	// A stack seen for the first time whose addresses were seen in other
	// stacks: the common case in a running program.
	b.Run("first-known-addresses/32", func(b *testing.B) { benchKnownFrames(b, &s) })
}

// BenchmarkFramesWarm measures first symbolizations in a process that has
// symbolized many stacks before: the address cache full of live entries of
// other addresses, as in a program that has run a while. Its addresses are
// not return addresses but points inside the test binary's functions, 40
// bytes apart, so the runtime's part costs more than for real stacks
// (their line tables are walked further); "stale-cache" symbolizes the same
// stacks with every cached entry stale (an in-app generation bumped), which
// the address cache passes over at once. The difference is what probing
// the address cache costs a stack of new addresses.
func BenchmarkFramesWarm(b *testing.B) {
	pcs := textPCs()
	var stacks []backtrail.Stack
	for i := 0; i+32 <= len(pcs); i += 32 {
		stacks = append(stacks, backtrail.MakeStack(pcs[i:i+32]))
	}
	if len(stacks) < 1024 {
		b.Fatalf("%d stacks of 32 addresses, want 1024 or more", len(stacks))
	}
	fill := len(stacks) / 2 // 16,384+ addresses: the cache's size
	for i := range fill {
		stacks[i].Frames()
	}
	run := func(b *testing.B, forget func(*backtrail.Stack)) {
		k := fill
		for b.Loop() {
			s := &stacks[k%len(stacks)]
			forget(s)
			_ = s.Frames()
			k++
		}
	}
	b.Run("new-stacks", func(b *testing.B) { run(b, backtrail.ForgetStackFrames) })
	b.Run("stale-cache", func(b *testing.B) { run(b, func(*backtrail.Stack) { backtrail.ForgetFrames() }) })
}

// textPCs returns addresses inside the functions of the test binary's text
// around a few of its functions, 40 bytes apart, leaving out entries.
func textPCs() []uintptr {
	var lo, hi uintptr = ^uintptr(0), 0
	for _, f := range []any{fmt.Sprintf, sort.Ints, testing.Main, backtrail.Go, runtime.GC} {
		p := reflect.ValueOf(f).Pointer()
		lo, hi = min(lo, p), max(hi, p)
	}
	lo -= min(lo, 1<<20)
	hi += 1 << 20
	var pcs []uintptr
	for pc := lo; pc < hi; pc += 40 {
		if f := runtime.FuncForPC(pc); f != nil && f.Entry() != pc && f.Entry() != pc-1 {
			pcs = append(pcs, pc)
		}
	}
	return pcs
}

// benchKnownFrames measures symbolizing s from the address cache.
func benchKnownFrames(b *testing.B, s *backtrail.Stack) {
	b.ReportAllocs()
	s.Frames()
	c0 := cpuTime()
	for b.Loop() {
		backtrail.ForgetStackFrames(s)
		_ = s.Frames()
	}
	reportCPU(b, c0)
}

// benchCallersFrames measures the runtime's symbolizer over s's addresses.
func benchCallersFrames(b *testing.B, s *backtrail.Stack) {
	b.ReportAllocs()
	pcs := s.PCs()
	c0 := cpuTime()
	for b.Loop() {
		fr := runtime.CallersFrames(pcs)
		for {
			_, more := fr.Next()
			if !more {
				break
			}
		}
	}
	reportCPU(b, c0)
}

// benchFirstFrames measures symbolizing s with every cache stale.
func benchFirstFrames(b *testing.B, s *backtrail.Stack) {
	b.ReportAllocs()
	c0 := cpuTime()
	for b.Loop() {
		backtrail.ForgetFrames() // every call symbolizes afresh
		_ = s.Frames()
	}
	reportCPU(b, c0)
}

// BenchmarkGo compares a go statement with backtrail.Go. Each iteration
// starts a goroutine that signals a WaitGroup; the overhead of Go is the
// difference between the two.
func BenchmarkGo(b *testing.B) {
	b.Run("go-statement", func(b *testing.B) {
		b.ReportAllocs()
		var wg sync.WaitGroup
		c0 := cpuTime()
		for b.Loop() {
			wg.Add(1)
			go wg.Done()
		}
		reportCPU(b, c0)
		wg.Wait()
	})
	b.Run("backtrail.Go", func(b *testing.B) {
		b.ReportAllocs()
		var wg sync.WaitGroup
		c0 := cpuTime()
		for b.Loop() {
			wg.Add(1)
			backtrail.Go(wg.Done)
		}
		reportCPU(b, c0)
		wg.Wait()
	})
}

// BenchmarkWrap measures capturing a hand-off with Wrap, and calling the
// result (label swaps and the trail frame), against calling fn directly.
func BenchmarkWrap(b *testing.B) {
	n := 0
	fn := func() { n++ }
	b.Run("Wrap", func(b *testing.B) {
		b.ReportAllocs()
		c0 := cpuTime()
		for b.Loop() {
			_ = backtrail.Wrap(fn)
		}
		reportCPU(b, c0)
	})
	b.Run("call-wrapped", func(b *testing.B) {
		b.ReportAllocs()
		w := backtrail.Wrap(fn)
		c0 := cpuTime()
		for b.Loop() {
			w()
		}
		reportCPU(b, c0)
	})
	b.Run("call-direct", func(b *testing.B) {
		b.ReportAllocs()
		c0 := cpuTime()
		for b.Loop() {
			fn()
		}
		reportCPU(b, c0)
	})
}

func BenchmarkTrail(b *testing.B) {
	b.ReportAllocs()
	done := make(chan struct{})
	backtrail.Go(func() {
		for b.Loop() {
			_ = backtrail.Trail()
		}
		close(done)
	})
	<-done
}

func BenchmarkAudit(b *testing.B) {
	c, _ := backtrail.NewClient(backtrail.Options{})
	b.ReportAllocs()
	c0 := cpuTime()
	for b.Loop() {
		c.Audit("bench")
	}
	reportCPU(b, c0)
}

func BenchmarkLoopBeginEnd(b *testing.B) {
	w := backtrail.NewWatchdog(backtrail.WatchdogOptions{Manual: true})
	l := w.Loop("bench")
	b.ReportAllocs()
	c0 := cpuTime()
	for b.Loop() {
		l.Begin()
		l.End()
	}
	reportCPU(b, c0)
}
