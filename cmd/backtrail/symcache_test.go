//go:build linux

package main

import (
	"debug/elf"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/backtrail/backtrail/internal/fixture"
	"github.com/backtrail/backtrail/symcache"
)

// TestSymcacheBuildOutput checks where `symcache build -o` writes: a
// regular file is replaced whole (a reader never maps half a cache), and
// a device or pipe such as /dev/null is written in place, never replaced
// by a file (which, for /dev/null, would break the machine).
func TestSymcacheBuildOutput(t *testing.T) {
	b := fixture.Build(t, fixture.Spec{Lang: "c", Compiler: "gcc", Opt: 2, DWARF: 5})
	dir := t.TempDir()

	file := filepath.Join(dir, "obj.symcache")
	if err := os.WriteFile(file, []byte("old contents"), 0o644); err != nil {
		t.Fatal(err)
	}
	runBacktrail(t, "", "symcache", "build", "-o", file, b.Path)
	c, err := symcache.Open(file)
	if err != nil {
		t.Fatalf("built cache: %v", err)
	}
	c.Close()
	if left, _ := filepath.Glob(filepath.Join(dir, ".symcache-*")); len(left) > 0 {
		t.Errorf("temporary files left: %q", left)
	}

	// A directory that does not exist: a clear error, nothing written.
	missing := filepath.Join(dir, "no-such-dir", "obj.symcache")
	code, _, stderr := runCode("symcache", "build", "-o", missing, b.Path)
	if code == 0 || !strings.Contains(stderr, "no-such-dir") {
		t.Errorf("build into a missing directory: exit %d, stderr %q", code, stderr)
	}
	if _, err := os.Stat(filepath.Dir(missing)); !os.IsNotExist(err) {
		t.Errorf("the missing directory was created: %v", err)
	}

	fifo := filepath.Join(dir, "pipe")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	read := make(chan int64, 1)
	go func() {
		f, err := os.Open(fifo)
		if err != nil {
			read <- -1
			return
		}
		n, _ := io.Copy(io.Discard, f)
		f.Close()
		read <- n
	}()
	runBacktrail(t, "", "symcache", "build", "-o", fifo, b.Path)
	st, err := os.Lstat(fifo)
	if err != nil || st.Mode()&os.ModeNamedPipe == 0 {
		t.Fatalf("the pipe was replaced: %v, mode %v", err, st.Mode())
	}
	if n := <-read; n <= 0 {
		t.Errorf("read %d bytes from the pipe", n)
	}
}

// TestSymcacheInfo checks that a symcache records its object's producer and
// language, from the first unit's DW_AT_producer and DW_AT_language, or Go
// for a binary read through its pclntab, and that `symcache info` shows
// them.
func TestSymcacheInfo(t *testing.T) {
	for _, tc := range []struct {
		spec     fixture.Spec
		language string
		producer string // a part of it
	}{
		{fixture.Spec{Lang: "c", Compiler: "gcc", Opt: 2, DWARF: 5}, "c", "GNU C"},
		{fixture.Spec{Lang: "cxx", Compiler: "clang", Opt: 2, DWARF: 4}, "cpp", "clang version"},
		{fixture.Spec{Lang: "go", Opt: 2}, "go", "Go cmd/compile"},
		{fixture.Spec{Lang: "go", Opt: 2, Strip: true}, "go", ""},
	} {
		b := fixture.Build(t, tc.spec)
		out := filepath.Join(t.TempDir(), "obj.symcache")
		runBacktrail(t, "", "symcache", "build", "-o", out, b.Path)
		var info struct {
			Language string `json:"language"`
			Producer string `json:"producer"`
		}
		if err := json.Unmarshal([]byte(runBacktrail(t, "", "symcache", "info", "--json", out)), &info); err != nil {
			t.Fatal(err)
		}
		if info.Language != tc.language || !strings.Contains(info.Producer, tc.producer) || tc.producer == "" && info.Producer != "" {
			t.Errorf("%s: language %q, producer %q; want %q and a producer with %q", fixture.Name(tc.spec), info.Language, info.Producer, tc.language, tc.producer)
		}
		if text := runBacktrail(t, "", "symcache", "info", out); !strings.Contains(text, "language:   "+tc.language+"\n") {
			t.Errorf("%s: text output lacks the language:\n%s", fixture.Name(tc.spec), text)
		}
	}
}

// TestSymcacheInfoChecks checks that `symcache info` checks the whole
// file and fails on a corrupt one, while symbolize, which checks only what
// it reads, still answers from it.
func TestSymcacheInfoChecks(t *testing.T) {
	b := fixture.Build(t, fixture.Spec{Lang: "c", Compiler: "gcc", Opt: 2, DWARF: 5})
	file := filepath.Join(t.TempDir(), "obj.symcache")
	runBacktrail(t, "", "symcache", "build", "-o", file, b.Path)
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	// The header's count of ranges (docs/symcache.md §3), one too many.
	data[96]++
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errs := runCode("symcache", "info", file)
	if code == 0 || !strings.Contains(errs, "ranges") || !strings.Contains(errs, "offset 0x60") {
		t.Errorf("symcache info of a corrupt file: exit %d, %q; want a failure naming the range count at offset 0x60", code, errs)
	}
	ef, err := elf.Open(b.Path)
	if err != nil {
		t.Fatal(err)
	}
	defer ef.Close()
	syms, _ := ef.Symbols()
	var main uint64
	for _, s := range syms {
		if s.Name == "main" {
			main = s.Value
		}
	}
	if out := runBacktrail(t, fmt.Sprintf("%#x\n", main+1), "symbolize", "--obj", file); !strings.HasPrefix(out, "main\n") {
		t.Errorf("symbolize from the file: %q, want main's frame", out)
	}
}

// TestSymcacheBuildJSON checks that `symcache build --json` prints what
// `symcache info --json` prints about the cache it wrote, with the input
// and the build's duration, and that it refuses an output it cannot read
// back before building.
func TestSymcacheBuildJSON(t *testing.T) {
	b := fixture.Build(t, fixture.Spec{Lang: "c", Compiler: "gcc", Opt: 2, DWARF: 5})
	file := filepath.Join(t.TempDir(), "obj.symcache")
	var built struct {
		Source  string  `json:"source"`
		Seconds float64 `json:"seconds"`
	}
	out := runBacktrail(t, "", "symcache", "build", "--json", "-o", file, b.Path)
	if err := json.Unmarshal([]byte(out), &built); err != nil {
		t.Fatalf("symcache build --json: %v\n%s", err, out)
	}
	if built.Source != b.Path || built.Seconds <= 0 {
		t.Errorf("source %q, seconds %v; want %q and a duration", built.Source, built.Seconds, b.Path)
	}
	var summary, info map[string]any
	json.Unmarshal([]byte(out), &summary)
	delete(summary, "source")
	delete(summary, "seconds")
	if err := json.Unmarshal([]byte(runBacktrail(t, "", "symcache", "info", "--json", file)), &info); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(summary) != fmt.Sprint(info) || info["functions"] == float64(0) {
		t.Errorf("build --json:\n%v\ninfo --json:\n%v", summary, info)
	}

	code, stdout, stderr := runCode("symcache", "build", "--json", "-o", os.DevNull, b.Path)
	if code == 0 || stdout != "" || !strings.Contains(stderr, "must name a file") {
		t.Errorf("build --json -o %s: exit %d, stdout %q, stderr %q", os.DevNull, code, stdout, stderr)
	}
}
