package store

import (
	"context"
	"database/sql"
	"time"

	"github.com/backtrail/backtrail/server"
)

const issueCols = `id, project_id, kind, fingerprint, title, culprit, count, first_seen, last_seen, status, first_release, last_release, resolved_release, regressed_at, grouping_version`

func scanIssue(row interface{ Scan(...any) error }) (*server.Issue, error) {
	var i server.Issue
	var first, last int64
	var regressed sql.NullInt64
	if err := row.Scan(&i.ID, &i.ProjectID, &i.Kind, &i.Fingerprint, &i.Title, &i.Culprit, &i.Count, &first, &last,
		&i.Status, &i.FirstRelease, &i.LastRelease, &i.ResolvedRelease, &regressed, &i.GroupingVersion); err != nil {
		return nil, err
	}
	i.FirstSeen, i.LastSeen = fromMS(first), fromMS(last)
	if regressed.Valid {
		t := fromMS(regressed.Int64)
		i.RegressedAt = &t
	}
	return &i, nil
}

// Issues returns the issues f selects. Lists come from the issues table
// and its rollups alone; they never scan events.
func (db *DB) Issues(ctx context.Context, f server.IssueFilter) ([]*server.Issue, error) {
	where := `WHERE count > 0`
	var args []any
	if f.ProjectID != 0 {
		where += ` AND project_id = ?`
		args = append(args, f.ProjectID)
	}
	if f.Kind != "" {
		where += ` AND kind = ?`
		args = append(args, string(f.Kind))
	}
	if f.Status != "" {
		where += ` AND status = ?`
		args = append(args, string(f.Status))
	}
	if f.Release != "" {
		where += ` AND id IN (SELECT issue_id FROM issue_releases WHERE release = ?)`
		args = append(args, f.Release)
	}
	order := `last_seen DESC`
	switch f.Sort {
	case "first_seen":
		order = `first_seen DESC`
	case "count":
		order = `count DESC`
	}
	limit := f.Limit
	if limit <= 0 || limit > 1000 {
		limit = 100
	}
	args = append(args, limit, f.Offset)
	rows, err := db.r.QueryContext(ctx, db.q(`SELECT `+issueCols+` FROM issues `+where+` ORDER BY `+order+`, id DESC LIMIT ? OFFSET ?`), args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var is []*server.Issue
	for rows.Next() {
		i, err := scanIssue(rows)
		if err != nil {
			return nil, err
		}
		is = append(is, i)
	}
	return is, rows.Err()
}

// Issue returns one issue.
func (db *DB) Issue(ctx context.Context, id int64) (*server.Issue, error) {
	i, err := scanIssue(db.r.QueryRowContext(ctx, db.q(`SELECT `+issueCols+` FROM issues WHERE id = ?`), id))
	if isNoRows(err) {
		return nil, notFound("no such issue")
	}
	return i, err
}

// SetIssueStatus changes an issue's status. Resolving records the newest
// release seen, so that only newer releases reopen it.
func (db *DB) SetIssueStatus(ctx context.Context, id int64, s server.Status) error {
	if !s.Valid() {
		return server.Errorf(server.EINVALID, "unknown status %q", s)
	}
	return db.tx(ctx, func(tx *sql.Tx) error {
		q, args := `UPDATE issues SET status = ? WHERE id = ?`, []any{string(s), id}
		if s == server.StatusResolved {
			newest, err := newestRelease(ctx, tx, db.q(`SELECT release FROM issue_releases WHERE issue_id = ?`), id)
			if err != nil {
				return err
			}
			q, args = `UPDATE issues SET status = ?, resolved_release = ?, regressed_at = NULL WHERE id = ?`, []any{string(s), newest, id}
		}
		res, err := tx.ExecContext(ctx, db.q(q), args...)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return notFound("no such issue")
		}
		return nil
	})
}

// newestRelease returns the newest of the releases query selects, by
// server.CompareReleases: the order of events is not the order of
// releases, since older releases stay in the field.
func newestRelease(ctx context.Context, tx *sql.Tx, query string, args ...any) (string, error) {
	rows, err := tx.QueryContext(ctx, query, args...)
	if err != nil {
		return "", err
	}
	defer rows.Close()
	newest := ""
	for rows.Next() {
		var r string
		if err := rows.Scan(&r); err != nil {
			return "", err
		}
		if newest == "" || r != "" && server.CompareReleases(r, newest) > 0 {
			newest = r
		}
	}
	return newest, rows.Err()
}

// IssueCounts returns an issue's events per hour since a time.
func (db *DB) IssueCounts(ctx context.Context, id int64, since time.Time) ([]server.CountBucket, error) {
	rows, err := db.r.QueryContext(ctx, db.q(`SELECT hour, count FROM issue_counts WHERE issue_id = ? AND hour >= ? ORDER BY hour`), id, ms2(since.Truncate(time.Hour)))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var bs []server.CountBucket
	for rows.Next() {
		var h, n int64
		if err := rows.Scan(&h, &n); err != nil {
			return nil, err
		}
		bs = append(bs, server.CountBucket{Hour: fromMS(h), Count: n})
	}
	return bs, rows.Err()
}

// IssueReleases returns the releases an issue was seen in, newest last
// seen first.
func (db *DB) IssueReleases(ctx context.Context, id int64) ([]string, error) {
	rows, err := db.r.QueryContext(ctx, db.q(`SELECT release FROM issue_releases WHERE issue_id = ? ORDER BY last_seen DESC`), id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var rs []string
	for rows.Next() {
		var r string
		if err := rows.Scan(&r); err != nil {
			return nil, err
		}
		rs = append(rs, r)
	}
	return rs, rows.Err()
}

// IssueCountsSince returns the events per hour since a time of each of
// the issues ids, in one query over the hourly rollups; issues without
// events in the period are absent from the map. The issues list uses it
// for its sparklines.
func (db *DB) IssueCountsSince(ctx context.Context, ids []int64, since time.Time) (map[int64][]server.CountBucket, error) {
	out := make(map[int64][]server.CountBucket)
	if len(ids) == 0 {
		return out, nil
	}
	args := make([]any, 0, len(ids)+1)
	marks := make([]byte, 0, 2*len(ids))
	for i, id := range ids {
		if i > 0 {
			marks = append(marks, ',')
		}
		marks = append(marks, '?')
		args = append(args, id)
	}
	args = append(args, ms2(since.Truncate(time.Hour)))
	rows, err := db.r.QueryContext(ctx, db.q(`SELECT issue_id, hour, count FROM issue_counts WHERE issue_id IN (`+string(marks)+`) AND hour >= ? ORDER BY issue_id, hour`), args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var id, h, n int64
		if err := rows.Scan(&id, &h, &n); err != nil {
			return nil, err
		}
		out[id] = append(out[id], server.CountBucket{Hour: fromMS(h), Count: n})
	}
	return out, rows.Err()
}
