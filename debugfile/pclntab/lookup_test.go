package pclntab_test

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/backtrail/backtrail/debugfile/pclntab"
)

// record mirrors testdata/inl's Record.
type record struct {
	Tag    string
	PCs    []uint64
	Frames []struct {
		Function string
		File     string
		Line     int
		Entry    uint64
	}
	Names []string
}

func runFixture(t *testing.T, path string) []record {
	t.Helper()
	out, err := exec.Command(path).Output()
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var recs []record
	if err := json.Unmarshal(out, &recs); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return recs
}

func frameString(f pclntab.Frame) string {
	inl := ""
	if f.Inlined {
		inl = " (inlined)"
	}
	return fmt.Sprintf("%s %s:%d entry=%#x%s", f.Function, f.File, f.Line, f.Entry, inl)
}

// wantChains are the inline chains at the first PC under capture in each
// record of testdata/inl: innermost first, "+" marking an inlined frame.
var wantChains = map[string][]string{
	"chain":           {"+main.leaf", "+main.mid", "+main.top", "main.chain"},
	"method":          {"+main.(*T).small", "main.(*T).Big"},
	"wrapper":         {"+main.V.Get"}, // the physical (*V).Get wrapper is hidden
	"closure-inlined": {"+main.leaf", "+main.closures.func1", "main.closures"},
	"closure-called":  {"+main.leaf", "+main.mid", "main.closures.func2"},
	"generic":         {"+main.gleaf[...]", "+main.gmid[...]", "main.Sum[...]"},
	"deep":            {"+main.(*deep).l3", "+main.(*deep).l2", "+main.(*deep).l1", "+main.deepCall.func1", "main.deepCall"},
	"recover":         {"main.main.func1.1"},
}

// TestCallersFrames runs the fixture, which reports what runtime.Callers,
// runtime.CallersFrames and runtime.FuncForPC say about PCs of its own, and
// checks that Lookup on the binary's table says the same. runtime.Callers
// expands inlined calls into virtual PCs, one frame each, so for PCs[i] the
// chain Lookup gives must be Frames[i:i+len(chain)], and the frame after it
// must belong to another physical function.
func TestCallersFrames(t *testing.T) {
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skipf("runs linux/amd64 fixtures; this is %s/%s", runtime.GOOS, runtime.GOARCH)
	}
	for _, name := range []string{"linux-amd64", "linux-amd64-stripped", "linux-amd64-trimpath", "linux-amd64-pie"} {
		t.Run(name, func(t *testing.T) {
			tab, _ := fixtureTable(t, name)
			recs := runFixture(t, buildFixture(t, targetNamed(t, name)))
			seen := map[string]bool{}
			for _, r := range recs {
				seen[r.Tag] = true
			}
			for tag := range wantChains {
				if !seen[tag] {
					t.Errorf("no record %q", tag)
				}
			}
			// A position-independent binary runs at a slide from its link
			// address; main.main's entry gives it.
			var slide uint64
			for _, r := range recs {
				for _, f := range r.Frames {
					if f.Function == "main.main" {
						slide = f.Entry - tab.Func(funcNamed(t, tab, "main.main")).Entry
					}
				}
			}
			if slide != 0 && name != "linux-amd64-pie" {
				t.Errorf("slide %#x in a fixed-address binary", slide)
			}
			var chain []pclntab.Frame
			for _, r := range recs {
				if len(r.Frames) != len(r.PCs) || len(r.Names) != len(r.PCs) {
					t.Fatalf("%s: %d PCs, %d frames, %d names", r.Tag, len(r.PCs), len(r.Frames), len(r.Names))
				}
				for i, pc := range r.PCs {
					var ok bool
					chain, ok = tab.Lookup(pc-1-slide, chain[:0])
					if !ok {
						t.Errorf("%s: PCs[%d]=%#x: not found", r.Tag, i, pc)
						continue
					}
					if chain[0].Function != r.Names[i] {
						t.Errorf("%s: PCs[%d]=%#x: first frame %s, FuncForPC says %s", r.Tag, i, pc, chain[0].Function, r.Names[i])
					}
					if i+len(chain) > len(r.Frames) {
						t.Errorf("%s: PCs[%d]=%#x: %d frames, only %d left in the stack", r.Tag, i, pc, len(chain), len(r.Frames)-i)
						continue
					}
					for k, f := range chain {
						w := r.Frames[i+k]
						if f.Function != w.Function || f.File != w.File || f.Line != w.Line || f.Entry+slide != w.Entry {
							t.Errorf("%s: PCs[%d]=%#x frame %d:\n have %s\n want %s %s:%d entry=%#x", r.Tag, i, pc, k, frameString(f), w.Function, w.File, w.Line, w.Entry-slide)
						}
						if f.Inlined != (k < len(chain)-1) && !(k == len(chain)-1 && f.Inlined && r.Tag == "wrapper") {
							t.Errorf("%s: PCs[%d]=%#x frame %d: Inlined=%v", r.Tag, i, pc, k, f.Inlined)
						}
					}
					if j := i + len(chain); j < len(r.Frames) && r.Frames[j].Entry == chain[0].Entry+slide {
						t.Errorf("%s: PCs[%d]=%#x: chain of %d stops inside the physical frame", r.Tag, i, pc, len(chain))
					}
				}
				// The chain under capture, against what the source says.
				chain, _ = tab.Lookup(r.PCs[1]-1-slide, chain[:0])
				var got []string
				for _, f := range chain {
					s := f.Function
					if f.Inlined {
						s = "+" + s
					}
					got = append(got, s)
				}
				if want := wantChains[r.Tag]; !slices.Equal(got, want) {
					t.Errorf("%s: chain\n have %s\n want %s", r.Tag, strings.Join(got, " "), strings.Join(want, " "))
				}
			}
		})
	}
}
