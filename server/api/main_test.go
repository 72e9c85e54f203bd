package api_test

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/backtrail/backtrail/internal/fixture"
	"github.com/backtrail/backtrail/internal/pgtest"
	"github.com/backtrail/backtrail/report"
)

func TestMain(m *testing.M) {
	code := m.Run()
	fixture.Cleanup()
	pgtest.Stop()
	os.Exit(code)
}

// crashedThread returns the thread an event is about: the crashed one, else
// the first.
func crashedThread(t *testing.T, r *report.Report) *report.Thread {
	t.Helper()
	for i := range r.Threads {
		if r.Threads[i].Crashed {
			return &r.Threads[i]
		}
	}
	if len(r.Threads) == 0 {
		t.Fatalf("event %s has no threads", r.EventID)
	}
	return &r.Threads[0]
}

// inAppFunctions returns the functions of the in-app frames, innermost
// first.
func inAppFunctions(fs []report.Frame) []string {
	var out []string
	for _, f := range fs {
		if f.InApp {
			out = append(out, f.Function)
		}
	}
	return out
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }
