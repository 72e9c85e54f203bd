package main

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" driver
)

// With --db postgres://…, every run gets a database of its own, created
// beside the one the URL names (its name plus "_load_" and a suffix) and
// dropped after the run unless --keep, so runs of a --concurrency list do
// not see each other's events. pgRun also measures what the database did
// for the events: a snapshot when the load starts (after priming) and one
// when the queue has drained, divided by the acknowledged events.

func isPostgres(u string) bool {
	return strings.HasPrefix(u, "postgres://") || strings.HasPrefix(u, "postgresql://")
}

// pgRun is one run's database.
type pgRun struct {
	admin *sql.DB // the database the --db URL names
	db    *sql.DB // the run's database
	name  string
	url   string // the run's database URL, for the servers
	stmts bool   // pg_stat_statements is available
	start pgSnapshot
}

// pgSnapshot is the cumulative counters pgCost subtracts.
type pgSnapshot struct {
	xact, ins, upd, del, fetched, returned int64
	blksRead, blksHit                      int64
	walBytes                               int64 // pg_current_wal_lsn
	cpuTicks                               int64 // the cluster's processes
	postmaster                             int64
}

// pgCost is what the database did per acknowledged event.
type pgCost struct {
	Transactions, Statements, RowsReturnedOrAffected float64
	Inserted, Updated, Deleted, Fetched              float64
	WALBytes, SizeBytes                              float64
	BlocksHit, BlocksRead                            float64
	CPU                                              time.Duration // PostgreSQL's processes, per event
	CPUCores                                         float64       // PostgreSQL's processes over the run, in cores
	Top                                              []pgStatement `json:",omitempty"`
	Note                                             string        `json:",omitempty"`
}

// pgStatement is one statement from pg_stat_statements, per event.
type pgStatement struct {
	Calls, Rows, MsTotal float64
	Query                string
}

// newPGRun creates the run's database.
func newPGRun(ctx context.Context, adminURL, suffix string) (*pgRun, error) {
	u, err := url.Parse(adminURL)
	if err != nil {
		return nil, fmt.Errorf("--db: %w", err)
	}
	admin, err := sql.Open("pgx", adminURL)
	if err != nil {
		return nil, err
	}
	base := strings.TrimPrefix(u.Path, "/")
	if base == "" {
		base = "postgres"
	}
	p := &pgRun{admin: admin, name: base + "_load_" + suffix}
	if _, err := admin.ExecContext(ctx, `DROP DATABASE IF EXISTS `+p.name); err != nil {
		admin.Close()
		return nil, fmt.Errorf("drop database %s: %w", p.name, err)
	}
	if _, err := admin.ExecContext(ctx, `CREATE DATABASE `+p.name); err != nil {
		admin.Close()
		return nil, fmt.Errorf("create database %s: %w", p.name, err)
	}
	u.Path = "/" + p.name
	p.url = u.String()
	if p.db, err = sql.Open("pgx", p.url); err != nil {
		admin.Close()
		return nil, err
	}
	p.db.SetMaxOpenConns(1)
	_, err = p.db.ExecContext(ctx, `CREATE EXTENSION IF NOT EXISTS pg_stat_statements`)
	p.stmts = err == nil
	return p, nil
}

// begin takes the snapshot at the load start.
func (p *pgRun) begin(ctx context.Context) error {
	if p.stmts {
		if _, err := p.db.ExecContext(ctx, `SELECT pg_stat_statements_reset()`); err != nil {
			p.stmts = false
		}
	}
	var err error
	p.start, err = p.snapshot(ctx)
	return err
}

func (p *pgRun) snapshot(ctx context.Context) (pgSnapshot, error) {
	var s pgSnapshot
	// pg_stat_database is updated when a backend's transaction ends and
	// sent at most every 0.5 s (PostgreSQL 15 flushes at idle): force it.
	p.db.ExecContext(ctx, `SELECT pg_stat_force_next_flush()`)
	err := p.db.QueryRowContext(ctx, `SELECT xact_commit + xact_rollback, tup_inserted, tup_updated, tup_deleted, tup_fetched, tup_returned,
			blks_read, blks_hit, pg_current_wal_lsn() - '0/0'::pg_lsn
		FROM pg_stat_database WHERE datname = current_database()`).
		Scan(&s.xact, &s.ins, &s.upd, &s.del, &s.fetched, &s.returned, &s.blksRead, &s.blksHit, &s.walBytes)
	if err != nil {
		return s, fmt.Errorf("pg_stat_database: %w", err)
	}
	var backend int64
	if err := p.db.QueryRowContext(ctx, `SELECT pg_backend_pid()`).Scan(&backend); err == nil {
		s.postmaster = parentPID(backend)
		s.cpuTicks = treeTicks(s.postmaster)
	}
	return s, nil
}

