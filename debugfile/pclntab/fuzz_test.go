package pclntab_test

import (
	"bytes"
	"compress/gzip"
	"debug/elf"
	"encoding/binary"
	"encoding/json"
	"flag"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/backtrail/backtrail/debugfile/pclntab"
)

var update = flag.Bool("update", false, "rewrite testdata/tiny.pclntab.gz and its .json from testdata/tiny")

// seedMeta describes testdata/tiny.pclntab.gz: how it was made and what a
// container would have told Parse about it.
type seedMeta struct {
	Go        string // toolchain version
	Command   string // how the binary was built
	Addr      uint64 // of .gopclntab
	TextStart uint64 // runtime.text, from the moduledata
	GoFunc    uint64 // go:func.*, from the moduledata; inside .gopclntab since Go 1.26
}

const (
	seedTable = "testdata/tiny.pclntab.gz"
	seedJSON  = "testdata/tiny.pclntab.json"
)

// writeSeed builds testdata/tiny and stores its table.
func writeSeed(t *testing.T) {
	out := filepath.Join(t.TempDir(), "tiny")
	args := []string{"build", "-trimpath", "-ldflags=-s -w", "-o", out, "."}
	cmd := exec.Command(goTool(t), args...)
	cmd.Dir = filepath.Join("testdata", "tiny")
	cmd.Env = append(os.Environ(), "GOOS=linux", "GOARCH=amd64", "CGO_ENABLED=0", "GOFLAGS=")
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v: %v\n%s", args, err, msg)
	}
	f, err := elf.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	im := loadImage(t, out)
	tab, err := pclntab.Parse(im.pcln, pclntab.Options{Addr: im.addr, Memory: im.mem})
	if err != nil {
		t.Fatal(err)
	}
	md, ok := tab.Moduledata()
	if !ok {
		t.Fatal("no moduledata")
	}
	meta := seedMeta{
		Go:        runtime.Version(),
		Command:   "GOOS=linux GOARCH=amd64 CGO_ENABLED=0 go " + strings.Join(args[:len(args)-3], " ") + " (in testdata/tiny)",
		Addr:      im.addr,
		TextStart: md.Text,
		GoFunc:    md.GoFunc,
	}
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	zw.Write(im.pcln)
	zw.Close()
	if err := os.WriteFile(seedTable, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	js, _ := json.MarshalIndent(meta, "", "\t")
	if err := os.WriteFile(seedJSON, append(js, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readSeed(t testing.TB) ([]byte, seedMeta) {
	t.Helper()
	z, err := os.ReadFile(seedTable)
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(z))
	if err != nil {
		t.Fatal(err)
	}
	data, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	js, err := os.ReadFile(seedJSON)
	if err != nil {
		t.Fatal(err)
	}
	var meta seedMeta
	if err := json.Unmarshal(js, &meta); err != nil {
		t.Fatal(err)
	}
	return data, meta
}

func (m seedMeta) options() pclntab.Options {
	return pclntab.Options{Addr: m.Addr, TextStart: m.TextStart, GoFunc: m.GoFunc}
}

// TestSeedTable checks the stored table: it parses from the section alone
// (no Memory: since Go 1.26 go:func.* is inside the section) and has the
// fixture's inlined calls.
func TestSeedTable(t *testing.T) {
	if *update {
		writeSeed(t)
	}
	data, meta := readSeed(t)
	tab, err := pclntab.Parse(data, meta.options())
	if err != nil {
		t.Fatal(err)
	}
	if err := tab.InlineErr(); err != nil {
		t.Fatal(err)
	}
	i := funcNamed(t, tab, "main.main")
	var chains []string
	var frames []pclntab.Frame
	for r := range tab.Rows(i) {
		if r.InlIndex < 0 {
			continue
		}
		frames, _ = tab.Lookup(r.Start, frames[:0])
		var names []string
		for _, f := range frames {
			names = append(names, f.Function)
		}
		chains = append(chains, strings.Join(names, " < "))
	}
	for _, want := range []string{
		"main.(*T).leaf < main.(*T).mid < main.main",
		"main.(*T).leaf < main.(*T).mid < main.main.func1 < main.main",
	} {
		found := false
		for _, c := range chains {
			found = found || c == want
		}
		if !found {
			t.Errorf("no chain %q in main.main; have %q", want, chains)
		}
	}
	exercise(t, tab, 1<<30)
}

// exercise reads the whole of tab (or up to budget rows) through every
// method and checks that they agree with each other. It is the fuzz
// target's invariant check.
func exercise(t testing.TB, tab *pclntab.Table, budget int) {
	n := tab.NumFuncs()
	for range tab.Files() {
	}
	var frames []pclntab.Frame
	for i := 0; i < n && budget > 0; i++ {
		fn := tab.Func(i)
		if fn.End < fn.Entry {
			t.Fatalf("func %d: End %#x < Entry %#x", i, fn.End, fn.Entry)
		}
		if fn.End > fn.Entry {
			if j, ok := tab.FindFunc(fn.Entry); !ok || tab.Func(j).Entry != fn.Entry {
				t.Fatalf("FindFunc(%#x) = %d, %v for func %d", fn.Entry, j, ok, i)
			}
		}
		prevEnd := uint64(0)
		for r := range tab.Rows(i) {
			budget--
			if r.Start >= r.End || r.Start < fn.Entry || r.End > fn.End || (prevEnd != 0 && r.Start != prevEnd) {
				t.Fatalf("func %d %#x-%#x: bad row %+v after %#x", i, fn.Entry, fn.End, r, prevEnd)
			}
			prevEnd = r.End
			for _, pc := range []uint64{r.Start, r.End - 1} {
				var ok bool
				frames, ok = tab.Lookup(pc, frames[:0])
				if !ok || len(frames) == 0 {
					t.Fatalf("Lookup(%#x) in func %d found nothing", pc, i)
				}
				if len(frames) > 1025 {
					t.Fatalf("Lookup(%#x): %d frames", pc, len(frames))
				}
				f := frames[0]
				if f.PC != pc || f.File != r.File || f.Line != r.Line {
					t.Fatalf("Lookup(%#x) = %+v; row %+v", pc, f, r)
				}
				if f.Inlined && r.InlIndex < 0 {
					t.Fatalf("Lookup(%#x) inlined; row %+v", pc, r)
				}
				if r.InlIndex >= 0 {
					if node, ok := tab.InlineNode(i, r.InlIndex); ok && (!f.Inlined || node.Name != f.Function) {
						t.Fatalf("Lookup(%#x) = %+v; node %d %+v", pc, f, r.InlIndex, node)
					}
				}
			}
			if budget <= 0 {
				break
			}
		}
	}
	for _, pc := range []uint64{0, ^uint64(0), tab.TextStart()} {
		tab.Lookup(pc, frames[:0])
	}
}

// TestHostile feeds Parse truncations and corruptions of a real table; what
// parses must still pass exercise, and nothing may panic.
func TestHostile(t *testing.T) {
	data, meta := readSeed(t)
	opts := meta.options()
	budget, flips := 300, 1500
	if testing.Short() {
		budget, flips = 100, 300
	}
	try := func(what string, p []byte) {
		tab, err := pclntab.Parse(p, opts)
		if err != nil {
			return
		}
		exercise(t, tab, budget)
	}
	// Truncations: every length in the header, then steps across the table.
	for n := 0; n < 200; n++ {
		try("truncated", data[:n])
	}
	for n := 200; n < len(data); n += len(data)/250 + 1 {
		try("truncated", data[:n])
	}
	// Corruptions: random bytes anywhere, and targeted at the function
	// table and records, where offsets live.
	pclnOff := binary.LittleEndian.Uint64(data[8+7*8:])
	nfunc := binary.LittleEndian.Uint64(data[8:])
	rng := rand.New(rand.NewPCG(1, 2))
	p := make([]byte, len(data))
	for k := range flips {
		copy(p, data)
		var at int
		switch k % 3 {
		case 0:
			at = rng.IntN(len(p))
		case 1:
			at = int(pclnOff) + rng.IntN(int(2*nfunc+1)*4)
		case 2:
			fi := rng.Uint64N(nfunc)
			off := binary.LittleEndian.Uint32(data[pclnOff+(2*fi+1)*4:])
			at = int(pclnOff) + int(off) + rng.IntN(64)
		}
		for j := range 1 + rng.IntN(4) {
			if at+j < len(p) {
				p[at+j] = byte(rng.Uint32())
			}
		}
		try("corrupted", p)
	}
}

// FuzzParse parses arbitrary tables with arbitrary options and checks the
// invariants of exercise. Seeds: the stored real table and the synthetic
// tables of every layout.
func FuzzParse(f *testing.F) {
	data, meta := readSeed(f)
	f.Add(data, []byte(nil), meta.Addr, uint64(0), meta.TextStart, meta.GoFunc)
	for _, s := range synthTables() {
		pcln, mem := s.build()
		opts := s.options()
		f.Add(pcln, mem[0].Data, opts.Addr, mem[0].Addr, uint64(0), uint64(0))
	}
	f.Fuzz(func(t *testing.T, data, mem []byte, addr, memAddr, text, gofunc uint64) {
		opts := pclntab.Options{Addr: addr, TextStart: text, GoFunc: gofunc}
		if mem != nil {
			opts.Memory = []pclntab.Region{{Addr: memAddr, Data: mem}}
		}
		tab, err := pclntab.Parse(data, opts)
		if err != nil {
			return
		}
		exercise(t, tab, 300)
		pclntab.FindModuledata(data, addr, opts.Memory)
	})
}
