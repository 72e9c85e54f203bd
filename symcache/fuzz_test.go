package symcache_test

import (
	"bytes"
	"errors"
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
	symcache.NewBuilder(symcache.Info{Arch: "arm64"}).WriteTo(&buf)
	f.Add(bytes.Clone(buf.Bytes()))
	b := symcache.NewBuilder(symcache.Info{Name: "one"})
	fn := b.Function(symcache.Function{Name: "f", Entry: 0x10, DeclFile: b.File("a.c"), DeclLine: 1})
	l := b.Location(symcache.Location{File: 0, Line: 2, Function: fn, Parent: symcache.None})
	b.Range(0x10, b.Location(symcache.Location{File: 0, Line: 3, Function: fn, Parent: l}))
	b.Range(0x20, symcache.None)
	buf.Reset()
	b.WriteTo(&buf)
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

// checkFile reads everything a parsed File offers.
func checkFile(t *testing.T, sc *symcache.File) {
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
	for i := 0; i < ranges; i++ {
		start, end, loc, ok := sc.Range(i)
		if start >= end && (i < ranges-1 || start != end) {
			t.Fatalf("Range(%d) = [%#x, %#x)", i, start, end)
		}
		// Lookup at a range's start answers with that range.
		if l, lok := sc.Lookup(start); lok != ok || ok && l.Index() != loc.Index() {
			t.Fatalf("Range(%d) = %#x %d %v, Lookup(start) = %d %v", i, start, loc.Index(), ok, l.Index(), lok)
		}
		for _, a := range []uint64{start - 1, start + 1, end - 1, end} {
			l, lok := sc.Lookup(a)
			for depth := 0; lok; l, lok = l.Parent() {
				if depth++; depth > locs {
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
	}
	for _, a := range []uint64{0, 1, 1 << 32, 1<<64 - 1} {
		walk(sc, a)
	}
}
