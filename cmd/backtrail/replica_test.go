package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/backtrail/backtrail/internal/pgtest"
	"github.com/backtrail/backtrail/report"
)

// TestReplicasKill runs two `backtrail serve` replicas on one PostgreSQL
// database and one data directory, ingests into both, and kill -9s one of
// them in the middle of the stream. Every event that got a 2xx must be
// stored once and processed once, and every issue's count must equal the
// events stored in it (the killed replica's leases expire and the other
// takes its events over).
func TestReplicasKill(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the command and runs two servers")
	}
	dsn := pgtest.URL(t)
	exe := buildBacktrail(t)
	dir := t.TempDir()
	const token = "replica-test-token"

	// `db migrate` first, as an operator would; both replicas then start
	// at once (their migrations check in under the advisory lock).
	out, err := exec.Command(exe, "db", "migrate", "--db", dsn, "--json").CombinedOutput()
	if err != nil {
		t.Fatalf("db migrate: %v\n%s", err, out)
	}
	var mig struct {
		Dialect string `json:"dialect"`
		Version int    `json:"version"`
	}
	if err := json.Unmarshal(out, &mig); err != nil || mig.Dialect != "postgres" || mig.Version < 1 {
		t.Fatalf("db migrate printed %s (%v)", out, err)
	}
	args := []string{"--data", dir, "--db", dsn, "--admin-token", token, "--lease", "2s"}
	rs := make([]*serveProcess, 2)
	var wg sync.WaitGroup
	for i := range rs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rs[i] = startServe(t, exe, args...)
		}()
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	if rs[0].key != rs[1].key {
		t.Fatalf("replicas disagree on the default project's key: %s, %s", rs[0].key, rs[1].key)
	}

	// Eight clients send events to both replicas in turn; a failed send is
	// retried with the same event id on the other replica, as SDKs retry
	// through a load balancer.
	const clients, perClient = 8, 150
	var killed atomic.Bool
	var acked sync.Map // event id → true
	var nacked atomic.Int64
	leasesAtKill := make(chan string, 1)
	client := &http.Client{Timeout: 30 * time.Second}
	send := func(r *serveProcess, body []byte) bool {
		req, _ := http.NewRequest("POST", r.url+"/api/v1/reports", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+r.key)
		resp, err := client.Do(req)
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode/100 == 2
	}
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := range perClient {
				id := fmt.Sprintf("%08x%024x", c, n)
				body := replicaReport(t, id, n%13)
				ok := false
				for try := 0; try < 50 && !ok; try++ {
					r := rs[(c+n+try)%2]
					if killed.Load() {
						r = rs[0]
					}
					if ok = send(r, body); !ok {
						time.Sleep(20 * time.Millisecond)
					}
				}
				if !ok {
					t.Errorf("event %s was never acknowledged", id)
					return
				}
				acked.Store(id, true)
				if nacked.Add(1) == clients*perClient/3 {
					// Mid-stream: kill -9 the second replica, with events
					// in flight and leased.
					rs[1].cmd.Process.Kill()
					killed.Store(true)
					leasesAtKill <- leaseOwners(dsn)
				}
			}
		}()
	}
	wg.Wait()
	<-rs[1].done
	if t.Failed() {
		t.FailNow()
	}

	// The survivor drains the queue, including the killed replica's
	// leased events once their leases expire.
	deadline := time.Now().Add(2 * time.Minute)
	for {
		resp, err := client.Get(rs[0].url + "/healthz")
		if err != nil {
			t.Fatal(err)
		}
		var h struct{ Pending int64 }
		json.NewDecoder(resp.Body).Decode(&h)
		resp.Body.Close()
		if h.Pending == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d events still pending", h.Pending)
		}
		time.Sleep(100 * time.Millisecond)
	}

	// Count by event id in the database.
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	rows, err := db.QueryContext(ctx, `SELECT event_id, count(*), min(state), max(state), count(issue_id) FROM events GROUP BY event_id`)
	if err != nil {
		t.Fatal(err)
	}
	stored := map[string]bool{}
	for rows.Next() {
		var id string
		var n, minState, maxState, withIssue int
		if err := rows.Scan(&id, &n, &minState, &maxState, &withIssue); err != nil {
			t.Fatal(err)
		}
		stored[id] = true
		if n != 1 || minState != 2 || maxState != 2 || withIssue != 1 {
			t.Errorf("event %s: %d rows, states %d..%d, %d with an issue; want 1 processed row with an issue", id, n, minState, maxState, withIssue)
		}
	}
	rows.Close()
	nAcked := 0
	acked.Range(func(k, _ any) bool {
		nAcked++
		if !stored[k.(string)] {
			t.Errorf("acknowledged event %s is not stored", k)
		}
		return true
	})
	if nAcked != clients*perClient {
		t.Errorf("%d events acknowledged, want %d", nAcked, clients*perClient)
	}
	// Every issue counts exactly the events stored in it, and so do its
	// hourly rollups.
	var bad int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM issues i WHERE i.count <> (SELECT count(*) FROM events e WHERE e.issue_id = i.id)
		OR i.count <> (SELECT coalesce(sum(c.count), 0) FROM issue_counts c WHERE c.issue_id = i.id)`).Scan(&bad); err != nil {
		t.Fatal(err)
	}
	var issues, sum, queue int64
	db.QueryRowContext(ctx, `SELECT count(*), coalesce(sum(count), 0) FROM issues`).Scan(&issues, &sum)
	db.QueryRowContext(ctx, `SELECT count(*) FROM queue`).Scan(&queue)
	if bad != 0 || sum != int64(len(stored)) || queue != 0 {
		t.Errorf("%d issues whose count differs from their events; issue counts sum to %d for %d stored events; %d queued", bad, sum, len(stored), queue)
	}
	t.Logf("%d acknowledged, %d stored, %d issues; leased events at the kill, by worker: %s; killed replica's log ends:\n%s",
		nAcked, len(stored), issues, <-leasesAtKill, lastLines(rs[1].logs.String(), 5))
}

// replicaReport returns a backtrail crash report with event id id in one
// of a few issues.
func replicaReport(t *testing.T, id string, issue int) []byte {
	r := &report.Report{
		Version: report.Version, Kind: report.KindCrash, EventID: id, Timestamp: time.Now().UTC(),
		Platform: report.PlatformGo, SDK: report.SDK{Name: "replica-test"}, Release: "1.0",
		Exception: &report.Exception{Type: "panic", Value: fmt.Sprintf("boom %d", issue), Mechanism: "panic"},
		Threads: []report.Thread{{ID: 1, Crashed: true, Frames: []report.Frame{
			{Function: fmt.Sprintf("main.handler%d", issue), File: "/src/app/main.go", Line: 10 + issue},
			{Function: "main.main", File: "/src/app/main.go", Line: 5},
		}}},
	}
	var buf bytes.Buffer
	if err := report.Encode(&buf, r); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// leaseOwners returns the number of leased queue rows per worker.
func leaseOwners(dsn string) string {
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		return err.Error()
	}
	defer db.Close()
	rows, err := db.Query(`SELECT lease_owner, count(*) FROM queue WHERE attempts > 0 GROUP BY lease_owner ORDER BY lease_owner`)
	if err != nil {
		return err.Error()
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var owner string
		var n int
		rows.Scan(&owner, &n)
		out = append(out, fmt.Sprintf("%s: %d", owner, n))
	}
	return "[" + strings.Join(out, ", ") + "]"
}

func lastLines(s string, n int) string {
	ls := strings.Split(strings.TrimSpace(s), "\n")
	if len(ls) > n {
		ls = ls[len(ls)-n:]
	}
	return strings.Join(ls, "\n")
}
