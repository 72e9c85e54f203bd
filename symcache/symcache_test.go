package symcache_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
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
	fileNames map[uint32]string   // file index → path
	funcNames map[uint32]string   // function index → name
	locs      []symcache.Location // as added
	ranges    []symcache.Range    // in the order added
}

func (c *cacheSpec) file(p string) uint32 {
	i := c.b.File(p)
	c.fileNames[i] = p
	return i
}

func (c *cacheSpec) fn(f symcache.Function) uint32 {
	i := c.b.Function(f)
	c.funcNames[i] = f.Name
	return i
}

func (c *cacheSpec) loc(l symcache.Location) uint32 {
	c.locs = append(c.locs, l)
	return c.b.Location(l)
}

func (c *cacheSpec) rng(r symcache.Range) {
	c.b.Range(r)
	c.ranges = append(c.ranges, r)
}

// frame returns the frame location i shows with the given line, column and
// discriminator.
func (c *cacheSpec) frame(i, line, col, discr uint32) frame {
	l := c.locs[i]
	f := frame{Line: line, Column: col, Discr: discr, FuncIdx: l.Function}
	if l.File != symcache.None {
		f.File = c.fileNames[l.File]
	}
	if l.Function != symcache.None {
		f.Function = c.funcNames[l.Function]
	}
	return f
}

// want is the model of Lookup: the range with the greatest start at or
// below addr gives the frames (a known range wins over an unknown one at
// the same start: that is an unknown end the next run makes redundant).
func (c *cacheSpec) want(addr uint64) ([]frame, bool) {
	base := ^uint64(0)
	for _, r := range c.ranges {
		if r.Loc != symcache.None {
			base = min(base, r.Start)
		}
	}
	if addr < base || addr-base > 0xffffffff {
		return nil, false
	}
	best, found := symcache.Range{}, false
	for _, r := range c.ranges {
		if r.Start <= addr && (!found || r.Start > best.Start || r.Start == best.Start && r.Loc != symcache.None) {
			best, found = r, true
		}
	}
	if !found || best.Loc == symcache.None {
		return nil, false
	}
	frames := []frame{c.frame(best.Loc, best.Line, best.Column, best.Discriminator)}
	for p := c.locs[best.Loc].Parent; p != symcache.None; p = c.locs[p].Parent {
		l := c.locs[p]
		frames = append(frames, c.frame(p, l.Line, l.Column, l.Discriminator))
	}
	return frames, true
}

