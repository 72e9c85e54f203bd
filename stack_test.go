package backtrail_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/backtrail/backtrail"
)

// expand symbolizes runtime.Callers output the way the runtime does.
func expand(pcs []uintptr) []string {
	var out []string
	fr := runtime.CallersFrames(pcs)
	for {
		f, more := fr.Next()
		out = append(out, fmt.Sprintf("%s %s:%d", f.Function, f.File, f.Line))
		if !more {
			return out
		}
	}
}

func names(s backtrail.Stack) []string {
	var out []string
	for _, f := range s.Frames() {
		out = append(out, fmt.Sprintf("%s %s:%d", f.Function, f.File, f.Line))
	}
	return out
}

// pcNames is names with each frame's address.
func pcNames(s backtrail.Stack) []string {
	var out []string
	for _, f := range s.Frames() {
		out = append(out, fmt.Sprintf("%#x %s %s:%d", f.PC, f.Function, f.File, f.Line))
	}
	return out
}

// framesByAddress expands each address of pcs on its own, so that every
// frame is known to come from it, in the form of pcNames, less the go
// statements' wrappers as runtime.Callers leaves them out. The runtime
// leaves out the outer frames of inlined calls at the last address only,
// so an address without symbols follows every other one.
func framesByAddress(pcs []uintptr) []string {
	var out []string
	for i, pc := range pcs {
		x := []uintptr{pc, 0x10}
		if i == len(pcs)-1 {
			x = x[:1]
		}
		for fr := runtime.CallersFrames(x); ; {
			f, more := fr.Next()
			if f.Function != "" && !strings.Contains(f.Function, ".gowrap") {
				out = append(out, fmt.Sprintf("%#x %s %s:%d", pc, f.Function, f.File, f.Line))
			}
			if !more {
				break
			}
		}
	}
	return out
}

// sameStack compares two symbolized stacks captured on different lines of
// the same innermost function: the first frame by function only.
func sameStack(have, want []string) bool {
	if len(have) == 0 || len(want) == 0 {
		return len(have) == len(want)
	}
	fn := func(s string) string { f, _, _ := strings.Cut(s, " "); return f }
	return fn(have[0]) == fn(want[0]) && strings.Join(have[1:], "\n") == strings.Join(want[1:], "\n")
}

// capturePair captures the same stack both ways from the same function.
//
//go:noinline
func capturePair(skip int) (backtrail.Stack, []string) {
	s := backtrail.Callers(skip)
	pcs := make([]uintptr, 256)
	n := runtime.Callers(skip+1, pcs)
	return s, expand(pcs[:n])
}

//go:noinline
func recurse(depth, skip int) (backtrail.Stack, []string) {
	if depth == 0 {
		return capturePair(skip)
	}
	s, want := recurse(depth-1, skip)
	runtime.KeepAlive(depth)
	return s, want
}

// inlinedHelper is small enough to be inlined into its callers, so the walk
// sees no frame for it and Frames must expand it. (The runtime.Callers
// fallback gives it an address of its own instead.)
func inlinedHelper(skip int) (backtrail.Stack, []string) { return capturePair(skip) }

//go:noinline
func callsInlined(skip int) (backtrail.Stack, []string) { return inlinedHelper(skip) }

// recurseInlined recurses through an inlined call, so each repetition of
// its return address expands into two frames.
//
//go:noinline
func recurseInlined(depth int) (backtrail.Stack, []string) {
	if depth == 0 {
		return capturePair(0)
	}
	return inlinedStep(depth)
}

func inlinedStep(depth int) (backtrail.Stack, []string) { return recurseInlined(depth - 1) }

// ping and pong recurse through each other, so their return addresses
// repeat in a stack but never next to each other.
//
//go:noinline
func ping(depth int) (backtrail.Stack, []string) {
	if depth == 0 {
		return capturePair(0)
	}
	s, want := pong(depth - 1)
	runtime.KeepAlive(depth)
	return s, want
}

//go:noinline
func pong(depth int) (backtrail.Stack, []string) {
	s, want := ping(depth)
	runtime.KeepAlive(depth)
	return s, want
}

