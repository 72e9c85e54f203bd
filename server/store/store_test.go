package store_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/backtrail/backtrail/internal/pgtest"
	"github.com/backtrail/backtrail/report"
	"github.com/backtrail/backtrail/server"
	"github.com/backtrail/backtrail/server/store"
)

// implementations are the stores the suite runs on: each gives the DSN of
// a new, empty database. PostgreSQL runs on a cluster pgtest starts for
// this test binary (initdb into a temporary directory), one database per
// test.
var implementations = []struct {
	name string
	dsn  func(t *testing.T) string
}{
	{"sqlite", func(t *testing.T) string { return filepath.Join(t.TempDir(), "backtrail.db") }},
	{"postgres", func(t *testing.T) string { return pgtest.URL(t) }},
}

// open opens the store at dsn with the clock now, closed when the test
// ends.
func open(t *testing.T, dsn string, now func() time.Time) *store.DB {
	t.Helper()
	db, err := store.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	db.Now = now
	t.Cleanup(func() { db.Close() })
	return db
}

func TestMain(m *testing.M) {
	code := m.Run()
	pgtest.Stop()
	os.Exit(code)
}

// clock is a settable time source.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2024, 5, 2, 10, 15, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// TestStore runs the suite on every implementation.
func TestStore(t *testing.T) {
	for _, impl := range implementations {
		t.Run(impl.name, func(t *testing.T) {
			t.Parallel()
			for _, tc := range suite {
				t.Run(tc.name, func(t *testing.T) {
					t.Parallel()
					c := newClock()
					tc.fn(t, open(t, impl.dsn(t), c.Now), c)
				})
			}
		})
	}
}

var suite = []struct {
	name string
	fn   func(t *testing.T, st server.Store, c *clock)
}{
	{"Projects", testProjects},
	{"Accept", testAccept},
	{"Claim", testClaim},
	{"ClaimAttempts", testClaimAttempts},
	{"Complete", testComplete},
	{"CompleteFailed", testCompleteFailed},
	{"Reprocess", testReprocess},
	{"FingerprintChange", testFingerprintChange},
	{"Regression", testRegression},
	{"MissingSymbols", testMissingSymbols},
	{"DebugFiles", testDebugFiles},
	{"Issues", testIssues},
	{"IssueCounts", testIssueCounts},
	{"LeaseLost", testLeaseLost},
	{"Retention", testRetention},
}

var ctx = context.Background()

