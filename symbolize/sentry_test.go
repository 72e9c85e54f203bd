package symbolize_test

import (
	"bufio"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/backtrail/backtrail/debugfile"
	"github.com/backtrail/backtrail/demangle"
	"github.com/backtrail/backtrail/symbolize"
	"github.com/backtrail/backtrail/symcache"
)

// The snapshots of getsentry/symbolic's symcache tests record, for its
// fixture files, every function start (relative to the image base) with its
// name, and the inline frames of one address. Our symcache must give the
// same function at each of those starts and the same frames.

const sentry = "../testdata/sentry-symbolic"

func buildSymcache(t *testing.T, path string) (*symcache.File, *debugfile.Object) {
	t.Helper()
	f, err := debugfile.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	o := f.Objects[0]
	data, err := symbolize.BuildObject(o, o, symbolize.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sc, err := symcache.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	return sc, o
}

// snapshotFunctions reads a FunctionsDebug snapshot: lines of "hexaddr name".
func snapshotFunctions(t *testing.T, name string) map[uint64]string {
	f, err := os.Open(filepath.Join(sentry, "symcache-snapshots", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[uint64]string{}
	sc := bufio.NewScanner(f)
	dashes := 0
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "---" {
			dashes++
			continue
		}
		if dashes < 2 || line == "" {
			continue
		}
		addr, name, ok := strings.Cut(line, " ")
		a, err := strconv.ParseUint(addr, 16, 64)
		if !ok || err != nil {
			t.Fatalf("%s: bad line %q", name, line)
		}
		out[a] = name
	}
	return out
}

func outermost(l symcache.Loc) string {
	for {
		p, ok := l.Parent()
		if !ok {
			break
		}
		l = p
	}
	if fn, ok := l.Function(); ok {
		return fn.Name()
	}
	return ""
}

func TestSentryFunctions(t *testing.T) {
	for _, tt := range []struct{ snap, file string }{
		{"test_writer__functions_linux.snap", "linux/crash.debug"},
		{"test_writer__functions_macos.snap", "macos/crash.dSYM"},
		{"test_writer__overlapping_funcs.snap", "macos/overlapping_funcs.dSYM"},
	} {
		t.Run(tt.snap, func(t *testing.T) {
			want := snapshotFunctions(t, tt.snap)
			sc, o := buildSymcache(t, filepath.Join(sentry, tt.file))
			syms, err := o.Symbols()
			if err != nil {
				t.Fatal(err)
			}
			aliases := map[uint64]map[string]bool{}
			for _, s := range syms {
				if aliases[s.Addr] == nil {
					aliases[s.Addr] = map[string]bool{}
				}
				aliases[s.Addr][s.Name] = true
			}
			same := 0
			for rel, name := range want {
				l, ok := sc.Lookup(o.ImageVMAddr + rel)
				got := ""
				if ok {
					got = outermost(l)
				}
				if got == name {
					same++
					continue
				}
				// Where several symbols share an address (C1/C2
				// constructor aliases, gcc's .localalias copies), we name
				// the one llvm-symbolizer names — the last in the table —
				// while Sentry may pick another alias.
				if a := aliases[o.ImageVMAddr+rel]; a[got] && a[name] {
					continue
				}
				t.Errorf("%#x: function %q, want %q", rel, got, name)
			}
			if same < len(want)*3/4 {
				t.Errorf("only %d of %d functions named identically", same, len(want))
			}
		})
	}
}

// TestSentryLookup is test_cache__lookup.snap: the inline frames of macOS
// relative address 0xdc15 in crash.dSYM.
func TestSentryLookup(t *testing.T) {
	sc, o := buildSymcache(t, filepath.Join(sentry, "macos/crash.dSYM"))
	tab := symbolize.NewTable(sc, demangle.Full)
	frames := tab.Frames(o.ImageVMAddr+0xdc15, nil)
	want := []struct {
		file string
		line uint32
		fn   string
	}{
		{"/Users/travis/build/getsentry/breakpad-tools/macos/main.cpp", 21, "_ZN12_GLOBAL__N_15crashEv"},
		{"/Users/travis/build/getsentry/breakpad-tools/macos/main.cpp", 25, "_ZN12_GLOBAL__N_15startEv"},
		{"/Users/travis/build/getsentry/breakpad-tools/macos/main.cpp", 32, "main"},
	}
	if len(frames) != len(want) {
		t.Fatalf("%d frames, want %d: %+v", len(frames), len(want), frames)
	}
	for i, w := range want {
		f := frames[i]
		// Sentry cleans ".." out of paths; llvm-symbolizer, and the
		// symcache, keep them as DWARF spells them.
		if path.Clean(f.File) != w.file || f.Line != w.line || f.RawFunction != w.fn || f.Inlined != (i < len(want)-1) {
			t.Errorf("frame %d = %s %s:%d inlined=%v, want %s %s:%d", i, f.RawFunction, f.File, f.Line, f.Inlined, w.fn, w.file, w.line)
		}
	}
}
