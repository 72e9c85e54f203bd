package process_test

import (
	"context"
	"debug/macho"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/backtrail/backtrail/debugfile"
	"github.com/backtrail/backtrail/internal/testenv"
	"github.com/backtrail/backtrail/report"
	"github.com/backtrail/backtrail/server"
	"github.com/backtrail/backtrail/server/blob"
	"github.com/backtrail/backtrail/server/process"
	"github.com/backtrail/backtrail/server/store"
)

var ctx = context.Background()

func TestMarkInApp(t *testing.T) {
	mods := []report.Module{
		{Name: "app", Path: "/opt/app/bin/app", ImageAddr: 0x1000, ImageSize: 0x1000},
		{Name: "libc.so.6", Path: "/usr/lib/x86_64-linux-gnu/libc.so.6", ImageAddr: 0x10000, ImageSize: 0x1000},
		{Name: "UIKitCore", Path: "/Applications/My.app/Frameworks/UIKitCore", ImageAddr: 0x20000, ImageSize: 0x1000},
		{Name: "CrashLibiOS", Path: "/private/var/containers/Bundle/Application/X/My.app/Frameworks/CrashLibiOS.framework/CrashLibiOS", ImageAddr: 0x30000, ImageSize: 0x1000},
		{Name: "libsystem_kernel.dylib", Path: "/usr/lib/system/libsystem_kernel.dylib", ImageAddr: 0x40000, ImageSize: 0x1000},
		{Name: "Foundation", Path: "/System/Library/Frameworks/Foundation.framework/Foundation", ImageAddr: 0x50000, ImageSize: 0x1000},
	}
	tests := []struct {
		name  string
		frame report.Frame
		want  bool
	}{
		{"app image by address", report.Frame{Addr: 0x1010}, true},
		{"app image by name", report.Frame{Module: "app", Addr: 0x9}, true},
		{"system path", report.Frame{Addr: 0x10010}, false},
		{"system name anywhere", report.Frame{Addr: 0x20010}, false},
		{"app framework", report.Frame{Addr: 0x30010}, true},
		{"libsystem", report.Frame{Addr: 0x40010}, false},
		{"/System", report.Frame{Addr: 0x50010}, false},
		{"unknown module named like a system library", report.Frame{Module: "libpthread.so.0", Function: "start_thread"}, false},
		{"unknown module", report.Frame{Module: "libmine.so", Function: "f"}, true},
		{"Go standard library by file", report.Frame{Function: "net/http.(*conn).serve", File: "/usr/local/go/src/net/http/server.go"}, false},
		{"source frame", report.Frame{Function: "main.main", File: "/src/main.go"}, true},
		{"nothing known", report.Frame{Addr: 0x999999}, false},
	}
	for _, tt := range tests {
		r := &report.Report{Modules: mods, Threads: []report.Thread{{Frames: []report.Frame{tt.frame}}}}
		process.MarkInApp(r)
		if got := r.Threads[0].Frames[0].InApp; got != tt.want {
			t.Errorf("%s: in-app %v, want %v", tt.name, got, tt.want)
		}
	}
	// A producer that marked frames is trusted as it marked them.
	r := &report.Report{Modules: mods, Threads: []report.Thread{{Frames: []report.Frame{{Addr: 0x10010, InApp: true}, {Addr: 0x1010}}}}}
	process.MarkInApp(r)
	if f := r.Threads[0].Frames; !f[0].InApp || f[1].InApp {
		t.Errorf("marked report changed: %+v", f)
	}
}

// env is a store, a blob store and symbols over a temporary directory.
type env struct {
	db      *store.DB
	blobs   *blob.Dir
	syms    *process.Symbols
	project *server.Project
}

