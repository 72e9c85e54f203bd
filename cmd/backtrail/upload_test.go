package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/backtrail/backtrail/internal/fixture"
	"github.com/backtrail/backtrail/internal/servertest"
	"github.com/backtrail/backtrail/server"
)

// TestUpload sends debug files to a real server: a binary built with
// -gsplit-dwarf goes with the symcache of its .dwo files, a second upload
// of the same sends nothing, a copy whose split DWARF is gone goes alone
// with a warning (and debugfile info counts its units without it), and a
// symcache goes as it is.
func TestUpload(t *testing.T) {
	srv := servertest.Start(t, servertest.Options{})
	upload := func(paths ...string) (stdout, stderr string) {
		t.Helper()
		args := append([]string{"upload", "--url", srv.URL, "--token", srv.AdminToken}, paths...)
		code, stdout, stderr := runCode(args...)
		if code != 0 {
			t.Fatalf("upload %v: exit %d: %s", paths, code, stderr)
		}
		return stdout, stderr
	}
	listed := func() (formats []string) {
		t.Helper()
		var fs []*server.DebugFile
		srv.Get(t, "/api/v1/debug-files", &fs)
		for _, f := range fs {
			formats = append(formats, f.Name+" "+f.Format+" "+strings.Join(f.Features, ","))
		}
		slices.Sort(formats)
		return formats
	}

	dwo := fixture.Build(t, fixture.Spec{Lang: "c", Compiler: "gcc", Opt: 2, DWARF: 5, Fission: "dwo"})
	name := filepath.Base(dwo.Path)
	if out, warned := upload(dwo.Path); !strings.Contains(out, "2 uploaded, 0 already on the server") || warned != "" {
		t.Errorf("first upload said %q, warned %q", out, warned)
	}
	want := []string{name + " elf symtab,debug,unwind", name + ".symcache symcache symtab,debug"}
	if got := listed(); !slices.Equal(got, want) {
		t.Errorf("server lists %q, want %q", got, want)
	}
	if out, _ := upload(dwo.Path); !strings.Contains(out, "0 uploaded, 2 already on the server") {
		t.Errorf("second upload said %q", out)
	}

	dwp := fixture.Build(t, fixture.Spec{Lang: "c", Compiler: "gcc", Opt: 2, DWARF: 4, Fission: "dwp"})
	lone := filepath.Join(t.TempDir(), filepath.Base(dwp.Path))
	data, err := os.ReadFile(dwp.Path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(lone, data, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, warned := upload(lone); !strings.Contains(out, "1 uploaded") || !strings.Contains(warned, "split DWARF") {
		t.Errorf("upload without the package said %q, warned %q", out, warned)
	}
	// debugfile info tells the two apart.
	for path, want := range map[string]string{
		dwo.Path: "split DWARF:  3 units, 0 without their split file\n",
		lone:     "split DWARF:  3 units, 3 without their split file\n",
	} {
		if code, out, stderr := runCode("debugfile", "info", path); code != 0 || !strings.Contains(out, want) {
			t.Errorf("debugfile info %s: exit %d, %s%s, want %q", path, code, out, stderr, want)
		}
	}

	sc := filepath.Join(t.TempDir(), "calc.symcache")
	if code, _, stderr := runCode("symcache", "build", "-o", sc, dwp.Path); code != 0 {
		t.Fatalf("symcache build: exit %d: %s", code, stderr)
	}
	if out, _ := upload(sc); !strings.Contains(out, "1 uploaded, 0 already on the server") {
		t.Errorf("symcache upload said %q", out)
	}
	want = append(want, filepath.Base(lone)+" elf symtab,debug,unwind", "calc.symcache symcache symtab,debug")
	slices.Sort(want)
	if got := listed(); !slices.Equal(got, want) {
		t.Errorf("server lists %q, want %q", got, want)
	}
}
