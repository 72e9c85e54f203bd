package rust_test

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/backtrail/backtrail/demangle/rust"
	"github.com/backtrail/backtrail/internal/testenv"
)

var update = flag.Bool("update", false, "regenerate the symbol lists in testdata with rustc and the generator")

// The lists of names that TestLLVMPeer compares with llvm-cxxfilt-14 (see
// testdata/README.md). With -update they are made again: testdata/symbols.rs
// compiled by rustc with v0 mangling and with its default (legacy) mangling
// at opt-level 0 and 2, whose symbols include thousands of the standard
// library's; testdata/nightly.rs compiled by a nightly rustc, if there is
// one; and names from generateV0. crafted.txt is written by hand.
var lists = []struct {
	file string
	make func(t *testing.T) []string
}{
	{"v0.txt.gz", func(t *testing.T) []string { return rustcSymbols(t, "v0", "_R") }},
	{"legacy.txt.gz", func(t *testing.T) []string { return rustcSymbols(t, "legacy", "_ZN") }},
	{"nightly.txt", nightlySymbols},
	{"generated.txt.gz", func(t *testing.T) []string { return generateV0(1, 10000) }},
	{"crafted.txt", nil},
}

// TestLLVMPeer checks that the LLVM style prints every name exactly as
// llvm-cxxfilt-14 does, and fails only where llvm-cxxfilt-14 does.
func TestLLVMPeer(t *testing.T) {
	if *update {
		for _, l := range lists {
			if l.make == nil {
				continue
			}
			if names := l.make(t); names != nil {
				writeList(t, l.file, names)
			}
		}
	}
	var names []string
	for _, l := range lists {
		names = append(names, readList(t, l.file)...)
	}
	want := runPeer(t, testenv.Tool(t, "llvm-cxxfilt-14"), names)
	match, demangled := 0, 0
	for i, name := range names {
		got, err := rust.Demangle(name, rust.Options{Style: rust.LLVM})
		if err != nil {
			got = name
		} else {
			demangled++
		}
		if got == want[i] {
			match++
			continue
		}
		if len(names)-match <= 20 {
			t.Errorf("Demangle(%q, LLVM) = %q, %v\nllvm-cxxfilt-14 prints %q", name, got, err, want[i])
		}
	}
	t.Logf("%d of %d names as llvm-cxxfilt-14 prints them (%d demangled)", match, len(names), demangled)
	if match != len(names) {
		t.Errorf("%d names differ", len(names)-match)
	}
}

// TestRealSymbols checks the Full and Short styles over the names rustc
// emitted: every one demangles, and the styles relate to the LLVM style as
// they should. For v0 names, Full is LLVM without the " (.suffix)" (LLVM 14
// and rustc-demangle differ only in the quoting of non-ASCII chars); for
// legacy names, Full is LLVM without the hash element and with the escapes
// decoded. Short is Full without the suffix.
func TestRealSymbols(t *testing.T) {
	for _, file := range []string{"v0.txt.gz", "legacy.txt.gz", "nightly.txt"} {
		for _, name := range readList(t, file) {
			full, err := rust.Demangle(name, rust.Options{})
			if err != nil {
				t.Errorf("Demangle(%q, Full): %v", name, err)
				continue
			}
			short, err := rust.Demangle(name, rust.Options{Style: rust.Short})
			if err != nil {
				t.Errorf("Demangle(%q, Short): %v", name, err)
				continue
			}
			suffix := ""
			if strings.HasPrefix(name, "_ZN") {
				// After the hash, "17h" and 16 hex digits, and 'E'.
				suffix = name[strings.LastIndex(name, "17h")+len("17h0123456789abcdefE"):]
			} else if i := strings.IndexByte(name, '.'); i >= 0 {
				suffix = name[i:]
			}
			if strings.HasPrefix(suffix, ".llvm.") {
				suffix = ""
			}
			if full != short+suffix {
				t.Errorf("%q: Full %q is not Short %q with the suffix %q", name, full, short, suffix)
			}
			llvm, err := rust.Demangle(name, rust.Options{Style: rust.LLVM})
			if errors.Is(err, rust.ErrUnsupported) {
				continue
			}
			if err != nil {
				t.Errorf("Demangle(%q, LLVM): %v", name, err)
				continue
			}
			if i := strings.Index(llvm, " (."); i >= 0 {
				llvm = llvm[:i]
			}
			if strings.HasPrefix(name, "_ZN") {
				llvm = decodeLegacy(strings.TrimSuffix(llvm, llvm[strings.LastIndex(llvm, "::h"):]))
			}
			if llvm != short && !strings.Contains(name, "Kc") {
				t.Errorf("%q: Short %q, but LLVM %q", name, short, llvm)
			}
		}
	}
}

