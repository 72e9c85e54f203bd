package store

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/backtrail/backtrail/report"
	"github.com/backtrail/backtrail/server"
)

// Event states (events.state).
const (
	stateQueued    = 0
	stateLeased    = 1
	stateProcessed = 2
	stateFailed    = 3
)

// maxAttempts is how often an event is leased before it is marked failed:
// a payload that crashes or hangs processing must not loop forever.
const maxAttempts = 5

// Accept stores incoming events in one transaction and queues them.
func (db *DB) Accept(ctx context.Context, evs []*server.Incoming) ([]bool, error) {
	dup := make([]bool, len(evs))
	raws := make([][]byte, len(evs))
	for i, e := range evs {
		raws[i] = db.enc.EncodeAll(e.Raw, nil)
	}
	err := db.tx(ctx, func(tx *sql.Tx) error {
		st, err := tx.PrepareContext(ctx, db.q(`INSERT INTO events (project_id, event_id, format, state, received_at, timestamp, raw)
			VALUES (?, ?, ?, 0, ?, ?, ?) ON CONFLICT (project_id, event_id) DO NOTHING`))
		if err != nil {
			return err
		}
		defer st.Close()
		for i, e := range evs {
			at := ms2(e.Received)
			res, err := st.ExecContext(ctx, e.ProjectID, e.EventID, e.Format, at, at, raws[i])
			if err != nil {
				return fmt.Errorf("event %s: %w", e.EventID, err)
			}
			n, err := res.RowsAffected()
			if err != nil {
				return err
			}
			dup[i] = n == 0
		}
		return nil
	})
	return dup, err
}

// Claim leases up to n queued events, oldest first, and events whose lease
// expired. Events leased maxAttempts times are marked failed instead.
func (db *DB) Claim(ctx context.Context, worker string, n int, lease time.Duration) ([]*server.Queued, error) {
	now := db.Now()
	var out []*server.Queued
	err := db.tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, db.q(`UPDATE events SET state = 3, error = 'processing did not finish after repeated attempts'
			WHERE state = 1 AND lease_until < ? AND attempts >= ?`), ms2(now), maxAttempts); err != nil {
			return err
		}
		rows, err := tx.QueryContext(ctx, db.q(`UPDATE events SET state = 1, lease_owner = ?, lease_until = ?, attempts = attempts + 1
			WHERE id IN (SELECT id FROM events WHERE state = 0 OR (state = 1 AND lease_until < ?) ORDER BY id LIMIT ?)
			RETURNING id, project_id, event_id, format, raw, received_at, attempts`),
			worker, ms2(now.Add(lease)), ms2(now), n)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var q server.Queued
			var raw []byte
			var recv int64
			if err := rows.Scan(&q.ID, &q.ProjectID, &q.EventID, &q.Format, &raw, &recv, &q.Attempts); err != nil {
				return err
			}
			q.Received = fromMS(recv)
			if q.Raw, err = db.dec.DecodeAll(raw, nil); err != nil {
				return fmt.Errorf("event %s: stored payload: %w", q.EventID, err)
			}
			out = append(out, &q)
		}
		return rows.Err()
	})
	// RETURNING gives rows in no particular order.
	sortQueued(out)
	return out, err
}

func sortQueued(qs []*server.Queued) {
	for i := 1; i < len(qs); i++ {
		for j := i; j > 0 && qs[j].ID < qs[j-1].ID; j-- {
			qs[j], qs[j-1] = qs[j-1], qs[j]
		}
	}
}

// Pending returns the number of queued or leased events.
func (db *DB) Pending(ctx context.Context) (int64, error) {
	var n int64
	err := db.r.QueryRowContext(ctx, `SELECT count(*) FROM events WHERE state < 2`).Scan(&n)
	return n, err
}

// Requeue queues events again, for reprocessing.
func (db *DB) Requeue(ctx context.Context, ids []int64) error {
	return db.tx(ctx, func(tx *sql.Tx) error {
		st, err := tx.PrepareContext(ctx, db.q(`UPDATE events SET state = 0, attempts = 0, lease_owner = NULL, lease_until = NULL WHERE id = ? AND state >= 2`))
		if err != nil {
			return err
		}
		defer st.Close()
		for _, id := range ids {
			if _, err := st.ExecContext(ctx, id); err != nil {
				return err
			}
		}
		return nil
	})
}

// Complete records processing results: each event's report and issue, the
// issue's counters, and the modules it lacked symbols for.
func (db *DB) Complete(ctx context.Context, ps []*server.Processed) error {
	type prepared struct {
		data []byte
		p    *server.Processed
	}
	pre := make([]prepared, len(ps))
	for i, p := range ps {
		pre[i].p = p
		if p.Err == nil {
			var buf bytes.Buffer
			if err := report.Encode(&buf, p.Report); err != nil {
				return fmt.Errorf("encode report: %w", err)
			}
			pre[i].data = db.enc.EncodeAll(buf.Bytes(), nil)
		}
	}
	return db.tx(ctx, func(tx *sql.Tx) error {
		for _, x := range pre {
			if err := db.complete(ctx, tx, x.p, x.data); err != nil {
				return err
			}
		}
		return nil
	})
}

