package store

import (
	"context"
	"database/sql"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/backtrail/backtrail/report"
	"github.com/backtrail/backtrail/server"
)

// result is one processing result on its way into the database, with what
// Complete read about its event.
type result struct {
	p    *server.Processed
	data []byte // the encoded, compressed report

	held bool  // the result's lease is held: record it
	recv int64 // received_at, the partition key (PostgreSQL)
	// The issue the event is counted in, from an earlier processing.
	prevIssue, prevProject int64
	prevFP, prevRelease    string
	prevTS                 int64
}

// reportBufs holds buffers for encoding processed reports (tens of KB
// each) before compression.
var reportBufs = sync.Pool{New: func() any { return new([]byte) }}

// completeTries bounds the attempts at a Complete transaction that
// PostgreSQL aborted as a deadlock victim.
const completeTries = 3

// Complete records processing results in one transaction: each event's
// report and issue, the issues' counters and rollups, and the modules the
// events lacked symbols for.
//
// A result is recorded only while the lease it was processed under is
// held (server.Processed.Worker and Attempt; zero values accept any
// lease): a result whose event was reclaimed by another worker after its
// lease expired, or was completed already, is skipped. So a slow or
// partitioned node cannot count an event a second time.
//
// The batch touches each issue, rollup row and missing-symbols row once,
// and in a fixed order — issues by project and fingerprint, rollups by
// issue and key — so concurrent Completes of several replicas wait for
// each other instead of deadlocking; a transaction PostgreSQL still picks
// as a deadlock victim (events moving between issues) is retried.
func (db *DB) Complete(ctx context.Context, ps []*server.Processed) error {
	if len(ps) == 0 {
		return nil
	}
	seen := make(map[int64]bool, len(ps))
	rs := make([]*result, 0, len(ps))
	for _, p := range ps {
		if seen[p.ID] {
			continue
		}
		seen[p.ID] = true
		r := &result{p: p}
		if p.Err == nil {
			bp := reportBufs.Get().(*[]byte)
			b, err := report.AppendJSON((*bp)[:0], p.Report)
			if err != nil {
				reportBufs.Put(bp)
				return fmt.Errorf("encode report: %w", err)
			}
			r.data = compress(b)
			*bp = b
			reportBufs.Put(bp)
		}
		rs = append(rs, r)
	}
	for try := 1; ; try++ {
		err := db.tx(ctx, func(tx *sql.Tx) error { return db.complete(ctx, tx, rs) })
		if err == nil || try == completeTries || !retryable(err) {
			return err
		}
	}
}

type issueKey struct {
	project int64
	fp      string
}

// issueAgg is what one batch does to one issue.
type issueAgg struct {
	issueKey
	kind, title, culprit    string
	firstRelease, lastRel   string
	first, last             int64
	groupingVersion         int
	n                       int64    // events newly counted
	releases                []string // their releases, for regression
	id                      int64
	status, resolvedRelease string
}

type hourKey struct{ issue, hour int64 }

type releaseKey struct {
	issue   int64
	release string
}

type releaseAgg struct {
	n           int64
	first, last int64
}

type missingKey struct {
	project int64
	debugID string
}

type missingAgg struct {
	server.MissingModule
	first, last int64
	firstNew    bool  // the first event of the batch missing it is new to it
	n           int64 // events new to it, after the first
}

func (db *DB) complete(ctx context.Context, tx *sql.Tx, rs []*result) error {
	for _, r := range rs {
		r.held = false
	}
	if err := db.loadResults(ctx, tx, rs); err != nil {
		return err
	}
	var ok []*result
	var done []int64
	for _, r := range rs {
		if !r.held {
			continue
		}
		done = append(done, r.p.ID)
		if r.p.Err != nil {
			where, args := db.eventWhere(r)
			if _, err := tx.ExecContext(ctx, db.q(`UPDATE events SET state = 3, error = ? WHERE `+where), append([]any{r.p.Err.Error()}, args...)...); err != nil {
				return err
			}
			continue
		}
		ok = append(ok, r)
	}
	if len(ok) > 0 {
		if err := db.completeOK(ctx, tx, ok); err != nil {
			return err
		}
	}
	if db.dialect == "postgres" && len(done) > 0 {
		if _, err := tx.ExecContext(ctx, `DELETE FROM queue WHERE id = ANY($1)`, done); err != nil {
			return err
		}
	}
	return nil
}

