package sentry_test

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	sentrygo "github.com/getsentry/sentry-go"

	"github.com/backtrail/backtrail/report"
)

// The functions below are the stacks the sentry-go client captures. They are
// not inlined, so that their names appear in the frames.

const testPkg = "github.com/backtrail/backtrail/server/ingest/sentry_test"

//go:noinline
func writeNilMap() {
	var m map[string]int
	m["x"] = 1 // panics: assignment to entry in nil map
}

//go:noinline
func recoverInto(hub *sentrygo.Hub) (id *sentrygo.EventID) {
	defer func() {
		if e := recover(); e != nil {
			id = hub.Recover(e)
		}
	}()
	writeNilMap()
	return nil
}

var errNotFound = errors.New("item not found")

//go:noinline
func captureCheckout(hub *sentrygo.Hub) *sentrygo.EventID {
	return hub.CaptureException(fmt.Errorf("checkout: %w", errNotFound))
}

//go:noinline
func warnDisk(hub *sentrygo.Hub) *sentrygo.EventID {
	return hub.CaptureMessage("disk almost full")
}

//go:noinline
func workerStack() *sentrygo.Stacktrace {
	return sentrygo.NewStacktrace()
}

//go:noinline
func captureThreads(hub *sentrygo.Hub) *sentrygo.EventID {
	handled := false
	ev := sentrygo.NewEvent()
	ev.Level = sentrygo.LevelFatal
	ev.Exception = []sentrygo.Exception{{
		Type:      "SIGSEGV",
		Value:     "invalid memory address",
		ThreadID:  2,
		Mechanism: &sentrygo.Mechanism{Type: "signalhandler", Handled: &handled},
	}}
	ev.Threads = []sentrygo.Thread{
		{ID: "1", Name: "main", Current: true, Stacktrace: sentrygo.NewStacktrace()},
		{ID: "2", Name: "worker", Stacktrace: workerStack()},
		{ID: "3", Name: "native", Stacktrace: &sentrygo.Stacktrace{Frames: []sentrygo.Frame{
			// outermost first, as Sentry lists them
			{InstructionAddr: "0x1f00", AddrMode: "rel:0", Package: "/usr/lib/libworker.so"},
			{InstructionAddr: "0x7f0000002a10"},
		}}},
	}
	ev.DebugMeta = &sentrygo.DebugMeta{Images: []sentrygo.DebugMetaImage{{
		Type: "elf", CodeFile: "/usr/lib/libworker.so", ImageAddr: "0x7f0000000000", ImageSize: 0x10000,
		DebugID: "B6F2C9A2-8A7D-4C1E-9F3B-0A1B2C3D4E5F", CodeID: "A2C9F2B67D8A1E4C9F3B0A1B2C3D4E5F", Arch: "x86_64",
	}}}
	ev.Fingerprint = []string{"{{ default }}", "worker"}
	ev.Tags = map[string]string{"shard": "7"}
	return hub.CaptureEvent(ev)
}

