package pgtest_test

import (
	"database/sql"
	"os"
	"strings"
	"testing"

	"github.com/backtrail/backtrail/internal/pgtest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	pgtest.Stop()
	os.Exit(code)
}

// TestURL checks that each test gets its own empty database on a
// PostgreSQL 15 or later server listening on 127.0.0.1, and that the
// database is dropped when the test ends.
func TestURL(t *testing.T) {
	var first string
	t.Run("a", func(t *testing.T) {
		first = pgtest.URL(t)
		db, err := sql.Open("pgx", first)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		var version int
		var addr string
		var tables int
		if err := db.QueryRow(`SELECT current_setting('server_version_num')::int, inet_server_addr()::text,
			(SELECT count(*) FROM pg_tables WHERE schemaname = 'public')`).Scan(&version, &addr, &tables); err != nil {
			t.Fatal(err)
		}
		if version < 150000 || !strings.HasPrefix(addr, "127.0.0.1") || tables != 0 {
			t.Errorf("server version %d at %s with %d tables; want ≥ 15 at 127.0.0.1, empty", version, addr, tables)
		}
		if _, err := db.Exec(`CREATE TABLE t (x int)`); err != nil {
			t.Fatal(err)
		}
	})
	second := pgtest.URL(t)
	if second == first {
		t.Fatalf("two tests got the same database %s", first)
	}
	var n int
	name := first[strings.LastIndexByte(first, '/')+1 : strings.IndexByte(first, '?')]
	if err := pgtest.Admin(t).QueryRow(`SELECT count(*) FROM pg_database WHERE datname = $1`, name).Scan(&n); err != nil || n != 0 {
		t.Errorf("database %s after its test: %d (%v), want dropped", name, n, err)
	}
}
