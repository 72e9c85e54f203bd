package backtrail

import (
	"fmt"
	"runtime"
	"strings"

	"github.com/backtrail/backtrail/report"
)

// finish is deferred by run around every piece of handed-off work. It
// restores the goroutine's labels and, if the work panicked, records the
// panic and (unless Options.RecoverPanics) panics again with the same
// value, so the program crashes as it would have without the SDK. Go 1.23+
// prints such a crash as "panic: v [recovered, repanicked]" with the
// original frames still on the stack.
//
// recover must be called directly by the deferred function, so finish is
// the deferred function itself.
func (c *Client) finish(n, outer *trailNode, restore bool) {
	if restore && !c.opts.DisableLabels {
		setLabels(outer)
	}
	v := recover()
	if v == nil {
		return
	}
	c.recordPanic(v, n)
	if !c.opts.RecoverPanics {
		panic(v)
	}
}

// recordPanic writes a crash report for panic value v raised in work
// running under trail n. It runs in the deferred call, on top of the
// panicking frames, and uses runtime.Callers rather than the frame-pointer
// walk: panics are rare, and the symbol-table unwind sees through the frame
// a faulting leaf function never made.
func (c *Client) recordPanic(v any, n *trailNode) {
	pcs := make([]uintptr, stackCap)
	s := makeStack(pcs[:runtime.Callers(1, pcs)], false)
	frames := panicFrames(s.Frames())

	r := c.newReport(report.KindCrash)
	id := goid()
	r.Exception = &report.Exception{
		Type:      fmt.Sprintf("%T", v),
		Value:     panicValue(v),
		Mechanism: "panic",
		Handled:   c.opts.RecoverPanics,
		ThreadID:  id,
	}
	th := report.Thread{ID: id, State: "running", Crashed: true, Current: true, Frames: reportFrames(frames), Truncated: s.truncated}
	if n != nil {
		th.Labels = map[string]string{LabelKey: n.label}
	}
	r.Threads = []report.Thread{th}
	setTrail(r, n)
	if err := c.emit(r); err != nil && err != errDropped {
		c.log.Error("backtrail: panic not recorded", "err", err)
	}
}

// panicFrames drops the frames above the panic site: recordPanic, finish,
// runtime.gopanic and the runtime helpers that raised the panic
// (runtime.panicIndex, runtime.sigpanic, ...).
func panicFrames(frames []Frame) []Frame {
	for i, f := range frames {
		if f.Function == "runtime.gopanic" {
			frames = frames[i+1:]
			break
		}
	}
	for len(frames) > 1 && strings.HasPrefix(frames[0].Function, "runtime.") {
		frames = frames[1:]
	}
	return frames
}

// panicValue formats a panic value as the runtime's crash output does.
func panicValue(v any) string {
	switch v := v.(type) {
	case error:
		return v.Error()
	case fmt.Stringer:
		return v.String()
	default:
		return fmt.Sprint(v)
	}
}