// pingInlined captures at the bottom of pingWith.
func pingInlined(depth int) (s backtrail.Stack, want []string) {
	pingWith(depth, func() { s, want = capturePair(0) })
	return s, want
}

// pingWith and pongWith recurse through each other and an inlined call
// (pongStep), so an address that needs inline expansion repeats two apart,
// and call capture at the bottom.
//
//go:noinline
func pingWith(depth int, capture func()) {
	if depth == 0 {
		capture()
		return
	}
	pongStep(depth, capture)
}

func pongStep(depth int, capture func()) { pongWith(depth-1, capture) }

//go:noinline
func pongWith(depth int, capture func()) {
	pingWith(depth, capture)
	runtime.KeepAlive(depth)
}

// needWalk skips a test that splices stacks, which assumes that each
// address is a frame's return address, as the frame-pointer walk captures
// them. The fallback, runtime.Callers, also lists the call sites of
// inlined calls, and splicing separates them from the calls' addresses
// (stacks no capture makes; the expected frames are built per address).
func needWalk(t *testing.T) {
	t.Helper()
	if walk, _ := backtrail.FastPath(); !walk {
		if runtime.GOARCH == "amd64" || runtime.GOARCH == "arm64" {
			t.Fatalf("frame-pointer walk disabled on %s: its probe failed", runtime.GOARCH)
		}
		t.Skipf("stacks from runtime.Callers on %s", runtime.GOARCH)
	}
}

// TestCallersMatchesRuntime compares the symbolized walk with runtime.Callers
// at depths around the default limit and with inlined frames in the way.
func TestCallersMatchesRuntime(t *testing.T) {
	if walk, _ := backtrail.FastPath(); !walk {
		if runtime.GOARCH == "amd64" || runtime.GOARCH == "arm64" {
			t.Errorf("frame-pointer walk disabled on %s: its probe failed", runtime.GOARCH)
		}
		t.Logf("frame-pointer walk not in use on %s; comparing the fallback", runtime.GOARCH)
	}
	for _, depth := range []int{0, 1, 5, 31, 32, 33, 50} {
		for _, skip := range []int{0, 1, 2} {
			s, want := recurse(depth, skip)
			have := names(s)
			if len(want) > len(have) {
				want = want[:len(have)] // have stops at the depth limit
			}
			if !sameStack(have, want) {
				t.Errorf("depth %d skip %d:\nhave\n\t%s\nwant\n\t%s", depth, skip,
					strings.Join(have, "\n\t"), strings.Join(want, "\n\t"))
			}
		}
	}
	s, want := recurseInlined(6)
	if have := names(s); !sameStack(have, want) {
		t.Errorf("recursion through an inlined call:\nhave\n\t%s\nwant\n\t%s", strings.Join(have, "\n\t"), strings.Join(want, "\n\t"))
	}
	s, want = ping(5)
	if have := names(s); !sameStack(have, want) {
		t.Errorf("mutual recursion:\nhave\n\t%s\nwant\n\t%s", strings.Join(have, "\n\t"), strings.Join(want, "\n\t"))
	}
	s, want = pingInlined(5)
	if have := names(s); !sameStack(have, want) {
		t.Errorf("mutual recursion through an inlined call:\nhave\n\t%s\nwant\n\t%s", strings.Join(have, "\n\t"), strings.Join(want, "\n\t"))
	}
	s, want = callsInlined(0)
	if have := names(s); !sameStack(have, want) {
		t.Errorf("inlined:\nhave\n\t%s\nwant\n\t%s", strings.Join(have, "\n\t"), strings.Join(want, "\n\t"))
	}
	fr := s.Frames()
	if !strings.HasSuffix(fr[0].Function, ".capturePair") || !strings.HasSuffix(fr[1].Function, ".inlinedHelper") || !fr[1].Inlined || fr[0].Inlined {
		t.Errorf("inline expansion: %+v", fr[:3])
	}
	if walk, _ := backtrail.FastPath(); walk && fr[1].PC != fr[2].PC {
		t.Errorf("an inlined frame should share its physical frame's PC: %#x vs %#x", fr[1].PC, fr[2].PC)
	}
}

