package symbolize

import (
	"testing"

	"github.com/backtrail/backtrail/debugfile/dwarf"
)

// TestExtent checks that an extent grows to cover what is added and that
// empty extents neither count nor widen one.
func TestExtent(t *testing.T) {
	var e extent
	e.add(extent{10, 10}) // empty
	if e != (extent{}) {
		t.Fatalf("after adding an empty extent: %v", e)
	}
	for _, step := range []struct{ add, want extent }{
		{extent{100, 200}, extent{100, 200}},
		{extent{300, 400}, extent{100, 400}},
		{extent{50, 60}, extent{50, 400}},
		{extent{7, 3}, extent{50, 400}}, // empty
		{extent{120, 130}, extent{50, 400}},
	} {
		e.add(step.add)
		if e != step.want {
			t.Fatalf("after adding %v: %v, want %v", step.add, e, step.want)
		}
	}
	r := unitBytes{info: extent{0, 1000}, lines: extent{40, 60}}
	if r.size() != 1020 {
		t.Errorf("size %d, want 1020", r.size())
	}
	if (unitBytes{}).size() != 0 {
		t.Error("empty unitBytes has a size")
	}
}

// TestUnitBytesSplit checks the bookkeeping of a split build's sections:
// their entries count toward the release budget, a release empties them
// but keeps the strings, which a package's units share and are gathered
// once per file, until releaseSplitStrings.
func TestUnitBytesSplit(t *testing.T) {
	pkgStr, dwoStr := []byte("shared\x00"), []byte("own\x00")
	var r unitBytes
	r.addSplit(dwarf.Sections{}) // a unit that is not split
	r.addSplit(dwarf.Sections{Info: make([]byte, 100), Str: pkgStr})
	r.addSplit(dwarf.Sections{Info: make([]byte, 50), Str: pkgStr})
	r.addSplit(dwarf.Sections{Info: make([]byte, 10), Str: dwoStr})
	if r.size() != 160 || len(r.split) != 3 || len(r.splitStrs) != 2 {
		t.Fatalf("size %d, %d split units, %d string sections; want 160, 3, 2", r.size(), len(r.split), len(r.splitStrs))
	}
	d, err := dwarf.New(dwarf.Sections{}, false)
	if err != nil {
		t.Fatal(err)
	}
	r.release(d)
	if r.size() != 0 || len(r.split) != 0 || len(r.splitStrs) != 2 {
		t.Fatalf("after release: size %d, %d split units, %d string sections; want 0, 0, 2", r.size(), len(r.split), len(r.splitStrs))
	}
	r.releaseSplitStrings()
	if len(r.splitStrs) != 0 {
		t.Fatalf("%d string sections after releaseSplitStrings", len(r.splitStrs))
	}
}
