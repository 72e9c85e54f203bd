package demangle_test

import (
	"testing"

	"github.com/backtrail/backtrail/demangle"
)

// TestItaniumFastPath checks the fast C++ demangler against the complete
// one over every name of the lists: wherever the fast path takes a name,
// it must write what the complete demangler writes, in each style. It also
// bounds the share of names that the fast path declines.
func TestItaniumFastPath(t *testing.T) {
	// minCoverage is the share of each list's names that the fast path
	// must take, by style.
	minCoverage := map[demangle.Style]float64{demangle.LLVM: 0.95, demangle.Short: 0.95, demangle.Full: 0.95}
	for _, l := range cxxLists {
		names := readList(t, l.file)
		for _, style := range []demangle.Style{demangle.LLVM, demangle.Short, demangle.Full} {
			taken, wrong := 0, 0
			for _, name := range names {
				fast, ok := demangle.FastItanium(name, style)
				if !ok {
					continue
				}
				taken++
				if slow := demangle.SlowItanium(name, style); fast != slow {
					wrong++
					if wrong <= 10 {
						t.Errorf("%s %v %q:\n fast %q\n slow %q", l.file, style, name, fast, slow)
					}
				}
			}
			if wrong > 10 {
				t.Errorf("%s %v: %d more differences", l.file, style, wrong-10)
			}
			cov := float64(taken) / float64(len(names))
			t.Logf("%s %v: the fast path takes %d of %d names (%.1f%%)", l.file, style, taken, len(names), 100*cov)
			if l.make != nil && cov < minCoverage[style] {
				t.Errorf("%s %v: the fast path takes %.1f%% of the names, want at least %.0f%%", l.file, style, 100*cov, 100*minCoverage[style])
			}
		}
	}
}
