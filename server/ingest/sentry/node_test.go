package sentry_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/backtrail/backtrail/internal/testenv"
)

// sentryNodeVersion is the @sentry/node release the test installs from npm.
const sentryNodeVersion = "11.12.0"

// nodeApp captures an exception, a message too large to send uncompressed
// (@sentry/node gzips bodies over 32 KiB), a message that beforeSend drops
// (which the SDK counts in a client report), and a session; then it prints
// the event ids the SDK returned.
const nodeApp = `
const Sentry = require('@sentry/node');
Sentry.init({
  dsn: process.env.SENTRY_DSN,
  release: 'node-app@1.0.0',
  environment: 'test',
  beforeSend(event) { return event.message === 'drop me' ? null : event; },
});
function failCheckout() { throw new TypeError('cart is empty'); }
(async () => {
  const ids = {};
  try { failCheckout(); } catch (e) { ids.exception = Sentry.captureException(e); }
  Sentry.setExtra('blob', 'x'.repeat(40000));
  ids.big = Sentry.captureMessage('big message');
  Sentry.captureMessage('drop me');
  Sentry.startSession();
  Sentry.captureSession();
  Sentry.endSession();
  await Sentry.flush(10000); // sends the client report
  await Sentry.close(10000);
  console.log(JSON.stringify(ids));
})();
`

// installSentryNode installs @sentry/node into a temporary directory. A
// failed install skips the test on a developer machine (no network, say)
// and fails it in CI.
func installSentryNode(t *testing.T) (node, dir string) {
	t.Helper()
	node = testenv.Tool(t, "node")
	npm := testenv.Tool(t, "npm")
	dir = t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "package.json"), []byte(`{"private": true}`), 0o666); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, npm, "install", "--no-audit", "--no-fund", "--loglevel=error", "@sentry/node@"+sentryNodeVersion)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		msg := "npm install @sentry/node@" + sentryNodeVersion + ": " + err.Error() + "\n" + string(out)
		if testenv.InCI() {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return node, dir
}

// TestSentryNode runs @sentry/node from npm against a local server and
// converts what it sent, gzip-compressed bodies, sessions and client
// reports included.
func TestSentryNode(t *testing.T) {
	if testing.Short() {
		t.Skip("installs @sentry/node from npm")
	}
	node, dir := installSentryNode(t)
	app := filepath.Join(dir, "app.cjs")
	if err := os.WriteFile(app, []byte(nodeApp), 0o666); err != nil {
		t.Fatal(err)
	}
	srv := newCaptureServer(t)
	const key = "fedcba9876543210fedcba9876543210"
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, app)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "SENTRY_DSN="+srv.dsn(key, "7"))
	out, err := cmd.Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			t.Fatalf("node: %v\n%s", err, ee.Stderr)
		}
		t.Fatalf("node: %v", err)
	}
	var ids struct{ Exception, Big string }
	if err := json.Unmarshal(out, &ids); err != nil {
		t.Fatalf("node printed %q: %v", out, err)
	}

	reqs := srv.requests()
	envs := decodeAll(t, reqs, key)
	itemTypes := map[string]int{}
	gzipped := 0
	for _, d := range envs {
		if d.req.Header.Get("Content-Encoding") == "gzip" {
			gzipped++
		}
		for _, it := range d.env.Items {
			itemTypes[it.Type]++
		}
	}
	t.Logf("@sentry/node %s sent %d envelopes (%d gzipped) with items %v", sentryNodeVersion, len(envs), gzipped, itemTypes)
	if gzipped == 0 {
		t.Errorf("no gzipped body; the 40 kB event should have been compressed")
	}
	if itemTypes["session"]+itemTypes["sessions"] == 0 || itemTypes["client_report"] == 0 {
		t.Errorf("items %v, want sessions and a client report too", itemTypes)
	}
	reports := byEventID(t, envs)
	if len(reports) != 2 {
		t.Errorf("%d reports, want 2 (the exception and the big message)", len(reports))
	}

	r := reports[ids.Exception]
	if r == nil {
		t.Fatalf("no report for the exception %s", ids.Exception)
	}
	if ex := r.Exception; ex == nil || ex.Type != "TypeError" || ex.Value != "cart is empty" {
		t.Fatalf("exception %+v", r.Exception)
	}
	if r.Platform != "node" || r.SDK.Name != "sentry.javascript.node" || r.SDK.Version != sentryNodeVersion ||
		r.Release != "node-app@1.0.0" || r.Environment != "test" || r.Runtime.Name != "node" {
		t.Errorf("platform %q, SDK %+v, release %q, environment %q, runtime %+v", r.Platform, r.SDK, r.Release, r.Environment, r.Runtime)
	}
	th := crashed(t, r)
	f, ok := firstInApp(th.Frames)
	if !ok || f.Function != "failCheckout" || !strings.HasSuffix(f.File, "app.cjs") || f.Line != 9 {
		t.Errorf("first in-app frame %+v, want failCheckout at app.cjs:9; frames %+v", f, th.Frames)
	}
	if th.Frames[0] != f {
		t.Errorf("innermost frame %+v is not failCheckout", th.Frames[0])
	}

	big := reports[ids.Big]
	if big == nil {
		t.Fatalf("no report for the big message %s", ids.Big)
	}
	// @sentry/node sends a message's stack as a synthetic exception
	// without a type, which Event reads as the message it is.
	if ex := big.Exception; ex == nil || ex.Type != "message" || ex.Value != "big message" || !ex.Handled {
		t.Errorf("big message: exception %+v", big.Exception)
	}
	if f, ok := firstInApp(crashed(t, big).Frames); !ok || !strings.HasSuffix(f.File, "app.cjs") || f.Line != 14 {
		t.Errorf("big message: first in-app frame %+v, want app.cjs:14", f)
	}
	if big.Tags["level"] != "info" || big.OS.Name != "linux" {
		t.Errorf("big message: level %q, OS %+v", big.Tags["level"], big.OS)
	}
}
