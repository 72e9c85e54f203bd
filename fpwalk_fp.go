//go:build amd64 || arm64

package backtrail

import (
	"runtime"
	"unsafe"
)

// The frame-pointer walk. Go on amd64 and arm64 keeps a frame pointer in
// every frame with a call in it, laid out the same way on both: the word at
// the frame pointer holds the caller's frame pointer and the next word holds
// the return address (runtime/tracestack.go, fpTracebackPCs). Walking that
// chain costs one load pair per frame, against the symbol-table unwind
// runtime.Callers does for each frame.
//
// The walk only reads its own goroutine's stack, and a stack moves only
// when a function prologue grows it or the GC shrinks it at a synchronous
// safe point. The walk therefore calls nothing while it holds frame
// addresses and is nosplit, which also makes it no async-preemption point.
// It still distrusts what it reads: each frame pointer must be aligned and
// above the last one by less than maxFrameSpan, and a walk that reaches the
// end of the chain must end at runtime.goexit's frame. A chain that breaks
// these rules (C frames under a cgo callback, say) is abandoned for
// runtime.Callers.

const fpSupported = true

// getfp returns its caller's frame pointer; see fpwalk_$GOARCH.s.
func getfp() unsafe.Pointer

const (
	ptrSize = unsafe.Sizeof(uintptr(0))

	// maxFrameSpan bounds the distance between adjacent frame pointers. The
	// compiler moves variables of 128 KiB or more to the heap, so a real
	// frame is far smaller; a larger step means the chain left the stack.
	maxFrameSpan = 8 << 20

	// maxMarkerSearch bounds how far past the depth limit a walk goes to
	// find the innermost trail marker.
	maxMarkerSearch = 1024
)

type walkStatus uint8

const (
	walkEnd  walkStatus = iota // reached the goroutine's first frame
	walkFull                   // stopped at the depth limit
	walkBad                    // the chain broke a rule; use runtime.Callers
)

// Learned once by probeFP at init; read-only afterwards.
var (
	goexitPC  uintptr // return address in the outermost frame of every goroutine
	markerPC  uintptr // return address of runTrail's call to the work function
	markerOff uintptr // offset of runTrail's marker from runTrail's frame pointer
	fpOK      bool    // the probes agreed with the runtime; use the walk
	trailsOK  bool    // the marker probe worked; find trails by walking
)

// Callers returns the current goroutine's stack: skip = 0 starts at the
// function that called Callers, 1 at its caller, and so on. It records at
// most SetMaxDepth frames, walks frame pointers on amd64 and arm64 and
// allocates nothing. Skip counts physical frames, so a function inlined into
// its caller is not a frame of its own here (Frames expands it).
//
//go:nosplit
//go:norace
//go:noinline
func Callers(skip int) (s Stack) {
	if fpOK && fpcallers(getfp(), skip, &s, int(maxDepth.Load())) != walkBad {
		return s
	}
	callersSlow(skip+1, &s)
	return s
}

// captureSubmit is Callers for a hand-off: the stack of its caller's caller
// plus skip, and the trail the current goroutine is running under.
//
//go:nosplit
//go:norace
//go:noinline
func captureSubmit(skip int, s *Stack) *trailNode {
	if fpOK {
		st, n := fpwalk(getfp(), skip+1, s, int(maxDepth.Load()), trailsOK)
		if st != walkBad {
			if !trailsOK {
				n = currentTrailSlow()
			}
			return n
		}
	}
	callersSlow(skip+2, s)
	return currentTrailSlow()
}

// currentTrail returns the trail the calling goroutine runs under, or nil.
//
//go:nosplit
//go:norace
//go:noinline
func currentTrail() *trailNode {
	if fpOK && trailsOK {
		st, n := fpwalk(getfp(), 0, nil, 0, true)
		if st != walkBad {
			return n
		}
	}
	return currentTrailSlow()
}