// cost takes the snapshot at the end and returns the difference per event.
func (p *pgRun) cost(ctx context.Context, events int64, wall time.Duration) (*pgCost, error) {
	end, err := p.snapshot(ctx)
	if err != nil {
		return nil, err
	}
	n := float64(max(1, events))
	s := p.start
	c := &pgCost{
		Transactions: float64(end.xact-s.xact) / n,
		Inserted:     float64(end.ins-s.ins) / n,
		Updated:      float64(end.upd-s.upd) / n,
		Deleted:      float64(end.del-s.del) / n,
		Fetched:      float64(end.fetched-s.fetched) / n,
		BlocksHit:    float64(end.blksHit-s.blksHit) / n,
		BlocksRead:   float64(end.blksRead-s.blksRead) / n,
		WALBytes:     float64(end.walBytes-s.walBytes) / n,
	}
	var size int64
	if err := p.db.QueryRowContext(ctx, `SELECT pg_database_size(current_database())`).Scan(&size); err == nil {
		c.SizeBytes = float64(size) / n
	}
	if s.postmaster != 0 && end.postmaster == s.postmaster {
		ticks := end.cpuTicks - s.cpuTicks
		c.CPU = time.Duration(float64(ticks) / clockTick * float64(time.Second) / n)
		c.CPUCores = float64(ticks) / clockTick / wall.Seconds()
	} else {
		c.Note = "PostgreSQL's CPU not measured (not a local server)"
	}
	if !p.stmts {
		c.Note = strings.TrimPrefix(c.Note+"; pg_stat_statements not available (shared_preload_libraries)", "; ")
		return c, nil
	}
	rows, err := p.db.QueryContext(ctx, `SELECT s.calls, s.rows, s.total_exec_time, s.query FROM pg_stat_statements s
		JOIN pg_database d ON d.oid = s.dbid WHERE d.datname = current_database() ORDER BY s.calls DESC, s.total_exec_time DESC`)
	if err != nil {
		return nil, fmt.Errorf("pg_stat_statements: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var st pgStatement
		if err := rows.Scan(&st.Calls, &st.Rows, &st.MsTotal, &st.Query); err != nil {
			return nil, err
		}
		if strings.Contains(st.Query, "pg_stat") || strings.Contains(st.Query, "pg_backend_pid") {
			continue // the benchmark's own
		}
		st.Calls, st.Rows, st.MsTotal = st.Calls/n, st.Rows/n, st.MsTotal/n
		c.Statements += st.Calls
		c.RowsReturnedOrAffected += st.Rows
		st.Query = strings.Join(strings.Fields(st.Query), " ")
		if len(st.Query) > 110 {
			st.Query = st.Query[:110] + "…"
		}
		c.Top = append(c.Top, st)
	}
	return c, rows.Err()
}

// close drops the run's database unless keep.
func (p *pgRun) close(ctx context.Context, keep bool) {
	p.db.Close()
	if !keep {
		p.admin.ExecContext(ctx, `DROP DATABASE IF EXISTS `+p.name+` WITH (FORCE)`)
	}
	p.admin.Close()
}

// parentPID returns the parent of a process (field 4 of /proc/PID/stat).
func parentPID(pid int64) int64 {
	b, err := os.ReadFile("/proc/" + strconv.FormatInt(pid, 10) + "/stat")
	if err != nil {
		return 0
	}
	i := strings.LastIndexByte(string(b), ')')
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 2 {
		return 0
	}
	ppid, _ := strconv.ParseInt(f[1], 10, 64)
	return ppid
}

// treeTicks returns the CPU ticks of a PostgreSQL cluster: the
// postmaster's own and those of its reaped children (cutime, cstime),
// plus its live children's.
func treeTicks(postmaster int64) int64 {
	b, err := os.ReadFile("/proc/" + strconv.FormatInt(postmaster, 10) + "/stat")
	if err != nil {
		return 0
	}
	i := strings.LastIndexByte(string(b), ')')
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 15 {
		return 0
	}
	var t int64
	for _, k := range []int{11, 12, 13, 14} { // utime stime cutime cstime
		v, _ := strconv.ParseInt(f[k], 10, 64)
		t += v
	}
	kids, _ := os.ReadFile(filepath.Join("/proc", strconv.FormatInt(postmaster, 10), "task", strconv.FormatInt(postmaster, 10), "children"))
	for _, k := range strings.Fields(string(kids)) {
		pid, _ := strconv.ParseInt(k, 10, 64)
		if v, ok := procTicks(pid); ok {
			t += v
		}
	}
	return t
}

// markdown renders the cost as rows of the run's table and a statement
// table.
func (c *pgCost) markdown(p func(string, ...any)) {
	p("\nDatabase cost per acknowledged event (PostgreSQL, load start to drained; pg_stat_database, pg_stat_statements, WAL position):\n\n")
	p("| measure | per event |\n| --- | ---: |\n")
	p("| transactions | %.3f |\n", c.Transactions)
	if c.Statements > 0 {
		p("| statements | %.2f |\n", c.Statements)
		p("| rows returned or affected by them | %.1f |\n", c.RowsReturnedOrAffected)
	}
	p("| rows inserted / updated / deleted | %.2f / %.2f / %.2f |\n", c.Inserted, c.Updated, c.Deleted)
	p("| rows fetched (index and heap) | %.1f |\n", c.Fetched)
	p("| buffer hits / reads (8 KB blocks) | %.1f / %.2f |\n", c.BlocksHit, c.BlocksRead)
	p("| WAL written | %.0f B |\n", c.WALBytes)
	p("| database size at the end ÷ events | %.0f B |\n", c.SizeBytes)
	if c.CPU > 0 {
		p("| PostgreSQL CPU (all its processes) | %.0f µs (%.2f cores over the run) |\n", float64(c.CPU)/1e3, c.CPUCores)
	}
	if c.Note != "" {
		p("| note | %s |\n", c.Note)
	}
	if len(c.Top) > 0 {
		p("\n| calls/event | rows/event | ms/event | statement |\n| ---: | ---: | ---: | --- |\n")
		for i, s := range c.Top {
			if i == 12 {
				break
			}
			p("| %.3f | %.2f | %.3f | `%s` |\n", s.Calls, s.Rows, s.MsTotal, strings.ReplaceAll(s.Query, "|", "\\|"))
		}
	}
}
