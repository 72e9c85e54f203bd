package demangle_test

import (
	"testing"

	"github.com/backtrail/backtrail/demangle"
)

// fallbackBugs are the names of the lists that the complete demangler
// writes differently from its peer, and the fast path as the peer does
// (TestCxxPeers checks them with the peer, through Demangle).
var fallbackBugs = []struct {
	name  string
	style demangle.Style
	why   string
}{
	{"_Z1fPFPFvvEiE", demangle.LLVM, "LLVM 14 writes a space after the '*' of a pointer to a function returning one: \"void (* (*)(int))()\""},
	{"_ZNK1AcvM1BiEv", demangle.LLVM, "the fallback's \"::* (\" rule also fires on a conversion to a pointer to data member"},
}

// TestItaniumFastPath checks the fast C++ demangler against the complete
// one over every name of the lists: wherever the fast path takes a name,
// it must write what the complete demangler writes, in each style, but for
// fallbackBugs. It also bounds the share of names that the fast path
// declines.
func TestItaniumFastPath(t *testing.T) {
	isBug := func(name string, style demangle.Style) bool {
		for _, b := range fallbackBugs {
			if b.name == name && b.style == style {
				return true
			}
		}
		return false
	}
	for _, b := range fallbackBugs {
		fast, ok := demangle.FastItanium(b.name, b.style)
		if slow := demangle.SlowItanium(b.name, b.style); !ok || fast == slow {
			t.Errorf("fallbackBugs: %q (%v) is no longer written differently by both paths: fast %q, %v; slow %q",
				b.name, b.style, fast, ok, slow)
		}
	}
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
				if slow := demangle.SlowItanium(name, style); fast != slow && !isBug(name, style) {
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
