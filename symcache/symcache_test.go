package symcache_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/backtrail/backtrail/symcache"
)

var testInfo = symcache.Info{
	DebugID:  [16]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16},
	DebugAge: 7,
	CodeID:   "f1c3bcc0279865fe3058404b2831d9e64135386c",
	Arch:     "x86_64",
	Name:     "crash",
	Producer: "GNU C17 12.2.0",
	Language: symcache.LangCPlusPlus,
}

// frame is one source location with everything the reader shows of it.
type frame struct {
	File     string
	Line     uint32
	Column   uint32
	Discr    uint32
	Function string
	FuncIdx  uint32
}

// cacheSpec is what a test adds to a Builder, and its model of the result.
type cacheSpec struct {
	b         *symcache.Builder
	fileNames map[uint32]string  // file index → path
	frames    map[uint32][]frame // location index → its frame and its parents'
	ranges    []rangeAdd         // in the order added
}

type rangeAdd struct {
	start uint64
	loc   uint32
}

func (c *cacheSpec) loc(l symcache.Location, fn string) uint32 {
	i := c.b.Location(l)
	f := frame{Line: l.Line, Column: min(l.Column, 0xffff), Discr: min(l.Discriminator, 0xffff), Function: fn, FuncIdx: l.Function}
	if l.File != symcache.None {
		f.File = c.fileNames[l.File]
	}
	chain := []frame{f}
	if l.Parent != symcache.None {
		chain = append(chain, c.frames[l.Parent]...)
	}
	c.frames[i] = chain
	return i
}

func (c *cacheSpec) rng(start uint64, loc uint32) {
	c.b.Range(start, loc)
	c.ranges = append(c.ranges, rangeAdd{start, loc})
}

// want is the model of Lookup: the range with the greatest start at or
// below addr (the last added among equal starts) gives the location.
func (c *cacheSpec) want(addr uint64) (uint32, bool) {
	best, found := rangeAdd{}, false
	for _, r := range c.ranges {
		if r.start <= addr && (!found || r.start >= best.start) {
			best, found = r, true
		}
	}
	if !found || best.loc == symcache.None {
		return 0, false
	}
	return best.loc, true
}

// sample builds the cache most tests use: files and functions with
// duplicates, an inline chain three deep, clamped columns, ranges added
// out of order with gaps, duplicates and equal starts.
func sample() (*cacheSpec, []byte) {
	c := &cacheSpec{b: symcache.NewBuilder(testInfo), fileNames: map[uint32]string{}, frames: map[uint32][]frame{}}
	for _, p := range []string{"/src/main.c", "/src/inline.h", "/src/main.c", "/usr/include/stdio.h"} {
		c.fileNames[c.b.File(p)] = p
	}
	fa, fb := c.b.File("/src/main.c"), c.b.File("/src/inline.h")
	main := c.b.Function(symcache.Function{Name: "main", Entry: 0x1000, DeclFile: fa, DeclLine: 10, Language: symcache.LangC})
	helper := c.b.Function(symcache.Function{Name: "_Z6helperi", Entry: symcache.NoAddr, DeclFile: fb, DeclLine: 3, Language: symcache.LangCPlusPlus})
	leaf := c.b.Function(symcache.Function{Name: "leaf", Entry: 0x1800, DeclFile: symcache.None, Language: symcache.LangRust})
	if again := c.b.Function(symcache.Function{Name: "main", Entry: 0x1000, DeclFile: fa, DeclLine: 10, Language: symcache.LangC}); again != main {
		panic("function not deduplicated")
	}

	l0 := c.loc(symcache.Location{File: fa, Line: 12, Column: 3, Function: main, Parent: symcache.None}, "main")
	l1 := c.loc(symcache.Location{File: fb, Line: 5, Column: 70000, Discriminator: 70000, Function: helper, Parent: l0}, "_Z6helperi")
	l2 := c.loc(symcache.Location{File: fb, Line: 6, Column: 1, Discriminator: 2, Function: leaf, Parent: l1}, "leaf")
	l3 := c.loc(symcache.Location{File: symcache.None, Line: 0, Function: symcache.None, Parent: symcache.None}, "")
	l4 := c.loc(symcache.Location{File: fa, Line: 20, Function: main, Parent: symcache.None}, "main")

	c.rng(0x1040, l0) // out of order
	c.rng(0x1000, l0)
	c.rng(0x0f00, symcache.None) // leading unknown: dropped
	c.rng(0x1010, l2)
	c.rng(0x1018, l1)
	c.rng(0x1020, symcache.None) // a gap
	c.rng(0x1030, l3)
	c.rng(0x1040, l3) // equal start: added last, wins, and continues 0x1030
	c.rng(0x1050, l4)
	c.rng(0x1050, l4) // a duplicate
	c.rng(0x1058, l4) // repeats its predecessor
	c.rng(0x1060, l0)
	c.rng(0x1060, l2)
	c.rng(0x1060, l0) // the last of three at one start
	c.rng(0x1070, symcache.None)
	var buf bytes.Buffer
	if _, err := c.b.WriteTo(&buf); err != nil {
		panic(err)
	}
	return c, buf.Bytes()
}

func mustParse(t testing.TB, data []byte) *symcache.File {
	t.Helper()
	f, err := symcache.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// chain returns the frames of loc and its parents, innermost first.
func chain(t testing.TB, loc symcache.Loc) []frame {
	var out []frame
	for depth := 0; ; depth++ {
		if depth > 1000 {
			t.Fatalf("parent chain does not end")
		}
		f := frame{File: loc.File(), Line: loc.Line(), Column: loc.Column(), Discr: loc.Discriminator(), FuncIdx: loc.FunctionIndex()}
		if fn, ok := loc.Function(); ok {
			f.Function = fn.Name()
			if fn.Index() != f.FuncIdx {
				t.Errorf("Function().Index() = %d, FunctionIndex() = %d", fn.Index(), f.FuncIdx)
			}
		} else if f.FuncIdx != symcache.None {
			t.Errorf("FunctionIndex %d but no Function", f.FuncIdx)
		}
		out = append(out, f)
		p, ok := loc.Parent()
		if !ok {
			return out
		}
		if p.Index() >= loc.Index() {
			t.Fatalf("parent %d of location %d not before it", p.Index(), loc.Index())
		}
		loc = p
	}
}

func TestRoundTrip(t *testing.T) {
	c, data := sample()
	f := mustParse(t, data)
	if !symcache.IsSymcache(data) || symcache.IsSymcache(data[:3]) || symcache.IsSymcache([]byte("ELF\x7f")) {
		t.Errorf("IsSymcache wrong")
	}
	if got := f.Info(); got != testInfo {
		t.Errorf("Info() = %+v, want %+v", got, testInfo)
	}
	files, funcs, locs, ranges := f.Counts()
	if files != 3 || funcs != 3 || locs != len(c.frames) || ranges != f.NumRanges() || funcs != f.NumFuncs() {
		t.Errorf("Counts() = %d, %d, %d, %d; want 3, 3, %d, NumRanges %d", files, funcs, locs, ranges, len(c.frames), f.NumRanges())
	}
	if f.Size() != len(data) {
		t.Errorf("Size() = %d, want %d", f.Size(), len(data))
	}

	// Every boundary of every range added: start−1, start, end−1, end
	// (end being the next start), and far outside.
	addrs := []uint64{0, 0xfff, 0x1000 + 1<<32, 1<<64 - 1}
	for _, r := range c.ranges {
		for _, d := range []uint64{^uint64(0), 0, 1} {
			addrs = append(addrs, r.start+d)
		}
	}
	for _, a := range addrs {
		wantLoc, wantOK := c.want(a)
		loc, ok := f.Lookup(a)
		if ok != wantOK || ok && loc.Index() != wantLoc {
			t.Errorf("Lookup(%#x) = %d, %v; want %d, %v", a, loc.Index(), ok, wantLoc, wantOK)
			continue
		}
		if ok {
			if have, want := chain(t, loc), c.frames[wantLoc]; !slices.Equal(have, want) {
				t.Errorf("Lookup(%#x) frames:\nhave %+v\nwant %+v", a, have, want)
			}
		}
	}

	// Range(i) agrees with Lookup and the ranges are merged: neighbours
	// differ in location, and none starts unknown.
	for i := 0; i < f.NumRanges(); i++ {
		start, end, loc, ok := f.Range(i)
		if start >= end {
			t.Errorf("Range(%d) = [%#x, %#x)", i, start, end)
		}
		for _, a := range []uint64{start, end - 1} {
			if a-start > 0xffffffff {
				continue
			}
			l, lok := f.Lookup(a)
			if lok != ok || ok && l.Index() != loc.Index() {
				t.Errorf("Range(%d) = %#x..%#x %d %v, Lookup(%#x) = %d %v", i, start, end, loc.Index(), ok, a, l.Index(), lok)
			}
		}
		if i > 0 {
			_, _, prev, pok := f.Range(i - 1)
			if pok == ok && (!ok || prev.Index() == loc.Index()) {
				t.Errorf("Range(%d) repeats Range(%d)", i, i-1)
			}
		}
	}
	if _, _, _, ok := f.Range(0); !ok {
		t.Errorf("first range is unknown")
	}

	// Functions as added.
	type fnRec struct {
		Name     string
		Entry    uint64
		HasEntry bool
		DeclFile string
		DeclLine uint32
		Lang     symcache.Language
	}
	want := []fnRec{
		{"main", 0x1000, true, "/src/main.c", 10, symcache.LangC},
		{"_Z6helperi", 0, false, "/src/inline.h", 3, symcache.LangCPlusPlus},
		{"leaf", 0x1800, true, "", 0, symcache.LangRust},
	}
	for i, w := range want {
		fn := f.Func(i)
		e, ok := fn.Entry()
		have := fnRec{fn.Name(), e, ok, fn.DeclFile(), fn.DeclLine(), fn.Language()}
		if have != w || fn.Index() != uint32(i) {
			t.Errorf("Func(%d) = %+v (index %d), want %+v", i, have, fn.Index(), w)
		}
	}
	if s := symcache.LangRust.String(); s != "rust" {
		t.Errorf("LangRust.String() = %q", s)
	}
	if s := symcache.Language(200).String(); s != "unknown" {
		t.Errorf("Language(200).String() = %q", s)
	}

	// Misaligned input is copied, not misread.
	odd := make([]byte, len(data)+1)
	copy(odd[1:], data)
	g := mustParse(t, odd[1:])
	for _, a := range addrs {
		l1, ok1 := f.Lookup(a)
		l2, ok2 := g.Lookup(a)
		if ok1 != ok2 || ok1 && !slices.Equal(chain(t, l1), chain(t, l2)) {
			t.Errorf("misaligned copy: Lookup(%#x) differs", a)
		}
	}
}

func TestOpen(t *testing.T) {
	_, data := sample()
	dir := t.TempDir()
	path := filepath.Join(dir, "a.symcache")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := symcache.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if loc, ok := f.Lookup(0x1012); !ok || loc.Line() != 6 {
		t.Errorf("Lookup(0x1012) = line %d, %v; want 6", loc.Line(), ok)
	}
	if err := f.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if err := mustParse(t, data).Close(); err != nil {
		t.Errorf("Close of a parsed File: %v", err)
	}

	for name, content := range map[string][]byte{"empty": nil, "bad": []byte("not a symcache at all"), "short": data[:100]} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, content, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := symcache.Open(p); err == nil || !strings.Contains(err.Error(), p) {
			t.Errorf("Open(%s) = %v, want an error naming the file", name, err)
		}
	}
	if _, err := symcache.Open(filepath.Join(dir, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Open(missing) = %v", err)
	}
}

func TestEmpty(t *testing.T) {
	var buf bytes.Buffer
	if _, err := symcache.NewBuilder(symcache.Info{}).WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	f := mustParse(t, buf.Bytes())
	for _, a := range []uint64{0, 1, 1 << 40, 1<<64 - 1} {
		if _, ok := f.Lookup(a); ok {
			t.Errorf("Lookup(%#x) found something in an empty cache", a)
		}
	}
	if files, funcs, locs, ranges := f.Counts(); files+funcs+locs+ranges != 0 {
		t.Errorf("Counts() = %d, %d, %d, %d", files, funcs, locs, ranges)
	}
	if info := f.Info(); info != (symcache.Info{}) {
		t.Errorf("Info() = %+v", info)
	}
}

func TestTooLarge(t *testing.T) {
	b := symcache.NewBuilder(symcache.Info{})
	l := b.Location(symcache.Location{File: symcache.None, Function: symcache.None, Parent: symcache.None})
	b.Range(0x1000, l)
	b.Range(0x1000+1<<32, symcache.None)
	if _, err := b.WriteTo(&bytes.Buffer{}); !errors.Is(err, symcache.ErrTooLarge) {
		t.Errorf("WriteTo over 4 GiB = %v, want ErrTooLarge", err)
	}
	// Just under the limit is fine, and the address at the limit's edge
	// is the last one the cache answers for.
	b = symcache.NewBuilder(symcache.Info{})
	l = b.Location(symcache.Location{File: symcache.None, Function: symcache.None, Parent: symcache.None, Line: 9})
	b.Range(0x1000, l)
	b.Range(0x1000+1<<32-1, l) // same location: merged away
	var buf bytes.Buffer
	if _, err := b.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	f := mustParse(t, buf.Bytes())
	for _, tt := range []struct {
		addr uint64
		ok   bool
	}{{0xfff, false}, {0x1000, true}, {0x1000 + 1<<32 - 1, true}, {0x1000 + 1<<32, false}} {
		if _, ok := f.Lookup(tt.addr); ok != tt.ok {
			t.Errorf("Lookup(%#x) = %v, want %v", tt.addr, ok, tt.ok)
		}
	}
}

// layout computes table offsets from the counts as docs/symcache.md §1
// specifies, independently of the package.
type layout struct{ files, funcs, locs, starts, rlocs, strs uint64 }

func specLayout(nFiles, nFuncs, nLocs, nRanges uint64) layout {
	align := func(n uint64) uint64 { return (n + 7) &^ 7 }
	var l layout
	l.files = 128
	l.funcs = align(l.files + 8*nFiles)
	l.locs = align(l.funcs + 24*nFuncs)
	l.starts = align(l.locs + 20*nLocs)
	l.rlocs = align(l.starts + 4*nRanges)
	l.strs = align(l.rlocs + 4*nRanges)
	return l
}

func TestParseErrors(t *testing.T) {
	_, data := sample()
	f := mustParse(t, data)
	nFiles, nFuncs, nLocs, nRanges := f.Counts()
	lay := specLayout(uint64(nFiles), uint64(nFuncs), uint64(nLocs), uint64(nRanges))
	le := func(b []byte, off uint64, v uint32) {
		b[off], b[off+1], b[off+2], b[off+3] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24)
	}
	strsLen := uint32(len(data)) - uint32(lay.strs)
	for _, tt := range []struct {
		name     string
		corrupt  func(b []byte)
		off      uint64
		sentinel error
	}{
		{"magic", func(b []byte) { b[0] = 'X' }, 0, symcache.ErrMagic},
		{"version", func(b []byte) { le(b, 4, 2) }, 4, symcache.ErrVersion},
		{"header size", func(b []byte) { le(b, 8, 64) }, 8, nil},
		{"string table offset", func(b []byte) { le(b, 96, uint32(lay.strs)+8) }, 96, nil},
		{"string table length", func(b []byte) { le(b, 104, strsLen+1) }, 104, nil},
		{"file count", func(b []byte) { le(b, 80, uint32(nFiles+1)) }, 96, nil},
		{"arch string", func(b []byte) { le(b, 48, strsLen) }, 48, nil},
		{"code id string", func(b []byte) { le(b, 60, strsLen+1) }, 56, nil},
		{"name string", func(b []byte) { le(b, 64, 0xffffffff) }, 64, nil},
		{"producer string", func(b []byte) { le(b, 76, 0xffffffff) }, 72, nil},
		{"file 1 path", func(b []byte) { le(b, lay.files+8+4, strsLen+1) }, lay.files + 8, nil},
		{"function 2 name", func(b []byte) { le(b, lay.funcs+2*24, strsLen+1) }, lay.funcs + 2*24, nil},
		{"function 1 decl file", func(b []byte) { le(b, lay.funcs+24+12, uint32(nFiles)) }, lay.funcs + 24 + 12, nil},
		{"location 3 file", func(b []byte) { le(b, lay.locs+3*20, uint32(nFiles)) }, lay.locs + 3*20, nil},
		{"location 0 function", func(b []byte) { le(b, lay.locs+8, uint32(nFuncs)) }, lay.locs + 8, nil},
		{"location 2 parent is itself", func(b []byte) { le(b, lay.locs+2*20+12, 2) }, lay.locs + 2*20 + 12, nil},
		{"location 1 parent after it", func(b []byte) { le(b, lay.locs+20+12, 4) }, lay.locs + 20 + 12, nil},
		{"range 2 start not above range 1", func(b []byte) { copy(b[lay.starts+8:lay.starts+12], b[lay.starts+4:lay.starts+8]) }, lay.starts + 8, nil},
		{"range 1 location", func(b []byte) { le(b, lay.rlocs+4, uint32(nLocs)) }, lay.rlocs + 4, nil},
		{"address base overflows", func(b []byte) { le(b, 40, 0xffffffff); le(b, 44, 0xffffffff) }, 40, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b := bytes.Clone(data)
			tt.corrupt(b)
			_, err := symcache.Parse(b)
			var fe *symcache.FormatError
			if !errors.As(err, &fe) {
				t.Fatalf("Parse = %v, want a FormatError", err)
			}
			if fe.Off != tt.off || !errors.Is(err, tt.sentinel) && tt.sentinel != nil || tt.sentinel == nil && fe.Err != nil {
				t.Errorf("Parse = %v (offset %#x, sentinel %v), want offset %#x, sentinel %v", err, fe.Off, fe.Err, tt.off, tt.sentinel)
			}
			if !strings.Contains(err.Error(), fmt.Sprintf("at offset %#x", tt.off)) {
				t.Errorf("error %q does not say the offset %#x", err, tt.off)
			}
		})
	}
}