func newEnv(t testing.TB) *env {
	t.Helper()
	dir := t.TempDir()
	db, err := store.Open(ctx, filepath.Join(dir, "db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	blobs, err := blob.Open(filepath.Join(dir, "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := db.CreateProject(ctx, "p")
	if err != nil {
		t.Fatal(err)
	}
	return &env{db, blobs, &process.Symbols{Store: db, Blobs: blobs, CacheDir: filepath.Join(dir, "symcaches"), NegativeTTL: time.Hour}, p}
}

// add stores a debug file the way the API does and returns its records.
func (e *env) add(t testing.TB, path string) []*server.DebugFile {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	addr, size, err := e.blobs.Put(ctx, f)
	if err != nil {
		t.Fatal(err)
	}
	df, err := debugfile.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer df.Close()
	var out []*server.DebugFile
	for _, o := range df.Objects {
		rec, _, err := e.db.AddDebugFile(ctx, &server.DebugFile{ProjectID: e.project.ID, DebugID: o.DebugID.String(), CodeID: o.CodeID,
			Arch: o.Arch, Format: o.Format.String(), Kind: o.Kind.String(), Name: filepath.Base(path), Size: size, Blob: addr, Features: []string{"symtab", "debug"}})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, rec)
	}
	return out
}

// TestSymbolsLookup checks the symbol cache: absence is remembered until
// Forget, a table is found by debug id or code id, arm64e frames use an
// arm64 file, and a table built once is read from disk by a new cache.
func TestSymbolsLookup(t *testing.T) {
	e := newEnv(t)
	dwarf := testenv.Testdata(t, "crashprobe", "arm64-debug", "dSYMs", "arm64-CrashProbeiOS.app.dSYM", "Contents", "Resources", "DWARF", "CrashProbeiOS")
	const debugID, codeID = "b8fdd34a-7f2f-3268-925b-9541332f84a2", "b8fdd34a7f2f3268925b9541332f84a2"
	if _, err := e.syms.Lookup(ctx, e.project.ID, debugID, "", "arm64"); !errors.Is(err, process.ErrNoSymbols) {
		t.Fatalf("Lookup before the upload: %v, want ErrNoSymbols", err)
	}
	e.add(t, dwarf)
	if _, err := e.syms.Lookup(ctx, e.project.ID, debugID, "", "arm64"); !errors.Is(err, process.ErrNoSymbols) {
		t.Errorf("Lookup after the upload, before Forget: %v, want the remembered ErrNoSymbols", err)
	}
	e.syms.Forget(debugID, "")
	mf, err := macho.Open(dwarf)
	if err != nil {
		t.Fatal(err)
	}
	vmaddr := mf.Segment("__TEXT").Addr
	mf.Close()
	for _, tt := range []struct{ name, debugID, codeID, arch string }{
		{"debug id", debugID, "", "arm64"},
		{"debug id in upper case", "B8FDD34A-7F2F-3268-925B-9541332F84A2", "", "arm64"},
		{"code id", "", codeID, "arm64"},
		{"arm64e", debugID, "", "arm64e"},
		{"no arch", debugID, "", ""},
	} {
		tab, err := e.syms.Lookup(ctx, e.project.ID, tt.debugID, tt.codeID, tt.arch)
		if err != nil {
			t.Errorf("Lookup by %s: %v", tt.name, err)
			continue
		}
		if tab.ImageVMAddr != vmaddr {
			t.Errorf("Lookup by %s: image vmaddr 0x%x, want 0x%x (the dSYM's __TEXT)", tt.name, tab.ImageVMAddr, vmaddr)
		}
	}
	if _, err := e.syms.Lookup(ctx, e.project.ID, debugID, "", "x86_64"); !errors.Is(err, process.ErrNoSymbols) {
		t.Errorf("Lookup for x86_64: %v, want ErrNoSymbols", err)
	}
	if _, err := e.syms.Lookup(ctx, e.project.ID+1, debugID, "", "arm64"); !errors.Is(err, process.ErrNoSymbols) {
		t.Errorf("Lookup in another project: %v, want ErrNoSymbols", err)
	}
	// A second cache over the same directory finds the symcache on disk.
	ents, err := os.ReadDir(e.syms.CacheDir)
	if err != nil || len(ents) != 1 {
		t.Fatalf("cache directory holds %d files (%v), want 1", len(ents), err)
	}
	other := &process.Symbols{Store: e.db, Blobs: e.blobs, CacheDir: e.syms.CacheDir}
	if _, err := other.Lookup(ctx, e.project.ID, debugID, "", "arm64"); err != nil {
		t.Errorf("Lookup from the disk cache: %v", err)
	}
}

// TestSymbolsBuildFailure checks that a debug file that cannot be read
// yields an error naming it, and leaves nothing in the cache directory.
func TestSymbolsBuildFailure(t *testing.T) {
	e := newEnv(t)
	dwarf := testenv.Testdata(t, "crashprobe", "arm64-debug", "dSYMs", "arm64-CrashProbeiOS.app.dSYM", "Contents", "Resources", "DWARF", "CrashProbeiOS")
	rec := e.add(t, dwarf)[0]
	// The blob store's copy is cut short after the upload, as a disk
	// might lose it.
	path, err := e.blobs.Path(ctx, rec.Blob)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, fi.Size()/3); err != nil {
		t.Fatal(err)
	}
	_, err = e.syms.Lookup(ctx, e.project.ID, rec.DebugID, "", rec.Arch)
	if err == nil || !strings.Contains(err.Error(), rec.Name) {
		t.Fatalf("Lookup of a truncated debug file: %v, want an error naming %s", err, rec.Name)
	}
	ents, _ := os.ReadDir(e.syms.CacheDir)
	for _, ent := range ents {
		t.Errorf("cache directory holds %s after a failed build", ent.Name())
	}
}

