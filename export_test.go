package backtrail

import (
	"bytes"
	"time"

	"github.com/backtrail/backtrail/report"
)

// Hooks for the black-box tests in package backtrail_test.

// FastPath reports whether Callers uses the frame-pointer walk and whether
// trails are found by walking rather than through the goroutine-id table.
func FastPath() (walk, trails bool) { return fpOK && fpSupported, trailsOK }

// MakeStack builds a Stack from addresses, as the capture fallback does.
func MakeStack(pcs []uintptr) Stack { return makeStack(pcs, false) }

// ForgetFrames makes every cached Frames result stale, so the next call
// symbolizes afresh.
func ForgetFrames() { inAppGen.Add(1) }

// ForgetStackFrames drops the cached frames of s but not those of its
// addresses, as if s were a new stack made of addresses seen before.
func ForgetStackFrames(s *Stack) {
	if r := lookupStack(s); r != nil {
		r.frames.Store(nil)
	}
}

// EqualPCs is the comparison of interned stacks' addresses.
var EqualPCs = equalPCs

// KnownPC reports whether the address cache holds the frames of pc under
// the current in-app generation.
func KnownPC(pc uintptr) bool {
	sym, _ := lookupPC(pc, inAppGen.Load())
	return sym != nil
}

// TakeSnapshot takes the watchdog's all-goroutine snapshot.
func TakeSnapshot() (*report.Snapshot, error) {
	var buf bytes.Buffer
	groups, err := goroutineProfile(&buf)
	if err != nil {
		return nil, err
	}
	return snapshotReport(groups, 100, time.Now()), nil
}

// InApp exposes the in-app rule.
func InApp(function string) bool { return inApp(function) }

// SetFastFrames turns the expansion of addresses by runtime.FuncForPC on
// or off (every address then goes through runtime.CallersFrames) and
// reports whether it was on.
func SetFastFrames(on bool) bool {
	was := fastFramesOK()
	fastFrames = on
	return was
}