func TestCallersDepthLimit(t *testing.T) {
	tests := []struct {
		max, depth  int
		wantLen     int
		wantTrunc   bool
		description string
	}{
		{64, 10, 16, false, "shallow"}, // 11 recurse, capturePair, the test, tRunner, its go wrapper, goexit
		{64, 100, 64, true, "default limit"},
		{8, 100, 8, true, "lowered"},
		{1000, 200, 64, true, "clamped to 64"},
		{0, 5, 1, true, "clamped to 1"},
	}
	for _, tt := range tests {
		old := backtrail.SetMaxDepth(tt.max)
		s, want := recurse(tt.depth, 0)
		backtrail.SetMaxDepth(old)
		_ = want
		wantLen := tt.wantLen
		if walk, _ := backtrail.FastPath(); !walk && tt.description == "shallow" {
			wantLen-- // runtime.Callers leaves out the go statement's wrapper
		}
		if s.Len() != wantLen || s.Truncated() != tt.wantTrunc {
			t.Errorf("%s: SetMaxDepth(%d), depth %d: Len %d Truncated %v, want %d %v",
				tt.description, tt.max, tt.depth, s.Len(), s.Truncated(), wantLen, tt.wantTrunc)
		}
	}
	if got := backtrail.SetMaxDepth(64); got != 64 {
		t.Errorf("SetMaxDepth returned %d, want the default 64", got)
	}
}

func TestCallersSkipPastEnd(t *testing.T) {
	s := backtrail.Callers(10000)
	if s.Len() != 0 || s.Frames() != nil || s.String() != "" {
		t.Errorf("Callers(10000) = %d frames", s.Len())
	}
}

func TestStackHash(t *testing.T) {
	var a, b backtrail.Stack
	for i := range 2 {
		s := backtrail.Callers(0)
		if i == 0 {
			a = s
		} else {
			b = s
		}
	}
	if a != b || a.Hash() != b.Hash() {
		t.Error("same call site captured twice: stacks or hashes differ")
	}
	c := backtrail.Callers(0)
	if c.Hash() == a.Hash() {
		t.Error("different call sites hash the same")
	}
	// The walk's inline hash and the fallback's must agree.
	if m := backtrail.MakeStack(a.PCs()); m.Hash() != a.Hash() || m != a {
		t.Errorf("MakeStack(a.PCs()).Hash() = %#x, a.Hash() = %#x", m.Hash(), a.Hash())
	}
}

func TestEqualPCs(t *testing.T) {
	for n := range 10 {
		a := make([]uintptr, n)
		for i := range a {
			a[i] = uintptr(0x1000 + i)
		}
		if !backtrail.EqualPCs(a, slices.Clone(a)) {
			t.Errorf("%d equal addresses: not equal", n)
		}
		if n > 0 && backtrail.EqualPCs(a, a[:n-1]) {
			t.Errorf("%d addresses equal to their first %d", n, n-1)
		}
		for i := range n {
			b := slices.Clone(a)
			b[i]++
			if backtrail.EqualPCs(a, b) {
				t.Errorf("%d addresses differing at %d: equal", n, i)
			}
		}
	}
}

func TestStackString(t *testing.T) {
	s := backtrail.Callers(0)
	str := s.String()
	if !strings.HasPrefix(str, "github.com/backtrail/backtrail_test.TestStackString\n\t") || !strings.Contains(str, "stack_test.go:") {
		t.Errorf("String() =\n%s", str)
	}
}