// sample builds the cache most tests use: files and functions with
// duplicates, an inline chain three deep, columns and lines beyond 16 bits,
// runs added out of address order, runs of several blocks, unknown ends
// that the next run makes redundant, that fit their last block and that
// do not, neighbours that merge, and a last range without an end.
func sample() (*cacheSpec, []byte) {
	c := &cacheSpec{b: symcache.NewBuilder(testInfo), fileNames: map[uint32]string{}, funcNames: map[uint32]string{}}
	defer c.b.Close()
	// A long path first puts the function names at offsets that leave
	// room in their field for a corrupt one (TestParseErrors).
	for _, p := range []string{"/build/" + strings.Repeat("gen/", 75) + "out.h", "/src/main.c", "/src/inline.h", "/src/main.c", "/usr/include/stdio.h"} {
		c.file(p)
	}
	fa, fb, fs := c.file("/src/main.c"), c.file("/src/inline.h"), c.file("/usr/include/stdio.h")
	main := c.fn(symcache.Function{Name: "main", Entry: 0x1000, DeclFile: fa, DeclLine: 10, Language: symcache.LangC})
	helper := c.fn(symcache.Function{Name: "_Z6helperi", Entry: symcache.NoAddr, DeclFile: fb, DeclLine: 3, Language: symcache.LangCPlusPlus})
	leaf := c.fn(symcache.Function{Name: "leaf", Entry: 0x1800, DeclFile: symcache.None, Language: symcache.LangRust})
	if again := c.fn(symcache.Function{Name: "main", Entry: 0x1000, DeclFile: fa, DeclLine: 10, Language: symcache.LangC}); again != main {
		panic("function not deduplicated")
	}
	c.fn(symcache.Function{Name: "_ZN3gen3oneEv", Entry: symcache.NoAddr, DeclFile: 0, DeclLine: 1, Language: symcache.LangCPlusPlus})
	two := c.fn(symcache.Function{Name: "_ZN3gen3twoEv", Entry: symcache.NoAddr, DeclFile: fs, DeclLine: 2, Language: symcache.LangCPlusPlus})

	l0 := c.loc(symcache.Location{File: fa, Line: 12, Column: 3, Function: main, Parent: symcache.None})
	l1 := c.loc(symcache.Location{File: fb, Line: 5, Column: 70000, Discriminator: 70000, Function: helper, Parent: l0})
	l2 := c.loc(symcache.Location{File: fb, Function: leaf, Parent: l1})
	l3 := c.loc(symcache.Location{File: symcache.None, Function: symcache.None, Parent: symcache.None})
	l4 := c.loc(symcache.Location{File: fa, Function: main, Parent: symcache.None})
	l5 := c.loc(symcache.Location{File: fs, Function: two, Parent: symcache.None})
	r := func(start uint64, loc, line, col, discr uint32) {
		c.rng(symcache.Range{Start: start, Loc: loc, Line: line, Column: col, Discriminator: discr})
	}

	r(0x1050, l4, 20, 0, 0) // a run added before the ones below it
	r(0x1058, l4, 20, 0, 0) // repeats its predecessor: merged
	r(0x1060, l0, 12, 3, 0)
	r(0x1070, symcache.None, 0, 0, 0)

	r(0x1000, l0, 12, 3, 0)
	r(0x1010, l2, 6, 1, 2)
	r(0x1018, l1, 1<<20, 1<<17, 9)
	r(0x1020, symcache.None, 0, 0, 0) // a gap
	r(0x1030, l3, 0, 0, 0)
	r(0x1040, l3, 4, 0, 0)
	r(0x1050, symcache.None, 0, 0, 0) // where the first run begins: redundant

	// Two blocks and a bit; the unknown end fits the last block.
	for i := range 40 {
		r(0x2000+uint64(i)*4+uint64(i/7)*100, [...]uint32{l0, l1, l2}[i%3], uint32(1000-i*i), uint32(i%5), uint32(i/10))
	}
	r(0x3000, symcache.None, 0, 0, 0)
	// Exactly one block; the unknown end needs a block of its own.
	for i := range 16 {
		r(0x4000+uint64(i)*2, l4, uint32(30+i), 0, 0)
	}
	r(0x4100, symcache.None, 0, 0, 0)
	// The last range: it extends to the end of what the cache can say,
	// 4 GiB above its first address.
	r(0x5000, l5, 7, 0, 0)
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
	if files != 4 || funcs != 5 || locs != len(c.locs) || ranges != f.NumRanges() || funcs != f.NumFuncs() {
		t.Errorf("Counts() = %d, %d, %d, %d; want 4, 5, %d, NumRanges %d", files, funcs, locs, ranges, len(c.locs), f.NumRanges())
	}
	if f.Size() != len(data) {
		t.Errorf("Size() = %d, want %d", f.Size(), len(data))
	}

	// Every boundary of every range added: start−1, start, end−1, end
	// (end being the next start), and far outside.
	addrs := []uint64{0, 0xfff, 0x1000 + 1<<32, 1<<64 - 1}
	for _, r := range c.ranges {
		for _, d := range []uint64{^uint64(0), 0, 1} {
			addrs = append(addrs, r.Start+d)
		}
	}
	for _, a := range addrs {
		want, wantOK := c.want(a)
		loc, ok := f.Lookup(a)
		if ok != wantOK {
			t.Errorf("Lookup(%#x) found %v, want %v", a, ok, wantOK)
			continue
		}
		if ok {
			if have := chain(t, loc); !slices.Equal(have, want) {
				t.Errorf("Lookup(%#x) frames:\nhave %+v\nwant %+v", a, have, want)
			}
		}
	}

	// Ranges agree with Lookup, are merged (neighbours differ) and cover
	// what was added; the first is known.
	n := 0
	var prev symcache.Span
	for s := range f.Ranges() {
		if s.Start >= s.End {
			t.Errorf("range %d = [%#x, %#x)", n, s.Start, s.End)
		}
		if n == 0 && !s.Known {
			t.Errorf("first range is unknown")
		}
		for _, a := range []uint64{s.Start, s.End - 1} {
			if a-s.Start > 0xffffffff {
				continue
			}
			l, ok := f.Lookup(a)
			if ok != s.Known || ok && !slices.Equal(chain(t, l), chain(t, s.Loc)) {
				t.Errorf("range %d = %#x..%#x %v, Lookup(%#x) differs", n, s.Start, s.End, s.Known, a)
			}
		}
		if n > 0 && prev.Known == s.Known && (!s.Known || slices.Equal(chain(t, prev.Loc), chain(t, s.Loc))) {
			t.Errorf("range %d at %#x repeats its predecessor", n, s.Start)
		}
		prev = s
		n++
	}
	if n != f.NumRanges() {
		t.Errorf("Ranges yields %d, NumRanges %d", n, f.NumRanges())
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

// TestFuncRange checks that Func refuses indexes outside the table: the
// tables' reads do not check them (load8).
func TestFuncRange(t *testing.T) {
	_, data := sample()
	f := mustParse(t, data)
	idx := []int{-1, f.NumFuncs()}
	if strconv.IntSize == 64 {
		shift := 32
		idx = append(idx, 1<<shift) // index 0 once cut to 32 bits
	}
	for _, i := range idx {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Func(%d) of %d did not panic", i, f.NumFuncs())
				}
			}()
			f.Func(i)
		}()
	}
	if f.Func(f.NumFuncs()-1).Name() == "" {
		t.Errorf("the last function has no name")
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
	b := symcache.NewBuilder(symcache.Info{})
	defer b.Close()
	if _, err := b.WriteTo(&buf); err != nil {
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
	defer b.Close()
	l := b.Location(symcache.Location{File: symcache.None, Function: symcache.None, Parent: symcache.None})
	b.Range(symcache.Range{Start: 0x1000, Loc: l})
	b.Range(symcache.Range{Start: 0x1000 + 1<<32, Loc: symcache.None})
	if _, err := b.WriteTo(&bytes.Buffer{}); !errors.Is(err, symcache.ErrTooLarge) {
		t.Errorf("WriteTo over 4 GiB = %v, want ErrTooLarge", err)
	}
	// Just under the limit is fine, and the address at the limit's edge
	// is the last one the cache answers for.
	b = symcache.NewBuilder(symcache.Info{})
	defer b.Close()
	l = b.Location(symcache.Location{File: symcache.None, Function: symcache.None, Parent: symcache.None, Line: 9})
	b.Range(symcache.Range{Start: 0x1000, Loc: l})
	b.Range(symcache.Range{Start: 0x1000 + 1<<32 - 1, Loc: l}) // the same: merged away
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

// TestBuilderMisuse checks that what the format cannot say is an error
// from WriteTo, not a corrupt file.
func TestBuilderMisuse(t *testing.T) {
	for _, tt := range []struct {
		name string
		add  func(b *symcache.Builder)
		want string
	}{
		{"overlapping runs", func(b *symcache.Builder) {
			l := b.Location(symcache.Location{File: symcache.None, Function: symcache.None, Parent: symcache.None})
			b.Range(symcache.Range{Start: 0x10, Loc: l})
			b.Range(symcache.Range{Start: 0x30, Loc: l, Line: 1})
			b.Range(symcache.Range{Start: 0x20, Loc: l, Line: 2})
		}, "overlap"},
		{"same start", func(b *symcache.Builder) {
			l := b.Location(symcache.Location{File: symcache.None, Function: symcache.None, Parent: symcache.None})
			b.Range(symcache.Range{Start: 0x10, Loc: l})
			b.Range(symcache.Range{Start: 0x10, Loc: l, Line: 1})
		}, "overlap"},
		{"unknown end inside the next run", func(b *symcache.Builder) {
			l := b.Location(symcache.Location{File: symcache.None, Function: symcache.None, Parent: symcache.None})
			b.Range(symcache.Range{Start: 0x20, Loc: l})
			b.Range(symcache.Range{Start: 0x30, Loc: l, Line: 1})
			b.Range(symcache.Range{Start: 0x10, Loc: l})
			b.Range(symcache.Range{Start: 0x21, Loc: symcache.None})
		}, "overlap"},
		{"location not added", func(b *symcache.Builder) {
			b.Range(symcache.Range{Start: 0x10, Loc: 0})
		}, "location 0 not added"},
		{"parent not before", func(b *symcache.Builder) {
			b.Location(symcache.Location{File: symcache.None, Function: symcache.None, Parent: 0})
		}, "parent 0 not added before it"},
		{"function not added", func(b *symcache.Builder) {
			b.Location(symcache.Location{File: symcache.None, Function: 3, Parent: symcache.None})
		}, "function 3 not added"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b := symcache.NewBuilder(symcache.Info{})
			defer b.Close()
			tt.add(b)
			if _, err := b.WriteTo(&bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("WriteTo = %v, want an error saying %q", err, tt.want)
			}
		})
	}
}

// spillSpec returns a cache whose tables outgrow memory and move to
// temporary files.
func spillSpec() *cacheSpec {
	c := &cacheSpec{b: symcache.NewBuilder(testInfo), fileNames: map[uint32]string{}, funcNames: map[uint32]string{}}
	f := c.file("/src/big.c")
	var fns []uint32
	for i := range 20000 {
		fns = append(fns, c.fn(symcache.Function{Name: fmt.Sprintf("function_with_a_long_name_%d", i), Entry: symcache.NoAddr, DeclFile: f}))
	}
	for i := range 60000 {
		parent := symcache.None
		if i%3 != 0 {
			parent = uint32(i - 1)
		}
		c.loc(symcache.Location{File: f, Line: uint32(i), Function: fns[i%len(fns)], Parent: parent})
	}
	for i := range 60000 {
		c.rng(symcache.Range{Start: 0x10000 + uint64(i)*3, Loc: uint32(i), Line: uint32(i % 97)})
	}
	return c
}

// TestSpill checks a cache whose tables moved to temporary files against
// the model.
func TestSpill(t *testing.T) { checkSpill(t) }

// TestSpillNoTempDir checks a cache whose tables outgrew memory where no
// temporary file can be made: they stay in memory, and nothing is lost.
func TestSpillNoTempDir(t *testing.T) {
	t.Setenv("TMPDIR", filepath.Join(t.TempDir(), "missing"))
	checkSpill(t)
}

func checkSpill(t *testing.T) {
	t.Helper()
	c := spillSpec()
	defer c.b.Close()
	var buf bytes.Buffer
	if _, err := c.b.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	sc := mustParse(t, buf.Bytes())
	for i := 0; i < 60000; i += 997 {
		a := 0x10000 + uint64(i)*3 + 1
		want, _ := c.want(a)
		loc, ok := sc.Lookup(a)
		if !ok || !slices.Equal(chain(t, loc), want) {
			t.Fatalf("Lookup(%#x) = %v, want %+v", a, ok, want)
		}
	}
}

// TestWriteToFile checks that a symcache written to a file, where its
// tables are written in parallel at their offsets, has the bytes of one
// written sequentially, wherever in the file it starts, and that the
// file's offset ends after it.
func TestWriteToFile(t *testing.T) {
	c := spillSpec()
	defer c.b.Close()
	var want bytes.Buffer
	if _, err := c.b.WriteTo(&want); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(t.TempDir(), "out"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	prefix := []byte("prefix")
	f.Write(prefix)
	c2 := spillSpec()
	defer c2.b.Close()
	n, err := c2.b.WriteTo(f)
	if err != nil || n != int64(want.Len()) {
		t.Fatalf("WriteTo = %d, %v; want %d bytes", n, err, want.Len())
	}
	f.Write([]byte("suffix"))
	got, err := os.ReadFile(f.Name())
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, slices.Concat(prefix, want.Bytes(), []byte("suffix"))) {
		t.Errorf("file holds %d bytes, differing from the sequential %d between a prefix and a suffix", len(got), want.Len())
	}

	// A file opened for appending cannot be written at offsets: written
	// sequentially, after what it holds.
	a, err := os.OpenFile(f.Name(), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if _, err := c2.b.WriteTo(a); err != nil {
		t.Fatalf("WriteTo into a file opened for appending: %v", err)
	}
	if got2, _ := os.ReadFile(f.Name()); !bytes.Equal(got2, slices.Concat(got, want.Bytes())) {
		t.Errorf("appending: file holds %d bytes, want the %d before and the %d of the symcache", len(got2), len(got), want.Len())
	}
}

// TestWriteToFileError writes to a file opened read-only, which passes
// for one written at offsets until the first write: WriteTo returns the
// error of either part, and the Builder still writes a whole symcache
// elsewhere afterwards.
// TestWriteToFileSmall writes symcaches with 0 to 17 location records to a
// file, where the location table is split between two parts written at
// once, and compares them with the sequential write.
func TestWriteToFileSmall(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []int{0, 1, 7, 8, 15, 16, 17} {
		build := func() *symcache.Builder {
			b := symcache.NewBuilder(testInfo)
			f := b.File("/src/a.c")
			fn := b.Function(symcache.Function{Name: "f", Entry: symcache.NoAddr, DeclFile: f})
			for i := range n {
				b.Location(symcache.Location{File: f, Line: uint32(i + 1), Function: fn, Parent: symcache.None})
				b.Range(symcache.Range{Start: 0x1000 + uint64(i)*4, Loc: uint32(i), Line: uint32(i + 1)})
			}
			return b
		}
		b1, b2 := build(), build()
		var want bytes.Buffer
		if _, err := b1.WriteTo(&want); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, fmt.Sprint(n))
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := b2.WriteTo(f); err != nil {
			t.Fatalf("%d locations: %v", n, err)
		}
		f.Close()
		b1.Close()
		b2.Close()
		if got, _ := os.ReadFile(path); !bytes.Equal(got, want.Bytes()) {
			t.Errorf("%d locations: the file differs from the sequential write", n)
		}
		mustParse(t, want.Bytes())
	}
}

func TestWriteToFileError(t *testing.T) {
	c := spillSpec()
	defer c.b.Close()
	path := filepath.Join(t.TempDir(), "out")
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if n, err := c.b.WriteTo(f); err == nil || n != 0 {
		t.Fatalf("WriteTo into a read-only file = %d, %v; want 0 and an error", n, err)
	}
	var buf bytes.Buffer
	if _, err := c.b.WriteTo(&buf); err != nil {
		t.Fatalf("WriteTo after the failed write: %v", err)
	}
	mustParse(t, buf.Bytes())
}

// specLayout computes table offsets as docs/symcache.md §1 specifies,
// independently of the package, from a file's header.
type specLayout struct {
	files, funcs, locs, starts, offs, entries, strs uint64
	funcBits, locBits                               uint64
	funcShift, locShift                             [6]uint64
	funcWidth, locWidth                             [6]uint64
}

func layoutOf(data []byte) specLayout {
	u32 := func(off int) uint64 {
		return uint64(data[off]) | uint64(data[off+1])<<8 | uint64(data[off+2])<<16 | uint64(data[off+3])<<24
	}
	align := func(n uint64) uint64 { return (n + 7) &^ 7 }
	var l specLayout
	for k := range 6 {
		l.funcShift[k], l.funcWidth[k] = l.funcBits, uint64(data[108+k])
		l.funcBits += l.funcWidth[k]
		l.locShift[k], l.locWidth[k] = l.locBits, uint64(data[114+k])
		l.locBits += l.locWidth[k]
	}
	packed := func(n, bits uint64) uint64 {
		if n == 0 {
			return 0
		}
		return (n*bits+7)/8 + 8
	}
	nFiles, nFuncs, nLocs, nBlocks := u32(80), u32(84), u32(88), u32(92)
	l.files = 128
	l.funcs = align(l.files + 8*nFiles)
	l.locs = align(l.funcs + packed(nFuncs, l.funcBits))
	l.starts = align(l.locs + packed(nLocs, l.locBits))
	l.offs = align(l.starts + 4*nBlocks)
	l.entries = align(l.offs + 4*nBlocks)
	l.strs = align(l.entries + u32(100))
	return l
}

// setBits stores v in the width bits at bit offset bit from off.
func setBits(b []byte, off, bit, width, v uint64) {
	for i := uint64(0); i < width; i++ {
		p := off + (bit+i)/8
		m := byte(1) << ((bit + i) % 8)
		if v>>i&1 != 0 {
			b[p] |= m
		} else {
			b[p] &^= m
		}
	}
}

func TestParseErrors(t *testing.T) {
	_, data := sample()
	f := mustParse(t, data)
	nFiles, _, _, _ := f.Counts()
	lay := layoutOf(data)
	le := func(b []byte, off uint64, v uint32) {
		b[off], b[off+1], b[off+2], b[off+3] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24)
	}
	strsLen := uint32(len(data)) - uint32(lay.strs)
	// field writes a value into field k of record i of a packed table, if
	// the field is wide enough to hold it; v < 0 is the field's largest
	// value.
	field := func(b []byte, tab, bits uint64, shift, width [6]uint64, i uint64, k int, v int64) bool {
		if v < 0 {
			v = 1<<width[k] - 1
		}
		if uint64(v)>>width[k] != 0 {
			return false
		}
		setBits(b, tab, i*bits+shift[k], width[k], uint64(v))
		return true
	}
	fnField := func(i uint64, k int, v int64) func(b []byte) bool {
		return func(b []byte) bool { return field(b, lay.funcs, lay.funcBits, lay.funcShift, lay.funcWidth, i, k, v) }
	}
	locField := func(i uint64, k int, v int64) func(b []byte) bool {
		return func(b []byte) bool { return field(b, lay.locs, lay.locBits, lay.locShift, lay.locWidth, i, k, v) }
	}
	always := func(fn func(b []byte)) func(b []byte) bool {
		return func(b []byte) bool { fn(b); return true }
	}
	for _, tt := range []struct {
		name     string
		corrupt  func(b []byte) bool
		off      uint64
		sentinel error
		check    bool // found by Check, not by Parse (see TestCheckOnFirstUse)
	}{
		{"magic", always(func(b []byte) { b[0] = 'X' }), 0, symcache.ErrMagic, false},
		{"version", always(func(b []byte) { le(b, 4, 1) }), 4, symcache.ErrVersion, false},
		{"header size", always(func(b []byte) { le(b, 8, 64) }), 8, nil, false},
		{"file count", always(func(b []byte) { le(b, 80, uint32(nFiles+1)) }), 80, nil, false},
		{"string table length", always(func(b []byte) { le(b, 104, strsLen+1) }), 80, nil, false},
		{"function field width", always(func(b []byte) { b[110] = 33 }), 110, nil, false},
		{"location field width", always(func(b []byte) { b[119] = 40 }), 119, nil, false},
		{"arch string", always(func(b []byte) { le(b, 48, strsLen) }), 48, nil, false},
		{"code id string", always(func(b []byte) { le(b, 60, strsLen+1) }), 56, nil, false},
		{"name string", always(func(b []byte) { le(b, 64, 0xffffffff) }), 64, nil, false},
		{"producer string", always(func(b []byte) { le(b, 76, 0xffffffff) }), 72, nil, false},
		{"file 1 path", always(func(b []byte) { le(b, lay.files+8+4, strsLen+1) }), lay.files + 8, nil, false},
		{"function 2 name", fnField(2, 0, -1), lay.funcs + 2*lay.funcBits/8, nil, true},
		{"function 1 decl file", fnField(1, 3, -1), lay.funcs + lay.funcBits/8, nil, true},
		{"location 3 file", locField(3, 0, -1), lay.locs + 3*lay.locBits/8, nil, true},
		{"location 0 function", locField(0, 4, -1), lay.locs, nil, true},
		{"location 2 parent is itself", locField(2, 5, 3), lay.locs + 2*lay.locBits/8, nil, true},
		{"location 1 parent after it", locField(1, 5, 3), lay.locs + lay.locBits/8, nil, true},
		{"block 2 start not above block 1", always(func(b []byte) { copy(b[lay.starts+8:lay.starts+12], b[lay.starts+4:lay.starts+8]) }), lay.starts + 8, nil, false},
		{"block 1 entries before block 0", always(func(b []byte) { le(b, lay.offs+4, 0) }), lay.offs + 4, nil, false},
		{"block 0 entries not at 0", always(func(b []byte) { le(b, lay.offs, 1) }), lay.offs, nil, false},
		{"first entry with an address delta", always(func(b []byte) { b[lay.entries] |= 1 }), lay.entries, nil, true},
		{"range count", always(func(b []byte) { le(b, 96, uint32(f.NumRanges()+1)) }), 96, nil, true},
		{"address base overflows", always(func(b []byte) { le(b, 40, 0xffffffff); le(b, 44, 0xffffffff) }), 40, nil, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b := bytes.Clone(data)
			if !tt.corrupt(b) {
				t.Fatalf("the sample's field is too narrow for the corruption")
			}
			sc, err := symcache.Parse(b)
			if tt.check {
				if err != nil {
					t.Fatalf("Parse = %v, want nil: the content is checked on first use", err)
				}
				err = sc.Check()
			}
			var fe *symcache.FormatError
			if !errors.As(err, &fe) {
				t.Fatalf("Parse or Check = %v, want a FormatError", err)
			}
			if fe.Off != tt.off || !errors.Is(err, tt.sentinel) && tt.sentinel != nil || tt.sentinel == nil && fe.Err != nil {
				t.Errorf("Parse or Check = %v (offset %#x, sentinel %v), want offset %#x, sentinel %v", err, fe.Off, fe.Err, tt.off, tt.sentinel)
			}
			if !strings.Contains(err.Error(), fmt.Sprintf("at offset %#x", tt.off)) {
				t.Errorf("error %q does not say the offset %#x", err, tt.off)
			}
		})
	}
}

