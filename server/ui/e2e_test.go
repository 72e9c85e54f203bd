package ui_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/backtrail/backtrail/internal/testenv"
	"github.com/backtrail/backtrail/report"
	"github.com/backtrail/backtrail/server"
	"github.com/backtrail/backtrail/server/api"
	"github.com/backtrail/backtrail/server/blob"
	"github.com/backtrail/backtrail/server/process"
	"github.com/backtrail/backtrail/server/store"
	"github.com/backtrail/backtrail/server/ui"
)

// testServer is `backtrail serve` started in-process over a temporary
// directory, wired the way cmd/backtrail/serve.go wires it.
type testServer struct {
	URL   string // http://127.0.0.1:port
	Token string // admin token
	Key   string // the default project's key
}

func startServer(t *testing.T) *testServer {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	dir := t.TempDir()
	db, err := store.Open(ctx, filepath.Join(dir, "backtrail.db"))
	if err != nil {
		t.Fatal(err)
	}
	blobs, err := blob.Open(filepath.Join(dir, "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	def, err := db.CreateProject(ctx, "default")
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	logger := slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
	syms := &process.Symbols{Store: db, Blobs: blobs, CacheDir: filepath.Join(dir, "symcaches")}
	proc := &process.Processor{Store: db, Symbols: syms, Logger: logger}
	srv := &api.Server{
		Store: db, Blobs: blobs, Symbols: syms, Processor: proc,
		AdminToken: "e2e-admin-token", BaseURL: base, ChunkDir: filepath.Join(dir, "chunks"),
		Logger: logger, UI: ui.Handler(),
	}
	hs := &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 10 * time.Second}
	procDone := make(chan struct{})
	go func() {
		defer close(procDone)
		proc.Run(ctx)
	}()
	go hs.Serve(ln)
	t.Cleanup(func() {
		sctx, scancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer scancel()
		hs.Shutdown(sctx)
		srv.Close()
		cancel()
		<-procDone
		db.Close()
	})
	return &testServer{URL: base, Token: srv.AdminToken, Key: def.Key}
}

// testWriter sends the server's log to the test's.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSuffix(string(p), "\n"))
	return len(p), nil
}