// decodeLegacy decodes the escapes of legacy path elements joined by "::",
// a simpler version of what the Full style does, for names that need no
// more.
func decodeLegacy(s string) string {
	names := map[string]string{"LT": "<", "GT": ">", "RF": "&", "BP": "*", "LP": "(", "RP": ")", "C": ",", "SP": "@"}
	var b strings.Builder
	for i, e := range strings.Split(s, "::") {
		if i > 0 {
			b.WriteString("::")
		}
		if strings.HasPrefix(e, "_$") {
			e = e[1:]
		}
		for e != "" {
			switch {
			case strings.HasPrefix(e, ".."):
				b.WriteString("::")
				e = e[2:]
			case e[0] == '$' && strings.IndexByte(e[1:], '$') > 0:
				j := strings.IndexByte(e[1:], '$') + 1
				esc := e[1:j]
				if c, ok := names[esc]; ok {
					b.WriteString(c)
				} else if v, err := strconv.ParseUint(strings.TrimPrefix(esc, "u"), 16, 32); err == nil {
					b.WriteRune(rune(v))
				}
				e = e[j+1:]
			default:
				b.WriteByte(e[0])
				e = e[1:]
			}
		}
	}
	return b.String()
}

// runPeer passes names through a filter tool, one a line, and returns its
// output lines.
func runPeer(t testing.TB, tool string, names []string) []string {
	t.Helper()
	cmd := exec.Command(tool)
	cmd.Stdin = strings.NewReader(strings.Join(names, "\n") + "\n")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v\n%s", tool, err, stderr.Bytes())
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != len(names) {
		t.Fatalf("%s printed %d lines for %d names", tool, len(lines), len(names))
	}
	return lines
}

