// Package store implements server.Store on SQL databases: SQLite (embedded,
// the default) and PostgreSQL, with the same schema and numbered migrations
// per dialect (migrations/<dialect>/NNNN_name.sql). Queries are written once
// with ? placeholders and rewritten for PostgreSQL.
//
// Raw payloads and processed reports are stored zstd-compressed in the
// events table, so that accepting an event is one transaction.
package store

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/klauspost/compress/zstd"
	_ "modernc.org/sqlite" // the "sqlite" driver

	"github.com/backtrail/backtrail/server"
)

//go:embed migrations
var migrations embed.FS

// DB is a server.Store on an SQL database. It is safe for concurrent use.
type DB struct {
	// SQLite allows one writer at a time: writes go through a pool of
	// one connection, reads through a pool of several (WAL mode lets
	// them run beside the writer).
	w, r    *sql.DB
	dialect string // "sqlite" or "postgres"

	enc *zstd.Encoder
	dec *zstd.Decoder

	// Now returns the current time; tests replace it.
	Now func() time.Time
}

var _ server.Store = (*DB)(nil)

// Open opens (creating if needed) the database named by dsn — a file path
// for SQLite, a postgres:// URL for PostgreSQL — and applies pending
// migrations.
func Open(ctx context.Context, dsn string) (*DB, error) {
	db := &DB{Now: time.Now}
	var err error
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		return nil, server.Errorf(server.EUNSUPPORTED, "PostgreSQL is not supported yet")
	}
	db.dialect = "sqlite"
	q := "?_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_pragma=busy_timeout(10000)&_pragma=foreign_keys(ON)&_txlock=immediate"
	if db.w, err = sql.Open("sqlite", "file:"+dsn+q); err != nil {
		return nil, err
	}
	db.w.SetMaxOpenConns(1)
	if db.r, err = sql.Open("sqlite", "file:"+dsn+q); err != nil {
		db.w.Close()
		return nil, err
	}
	db.r.SetMaxOpenConns(4)
	if db.enc, err = zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1)); err != nil {
		return nil, err
	}
	if db.dec, err = zstd.NewReader(nil, zstd.WithDecoderConcurrency(0), zstd.WithDecoderMaxMemory(256<<20)); err != nil {
		return nil, err
	}
	if err := db.migrate(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

// Close closes the database.
func (db *DB) Close() error {
	db.dec.Close()
	err := db.w.Close()
	if err2 := db.r.Close(); err == nil {
		err = err2
	}
	return err
}

// Migration is one numbered schema change.
type Migration struct {
	Version int
	Name    string
	SQL     string
}

// Migrations returns the migrations of dialect in order.
func Migrations(dialect string) ([]Migration, error) {
	dir := path.Join("migrations", dialect)
	ents, err := fs.ReadDir(migrations, dir)
	if err != nil {
		return nil, fmt.Errorf("migrations for %s: %w", dialect, err)
	}
	var ms []Migration
	for _, e := range ents {
		v, name, ok := strings.Cut(strings.TrimSuffix(e.Name(), ".sql"), "_")
		n, err := strconv.Atoi(v)
		if !ok || err != nil {
			return nil, fmt.Errorf("migration file %q: want NNNN_name.sql", e.Name())
		}
		b, err := fs.ReadFile(migrations, path.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		ms = append(ms, Migration{Version: n, Name: name, SQL: string(b)})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].Version < ms[j].Version })
	return ms, nil
}

// migrate applies the migrations not yet recorded in schema_migrations,
// each in its own transaction.
func (db *DB) migrate(ctx context.Context) error {
	if _, err := db.w.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)`); err != nil {
		return fmt.Errorf("migrations table: %w", err)
	}
	ms, err := Migrations(db.dialect)
	if err != nil {
		return err
	}
	for _, m := range ms {
		err := db.tx(ctx, func(tx *sql.Tx) error {
			var n int
			if err := tx.QueryRowContext(ctx, db.q(`SELECT count(*) FROM schema_migrations WHERE version = ?`), m.Version).Scan(&n); err != nil || n > 0 {
				return err
			}
			if _, err := tx.ExecContext(ctx, m.SQL); err != nil {
				return err
			}
			_, err := tx.ExecContext(ctx, db.q(`INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)`), m.Version, m.Name, ms2(db.Now()))
			return err
		})
		if err != nil {
			return fmt.Errorf("migration %d %q: %w", m.Version, m.Name, err)
		}
	}
	return nil
}

// q rewrites ? placeholders for the dialect.
func (db *DB) q(query string) string {
	if db.dialect != "postgres" {
		return query
	}
	var sb strings.Builder
	n := 0
	for i := 0; i < len(query); i++ {
		if query[i] == '?' {
			n++
			sb.WriteString("$" + strconv.Itoa(n))
			continue
		}
		sb.WriteByte(query[i])
	}
	return sb.String()
}

// tx runs fn in a write transaction, committing if it returns nil.
func (db *DB) tx(ctx context.Context, fn func(*sql.Tx) error) error {
	tx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}

func ms2(t time.Time) int64 { return t.UnixMilli() }

func fromMS(ms int64) time.Time { return time.UnixMilli(ms).UTC() }

func notFound(what string, args ...any) error {
	return server.Errorf(server.ENOTFOUND, what, args...)
}

func isUnique(err error) bool {
	return err != nil && (strings.Contains(err.Error(), "UNIQUE constraint") || strings.Contains(err.Error(), "duplicate key"))
}

var errNoRows = sql.ErrNoRows

func isNoRows(err error) bool { return errors.Is(err, errNoRows) }
