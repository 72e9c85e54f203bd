package backtrail

import (
	"fmt"

	"github.com/backtrail/backtrail/report"
)

// reportFrames converts symbolized frames to the report format (§4 of
// docs/report-format.md): addresses plus symbolized fields.
func reportFrames(frames []Frame) []report.Frame {
	out := make([]report.Frame, len(frames))
	for i, f := range frames {
		out[i] = report.Frame{
			Addr:     report.Addr(f.PC),
			Function: f.Function,
			File:     f.File,
			Line:     f.Line,
			Inlined:  f.Inlined,
			InApp:    f.InApp,
		}
	}
	return out
}

// reportTrail converts a trail node chain to report hops, innermost first
// (§6).
func reportTrail(n *trailNode) (hops []report.Hop, truncated bool) {
	if n != nil {
		truncated = n.truncated
	}
	for ; n != nil; n = n.parent {
		s := n.stack.stack()
		frames := reportFrames(s.Frames())
		h := report.Hop{Hash: fmt.Sprintf("%016x", s.hash), Frames: frames, Truncated: s.truncated}
		if len(frames) > 0 {
			site := frames[0]
			h.Site = &site
		}
		hops = append(hops, h)
	}
	return hops, truncated
}

// setTrail fills r's trail from n.
func setTrail(r *report.Report, n *trailNode) {
	hops, truncated := reportTrail(n)
	r.Trail = hops
	if truncated {
		if r.Truncated == nil {
			r.Truncated = &report.Truncated{}
		}
		r.Truncated.Trail = true
	}
}
