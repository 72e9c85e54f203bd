package symcache_test

import (
	"bytes"
	"errors"
	"slices"
	"testing"

	"github.com/backtrail/backtrail/symcache"
)

// FuzzParse checks that Parse never panics, that its errors are
// FormatErrors, and that on every file it accepts, lookups over a sweep of
// addresses, parent walks and every accessor stay in bounds and agree with
// each other. Seeds are caches made by the Builder.
func FuzzParse(f *testing.F) {
	_, data := sample()
	f.Add(data)
	var buf bytes.Buffer
	b := symcache.NewBuilder(symcache.Info{Arch: "arm64"})
	b.WriteTo(&buf)
	b.Close()
	f.Add(bytes.Clone(buf.Bytes()))
	b = symcache.NewBuilder(symcache.Info{Name: "one"})
	fn := b.Function(symcache.Function{Name: "f", Entry: 0x10, DeclFile: b.File("a.c"), DeclLine: 1})
	l := b.Location(symcache.Location{File: 0, Line: 2, Function: fn, Parent: symcache.None})
	b.Range(symcache.Range{Start: 0x10, Loc: b.Location(symcache.Location{File: 0, Function: fn, Parent: l}), Line: 3})
	b.Range(symcache.Range{Start: 0x20, Loc: symcache.None})
	buf.Reset()
	b.WriteTo(&buf)
	b.Close()
	f.Add(bytes.Clone(buf.Bytes()))

	f.Fuzz(func(t *testing.T, data []byte) {
		sc, err := symcache.Parse(data)
		if err != nil {
			var fe *symcache.FormatError
			if !errors.As(err, &fe) {
				t.Fatalf("Parse error %v (%T) is no FormatError", err, err)
			}
			return
		}
		checkFile(t, sc)
	})
}

// checkFile reads everything a parsed File offers, which must stay in
// bounds whatever the bytes are (the fuzz targets build with -tags
// checked, where an out-of-range read panics): first as lookups check
// blocks on first use, then after Check. On a file Check accepts, the
// first pass must have read the same ranges, and everything must agree
// with the counts.
func checkFile(t *testing.T, sc *symcache.File) {
	lazy := readFile(t, sc, false)
	if err := sc.Check(); err != nil {
		var fe *symcache.FormatError
		if !errors.As(err, &fe) {
			t.Fatalf("Check error %v (%T) is no FormatError", err, err)
		}
		return
	}
	if checked := readFile(t, sc, true); !slices.Equal(lazy, checked) {
		t.Fatalf("ranges read before Check (%d) differ from those after it (%d)", len(lazy), len(checked))
	}
}

// readFile reads everything sc offers and returns its ranges; checked
// says that Check accepted it, so that the ranges must be as many as it
// counts.
func readFile(t *testing.T, sc *symcache.File, checked bool) []symcache.Span {
	var spans []symcache.Span
	sc.Info()
	files, funcs, locs, ranges := sc.Counts()
	if funcs != sc.NumFuncs() || ranges != sc.NumRanges() {
		t.Fatalf("Counts() = %d, %d, %d, %d; NumFuncs %d, NumRanges %d", files, funcs, locs, ranges, sc.NumFuncs(), sc.NumRanges())
	}
	for i := 0; i < funcs; i++ {
		fn := sc.Func(i)
		fn.Name()
		fn.Entry()
		fn.DeclFile()
		fn.DeclLine()
		_ = fn.Language().String()
	}
	i := 0
	for s := range sc.Ranges() {
		spans = append(spans, s)
		if s.Start >= s.End && (s.End != ^uint64(0) || s.Start != s.End) {
			t.Fatalf("range %d = [%#x, %#x)", i, s.Start, s.End)
		}
		// Lookup at a range's first and last address answers with that
		// range (the last range's end is beyond what Lookup reads).
		last := s.End - 1
		if s.End == ^uint64(0) || last < s.Start {
			last = s.Start
		}
		for _, a := range []uint64{s.Start, last} {
			if l, lok := sc.Lookup(a); lok != s.Known || lok && (l.Index() != s.Loc.Index() || l.Line() != s.Loc.Line()) {
				t.Fatalf("range %d = [%#x, %#x) %v, Lookup(%#x) = %d %v", i, s.Start, s.End, s.Known, a, l.Index(), lok)
			}
		}
		for _, a := range []uint64{s.Start - 1, s.Start + 1, s.End - 1, s.End} {
			l, lok := sc.Lookup(a)
			for depth := 0; lok; l, lok = l.Parent() {
				if depth++; depth > locs+1 {
					t.Fatalf("Lookup(%#x): parent chain longer than %d locations", a, locs)
				}
				l.File()
				l.Line()
				l.Column()
				l.Discriminator()
				if fn, ok := l.Function(); ok {
					fn.Name()
					fn.DeclFile()
				}
			}
		}
		i++
	}
	if checked && i != ranges {
		t.Fatalf("Ranges yields %d ranges, Counts says %d", i, ranges)
	}
	for _, a := range []uint64{0, 1, 1 << 32, 1<<64 - 1} {
		walk(sc, a)
	}
	checkBatch(t, sc, rangeAddrs(sc))
	return spans
}
