package backtrail_test

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/backtrail/backtrail"
	"github.com/backtrail/backtrail/report"
)

func newClient(t *testing.T, opts backtrail.Options) *backtrail.Client {
	t.Helper()
	c, err := backtrail.NewClient(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func pending(t *testing.T, c *backtrail.Client) []*report.Report {
	t.Helper()
	rs, err := c.Pending()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rs {
		if err := r.Validate(); err != nil {
			t.Errorf("spooled %s report does not validate: %v", r.Kind, err)
		}
	}
	return rs
}

// firstInApp returns the first in-app frame's function.
func firstInApp(frames []report.Frame) string {
	for _, f := range frames {
		if f.InApp {
			return f.Function
		}
	}
	return ""
}

// TestPanicInPoolWorker: a panic in work a pool runs for someone else is
// reported with the panic site on top and the submitter in the trail.
func TestPanicInPoolWorker(t *testing.T) {
	c := newClient(t, backtrail.Options{SpoolDir: t.TempDir(), RecoverPanics: true, Release: "test@1"})
	p := newPool(1)
	submit := nextLine()
	p.work <- c.Wrap(func() { panicky(3) })
	p.close()

	rs := pending(t, c)
	if len(rs) != 1 {
		t.Fatalf("%d reports, want 1", len(rs))
	}
	r := rs[0]
	if r.Kind != report.KindCrash || r.Exception == nil || r.Exception.Value != "index 3" || r.Exception.Type != "string" || !r.Exception.Handled {
		t.Errorf("exception = %+v", r.Exception)
	}
	if r.Release != "test@1" || r.Platform != report.PlatformGo || len(r.Modules) != 1 {
		t.Errorf("release %q platform %q modules %+v", r.Release, r.Platform, r.Modules)
	}
	th := r.Threads[0]
	if !th.Crashed || !strings.HasSuffix(th.Frames[0].Function, ".panicky") {
		t.Errorf("crashed thread top frame = %+v", th.Frames[0])
	}
	if len(r.Trail) != 1 || r.Trail[0].Site == nil {
		t.Fatalf("trail = %+v", r.Trail)
	}
	if have := r.Trail[0].Site.Function + ":" + strconv.Itoa(r.Trail[0].Site.Line); have != submit {
		t.Errorf("trail names submit site %s, want %s", have, submit)
	}
	if th.Labels[backtrail.LabelKey] == "" {
		t.Error("crashed thread has no trail label")
	}
}

//go:noinline
func panicky(i int) { panic("index " + strconv.Itoa(i)) }

// runChildProcess runs this test binary in child mode and returns its
// stderr once it exits.
func runChildProcess(t *testing.T, mode, dir string, env ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), append(env, childEnv+"="+mode, "BACKTRAIL_TEST_DIR="+dir)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	return stderr.String(), err
}

// ageCrashFiles makes crash files look settled, as they would be by the
// next start of a real program.
func ageCrashFiles(t *testing.T, dir string) []string {
	names, _ := filepath.Glob(filepath.Join(dir, "crash-*.log"))
	old := time.Now().Add(-time.Minute)
	for _, n := range names {
		os.Chtimes(n, old, old)
	}
	return names
}

// TestRepanic: by default a panic in handed-off work is recorded and then
// crashes the program as usual; with GODEBUG=tracebacklabels=1 the crash
// traceback shows the trail label; the next start finds one report, not two.
func TestRepanic(t *testing.T) {
	dir := t.TempDir()
	stderr, err := runChildProcess(t, "repanic", dir, "GODEBUG=tracebacklabels=1")
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 {
		t.Fatalf("child: %v, want exit status 2\n%s", err, stderr)
	}
	if !strings.Contains(stderr, "panic: boom [recovered, repanicked]") {
		t.Errorf("crash output lacks the repanic line:\n%s", stderr)
	}
	if !strings.Contains(stderr, `"`+backtrail.LabelKey+`": "github.com/backtrail/backtrail_test.childSubmit@`) {
		t.Errorf("crash traceback lacks the trail label:\n%s", stderr)
	}
	files := ageCrashFiles(t, dir)
	if len(files) != 1 {
		t.Fatalf("crash files: %v", files)
	}
	c := newClient(t, backtrail.Options{SpoolDir: dir, DisableCrashOutput: true})
	rs := pending(t, c)
	if len(rs) != 1 {
		t.Fatalf("%d reports after restart, want 1 (the recorded panic; its crash output is a duplicate)", len(rs))
	}
	if rs[0].Exception.Value != "boom" || rs[0].Exception.Handled {
		t.Errorf("exception %+v", rs[0].Exception)
	}
	if s := rs[0].Trail[0].Site; s == nil || !strings.HasSuffix(s.Function, ".childSubmit") {
		t.Errorf("trail site %+v", rs[0].Trail[0].Site)
	}
	if _, err := os.Stat(files[0]); !os.IsNotExist(err) {
		t.Errorf("crash file not removed: %v", err)
	}
}

// TestFatalErrorNextStart: a fatal error recover cannot see is captured by
// SetCrashOutput and reported when the program starts again.
func TestFatalErrorNextStart(t *testing.T) {
	dir := t.TempDir()
	stderr, err := runChildProcess(t, "fatal", dir)
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 {
		t.Fatalf("child: %v, want exit status 2\n%s", err, stderr)
	}
	ageCrashFiles(t, dir)
	c := newClient(t, backtrail.Options{SpoolDir: dir, DisableCrashOutput: true})
	rs := pending(t, c)
	if len(rs) != 1 {
		t.Fatalf("%d reports, want 1", len(rs))
	}
	r := rs[0]
	// The runtime does not copy the "fatal error: ..." line to the crash
	// output (see parseTraceback), so the value names the raising function.
	if r.Exception == nil || r.Exception.Type != "fatal error" || !strings.Contains(r.Exception.Value, "internal/sync.(*Mutex).unlockSlow") {
		t.Errorf("exception %+v", r.Exception)
	}
	if len(r.Threads) == 0 || !r.Threads[0].Crashed || firstInApp(r.Threads[0].Frames) != "github.com/backtrail/backtrail_test.childFatal" {
		t.Errorf("crashed thread: %+v", r.Threads)
	}
}

// TestKill9 kills a program that is recording panics as fast as it can,
// then checks that the next start reads every report the program had
// finished, and that every file in the spool is a whole report.
func TestKill9(t *testing.T) {
	if runtime.GOOS == "windows" || runtime.GOOS == "plan9" {
		t.Skip("needs SIGKILL")
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"=kill", "BACKTRAIL_TEST_DIR="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(out)
	done := -1
	for done < 20 && sc.Scan() {
		done, _ = strconv.Atoi(sc.Text())
	}
	cmd.Process.Signal(syscall.SIGKILL)
	for sc.Scan() {
		done, _ = strconv.Atoi(sc.Text())
	}
	cmd.Wait()

	c := newClient(t, backtrail.Options{SpoolDir: dir, DisableCrashOutput: true, SpoolMaxCount: 1 << 20, SpoolMaxBytes: 1 << 40})
	rs := pending(t, c)
	seen := map[string]bool{}
	for _, r := range rs {
		if r.Exception != nil {
			seen[r.Exception.Value] = true
		}
	}
	for i := 0; i <= done; i++ {
		if !seen["report "+strconv.Itoa(i)] {
			t.Errorf("report %d was spooled before the kill but is lost", i)
		}
	}
	// At most the report being written when the signal landed is extra.
	if len(rs) > done+2 {
		t.Errorf("%d reports on disk, %d promised", len(rs), done+1)
	}
}

// TestZeroOptions: without Init and with zero Options every call works.
func TestZeroOptions(t *testing.T) {
	c := newClient(t, backtrail.Options{})
	done := make(chan struct{})
	c.Go(func() { close(done) })
	<-done
	c.Audit("zero")
	if err := c.ReportAudit(); err != nil {
		t.Error(err)
	}
	if err := c.Flush(context.Background()); err != nil {
		t.Error(err)
	}
	if rs := pending(t, c); len(rs) != 1 || rs[0].Kind != report.KindAudit {
		t.Errorf("memory spool holds %d reports", len(rs))
	}
	if c.SpoolDir() != "" {
		t.Errorf("SpoolDir() = %q", c.SpoolDir())
	}
	if err := c.Close(); err != nil {
		t.Error(err)
	}
	if err := c.Close(); err != nil {
		t.Error(err)
	}
	backtrail.Audit("package-level")
	backtrail.Wrap(func() {})()
	if err := backtrail.Flush(context.Background()); err != nil {
		t.Error(err)
	}
	if _, err := backtrail.NewClient(backtrail.Options{Endpoint: "ftp://x"}); err == nil {
		t.Error("NewClient accepted an ftp endpoint")
	}
}

// TestInitSameSpoolDir: a client that replaces another on the same spool
// directory keeps capturing crash output after the old one closes.
func TestInitSameSpoolDir(t *testing.T) {
	dir := t.TempDir()
	a := newClient(t, backtrail.Options{SpoolDir: dir})
	b := newClient(t, backtrail.Options{SpoolDir: dir})
	a.Close()
	names, _ := filepath.Glob(filepath.Join(dir, "crash-*.log"))
	if len(names) != 1 {
		t.Errorf("crash files after the first client closed: %v", names)
	}
	b.Close()
	if names, _ = filepath.Glob(filepath.Join(dir, "crash-*.log")); len(names) != 0 {
		t.Errorf("empty crash file left after the last client closed: %v", names)
	}
}