// TestFramesSigpanic checks the address adjustment under runtime.sigpanic:
// the faulting line, not the line before it, must be reported. The walk may
// miss one frame here: a leaf function without a frame record that faults
// hands sigpanic its caller's frame pointer, so the leaf's caller is skipped
// (runtime.Callers, which the SDK uses for panic reports, is not fooled).
func TestFramesSigpanic(t *testing.T) {
	var s backtrail.Stack
	var want []string
	func() {
		defer func() {
			recover()
			s = backtrail.Callers(0)
			pcs := make([]uintptr, 64)
			want = expand(pcs[:runtime.Callers(1, pcs)])
		}()
		nilDeref(nil)
	}()
	have := names(s)
	// have must be want less at most one frame, right after nilDeref.
	ok := len(have) == len(want) || len(have) == len(want)-1
	for i, j := 1, 1; ok && i < len(have); i, j = i+1, j+1 {
		if have[i] != want[j] {
			if j > 0 && strings.Contains(want[j-1], ".nilDeref ") && j+1 < len(want) && have[i] == want[j+1] {
				j++
				continue
			}
			ok = false
		}
	}
	if !ok {
		t.Errorf("have\n\t%s\nwant\n\t%s", strings.Join(have, "\n\t"), strings.Join(want, "\n\t"))
	}
	found := false
	for _, f := range s.Frames() {
		if strings.HasSuffix(f.Function, ".nilDeref") {
			found = true
			if f.Line != nilDerefLine {
				t.Errorf("nilDeref frame at line %d, want %d", f.Line, nilDerefLine)
			}
		}
	}
	if !found {
		t.Error("no nilDeref frame")
	}

	// From the signal frame on, the addresses are not return addresses
	// (the next one is the faulting instruction), so the address cache
	// must not offer their frames to other stacks.
	backtrail.ForgetFrames()
	sig := -1
	for _, f := range s.Frames() {
		if f.Function == "runtime.sigpanic" {
			sig = slices.Index(s.PCs(), f.PC)
			break
		}
	}
	if sig < 0 {
		t.Fatal("no runtime.sigpanic frame")
	}
	for i := range s.Len() {
		if known := backtrail.KnownPC(s.PC(i)); known != (i < sig) {
			t.Errorf("address %d of %d (signal frame at %d): in the address cache = %v", i, s.Len(), sig, known)
		}
	}
}

// nilDerefLine is the line of the faulting statement in nilDeref.
var nilDerefLine = func() int {
	src, _ := os.ReadFile("stack_test.go")
	for i, l := range strings.Split(string(src), "\n") {
		if strings.Contains(l, "x += *p "+"// faults") {
			return i + 1
		}
	}
	return -1
}()

//go:noinline
func nilDeref(p *int) int {
	x := 1
	x += *p // faults
	return x
}

func TestFramesInApp(t *testing.T) {
	s := backtrail.Callers(0)
	fr := s.Frames()
	if !fr[0].InApp {
		t.Errorf("test function not in-app: %+v", fr[0])
	}
	for _, f := range fr {
		if strings.HasPrefix(f.Function, "runtime.") && f.InApp {
			t.Errorf("%s marked in-app", f.Function)
		}
	}
	backtrail.SetInApp("example.com/nothing")
	fr = s.Frames()
	backtrail.SetInApp()
	if fr[0].InApp {
		t.Error("SetInApp did not invalidate cached frames")
	}
	if fr = s.Frames(); !fr[0].InApp {
		t.Error("SetInApp() did not restore the default")
	}
}

func TestCallersNoAllocs(t *testing.T) {
	var s backtrail.Stack
	if n := testing.AllocsPerRun(100, func() { s = backtrail.Callers(0) }); n != 0 {
		t.Errorf("Callers: %v allocs per run", n)
	}
	s.Frames()
	if n := testing.AllocsPerRun(100, func() { _ = s.Frames() }); n != 0 {
		t.Errorf("Frames (cached): %v allocs per run", n)
	}
}

func TestInAppRule(t *testing.T) {
	backtrail.SetInApp("example.com/app", "gopkg.in/yaml")
	defer backtrail.SetInApp()
	tests := []struct {
		fn   string
		want bool
	}{
		{"example.com/app.main", true},
		{"example.com/app.(*T).M", true},
		{"example.com/app/sub.F", true},
		{"example.com/app/sub/deeper.F.func1", true},
		{"example.com/app_test.TestX", true},
		{"example.com/apple.F", false},
		{"example.com/ap.F", false},
		{"example.com/app", false}, // no function part: not a function name
		{"gopkg.in/yaml.F", true},
		{"gopkg.in/yaml%2ev3.F", false}, // the linker escapes dots in a last path element
		{"runtime.goexit", false},
		{"github.com/backtrail/backtrail.runTrail", false},
		{"", false},
	}
	for _, tt := range tests {
		if got := backtrail.InApp(tt.fn); got != tt.want {
			t.Errorf("InApp(%q) = %v, want %v", tt.fn, got, tt.want)
		}
	}
}

