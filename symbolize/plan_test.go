package symbolize

import (
	"errors"
	"io"
	"path/filepath"
	"testing"

	"github.com/backtrail/backtrail/debugfile"
	"github.com/backtrail/backtrail/debugfile/dwarf"
	"github.com/backtrail/backtrail/symcache"
)

// crashSource returns the Source of a real C++ debug file (Sentry's
// crash.debug fixture), its symbol table read lazily as a build reads it.
func crashSource(t *testing.T) *Source {
	t.Helper()
	f, err := debugfile.Open(filepath.Join("..", "testdata", "sentry-symbolic", "linux", "crash.debug"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	o := f.Objects[0]
	src, err := sourceOf(o, o)
	if err != nil {
		t.Fatal(err)
	}
	return src
}

// TestBuildPlanErrors checks the errors of what a DWARF build reads beside
// the units (the symbol table, which unit owns what): the build fails with
// that error, whether units were being converted meanwhile or there are
// none, and writes nothing.
func TestBuildPlanErrors(t *testing.T) {
	boom := errors.New("symbol table unreadable")
	for _, workers := range []int{1, 2} {
		src := crashSource(t)
		src.readSymbols = func() ([]debugfile.Symbol, error) { return nil, boom }
		if err := Write(failWriter{t}, src, BuildOptions{Workers: workers}); !errors.Is(err, boom) {
			t.Errorf("%d workers, symbols fail: %v, want %v", workers, err, boom)
		}

		// Units whose abbreviations are gone: which unit owns what
		// cannot be read.
		src = crashSource(t)
		s := src.DWARF.Sections()
		s.Abbrev = nil
		var err error
		if src.DWARF, err = dwarf.New(s, false); err != nil {
			t.Fatal(err)
		}
		if err := Write(failWriter{t}, src, BuildOptions{Workers: workers}); err == nil {
			t.Errorf("%d workers, no abbreviations: no error", workers)
		}
	}

	// No units at all: the symbols alone, or their error.
	src := crashSource(t)
	d, err := dwarf.New(dwarf.Sections{}, false)
	if err != nil {
		t.Fatal(err)
	}
	src.DWARF = d
	data, err := Build(src, BuildOptions{})
	if err != nil {
		t.Fatalf("no units: %v", err)
	}
	sc, err := symcache.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	if _, funcs, _, _ := sc.Counts(); funcs == 0 {
		t.Errorf("no units: a symcache without the symbols' functions")
	}
	src.readSymbols = func() ([]debugfile.Symbol, error) { return nil, boom }
	if err := Write(failWriter{t}, src, BuildOptions{}); !errors.Is(err, boom) {
		t.Errorf("no units, symbols fail: %v, want %v", err, boom)
	}
}

// failWriter fails the test if anything is written to it.
type failWriter struct{ t *testing.T }

func (w failWriter) Write(p []byte) (int, error) {
	w.t.Errorf("%d bytes written by a build that failed", len(p))
	return 0, io.ErrShortWrite
}
