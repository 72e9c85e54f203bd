package store

import (
	"context"
	"database/sql"
	"fmt"
	"sort"
	"strings"
	"time"
)

// expireBatch is the number of events one SQLite retention transaction
// deletes, so that ingestion waits for the writer only briefly.
const expireBatch = 1000

// Expire deletes the events received before a time, keeping every count
// consistent with the events that remain (see the package comment): issue
// counts, hourly and per-release rollups and missing symbols lose the
// deleted events, issues left without events and last seen before the
// cut are deleted, and so are the deleted events' dedupe and queue rows.
// It returns the number of events deleted.
//
// On PostgreSQL it drops whole daily partitions, those that end at or
// before the cut: an event is kept until its whole day is past the cut.
// On SQLite it deletes rows in batches of 1000, one transaction each.
// Several replicas may run it at once.
func (db *DB) Expire(ctx context.Context, before time.Time) (int64, error) {
	cut := ms2(before)
	var total int64
	if db.dialect == "postgres" {
		days, err := db.partitionDays(ctx)
		if err != nil {
			return 0, err
		}
		for _, d := range days {
			if (d+1)*int64(day/time.Millisecond) > cut {
				break
			}
			var n int64
			err := db.retry(ctx, func(tx *sql.Tx) error {
				var err error
				n, err = db.dropPartition(ctx, tx, d)
				return err
			})
			if err != nil {
				return total, fmt.Errorf("drop partition %s: %w", partitionName(d), err)
			}
			db.forgetPartitions(d)
			total += n
		}
	} else {
		for {
			var n int64
			err := db.tx(ctx, func(tx *sql.Tx) error {
				rows, err := tx.QueryContext(ctx, `SELECT id FROM events WHERE received_at < ? ORDER BY received_at LIMIT ?`, cut, expireBatch)
				if err != nil {
					return err
				}
				var ids []int64
				for rows.Next() {
					var id int64
					if err := rows.Scan(&id); err != nil {
						rows.Close()
						return err
					}
					ids = append(ids, id)
				}
				rows.Close()
				if err := rows.Err(); err != nil || len(ids) == 0 {
					return err
				}
				in, args := db.in(ids)
				if err := db.expireRows(ctx, tx, `(SELECT * FROM events WHERE id `+in+`)`, args); err != nil {
					return err
				}
				res, err := tx.ExecContext(ctx, `DELETE FROM events WHERE id `+in, args...)
				if err != nil {
					return err
				}
				n, err = res.RowsAffected()
				return err
			})
			if err != nil {
				return total, err
			}
			if n == 0 {
				break
			}
			total += n
		}
	}
	// Issues without events whose last event is older than the cut.
	err := db.retry(ctx, func(tx *sql.Tx) error {
		const empty = `SELECT id FROM issues WHERE count = 0 AND last_seen < ?`
		for _, t := range []string{"issue_counts", "issue_releases"} {
			if _, err := tx.ExecContext(ctx, db.q(`DELETE FROM `+t+` WHERE issue_id IN (`+empty+`)`), cut); err != nil {
				return err
			}
		}
		_, err := tx.ExecContext(ctx, db.q(`DELETE FROM issues WHERE count = 0 AND last_seen < ?`), cut)
		return err
	})
	return total, err
}

// retry runs fn in a transaction, again when PostgreSQL aborted it as a
// deadlock victim.
func (db *DB) retry(ctx context.Context, fn func(*sql.Tx) error) error {
	for try := 1; ; try++ {
		err := db.tx(ctx, fn)
		if err == nil || try == completeTries || !retryable(err) {
			return err
		}
	}
}