// TestFramesFromKnownAddresses checks the address cache: a stack seen for
// the first time, made of addresses symbolized before in other stacks,
// gets exactly the frames the runtime gives it from scratch, also with
// recursion (a run of one address), mutual recursion (an address repeated
// apart), a signal frame and inlined calls.
func TestFramesFromKnownAddresses(t *testing.T) {
	var stacks []backtrail.Stack
	s, _ := recurse(5, 0)
	stacks = append(stacks, s)
	s, _ = recurse(9, 0)
	stacks = append(stacks, s)
	s, _ = ping(3)
	stacks = append(stacks, s)
	s, _ = ping(6)
	stacks = append(stacks, s)
	s, _ = pingInlined(4)
	stacks = append(stacks, s)
	func() {
		defer func() {
			recover()
			stacks = append(stacks, backtrail.Callers(0))
		}()
		nilDeref(nil)
	}()
	stacks = append(stacks, inlinedCaller())
	for i := range stacks {
		s := &stacks[i]
		backtrail.ForgetFrames()
		cold := fmt.Sprint(s.Frames())
		for j := range stacks { // every address known, under this generation
			stacks[j].Frames()
		}
		backtrail.ForgetStackFrames(s)
		if warm := fmt.Sprint(s.Frames()); warm != cold {
			t.Errorf("stack %d: from known addresses\n%s\nfrom scratch\n%s", i, warm, cold)
		}
	}
}

// TestFramesUnknownAddresses checks stacks with addresses that have no
// symbols, which the runtime drops, one to three in a row, before, between
// and after inlined calls and repeated addresses: the frames must still be
// the runtime's, less the go statement's wrapper, each must carry the
// address it came from, and the address cache must not pass on frames it
// could not tell apart.
func TestFramesUnknownAddresses(t *testing.T) {
	needWalk(t)
	if none := backtrail.MakeStack([]uintptr{0x10, 0x20}); len(none.Frames()) != 0 {
		t.Errorf("no symbols at all: %+v", none.Frames())
	}
	for _, s := range []backtrail.Stack{first(callsInlined(0)), first(recurse(3, 0)), first(pingInlined(2))} {
		unknownAddresses(t, s.PCs())
	}
}

// unknownAddresses checks stacks made of pcs with addresses without
// symbols put in.
func unknownAddresses(t *testing.T, pcs []uintptr) {
	t.Helper()
	for n := 1; n <= 3; n++ {
		for at := 0; at <= min(len(pcs), 6); at++ {
			bad := []uintptr{0x10, 0x20, 0x30}[:n]
			mixed := slices.Concat(pcs[:at], bad, pcs[at:])
			m := backtrail.MakeStack(mixed)
			backtrail.ForgetFrames()
			want := slices.DeleteFunc(expand(mixed), func(f string) bool { return strings.Contains(f, ".gowrap") }) // as runtime.Callers does
			if have := names(m); strings.Join(have, "\n") != strings.Join(want, "\n") {
				t.Errorf("%d unknown addresses at %d:\nhave\n\t%s\nwant\n\t%s", n, at,
					strings.Join(have, "\n\t"), strings.Join(want, "\n\t"))
			}
			// Each frame carries the address it came from.
			if have, want := pcNames(m), framesByAddress(mixed); strings.Join(have, "\n") != strings.Join(want, "\n") {
				t.Errorf("%d unknown addresses at %d, addresses:\nhave\n\t%s\nwant\n\t%s", n, at,
					strings.Join(have, "\n\t"), strings.Join(want, "\n\t"))
			}
			if at == len(pcs) {
				continue
			}
			// The addresses after them, as a stack of their own, whose
			// frames may come from the address cache.
			after := backtrail.MakeStack(pcs[at:])
			want = framesByAddress(pcs[at:])
			if have := pcNames(after); strings.Join(have, "\n") != strings.Join(want, "\n") {
				t.Errorf("after %d unknown addresses at %d:\nhave\n\t%s\nwant\n\t%s", n, at,
					strings.Join(have, "\n\t"), strings.Join(want, "\n\t"))
			}
		}
	}
}

