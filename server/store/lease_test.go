package store_test

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/backtrail/backtrail/server"
	"github.com/backtrail/backtrail/server/store"
)

// leased is the result of processing q under the lease worker took.
func leased(q *server.Queued, worker, fp string, ts time.Time) *server.Processed {
	p := processed(q, fp, "", ts)
	p.Worker, p.Attempt = worker, q.Attempts
	return p
}

// testLeaseLost: a node whose lease expired and was claimed by another
// finishes late; its result must not be recorded, so the event counts
// once.
func testLeaseLost(t *testing.T, st server.Store, c *clock) {
	p := must(st.CreateProject(ctx, "p"))(t)
	accept(t, st, incoming(p, 1, c.Now()), incoming(p, 2, c.Now()))
	slow := must(st.Claim(ctx, "slow", 10, time.Minute))(t)
	if len(slow) != 2 {
		t.Fatalf("claimed %d, want 2", len(slow))
	}
	c.Add(time.Minute + time.Millisecond)
	fast := must(st.Claim(ctx, "fast", 10, time.Minute))(t)
	if len(fast) != 2 || fast[0].Attempts != 2 {
		t.Fatalf("reclaimed %+v", fast)
	}
	// The slow node's results arrive first, one of them a failure: both
	// are ignored.
	stale := []*server.Processed{leased(slow[0], "slow", "fp", c.Now()), leased(slow[1], "slow", "fp", c.Now())}
	stale[1].Report, stale[1].Err = nil, errors.New("slow node gave up")
	if err := st.Complete(ctx, stale); err != nil {
		t.Fatal(err)
	}
	for n := 1; n <= 2; n++ {
		if e := must(st.Event(ctx, p.ID, id(n)))(t); e.Processed || e.Error != "" || e.IssueID != 0 {
			t.Errorf("event %d after a stale Complete: %+v", n, e)
		}
	}
	if n := must(st.Pending(ctx))(t); n != 2 {
		t.Errorf("Pending after a stale Complete = %d, want 2", n)
	}
	// The lease holder's results count; completing them twice, or the
	// slow node's again, changes nothing.
	for _, batch := range [][]*server.Processed{
		{leased(fast[0], "fast", "fp", c.Now()), leased(fast[1], "fast", "fp", c.Now())},
		{leased(fast[0], "fast", "fp", c.Now()), leased(fast[1], "fast", "fp", c.Now())},
		stale,
	} {
		if err := st.Complete(ctx, batch); err != nil {
			t.Fatal(err)
		}
	}
	is := must(st.Issues(ctx, server.IssueFilter{ProjectID: p.ID}))(t)
	if len(is) != 1 || is[0].Count != 2 {
		t.Fatalf("issues %+v, want one with 2 events", is)
	}
	if counts := must(st.IssueCounts(ctx, is[0].ID, time.Time{}))(t); len(counts) != 1 || counts[0].Count != 2 {
		t.Errorf("hourly counts %+v, want 2", counts)
	}
	if n := must(st.Pending(ctx))(t); n != 0 {
		t.Errorf("Pending = %d, want 0", n)
	}
	// The same worker name with an older attempt is stale too (a node
	// that claimed an event twice, the first lease lost).
	accept(t, st, incoming(p, 3, c.Now()))
	q1 := must(st.Claim(ctx, "w", 10, time.Second))(t)[0]
	c.Add(2 * time.Second)
	q2 := must(st.Claim(ctx, "w", 10, time.Second))(t)[0]
	if err := st.Complete(ctx, []*server.Processed{leased(q1, "w", "other", c.Now())}); err != nil {
		t.Fatal(err)
	}
	if e := must(st.Event(ctx, p.ID, id(3)))(t); e.Processed {
		t.Errorf("event completed under its lost first lease")
	}
	if err := st.Complete(ctx, []*server.Processed{leased(q2, "w", "fp", c.Now())}); err != nil {
		t.Fatal(err)
	}
	if is := must(st.Issue(ctx, is[0].ID))(t); is.Count != 3 {
		t.Errorf("count %d, want 3", is.Count)
	}
}

