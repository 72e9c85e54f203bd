// Package store implements server.Store on SQL databases: SQLite (embedded,
// the default) and PostgreSQL 15 or later (through pgx), with the same
// tables and numbered migrations per dialect (migrations/<dialect>/
// NNNN_name.sql). Queries are written once with ? placeholders and
// rewritten for PostgreSQL; the methods whose work differs (accepting,
// claiming and locating events) have a PostgreSQL variant in postgres.go.
//
// Raw payloads and processed reports are stored compressed (compress.go)
// in the events table, so that accepting an event is one transaction.
//
// # Several replicas
//
// On PostgreSQL several server processes may share one database. Ingestion
// is idempotent by (project, event id) through the event_ids table; the
// processing queue is a table whose rows are leased with FOR UPDATE SKIP
// LOCKED, and a result is recorded only while its lease is held
// (server.Processed.Worker and Attempt), so each event is counted once even
// when a lease expires under a slow node; issues are created with INSERT …
// ON CONFLICT, and Complete updates issues and rollups in one order
// (project and fingerprint, then issue and key) so replicas do not
// deadlock. Migrations and partition creation take advisory locks.
//
// # Retention
//
// Expire deletes the events received before a time: whole daily partitions
// on PostgreSQL, batches of rows on SQLite. The rule that keeps the
// rollups consistent: an event is counted in its issue (issues.count, the
// hourly and per-release rollups) exactly while it is stored with that
// issue, so deleting it subtracts it from each, and deletes the issue once
// no event of it is left and it was last seen before the cut. Dedupe rows
// and missing-symbol rows of deleted events go with them.
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
	"sync"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" driver
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
	// them run beside the writer). On PostgreSQL both are one pool.
	w, r    *sql.DB
	dialect string // "sqlite" or "postgres"

	// parts caches the event partitions known to exist (PostgreSQL),
	// by day number since the Unix epoch.
	partMu sync.Mutex
	parts  map[int64]bool

	gate writeGate // SQLite: orders the writers

	// SQLite: closing stop ends the checkpointer, which then closes
	// stopped (see checkpoint.go).
	stop, stopped chan struct{}

	// The SQLite statements every event runs, prepared once on the
	// writer's connection: preparing them in each transaction cost
	// ≈ 46 µs per event. Transactions use them through Tx.StmtContext,
	// which finds them already prepared on that connection.
	stmts sqliteStmts

	dec *zstd.Decoder // for values stored before S2 (compress.go)

	// Now returns the current time; tests replace it.
	Now func() time.Time
}

var _ server.Store = (*DB)(nil)

// IsPostgres reports whether dsn names a PostgreSQL database (a
// postgres:// or postgresql:// URL) rather than an SQLite file.
func IsPostgres(dsn string) bool {
	return strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://")
}

// Open opens (creating if needed) the database named by dsn — a file path
// for SQLite, a postgres:// URL for PostgreSQL — and applies pending
// migrations. Several processes may open one PostgreSQL database at once:
// migrations are serialized by an advisory lock.
func Open(ctx context.Context, dsn string) (*DB, error) {
	db := &DB{Now: time.Now}
	var err error
	if IsPostgres(dsn) {
		db.dialect = "postgres"
		if db.w, err = sql.Open("pgx", dsn); err != nil {
			return nil, err
		}
		db.w.SetMaxOpenConns(pgConns)
		db.w.SetMaxIdleConns(pgConns)
		db.r = db.w
	} else {
		db.dialect = "sqlite"
		q := "?_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_pragma=wal_autocheckpoint(0)&_pragma=busy_timeout(10000)&_pragma=foreign_keys(ON)&_txlock=immediate"
		if db.w, err = sql.Open("sqlite", "file:"+dsn+q); err != nil {
			return nil, err
		}
		db.w.SetMaxOpenConns(1)
		if db.r, err = sql.Open("sqlite", "file:"+dsn+q); err != nil {
			db.w.Close()
			return nil, err
		}
		db.r.SetMaxOpenConns(4)
	}
	if db.dec, err = zstd.NewReader(nil, zstd.WithDecoderConcurrency(0), zstd.WithDecoderMaxMemory(maxStored)); err != nil {
		return nil, err
	}
	if err := db.migrate(ctx); err != nil {
		db.Close()
		return nil, err
	}
	if db.dialect == "sqlite" {
		if err := db.prepare(ctx); err != nil {
			db.Close()
			return nil, err
		}
		db.stop, db.stopped = make(chan struct{}), make(chan struct{})
		go db.checkpoints()
	}
	return db, nil
}