// partitionDays returns the days of the events partitions, oldest first.
func (db *DB) partitionDays(ctx context.Context) ([]int64, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
		WHERE i.inhparent = 'events'::regclass`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var days []int64
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return nil, err
		}
		t, err := time.Parse("20060102", strings.TrimPrefix(name, "events_p"))
		if err != nil {
			continue // not ours
		}
		days = append(days, dayOf(t.UnixMilli()))
	}
	sort.Slice(days, func(i, j int) bool { return days[i] < days[j] })
	return days, rows.Err()
}

// dropPartition subtracts the events of day d from the counts and drops
// its partition. It returns the number of events dropped, 0 when another
// replica dropped it first.
func (db *DB) dropPartition(ctx context.Context, tx *sql.Tx, d int64) (int64, error) {
	if err := db.lockXact(ctx, tx, lockPartition); err != nil {
		return 0, err
	}
	name := partitionName(d)
	var exists bool
	if err := tx.QueryRowContext(ctx, `SELECT to_regclass($1) IS NOT NULL`, name).Scan(&exists); err != nil || !exists {
		return 0, err
	}
	var n int64
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM `+name).Scan(&n); err != nil {
		return 0, err
	}
	if err := db.expireRows(ctx, tx, name, nil); err != nil {
		return 0, err
	}
	for _, q := range []string{
		`DELETE FROM event_ids d USING ` + name + ` e WHERE d.project_id = e.project_id AND d.event_id = e.event_id`,
		`DELETE FROM queue WHERE received_at >= ` + itoa(d*int64(day/time.Millisecond)) + ` AND received_at < ` + itoa((d+1)*int64(day/time.Millisecond)),
		`SET LOCAL lock_timeout = '10s'`,
		`ALTER TABLE events DETACH PARTITION ` + name,
		`DROP TABLE ` + name,
	} {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return 0, err
		}
	}
	return n, nil
}

// expireRows subtracts the events of src (a table or a parenthesized
// query over events, with its arguments) from the issue counts, rollups
// and missing symbols, and deletes their missing-module rows. An event
// counts in its issue while its issue_id is set.
func (db *DB) expireRows(ctx context.Context, tx *sql.Tx, src string, args []any) error {
	const dec = `CASE WHEN %[1]s.%[2]s > x.n THEN %[1]s.%[2]s - x.n ELSE 0 END`
	counted := src + ` e WHERE e.issue_id IS NOT NULL`
	for _, q := range []string{
		`UPDATE issues SET count = ` + fmt.Sprintf(dec, "issues", "count") + `
			FROM (SELECT e.issue_id, count(*) AS n FROM ` + counted + ` GROUP BY e.issue_id) AS x
			WHERE issues.id = x.issue_id`,
		`UPDATE issue_counts SET count = ` + fmt.Sprintf(dec, "issue_counts", "count") + `
			FROM (SELECT e.issue_id, e.timestamp - e.timestamp % 3600000 AS hour, count(*) AS n FROM ` + counted + `
				GROUP BY e.issue_id, e.timestamp - e.timestamp % 3600000) AS x
			WHERE issue_counts.issue_id = x.issue_id AND issue_counts.hour = x.hour`,
		`UPDATE issue_releases SET count = ` + fmt.Sprintf(dec, "issue_releases", "count") + `
			FROM (SELECT e.issue_id, e.release, count(*) AS n FROM ` + counted + ` GROUP BY e.issue_id, e.release) AS x
			WHERE issue_releases.issue_id = x.issue_id AND issue_releases.release = x.release`,
		`DELETE FROM issue_counts WHERE count <= 0 AND issue_id IN (SELECT e.issue_id FROM ` + counted + `)`,
		`DELETE FROM issue_releases WHERE count <= 0 AND issue_id IN (SELECT e.issue_id FROM ` + counted + `)`,
		`UPDATE missing_symbols SET events = ` + fmt.Sprintf(dec, "missing_symbols", "events") + `
			FROM (SELECT m.project_id, m.debug_id, count(*) AS n FROM event_missing m JOIN ` + src + ` e ON m.event_row = e.id
				GROUP BY m.project_id, m.debug_id) AS x
			WHERE missing_symbols.project_id = x.project_id AND missing_symbols.debug_id = x.debug_id`,
		`DELETE FROM missing_symbols WHERE events <= 0`,
		`DELETE FROM event_missing WHERE event_row IN (SELECT e.id FROM ` + src + ` e)`,
	} {
		if _, err := tx.ExecContext(ctx, db.q(q), args...); err != nil {
			return err
		}
	}
	return nil
}

// Maintain does the periodic work of a server: on PostgreSQL it creates
// the events partitions from yesterday to a few days ahead; with a
// retention (> 0) it expires the events received longer ago. Several
// replicas may run it at once.
func (db *DB) Maintain(ctx context.Context, retention time.Duration) error {
	now := db.Now()
	if db.dialect == "postgres" {
		today := dayOf(ms2(now))
		var ds []int64
		for d := today - 1; d <= today+partitionsAhead; d++ {
			ds = append(ds, d)
		}
		if err := db.ensurePartitions(ctx, ds...); err != nil {
			return err
		}
	}
	if retention > 0 {
		if _, err := db.Expire(ctx, now.Add(-retention)); err != nil {
			return fmt.Errorf("retention: %w", err)
		}
	}
	return nil
}