func (db *DB) complete(ctx context.Context, tx *sql.Tx, p *server.Processed, data []byte) error {
	if p.Err != nil {
		_, err := tx.ExecContext(ctx, db.q(`UPDATE events SET state = 3, error = ? WHERE id = ?`), p.Err.Error(), p.ID)
		return err
	}
	r := p.Report
	var prevIssue sql.NullInt64
	var prevTS int64
	var prevRelease string
	if err := tx.QueryRowContext(ctx, db.q(`SELECT issue_id, timestamp, release FROM events WHERE id = ?`), p.ID).Scan(&prevIssue, &prevTS, &prevRelease); err != nil {
		return fmt.Errorf("event row %d: %w", p.ID, err)
	}
	at := r.Timestamp
	if at.IsZero() {
		at = db.Now()
	}
	t := ms2(at)
	var issueID int64
	var status, resolvedRelease string
	err := tx.QueryRowContext(ctx, db.q(`INSERT INTO issues (project_id, fingerprint, kind, title, culprit, status, count, first_seen, last_seen, first_release, last_release, grouping_version)
		VALUES (?, ?, ?, ?, ?, 'unresolved', 0, ?, ?, ?, ?, ?)
		ON CONFLICT (project_id, fingerprint) DO UPDATE SET
			last_seen = `+db.greatest("issues.last_seen", "excluded.last_seen")+`,
			first_seen = `+db.least("issues.first_seen", "excluded.first_seen")+`,
			last_release = CASE WHEN excluded.last_release <> '' THEN excluded.last_release ELSE issues.last_release END,
			title = excluded.title, culprit = excluded.culprit
		RETURNING id, status, resolved_release`),
		p.ProjectID, p.Fingerprint, string(r.Kind), p.Title, p.Culprit, t, t, r.Release, r.Release, p.GroupingVersion).
		Scan(&issueID, &status, &resolvedRelease)
	if err != nil {
		return fmt.Errorf("issue for event %s: %w", r.EventID, err)
	}
	// A reprocessed event already counted for an issue: move its count if
	// the fingerprint changed, else leave the counters alone.
	counted := prevIssue.Valid && prevIssue.Int64 == issueID
	if prevIssue.Valid && prevIssue.Int64 != issueID {
		if _, err := tx.ExecContext(ctx, db.q(`UPDATE issues SET count = count - 1 WHERE id = ? AND count > 0`), prevIssue.Int64); err != nil {
			return err
		}
		// Its hour and release rollups move with it.
		prevHour := fromMS(prevTS).Truncate(time.Hour).UnixMilli()
		if _, err := tx.ExecContext(ctx, db.q(`UPDATE issue_counts SET count = count - 1 WHERE issue_id = ? AND hour = ? AND count > 0`), prevIssue.Int64, prevHour); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, db.q(`UPDATE issue_releases SET count = count - 1 WHERE issue_id = ? AND release = ? AND count > 0`), prevIssue.Int64, prevRelease); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, db.q(`DELETE FROM issue_counts WHERE issue_id = ? AND count = 0`), prevIssue.Int64); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, db.q(`DELETE FROM issue_releases WHERE issue_id = ? AND count = 0`), prevIssue.Int64); err != nil {
			return err
		}
	}
	if !counted {
		if _, err := tx.ExecContext(ctx, db.q(`UPDATE issues SET count = count + 1 WHERE id = ?`), issueID); err != nil {
			return err
		}
		hour := at.UTC().Truncate(time.Hour).UnixMilli()
		if _, err := tx.ExecContext(ctx, db.q(`INSERT INTO issue_counts (issue_id, hour, count) VALUES (?, ?, 1)
			ON CONFLICT (issue_id, hour) DO UPDATE SET count = issue_counts.count + 1`), issueID, hour); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, db.q(`INSERT INTO issue_releases (issue_id, release, count, first_seen, last_seen) VALUES (?, ?, 1, ?, ?)
			ON CONFLICT (issue_id, release) DO UPDATE SET count = issue_releases.count + 1,
				last_seen = `+db.greatest("issue_releases.last_seen", "excluded.last_seen")), issueID, r.Release, t, t); err != nil {
			return err
		}
		if status == string(server.StatusResolved) && server.Regresses(resolvedRelease, r.Release) {
			if _, err := tx.ExecContext(ctx, db.q(`UPDATE issues SET status = 'unresolved', regressed_at = ? WHERE id = ?`), ms2(db.Now()), issueID); err != nil {
				return err
			}
		}
	}
	if _, err := tx.ExecContext(ctx, db.q(`UPDATE events SET state = 2, issue_id = ?, kind = ?, timestamp = ?, release = ?, title = ?, error = '', data = ?, lease_owner = NULL, lease_until = NULL WHERE id = ?`),
		issueID, string(r.Kind), t, r.Release, p.Title, data, p.ID); err != nil {
		return err
	}
	// A reprocessed event that still lacks a module was counted for it
	// already.
	wasMissing := map[string]bool{}
	rows, err := tx.QueryContext(ctx, db.q(`SELECT debug_id FROM event_missing WHERE event_row = ?`), p.ID)
	if err != nil {
		return err
	}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return err
		}
		wasMissing[id] = true
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, db.q(`DELETE FROM event_missing WHERE event_row = ?`), p.ID); err != nil {
		return err
	}
	for _, m := range p.Missing {
		more := 1
		if wasMissing[m.DebugID] {
			more = 0
		}
		if _, err := tx.ExecContext(ctx, db.q(`INSERT INTO missing_symbols (project_id, debug_id, code_id, name, arch, events, first_seen, last_seen) VALUES (?, ?, ?, ?, ?, 1, ?, ?)
			ON CONFLICT (project_id, debug_id) DO UPDATE SET events = missing_symbols.events + ?, last_seen = `+db.greatest("missing_symbols.last_seen", "excluded.last_seen")),
			p.ProjectID, m.DebugID, m.CodeID, m.Name, m.Arch, t, t, more); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, db.q(`INSERT INTO event_missing (project_id, debug_id, event_row) VALUES (?, ?, ?) ON CONFLICT DO NOTHING`), p.ProjectID, m.DebugID, p.ID); err != nil {
			return err
		}
	}
	return nil
}

