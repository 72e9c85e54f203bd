package api_test

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/backtrail/backtrail/internal/servertest"
	"github.com/backtrail/backtrail/internal/testenv"
	"github.com/backtrail/backtrail/server"
)

// TestMissingSymbolsFlow posts a CrashProbe event before any dSYM: its
// modules are listed as missing. Uploading the app's dSYM re-symbolicates
// the event without anyone asking, takes the app off the list, and counts
// nothing twice: the issue has one event, and each module still missing
// was missed by one event.
func TestMissingSymbolsFlow(t *testing.T) {
	t.Parallel()
	srv := servertest.Start(t, servertest.Options{})
	raw, data := readSentryEvent(t, filepath.Join(testenv.Testdata(t, "crashprobe", "arm64-debug"), "Call __builtin_trap().json"))
	if resp := srv.StoreEvent(t, nil, data); resp.Status != 200 {
		t.Fatalf("store: %d %s", resp.Status, resp.Body)
	}
	srv.Wait(t)
	const app = "b8fdd34a-7f2f-3268-925b-9541332f84a2" // CrashProbeiOS
	missing := func() map[string]*server.MissingSymbols {
		var ms []*server.MissingSymbols
		srv.Get(t, "/api/v1/missing-symbols?project=default", &ms)
		out := map[string]*server.MissingSymbols{}
		for _, m := range ms {
			out[m.DebugID] = m
		}
		return out
	}
	before := missing()
	if m := before[app]; m == nil || m.Name != "CrashProbeiOS" || m.Events != 1 || m.Arch != "arm64" {
		t.Fatalf("missing symbols %+v, want CrashProbeiOS missed by 1 event", m)
	}
	if len(before) < 3 {
		t.Fatalf("%d modules missing, want the app, the framework and system libraries", len(before))
	}
	ev := srv.Event(t, raw.EventID)
	dwarf := crashProbeDWARF(t, "CrashProbeiOS")
	vmaddr := map[string]uint64{"CrashProbeiOS": textVMAddr(t, dwarf)}
	for _, f := range crashProbeAppFrames(t, raw, &ev.Report, vmaddr) {
		if f.got[0].File != "" {
			t.Fatalf("frame 0x%x symbolicated before the upload: %s", f.addr, framesString(f.got))
		}
	}

	srv.UploadDebugFile(t, nil, dwarf)
	// Wait for the event's reprocessing, not for the queue: the
	// reprocessing may not have been claimed yet.
	var frames []appFrame
	err := servertest.Poll(30*time.Second, func() error {
		ev = srv.Event(t, raw.EventID)
		frames = crashProbeAppFrames(t, raw, &ev.Report, vmaddr)
		for _, f := range frames {
			if f.got[len(f.got)-1].File == "" {
				return fmt.Errorf("frame 0x%x not symbolicated: %s", f.addr, framesString(f.got))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	srv.Wait(t)
	var addrs []uint64
	for _, f := range frames {
		addrs = append(addrs, f.fileAddr)
	}
	want := llvmSymbolize(t, dwarf, addrs)
	for i, f := range frames {
		if !sameFrames(f.got, want[i]) {
			t.Errorf("0x%x:\n\tserver: %s\n\tllvm:   %v", f.fileAddr, framesString(f.got), want[i])
		}
	}

	after := missing()
	if m := after[app]; m != nil {
		t.Errorf("CrashProbeiOS still missing after its upload: %+v", m)
	}
	for id, m := range before {
		if id == app {
			continue
		}
		if a := after[id]; a == nil || a.Events != 1 {
			t.Errorf("module %s (%s): missing %+v after reprocessing, want missed by 1 event", m.Name, id, a)
		}
	}
	is := srv.Issue(t, ev.IssueID)
	if is.Count != 1 {
		t.Errorf("issue count %d after reprocessing, want 1", is.Count)
	}
	var total int64
	for _, c := range is.Counts {
		total += c.Count
	}
	if total > 1 {
		t.Errorf("hourly counts %+v add up to %d, want at most 1", is.Counts, total)
	}
}

// TestRegressionFlow resolves an issue through the API: an event of an
// older release leaves it resolved, an event of a newer release reopens it
// and records when.
func TestRegressionFlow(t *testing.T) {
	t.Parallel()
	srv := servertest.Start(t, servertest.Options{})
	n := 0
	post := func(release string) *servertest.Event {
		t.Helper()
		n++
		id := eventID(n)
		if resp := srv.StoreEvent(t, nil, smallSentryEvent(id, release, "checkout")); resp.Status != 200 {
			t.Fatalf("store: %d %s", resp.Status, resp.Body)
		}
		srv.Wait(t)
		return srv.Event(t, id)
	}
	setStatus := func(id int64, s server.Status) *server.Issue {
		t.Helper()
		resp := srv.Admin(t, "PUT", fmt.Sprintf("/api/v1/issues/%d", id), fmt.Appendf(nil, `{"status":%q}`, s))
		if resp.Status != 200 {
			t.Fatalf("PUT issue %d: %d %s", id, resp.Status, resp.Body)
		}
		var is server.Issue
		resp.JSON(t, &is)
		return &is
	}
	post("app@1.9.0")
	id := post("app@1.10.0").IssueID
	post("app@1.9.0") // a straggler of the older release comes last
	if is := setStatus(id, server.StatusResolved); is.Status != server.StatusResolved || is.ResolvedRelease != "app@1.10.0" {
		t.Fatalf("resolved: status %q, resolved release %q, want app@1.10.0 (the newest)", is.Status, is.ResolvedRelease)
	}
	steps := []struct {
		release   string
		status    server.Status
		regressed bool
	}{
		{"app@1.9.0", server.StatusResolved, false},
		{"app@1.10.0", server.StatusResolved, false},
		{"app@1.10.1", server.StatusUnresolved, true},
	}
	for _, st := range steps {
		start := time.Now().Add(-time.Second)
		ev := post(st.release)
		if ev.IssueID != id {
			t.Fatalf("release %s: issue %d, want %d", st.release, ev.IssueID, id)
		}
		is := srv.Issue(t, id)
		if is.Status != st.status || (is.RegressedAt != nil) != st.regressed {
			t.Errorf("after an event of %s: status %q, regressed at %v; want %q, regressed %v", st.release, is.Status, is.RegressedAt, st.status, st.regressed)
		}
		if is.RegressedAt != nil && (is.RegressedAt.Before(start) || is.RegressedAt.After(time.Now().Add(time.Second))) {
			t.Errorf("regressed at %v, not during the test", is.RegressedAt)
		}
	}
	if is := srv.Issue(t, id); is.Count != 6 || len(is.Releases) != 3 {
		t.Errorf("count %d, releases %q", is.Count, is.Releases)
	}
	// Bad requests change nothing.
	for _, body := range []string{`{"status":"fixed"}`, `{`} {
		if resp := srv.Admin(t, "PUT", fmt.Sprintf("/api/v1/issues/%d", id), []byte(body)); resp.Status != 400 {
			t.Errorf("PUT %s: %d, want 400", body, resp.Status)
		}
	}
	if resp := srv.Admin(t, "PUT", "/api/v1/issues/999", []byte(`{"status":"resolved"}`)); resp.Status != 404 {
		t.Errorf("PUT of an unknown issue: %d, want 404", resp.Status)
	}
}