// TestFramesRepeatedAddress checks that each frame carries the address it
// was expanded from when an address repeats two apart from the first.
func TestFramesRepeatedAddress(t *testing.T) {
	needWalk(t)
	s, _ := callsInlined(0)
	pcs := s.PCs()
	x := slices.Concat(pcs[:2], pcs[:2], pcs[2:])
	want := framesByAddress(x)
	if have := pcNames(backtrail.MakeStack(x)); strings.Join(have, "\n") != strings.Join(want, "\n") {
		t.Errorf("have\n\t%s\nwant\n\t%s", strings.Join(have, "\n\t"), strings.Join(want, "\n\t"))
	}
}

// TestFramesCutAtInlinedCall checks a stack cut off at an inlined call.
// The runtime leaves out the outer frames of the last address's inlined
// calls, so such an address must not be taken from the address cache for
// a stack that goes on past it.
func TestFramesCutAtInlinedCall(t *testing.T) {
	s, _ := callsInlined(0)
	pcs := s.PCs()
	full := backtrail.MakeStack(pcs)
	backtrail.ForgetFrames()
	cold := fmt.Sprint(full.Frames())
	backtrail.ForgetFrames()
	cut, rest := backtrail.MakeStack(pcs[:2]), backtrail.MakeStack(pcs[2:])
	if fr := cut.Frames(); len(fr) != 2 || !fr[1].Inlined {
		t.Fatalf("cut at the inlined call: %+v", fr)
	}
	rest.Frames()
	if warm := fmt.Sprint(full.Frames()); warm != cold {
		t.Errorf("from known addresses\n%s\nfrom scratch\n%s", warm, cold)
	}
}

func inlinedCaller() backtrail.Stack { return inlinedLeaf() }

//go:noinline
func inlinedLeaf() backtrail.Stack { return inlinedMiddle() }

func inlinedMiddle() backtrail.Stack { return backtrail.Callers(0) }

// TestFramesConcurrent symbolizes stacks made of pieces of real stacks
// from several goroutines at once while the cached frames keep going stale
// (as SetInApp makes them), so that the address cache is filled, read and
// overwritten concurrently: every stack must still get the runtime's
// frames. Run it with -race.
func TestFramesConcurrent(t *testing.T) {
	needWalk(t)
	// Pieces of real stacks, recombined; every stack ends as real ones
	// do, in runtime.goexit, and has it nowhere else.
	var base [][]uintptr
	var goexit uintptr
	for _, s := range []backtrail.Stack{first(recurse(5, 0)), first(recurse(9, 0)), first(ping(4)), first(pingInlined(3)), first(callsInlined(0)), first(recurseInlined(4))} {
		pcs := s.PCs()
		goexit = pcs[len(pcs)-1]
		base = append(base, pcs[:len(pcs)-1])
	}
	if f, _ := runtime.CallersFrames([]uintptr{goexit}).Next(); f.Function != "runtime.goexit" {
		t.Fatalf("stacks end in %s, not runtime.goexit", f.Function)
	}
	stop := make(chan struct{})
	staled := make(chan struct{})
	go func() {
		defer close(staled)
		for {
			select {
			case <-stop:
				return
			default:
				backtrail.ForgetFrames()
				runtime.Gosched()
			}
		}
	}()
	errs := make(chan string, 4)
	for g := range 4 {
		go func() {
			rng := rand.New(rand.NewPCG(uint64(g), 7))
			for range 400 {
				var pcs []uintptr
				for range 1 + rng.IntN(3) {
					b := base[rng.IntN(len(base))]
					lo := rng.IntN(len(b))
					pcs = append(pcs, b[lo:lo+1+rng.IntN(len(b)-lo)]...)
				}
				pcs = append(pcs, goexit)
				want := slices.DeleteFunc(expand(pcs), func(f string) bool { return strings.Contains(f, ".gowrap") })
				if have := names(backtrail.MakeStack(pcs)); !slices.Equal(have, want) {
					errs <- fmt.Sprintf("stack of %d addresses:\nhave\n\t%s\nwant\n\t%s", len(pcs), strings.Join(have, "\n\t"), strings.Join(want, "\n\t"))
					return
				}
			}
			errs <- ""
		}()
	}
	for range 4 {
		if e := <-errs; e != "" {
			t.Error(e)
		}
	}
	close(stop)
	<-staled
}

