package api_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/backtrail/backtrail/internal/servertest"
	"github.com/backtrail/backtrail/internal/testenv"
	"github.com/backtrail/backtrail/server"
)

// sentryNodeVersion is the @sentry/node release the test installs.
const sentryNodeVersion = "11.12.0"

// nodeApp throws from failCheckout (line 4), captures the exception, waits
// for delivery and prints the event id the SDK returned.
const nodeApp = `const Sentry = require('@sentry/node');
Sentry.init({ dsn: process.env.SENTRY_DSN, release: 'node-app@1.0.0' });
function failCheckout(cart) {
  if (cart.length === 0) throw new TypeError('cart is empty');
}
(async () => {
  let id;
  try { failCheckout([]); } catch (e) { id = Sentry.captureException(e); }
  await Sentry.close(10000);
  console.log(JSON.stringify({ id }));
})();
`

// TestSentryNodeEndToEnd runs @sentry/node from npm against the
// in-process server: the exception it captures becomes an issue titled by
// the exception, with the app's function as its culprit.
func TestSentryNodeEndToEnd(t *testing.T) {
	t.Parallel()
	node := testenv.Tool(t, "node")
	dir := npmInstall(t, "@sentry/node@"+sentryNodeVersion)
	app := filepath.Join(dir, "app.cjs")
	if err := os.WriteFile(app, []byte(nodeApp), 0o666); err != nil {
		t.Fatal(err)
	}
	srv := servertest.Start(t, servertest.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, app)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "SENTRY_DSN="+srv.DSN(nil))
	out, err := cmd.Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			t.Fatalf("node: %v\n%s", err, ee.Stderr)
		}
		t.Fatalf("node: %v", err)
	}
	var res struct{ ID string }
	if err := json.Unmarshal(out, &res); err != nil || res.ID == "" {
		t.Fatalf("node printed %q (%v)", out, err)
	}
	srv.Wait(t)

	ev := srv.Event(t, res.ID)
	if !ev.Processed || ev.Error != "" || ev.Release != "node-app@1.0.0" {
		t.Fatalf("event: processed %v, error %q, release %q", ev.Processed, ev.Error, ev.Release)
	}
	th := crashedThread(t, &ev.Report)
	if len(th.Frames) == 0 {
		t.Fatal("no frames")
	}
	if f := th.Frames[0]; f.Function != "failCheckout" || !strings.HasSuffix(f.File, "app.cjs") || f.Line != 4 || !f.InApp {
		t.Errorf("innermost frame %+v, want failCheckout at app.cjs:4, in-app", f)
	}
	is := srv.Issue(t, ev.IssueID)
	if is.Title != "TypeError: cart is empty" || !strings.HasPrefix(is.Culprit, "failCheckout (app.cjs:4)") {
		t.Errorf("issue title %q, culprit %q", is.Title, is.Culprit)
	}
	if is.Count != 1 || is.Status != server.StatusUnresolved {
		t.Errorf("issue count %d, status %q", is.Count, is.Status)
	}
}
