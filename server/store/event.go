package store

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
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
		raws[i] = compress(e.Raw)
	}
	if db.dialect == "postgres" {
		return db.pgAccept(ctx, evs, raws)
	}
	err := db.gatedTx(ctx, true, func(tx *sql.Tx) error {
		st := tx.StmtContext(ctx, db.stmts.accept)
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

// sqliteAccept inserts one event (Accept, SQLite).
const sqliteAccept = `INSERT INTO events (project_id, event_id, format, state, received_at, timestamp, raw)
	VALUES (?, ?, ?, 0, ?, ?, ?) ON CONFLICT (project_id, event_id) DO NOTHING`

// sqliteClaimFail and sqliteClaim are Claim's statements on SQLite. Every
// condition on state repeats "state < 2" so that SQLite uses the partial
// index events_queue; an OR of the queued and the expired rows would scan
// the whole table instead, under the write lock. Queued and expired rows
// are found by one index search each, merged in id order.
const (
	sqliteClaimFail = `UPDATE events SET state = 3, error = 'processing did not finish after repeated attempts'
	WHERE state < 2 AND state = 1 AND lease_until < ? AND attempts >= ?`
	sqliteClaim = `UPDATE events SET state = 1, lease_owner = ?, lease_until = ?, attempts = attempts + 1
	WHERE id IN (
		SELECT id FROM (SELECT id FROM events WHERE state < 2 AND state = 0 ORDER BY id LIMIT ?)
		UNION ALL
		SELECT id FROM (SELECT id FROM events WHERE state < 2 AND state = 1 AND lease_until < ? ORDER BY id LIMIT ?)
		ORDER BY id LIMIT ?)
	RETURNING id, project_id, event_id, format, raw, received_at, attempts`
)

// Claim leases up to n queued events, oldest first, and events whose lease
// expired. Events leased maxAttempts times are marked failed instead.
func (db *DB) Claim(ctx context.Context, worker string, n int, lease time.Duration) ([]*server.Queued, error) {
	if db.dialect == "postgres" {
		return db.pgClaim(ctx, worker, n, lease)
	}
	now := db.Now()
	var out []*server.Queued
	err := db.tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.StmtContext(ctx, db.stmts.claimFail).ExecContext(ctx, ms2(now), maxAttempts); err != nil {
			return err
		}
		rows, err := tx.StmtContext(ctx, db.stmts.claim).QueryContext(ctx, worker, ms2(now.Add(lease)), n, ms2(now), n, n)
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
			q.Received, q.Raw = fromMS(recv), raw
			out = append(out, &q)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, err
	}
	// RETURNING gives rows in no particular order.
	sortQueued(out)
	db.decompressRaw(out)
	return out, nil
}

func sortQueued(qs []*server.Queued) {
	slices.SortFunc(qs, func(a, b *server.Queued) int { return cmp.Compare(a.ID, b.ID) })
}

// decompressRaw decompresses the payloads Claim read, after its
// transaction: on SQLite the writer is held until the commit, and every
// accept waits for it. A payload that does not decode fails its own event
// (Queued.Err), not the claim of the others.
func (db *DB) decompressRaw(qs []*server.Queued) {
	for _, q := range qs {
		raw, err := db.decompress(q.Raw)
		if err != nil {
			q.Err = fmt.Errorf("event %s: stored payload: %w", q.EventID, err)
		}
		q.Raw = raw
	}
}

// Pending returns the number of queued or leased events.
func (db *DB) Pending(ctx context.Context) (int64, error) {
	var n int64
	q := `SELECT count(*) FROM events WHERE state < 2`
	if db.dialect == "postgres" {
		q = `SELECT count(*) FROM queue`
	}
	err := db.r.QueryRowContext(ctx, q).Scan(&n)
	return n, err
}

// Requeue queues events again, for reprocessing.
func (db *DB) Requeue(ctx context.Context, ids []int64) error {
	if db.dialect == "postgres" {
		return db.pgRequeue(ctx, ids)
	}
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

const eventCols = `e.id, e.project_id, e.event_id, coalesce(e.issue_id, 0), e.kind, e.format, e.state, e.received_at, e.timestamp, e.release, e.title, e.error`

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
	rows, err := db.r.QueryContext(ctx, db.q(`SELECT `+eventCols+` FROM events e WHERE e.issue_id = ? ORDER BY e.received_at DESC, e.id DESC LIMIT ? OFFSET ?`), issueID, limit, offset)
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
	from, where, args := db.eventByID(projectID, eventID)
	e, err := scanEvent(db.r.QueryRowContext(ctx, db.q(`SELECT `+eventCols+`, e.data FROM `+from+` WHERE `+where+` LIMIT 1`), args...), &data)
	if isNoRows(err) {
		return nil, notFound("no such event")
	}
	if err != nil {
		return nil, err
	}
	if data != nil {
		js, err := db.decompress(data)
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

// eventByID returns the FROM and WHERE of a query for one event by
// project (0: any) and event id, the event aliased e. On PostgreSQL the
// event is found through event_ids, which gives its partition.
func (db *DB) eventByID(projectID int64, eventID string) (from, where string, args []any) {
	from, col := `events e`, `e.`
	if db.dialect == "postgres" {
		from, col = `event_ids d JOIN events e ON e.id = d.id AND e.received_at = d.received_at`, `d.`
	}
	if projectID == 0 {
		return from, col + `event_id = ?`, []any{eventID}
	}
	return from, col + `project_id = ? AND ` + col + `event_id = ?`, []any{projectID, eventID}
}

// RawEvent returns an event's payload as received.
func (db *DB) RawEvent(ctx context.Context, projectID int64, eventID string) (string, []byte, error) {
	var format string
	var raw []byte
	from, where, args := db.eventByID(projectID, eventID)
	err := db.r.QueryRowContext(ctx, db.q(`SELECT e.format, e.raw FROM `+from+` WHERE `+where), args...).Scan(&format, &raw)
	if isNoRows(err) {
		return "", nil, notFound("no such event")
	}
	if err != nil {
		return "", nil, err
	}
	raw, err = db.decompress(raw)
	return format, raw, err
}
