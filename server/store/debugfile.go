package store

import (
	"context"
	"database/sql"
	"strings"

	"github.com/backtrail/backtrail/server"
)

const debugFileCols = `id, project_id, debug_id, code_id, arch, format, kind, name, size, blob, features, uploaded_at`

func scanDebugFile(row interface{ Scan(...any) error }) (*server.DebugFile, error) {
	var f server.DebugFile
	var feats string
	var up int64
	if err := row.Scan(&f.ID, &f.ProjectID, &f.DebugID, &f.CodeID, &f.Arch, &f.Format, &f.Kind, &f.Name, &f.Size, &f.Blob, &feats, &up); err != nil {
		return nil, err
	}
	if feats != "" {
		f.Features = strings.Split(feats, ",")
	}
	f.UploadedAt = fromMS(up)
	return &f, nil
}

// AddDebugFile records a debug file unless the same content is already
// recorded for its project, debug id and architecture; the returned bool
// says whether it was added. Adding it resolves the project's missing
// symbols for its debug id.
func (db *DB) AddDebugFile(ctx context.Context, f *server.DebugFile) (*server.DebugFile, bool, error) {
	var out *server.DebugFile
	added := false
	// INSERT … ON CONFLICT, so that replicas receiving the same upload at
	// once record it once.
	err := db.tx(ctx, func(tx *sql.Tx) error {
		var err error
		out, err = scanDebugFile(tx.QueryRowContext(ctx, db.q(`INSERT INTO debug_files (project_id, debug_id, code_id, arch, format, kind, name, size, blob, features, uploaded_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (project_id, debug_id, arch, blob) DO NOTHING RETURNING `+debugFileCols),
			f.ProjectID, f.DebugID, f.CodeID, f.Arch, f.Format, f.Kind, f.Name, f.Size, f.Blob, strings.Join(f.Features, ","), ms2(db.Now())))
		if isNoRows(err) {
			out, err = scanDebugFile(tx.QueryRowContext(ctx, db.q(`SELECT `+debugFileCols+` FROM debug_files WHERE project_id = ? AND debug_id = ? AND arch = ? AND blob = ?`),
				f.ProjectID, f.DebugID, f.Arch, f.Blob))
			return err
		}
		if err != nil {
			return err
		}
		added = true
		_, err = tx.ExecContext(ctx, db.q(`DELETE FROM missing_symbols WHERE project_id = ? AND debug_id = ?`), f.ProjectID, f.DebugID)
		return err
	})
	return out, added, err
}

func (db *DB) debugFiles(ctx context.Context, where string, args ...any) ([]*server.DebugFile, error) {
	rows, err := db.r.QueryContext(ctx, db.q(`SELECT `+debugFileCols+` FROM debug_files WHERE `+where+` ORDER BY id`), args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var fs []*server.DebugFile
	for rows.Next() {
		f, err := scanDebugFile(rows)
		if err != nil {
			return nil, err
		}
		fs = append(fs, f)
	}
	return fs, rows.Err()
}

// DebugFiles returns a project's debug files.
func (db *DB) DebugFiles(ctx context.Context, projectID int64) ([]*server.DebugFile, error) {
	return db.debugFiles(ctx, `project_id = ?`, projectID)
}

// DebugFile returns one debug file.
func (db *DB) DebugFile(ctx context.Context, id int64) (*server.DebugFile, error) {
	fs, err := db.debugFiles(ctx, `id = ?`, id)
	if err != nil {
		return nil, err
	}
	if len(fs) == 0 {
		return nil, notFound("no such debug file")
	}
	return fs[0], nil
}

// DeleteDebugFile forgets a debug file. Its blob is the caller's to delete
// once no other record names it.
func (db *DB) DeleteDebugFile(ctx context.Context, id int64) error {
	return db.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, db.q(`DELETE FROM debug_files WHERE id = ?`), id)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return notFound("no such debug file")
		}
		return nil
	})
}

// FindDebugFiles returns the debug files with a debug id or code id (either
// may be empty), newest first; projectID 0 searches every project.
func (db *DB) FindDebugFiles(ctx context.Context, projectID int64, debugID, codeID string) ([]*server.DebugFile, error) {
	var conds []string
	var args []any
	if debugID != "" {
		conds = append(conds, `debug_id = ?`)
		args = append(args, strings.ToLower(debugID))
	}
	if codeID != "" {
		conds = append(conds, `code_id = ?`)
		args = append(args, strings.ToLower(codeID))
	}
	if len(conds) == 0 {
		return nil, nil
	}
	where := `(` + strings.Join(conds, ` OR `) + `)`
	if projectID != 0 {
		where += ` AND project_id = ?`
		args = append(args, projectID)
	}
	fs, err := db.debugFiles(ctx, where, args...)
	for i, j := 0, len(fs)-1; i < j; i, j = i+1, j-1 {
		fs[i], fs[j] = fs[j], fs[i]
	}
	return fs, err
}

// MissingSymbols returns the modules a project's events lacked debug files
// for, most events first.
func (db *DB) MissingSymbols(ctx context.Context, projectID int64) ([]*server.MissingSymbols, error) {
	where, args := ``, []any{}
	if projectID != 0 {
		where, args = `WHERE project_id = ?`, []any{projectID}
	}
	rows, err := db.r.QueryContext(ctx, db.q(`SELECT project_id, debug_id, code_id, name, arch, events, first_seen, last_seen FROM missing_symbols `+where+` ORDER BY events DESC, debug_id`), args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ms []*server.MissingSymbols
	for rows.Next() {
		var m server.MissingSymbols
		var first, last int64
		if err := rows.Scan(&m.ProjectID, &m.DebugID, &m.CodeID, &m.Name, &m.Arch, &m.Events, &first, &last); err != nil {
			return nil, err
		}
		m.FirstSeen, m.LastSeen = fromMS(first), fromMS(last)
		ms = append(ms, &m)
	}
	return ms, rows.Err()
}

// EventsMissing returns the row ids of a project's events that lacked the
// module with debugID.
func (db *DB) EventsMissing(ctx context.Context, projectID int64, debugID string) ([]int64, error) {
	rows, err := db.r.QueryContext(ctx, db.q(`SELECT event_row FROM event_missing WHERE project_id = ? AND debug_id = ? ORDER BY event_row`), projectID, debugID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}