// TestTruncated parses every prefix of a valid cache: each is an error,
// and none panics.
func TestTruncated(t *testing.T) {
	_, data := sample()
	for n := 0; n < len(data); n++ {
		_, err := symcache.Parse(data[:n])
		var fe *symcache.FormatError
		if !errors.As(err, &fe) {
			t.Fatalf("Parse(first %d of %d bytes) = %v, want a FormatError", n, len(data), err)
		}
		if n < 4 && !errors.Is(err, symcache.ErrMagic) {
			t.Errorf("Parse(first %d bytes) = %v, want ErrMagic", n, err)
		}
	}
}

// walk looks up addr and visits its whole inline chain, the work of one
// symbolication. TestLookupNoAllocs and BenchmarkLookup share it.
func walk(f *symcache.File, addr uint64) (n int) {
	loc, ok := f.Lookup(addr)
	for ok {
		n += len(loc.File()) + int(loc.Line())
		if fn, ok := loc.Function(); ok {
			n += len(fn.Name())
		}
		loc, ok = loc.Parent()
	}
	return n
}

func TestLookupNoAllocs(t *testing.T) {
	c, data := sample()
	f := mustParse(t, data)
	var addrs []uint64
	for _, r := range c.ranges {
		addrs = append(addrs, r.start-1, r.start, r.start+1)
	}
	sum := 0
	if n := testing.AllocsPerRun(100, func() {
		for _, a := range addrs {
			sum += walk(f, a)
		}
	}); n != 0 {
		t.Errorf("Lookup and walking parents allocate %v times per run", n)
	}
	if sum == 0 {
		t.Errorf("walked nothing")
	}
}
