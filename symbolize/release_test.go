package symbolize

import "testing"

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