// loadResults reads the lease and the earlier issue of each result's
// event, and marks the results whose lease is held. On PostgreSQL the
// queue rows are locked until the transaction ends, so no replica
// reclaims them meanwhile.
func (db *DB) loadResults(ctx context.Context, tx *sql.Tx, rs []*result) error {
	byID := make(map[int64]*result, len(rs))
	ids := make([]int64, len(rs))
	for i, r := range rs {
		byID[r.p.ID] = r
		ids[i] = r.p.ID
	}
	holds := func(r *result, attempts int, owner string) bool {
		p := r.p
		return attempts > 0 && (p.Attempt == 0 || attempts == p.Attempt && (p.Worker == "" || owner == p.Worker))
	}
	in, args := db.in(ids)
	if db.dialect != "postgres" {
		rows, err := tx.QueryContext(ctx, `SELECT e.id, e.state, e.attempts, coalesce(e.lease_owner, ''), coalesce(e.issue_id, 0),
			coalesce(i.project_id, 0), coalesce(i.fingerprint, ''), e.timestamp, e.release
			FROM events e LEFT JOIN issues i ON i.id = e.issue_id WHERE e.id `+in, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var id int64
			var state, attempts int
			var owner string
			var prev result
			if err := rows.Scan(&id, &state, &attempts, &owner, &prev.prevIssue, &prev.prevProject, &prev.prevFP, &prev.prevTS, &prev.prevRelease); err != nil {
				return err
			}
			r := byID[id]
			r.prevIssue, r.prevProject, r.prevFP, r.prevTS, r.prevRelease = prev.prevIssue, prev.prevProject, prev.prevFP, prev.prevTS, prev.prevRelease
			r.held = state == stateLeased && holds(r, attempts, owner)
		}
		return rows.Err()
	}
	rows, err := tx.QueryContext(ctx, `SELECT id, received_at, attempts, lease_owner FROM queue WHERE id = ANY($1) ORDER BY id FOR UPDATE`, ids)
	if err != nil {
		return err
	}
	var held, recv []int64
	for rows.Next() {
		var id, at int64
		var attempts int
		var owner string
		if err := rows.Scan(&id, &at, &attempts, &owner); err != nil {
			rows.Close()
			return err
		}
		r := byID[id]
		r.recv = at
		if r.held = holds(r, attempts, owner); r.held {
			held, recv = append(held, id), append(recv, at)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil || len(held) == 0 {
		return err
	}
	rows, err = tx.QueryContext(ctx, `SELECT e.id, coalesce(e.issue_id, 0), coalesce(i.project_id, 0), coalesce(i.fingerprint, ''), e.timestamp, e.release
		FROM events e LEFT JOIN issues i ON i.id = e.issue_id WHERE e.id = ANY($1) AND e.received_at = ANY($2)`, held, recv)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var prev result
		if err := rows.Scan(&id, &prev.prevIssue, &prev.prevProject, &prev.prevFP, &prev.prevTS, &prev.prevRelease); err != nil {
			return err
		}
		r := byID[id]
		r.prevIssue, r.prevProject, r.prevFP, r.prevTS, r.prevRelease = prev.prevIssue, prev.prevProject, prev.prevFP, prev.prevTS, prev.prevRelease
	}
	return rows.Err()
}

// eventWhere returns the condition selecting a result's event row: by id,
// and on PostgreSQL also by partition key.
func (db *DB) eventWhere(r *result) (string, []any) {
	if db.dialect == "postgres" {
		return `id = ? AND received_at = ?`, []any{r.p.ID, r.recv}
	}
	return `id = ?`, []any{r.p.ID}
}

// completeOK records the successful results: issues, rollups, events,
// missing symbols.
func (db *DB) completeOK(ctx context.Context, tx *sql.Tx, rs []*result) error {
	now := db.Now()
	issues := map[issueKey]*issueAgg{}
	type moved struct {
		n     int64
		hours map[int64]int64
		rels  map[string]int64
	}
	moves := map[int64]*moved{}
	times := make([]int64, len(rs))
	counted := make([]bool, len(rs))
	for i, r := range rs {
		p, rep := r.p, r.p.Report
		at := rep.Timestamp
		if at.IsZero() {
			at = now
		}
		t := ms2(at)
		times[i] = t
		k := issueKey{p.ProjectID, p.Fingerprint}
		// A reprocessed event already counted in this issue leaves the
		// counters alone; one counted elsewhere moves there.
		counted[i] = r.prevIssue != 0 && r.prevProject == p.ProjectID && r.prevFP == p.Fingerprint
		a := issues[k]
		if a == nil {
			a = &issueAgg{issueKey: k, kind: string(rep.Kind), firstRelease: rep.Release, first: t, last: t, groupingVersion: p.GroupingVersion}
			issues[k] = a
		}
		a.first, a.last = min(a.first, t), max(a.last, t)
		if rep.Release != "" {
			a.lastRel = rep.Release
		}
		a.title, a.culprit = p.Title, p.Culprit
		if !counted[i] {
			a.n++
			a.releases = append(a.releases, rep.Release)
			if r.prevIssue != 0 {
				m := moves[r.prevIssue]
				if m == nil {
					m = &moved{hours: map[int64]int64{}, rels: map[string]int64{}}
					moves[r.prevIssue] = m
				}
				m.n++
				m.hours[fromMS(r.prevTS).Truncate(time.Hour).UnixMilli()]++
				m.rels[r.prevRelease]++
			}
		}
	}

	// Issues, in key order.
	keys := make([]issueKey, 0, len(issues))
	for k := range issues {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].project != keys[j].project {
			return keys[i].project < keys[j].project
		}
		return keys[i].fp < keys[j].fp
	})
	if err := db.issueIDs(ctx, tx, keys, issues); err != nil {
		return err
	}

	// The events themselves.
	if db.dialect == "postgres" {
		es := &rowSet{types: []string{"bigint", "bigint", "bigint", "text", "bigint", "text", "text", "bytea"}}
		for i, r := range rs {
			rep := r.p.Report
			es.add(r.p.ID, r.recv, issues[issueKey{r.p.ProjectID, r.p.Fingerprint}].id, string(rep.Kind), times[i], rep.Release, r.p.Title, r.data)
		}
		src, args := db.source(es)
		if _, err := tx.ExecContext(ctx, db.q(`UPDATE events e SET state = 2, issue_id = v.issue_id, kind = v.kind, timestamp = v.ts,
				release = v.release, title = v.title, error = '', data = v.data
			FROM (`+src+`) AS v (id, received_at, issue_id, kind, ts, release, title, data)
			WHERE e.id = v.id AND e.received_at = v.received_at`), args...); err != nil {
			return fmt.Errorf("events: %w", err)
		}
	} else {
		st := tx.StmtContext(ctx, db.stmts.completeEvent)
		for i, r := range rs {
			rep := r.p.Report
			if _, err := st.ExecContext(ctx, issues[issueKey{r.p.ProjectID, r.p.Fingerprint}].id, string(rep.Kind), times[i], rep.Release, r.p.Title, r.data, r.p.ID); err != nil {
				return err
			}
		}
	}
	if err := db.completeMissing(ctx, tx, rs, times); err != nil {
		return err
	}

	// The counters last: the issue upsert locks the issues' rows until
	// the commit, and other replicas completing events of the same issues
	// wait for them, so the locks are taken as late as possible, in key
	// order.
	is := &rowSet{types: []string{"bigint", "text", "text", "text", "text", "text", "bigint", "bigint", "bigint", "text", "text", "bigint"}}
	for _, k := range keys {
		a := issues[k]
		is.add(k.project, k.fp, a.kind, a.title, a.culprit, string(server.StatusUnresolved), a.n, a.first, a.last, a.firstRelease, a.lastRel, int64(a.groupingVersion))
	}
	src, args := db.source(is)
	rows, err := tx.QueryContext(ctx, db.q(`INSERT INTO issues (project_id, fingerprint, kind, title, culprit, status, count, first_seen, last_seen, first_release, last_release, grouping_version)
		`+src+`
		ON CONFLICT (project_id, fingerprint) DO UPDATE SET
			count = issues.count + excluded.count,
			last_seen = `+db.greatest("issues.last_seen", "excluded.last_seen")+`,
			first_seen = `+db.least("issues.first_seen", "excluded.first_seen")+`,
			last_release = CASE WHEN excluded.last_release <> '' THEN excluded.last_release ELSE issues.last_release END,
			title = excluded.title, culprit = excluded.culprit
		RETURNING id, project_id, fingerprint, status, resolved_release`), args...)
	if err != nil {
		return fmt.Errorf("issues: %w", err)
	}
	for rows.Next() {
		var k issueKey
		var id int64
		var status, resolved string
		if err := rows.Scan(&id, &k.project, &k.fp, &status, &resolved); err != nil {
			rows.Close()
			return err
		}
		if a := issues[k]; a != nil {
			a.id, a.status, a.resolvedRelease = id, status, resolved
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, k := range keys {
		a := issues[k]
		if a.id == 0 {
			return fmt.Errorf("issue %q of project %d: not returned by the upsert", k.fp, k.project)
		}
		if a.status != string(server.StatusResolved) {
			continue
		}
		for _, rel := range a.releases {
			if server.Regresses(a.resolvedRelease, rel) {
				if _, err := tx.ExecContext(ctx, db.q(`UPDATE issues SET status = 'unresolved', regressed_at = ? WHERE id = ?`), ms2(now), a.id); err != nil {
					return err
				}
				break
			}
		}
	}

	// Events that moved out of an issue, in issue order.
	if len(moves) > 0 {
		from := make([]int64, 0, len(moves))
		for id := range moves {
			from = append(from, id)
		}
		sort.Slice(from, func(i, j int) bool { return from[i] < from[j] })
		const dec = `CASE WHEN count > ? THEN count - ? ELSE 0 END`
		for _, id := range from {
			m := moves[id]
			if _, err := tx.ExecContext(ctx, db.q(`UPDATE issues SET count = `+dec+` WHERE id = ?`), m.n, m.n, id); err != nil {
				return err
			}
			for _, h := range sortedKeys(m.hours, func(a, b int64) bool { return a < b }) {
				n := m.hours[h]
				if _, err := tx.ExecContext(ctx, db.q(`UPDATE issue_counts SET count = `+dec+` WHERE issue_id = ? AND hour = ?`), n, n, id, h); err != nil {
					return err
				}
			}
			for _, rel := range sortedKeys(m.rels, func(a, b string) bool { return a < b }) {
				n := m.rels[rel]
				if _, err := tx.ExecContext(ctx, db.q(`UPDATE issue_releases SET count = `+dec+` WHERE issue_id = ? AND release = ?`), n, n, id, rel); err != nil {
					return err
				}
			}
		}
		in, args := db.in(from)
		if _, err := tx.ExecContext(ctx, db.q(`DELETE FROM issue_counts WHERE issue_id `+in+` AND count <= 0`), args...); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, db.q(`DELETE FROM issue_releases WHERE issue_id `+in+` AND count <= 0`), args...); err != nil {
			return err
		}
	}

	// Rollups of the newly counted events.
	hours := map[hourKey]int64{}
	rels := map[releaseKey]*releaseAgg{}
	for i, r := range rs {
		if counted[i] {
			continue
		}
		id := issues[issueKey{r.p.ProjectID, r.p.Fingerprint}].id
		t := times[i]
		hours[hourKey{id, fromMS(t).Truncate(time.Hour).UnixMilli()}]++
		rk := releaseKey{id, r.p.Report.Release}
		ra := rels[rk]
		if ra == nil {
			ra = &releaseAgg{first: t, last: t}
			rels[rk] = ra
		}
		ra.n++
		ra.last = max(ra.last, t)
	}
	if len(hours) > 0 {
		hs := &rowSet{types: []string{"bigint", "bigint", "bigint"}}
		for _, k := range sortedKeys(hours, func(a, b hourKey) bool { return a.issue < b.issue || a.issue == b.issue && a.hour < b.hour }) {
			hs.add(k.issue, k.hour, hours[k])
		}
		src, args := db.source(hs)
		if _, err := tx.ExecContext(ctx, db.q(`INSERT INTO issue_counts (issue_id, hour, count) `+src+`
			ON CONFLICT (issue_id, hour) DO UPDATE SET count = issue_counts.count + excluded.count`), args...); err != nil {
			return fmt.Errorf("hourly counts: %w", err)
		}
		rs2 := &rowSet{types: []string{"bigint", "text", "bigint", "bigint", "bigint"}}
		for _, k := range sortedKeys(rels, func(a, b releaseKey) bool {
			return a.issue < b.issue || a.issue == b.issue && a.release < b.release
		}) {
			ra := rels[k]
			rs2.add(k.issue, k.release, ra.n, ra.first, ra.last)
		}
		src, args = db.source(rs2)
		if _, err := tx.ExecContext(ctx, db.q(`INSERT INTO issue_releases (issue_id, release, count, first_seen, last_seen) `+src+`
			ON CONFLICT (issue_id, release) DO UPDATE SET count = issue_releases.count + excluded.count,
				last_seen = `+db.greatest("issue_releases.last_seen", "excluded.last_seen")), args...); err != nil {
			return fmt.Errorf("release counts: %w", err)
		}
	}

	return nil
}

