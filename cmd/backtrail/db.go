package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/backtrail/backtrail/server/store"
)

func init() {
	register(&command{
		name:  "db migrate",
		args:  "[--db URL|PATH] [--data DIR] [--json]",
		short: "apply the server's database migrations and print the schema version",
		long: `
Db migrate applies the migrations the database lacks and prints the schema
version it is at. The database is --db: a postgres:// URL or an SQLite
file, by default the SQLite database in the data directory --data.

` + "`backtrail serve`" + ` migrates at start too; run this before rolling out
a new version to several replicas, so that none of them waits for the
migration. Replicas starting together on one PostgreSQL database are safe
either way: migrations are serialized by an advisory lock.
`,
		flags: func(fs *flag.FlagSet) {
			fs.String("db", "", "database: a postgres:// URL or an SQLite file (default: SQLite in the data directory)")
			fs.String("data", "backtrail-data", "data `directory` of the default SQLite database")
			fs.Bool("json", false, `print {"dialect", "version"} as JSON`)
		},
		run: runDBMigrate,
	})
}

// databaseDSN returns what --db names, or the SQLite database in the data
// directory.
func databaseDSN(fs *flag.FlagSet, dir string) string {
	if dsn := flagString(fs, "db"); dsn != "" {
		return dsn
	}
	return filepath.Join(dir, "backtrail.db")
}

func runDBMigrate(ctx context.Context, e *env, fs *flag.FlagSet, args []string) error {
	if len(args) > 0 {
		return usagef("unexpected argument %q", args[0])
	}
	db, err := store.Open(ctx, databaseDSN(fs, flagString(fs, "data")))
	if err != nil {
		return fmt.Errorf("database: %w", err)
	}
	defer db.Close()
	v, err := db.Version(ctx)
	if err != nil {
		return fmt.Errorf("database: %w", err)
	}
	if flagString(fs, "json") == "true" {
		return json.NewEncoder(e.stdout).Encode(map[string]any{"dialect": db.Dialect(), "version": v})
	}
	fmt.Fprintf(e.stdout, "%s database at schema version %d\n", db.Dialect(), v)
	return nil
}

// parseRetention parses a retention period: a Go duration ("720h") or a
// number of days ("90d"); "" and "0" mean keep everything.
func parseRetention(s string) (time.Duration, error) {
	if s == "" || s == "0" {
		return 0, nil
	}
	if n, ok := strings.CutSuffix(s, "d"); ok {
		d, err := strconv.Atoi(n)
		if err != nil || d < 0 {
			return 0, usagef("--retention %q: want days (90d) or a duration (720h)", s)
		}
		return time.Duration(d) * 24 * time.Hour, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, usagef("--retention %q: want days (90d) or a duration (720h)", s)
	}
	return d, nil
}