// fpwalk walks the frame-pointer chain from fp, the frame pointer of the
// function whose caller is frame 0. It skips skip frames, stores up to max
// return addresses in s and, when wantNode is set, keeps walking (up to
// maxMarkerSearch frames) until it finds the innermost runTrail frame and
// returns the trail stored there. s may be nil when max is 0.
//
//go:nosplit
//go:norace
func fpwalk(fp unsafe.Pointer, skip int, s *Stack, max int, wantNode bool) (st walkStatus, node *trailNode) {
	h := uint64(hashSeed)
	n := 0
	pc := uintptr(0)
	for i := 0; fp != nil; i++ {
		pc = *(*uintptr)(unsafe.Add(fp, ptrSize))
		next := *(*unsafe.Pointer)(fp)
		// next must lie above fp by at most maxFrameSpan: the unsigned
		// difference minus one wraps around when next <= fp.
		if next != nil && (uintptr(next)-uintptr(fp)-1 >= maxFrameSpan || uintptr(next)&(ptrSize-1) != 0) {
			return walkBad, nil
		}
		if wantNode && pc == markerPC && node == nil && next != nil {
			if m := (*marker)(unsafe.Add(next, markerOff)); m.magic == markerMagic {
				node = m.node
			}
		}
		if i >= skip {
			if n < max {
				s.pcs[n] = pc
				n++
				h = (h ^ uint64(pc)) * hashPrime
			} else if !wantNode || node != nil || i-skip >= maxMarkerSearch {
				st = walkFull
				break
			}
		}
		fp = next
	}
	if fp == nil && pc != 0 && goexitPC != 0 && pc != goexitPC {
		// The chain ended. Only a goroutine's own first frame ends it,
		// and that frame returns to runtime.goexit.
		return walkBad, nil
	}
	if s != nil {
		s.n = uint16(n)
		s.truncated = st == walkFull
		s.hash = hashFinish(h)
	}
	return st, node
}

// fpcallers is fpwalk without the trail search, for Callers: the loop per
// frame is two loads, one combined range check, a store and a multiply.
//
//go:nosplit
//go:norace
func fpcallers(fp unsafe.Pointer, skip int, s *Stack, max int) walkStatus {
	for ; skip > 0 && fp != nil; skip-- {
		next := *(*unsafe.Pointer)(fp)
		if next != nil && (uintptr(next)-uintptr(fp)-1 >= maxFrameSpan || uintptr(next)&(ptrSize-1) != 0) {
			return walkBad
		}
		fp = next
	}
	h := uint64(hashSeed)
	pcs := s.pcs[:max]
	n := 0
	pc := uintptr(0)
	for fp != nil && n < len(pcs) {
		pc = *(*uintptr)(unsafe.Add(fp, ptrSize))
		next := *(*unsafe.Pointer)(fp)
		// next must lie above fp by at most maxFrameSpan: the unsigned
		// difference minus one wraps around when next <= fp.
		if next != nil && (uintptr(next)-uintptr(fp)-1 >= maxFrameSpan || uintptr(next)&(ptrSize-1) != 0) {
			return walkBad
		}
		pcs[n] = pc
		n++
		h = (h ^ uint64(pc)) * hashPrime
		fp = next
	}
	st := walkEnd
	if fp != nil {
		st = walkFull
	} else if n > 0 && goexitPC != 0 && pc != goexitPC {
		return walkBad // the chain ended somewhere other than goexit
	}
	s.n = uint16(n)
	s.truncated = st == walkFull
	s.hash = hashFinish(h)
	return st
}

// callersSlow fills s with runtime.Callers, which unwinds with the symbol
// tables and so works everywhere. Its addresses are logical (inline frames
// get their own), which Frames handles just as well. skip counts from the
// caller of callersSlow.
//
//go:noinline
func callersSlow(skip int, s *Stack) {
	n := runtime.Callers(skip+2, s.pcs[:maxDepth.Load()])
	more := n == int(maxDepth.Load())
	*s = makeStack(s.pcs[:n], more)
}