// readList reads a list of names from testdata, gunzipping a .gz file.
func readList(t testing.TB, file string) []string {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(file, ".gz") {
		zr, err := gzip.NewReader(f)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		r = zr
	}
	var names []string
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if line := sc.Text(); line != "" {
			names = append(names, line)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	if len(names) == 0 {
		t.Fatalf("%s: no names", file)
	}
	return names
}

// writeList writes a list of names to testdata, gzipped without a name or
// time in the header if the file name ends in .gz.
func writeList(t *testing.T, file string, names []string) {
	t.Helper()
	var buf bytes.Buffer
	var w io.Writer = &buf
	var zw *gzip.Writer
	if strings.HasSuffix(file, ".gz") {
		zw, _ = gzip.NewWriterLevel(&buf, gzip.BestCompression)
		w = zw
	}
	for _, n := range names {
		fmt.Fprintln(w, n)
	}
	if zw != nil {
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join("testdata", file), buf.Bytes(), 0o666); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %d names to testdata/%s", len(names), file)
}

// rustcSymbols compiles testdata/symbols.rs with rustc at opt-level 0 and
// 2, with v0 mangling or rustc's default, legacy, and returns the defined
// symbols that start with prefix.
func rustcSymbols(t *testing.T, mangling, prefix string) []string {
	rustc := testenv.Tool(t, "rustc")
	dir := t.TempDir()
	var all []string
	for _, opt := range []string{"0", "2"} {
		exe := filepath.Join(dir, mangling+opt)
		args := []string{"--edition", "2021", "-C", "opt-level=" + opt, "-o", exe}
		if mangling == "v0" {
			args = append(args, "-C", "symbol-mangling-version=v0")
		}
		cmd := exec.Command(rustc, append(args, filepath.Join("testdata", "symbols.rs"))...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", cmd, err, out)
		}
		all = append(all, symbols(t, exe, prefix)...)
	}
	names := uniq(all)
	if len(names) == 0 {
		t.Fatalf("rustc (%s mangling) emitted no symbols starting %q", mangling, prefix)
	}
	return names
}

// nightlySymbols compiles testdata/nightly.rs with rustup's nightly
// toolchain and returns the v0 symbols of its crate, or nil, keeping the
// list, if there is no nightly toolchain.
func nightlySymbols(t *testing.T) []string {
	rustup, err := testenv.LookPath("rustup")
	if err != nil {
		t.Logf("no rustup: keeping testdata/nightly.txt")
		return nil
	}
	exe := filepath.Join(t.TempDir(), "nightly")
	cmd := exec.Command(rustup, "run", "nightly", "rustc", "-C", "symbol-mangling-version=v0", "-o", exe,
		filepath.Join("testdata", "nightly.rs"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Logf("no nightly rustc (%v): keeping testdata/nightly.txt\n%s", err, out)
		return nil
	}
	var names []string
	for _, n := range symbols(t, exe, "_R") {
		if strings.Contains(n, "7nightly") {
			names = append(names, n)
		}
	}
	return names
}

// symbols lists the defined symbols of a file with llvm-nm-14 whose names
// start with prefix.
func symbols(t *testing.T, file, prefix string) []string {
	nm := testenv.Tool(t, "llvm-nm-14")
	cmd := exec.Command(nm, "--defined-only", file)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v", cmd, err)
	}
	var names []string
	for _, line := range strings.Split(string(out), "\n") {
		if f := strings.Fields(line); len(f) > 0 && strings.HasPrefix(f[len(f)-1], prefix) {
			names = append(names, f[len(f)-1])
		}
	}
	return names
}

func uniq(names []string) []string {
	sort.Strings(names)
	out := names[:0]
	for i, n := range names {
		if i == 0 || n != names[i-1] {
			out = append(out, n)
		}
	}
	return out
}

// generateV0 returns n v0 names made at random from the grammar, with
// seed: paths, types and consts of every kind, back-references that point
// anywhere before them, suffixes, and, in a quarter of the names, a few
// bytes changed, dropped or inserted, so that both demanglers' errors are
// compared too.
func generateV0(seed int64, n int) []string {
	g := &generator{r: rand.New(rand.NewSource(seed))}
	names := make([]string, n)
	for i := range names {
		names[i] = g.symbol()
	}
	return names
}

type generator struct {
	r *rand.Rand
	b strings.Builder
}

const base62Digits = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"

func (g *generator) n(k int) int { return g.r.Intn(k) }

func (g *generator) pick(s string) { g.b.WriteByte(s[g.n(len(s))]) }

func (g *generator) symbol() string {
	g.b.Reset()
	g.b.WriteString("_R")
	g.path(0)
	if g.n(5) == 0 {
		g.b.WriteString("C")
		g.ident()
	}
	if g.n(6) == 0 {
		g.b.WriteString([]string{".llvm.123", ".cold", "$x", ".a.b"}[g.n(4)])
	}
	s := []byte(g.b.String())
	if g.n(4) == 0 {
		for k := 0; k < 1+g.n(3) && len(s) > 3; k++ {
			p := 2 + g.n(len(s)-2)
			switch g.n(3) {
			case 0:
				s[p] = base62Digits[g.n(62)]
			case 1:
				s = append(s[:p], s[p+1:]...)
			case 2:
				s = append(s[:p], append([]byte{"_EBK0"[g.n(5)]}, s[p:]...)...)
			}
		}
	}
	return string(s)
}

func (g *generator) base62() {
	if g.n(4) == 0 {
		g.b.WriteString("_")
		return
	}
	for k := 1 + g.n(2); k > 0; k-- {
		g.pick(base62Digits)
	}
	g.b.WriteString("_")
}

var generatorIdents = []string{"foo", "bar", "Vec", "core", "_x", "a1", "new", "9lives", "", "u", "caf_dma", "gdr_8da", "ma_gtb"}

func (g *generator) ident() {
	id := generatorIdents[g.n(len(generatorIdents))]
	if strings.Contains(id, "_") && len(id) > 2 && id[0] != '_' && g.n(2) == 0 {
		g.b.WriteString("u")
	}
	g.b.WriteString(strconv.Itoa(len(id)))
	if id != "" && (id[0] == '_' || '0' <= id[0] && id[0] <= '9') || g.n(8) == 0 {
		g.b.WriteString("_")
	}
	g.b.WriteString(id)
}

func (g *generator) dis() {
	if g.n(3) == 0 {
		g.b.WriteString("s")
		g.base62()
	}
}

// backref writes a back-reference to a random earlier offset.
func (g *generator) backref() {
	g.b.WriteString("B")
	limit := max(g.b.Len()-3, 1)
	t := g.n(limit)
	if t == 0 {
		g.b.WriteString("_")
		return
	}
	t--
	s := ""
	for {
		s = string(base62Digits[t%62]) + s
		if t /= 62; t == 0 {
			break
		}
	}
	g.b.WriteString(s + "_")
}

func (g *generator) path(d int) {
	if d > 6 {
		g.b.WriteString("C")
		g.dis()
		g.ident()
		return
	}
	switch g.n(12) {
	case 0, 1:
		g.b.WriteString("C")
		g.dis()
		g.ident()
	case 2, 3, 4:
		g.b.WriteString("N")
		g.pick("vtCSXa")
		g.path(d + 1)
		g.dis()
		g.ident()
	case 5:
		g.b.WriteString("M")
		g.dis()
		g.path(d + 1)
		g.typ(d + 1)
	case 6:
		g.b.WriteString("X")
		g.dis()
		g.path(d + 1)
		g.typ(d + 1)
		g.path(d + 1)
	case 7:
		g.b.WriteString("Y")
		g.typ(d + 1)
		g.path(d + 1)
	case 8, 9:
		g.b.WriteString("I")
		g.path(d + 1)
		for k := g.n(3); k > 0; k-- {
			g.genericArg(d + 1)
		}
		g.b.WriteString("E")
	default:
		g.backref()
	}
}

func (g *generator) genericArg(d int) {
	switch g.n(6) {
	case 0:
		g.b.WriteString("L")
		g.base62()
	case 1:
		g.b.WriteString("K")
		g.konst()
	default:
		g.typ(d)
	}
}

func (g *generator) hex() {
	k := g.n(5)
	if k == 0 {
		g.b.WriteString("0_")
		return
	}
	if g.n(10) == 0 {
		k = 17 + g.n(5)
	}
	for ; k > 0; k-- {
		g.pick("0123456789abcdef")
	}
	g.b.WriteString("_")
}

func (g *generator) konst() {
	switch g.n(10) {
	case 0:
		g.b.WriteString("p")
	case 1:
		g.b.WriteString("b")
		g.b.WriteString([]string{"0_", "1_", "2_"}[g.n(3)])
	case 2:
		g.b.WriteString("c")
		g.hex()
	case 3:
		g.backref()
	case 4:
		g.b.WriteString("Re616263_")
	default:
		g.pick("hjmlxan")
		if g.n(4) == 0 {
			g.b.WriteString("n")
		}
		g.hex()
	}
}

func (g *generator) typ(d int) {
	const basic = "abcdefhijlmnostuvxyzp"
	if d > 6 {
		g.pick(basic)
		return
	}
	switch g.n(16) {
	case 0, 1, 2, 3:
		g.pick(basic)
	case 4:
		g.b.WriteString("A")
		g.typ(d + 1)
		g.konst()
	case 5:
		g.b.WriteString("S")
		g.typ(d + 1)
	case 6:
		g.b.WriteString("T")
		for k := g.n(3); k > 0; k-- {
			g.typ(d + 1)
		}
		g.b.WriteString("E")
	case 7:
		g.pick("RQ")
		if g.n(2) == 0 {
			g.b.WriteString("L")
			g.base62()
		}
		g.typ(d + 1)
	case 8:
		g.pick("PO")
		g.typ(d + 1)
	case 9:
		g.b.WriteString("F")
		if g.n(2) == 0 {
			g.b.WriteString("G")
			g.base62()
		}
		if g.n(2) == 0 {
			g.b.WriteString("U")
		}
		if g.n(3) == 0 {
			g.b.WriteString([]string{"KC", "K6system", "K4a_b_"}[g.n(3)])
		}
		for k := g.n(3); k > 0; k-- {
			g.typ(d + 1)
		}
		g.b.WriteString("E")
		g.typ(d + 1)
	case 10:
		g.b.WriteString("D")
		if g.n(2) == 0 {
			g.b.WriteString("G")
			g.base62()
		}
		for k := g.n(3); k > 0; k-- {
			g.path(d + 1)
			if g.n(2) == 0 {
				g.b.WriteString("p4Item")
				g.typ(d + 1)
			}
		}
		g.b.WriteString("EL")
		g.base62()
	case 11:
		g.backref()
	default:
		g.path(d + 1)
	}
}