// must returns v once t has checked err: must(st.Issue(ctx, id))(t).
func must[T any](v T, err error) func(t *testing.T) T {
	return func(t *testing.T) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

func wantCode(t *testing.T, what string, err error, code string) {
	t.Helper()
	if server.ErrorCode(err) != code {
		t.Errorf("%s: error %v, want code %q", what, err, code)
	}
}

func id(n int) string { return fmt.Sprintf("%032x", n) }

func incoming(p *server.Project, n int, at time.Time) *server.Incoming {
	return &server.Incoming{ProjectID: p.ID, EventID: id(n), Format: server.FormatReport, Raw: fmt.Appendf(nil, `{"n":%d}`, n), Received: at}
}

// accept stores events and returns their queued rows by event id.
func accept(t *testing.T, st server.Store, evs ...*server.Incoming) {
	t.Helper()
	dup := must(st.Accept(ctx, evs))(t)
	for i, d := range dup {
		if d {
			t.Fatalf("event %s is a duplicate", evs[i].EventID)
		}
	}
}

// claimAll claims every queued event.
func claimAll(t *testing.T, st server.Store) map[string]*server.Queued {
	t.Helper()
	qs := must(st.Claim(ctx, "test", 1000, time.Minute))(t)
	out := map[string]*server.Queued{}
	for _, q := range qs {
		out[q.EventID] = q
	}
	return out
}

// processed is the result of processing q as an event of fingerprint fp
// at ts in release.
func processed(q *server.Queued, fp, release string, ts time.Time, missing ...server.MissingModule) *server.Processed {
	return &server.Processed{
		ID: q.ID, ProjectID: q.ProjectID, Fingerprint: fp, GroupingVersion: 1, Title: "title " + fp, Culprit: "culprit " + fp,
		Report: &report.Report{Version: report.Version, Kind: report.KindCrash, EventID: q.EventID, Timestamp: ts, Release: release,
			Platform: report.PlatformNative, Exception: &report.Exception{Type: "E"}},
		Missing: missing,
	}
}

// ingest accepts events, processes each into its fingerprint and release
// at its time, and returns the issues by fingerprint.
func ingest(t *testing.T, st server.Store, p *server.Project, evs []ev) map[string]*server.Issue {
	t.Helper()
	var in []*server.Incoming
	for _, e := range evs {
		in = append(in, incoming(p, e.n, e.at))
	}
	accept(t, st, in...)
	qs := claimAll(t, st)
	var ps []*server.Processed
	for _, e := range evs {
		ps = append(ps, processed(qs[id(e.n)], e.fp, e.release, e.at))
	}
	if err := st.Complete(ctx, ps); err != nil {
		t.Fatal(err)
	}
	out := map[string]*server.Issue{}
	for _, e := range evs {
		out[e.fp] = issueOf(t, st, p, e.n)
	}
	return out
}

type ev struct {
	n           int
	fp, release string
	at          time.Time
}

func issueOf(t *testing.T, st server.Store, p *server.Project, n int) *server.Issue {
	t.Helper()
	e := must(st.Event(ctx, p.ID, id(n)))(t)
	if e.IssueID == 0 {
		t.Fatalf("event %d has no issue", n)
	}
	return must(st.Issue(ctx, e.IssueID))(t)
}

func testProjects(t *testing.T, st server.Store, c *clock) {
	a := must(st.CreateProject(ctx, "a"))(t)
	b := must(st.CreateProject(ctx, "b"))(t)
	if a.ID == b.ID || a.Key == b.Key || len(a.Key) != 32 || !a.CreatedAt.Equal(c.Now()) {
		t.Errorf("projects %+v, %+v", a, b)
	}
	_, err := st.CreateProject(ctx, "a")
	wantCode(t, "CreateProject(a) again", err, server.ECONFLICT)
	_, err = st.CreateProject(ctx, "")
	wantCode(t, `CreateProject("")`, err, server.EINVALID)
	for _, tt := range []struct {
		name string
		get  func() (*server.Project, error)
		want *server.Project
	}{
		{"by id", func() (*server.Project, error) { return st.Project(ctx, b.ID) }, b},
		{"by name", func() (*server.Project, error) { return st.ProjectByName(ctx, "b") }, b},
		{"by key", func() (*server.Project, error) { return st.ProjectByKey(ctx, a.Key) }, a},
		{"unknown id", func() (*server.Project, error) { return st.Project(ctx, 999) }, nil},
		{"unknown name", func() (*server.Project, error) { return st.ProjectByName(ctx, "c") }, nil},
		{"unknown key", func() (*server.Project, error) { return st.ProjectByKey(ctx, id(1)) }, nil},
		{"empty key", func() (*server.Project, error) { return st.ProjectByKey(ctx, "") }, nil},
	} {
		p, err := tt.get()
		if tt.want == nil {
			wantCode(t, tt.name, err, server.ENOTFOUND)
			continue
		}
		if err != nil || *p != *tt.want {
			t.Errorf("%s: %+v, %v; want %+v", tt.name, p, err, tt.want)
		}
	}
	ps := must(st.Projects(ctx))(t)
	if len(ps) != 2 || *ps[0] != *a || *ps[1] != *b {
		t.Errorf("Projects = %+v", ps)
	}
}

func testAccept(t *testing.T, st server.Store, c *clock) {
	a := must(st.CreateProject(ctx, "a"))(t)
	b := must(st.CreateProject(ctx, "b"))(t)
	now := c.Now()
	first := must(st.Accept(ctx, []*server.Incoming{incoming(a, 1, now), incoming(a, 2, now), incoming(a, 1, now)}))(t)
	if !slices.Equal(first, []bool{false, false, true}) {
		t.Errorf("first Accept: dup %v, want [false false true] (the same id twice in a batch)", first)
	}
	second := must(st.Accept(ctx, []*server.Incoming{incoming(a, 2, now), incoming(b, 2, now), incoming(a, 3, now)}))(t)
	if !slices.Equal(second, []bool{true, false, false}) {
		t.Errorf("second Accept: dup %v, want [true false false] (ids are per project)", second)
	}
	if n := must(st.Pending(ctx))(t); n != 4 {
		t.Errorf("Pending = %d, want 4", n)
	}
	e := must(st.Event(ctx, b.ID, id(2)))(t)
	if e.ProjectID != b.ID || e.Processed || e.Report != nil || !e.Received.Equal(now) || e.Format != server.FormatReport {
		t.Errorf("Event(b, 2) = %+v", e)
	}
	format, raw, err := st.RawEvent(ctx, a.ID, id(3))
	if err != nil || format != server.FormatReport || string(raw) != `{"n":3}` {
		t.Errorf("RawEvent(a, 3) = %q, %q, %v", format, raw, err)
	}
	_, err = st.Event(ctx, a.ID, id(9))
	wantCode(t, "Event of an unknown id", err, server.ENOTFOUND)
	_, _, err = st.RawEvent(ctx, b.ID, id(1))
	wantCode(t, "RawEvent of another project's id", err, server.ENOTFOUND)
	if e := must(st.Event(ctx, 0, id(3)))(t); e.ProjectID != a.ID {
		t.Errorf("Event(any project, 3) in project %d", e.ProjectID)
	}
	// A large payload survives the round trip through compression.
	big := &server.Incoming{ProjectID: a.ID, EventID: id(10), Format: server.FormatSentry, Raw: make([]byte, 1<<20), Received: now}
	for i := range big.Raw {
		big.Raw[i] = byte(i * 7)
	}
	accept(t, st, big)
	if _, raw, err := st.RawEvent(ctx, a.ID, id(10)); err != nil || string(raw) != string(big.Raw) {
		t.Errorf("RawEvent of a 1 MiB payload: %d bytes, %v", len(raw), err)
	}
}

func testClaim(t *testing.T, st server.Store, c *clock) {
	p := must(st.CreateProject(ctx, "p"))(t)
	for n := 1; n <= 5; n++ {
		accept(t, st, incoming(p, n, c.Now()))
	}
	batch := func(worker string, n int) []string {
		qs := must(st.Claim(ctx, worker, n, time.Minute))(t)
		var ids []string
		for _, q := range qs {
			ids = append(ids, q.EventID)
			if q.Attempts < 1 || string(q.Raw) == "" {
				t.Errorf("claimed %+v", q)
			}
		}
		return ids
	}
	if got := batch("w1", 2); !slices.Equal(got, []string{id(1), id(2)}) {
		t.Errorf("first batch %v, want the two oldest", got)
	}
	if got := batch("w2", 10); !slices.Equal(got, []string{id(3), id(4), id(5)}) {
		t.Errorf("second batch %v, want the rest", got)
	}
	if got := batch("w3", 10); len(got) != 0 {
		t.Errorf("third batch %v, want none while leases hold", got)
	}
	if n := must(st.Pending(ctx))(t); n != 5 {
		t.Errorf("Pending = %d, want 5 (leased events are pending)", n)
	}
	// Boundaries of the lease: at its end it still holds, after it the
	// events are claimed again, with another attempt.
	c.Add(time.Minute)
	if got := batch("w3", 10); len(got) != 0 {
		t.Errorf("at the lease's end: claimed %v", got)
	}
	c.Add(time.Millisecond)
	qs := must(st.Claim(ctx, "w3", 10, time.Minute))(t)
	if len(qs) != 5 || qs[0].Attempts != 2 {
		t.Errorf("after the lease: claimed %d, attempts %d; want 5, 2", len(qs), qs[0].Attempts)
	}
	// Completed events are not claimed again.
	var ps []*server.Processed
	for _, q := range qs {
		ps = append(ps, processed(q, "fp", "", c.Now()))
	}
	if err := st.Complete(ctx, ps); err != nil {
		t.Fatal(err)
	}
	c.Add(time.Hour)
	if got := batch("w4", 10); len(got) != 0 {
		t.Errorf("after Complete: claimed %v", got)
	}
	if n := must(st.Pending(ctx))(t); n != 0 {
		t.Errorf("Pending = %d, want 0", n)
	}
}

func testClaimAttempts(t *testing.T, st server.Store, c *clock) {
	p := must(st.CreateProject(ctx, "p"))(t)
	accept(t, st, incoming(p, 1, c.Now()))
	// An event whose processing never finishes is leased maxAttempts (5)
	// times, then marked failed.
	for attempt := 1; attempt <= 5; attempt++ {
		qs := must(st.Claim(ctx, "w", 10, time.Second))(t)
		if len(qs) != 1 || qs[0].Attempts != attempt {
			t.Fatalf("attempt %d: claimed %+v", attempt, qs)
		}
		c.Add(2 * time.Second)
	}
	if qs := must(st.Claim(ctx, "w", 10, time.Second))(t); len(qs) != 0 {
		t.Fatalf("claimed %+v after 5 attempts", qs[0])
	}
	e := must(st.Event(ctx, p.ID, id(1)))(t)
	if e.Processed || e.Error == "" {
		t.Errorf("event after 5 attempts: processed %v, error %q; want failed", e.Processed, e.Error)
	}
	if n := must(st.Pending(ctx))(t); n != 0 {
		t.Errorf("Pending = %d, want 0", n)
	}
	// Requeueing gives it a fresh set of attempts.
	if err := st.Requeue(ctx, []int64{e.ID}); err != nil {
		t.Fatal(err)
	}
	if qs := must(st.Claim(ctx, "w", 10, time.Second))(t); len(qs) != 1 || qs[0].Attempts != 1 {
		t.Errorf("after Requeue: claimed %+v", qs)
	}
}

func testComplete(t *testing.T, st server.Store, c *clock) {
	p := must(st.CreateProject(ctx, "p"))(t)
	t0 := time.Date(2024, 5, 2, 10, 15, 0, 0, time.UTC)
	issues := ingest(t, st, p, []ev{
		{1, "fp-a", "1.0", t0},
		{2, "fp-a", "1.1", t0.Add(30 * time.Minute)},
		{3, "fp-a", "1.0", t0.Add(-5 * time.Minute)}, // arrives last, happened first
		{4, "fp-b", "", t0.Add(2 * time.Hour)},
	})
	a := issues["fp-a"]
	if a.Count != 3 || !a.FirstSeen.Equal(t0.Add(-5*time.Minute)) || !a.LastSeen.Equal(t0.Add(30*time.Minute)) ||
		a.Status != server.StatusUnresolved || a.FirstRelease != "1.0" || a.Kind != report.KindCrash ||
		a.Title != "title fp-a" || a.Culprit != "culprit fp-a" || a.GroupingVersion != 1 || a.ProjectID != p.ID || a.RegressedAt != nil {
		t.Errorf("issue fp-a = %+v", a)
	}
	if b := issues["fp-b"]; b.Count != 1 || b.ID == a.ID {
		t.Errorf("issue fp-b = %+v", b)
	}
	counts := must(st.IssueCounts(ctx, a.ID, time.Time{}))(t)
	want := []server.CountBucket{{Hour: t0.Truncate(time.Hour), Count: 3}}
	if !slices.Equal(counts, want) {
		t.Errorf("IssueCounts = %+v, want %+v", counts, want)
	}
	if rel := must(st.IssueReleases(ctx, a.ID))(t); !slices.Equal(rel, []string{"1.1", "1.0"}) {
		t.Errorf("IssueReleases = %q, want newest last seen first", rel)
	}
	es := must(st.Events(ctx, a.ID, 0, 0))(t)
	if len(es) != 3 {
		t.Fatalf("Events = %d, want 3", len(es))
	}
	for _, e := range es {
		if !e.Processed || e.IssueID != a.ID || e.Title != "title fp-a" || e.Report != nil {
			t.Errorf("listed event %+v", e)
		}
	}
	if es := must(st.Events(ctx, a.ID, 1, 1))(t); len(es) != 1 {
		t.Errorf("Events(limit 1, offset 1) = %d events", len(es))
	}
	e := must(st.Event(ctx, p.ID, id(2)))(t)
	if e.Report == nil || e.Report.Release != "1.1" || e.Release != "1.1" || !e.Timestamp.Equal(t0.Add(30*time.Minute)) || e.Kind != report.KindCrash {
		t.Errorf("Event(2) = %+v, report %+v", e, e.Report)
	}
	// A report without a timestamp happened when it was processed.
	c.Add(3 * time.Hour)
	accept(t, st, incoming(p, 5, c.Now()))
	q := claimAll(t, st)[id(5)]
	pr := processed(q, "fp-c", "", time.Time{})
	if err := st.Complete(ctx, []*server.Processed{pr}); err != nil {
		t.Fatal(err)
	}
	if is := issueOf(t, st, p, 5); !is.FirstSeen.Equal(c.Now()) {
		t.Errorf("issue of an event without timestamp first seen %v, want %v", is.FirstSeen, c.Now())
	}
}

func testCompleteFailed(t *testing.T, st server.Store, c *clock) {
	p := must(st.CreateProject(ctx, "p"))(t)
	accept(t, st, incoming(p, 1, c.Now()), incoming(p, 2, c.Now()))
	qs := claimAll(t, st)
	if err := st.Complete(ctx, []*server.Processed{
		{ID: qs[id(1)].ID, ProjectID: p.ID, Err: fmt.Errorf("sentry: not JSON")},
		processed(qs[id(2)], "fp", "", c.Now()),
	}); err != nil {
		t.Fatal(err)
	}
	e := must(st.Event(ctx, p.ID, id(1)))(t)
	if e.Processed || e.Error != "sentry: not JSON" || e.IssueID != 0 || e.Report != nil {
		t.Errorf("failed event = %+v", e)
	}
	if is := must(st.Issues(ctx, server.IssueFilter{ProjectID: p.ID}))(t); len(is) != 1 || is[0].Count != 1 {
		t.Errorf("issues %+v, want the other event's", is)
	}
	// A failed event keeps its payload: it can be processed again.
	if _, raw, err := st.RawEvent(ctx, p.ID, id(1)); err != nil || len(raw) == 0 {
		t.Errorf("RawEvent of a failed event: %q, %v", raw, err)
	}
}

func testReprocess(t *testing.T, st server.Store, c *clock) {
	p := must(st.CreateProject(ctx, "p"))(t)
	t0 := c.Now()
	is := ingest(t, st, p, []ev{{1, "fp", "1.0", t0}, {2, "fp", "1.0", t0}})["fp"]
	e := must(st.Event(ctx, p.ID, id(1)))(t)
	for range 3 {
		if err := st.Requeue(ctx, []int64{e.ID}); err != nil {
			t.Fatal(err)
		}
		if n := must(st.Pending(ctx))(t); n != 1 {
			t.Fatalf("Pending after Requeue = %d, want 1", n)
		}
		q := claimAll(t, st)[id(1)]
		if q == nil || q.Attempts != 1 {
			t.Fatalf("requeued event claimed as %+v", q)
		}
		if err := st.Complete(ctx, []*server.Processed{processed(q, "fp", "1.0", t0)}); err != nil {
			t.Fatal(err)
		}
	}
	after := must(st.Issue(ctx, is.ID))(t)
	if after.Count != 2 {
		t.Errorf("count after reprocessing %d, want 2", after.Count)
	}
	if counts := must(st.IssueCounts(ctx, is.ID, time.Time{}))(t); len(counts) != 1 || counts[0].Count != 2 {
		t.Errorf("hourly counts after reprocessing %+v, want 2", counts)
	}
	// Requeue leaves queued and leased events alone.
	accept(t, st, incoming(p, 3, t0))
	q3 := must(st.Claim(ctx, "w", 10, time.Minute))(t)[0]
	if err := st.Requeue(ctx, []int64{q3.ID}); err != nil {
		t.Fatal(err)
	}
	if qs := must(st.Claim(ctx, "w", 10, time.Minute))(t); len(qs) != 0 {
		t.Errorf("a leased event requeued: claimed %+v", qs)
	}
}

func testFingerprintChange(t *testing.T, st server.Store, c *clock) {
	p := must(st.CreateProject(ctx, "p"))(t)
	t0 := c.Now()
	old := ingest(t, st, p, []ev{{1, "old", "1.0", t0}, {2, "old", "1.0", t0}})["old"]
	e := must(st.Event(ctx, p.ID, id(1)))(t)
	if err := st.Requeue(ctx, []int64{e.ID}); err != nil {
		t.Fatal(err)
	}
	q := claimAll(t, st)[id(1)]
	// Symbols arrived: the event now groups elsewhere.
	if err := st.Complete(ctx, []*server.Processed{processed(q, "new", "1.0", t0)}); err != nil {
		t.Fatal(err)
	}
	moved := issueOf(t, st, p, 1)
	before := must(st.Issue(ctx, old.ID))(t)
	if moved.ID == old.ID || moved.Count != 1 || before.Count != 1 {
		t.Errorf("after the move: old issue count %d, new issue %d count %d; want 1 and 1", before.Count, moved.ID, moved.Count)
	}
	for _, x := range []struct {
		is   *server.Issue
		want int64
	}{{before, 1}, {moved, 1}} {
		counts := must(st.IssueCounts(ctx, x.is.ID, time.Time{}))(t)
		var sum int64
		for _, b := range counts {
			sum += b.Count
		}
		if sum != x.want {
			t.Errorf("issue %s: hourly counts %+v, want %d in all", x.is.Fingerprint, counts, x.want)
		}
	}
	// Moving the last event away empties the old issue, which lists no
	// more.
	e2 := must(st.Event(ctx, p.ID, id(2)))(t)
	st.Requeue(ctx, []int64{e2.ID})
	q = claimAll(t, st)[id(2)]
	if err := st.Complete(ctx, []*server.Processed{processed(q, "new", "1.0", t0)}); err != nil {
		t.Fatal(err)
	}
	is := must(st.Issues(ctx, server.IssueFilter{ProjectID: p.ID}))(t)
	if len(is) != 1 || is[0].Fingerprint != "new" || is[0].Count != 2 {
		t.Errorf("issues %+v, want only the new one with 2 events", is)
	}
	if rel := must(st.IssueReleases(ctx, old.ID))(t); len(rel) != 0 {
		t.Errorf("empty issue's releases %q", rel)
	}
}

func testRegression(t *testing.T, st server.Store, c *clock) {
	p := must(st.CreateProject(ctx, "p"))(t)
	tests := []struct {
		name      string
		releases  []string // before resolving, in order of arrival
		next      string   // the release of the event after
		regresses bool
	}{
		{"newer release", []string{"1.0"}, "1.1", true},
		{"same release", []string{"1.0"}, "1.0", false},
		{"older release", []string{"1.0"}, "0.9", false},
		{"numeric order", []string{"1.9"}, "1.10", true},
		{"package prefix", []string{"app@2.0.0"}, "app@2.0.1", true},
		{"unknown release", []string{"1.0"}, "", true},
		{"resolved without release", []string{""}, "1.0", true},
		{"older release arrived last", []string{"1.1", "1.0"}, "1.0", false},
		{"older release arrived last, newer", []string{"1.1", "1.0"}, "1.2", true},
		{"older release arrived last, same as newest", []string{"1.1", "1.0"}, "1.1", false},
	}
	n := 0
	for i, tt := range tests {
		fp := fmt.Sprintf("fp-%d", i)
		var evs []ev
		for _, r := range tt.releases {
			n++
			evs = append(evs, ev{n, fp, r, c.Now()})
		}
		is := ingest(t, st, p, evs)[fp]
		if err := st.SetIssueStatus(ctx, is.ID, server.StatusResolved); err != nil {
			t.Fatal(err)
		}
		c.Add(time.Minute)
		n++
		after := ingest(t, st, p, []ev{{n, fp, tt.next, c.Now()}})[fp]
		wantStatus := server.StatusResolved
		if tt.regresses {
			wantStatus = server.StatusUnresolved
		}
		if after.Status != wantStatus || (after.RegressedAt != nil) != tt.regresses ||
			after.RegressedAt != nil && !after.RegressedAt.Equal(c.Now()) {
			t.Errorf("%s: resolved in %q, event of %q: status %q, regressed at %v; want %q",
				tt.name, tt.releases, tt.next, after.Status, after.RegressedAt, wantStatus)
		}
	}
	// Other statuses: ignoring keeps an issue quiet whatever comes;
	// unknown statuses and issues are refused.
	n++
	is := ingest(t, st, p, []ev{{n, "ignored", "1.0", c.Now()}})["ignored"]
	if err := st.SetIssueStatus(ctx, is.ID, server.StatusIgnored); err != nil {
		t.Fatal(err)
	}
	n++
	if after := ingest(t, st, p, []ev{{n, "ignored", "2.0", c.Now()}})["ignored"]; after.Status != server.StatusIgnored {
		t.Errorf("ignored issue became %q", after.Status)
	}
	wantCode(t, "SetIssueStatus(fixed)", st.SetIssueStatus(ctx, is.ID, "fixed"), server.EINVALID)
	wantCode(t, "SetIssueStatus of an unknown issue", st.SetIssueStatus(ctx, 9999, server.StatusResolved), server.ENOTFOUND)
	_, err := st.Issue(ctx, 9999)
	wantCode(t, "Issue(9999)", err, server.ENOTFOUND)
}

func testMissingSymbols(t *testing.T, st server.Store, c *clock) {
	a := must(st.CreateProject(ctx, "a"))(t)
	b := must(st.CreateProject(ctx, "b"))(t)
	lib := server.MissingModule{DebugID: "5db9dd67-7626-3675-8c6a-606e8c7518f7", CodeID: "5db9dd67762636758c6a606e8c7518f7", Name: "CrashLibiOS", Arch: "arm64"}
	sys := server.MissingModule{DebugID: "1804405f-7b2a-3e77-a349-b53163b09cdb", Name: "UIKit", Arch: "arm64"}
	t0 := c.Now()
	accept(t, st, incoming(a, 1, t0), incoming(a, 2, t0), incoming(b, 3, t0))
	qs := claimAll(t, st)
	if err := st.Complete(ctx, []*server.Processed{
		processed(qs[id(1)], "fp", "", t0, lib, sys),
		processed(qs[id(2)], "fp", "", t0.Add(time.Hour), lib),
		processed(qs[id(3)], "fp", "", t0, lib),
	}); err != nil {
		t.Fatal(err)
	}
	ms := must(st.MissingSymbols(ctx, a.ID))(t)
	if len(ms) != 2 || ms[0].MissingModule != lib || ms[0].Events != 2 || ms[1].MissingModule != sys || ms[1].Events != 1 ||
		!ms[0].FirstSeen.Equal(t0) || !ms[0].LastSeen.Equal(t0.Add(time.Hour)) || ms[0].ProjectID != a.ID {
		t.Errorf("MissingSymbols(a) = %+v", ms)
	}
	if all := must(st.MissingSymbols(ctx, 0))(t); len(all) != 3 {
		t.Errorf("MissingSymbols(any) lists %d, want 3", len(all))
	}
	rows := must(st.EventsMissing(ctx, a.ID, lib.DebugID))(t)
	e1, e2 := must(st.Event(ctx, a.ID, id(1)))(t), must(st.Event(ctx, a.ID, id(2)))(t)
	if !slices.Equal(rows, []int64{e1.ID, e2.ID}) {
		t.Errorf("EventsMissing(a, lib) = %v, want [%d %d]", rows, e1.ID, e2.ID)
	}

	// Reprocessing an event that still lacks a module counts it once.
	st.Requeue(ctx, []int64{e1.ID})
	q := claimAll(t, st)[id(1)]
	if err := st.Complete(ctx, []*server.Processed{processed(q, "fp", "", t0, lib, sys)}); err != nil {
		t.Fatal(err)
	}
	if ms := must(st.MissingSymbols(ctx, a.ID))(t); len(ms) != 2 || ms[0].Events != 2 || ms[1].Events != 1 {
		t.Errorf("after reprocessing: MissingSymbols(a) = %+v, want 2 and 1 events", ms)
	}

	// The debug file arrives in a: a no longer misses it, b still does;
	// the events that missed it are requeued and processed with it.
	_, added, err := st.AddDebugFile(ctx, &server.DebugFile{ProjectID: a.ID, DebugID: lib.DebugID, CodeID: lib.CodeID, Arch: "arm64",
		Format: "macho", Kind: "debug", Name: "CrashLibiOS", Size: 10, Blob: fmt.Sprintf("%064x", 1), Features: []string{"debug"}})
	if err != nil || !added {
		t.Fatal(added, err)
	}
	if ms := must(st.MissingSymbols(ctx, a.ID))(t); len(ms) != 1 || ms[0].MissingModule != sys {
		t.Errorf("after the upload: MissingSymbols(a) = %+v, want UIKit only", ms)
	}
	if ms := must(st.MissingSymbols(ctx, b.ID))(t); len(ms) != 1 || ms[0].MissingModule != lib {
		t.Errorf("after the upload to a: MissingSymbols(b) = %+v", ms)
	}
	if err := st.Requeue(ctx, rows); err != nil {
		t.Fatal(err)
	}
	if n := must(st.Pending(ctx))(t); n != 2 {
		t.Errorf("Pending after Requeue = %d, want 2", n)
	}
	qs = claimAll(t, st)
	if err := st.Complete(ctx, []*server.Processed{processed(qs[id(1)], "fp", "", t0, sys), processed(qs[id(2)], "fp", "", t0)}); err != nil {
		t.Fatal(err)
	}
	if rows := must(st.EventsMissing(ctx, a.ID, lib.DebugID))(t); len(rows) != 0 {
		t.Errorf("EventsMissing(a, lib) after reprocessing = %v", rows)
	}
	if ms := must(st.MissingSymbols(ctx, a.ID))(t); len(ms) != 1 || ms[0].Events != 1 {
		t.Errorf("at the end: MissingSymbols(a) = %+v", ms)
	}
}

func testDebugFiles(t *testing.T, st server.Store, c *clock) {
	a := must(st.CreateProject(ctx, "a"))(t)
	b := must(st.CreateProject(ctx, "b"))(t)
	file := func(p *server.Project, debugID, codeID, arch string, blob int) *server.DebugFile {
		return &server.DebugFile{ProjectID: p.ID, DebugID: debugID, CodeID: codeID, Arch: arch, Format: "elf", Kind: "debug",
			Name: "libx.so.debug", Size: int64(100 + blob), Blob: fmt.Sprintf("%064x", blob), Features: []string{"symtab", "debug"}}
	}
	add := func(f *server.DebugFile, wantAdded bool) *server.DebugFile {
		t.Helper()
		got, added, err := st.AddDebugFile(ctx, f)
		if err != nil || added != wantAdded {
			t.Fatalf("AddDebugFile(%s, blob %s): added %v, %v; want %v", f.DebugID, f.Blob[60:], added, err, wantAdded)
		}
		return got
	}
	const d1, c1 = "0f0e0d0c-0b0a-0908-0706-050403020100", "000102030405060708090a0b0c0d0e0f10111213"
	const d2 = "11111111-2222-3333-4444-555555555555"
	f1 := add(file(a, d1, c1, "x86_64", 1), true)
	if f1.ID == 0 || !f1.UploadedAt.Equal(c.Now()) || !slices.Equal(f1.Features, []string{"symtab", "debug"}) || f1.Size != 101 {
		t.Errorf("added %+v", f1)
	}
	c.Add(time.Second)
	if again := add(file(a, d1, c1, "x86_64", 1), false); again.ID != f1.ID {
		t.Errorf("the same file again: id %d, want %d", again.ID, f1.ID)
	}
	f2 := add(file(a, d1, c1, "x86_64", 2), true) // rebuilt: same ids, other content
	f3 := add(file(a, d1, "", "arm64", 3), true)  // another architecture
	f4 := add(file(a, d2, "", "x86_64", 4), true)
	f5 := add(file(b, d1, c1, "x86_64", 1), true) // the same file in another project
	ids := func(fs []*server.DebugFile) []int64 {
		var out []int64
		for _, f := range fs {
			out = append(out, f.ID)
		}
		return out
	}
	for _, tt := range []struct {
		name            string
		project         int64
		debugID, codeID string
		want            []int64
	}{
		{"by debug id", a.ID, d1, "", []int64{f3.ID, f2.ID, f1.ID}},
		{"by debug id in upper case", a.ID, "0F0E0D0C-0B0A-0908-0706-050403020100", "", []int64{f3.ID, f2.ID, f1.ID}},
		{"by code id", a.ID, "", c1, []int64{f2.ID, f1.ID}},
		{"by code id in upper case", a.ID, "", "000102030405060708090A0B0C0D0E0F10111213", []int64{f2.ID, f1.ID}},
		{"by either", a.ID, d2, c1, []int64{f4.ID, f2.ID, f1.ID}},
		{"in any project", 0, "", c1, []int64{f5.ID, f2.ID, f1.ID}},
		{"in another project", b.ID, d1, "", []int64{f5.ID}},
		{"unknown", a.ID, "99999999-2222-3333-4444-555555555555", "", nil},
		{"no ids", a.ID, "", "", nil},
	} {
		if got := ids(must(st.FindDebugFiles(ctx, tt.project, tt.debugID, tt.codeID))(t)); !slices.Equal(got, tt.want) {
			t.Errorf("FindDebugFiles %s = %v, want %v", tt.name, got, tt.want)
		}
	}
	if got := ids(must(st.DebugFiles(ctx, a.ID))(t)); !slices.Equal(got, []int64{f1.ID, f2.ID, f3.ID, f4.ID}) {
		t.Errorf("DebugFiles(a) = %v", got)
	}
	if got := must(st.DebugFile(ctx, f3.ID))(t); got.Arch != "arm64" || got.CodeID != "" {
		t.Errorf("DebugFile(f3) = %+v", got)
	}
	if err := st.DeleteDebugFile(ctx, f2.ID); err != nil {
		t.Fatal(err)
	}
	wantCode(t, "DeleteDebugFile twice", st.DeleteDebugFile(ctx, f2.ID), server.ENOTFOUND)
	_, err := st.DebugFile(ctx, f2.ID)
	wantCode(t, "DebugFile of a deleted file", err, server.ENOTFOUND)
	if got := ids(must(st.FindDebugFiles(ctx, a.ID, "", c1))(t)); !slices.Equal(got, []int64{f1.ID}) {
		t.Errorf("FindDebugFiles after the delete = %v", got)
	}
	// Deleted content can be added again.
	add(file(a, d1, c1, "x86_64", 2), true)
}

func testIssues(t *testing.T, st server.Store, c *clock) {
	a := must(st.CreateProject(ctx, "a"))(t)
	b := must(st.CreateProject(ctx, "b"))(t)
	t0 := c.Now()
	// first seen / last seen / count, per fingerprint:
	//   x: t0, t0+3h, 3   y: t0+1h, t0+1h, 1   z: t0-1h, t0+2h, 2
	ia := ingest(t, st, a, []ev{
		{1, "x", "1.0", t0}, {2, "x", "1.0", t0.Add(3 * time.Hour)}, {3, "x", "1.1", t0.Add(time.Hour)},
		{4, "y", "1.1", t0.Add(time.Hour)},
		{5, "z", "2.0", t0.Add(-time.Hour)}, {6, "z", "2.0", t0.Add(2 * time.Hour)},
	})
	ib := ingest(t, st, b, []ev{{7, "x", "1.0", t0}})
	if err := st.SetIssueStatus(ctx, ia["y"].ID, server.StatusResolved); err != nil {
		t.Fatal(err)
	}
	x, y, z, bx := ia["x"].ID, ia["y"].ID, ia["z"].ID, ib["x"].ID
	for _, tt := range []struct {
		name string
		f    server.IssueFilter
		want []int64
	}{
		{"project, by last seen", server.IssueFilter{ProjectID: a.ID}, []int64{x, z, y}},
		{"every project", server.IssueFilter{}, []int64{x, z, y, bx}},
		{"by first seen", server.IssueFilter{ProjectID: a.ID, Sort: "first_seen"}, []int64{y, x, z}},
		{"by count", server.IssueFilter{ProjectID: a.ID, Sort: "count"}, []int64{x, z, y}},
		{"unresolved", server.IssueFilter{ProjectID: a.ID, Status: server.StatusUnresolved}, []int64{x, z}},
		{"resolved", server.IssueFilter{ProjectID: a.ID, Status: server.StatusResolved}, []int64{y}},
		{"release", server.IssueFilter{ProjectID: a.ID, Release: "1.1"}, []int64{x, y}},
		{"release in no issue", server.IssueFilter{ProjectID: a.ID, Release: "9"}, nil},
		{"kind", server.IssueFilter{ProjectID: a.ID, Kind: report.KindCrash}, []int64{x, z, y}},
		{"other kind", server.IssueFilter{ProjectID: a.ID, Kind: report.KindHang}, nil},
		{"limit", server.IssueFilter{ProjectID: a.ID, Limit: 2}, []int64{x, z}},
		{"offset", server.IssueFilter{ProjectID: a.ID, Limit: 2, Offset: 2}, []int64{y}},
		{"offset past the end", server.IssueFilter{ProjectID: a.ID, Offset: 3}, nil},
	} {
		is := must(st.Issues(ctx, tt.f))(t)
		var got []int64
		for _, i := range is {
			got = append(got, i.ID)
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("Issues(%s) = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func testIssueCounts(t *testing.T, st server.Store, c *clock) {
	p := must(st.CreateProject(ctx, "p"))(t)
	h := time.Date(2024, 5, 2, 10, 0, 0, 0, time.UTC)
	is := ingest(t, st, p, []ev{
		{1, "fp", "", h}, // first instant of 10:00
		{2, "fp", "", h.Add(59*time.Minute + 59*time.Second)}, // last second of 10:00
		{3, "fp", "", h.Add(time.Hour)},                       // 11:00
		{4, "fp", "", h.Add(3*time.Hour + 30*time.Minute)},    // 13:30
	})["fp"]
	b10, b11, b13 := server.CountBucket{Hour: h, Count: 2}, server.CountBucket{Hour: h.Add(time.Hour), Count: 1}, server.CountBucket{Hour: h.Add(3 * time.Hour), Count: 1}
	for _, tt := range []struct {
		since time.Time
		want  []server.CountBucket
	}{
		{time.Time{}, []server.CountBucket{b10, b11, b13}},
		{h.Add(-time.Nanosecond), []server.CountBucket{b10, b11, b13}},
		{h, []server.CountBucket{b10, b11, b13}},
		{h.Add(59 * time.Minute), []server.CountBucket{b10, b11, b13}}, // windows start on the hour
		{h.Add(time.Hour - time.Nanosecond), []server.CountBucket{b10, b11, b13}},
		{h.Add(time.Hour), []server.CountBucket{b11, b13}},
		{h.Add(2 * time.Hour), []server.CountBucket{b13}},
		{h.Add(3*time.Hour + 59*time.Minute), []server.CountBucket{b13}},
		{h.Add(4 * time.Hour), nil},
	} {
		if got := must(st.IssueCounts(ctx, is.ID, tt.since))(t); !slices.Equal(got, tt.want) {
			t.Errorf("IssueCounts(since %v) = %+v, want %+v", tt.since.Format(time.TimeOnly), got, tt.want)
		}
	}
	if got := must(st.IssueCounts(ctx, 9999, time.Time{}))(t); len(got) != 0 {
		t.Errorf("IssueCounts of an unknown issue = %+v", got)
	}
}