func first(s backtrail.Stack, _ []string) backtrail.Stack { return s }

// TestFramesWrapperBetweenRepeats checks stacks in which an address
// without frames of its own (a go statement's wrapper) sits between two
// occurrences of one address, with and without runs of it: frames are
// told apart by the address they carry, which cannot say to which
// occurrence they belong.
func TestFramesWrapperBetweenRepeats(t *testing.T) {
	needWalk(t)
	s := backtrail.Callers(0)
	pcs := s.PCs()
	if len(pcs) < 3 {
		t.Fatalf("%d addresses", len(pcs))
	}
	// The test goroutine's stack ends in testing.tRunner, its go
	// statement's wrapper and runtime.goexit.
	r, w, g := pcs[len(pcs)-3], pcs[len(pcs)-2], pcs[len(pcs)-1]
	if f, _ := runtime.CallersFrames([]uintptr{w}).Next(); !strings.Contains(f.Function, ".gowrap") {
		t.Fatalf("%s is not a go statement's wrapper", f.Function)
	}
	for _, x := range [][]uintptr{
		{r, w, r, r, w, g},
		{r, w, r, g},
		{r, r, w, r, g},
		{pcs[0], r, w, r, w, r, g},
	} {
		want := slices.DeleteFunc(expand(x), func(f string) bool { return strings.Contains(f, ".gowrap") })
		for _, order := range []string{"alone", "after the others"} {
			if order == "alone" {
				backtrail.ForgetFrames()
			}
			if have := names(backtrail.MakeStack(x)); !slices.Equal(have, want) {
				t.Errorf("%d addresses, %s:\nhave\n\t%s\nwant\n\t%s", len(x), order, strings.Join(have, "\n\t"), strings.Join(want, "\n\t"))
			}
		}
	}
}

// TestFramesFastPathMatchesRuntime checks the expansion of addresses with
// runtime.FuncForPC against the runtime's expander, which the other tests
// check against runtime.CallersFrames: on stacks made of addresses all
// over the test binary's code, in random order, so that they fall on
// function entries, padding, inlined calls, wrappers and signal frames,
// and on the goroutine profile's stacks, whose inlined calls have
// addresses of their own.
func TestFramesFastPathMatchesRuntime(t *testing.T) {
	if !backtrail.SetFastFrames(true) {
		t.Fatal("the runtime.FuncForPC expansion is off: inlineProbe failed")
	}
	defer backtrail.SetFastFrames(true)
	pcs := textAddresses(t, 200000)
	rng := rand.New(rand.NewPCG(3, 4))
	rng.Shuffle(len(pcs), func(i, j int) { pcs[i], pcs[j] = pcs[j], pcs[i] })
	var lists [][]uintptr
	for len(pcs) > 0 {
		n := min(len(pcs), 1+rng.IntN(20))
		lists, pcs = append(lists, pcs[:n]), pcs[n:]
	}
	records := make([]runtime.StackRecord, 1000)
	n, ok := runtime.GoroutineProfile(records)
	if !ok || n == 0 {
		t.Fatalf("goroutine profile: %d records, ok %v", n, ok)
	}
	for _, r := range records[:n] {
		lists = append(lists, r.Stack())
	}
	frames := func(pcs []uintptr, fast bool) string {
		backtrail.SetFastFrames(fast)
		backtrail.ForgetFrames()
		return strings.Join(pcNames(backtrail.MakeStack(pcs)), "\n")
	}
	bad := 0
	for _, l := range lists {
		if fast, slow := frames(l, true), frames(l, false); fast != slow && bad < 5 {
			bad++
			t.Errorf("addresses %#x:\nFuncForPC\n\t%s\nruntime\n\t%s", l, strings.ReplaceAll(fast, "\n", "\n\t"), strings.ReplaceAll(slow, "\n", "\n\t"))
		}
	}
}