// testRetention expires a day of events and checks that every count
// follows: issue counts, hourly and release rollups, missing symbols,
// and the dedupe of event ids.
func testRetention(t *testing.T, st server.Store, c *clock) {
	db := st.(*store.DB)
	p := must(st.CreateProject(ctx, "p"))(t)
	day1 := time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)
	day2 := day1.Add(24 * time.Hour)
	lib := server.MissingModule{DebugID: "5db9dd67-7626-3675-8c6a-606e8c7518f7", Name: "lib", Arch: "arm64"}
	type e struct {
		n        int
		received time.Time
		fp, rel  string
		missing  bool
	}
	evs := []e{
		{1, day1, "old", "1.0", true},                                    // first instant of day 1
		{2, day1.Add(10 * time.Hour), "old", "1.0", false},               //
		{3, day2.Add(-time.Millisecond), "both", "1.0", true},            // last instant of day 1
		{4, day2, "both", "2.0", true},                                   // first instant of day 2
		{5, day2.Add(5 * time.Hour), "both", "2.0", false},               //
		{6, day2.Add(24*time.Hour - time.Millisecond), "new", "", false}, // last instant of day 2
	}
	for _, x := range evs {
		accept(t, st, incoming(p, x.n, x.received))
	}
	qs := claimAll(t, st)
	var ps []*server.Processed
	for _, x := range evs {
		var m []server.MissingModule
		if x.missing {
			m = append(m, lib)
		}
		// Events happened when they were received.
		ps = append(ps, processed(qs[id(x.n)], x.fp, x.rel, x.received, m...))
	}
	if err := st.Complete(ctx, ps); err != nil {
		t.Fatal(err)
	}
	old, both := issueOf(t, st, p, 1), issueOf(t, st, p, 4)
	// A cut in the middle of day 2 on SQLite would delete part of it; a
	// cut at midnight means the same on both: day 1 goes.
	n, err := db.Expire(ctx, day2)
	if err != nil {
		t.Fatal(err)
	}
	if n != 3 {
		t.Errorf("Expire deleted %d events, want 3", n)
	}
	for _, x := range evs {
		_, err := st.Event(ctx, p.ID, id(x.n))
		if gone := x.received.Before(day2); gone != (server.ErrorCode(err) == server.ENOTFOUND) {
			t.Errorf("event %d received %v: Event error %v, want gone = %v", x.n, x.received, err, gone)
		}
	}
	if _, err := st.Issue(ctx, old.ID); server.ErrorCode(err) != server.ENOTFOUND {
		t.Errorf("issue without events after retention: %v, want not found", err)
	}
	is := must(st.Issue(ctx, both.ID))(t)
	if is.Count != 2 {
		t.Errorf("issue count %d, want 2", is.Count)
	}
	counts := must(st.IssueCounts(ctx, both.ID, time.Time{}))(t)
	want := []server.CountBucket{{Hour: day2, Count: 1}, {Hour: day2.Add(5 * time.Hour), Count: 1}}
	if !slices.Equal(counts, want) {
		t.Errorf("hourly counts %+v, want %+v", counts, want)
	}
	if rel := must(st.IssueReleases(ctx, both.ID))(t); !slices.Equal(rel, []string{"2.0"}) {
		t.Errorf("releases %q, want [2.0]", rel)
	}
	if is := must(st.Issues(ctx, server.IssueFilter{ProjectID: p.ID, Release: "1.0"}))(t); len(is) != 0 {
		t.Errorf("issues of release 1.0 after retention: %+v", is)
	}
	ms := must(st.MissingSymbols(ctx, p.ID))(t)
	if len(ms) != 1 || ms[0].Events != 1 {
		t.Errorf("missing symbols %+v, want lib with 1 event", ms)
	}
	e4 := must(st.Event(ctx, p.ID, id(4)))(t)
	if rows := must(st.EventsMissing(ctx, p.ID, lib.DebugID))(t); !slices.Equal(rows, []int64{e4.ID}) {
		t.Errorf("EventsMissing = %v, want [%d]", rows, e4.ID)
	}
	// An expired id is forgotten: sent again, it is a new event.
	if dup := must(st.Accept(ctx, []*server.Incoming{incoming(p, 1, day2), incoming(p, 4, day2)}))(t); !slices.Equal(dup, []bool{false, true}) {
		t.Errorf("Accept of an expired and a kept id: dup %v, want [false true]", dup)
	}
	// Expiring again deletes nothing more.
	if n, err := db.Expire(ctx, day2); err != nil || n != 0 {
		t.Errorf("Expire again: %d, %v", n, err)
	}
}

