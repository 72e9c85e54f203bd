package testenv_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/backtrail/backtrail/internal/testenv"
)

func TestLookPath(t *testing.T) {
	p, err := testenv.LookPath("go")
	if err != nil {
		t.Fatalf("LookPath(go): %v", err)
	}
	if !filepath.IsAbs(p) {
		t.Errorf("LookPath(go) = %q, want an absolute path", p)
	}
	if testenv.HasTool("backtrail-no-such-tool") {
		t.Errorf("HasTool(backtrail-no-such-tool) = true")
	}
}

// recorder is a testing.TB that records Fatal and Skip instead of stopping.
type recorder struct {
	testing.TB
	fatal, skip string
}

func (r *recorder) Helper()               {}
func (r *recorder) Fatal(args ...any)     { r.fatal = fmt.Sprint(args...) }
func (r *recorder) Skip(args ...any)      { r.skip = fmt.Sprint(args...) }
func (r *recorder) Fatalf(string, ...any) { panic("unexpected Fatalf") }

func TestToolMissing(t *testing.T) {
	for _, tt := range []struct {
		ci    string
		fatal bool
	}{
		{"true", true},
		{"", false},
		{"false", false},
	} {
		t.Run("CI="+tt.ci, func(t *testing.T) {
			t.Setenv("CI", tt.ci)
			r := &recorder{TB: t}
			testenv.Tool(r, "llvm-backtrail-missing-14")
			msg := r.skip
			if tt.fatal {
				msg = r.fatal
			}
			if msg == "" {
				t.Fatalf("Tool with CI=%q: fatal=%q skip=%q, want fatal=%v", tt.ci, r.fatal, r.skip, tt.fatal)
			}
			for _, want := range []string{"llvm-backtrail-missing-14", "llvm-14"} {
				if !strings.Contains(msg, want) {
					t.Errorf("message %q does not mention %q", msg, want)
				}
			}
		})
	}
}

func TestPackage(t *testing.T) {
	for _, tt := range []struct{ tool, want string }{
		{"gcc-12", "gcc-12"},
		{"g++", "g++-12"},
		{"clang++-14", "clang-14"},
		{"ld64.lld-14", "lld-14"},
		{"llvm-symbolizer-14", "llvm-14"},
		{"dsymutil-14", "llvm-14"},
		{"objcopy", "binutils"},
		{"eu-readelf", "elfutils"},
		{"aarch64-linux-gnu-gcc", "gcc-aarch64-linux-gnu"},
		{"rustc", "rustup"},
	} {
		if got := testenv.Package(tt.tool); !strings.Contains(got, tt.want) {
			t.Errorf("Package(%q) = %q, want it to mention %q", tt.tool, got, tt.want)
		}
	}
}

func TestRepoRoot(t *testing.T) {
	root := testenv.RepoRoot(t)
	mod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(mod), "module github.com/backtrail/backtrail\n") {
		t.Errorf("RepoRoot = %s, whose go.mod starts %.40q", root, mod)
	}
	if got, want := testenv.Testdata(t, "src", "c"), filepath.Join(root, "testdata", "src", "c"); got != want {
		t.Errorf("Testdata(src, c) = %s, want %s", got, want)
	}
}
