package symbolize_test

import (
	"debug/elf"
	"encoding/binary"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/backtrail/backtrail/debugfile"
	"github.com/backtrail/backtrail/internal/fixture"
	"github.com/backtrail/backtrail/symbolize"
	"github.com/backtrail/backtrail/symcache"
)

// lazyFixture builds the C++ fixture and returns its debug file and the
// start of every range its full build knows: addresses spread over all
// its units.
func lazyFixture(t *testing.T) (path string, addrs []uint64) {
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
	for s := range sc.Ranges() {
		addrs = append(addrs, s.Start)
	}
	if len(addrs) < 100 {
		t.Fatalf("only %d ranges", len(addrs))
	}
	return b.DWARFPath, addrs
}

// openModule opens path, lazily or built whole, until the test ends.
func openModule(t *testing.T, path string, lazy bool) *symbolize.Module {
	m, err := symbolize.Open(path, symbolize.Options{Lazy: lazy})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

// perAddress splits FramesBatch's frames into each address's.
func perAddress(frames []symbolize.Frame, ends []int) [][]symbolize.Frame {
	var out [][]symbolize.Frame
	start := 0
	for _, end := range ends {
		out = append(out, frames[start:end])
		start = end
	}
	return out
}

// TestLazyBatch checks that a lazy module answers a batch of addresses
// spread over many units, whose units it converts in parallel first, as
// it answers them one at a time and as the full build does.
func TestLazyBatch(t *testing.T) {
	path, addrs := lazyFixture(t)
	full, ends, err := openModule(t, path, false).FramesBatch(addrs, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := perAddress(full, ends)
	batched, ends, err := openModule(t, path, true).FramesBatch(addrs, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := perAddress(batched, ends)
	one := openModule(t, path, true)
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

// TestLazyBatchBrokenUnit checks the batch path where a unit fails to
// convert: its line program's version is corrupt. The batch answers what
// the other units know, names the error, and gives the same frames as
// answering one address at a time.
func TestLazyBatchBrokenUnit(t *testing.T) {
	good, addrs := lazyFixture(t)
	data, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	ef, err := elf.Open(good)
	if err != nil {
		t.Fatal(err)
	}
	line := ef.Section(".debug_line")
	ef.Close()
	if line == nil {
		t.Fatal("no .debug_line")
	}
	// The second line program starts after the first's unit_length and
	// length; its version follows its own unit_length.
	off := line.Offset
	off += 4 + uint64(binary.LittleEndian.Uint32(data[off:]))
	binary.LittleEndian.PutUint16(data[off+4:], 99)
	path := filepath.Join(t.TempDir(), "broken")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}

	frames, ends, batchErr := openModule(t, path, true).FramesBatch(addrs, nil, nil)
	if batchErr == nil {
		t.Fatal("FramesBatch over a unit with a corrupt line program: no error")
	}
	got := perAddress(frames, ends)
	one := openModule(t, path, true)
	answered, failed := 0, 0
	for i, a := range addrs {
		single, err := one.Frames(a, nil)
		if err != nil {
			failed++
		} else if len(single) > 0 {
			answered++
		}
		if !slices.Equal(got[i], single) {
			t.Fatalf("%#x: batch %v, one at a time %v (%v)", a, got[i], single, err)
		}
	}
	if failed == 0 || answered == 0 {
		t.Errorf("%d addresses answered, %d failed; want both: one unit broken, the others sound", answered, failed)
	}
	t.Logf("%d addresses answered, %d in the broken unit; batch error: %v", answered, failed, batchErr)
}
