package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/backtrail/backtrail/server"
)

// The PostgreSQL variants of the methods whose work differs from SQLite's:
// events live in daily partitions, event_ids makes ingestion idempotent
// across them, and the queue table holds leases. See migrations/postgres/
// 0001_init.sql.

// pgConns bounds the connections of one server process to PostgreSQL: the
// ingestion batcher and the processor each use one at a time, the rest is
// for reads.
const pgConns = 12

// day is the length of one events partition.
const day = 24 * time.Hour

// dayOf returns the partition day (days since the Unix epoch, UTC) of a
// time in Unix milliseconds.
func dayOf(ms int64) int64 {
	d := ms / int64(day/time.Millisecond)
	if ms < 0 && ms%int64(day/time.Millisecond) != 0 {
		d--
	}
	return d
}

// partitionName returns the name of the partition holding day d:
// events_pYYYYMMDD.
func partitionName(d int64) string {
	return "events_p" + time.UnixMilli(d*int64(day/time.Millisecond)).UTC().Format("20060102")
}

// partitionsAhead is how many days after today the server creates
// partitions for, so that ingestion around midnight never waits for DDL.
const partitionsAhead = 3

// ensurePartitions creates the partitions of the days ds unless they are
// known to exist. Creation is idempotent and serialized across replicas by
// an advisory lock; CREATE TABLE … PARTITION OF briefly locks the parent
// table, which is why the server creates partitions days ahead.
func (db *DB) ensurePartitions(ctx context.Context, ds ...int64) error {
	db.partMu.Lock()
	defer db.partMu.Unlock()
	if db.parts == nil {
		db.parts = make(map[int64]bool)
	}
	var missing []int64
	for _, d := range ds {
		if !db.parts[d] {
			missing = append(missing, d)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	err := db.tx(ctx, func(tx *sql.Tx) error {
		if err := db.lockXact(ctx, tx, lockPartition); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `SET LOCAL lock_timeout = '10s'`); err != nil {
			return err
		}
		for _, d := range missing {
			from := d * int64(day/time.Millisecond)
			to := from + int64(day/time.Millisecond)
			q := fmt.Sprintf(`CREATE TABLE IF NOT EXISTS %s PARTITION OF events FOR VALUES FROM (%d) TO (%d)`, partitionName(d), from, to)
			if _, err := tx.ExecContext(ctx, q); err != nil {
				return fmt.Errorf("partition %s: %w", partitionName(d), err)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, d := range missing {
		db.parts[d] = true
	}
	return nil
}

// forgetPartitions drops days from the cache after retention dropped them.
func (db *DB) forgetPartitions(ds ...int64) {
	db.partMu.Lock()
	defer db.partMu.Unlock()
	for _, d := range ds {
		delete(db.parts, d)
	}
}

// pgx runs fn on a pgx connection of the pool, for what database/sql
// cannot do: COPY.
func (db *DB) pgx(ctx context.Context, fn func(*pgx.Conn) error) error {
	conn, err := db.w.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	return conn.Raw(func(dc any) error {
		return fn(dc.(*stdlib.Conn).Conn())
	})
}

// pgAccept stores events: one INSERT into event_ids and queue that skips
// the ids already stored and returns the new rows' ids, then one COPY of
// the new events into their partitions, in one transaction.
func (db *DB) pgAccept(ctx context.Context, evs []*server.Incoming, raws [][]byte) ([]bool, error) {
	dup := make([]bool, len(evs))
	// The same id twice in one batch: the first is stored, the rest are
	// duplicates (as on SQLite, where the second insert conflicts).
	type key struct {
		p  int64
		id string
	}
	first := make(map[key]int, len(evs))
	var days []int64
	seenDay := map[int64]bool{}
	var projects, recv []int64
	var ids []string
	for i, e := range evs {
		k := key{e.ProjectID, e.EventID}
		if _, ok := first[k]; ok {
			dup[i] = true
			continue
		}
		first[k] = i
		at := ms2(e.Received)
		if d := dayOf(at); !seenDay[d] {
			seenDay[d] = true
			days = append(days, d)
		}
		projects = append(projects, e.ProjectID)
		ids = append(ids, e.EventID)
		recv = append(recv, at)
	}
	if err := db.ensurePartitions(ctx, days...); err != nil {
		return nil, err
	}
	err := db.pgx(ctx, func(c *pgx.Conn) error {
		tx, err := c.Begin(ctx)
		if err != nil {
			return err
		}
		defer tx.Rollback(ctx)
		rows, err := tx.Query(ctx, `WITH ins AS (
				INSERT INTO event_ids (project_id, event_id, received_at)
				SELECT p, e, r FROM unnest($1::bigint[], $2::text[], $3::bigint[]) WITH ORDINALITY AS v(p, e, r, n) ORDER BY n
				ON CONFLICT DO NOTHING
				RETURNING id, project_id, event_id, received_at),
			q AS (INSERT INTO queue (id, received_at) SELECT id, received_at FROM ins)
			SELECT id, project_id, event_id FROM ins`, projects, ids, recv)
		if err != nil {
			return err
		}
		rowID := make(map[key]int64, len(ids))
		for rows.Next() {
			var id, p int64
			var e string
			if err := rows.Scan(&id, &p, &e); err != nil {
				rows.Close()
				return err
			}
			rowID[key{p, e}] = id
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		copyRows := make([][]any, 0, len(rowID))
		for i, e := range evs {
			if dup[i] {
				continue
			}
			id, ok := rowID[key{e.ProjectID, e.EventID}]
			if !ok {
				dup[i] = true // stored before
				continue
			}
			at := ms2(e.Received)
			copyRows = append(copyRows, []any{id, e.ProjectID, e.EventID, e.Format, int32(stateQueued), at, at, raws[i]})
		}
		if len(copyRows) > 0 {
			_, err = tx.CopyFrom(ctx, pgx.Identifier{"events"},
				[]string{"id", "project_id", "event_id", "format", "state", "received_at", "timestamp", "raw"},
				pgx.CopyFromRows(copyRows))
			if err != nil {
				return fmt.Errorf("copy events: %w", err)
			}
		}
		return tx.Commit(ctx)
	})
	return dup, err
}

// pgClaim leases queue rows: the oldest whose lease is free (never leased,
// or expired), skipping rows another replica is claiming. Rows leased
// maxAttempts times are failed instead.
func (db *DB) pgClaim(ctx context.Context, worker string, n int, lease time.Duration) ([]*server.Queued, error) {
	now := db.Now()
	var out []*server.Queued
	err := db.tx(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `WITH c AS (
				SELECT id, attempts FROM queue WHERE lease_until < $1 ORDER BY id LIMIT $2 FOR UPDATE SKIP LOCKED),
			f AS (DELETE FROM queue q USING c WHERE q.id = c.id AND c.attempts >= $5 RETURNING q.id, q.received_at),
			l AS (UPDATE queue q SET lease_owner = $3, lease_until = $4, attempts = q.attempts + 1
				FROM c WHERE q.id = c.id AND c.attempts < $5 RETURNING q.id, q.received_at, q.attempts)
			SELECT id, received_at, attempts, false FROM l UNION ALL SELECT id, received_at, 0, true FROM f`,
			ms2(now), n, worker, ms2(now.Add(lease)), maxAttempts)
		if err != nil {
			return err
		}
		var leased, failed, leasedAt, failedAt []int64
		attempts := map[int64]int{}
		for rows.Next() {
			var id, at int64
			var a int
			var fail bool
			if err := rows.Scan(&id, &at, &a, &fail); err != nil {
				rows.Close()
				return err
			}
			if fail {
				failed, failedAt = append(failed, id), append(failedAt, at)
				continue
			}
			leased, leasedAt = append(leased, id), append(leasedAt, at)
			attempts[id] = a
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		if len(failed) > 0 {
			if _, err := tx.ExecContext(ctx, `UPDATE events SET state = 3, error = 'processing did not finish after repeated attempts'
				WHERE id = ANY($1) AND received_at = ANY($2)`, failed, failedAt); err != nil {
				return err
			}
		}
		if len(leased) == 0 {
			return nil
		}
		rows, err = tx.QueryContext(ctx, `SELECT id, project_id, event_id, format, raw, received_at FROM events WHERE id = ANY($1) AND received_at = ANY($2)`, leased, leasedAt)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var q server.Queued
			var raw []byte
			var recv int64
			if err := rows.Scan(&q.ID, &q.ProjectID, &q.EventID, &q.Format, &raw, &recv); err != nil {
				return err
			}
			q.Received, q.Attempts, q.Raw = fromMS(recv), attempts[q.ID], raw
			out = append(out, &q)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, err
	}
	sortQueued(out)
	db.decompressRaw(out)
	return out, nil
}

// pgRequeue queues processed and failed events again with fresh attempts;
// queued and leased events (those with a queue row) are left alone.
func (db *DB) pgRequeue(ctx context.Context, ids []int64) error {
	if len(ids) == 0 {
		return nil
	}
	return db.tx(ctx, func(tx *sql.Tx) error {
		// An event with state >= 2 has no queue row: Claim and Complete
		// delete the row in the transaction that sets the state.
		_, err := tx.ExecContext(ctx, `WITH r AS (
				UPDATE events SET state = 0 WHERE id = ANY($1) AND state >= 2 RETURNING id, received_at)
			INSERT INTO queue (id, received_at) SELECT id, received_at FROM r ON CONFLICT DO NOTHING`, ids)
		return err
	})
}

// retryable reports whether a PostgreSQL transaction failed for a reason a
// retry cures: a deadlock or a serialization failure.
func retryable(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && (pe.Code == "40P01" || pe.Code == "40001")
}

// in returns "= ANY(?)" and the array for PostgreSQL, "IN (?, …)" and
// the values for SQLite: a condition on a list of ids.
func (db *DB) in(ids []int64) (string, []any) {
	if db.dialect == "postgres" {
		return "= ANY(?)", []any{ids}
	}
	var sb strings.Builder
	sb.WriteString("IN (")
	args := make([]any, len(ids))
	for i, id := range ids {
		if i > 0 {
			sb.WriteString(", ")
		}
		sb.WriteByte('?')
		args[i] = id
	}
	sb.WriteByte(')')
	return sb.String(), args
}

// rowSet is the rows of a multi-row INSERT or UPDATE source, with the
// PostgreSQL type of each column: bigint, text or bytea.
type rowSet struct {
	types []string
	rows  [][]any
}

func (rs *rowSet) add(vals ...any) { rs.rows = append(rs.rows, vals) }

// source returns the rows as a query fragment and its arguments: VALUES
// (?, …), … on SQLite; SELECT * FROM unnest(?::bigint[], …) on
// PostgreSQL, with one array argument per column, so that the statement's
// text does not depend on the number of rows (and prepares once).
func (db *DB) source(rs *rowSet) (string, []any) {
	if db.dialect == "postgres" {
		var sb strings.Builder
		sb.WriteString("SELECT * FROM unnest(")
		args := make([]any, len(rs.types))
		for c, t := range rs.types {
			if c > 0 {
				sb.WriteString(", ")
			}
			sb.WriteString("?::" + t + "[]")
			switch t {
			case "bigint":
				col := make([]int64, len(rs.rows))
				for i, r := range rs.rows {
					col[i] = r[c].(int64)
				}
				args[c] = col
			case "text":
				col := make([]string, len(rs.rows))
				for i, r := range rs.rows {
					col[i] = r[c].(string)
				}
				args[c] = col
			case "bytea":
				col := make([][]byte, len(rs.rows))
				for i, r := range rs.rows {
					col[i] = r[c].([]byte)
				}
				args[c] = col
			default:
				panic("store: rowSet type " + t)
			}
		}
		sb.WriteByte(')')
		return sb.String(), args
	}
	var sb strings.Builder
	sb.WriteString("VALUES ")
	args := make([]any, 0, len(rs.rows)*len(rs.types))
	for i, r := range rs.rows {
		if i > 0 {
			sb.WriteString(", ")
		}
		sb.WriteByte('(')
		for c := range r {
			if c > 0 {
				sb.WriteString(", ")
			}
			sb.WriteByte('?')
		}
		sb.WriteByte(')')
		args = append(args, r...)
	}
	return sb.String(), args
}

// itoa formats an int64 for SQL text.
func itoa(n int64) string { return strconv.FormatInt(n, 10) }
