package pclntab_test

import (
	"debug/gosym"
	"encoding/binary"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/backtrail/backtrail/debugfile/pclntab"
)

// TestParseFixtures checks what Parse finds in each fixture: layout, byte
// order, pointer size, the moduledata and the functions the source defines.
func TestParseFixtures(t *testing.T) {
	for _, tg := range targets {
		t.Run(tg.name, func(t *testing.T) {
			tab, im := fixtureTable(t, tg.name)
			if v := tab.Version(); v != pclntab.Version120 {
				t.Errorf("Version = %v, want go1.20", v)
			}
			if tab.ByteOrder() != im.order || tab.PtrSize() != im.ptrSize || tab.Quantum() != im.quantum {
				t.Errorf("ByteOrder, PtrSize, Quantum = %v, %d, %d; want %v, %d, %d",
					tab.ByteOrder(), tab.PtrSize(), tab.Quantum(), im.order, im.ptrSize, im.quantum)
			}
			md, ok := tab.Moduledata()
			if !ok {
				t.Fatal("no moduledata")
			}
			// Go places runtime.text at the start of the text section.
			if tab.TextStart() != im.text || md.Text != im.text {
				t.Errorf("TextStart = %#x, moduledata text = %#x; want %#x", tab.TextStart(), md.Text, im.text)
			}
			if im.runtimeT != 0 && im.runtimeT != tab.TextStart() {
				t.Errorf("TextStart = %#x, runtime.text symbol = %#x", tab.TextStart(), im.runtimeT)
			}
			if err := tab.InlineErr(); err != nil {
				t.Errorf("InlineErr: %v", err)
			}
			md2, err := pclntab.FindModuledata(im.pcln, im.addr, im.mem)
			if err != nil || md2 != md {
				t.Errorf("FindModuledata = %+v, %v; Parse found %+v", md2, err, md)
			}
			first, last := tab.Func(0), tab.Func(tab.NumFuncs()-1)
			if md.MinPC != first.Entry || md.MaxPC != last.End {
				t.Errorf("moduledata minpc, maxpc = %#x, %#x; functions span %#x, %#x", md.MinPC, md.MaxPC, first.Entry, last.End)
			}
			if tab.NumFuncs() < 1000 || tab.NumFiles() < 50 {
				t.Errorf("NumFuncs = %d, NumFiles = %d", tab.NumFuncs(), tab.NumFiles())
			}
			var files []string
			for f := range tab.Files() {
				files = append(files, f)
			}
			if len(files) != tab.NumFiles() {
				t.Errorf("Files gave %d, NumFiles = %d", len(files), tab.NumFiles())
			}
			if !slices.ContainsFunc(files, func(f string) bool {
				return strings.HasSuffix(f, "testdata/inl/main.go") || f == "command-line-arguments/main.go"
			}) {
				t.Errorf("main.go not in Files")
			}
			for _, c := range []struct{ name, sym string }{
				{"main.chain", "main.chain"},
				{"main.(*T).Big", "main.(*T).Big"},
				{"main.closures.func2", "main.closures.func2"},
				{"main.Sum[...]", "main.Sum[go.shape.int]"},
				{"main.V.Get", "main.V.Get"},
			} {
				fn := tab.Func(funcNamed(t, tab, c.name))
				if fn.Sym != c.sym && !(c.sym == "main.Sum[go.shape.int]" && fn.Sym == "main.Sum[go.shape.float64]") {
					t.Errorf("%s: Sym = %q, want %q", c.name, fn.Sym, c.sym)
				}
				if fn.StartLine == 0 || fn.End <= fn.Entry || fn.FuncID != pclntab.FuncIDNormal {
					t.Errorf("%s: %+v", c.name, fn)
				}
			}
			for _, c := range []struct {
				name string
				id   pclntab.FuncID
			}{
				{"main.(*V).Get", pclntab.FuncIDWrapper},
				{"runtime.gopanic", pclntab.FuncIDPanic},
				{"runtime.goexit", pclntab.FuncIDRuntime},
				{"runtime.mstart", pclntab.FuncIDRuntime},
			} {
				if fn := tab.Func(funcNamed(t, tab, c.name)); fn.FuncID != c.id {
					t.Errorf("%s: FuncID = %v, want %v", c.name, fn.FuncID, c.id)
				}
			}
		})
	}
}