// issueIDs sets the id of each issue of the batch, creating the issues
// that do not exist yet with no events. It reads existing issues without
// locking them: Complete updates their counters at the end of its
// transaction.
func (db *DB) issueIDs(ctx context.Context, tx *sql.Tx, keys []issueKey, issues map[issueKey]*issueAgg) error {
	find := func(keys []issueKey) ([]issueKey, error) {
		ks := &rowSet{types: []string{"bigint", "text"}}
		for _, k := range keys {
			ks.add(k.project, k.fp)
		}
		src, args := db.source(ks)
		rows, err := tx.QueryContext(ctx, db.q(`SELECT id, project_id, fingerprint FROM issues WHERE (project_id, fingerprint) IN (`+src+`)`), args...)
		if err != nil {
			return nil, fmt.Errorf("issues: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			var k issueKey
			var id int64
			if err := rows.Scan(&id, &k.project, &k.fp); err != nil {
				return nil, err
			}
			if a := issues[k]; a != nil {
				a.id = id
			}
		}
		if err := rows.Err(); err != nil {
			return nil, err
		}
		var missing []issueKey
		for _, k := range keys {
			if issues[k].id == 0 {
				missing = append(missing, k)
			}
		}
		return missing, nil
	}
	missing, err := find(keys)
	if err != nil || len(missing) == 0 {
		return err
	}
	is := &rowSet{types: []string{"bigint", "text", "text", "text", "text", "text", "bigint", "bigint", "bigint", "text", "text", "bigint"}}
	for _, k := range missing {
		a := issues[k]
		is.add(k.project, k.fp, a.kind, a.title, a.culprit, string(server.StatusUnresolved), int64(0), a.first, a.last, a.firstRelease, a.lastRel, int64(a.groupingVersion))
	}
	src, args := db.source(is)
	if _, err := tx.ExecContext(ctx, db.q(`INSERT INTO issues (project_id, fingerprint, kind, title, culprit, status, count, first_seen, last_seen, first_release, last_release, grouping_version)
		`+src+` ON CONFLICT (project_id, fingerprint) DO NOTHING`), args...); err != nil {
		return fmt.Errorf("new issues: %w", err)
	}
	if missing, err = find(missing); err != nil {
		return err
	}
	if len(missing) > 0 {
		return fmt.Errorf("issue %q of project %d: not found after its insert", missing[0].fp, missing[0].project)
	}
	return nil
}

// sqliteCompleteEvent records one processed event (Complete, SQLite).
const sqliteCompleteEvent = `UPDATE events SET state = 2, issue_id = ?, kind = ?, timestamp = ?, release = ?, title = ?, error = '', data = ?,
	lease_owner = NULL, lease_until = NULL WHERE id = ?`

// completeMissing records the modules the events lacked symbols for. An
// event reprocessed while it still lacks a module was counted for it
// already.
func (db *DB) completeMissing(ctx context.Context, tx *sql.Tx, rs []*result, times []int64) error {
	ids := make([]int64, len(rs))
	for i, r := range rs {
		ids[i] = r.p.ID
	}
	in, args := db.in(ids)
	rows, err := tx.QueryContext(ctx, db.q(`SELECT event_row, debug_id FROM event_missing WHERE event_row `+in), args...)
	if err != nil {
		return err
	}
	type rowModule struct {
		row     int64
		debugID string
	}
	was := map[rowModule]bool{}
	for rows.Next() {
		var k rowModule
		if err := rows.Scan(&k.row, &k.debugID); err != nil {
			rows.Close()
			return err
		}
		was[k] = true
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	if len(was) > 0 {
		if _, err := tx.ExecContext(ctx, db.q(`DELETE FROM event_missing WHERE event_row `+in), args...); err != nil {
			return err
		}
	}
	missing := map[missingKey]*missingAgg{}
	type emKey struct {
		missingKey
		row int64
	}
	var links []emKey
	for i, r := range rs {
		once := map[string]bool{}
		for _, m := range r.p.Missing {
			if once[m.DebugID] {
				continue
			}
			once[m.DebugID] = true
			k := missingKey{r.p.ProjectID, m.DebugID}
			isNew := !was[rowModule{r.p.ID, m.DebugID}]
			a := missing[k]
			switch {
			case a == nil:
				missing[k] = &missingAgg{MissingModule: m, first: times[i], last: times[i], firstNew: isNew}
			default:
				a.last = max(a.last, times[i])
				if isNew {
					a.n++
				}
			}
			links = append(links, emKey{k, r.p.ID})
		}
	}
	if len(missing) == 0 {
		return nil
	}
	// The first event of the batch inserts the row with 1 event, or adds
	// itself to an existing row when it is new to the module; the others
	// add themselves when new. Rows split by that first event, each part
	// in key order.
	for _, firstNew := range []bool{true, false} {
		ms := &rowSet{types: []string{"bigint", "text", "text", "text", "text", "bigint", "bigint", "bigint"}}
		for _, k := range sortedKeys(missing, func(a, b missingKey) bool {
			return a.project < b.project || a.project == b.project && a.debugID < b.debugID
		}) {
			a := missing[k]
			if a.firstNew == firstNew {
				ms.add(k.project, k.debugID, a.CodeID, a.Name, a.Arch, 1+a.n, a.first, a.last)
			}
		}
		if len(ms.rows) == 0 {
			continue
		}
		add := `excluded.events`
		if !firstNew {
			add = `excluded.events - 1`
		}
		src, args := db.source(ms)
		if _, err := tx.ExecContext(ctx, db.q(`INSERT INTO missing_symbols (project_id, debug_id, code_id, name, arch, events, first_seen, last_seen) `+src+`
			ON CONFLICT (project_id, debug_id) DO UPDATE SET events = missing_symbols.events + `+add+`,
				last_seen = `+db.greatest("missing_symbols.last_seen", "excluded.last_seen")), args...); err != nil {
			return fmt.Errorf("missing symbols: %w", err)
		}
	}
	sort.Slice(links, func(i, j int) bool {
		a, b := links[i], links[j]
		if a.project != b.project {
			return a.project < b.project
		}
		if a.debugID != b.debugID {
			return a.debugID < b.debugID
		}
		return a.row < b.row
	})
	em := &rowSet{types: []string{"bigint", "text", "bigint"}}
	for _, l := range links {
		em.add(l.project, l.debugID, l.row)
	}
	src, args := db.source(em)
	_, err = tx.ExecContext(ctx, db.q(`INSERT INTO event_missing (project_id, debug_id, event_row) `+src+` ON CONFLICT DO NOTHING`), args...)
	return err
}

// sortedKeys returns the keys of m ordered by less.
func sortedKeys[K comparable, V any](m map[K]V, less func(a, b K) bool) []K {
	ks := make([]K, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Slice(ks, func(i, j int) bool { return less(ks[i], ks[j]) })
	return ks
}
