//go:build linux && (amd64 || arm64)

package dump_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/backtrail/backtrail/debugfile"
	"github.com/backtrail/backtrail/debugfile/elf"
	"github.com/backtrail/backtrail/dump"
	"github.com/backtrail/backtrail/internal/testenv"
	"github.com/backtrail/backtrail/symbolize"
	"github.com/backtrail/backtrail/symcache"
)

// TestDebuginfod dumps a target whose debug information was split off
// and is only on a debuginfod server (a local one, serving
// /buildid/<id>/debuginfo): the dump downloads it into the cache once, and
// frames get files and lines.
func TestDebuginfod(t *testing.T) {
	objcopy := testenv.Tool(t, "objcopy")
	exe := buildTarget(t, variants[1])
	dir := t.TempDir()
	stripped := filepath.Join(dir, "parked")
	debug := filepath.Join(dir, "parked.debug")
	for _, args := range [][]string{
		{"--only-keep-debug", exe, debug},
		{"--strip-debug", exe, stripped},
	} {
		if b, err := exec.Command(objcopy, args...).CombinedOutput(); err != nil {
			t.Fatalf("objcopy %q: %v\n%s", args, err, b)
		}
	}
	os.Chmod(stripped, 0o755)
	debugBytes, err := os.ReadFile(debug)
	if err != nil {
		t.Fatal(err)
	}
	f, err := debugfile.Open(exe)
	if err != nil {
		t.Fatal(err)
	}
	id := f.Objects[0].CodeID
	f.Close()
	var hits atomic.Int32
	var asked atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked.Store(r.URL.Path)
		if r.URL.Path != "/buildid/"+id+"/debuginfo" {
			http.NotFound(w, r)
			return
		}
		hits.Add(1)
		w.Write(debugBytes)
	}))
	defer srv.Close()

	tg := start(t, stripped, "-t", "2", "-d", "3")
	cache := t.TempDir()
	for i := 0; i < 2; i++ {
		d, err := dump.Dump(context.Background(), tg.pid, dump.Options{Debuginfod: []string{srv.URL}, CacheDir: cache, DebugDirs: []string{t.TempDir()}})
		if err != nil {
			t.Fatal(err)
		}
		lines := 0
		for _, th := range d.Threads {
			for _, f := range th.Frames {
				if f.Module == "parked" && strings.HasSuffix(f.File, "parked.c") && f.Line > 0 {
					lines++
				}
			}
		}
		if lines == 0 {
			t.Errorf("dump %d: no file:line in the target (server asked for %v)", i, asked.Load())
		}
	}
	if hits.Load() != 1 {
		t.Errorf("%d downloads, want 1 (then the cache)", hits.Load())
	}
}

// TestCancel cancels a dump midway, as SIGINT does in the command: Dump
// returns the context's error and no thread stays stopped.
func TestCancel(t *testing.T) {
	exe := buildTarget(t, variants[1])
	tg := start(t, exe, "-t", "300", "-d", "3")
	for _, freeze := range []bool{false, true} {
		ctx, cancel := context.WithCancel(context.Background())
		go func() {
			time.Sleep(3 * time.Millisecond)
			cancel()
		}()
		_, err := dump.Dump(ctx, tg.pid, dump.Options{Freeze: freeze, NoSymbols: true})
		t.Logf("freeze=%v: %v", freeze, err)
		tg.checkRunning()
		cancel()
	}
}

