package api_test

import (
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	sentrygo "github.com/getsentry/sentry-go"

	"github.com/backtrail/backtrail/internal/servertest"
	"github.com/backtrail/backtrail/server"
)

// The functions below make the stacks the sentry-go client captures. They
// are not inlined, so that their names appear in the frames.

const apiTestPkg = "github.com/backtrail/backtrail/server/api_test"

//go:noinline
func divideByZeroAt(xs []int, i int) int {
	return 10 / xs[i] // panics: integer divide by zero
}

//go:noinline
func recoverPanic(hub *sentrygo.Hub) (id *sentrygo.EventID, value any) {
	defer func() {
		if e := recover(); e != nil {
			id, value = hub.Recover(e), e
		}
	}()
	divideByZeroAt([]int{1, 0}, 1)
	return nil, nil
}

var errOutOfStock = errors.New("out of stock")

//go:noinline
func reserveItem(hub *sentrygo.Hub) *sentrygo.EventID {
	return hub.CaptureException(fmt.Errorf("reserve: %w", errOutOfStock))
}

// TestSentryGoEndToEnd runs the real sentry-go client (the version go.mod
// pins) against the in-process server: a recovered panic and an error
// become issues titled by their exceptions, with this file's functions as
// the in-app frames, and each event is found by the id the client returned.
func TestSentryGoEndToEnd(t *testing.T) {
	t.Parallel()
	srv := servertest.Start(t, servertest.Options{})
	client, err := sentrygo.NewClient(sentrygo.ClientOptions{
		Dsn:     srv.DSN(nil),
		Release: "shop@2.0.1",
	})
	if err != nil {
		t.Fatal(err)
	}
	hub := sentrygo.NewHub(client, sentrygo.NewScope())
	panicID, panicValue := recoverPanic(hub)
	errorID := reserveItem(hub)
	if panicID == nil || errorID == nil {
		t.Fatalf("sentry-go captured %v, %v", panicID, errorID)
	}
	if !hub.Flush(10 * time.Second) {
		t.Fatal("sentry-go: Flush timed out")
	}
	srv.Wait(t)

	tests := []struct {
		name      string
		id        sentrygo.EventID
		title     string
		functions []string // the innermost in-app frames, in this package
	}{
		{"panic", *panicID, fmt.Sprintf("%s: %v", reflect.TypeOf(panicValue), panicValue), []string{"divideByZeroAt", "recoverPanic"}},
		{"error", *errorID, "*fmt.wrapError: reserve: out of stock", []string{"reserveItem", "TestSentryGoEndToEnd"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev := srv.Event(t, string(tt.id))
			if !ev.Processed || ev.Error != "" || ev.Format != server.FormatSentry || ev.Release != "shop@2.0.1" {
				t.Fatalf("event %s: processed %v, error %q, format %q, release %q", tt.id, ev.Processed, ev.Error, ev.Format, ev.Release)
			}
			var want []string
			for _, f := range tt.functions {
				want = append(want, apiTestPkg+"."+f)
			}
			th := crashedThread(t, &ev.Report)
			got := inAppFunctions(th.Frames)
			if len(got) < len(want) || !slices.Equal(got[:len(want)], want) {
				t.Errorf("in-app frames %q, want them to begin with %q", got, want)
			}
			for _, f := range th.Frames {
				if f.InApp && (!strings.HasSuffix(f.File, "/server/api/sentrygo_test.go") || f.Line <= 0) {
					t.Errorf("in-app frame %s at %s:%d, want a line of sentrygo_test.go", f.Function, f.File, f.Line)
				}
			}

			is := srv.Issue(t, ev.IssueID)
			if is.Title != tt.title || ev.Title != tt.title {
				t.Errorf("issue title %q, event title %q, want %q", is.Title, ev.Title, tt.title)
			}
			if !strings.HasPrefix(is.Culprit, apiTestPkg+"."+tt.functions[0]+" (sentrygo_test.go:") {
				t.Errorf("culprit %q, want %s in sentrygo_test.go", is.Culprit, tt.functions[0])
			}
			if is.Count != 1 || is.Status != server.StatusUnresolved || !slices.Equal(is.Releases, []string{"shop@2.0.1"}) {
				t.Errorf("issue count %d, status %q, releases %q", is.Count, is.Status, is.Releases)
			}

			// Clients show ids with dashes and in upper case.
			dashed := strings.ToUpper(fmt.Sprintf("%s-%s-%s-%s-%s", tt.id[:8], tt.id[8:12], tt.id[12:16], tt.id[16:20], tt.id[20:]))
			if resp := srv.Admin(t, "GET", "/api/v1/events/"+dashed, nil); resp.Status != http.StatusOK {
				t.Errorf("GET event %s: %d %s", dashed, resp.Status, resp.Body)
			}
		})
	}

	var issues []server.Issue
	srv.Get(t, "/api/v1/issues?project=default", &issues)
	if len(issues) != 2 {
		t.Errorf("%d issues, want 2: %+v", len(issues), issues)
	}
}
