package store

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"

	"github.com/backtrail/backtrail/server"
)

const projectCols = `id, name, key, created_at`

func scanProject(row interface{ Scan(...any) error }) (*server.Project, error) {
	var p server.Project
	var created int64
	if err := row.Scan(&p.ID, &p.Name, &p.Key, &created); err != nil {
		return nil, err
	}
	p.CreatedAt = fromMS(created)
	return &p, nil
}

// CreateProject creates a project with a new random key.
func (db *DB) CreateProject(ctx context.Context, name string) (*server.Project, error) {
	if name == "" {
		return nil, server.Errorf(server.EINVALID, "project name is empty")
	}
	var k [16]byte
	rand.Read(k[:])
	key := hex.EncodeToString(k[:])
	var p *server.Project
	err := db.tx(ctx, func(tx *sql.Tx) error {
		var err error
		p, err = scanProject(tx.QueryRowContext(ctx, db.q(`INSERT INTO projects (name, key, created_at) VALUES (?, ?, ?) RETURNING `+projectCols),
			name, key, ms2(db.Now())))
		return err
	})
	if isUnique(err) {
		return nil, server.Errorf(server.ECONFLICT, "project %q exists", name)
	}
	return p, err
}

// Projects returns all projects by id.
func (db *DB) Projects(ctx context.Context) ([]*server.Project, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT `+projectCols+` FROM projects ORDER BY id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ps []*server.Project
	for rows.Next() {
		p, err := scanProject(rows)
		if err != nil {
			return nil, err
		}
		ps = append(ps, p)
	}
	return ps, rows.Err()
}

func (db *DB) projectWhere(ctx context.Context, where string, arg any) (*server.Project, error) {
	p, err := scanProject(db.r.QueryRowContext(ctx, db.q(`SELECT `+projectCols+` FROM projects WHERE `+where), arg))
	if isNoRows(err) {
		return nil, notFound("no such project")
	}
	return p, err
}

// Project returns the project with id.
func (db *DB) Project(ctx context.Context, id int64) (*server.Project, error) {
	return db.projectWhere(ctx, `id = ?`, id)
}

// ProjectByName returns the project called name.
func (db *DB) ProjectByName(ctx context.Context, name string) (*server.Project, error) {
	return db.projectWhere(ctx, `name = ?`, name)
}

// ProjectByKey returns the project whose public key is key.
func (db *DB) ProjectByKey(ctx context.Context, key string) (*server.Project, error) {
	return db.projectWhere(ctx, `key = ?`, key)
}
