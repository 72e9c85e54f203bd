package symbolize_test

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/backtrail/backtrail/demangle"
	"github.com/backtrail/backtrail/symbolize"
)

// TestFramesBatch checks that FramesBatch gives every address the frames
// Frames gives it, for every range start of a real C++ cache and the
// addresses around them, in and out of any range.
func TestFramesBatch(t *testing.T) {
	sc, _ := buildSymcache(t, filepath.Join(sentry, "linux/crash.debug"))
	tab := symbolize.NewTable(sc, demangle.LLVM)
	addrs := []uint64{0, 1 << 63}
	for s := range sc.Ranges() {
		addrs = append(addrs, s.Start-1, s.Start, s.Start+1)
	}
	frames, ends := tab.FramesBatch(addrs, nil, nil)
	if len(ends) != len(addrs) {
		t.Fatalf("%d ends for %d addresses", len(ends), len(addrs))
	}
	start, known := 0, 0
	for i, a := range addrs {
		want := tab.Frames(a, nil)
		if got := frames[start:ends[i]]; !slices.Equal(got, want) {
			t.Fatalf("FramesBatch(%#x) = %+v, Frames = %+v", a, got, want)
		}
		if len(want) > 0 {
			known++
		}
		start = ends[i]
	}
	if known < len(addrs)/2 {
		t.Fatalf("only %d of %d addresses known", known, len(addrs))
	}
}
