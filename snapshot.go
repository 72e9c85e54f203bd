package backtrail

import (
	"bufio"
	"bytes"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/backtrail/backtrail/report"
)

// Goroutine snapshots. The watchdog needs two things from other goroutines:
// the stack of one hung goroutine, and an aggregate of all of them. Go has
// no API to read another goroutine's stack, so both come from the goroutine
// profile with labels (pprof.Lookup("goroutine"), debug=1), which:
//
//   - stops the world only to mark goroutines (O(1) work plus a pass over
//     the G list that only stores a flag), then records each goroutine's
//     stack while the world runs, each one before it next executes; the
//     pause another goroutine sees stays in the tens of microseconds at 10k
//     goroutines (BenchmarkSnapshotPause), where runtime.Stack(buf, true)
//     formats every goroutine with the world stopped;
//   - aggregates identical (stack, labels) pairs, which is the snapshot;
//   - carries pprof labels, which is how the watchdog finds the hung
//     goroutine: Loop.Begin and the HTTP middleware label it.
//
// The CPU cost is that of formatting the profile, proportional to the
// number of goroutines and distinct stacks; the watchdog pays it only while
// something is near its threshold.

// goroutineGroup is one aggregated record of the goroutine profile.
type goroutineGroup struct {
	count  int
	pcs    []uintptr
	labels map[string]string
}

// goroutineProfile takes the labelled goroutine profile and parses it. buf
// is reused between calls.
func goroutineProfile(buf *bytes.Buffer) ([]goroutineGroup, error) {
	buf.Reset()
	if err := pprof.Lookup("goroutine").WriteTo(buf, 1); err != nil {
		return nil, err
	}
	return parseGoroutineProfile(buf.Bytes()), nil
}

// parseGoroutineProfile parses the debug=1 text form:
//
//	goroutine profile: total 4
//	1 @ 0x43b8ce 0x4073c5 0x46d781
//	# labels: {"backtrail.watch":"3"}
//	#	0x4c4a2e	main.main.func1+0x2e	/tmp/x.go:12
//
// It reads the addresses and labels and skips the symbolized lines; Frames
// symbolizes with the SDK's own cache.
func parseGoroutineProfile(data []byte) []goroutineGroup {
	var out []goroutineGroup
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		l := sc.Text()
		if rest, ok := strings.CutPrefix(l, "# labels: {"); ok && len(out) > 0 {
			out[len(out)-1].labels = report.ParseLabels(rest)
			continue
		}
		count, rest, ok := strings.Cut(l, " @ ")
		if !ok {
			continue
		}
		n, err := strconv.Atoi(strings.TrimSpace(count))
		if err != nil {
			continue
		}
		g := goroutineGroup{count: n}
		for _, f := range strings.Fields(rest) {
			pc, err := strconv.ParseUint(strings.TrimPrefix(f, "0x"), 16, 64)
			if err == nil {
				g.pcs = append(g.pcs, uintptr(pc))
			}
		}
		out = append(out, g)
	}
	return out
}

// snapshotReport aggregates a goroutine profile into the report form (§9),
// keeping the maxStacks most common stacks.
func snapshotReport(groups []goroutineGroup, maxStacks int, when time.Time) *report.Snapshot {
	snap := &report.Snapshot{Timestamp: when.UTC(), Stacks: []report.SnapshotStack{}}
	sorted := slices.Clone(groups)
	slices.SortStableFunc(sorted, func(a, b goroutineGroup) int { return b.count - a.count })
	for _, g := range sorted {
		snap.Total += g.count
		if len(snap.Stacks) == maxStacks {
			snap.Truncated = true
			continue
		}
		s := makeStack(g.pcs, false)
		snap.Stacks = append(snap.Stacks, report.SnapshotStack{
			Count:     g.count,
			Labels:    g.labels,
			Frames:    reportFrames(s.Frames()),
			Truncated: s.truncated,
		})
	}
	return snap
}