// TestSentryGo runs the real sentry-go client against a local server and
// converts what it sent: a recovered panic, an error, a message with the
// current stack, and a hand-built event with threads and a native stack.
func TestSentryGo(t *testing.T) {
	srv := newCaptureServer(t)
	const key = "0123456789abcdef0123456789abcdef"
	client, err := sentrygo.NewClient(sentrygo.ClientOptions{
		Dsn:              srv.dsn(key, "42"),
		Release:          "shop@1.4.2",
		Environment:      "staging",
		ServerName:       "web-1",
		AttachStacktrace: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	hub := sentrygo.NewHub(client, sentrygo.NewScope())
	hub.Scope().SetTag("region", "eu")

	panicID := recoverInto(hub)
	errorID := captureCheckout(hub)
	messageID := warnDisk(hub)
	threadsID := captureThreads(hub)
	for _, id := range []*sentrygo.EventID{panicID, errorID, messageID, threadsID} {
		if id == nil {
			t.Fatal("sentry-go did not capture an event")
		}
	}
	if !hub.Flush(10 * time.Second) {
		t.Fatal("sentry-go: Flush timed out")
	}

	reports := byEventID(t, decodeAll(t, srv.requests(), key))
	get := func(id *sentrygo.EventID) *report.Report {
		t.Helper()
		r := reports[string(*id)]
		if r == nil {
			t.Fatalf("no report with event id %s among %d", *id, len(reports))
		}
		return r
	}
	common := func(t *testing.T, r *report.Report) {
		t.Helper()
		if r.Kind != report.KindCrash || r.Release != "shop@1.4.2" || r.Environment != "staging" || r.ServerName != "web-1" {
			t.Errorf("kind, release, environment, server = %q, %q, %q, %q", r.Kind, r.Release, r.Environment, r.ServerName)
		}
		if r.SDK.Name != "sentry.go" || r.SDK.Version != sentrygo.SDKVersion {
			t.Errorf("SDK = %+v, want sentry.go %s", r.SDK, sentrygo.SDKVersion)
		}
		if r.OS.Name != runtime.GOOS || r.Arch != runtime.GOARCH || r.Runtime.Name != "go" || r.Runtime.Version != runtime.Version() {
			t.Errorf("OS, arch, runtime = %+v, %q, %+v", r.OS, r.Arch, r.Runtime)
		}
		if r.Tags["region"] != "eu" {
			t.Errorf("tags = %v, want region=eu", r.Tags)
		}
		if d := time.Since(r.Timestamp); d < 0 || d > time.Minute {
			t.Errorf("timestamp %v is not within the last minute", r.Timestamp)
		}
	}
	// wantFrames checks that the in-app frames, innermost first, begin with
	// the given functions of this package.
	wantFrames := func(t *testing.T, frames []report.Frame, funcs ...string) {
		t.Helper()
		var inApp []string
		for _, f := range frames {
			if f.InApp {
				inApp = append(inApp, f.Function)
				if !strings.HasSuffix(f.File, "sentrygo_test.go") || f.Line <= 0 {
					t.Errorf("in-app frame %s at %s:%d, want sentrygo_test.go", f.Function, f.File, f.Line)
				}
			}
		}
		for i, fn := range funcs {
			if i >= len(inApp) || inApp[i] != testPkg+"."+fn {
				t.Fatalf("in-app frames %q; want them to begin with %q (in %s)", inApp, funcs, testPkg)
			}
		}
	}

	t.Run("panic", func(t *testing.T) {
		r := get(panicID)
		common(t, r)
		ex := r.Exception
		if ex == nil || ex.Type != "runtime.plainError" || ex.Value != "assignment to entry in nil map" || ex.Handled {
			t.Fatalf("exception = %+v", ex)
		}
		if r.Tags["level"] != "fatal" || r.Platform != report.PlatformGo {
			t.Errorf("level %q, platform %q", r.Tags["level"], r.Platform)
		}
		th := crashed(t, r)
		if ex.ThreadID != th.ID {
			t.Errorf("exception thread %d, crashed thread %d", ex.ThreadID, th.ID)
		}
		wantFrames(t, th.Frames, "writeNilMap", "recoverInto")
	})

	t.Run("error", func(t *testing.T) {
		r := get(errorID)
		common(t, r)
		ex := r.Exception
		if ex == nil || ex.Type != "*fmt.wrapError" || ex.Value != "checkout: item not found" || !ex.Handled || ex.Mechanism != "generic" {
			t.Fatalf("exception = %+v", ex)
		}
		wantFrames(t, crashed(t, r).Frames, "captureCheckout", "TestSentryGo")
	})

	t.Run("message", func(t *testing.T) {
		r := get(messageID)
		common(t, r)
		if ex := r.Exception; ex == nil || ex.Type != "message" || ex.Value != "disk almost full" || !ex.Handled {
			t.Fatalf("exception = %+v", ex)
		}
		if r.Tags["level"] != "info" {
			t.Errorf("level %q", r.Tags["level"])
		}
		th := crashed(t, r)
		if !th.Current {
			t.Errorf("crashed thread %+v is not the current one", th)
		}
		wantFrames(t, th.Frames, "warnDisk", "TestSentryGo")
	})

	t.Run("threads", func(t *testing.T) {
		r := get(threadsID)
		common(t, r)
		ex := r.Exception
		if ex == nil || ex.Type != "SIGSEGV" || ex.Handled || ex.Mechanism != "signalhandler" || ex.ThreadID != 2 {
			t.Fatalf("exception = %+v", ex)
		}
		if len(r.Threads) != 3 {
			t.Fatalf("%d threads, want 3", len(r.Threads))
		}
		th := crashed(t, r)
		if th.ID != 2 || th.Name != "worker" {
			t.Fatalf("crashed thread %d %q, want 2 worker", th.ID, th.Name)
		}
		wantFrames(t, th.Frames, "workerStack", "captureThreads")
		if m := r.Threads[0]; m.ID != 1 || m.Name != "main" || !m.Current || m.Crashed {
			t.Errorf("thread 0 = %d %q current %v crashed %v", m.ID, m.Name, m.Current, m.Crashed)
		}
		// The native thread: innermost first, the relative address made
		// absolute, and the module found by address or package.
		want := []report.Frame{
			{Addr: 0x7f0000002a10, Module: "libworker.so"},
			{Addr: 0x7f0000001f00, Module: "libworker.so"},
		}
		if got := r.Threads[2].Frames; fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("native frames = %+v, want %+v", got, want)
		}
		if r.Platform != report.PlatformNative {
			t.Errorf("platform %q, want native (frames without functions)", r.Platform)
		}
		wantMod := report.Module{Type: "elf", Name: "libworker.so", Path: "/usr/lib/libworker.so",
			DebugID: "b6f2c9a2-8a7d-4c1e-9f3b-0a1b2c3d4e5f", CodeID: "a2c9f2b67d8a1e4c9f3b0a1b2c3d4e5f",
			ImageAddr: 0x7f0000000000, ImageSize: 0x10000, Arch: "amd64"}
		if len(r.Modules) != 1 || r.Modules[0] != wantMod {
			t.Errorf("modules = %+v, want %+v", r.Modules, wantMod)
		}
		if fmt.Sprint(r.Fingerprint) != "[{{ default }} worker]" || r.Tags["shard"] != "7" {
			t.Errorf("fingerprint %q, tags %v", r.Fingerprint, r.Tags)
		}
	})
}