// TestGosym compares the table with the standard library's debug/gosym,
// which reads the same tables but ignores inlining: function by function
// (entry, end, stored name), and row by row, where gosym's PCToLine gives the
// innermost file and line and the physical function.
//
// Known differences, not checked: gosym spells generic instantiations as
// stored ("F[go.shape.int]"), this package's Name as printed ("F[...]"), so
// the stored Sym is compared; where the table has no file or line for a PC,
// gosym reports the raw values and this package "?" and 0, as the runtime.
func TestGosym(t *testing.T) {
	for _, tg := range targets {
		t.Run(tg.name, func(t *testing.T) {
			tab, im := fixtureTable(t, tg.name)
			st, err := gosym.NewTable(nil, gosym.NewLineTable(im.pcln, tab.TextStart()))
			if err != nil {
				t.Fatal(err)
			}
			if len(st.Funcs) != tab.NumFuncs() {
				t.Fatalf("gosym has %d functions, Table %d", len(st.Funcs), tab.NumFuncs())
			}
			rows := 0
			for i, fn := range tab.Funcs() {
				g := st.Funcs[i]
				if fn.Entry != g.Entry || fn.End != g.End || fn.Sym != g.Name {
					t.Errorf("func %d: have %#x-%#x %q, gosym %#x-%#x %q", i, fn.Entry, fn.End, fn.Sym, g.Entry, g.End, g.Name)
					continue
				}
				for r := range tab.Rows(i) {
					rows++
					for _, pc := range []uint64{r.Start, r.End - 1} {
						file, line, gfn := st.PCToLine(pc)
						if gfn == nil || gfn.Entry != fn.Entry {
							t.Errorf("%s: pc %#x: gosym finds %v", fn.Name, pc, gfn)
							continue
						}
						if r.File == "?" {
							// gosym reports the raw values; the runtime "?", 0.
							continue
						}
						if file != r.File || line != r.Line {
							t.Errorf("%s: pc %#x: row %s:%d, gosym %s:%d", fn.Name, pc, r.File, r.Line, file, line)
						}
					}
				}
			}
			if rows < tab.NumFuncs() {
				t.Errorf("only %d rows for %d functions", rows, tab.NumFuncs())
			}
		})
	}
}