// TestReplicas runs two stores on one database, as two server replicas
// do: concurrent ingestion of the same ids stores each once, concurrent
// claiming leases each event to one of them, and concurrent completion
// creates each issue once with every event counted once.
func TestReplicas(t *testing.T) {
	for _, impl := range implementations {
		t.Run(impl.name, func(t *testing.T) {
			t.Parallel()
			dsn := impl.dsn(t)
			c := newClock()
			a, b := open(t, dsn, c.Now), open(t, dsn, c.Now)
			p := must(a.CreateProject(ctx, "p"))(t)
			const events, fingerprints = 400, 7
			// Both replicas receive every event (a client retrying
			// against the other one), in batches of 20.
			stored := make([][]bool, 2)
			var wg sync.WaitGroup
			for r, st := range []*store.DB{a, b} {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := 0; i < events; i += 20 {
						var in []*server.Incoming
						for n := i; n < i+20; n++ {
							in = append(in, incoming(p, n, c.Now()))
						}
						dup, err := st.Accept(ctx, in)
						if err != nil {
							t.Error(err)
							return
						}
						for _, d := range dup {
							stored[r] = append(stored[r], !d)
						}
					}
				}()
			}
			wg.Wait()
			for n := range events {
				if stored[0][n] == stored[1][n] {
					t.Fatalf("event %d stored by replica a: %v, b: %v; want exactly one", n, stored[0][n], stored[1][n])
				}
			}
			// Both process the queue until it is empty.
			var mu sync.Mutex
			claimed := map[string]string{}
			for r, st := range []*store.DB{a, b} {
				wg.Add(1)
				go func() {
					defer wg.Done()
					worker := fmt.Sprintf("replica-%d", r)
					for {
						qs, err := st.Claim(ctx, worker, 16, time.Minute)
						if err != nil {
							t.Error(err)
							return
						}
						if len(qs) == 0 {
							return
						}
						var ps []*server.Processed
						mu.Lock()
						for _, q := range qs {
							if w, ok := claimed[q.EventID]; ok {
								t.Errorf("event %s claimed by %s and %s", q.EventID, w, worker)
							}
							claimed[q.EventID] = worker
							var n int
							fmt.Sscanf(q.EventID, "%x", &n)
							ps = append(ps, leased(q, worker, fmt.Sprintf("fp-%d", n%fingerprints), c.Now()))
						}
						mu.Unlock()
						if err := st.Complete(ctx, ps); err != nil {
							t.Error(err)
							return
						}
					}
				}()
			}
			wg.Wait()
			if len(claimed) != events {
				t.Errorf("%d events claimed, want %d", len(claimed), events)
			}
			is := must(a.Issues(ctx, server.IssueFilter{ProjectID: p.ID}))(t)
			var sum int64
			for _, i := range is {
				sum += i.Count
				if want := int64(events / fingerprints); i.Count < want || i.Count > want+1 {
					t.Errorf("issue %s: count %d", i.Fingerprint, i.Count)
				}
			}
			if len(is) != fingerprints || sum != events {
				t.Errorf("%d issues with %d events, want %d with %d", len(is), sum, fingerprints, events)
			}
			if n := must(b.Pending(ctx))(t); n != 0 {
				t.Errorf("Pending = %d", n)
			}
		})
	}
}