// BenchmarkSymbolsBuild measures a module's first lookup, which builds
// its symcache into the cache directory: the CrashProbe dSYM, and the
// debug file BACKTRAIL_BENCH_OBJ names. B/op is the heap the build
// allocates; the symcache itself goes to disk.
func BenchmarkSymbolsBuild(b *testing.B) {
	paths := []string{testenv.Testdata(b, "crashprobe", "arm64-debug", "dSYMs", "arm64-CrashProbeiOS.app.dSYM", "Contents", "Resources", "DWARF", "CrashProbeiOS")}
	if p := os.Getenv("BACKTRAIL_BENCH_OBJ"); p != "" {
		paths = append(paths, p)
	}
	for _, path := range paths {
		b.Run(filepath.Base(path), func(b *testing.B) {
			e := newEnv(b)
			rec := e.add(b, path)[0]
			b.ReportAllocs()
			for b.Loop() {
				syms := &process.Symbols{Store: e.db, Blobs: e.blobs, CacheDir: b.TempDir()}
				if _, err := syms.Lookup(ctx, e.project.ID, rec.DebugID, "", rec.Arch); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestProcess runs the pipeline on payloads good and bad: failures are
// recorded in the result, never panics or errors that stop the queue.
func TestProcess(t *testing.T) {
	e := newEnv(t)
	p := &process.Processor{Store: e.db, Symbols: e.syms}
	probe, err := os.ReadFile(filepath.Join(testenv.Testdata(t, "crashprobe", "arm64-debug"), "Call abort().json"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, format string
		raw          []byte
		wantErr      bool
	}{
		{"sentry event", server.FormatSentry, probe, false},
		{"sentry garbage", server.FormatSentry, []byte("{not json"), true},
		{"report garbage", server.FormatReport, []byte(`{"version":"1.0","kind":`), true},
		{"unknown format", "elf", []byte("x"), true},
		{"empty ips", server.FormatIPS, nil, true},
	}
	// A payload the store could not read back fails its event with the
	// store's error, whatever the bytes.
	damaged := errors.New("event x: stored payload: corrupt")
	q := &server.Queued{Incoming: server.Incoming{ProjectID: e.project.ID, Format: server.FormatSentry, Raw: probe}, Err: damaged}
	if res := p.Process(ctx, q); res.Err != damaged || res.Report != nil {
		t.Errorf("damaged payload: Err %v, report %v; want the store's error and no report", res.Err, res.Report != nil)
	}
	for i, tt := range tests {
		q := &server.Queued{ID: int64(i + 1), Incoming: server.Incoming{ProjectID: e.project.ID, EventID: "0123456789abcdef0123456789abcdef", Format: tt.format, Raw: tt.raw, Received: time.Now()}}
		res := p.Process(ctx, q)
		if (res.Err != nil) != tt.wantErr {
			t.Errorf("%s: error %v, want error %v", tt.name, res.Err, tt.wantErr)
			continue
		}
		if tt.wantErr {
			continue
		}
		if res.Report == nil || res.Fingerprint == "" || res.Title == "" || res.GroupingVersion == 0 {
			t.Errorf("%s: result %+v", tt.name, res)
		}
		// Without debug files, every module with frames is missing.
		names := map[string]bool{}
		for _, m := range res.Missing {
			names[m.Name] = true
		}
		if !names["CrashProbeiOS"] || !names["CrashLibiOS"] || !names["UIKit"] {
			t.Errorf("%s: missing %+v, want the app, its framework and UIKit among them", tt.name, res.Missing)
		}
	}
}