// textAddresses returns about n addresses spread evenly over the code of
// the running test binary: from the lowest address the runtime has a
// function for to the highest, found by bisection from one it has.
func textAddresses(t *testing.T, n int) []uintptr {
	known := func(pc uintptr) bool { return runtime.FuncForPC(pc) != nil }
	in := reflect.ValueOf(textAddresses).Pointer()
	if !known(in) {
		t.Fatal("no function for textAddresses")
	}
	// Bisect [a, b) for the boundary between known and unknown
	// addresses, of which a is one kind and b the other.
	bisect := func(a, b uintptr) uintptr {
		ka := known(a)
		for b-a > 1 {
			if mid := a + (b-a)/2; known(mid) == ka {
				a = mid
			} else {
				b = mid
			}
		}
		return b
	}
	start, end := bisect(0, in), bisect(in, in+math.MaxUint32)-1
	step := max((end-start)/uintptr(n), 1)
	var pcs []uintptr
	for pc := start; pc <= end; pc += step {
		pcs = append(pcs, pc)
	}
	return pcs
}

// TestFramesKnownCallSites checks the address cache on the goroutine
// profile's stacks, which, like runtime.Callers, list the call site of an
// inlined call as an address of its own after the call's: a new stack of
// known addresses gets the frames the runtime gives it from scratch, and
// the addresses past an inlined call are cached too.
func TestFramesKnownCallSites(t *testing.T) {
	c := make(chan int)
	defer close(c)
	for range 3 {
		go parkOuter(c)
	}
	var target []uintptr // the stack of a parked goroutine, with the inlined call
	var stacks []backtrail.Stack
	for try := 0; target == nil; try++ {
		if try == 100 {
			t.Fatal("no goroutine parked in parkInner")
		}
		runtime.Gosched()
		records := make([]runtime.StackRecord, 1000)
		n, ok := runtime.GoroutineProfile(records)
		if !ok {
			t.Fatal("goroutine profile too small")
		}
		stacks = stacks[:0]
		for _, r := range records[:n] {
			pcs := r.Stack()
			stacks = append(stacks, backtrail.MakeStack(pcs))
			for _, f := range stacks[len(stacks)-1].Frames() {
				if strings.HasSuffix(f.Function, ".parkInner") && f.Inlined && f.PC != pcs[len(pcs)-1] {
					target = pcs
				}
			}
		}
	}
	for i := range stacks {
		s := &stacks[i]
		backtrail.ForgetFrames()
		cold := fmt.Sprint(s.Frames())
		for j := range stacks {
			stacks[j].Frames()
		}
		backtrail.ForgetStackFrames(s)
		if warm := fmt.Sprint(s.Frames()); warm != cold {
			t.Errorf("stack %d: from known addresses\n%s\nfrom scratch\n%s", i, warm, cold)
		}
	}
	backtrail.ForgetFrames()
	s := backtrail.MakeStack(target)
	s.Frames()
	for i, pc := range target {
		if !backtrail.KnownPC(pc) && i < len(target)-1 {
			t.Errorf("address %d of %d (%#x) not in the address cache", i, len(target), pc)
		}
	}
	// The inlined call's address before another address than its call
	// site: the runtime then expands the callers too, so the cached frames
	// must not be used.
	for i := range len(target) - 1 {
		s := backtrail.MakeStack(slices.Concat(target[:i+1], target[i+2:]))
		full := backtrail.MakeStack(target)
		full.Frames() // all addresses known
		if have, want := names(s), slices.DeleteFunc(expand(s.PCs()), func(f string) bool { return strings.Contains(f, ".gowrap") }); strings.Join(have, "\n") != strings.Join(want, "\n") {
			t.Errorf("address %d left out:\nhave\n\t%s\nwant\n\t%s", i+1, strings.Join(have, "\n\t"), strings.Join(want, "\n\t"))
		}
	}
}

//go:noinline
func parkOuter(c chan int) { parkInner(c) }

func parkInner(c chan int) { <-c }