// do sends a request and fails the test unless the answer is 2xx. It
// returns the body.
func (s *testServer) do(t *testing.T, method, path string, body []byte, header ...string) []byte {
	t.Helper()
	req, err := http.NewRequest(method, s.URL+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode/100 != 2 {
		t.Fatalf("%s %s: %s: %s", method, path, resp.Status, b)
	}
	return b
}

func (s *testServer) admin(t *testing.T, method, path string, body []byte) []byte {
	t.Helper()
	return s.do(t, method, path, body, "Authorization", "Bearer "+s.Token)
}

func (s *testServer) postReport(t *testing.T, body []byte) {
	t.Helper()
	s.do(t, "POST", "/api/v1/reports", body, "Authorization", "Bearer "+s.Key)
}

// waitProcessed waits until the server has processed every event.
func (s *testServer) waitProcessed(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		var h struct{ Pending int64 }
		if err := json.Unmarshal(s.do(t, "GET", "/healthz", nil), &h); err != nil {
			t.Fatal(err)
		}
		if h.Pending == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d events still pending after 2 minutes", h.Pending)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// e2eLoop names the watched loop of the hang report made by freshReports;
// run.mjs finds that issue by it.
const e2eLoop = "e2e-render"

// freshReports returns reports made for the browser test, dated now so
// that the issue's hourly chart and the list's sparkline have a bar:
//
//   - a hang whose samples weigh 6, 3 and 1 under a shared outer stack
//     (runtime.main → main.main → main.handle), with a goroutine snapshot
//     of 40 and 10 goroutines, an inlined frame and an async trail;
//   - a crash whose exception and frames hold HTML, which the UI must show
//     as text.
func freshReports(now time.Time) [][]byte {
	outer := []report.Frame{
		{Addr: 0x401300, Function: "main.handle", File: "/src/app/handle.go", Line: 27, InApp: true},
		{Addr: 0x401100, Function: "main.main", File: "/src/app/main.go", Line: 12, InApp: true},
		{Addr: 0x43a000, Function: "runtime.main", File: "/usr/local/go/src/runtime/proc.go", Line: 283},
	}
	with := func(inner ...report.Frame) []report.Frame { return append(inner, outer...) }
	compute := with(
		report.Frame{Addr: 0x401500, Function: "main.sum", File: "/src/app/compute.go", Line: 8, Inlined: true, InApp: true},
		report.Frame{Addr: 0x401500, Function: "main.compute", File: "/src/app/compute.go", Line: 42, InApp: true})
	alloc := with(
		report.Frame{Addr: 0x40c000, Function: "runtime.mallocgc", File: "/usr/local/go/src/runtime/malloc.go", Line: 1021},
		report.Frame{Addr: 0x401700, Function: "main.alloc", File: "/src/app/alloc.go", Line: 19, InApp: true})
	read := with(
		report.Frame{Addr: 0x47f000, Function: "syscall.Syscall", File: "/usr/local/go/src/syscall/syscall_linux.go", Line: 69},
		report.Frame{Addr: 0x48a000, Function: "os.(*File).Read", File: "/usr/local/go/src/os/file.go", Line: 124})
	idle := []report.Frame{
		{Addr: 0x43b000, Function: "runtime.gopark", File: "/usr/local/go/src/runtime/proc.go", Line: 402},
		{Addr: 0x401900, Function: "main.worker", File: "/src/app/worker.go", Line: 33, InApp: true},
	}
	hang := &report.Report{
		Kind: report.KindHang, EventID: report.NewEventID(), Timestamp: now, Platform: report.PlatformGo,
		Release: "app@2.0.0", SDK: report.SDK{Name: "backtrail.go", Version: "0.1.0"}, OS: report.OS{Name: "linux"},
		Arch: "amd64", Runtime: report.Runtime{Name: "go", Version: "go1.26.0"},
		Threads: []report.Thread{{ID: 1, State: "hung", Crashed: true, Frames: compute}},
		Trail:   []report.Hop{{Site: &outer[0], Hash: "00112233445566ff", Frames: outer}},
		Hang: &report.Hang{DurationMS: 2100, ThresholdMS: 2000, Loop: e2eLoop, Samples: []report.Sample{
			{Timestamp: now.Add(-900 * time.Millisecond), Weight: 6, Frames: compute},
			{Timestamp: now.Add(-600 * time.Millisecond), Weight: 3, Frames: alloc},
			{Timestamp: now.Add(-300 * time.Millisecond), Weight: 1, Frames: read},
		}},
		Snapshot: &report.Snapshot{Timestamp: now, Total: 50, Stacks: []report.SnapshotStack{
			{Count: 40, State: "chan receive", Frames: idle},
			{Count: 10, State: "running", Frames: compute},
		}},
	}
	xss := &report.Report{
		Kind: report.KindCrash, EventID: report.NewEventID(), Timestamp: now, Platform: report.PlatformGo,
		SDK: report.SDK{Name: "backtrail.go"}, OS: report.OS{Name: "linux"}, Runtime: report.Runtime{Name: "go"},
		Threads: []report.Thread{{ID: 1, Crashed: true, Frames: []report.Frame{
			{Addr: 0x401000, Function: `main.<img src=x id=xss-frame onerror="window.xss=1">`, File: "/src/<b>x</b>.go", Line: 1, InApp: true},
		}}},
		Exception: &report.Exception{Type: "<script>window.xss=2</script>", Value: `<img src=x id=xss onerror="window.xss=3">`, Mechanism: "panic"},
	}
	var out [][]byte
	for _, r := range []*report.Report{hang, xss} {
		var b bytes.Buffer
		if err := report.Encode(&b, r); err != nil {
			panic(err)
		}
		out = append(out, b.Bytes())
	}
	return out
}

// loadData loads the repository's test data through the public API, as
// `serve --demo` does: the CrashProbe dSYMs and Sentry events, the report
// format's examples, a Go panic, and freshReports.
func loadData(t *testing.T, s *testServer, root string) {
	t.Helper()
	cp := filepath.Join(root, "testdata", "crashprobe", "arm64-debug")
	for _, name := range []string{"arm64-CrashProbeiOS.app.dSYM/Contents/Resources/DWARF/CrashProbeiOS", "arm64-CrashLibiOS.framework.dSYM/Contents/Resources/DWARF/CrashLibiOS"} {
		body, err := os.ReadFile(filepath.Join(cp, "dSYMs", name))
		if err != nil {
			t.Fatal(err)
		}
		s.admin(t, "POST", "/api/v1/debug-files?project=default&name="+filepath.Base(name), body)
	}
	events, err := filepath.Glob(filepath.Join(cp, "*.json"))
	if err != nil || len(events) < 20 {
		t.Fatalf("CrashProbe events: %d found, %v", len(events), err)
	}
	for _, p := range events {
		body, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		s.do(t, "POST", "/api/1/store/", body, "X-Sentry-Auth", "Sentry sentry_version=7, sentry_client=backtrail-e2e/1.0, sentry_key="+s.Key,
			"Content-Type", "application/json")
	}
	for _, name := range []string{"hang.json", "dump.json", "audit.json", "crash.json", "traceback/panic.txt"} {
		body, err := os.ReadFile(filepath.Join(root, "report", "testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		s.postReport(t, body)
	}
	for _, body := range freshReports(time.Now().UTC()) {
		s.postReport(t, body)
	}
	s.waitProcessed(t)
}

// TestIssueCounts checks the issues list's ?counts= flag, which the list's
// sparklines use: 14 daily or 24 hourly counts ending with the current
// hour, and the list without the flag unchanged.
func TestIssueCounts(t *testing.T) {
	s := startServer(t)
	now := time.Now().UTC()
	for _, body := range freshReports(now) {
		s.postReport(t, body)
	}
	old, err := os.ReadFile(filepath.Join(testenv.RepoRoot(t), "report", "testdata", "crash.json")) // dated 2025
	if err != nil {
		t.Fatal(err)
	}
	s.postReport(t, old)
	s.waitProcessed(t)

	var plain []map[string]any
	if err := json.Unmarshal(s.admin(t, "GET", "/api/v1/issues", nil), &plain); err != nil {
		t.Fatal(err)
	}
	if len(plain) != 3 {
		t.Fatalf("issues: got %d, want 3", len(plain))
	}
	for _, is := range plain {
		if _, ok := is["counts"]; ok {
			t.Errorf("issue %v: counts without ?counts=", is["id"])
		}
	}
	for _, tt := range []struct {
		flag string
		n    int
	}{{"14d", 14}, {"24h", 24}} {
		var is []struct {
			server.Issue
			Counts []int64 `json:"counts"`
		}
		if err := json.Unmarshal(s.admin(t, "GET", "/api/v1/issues?counts="+tt.flag, nil), &is); err != nil {
			t.Fatal(err)
		}
		if len(is) != 3 {
			t.Fatalf("counts=%s: %d issues, want 3", tt.flag, len(is))
		}
		// The fresh events fall in the last period, or in the one before
		// it when the hour turned while the test ran.
		turned := !time.Now().UTC().Truncate(time.Hour).Equal(now.Truncate(time.Hour))
		for _, x := range is {
			want := make([]int64, tt.n)
			if x.LastSeen.After(now.Add(-time.Hour)) {
				want[tt.n-1] = 1
			}
			alt := append([]int64(nil), want...)
			if turned && tt.n == 24 && want[tt.n-1] == 1 {
				alt[tt.n-1], alt[tt.n-2] = 0, 1
			}
			if fmt.Sprint(x.Counts) != fmt.Sprint(want) && fmt.Sprint(x.Counts) != fmt.Sprint(alt) {
				t.Errorf("counts=%s: issue %q (last seen %v): counts %v, want %v", tt.flag, x.Title, x.LastSeen, x.Counts, want)
			}
		}
	}
	req, _ := http.NewRequest("GET", s.URL+"/api/v1/issues?counts=7d", nil)
	req.Header.Set("Authorization", "Bearer "+s.Token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("counts=7d: status %d, want 400", resp.StatusCode)
	}
}

// npmCI installs the browser test's npm packages (playwright-core, pinned
// in e2e/package-lock.json) when they are missing. A failure skips the
// test on a developer machine and fails it in CI.
func npmCI(t *testing.T, dir string) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "playwright-core", "package.json")); err == nil {
		return
	}
	npm := testenv.Tool(t, "npm")
	cmd := exec.Command(npm, "ci", "--no-audit", "--no-fund")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		msg := fmt.Sprintf("npm ci in %s: %v\n%s", dir, err, out)
		if testenv.InCI() {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
}

// TestBrowser drives the web UI in Chromium against a server loaded with
// real data: e2e/run.mjs signs in, filters the issues list, opens issues
// and checks their stacks, trail and flame graphs, resolves one, visits
// the missing-symbols, debug-files and project pages, downloads a raw
// report and signs out, taking a screenshot of each page into
// $BACKTRAIL_ARTIFACTS (default: a temporary directory).
func TestBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test in -short mode")
	}
	chromium := testenv.Tool(t, "chromium")
	node := testenv.Tool(t, "node")
	root := testenv.RepoRoot(t)
	e2e := filepath.Join(root, "server", "ui", "e2e")
	npmCI(t, e2e)

	s := startServer(t)
	loadData(t, s, root)

	shots := os.Getenv("BACKTRAIL_ARTIFACTS")
	if shots == "" {
		shots = filepath.Join(t.TempDir(), "screenshots")
	}
	if err := os.MkdirAll(shots, 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "run.mjs")
	cmd.Dir = e2e
	cmd.Env = append(os.Environ(),
		"BACKTRAIL_URL="+s.URL,
		"BACKTRAIL_TOKEN="+s.Token,
		"BACKTRAIL_KEY="+s.Key,
		"BACKTRAIL_ARTIFACTS="+shots,
		"BACKTRAIL_REPO="+root,
		"BACKTRAIL_E2E_LOOP="+e2eLoop,
		"CHROMIUM="+chromium,
	)
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	err := cmd.Run()
	t.Logf("run.mjs:\n%s", out.String())
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("run.mjs failed (exit %d); screenshots in %s", ee.ExitCode(), shots)
		}
		t.Fatalf("run.mjs: %v", err)
	}
	for _, name := range screenshots {
		if fi, err := os.Stat(filepath.Join(shots, name)); err != nil || fi.Size() == 0 {
			t.Errorf("screenshot %s missing: %v", name, err)
		}
	}
	t.Logf("screenshots in %s", shots)
}

// screenshots are the files run.mjs must write.
var screenshots = []string{
	"01-sign-in.png", "02-issues.png", "03-issues-hang.png", "04-issue-crash.png", "05-issue-trail.png",
	"06-flame-hang.png", "07-flame-zoomed.png", "08-flame-snapshot.png", "09-issue-resolved.png",
	"10-issues-resolved.png", "11-missing-symbols.png", "12-debug-files.png", "13-project.png",
	"14-narrow-issues.png", "15-narrow-issue.png", "16-dark-issue.png", "17-dark-flame.png", "18-events.png", "19-regressed.png",
}