// marker sits in runTrail's frame at a fixed offset from its frame pointer,
// so a walk that recognises runTrail's return address can read the trail
// without any per-goroutine table.
type marker struct {
	magic uintptr
	node  *trailNode
}

const markerMagic = uintptr(0x6274726b) // "btrk"; fits every uintptr

// probing makes runTrail publish its marker's address; set only by probeFP,
// during init, before any other goroutine can call runTrail.
var (
	probing   bool
	probeAddr uintptr
)

// runTrail runs fn with n recorded as the trail of the running goroutine.
// It must call fn from exactly one call site, whose return address is
// markerPC.
//
//go:noinline
func runTrail(n *trailNode, fn func()) {
	if !trailsOK && !probing {
		runTrailSlow(n, fn)
		return
	}
	m := marker{magic: markerMagic, node: n}
	if probing {
		probeAddr = uintptr(unsafe.Pointer(&m))
	}
	fn()
	runtime.KeepAlive(&m)
}

// frameOf returns the return address and caller frame pointer of the frame
// fp, for probeFP.
//
//go:nosplit
//go:norace
func frameOf(fp unsafe.Pointer) (pc uintptr, next unsafe.Pointer) {
	return *(*uintptr)(unsafe.Add(fp, ptrSize)), *(*unsafe.Pointer)(fp)
}

func init() { probeFP() }

// probeFP learns the addresses the walk relies on, and checks the walk
// against runtime.Callers once, so that a toolchain that laid frames out
// differently would make the SDK slower rather than wrong.
func probeFP() {
	// goexit's return address: the last frame of a fresh goroutine.
	done := make(chan uintptr)
	go func() {
		// With goexitPC still 0 the walk does not check how the chain ends.
		var s Stack
		if st, _ := fpwalk(getfp(), 0, &s, stackCap, false); st != walkEnd || s.n == 0 {
			done <- 0
			return
		}
		done <- s.pcs[s.n-1]
	}()
	pc := <-done
	if f := runtime.FuncForPC(pc - 1); f == nil || f.Name() != "runtime.goexit" {
		return
	}
	goexitPC = pc

	// The walk and runtime.Callers must agree on a known stack.
	var s Stack
	var ref [stackCap]uintptr
	probeCompare(&s, ref[:])
	if !sameFuncs(s.pcs[:s.n], ref[:]) {
		goexitPC = 0
		return
	}
	fpOK = true

	// The marker: run a probe under runTrail, read runTrail's return address
	// and frame pointer from the probe's own frame.
	probing = true
	runTrail(nil, func() {
		pc, rtFP := frameOf(getfp())
		markerPC = pc
		markerOff = probeAddr - uintptr(rtFP)
	})
	probing = false
	trailsOK = true
	probeNode := &trailNode{}
	var found *trailNode
	runTrail(probeNode, func() { found = currentTrail() })
	if found != probeNode {
		trailsOK = false
	}
}

//go:noinline
func probeCompare(s *Stack, ref []uintptr) {
	n := runtime.Callers(2, ref) // from our caller, like the walk from our frame
	for i := n; i < len(ref); i++ {
		ref[i] = 0
	}
	st, _ := fpwalk(getfp(), 0, s, stackCap, false)
	if st == walkBad {
		s.n = 0
	}
}

// sameFuncs reports whether two address lists name the same functions in
// the same order once expanded, which is what the walk promises.
func sameFuncs(a, b []uintptr) bool {
	for i, pc := range b {
		if pc == 0 {
			b = b[:i]
			break
		}
	}
	fa, fb := runtime.CallersFrames(a), runtime.CallersFrames(b)
	for {
		x, moreA := fa.Next()
		y, moreB := fb.Next()
		if x.Function != y.Function || moreA != moreB {
			return false
		}
		if !moreA {
			return x.Function != ""
		}
	}
}