func (db *DB) greatest(a, b string) string {
	if db.dialect == "postgres" {
		return "GREATEST(" + a + ", " + b + ")"
	}
	return "max(" + a + ", " + b + ")"
}

func (db *DB) least(a, b string) string {
	if db.dialect == "postgres" {
		return "LEAST(" + a + ", " + b + ")"
	}
	return "min(" + a + ", " + b + ")"
}

const eventCols = `id, project_id, event_id, coalesce(issue_id, 0), kind, format, state, received_at, timestamp, release, title, error`

func scanEvent(row interface{ Scan(...any) error }, extra ...any) (*server.Event, error) {
	var e server.Event
	var state int
	var recv, ts int64
	dst := append([]any{&e.ID, &e.ProjectID, &e.EventID, &e.IssueID, &e.Kind, &e.Format, &state, &recv, &ts, &e.Release, &e.Title, &e.Error}, extra...)
	if err := row.Scan(dst...); err != nil {
		return nil, err
	}
	e.Processed = state == stateProcessed
	e.Received, e.Timestamp = fromMS(recv), fromMS(ts)
	return &e, nil
}

// Events returns the events of an issue, newest first, without reports.
func (db *DB) Events(ctx context.Context, issueID int64, limit, offset int) ([]*server.Event, error) {
	if limit <= 0 {
		limit = 100
	}
	rows, err := db.r.QueryContext(ctx, db.q(`SELECT `+eventCols+` FROM events WHERE issue_id = ? ORDER BY received_at DESC, id DESC LIMIT ? OFFSET ?`), issueID, limit, offset)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var es []*server.Event
	for rows.Next() {
		e, err := scanEvent(rows)
		if err != nil {
			return nil, err
		}
		es = append(es, e)
	}
	return es, rows.Err()
}

// Event returns an event with its processed report (nil until processed).
func (db *DB) Event(ctx context.Context, projectID int64, eventID string) (*server.Event, error) {
	var data []byte
	where, args := `event_id = ?`, []any{eventID}
	if projectID != 0 {
		where, args = `project_id = ? AND event_id = ?`, []any{projectID, eventID}
	}
	e, err := scanEvent(db.r.QueryRowContext(ctx, db.q(`SELECT `+eventCols+`, data FROM events WHERE `+where+` LIMIT 1`), args...), &data)
	if isNoRows(err) {
		return nil, notFound("no such event")
	}
	if err != nil {
		return nil, err
	}
	if data != nil {
		js, err := db.dec.DecodeAll(data, nil)
		if err != nil {
			return nil, fmt.Errorf("event %s: stored report: %w", eventID, err)
		}
		var r report.Report
		if err := json.Unmarshal(js, &r); err != nil {
			return nil, fmt.Errorf("event %s: stored report: %w", eventID, err)
		}
		e.Report = &r
	}
	return e, nil
}

// RawEvent returns an event's payload as received.
func (db *DB) RawEvent(ctx context.Context, projectID int64, eventID string) (string, []byte, error) {
	var format string
	var raw []byte
	err := db.r.QueryRowContext(ctx, db.q(`SELECT format, raw FROM events WHERE project_id = ? AND event_id = ?`), projectID, eventID).Scan(&format, &raw)
	if isNoRows(err) {
		return "", nil, notFound("no such event")
	}
	if err != nil {
		return "", nil, err
	}
	raw, err = db.dec.DecodeAll(raw, nil)
	return format, raw, err
}
