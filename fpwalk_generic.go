//go:build !amd64 && !arm64

package backtrail

import "runtime"

// Elsewhere Callers is runtime.Callers and trails live in a table keyed by
// goroutine id; see trail_slow.go for what that costs.

const fpSupported = false

var fpOK, trailsOK bool

// Callers returns the current goroutine's stack: skip = 0 starts at the
// function that called Callers, 1 at its caller, and so on. It records at
// most SetMaxDepth frames and allocates nothing. On this architecture it is
// runtime.Callers, whose skip counts inlined frames too.
//
//go:noinline
func Callers(skip int) (s Stack) {
	callersSlow(skip+1, &s)
	return s
}

//go:noinline
func captureSubmit(skip int, s *Stack) *trailNode {
	callersSlow(skip+2, s)
	return currentTrailSlow()
}

func currentTrail() *trailNode { return currentTrailSlow() }

//go:noinline
func callersSlow(skip int, s *Stack) {
	n := runtime.Callers(skip+2, s.pcs[:maxDepth.Load()])
	more := n == int(maxDepth.Load())
	*s = makeStack(s.pcs[:n], more)
}

func runTrail(n *trailNode, fn func()) { runTrailSlow(n, fn) }