// TestCheckOnFirstUse checks what Parse leaves to be checked later: a
// block whose range entries are corrupt reads as unknown and no other
// does, lookups from several goroutines find the same, a corrupt record
// reads as nothing where it is wrong, and Check reports both.
func TestCheckOnFirstUse(t *testing.T) {
	_, data := sample()
	good := mustParse(t, data)
	lay := layoutOf(data)
	u32 := func(b []byte, off uint64) uint64 {
		return uint64(b[off]) | uint64(b[off+1])<<8 | uint64(b[off+2])<<16 | uint64(b[off+3])<<24
	}
	base := u32(data, 40) | u32(data, 44)<<32
	// The block holding the last range, and where its entries are.
	var badStart, badEntries uint64
	for b := uint64(0); b < u32(data, 92); b++ {
		if s := base + u32(data, lay.starts+4*b); s <= 0x5000 {
			badStart, badEntries = s, lay.entries+u32(data, lay.offs+4*b)
		}
	}
	bad := bytes.Clone(data)
	bad[badEntries] |= 1 // a block's first entry with an address delta

	addrs := rangeAddrs(good)
	lookAll := func(f *symcache.File) [][]frame {
		var out [][]frame
		for _, a := range addrs {
			var frames []frame
			if l, ok := f.Lookup(a); ok {
				frames = chain(t, l)
			}
			out = append(out, frames)
		}
		return out
	}
	f := mustParse(t, bad)
	lazy, right := lookAll(f), lookAll(good)
	for i, a := range addrs {
		switch {
		case a >= badStart && a <= base+0xffffffff:
			if lazy[i] != nil {
				t.Errorf("Lookup(%#x) in the corrupt block = %v, want unknown", a, lazy[i])
			}
		case !slices.Equal(lazy[i], right[i]):
			t.Errorf("Lookup(%#x) = %v, want %v as in the sound file", a, lazy[i], right[i])
		}
	}
	var unknownAt []uint64
	for s := range f.Ranges() {
		if !s.Known {
			unknownAt = append(unknownAt, s.Start)
		}
	}
	if !slices.Contains(unknownAt, badStart) {
		t.Errorf("Ranges: unknown ranges at %#x, want one at the corrupt block's start %#x", unknownAt, badStart)
	}
	// Goroutines checking blocks at once find what one does.
	fresh := mustParse(t, bad)
	done := make(chan [][]frame)
	for range 4 {
		go func() { done <- lookAll(fresh) }()
	}
	for range 4 {
		if got := <-done; !slices.EqualFunc(got, lazy, slices.Equal) {
			t.Errorf("concurrent lookups on a fresh File differ from sequential ones")
		}
	}
	var fe *symcache.FormatError
	if err := f.Check(); !errors.As(err, &fe) || fe.Off != badEntries {
		t.Errorf("Check = %v, want a FormatError at the corrupt entry's offset %#x", err, badEntries)
	}
	if err := good.Check(); err != nil {
		t.Errorf("Check of the sound file: %v", err)
	}

	// A location naming a file beyond the files reads without one.
	last, _ := good.Lookup(0x5000)
	bad = bytes.Clone(data)
	setBits(bad, lay.locs, uint64(last.Index())*lay.locBits+lay.locShift[0], lay.locWidth[0], 1<<lay.locWidth[0]-1)
	f = mustParse(t, bad)
	if l, ok := f.Lookup(0x5000); !ok || l.File() != "" || l.Line() != last.Line() || l.FunctionIndex() != last.FunctionIndex() {
		t.Errorf("Lookup(0x5000) with a corrupt file index: %v; want the location without its file", chain(t, l))
	}
	if off := lay.locs + uint64(last.Index())*lay.locBits/8; !errors.As(f.Check(), &fe) || fe.Off != off {
		t.Errorf("Check = %v, want a FormatError at the location's offset %#x", f.Check(), off)
	}

	// Parse reads none of the records: with every location and function
	// corrupt (all ones) it still succeeds, and lookups read within the
	// file (the checked build panics otherwise) and end.
	wreck := bytes.Clone(data)
	for i := lay.funcs; i < lay.starts; i++ {
		wreck[i] = 0xff
	}
	f = mustParse(t, wreck)
	_, _, nLocs, _ := f.Counts()
	for _, a := range addrs {
		if l, ok := f.Lookup(a); ok {
			if fr := chain(t, l); len(fr) > nLocs {
				t.Errorf("Lookup(%#x) with every record corrupt: %d frames of %d locations", a, len(fr), nLocs)
			}
		}
	}
	if err := f.Check(); err == nil {
		t.Errorf("Check with every record corrupt: no error")
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
		n += visit(loc)
		loc, ok = loc.Parent()
	}
	return n
}

// visit reads what a symbolizer prints of a frame.
func visit(loc symcache.Loc) (n int) {
	n = len(loc.File()) + int(loc.Line()) + int(loc.Column())
	if fn, ok := loc.Function(); ok {
		n += len(fn.Name())
	}
	return n
}

func TestLookupNoAllocs(t *testing.T) {
	c, data := sample()
	f := mustParse(t, data)
	var addrs []uint64
	for _, r := range c.ranges {
		addrs = append(addrs, r.Start-1, r.Start, r.Start+1)
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