// TestRowsAndLookup checks that the enumeration API describes every PC the
// way Lookup does: the row's position is the first frame's, the row's
// inline node names it, and following InlineNode.ParentPC through the rows
// gives the rest of the chain.
func TestRowsAndLookup(t *testing.T) {
	for _, name := range []string{"linux-amd64-stripped", "linux-arm64", "linux-386", "linux-s390x"} {
		t.Run(name, func(t *testing.T) {
			tab, _ := fixtureTable(t, name)
			var frames []pclntab.Frame
			inlined := 0
			for i, fn := range tab.Funcs() {
				var rows []pclntab.Row
				for r := range tab.Rows(i) {
					rows = append(rows, r)
				}
				if len(rows) > 0 && (rows[0].Start != fn.Entry || rows[len(rows)-1].End != fn.End) {
					t.Errorf("%s: rows span %#x-%#x, function %#x-%#x", fn.Name, rows[0].Start, rows[len(rows)-1].End, fn.Entry, fn.End)
				}
				rowAt := func(pc uint64) (pclntab.Row, bool) {
					k, ok := slices.BinarySearchFunc(rows, pc, func(r pclntab.Row, pc uint64) int {
						switch {
						case r.End <= pc:
							return -1
						case r.Start > pc:
							return 1
						}
						return 0
					})
					if !ok {
						return pclntab.Row{}, false
					}
					return rows[k], true
				}
				for k, r := range rows {
					if k > 0 && (r.Start != rows[k-1].End || r == rows[k-1]) {
						t.Errorf("%s: row %d %+v after %+v", fn.Name, k, r, rows[k-1])
					}
					frames, _ = tab.Lookup(r.Start, frames[:0])
					if len(frames) == 0 {
						t.Errorf("%s: Lookup(%#x) found nothing", fn.Name, r.Start)
						continue
					}
					// Build the chain from the rows, hiding wrappers as Lookup does.
					var want []pclntab.Frame
					cur, pc := r, r.Start
					callee := pclntab.FuncIDNormal
					for d := 0; d < 100; d++ {
						f := pclntab.Frame{Function: fn.Name, File: cur.File, Line: cur.Line, PC: pc, Entry: fn.Entry, StartLine: fn.StartLine, FuncID: fn.FuncID}
						var node pclntab.InlineNode
						if cur.InlIndex >= 0 {
							var ok bool
							node, ok = tab.InlineNode(i, cur.InlIndex)
							if !ok {
								t.Fatalf("%s: InlineNode(%d) missing", fn.Name, cur.InlIndex)
							}
							f.Function, f.StartLine, f.FuncID, f.Inlined = node.Name, node.StartLine, node.FuncID, true
						}
						if d == 0 || f.FuncID != pclntab.FuncIDWrapper || callee == pclntab.FuncIDPanic {
							want = append(want, f)
						}
						callee = f.FuncID
						if cur.InlIndex < 0 {
							break
						}
						pc = node.ParentPC
						var ok bool
						if cur, ok = rowAt(pc); !ok {
							t.Fatalf("%s: no row at parent PC %#x", fn.Name, pc)
						}
					}
					if len(want) > 1 {
						inlined++
					}
					if !slices.Equal(frames, want) {
						t.Errorf("%s: at %#x\n Lookup %v\n rows   %v", fn.Name, r.Start, frames, want)
					}
				}
			}
			if inlined < 1000 {
				t.Errorf("only %d rows in inlined code", inlined)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	_, im := fixtureTable(t, "linux-amd64-stripped")
	bad := func(mut func(p []byte) []byte) []byte {
		return mut(append([]byte(nil), im.pcln...))
	}
	tests := []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, "magic"},
		{"magic", bad(func(p []byte) []byte { p[0] = 0; return p }), "magic"},
		{"padding", bad(func(p []byte) []byte { p[4] = 1; return p }), "padding"},
		{"quantum", bad(func(p []byte) []byte { p[6] = 3; return p }), "quantum"},
		{"ptrsize", bad(func(p []byte) []byte { p[7] = 2; return p }), "pointer size"},
		{"header cut", im.pcln[:20], "need"},
		{"nfunc", bad(func(p []byte) []byte { binary.LittleEndian.PutUint64(p[8:], 1<<40); return p }), "function count"},
		{"table offset", bad(func(p []byte) []byte { binary.LittleEndian.PutUint64(p[40:], 1<<40); return p }), "table offset"},
		{"unsorted", bad(func(p []byte) []byte {
			off := binary.LittleEndian.Uint64(p[64:])
			binary.LittleEndian.PutUint32(p[off+8:], 0xffffffff)
			return p
		}), "not sorted"},
	}
	for _, tt := range tests {
		_, err := pclntab.Parse(tt.data, pclntab.Options{})
		var fe *pclntab.FormatError
		if !errors.As(err, &fe) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err = %v, want a FormatError about %q", tt.name, err, tt.want)
		}
		if tt.name == "table offset" && fe != nil && fe.Offset != 40 {
			t.Errorf("%s: Offset = %#x, want 0x28 (the cutab offset field)", tt.name, fe.Offset)
		}
		if tt.want == "magic" && !errors.Is(err, pclntab.ErrUnknownMagic) {
			t.Errorf("%s: err = %v, want ErrUnknownMagic", tt.name, err)
		}
	}
	if _, err := pclntab.FindModuledata(im.pcln, im.addr+8, im.mem); !errors.Is(err, pclntab.ErrNoModuledata) {
		t.Errorf("FindModuledata at a wrong address: %v", err)
	}
}

func TestSniff(t *testing.T) {
	for _, tt := range []struct {
		in  []byte
		v   pclntab.Version
		big bool
	}{
		{[]byte{0xfb, 0xff, 0xff, 0xff, 0, 0, 1, 8}, pclntab.Version12, false},
		{[]byte{0xff, 0xff, 0xff, 0xfa, 0, 0, 1, 8}, pclntab.Version116, true},
		{[]byte{0xf0, 0xff, 0xff, 0xff, 0, 0, 1, 8}, pclntab.Version118, false},
		{[]byte{0xff, 0xff, 0xff, 0xf1, 0, 0, 4, 4}, pclntab.Version120, true},
		{[]byte{0xf1, 0xff, 0xff, 0xff}, pclntab.VersionUnknown, false},
		{[]byte{0xf2, 0xff, 0xff, 0xff, 0, 0, 1, 8}, pclntab.VersionUnknown, false},
	} {
		v, big := pclntab.Sniff(tt.in)
		if v != tt.v || big != tt.big {
			t.Errorf("Sniff(% x) = %v, %v; want %v, %v", tt.in, v, big, tt.v, tt.big)
		}
		if tt.v != pclntab.VersionUnknown && v.Magic() == 0 {
			t.Errorf("%v.Magic() = 0", v)
		}
	}
}
