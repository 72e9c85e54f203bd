package pclntab_test

import (
	"testing"

	"github.com/backtrail/backtrail/debugfile/pclntab"
)

// lookupPCs returns the middle PC of every row of every function: the
// workload shared by TestNoAllocs and BenchmarkLookup.
func lookupPCs(tab *pclntab.Table) []uint64 {
	var pcs []uint64
	for i := range tab.NumFuncs() {
		for r := range tab.Rows(i) {
			pcs = append(pcs, r.Start+(r.End-r.Start)/2)
		}
	}
	return pcs
}

// TestNoAllocs holds Lookup, Func, Rows and InlineNode to their promise of
// not allocating once the table is warm.
func TestNoAllocs(t *testing.T) {
	if testing.CoverMode() != "" {
		t.Skip("coverage instrumentation allocates")
	}
	tab, _ := fixtureTable(t, "linux-amd64-stripped")
	pcs := lookupPCs(tab)
	frames := make([]pclntab.Frame, 0, 64)
	inlined := 0
	for _, pc := range pcs {
		frames, _ = tab.Lookup(pc, frames[:0])
		if len(frames) > 1 {
			inlined++
		}
	}
	if inlined < 1000 {
		t.Fatalf("only %d of %d PCs in inlined code", inlined, len(pcs))
	}
	if n := testing.AllocsPerRun(5, func() {
		for _, pc := range pcs {
			frames, _ = tab.Lookup(pc, frames[:0])
		}
	}); n != 0 {
		t.Errorf("Lookup: %v allocations for %d PCs", n, len(pcs))
	}
	if n := testing.AllocsPerRun(5, func() {
		for i := range tab.NumFuncs() {
			_ = tab.Func(i)
			for r := range tab.Rows(i) {
				if r.InlIndex >= 0 {
					tab.InlineNode(i, r.InlIndex)
				}
			}
		}
	}); n != 0 {
		t.Errorf("Func, Rows, InlineNode: %v allocations for %d functions", n, tab.NumFuncs())
	}
}

// BenchmarkLookup looks up a PC from every row of the stripped fixture in
// turn, about a third of them in inlined code.
func BenchmarkLookup(b *testing.B) {
	tab, _ := fixtureTable(b, "linux-amd64-stripped")
	pcs := lookupPCs(tab)
	frames := make([]pclntab.Frame, 0, 64)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		frames, _ = tab.Lookup(pcs[i], frames[:0])
		if i++; i == len(pcs) {
			i = 0
		}
	}
}

// BenchmarkRows walks the rows of every function, as an index builder does;
// one op is the whole table.
func BenchmarkRows(b *testing.B) {
	tab, _ := fixtureTable(b, "linux-amd64-stripped")
	b.ReportAllocs()
	for b.Loop() {
		for i := range tab.NumFuncs() {
			for range tab.Rows(i) {
			}
		}
	}
}

// BenchmarkParse parses the stripped fixture's table with moduledata search.
func BenchmarkParse(b *testing.B) {
	_, im := fixtureTable(b, "linux-amd64-stripped")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := pclntab.Parse(im.pcln, pclntab.Options{Addr: im.addr, Memory: im.mem}); err != nil {
			b.Fatal(err)
		}
	}
}