// sqliteStmts are the prepared statements of the hot path on SQLite.
type sqliteStmts struct {
	accept        *sql.Stmt // Accept: insert one event
	claimFail     *sql.Stmt // Claim: fail events leased too often
	claim         *sql.Stmt // Claim: lease queued and expired events
	completeEvent *sql.Stmt // Complete: record one processed event
}

func (s *sqliteStmts) all() []**sql.Stmt {
	return []**sql.Stmt{&s.accept, &s.claimFail, &s.claim, &s.completeEvent}
}

// prepare prepares db.stmts on the SQLite writer.
func (db *DB) prepare(ctx context.Context) error {
	for i, q := range []string{sqliteAccept, sqliteClaimFail, sqliteClaim, sqliteCompleteEvent} {
		st, err := db.w.PrepareContext(ctx, q)
		if err != nil {
			return fmt.Errorf("prepare %.40q…: %w", q, err)
		}
		*db.stmts.all()[i] = st
	}
	return nil
}

// Close closes the database.
func (db *DB) Close() error {
	if db.stop != nil {
		close(db.stop)
		<-db.stopped
	}
	if db.dec != nil {
		db.dec.Close()
	}
	for _, st := range db.stmts.all() {
		if *st != nil {
			(*st).Close()
		}
	}
	err := db.w.Close()
	if db.r != db.w {
		if err2 := db.r.Close(); err == nil {
			err = err2
		}
	}
	return err
}

// Dialect returns "sqlite" or "postgres".
func (db *DB) Dialect() string { return db.dialect }

// Version returns the newest migration applied to the database.
func (db *DB) Version(ctx context.Context) (int, error) {
	var v sql.NullInt64
	err := db.r.QueryRowContext(ctx, `SELECT max(version) FROM schema_migrations`).Scan(&v)
	return int(v.Int64), err
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
// each in its own transaction. On PostgreSQL every step first takes a
// transaction-scoped advisory lock, so replicas starting together apply
// each migration once: the second waits, then sees it recorded.
func (db *DB) migrate(ctx context.Context) error {
	err := db.tx(ctx, func(tx *sql.Tx) error {
		if err := db.lockXact(ctx, tx, lockMigrate); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)`)
		return err
	})
	if err != nil {
		return fmt.Errorf("migrations table: %w", err)
	}
	ms, err := Migrations(db.dialect)
	if err != nil {
		return err
	}
	for _, m := range ms {
		err := db.tx(ctx, func(tx *sql.Tx) error {
			if err := db.lockXact(ctx, tx, lockMigrate); err != nil {
				return err
			}
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
	return db.gatedTx(ctx, false, fn)
}

// gatedTx is tx; on SQLite an urgent transaction (an accept) goes ahead
// of waiting others (see writeGate).
func (db *DB) gatedTx(ctx context.Context, urgent bool, fn func(*sql.Tx) error) error {
	if db.dialect == "sqlite" {
		db.gate.lock(urgent)
		defer db.gate.unlock()
	}
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

// Advisory lock keys (PostgreSQL), arbitrary but fixed.
const (
	lockMigrate   = 0x6274_0001 // migrations
	lockPartition = 0x6274_0002 // creating and dropping event partitions
	lockRetention = 0x6274_0003 // one retention pass at a time
)

// lockXact takes an advisory lock held until tx ends (PostgreSQL; SQLite
// transactions are serialized already).
func (db *DB) lockXact(ctx context.Context, tx *sql.Tx, key int64) error {
	if db.dialect != "postgres" {
		return nil
	}
	_, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock($1)`, key)
	return err
}

func isUnique(err error) bool {
	return err != nil && (strings.Contains(err.Error(), "UNIQUE constraint") || strings.Contains(err.Error(), "duplicate key"))
}

var errNoRows = sql.ErrNoRows

func isNoRows(err error) bool { return errors.Is(err, errNoRows) }