// TestDecompressedCopy dumps a target whose debug information sits in a
// separate, compressed debug file under a .build-id tree, as distributions
// ship them: the first dump leaves an uncompressed copy in the cache, and
// its symcache beside it, and that dump, the next one (from the symcache),
// one whose cache cannot be written (from the compressed file, indexed
// lazily) and those that find a damaged symcache or another object's in
// its place (and build it again), one that cannot write it and one over
// the size limit for building (both indexed lazily, the latter with no
// symcache made) agree frame for frame.
func TestDecompressedCopy(t *testing.T) {
	objcopy := testenv.Tool(t, "objcopy")
	exe := buildTarget(t, variants[1])
	f, err := debugfile.Open(exe)
	if err != nil {
		t.Fatal(err)
	}
	id := f.Objects[0].CodeID
	f.Close()
	dir, debugDir := t.TempDir(), t.TempDir()
	stripped := filepath.Join(dir, "parked")
	debug := filepath.Join(debugDir, ".build-id", id[:2], id[2:]+".debug")
	os.MkdirAll(filepath.Dir(debug), 0o755)
	for _, args := range [][]string{
		{"--only-keep-debug", "--compress-debug-sections=zlib", exe, debug},
		{"--strip-debug", exe, stripped},
	} {
		if b, err := exec.Command(objcopy, args...).CombinedOutput(); err != nil {
			t.Fatalf("objcopy %q: %v\n%s", args, err, b)
		}
	}
	os.Chmod(stripped, 0o755)

	tg := start(t, stripped, "-t", "3", "-d", "4", "-v")
	cache := t.TempDir()
	copied := filepath.Join(cache, ".build-id", id[:2], id[2:]+".debug")
	notDir := filepath.Join(dir, "parked") // a file: the cache cannot be made under it
	var texts []string
	for i, tt := range []struct{ cache, want string }{
		{cache, copied}, {cache, copied}, {notDir, debug},
	} {
		d, err := dump.Dump(context.Background(), tg.pid, dump.Options{CacheDir: tt.cache, DebugDirs: []string{debugDir}})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range d.Modules {
			if m.Name == "parked" && m.DebugFile != tt.want {
				t.Errorf("dump %d: debug file %q, want %q", i, m.DebugFile, tt.want)
			}
		}
		var b strings.Builder
		lines := 0
		for _, th := range d.Threads {
			b.WriteString(text(th))
			for _, f := range th.Frames {
				if f.Module == "parked" && strings.HasSuffix(f.File, "parked.c") && f.Line > 0 {
					lines++
				}
			}
		}
		if lines == 0 {
			t.Errorf("dump %d: no file:line in the target\n%s", i, b.String())
		}
		texts = append(texts, b.String())
	}
	if texts[1] != texts[0] || texts[2] != texts[0] {
		t.Errorf("dumps differ:\nfirst:\n%s\nfrom the copy:\n%s\nwithout a cache:\n%s", texts[0], texts[1], texts[2])
	}
	index := filepath.Join(cache, ".build-id", id[:2], id[2:]+".symcache")
	checkIndex := func(when string) {
		t.Helper()
		sc, err := symcache.Open(index)
		if err != nil {
			t.Fatalf("%s: %v", when, err)
		}
		defer sc.Close()
		if got := sc.Info().CodeID; got != id {
			t.Errorf("%s: the symcache is of %s, want %s", when, got, id)
		}
	}
	checkIndex("after the first dumps")
	// dumpText dumps the target with the cache and returns its threads.
	dumpText := func() string {
		t.Helper()
		d, err := dump.Dump(context.Background(), tg.pid, dump.Options{CacheDir: cache, DebugDirs: []string{debugDir}})
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		for _, th := range d.Threads {
			b.WriteString(text(th))
		}
		return b.String()
	}
	other, err := debugfile.Open(filepath.Join("..", "testdata", "sentry-symbolic", "linux", "crash.debug"))
	if err != nil {
		t.Fatal(err)
	}
	o := other.Objects[0]
	otherIndex, err := symbolize.BuildObject(o, o, symbolize.BuildOptions{})
	other.Close()
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []struct {
		name string
		data []byte
	}{{"a damaged", []byte("BTSC not a symcache")}, {"another object's", otherIndex}} {
		if err := os.WriteFile(index, bad.data, 0o600); err != nil {
			t.Fatal(err)
		}
		if got := dumpText(); got != texts[0] {
			t.Errorf("with %s symcache in the cache: dump differs:\n%s\nwant:\n%s", bad.name, got, texts[0])
		}
		checkIndex("after a dump that found " + bad.name + " symcache")
	}
	// Where no symcache can be written (a directory holds its place), the
	// debug file is indexed lazily.
	if err := os.Remove(index); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(index, "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got := dumpText(); got != texts[0] {
		t.Errorf("with the symcache unwritable: dump differs:\n%s\nwant:\n%s", got, texts[0])
	}
	os.RemoveAll(index)
	// A debug file over the limit is indexed lazily, with no symcache made.
	defer dump.SetCacheBuildMax(1)()
	if got := dumpText(); got != texts[0] {
		t.Errorf("over the size limit: dump differs:\n%s\nwant:\n%s", got, texts[0])
	}
	if _, err := os.Stat(index); !os.IsNotExist(err) {
		t.Errorf("over the size limit: a symcache was built (%v)", err)
	}
	ef, err := elf.Open(copied)
	if err != nil {
		t.Fatal(err)
	}
	defer ef.Close()
	if ef.HasCompressedSections() {
		t.Errorf("%s has compressed sections", copied)
	}
}
