package main

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/backtrail/backtrail/internal/pgtest"
)

func TestParseRetention(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want time.Duration
		bad  bool
	}{
		{"", 0, false},
		{"0", 0, false},
		{"0d", 0, false},
		{"1d", 24 * time.Hour, false},
		{"90d", 90 * 24 * time.Hour, false},
		{"720h", 720 * time.Hour, false},
		{"90m", 90 * time.Minute, false},
		{"-1d", 0, true},
		{"d", 0, true},
		{"1.5d", 0, true},
		{"90 days", 0, true},
		{"-5h", 0, true},
	} {
		got, err := parseRetention(tt.in)
		if (err != nil) != tt.bad || got != tt.want {
			t.Errorf("parseRetention(%q) = %v, %v; want %v, error %v", tt.in, got, err, tt.want, tt.bad)
		}
	}
}

// TestDBMigrate runs `backtrail db migrate` on a new SQLite database and a
// new PostgreSQL database, twice each: the second run finds nothing to do
// and prints the same version.
func TestDBMigrate(t *testing.T) {
	for _, tt := range []struct {
		name, dialect string
		dsn           func(t *testing.T) string
	}{
		{"sqlite", "sqlite", func(t *testing.T) string { return filepath.Join(t.TempDir(), "x.db") }},
		{"postgres", "postgres", func(t *testing.T) string { return pgtest.URL(t) }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dsn := tt.dsn(t)
			var versions []int
			for range 2 {
				var out, errb bytes.Buffer
				e := &env{stdin: bytes.NewReader(nil), stdout: &out, stderr: &errb}
				if code := run(t.Context(), e, []string{"db", "migrate", "--db", dsn, "--json"}); code != 0 {
					t.Fatalf("db migrate: exit %d: %s", code, errb.String())
				}
				var v struct {
					Dialect string `json:"dialect"`
					Version int    `json:"version"`
				}
				if err := json.Unmarshal(out.Bytes(), &v); err != nil || v.Dialect != tt.dialect {
					t.Fatalf("db migrate printed %q (%v)", out.String(), err)
				}
				versions = append(versions, v.Version)
			}
			if versions[0] < 2 || versions[0] != versions[1] {
				t.Errorf("versions %v, want the same, at least 2", versions)
			}
		})
	}
}
