package symbolize_test

import (
	"slices"
	"testing"

	"github.com/backtrail/backtrail/debugfile"
	"github.com/backtrail/backtrail/internal/fixture"
	"github.com/backtrail/backtrail/symbolize"
	"github.com/backtrail/backtrail/symcache"
)

// TestLazyBatch checks that a lazy module answers a batch of addresses
// spread over many units, whose units it converts in parallel first, as
// it answers them one at a time and as the full build does.
func TestLazyBatch(t *testing.T) {
	b := fixture.Build(t, fixture.Spec{Lang: "cxx", Compiler: "clang", Opt: 2, DWARF: 5})
	f, err := debugfile.Open(b.DWARFPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	data, err := symbolize.BuildObject(f.Objects[0], f.Objects[0], symbolize.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sc, err := symcache.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	var addrs []uint64
	for s := range sc.Ranges() {
		addrs = append(addrs, s.Start)
	}
	if len(addrs) < 100 {
		t.Fatalf("only %d ranges", len(addrs))
	}

	open := func(lazy bool) *symbolize.Module {
		m, err := symbolize.Open(b.DWARFPath, symbolize.Options{Lazy: lazy})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { m.Close() })
		return m
	}
	split := func(frames []symbolize.Frame, ends []int) [][]symbolize.Frame {
		var out [][]symbolize.Frame
		for i, end := range ends {
			start := 0
			if i > 0 {
				start = ends[i-1]
			}
			out = append(out, frames[start:end])
		}
		return out
	}
	full, ends, err := open(false).FramesBatch(addrs, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := split(full, ends)
	batched, ends, err := open(true).FramesBatch(addrs, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := split(batched, ends)
	one := open(true)
	for i, a := range addrs {
		single, err := one.Frames(a, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got[i], want[i]) || !slices.Equal(single, want[i]) {
			t.Fatalf("%#x: lazy batch %v, lazy one at a time %v, full build %v", a, got[i], single, want[i])
		}
	}
}
