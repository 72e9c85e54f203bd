// Package pgtest runs a real PostgreSQL server for tests: one cluster per
// test binary, created with initdb in a temporary directory, listening on
// 127.0.0.1 only (on a free port, its unix socket in the same directory),
// and a fresh database for each test that asks for one.
//
// The cluster starts on the first call to URL and stops when the test
// binary's TestMain calls Stop:
//
//	func TestMain(m *testing.M) {
//		code := m.Run()
//		pgtest.Stop()
//		os.Exit(code)
//	}
//
// The server binaries are looked up in $BACKTRAIL_PG_BIN, then
// /usr/lib/postgresql/<version>/bin (newest first, as Debian installs
// them), then PATH. Missing binaries skip the test, or fail it in CI (see
// internal/testenv). PostgreSQL refuses to run as root, so as root the
// cluster runs as the user "postgres" (Debian's package creates it), which
// then owns the temporary directory.
//
// The cluster trades durability for speed (fsync off): it is for tests.
package pgtest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" driver

	"github.com/backtrail/backtrail/internal/testenv"
)

// Options set up the cluster; Setup must be called before the first URL.
type Options struct {
	// Settings are extra server settings (name → value), e.g.
	// "shared_preload_libraries": "pg_stat_statements".
	Settings map[string]string
}

var (
	mu      sync.Mutex // guards the fields below
	opts    Options
	cluster *server
	failed  error // why the cluster could not start
	dbs     atomic.Int64
)

// server is the running cluster.
type server struct {
	dir  string // temporary directory: data/, socket, log
	port int
	cmd  *exec.Cmd
	done chan struct{} // closed when the postmaster exits
	exit error
	user *user.User // the user it runs as, nil for the current one
	log  string
	pool *sql.DB // the "postgres" database, for creating the others
}

// Setup sets the options of the cluster. It has no effect once the
// cluster runs.
func Setup(o Options) {
	mu.Lock()
	defer mu.Unlock()
	opts = o
}

// Bin returns the directory of the PostgreSQL server binaries (initdb,
// postgres), or an error naming the package to install.
func Bin() (string, error) {
	if d := os.Getenv("BACKTRAIL_PG_BIN"); d != "" {
		return d, nil
	}
	ms, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	sort.Slice(ms, func(i, j int) bool {
		vi, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(ms[i]))))
		vj, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(ms[j]))))
		return vi > vj
	})
	if len(ms) > 0 {
		return filepath.Dir(ms[0]), nil
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(p), nil
	}
	return "", fmt.Errorf("PostgreSQL server binaries (initdb, postgres) not found in $BACKTRAIL_PG_BIN, /usr/lib/postgresql/*/bin or PATH; install %s", testenv.Package("initdb"))
}

// URL returns the URL of a new, empty database for the test, dropped when
// the test ends. It starts the cluster on first use. Without PostgreSQL
// binaries it skips the test (fails it in CI).
func URL(t testing.TB) string {
	t.Helper()
	s, err := start()
	if err != nil {
		if errors.Is(err, errNoBinaries) && !testenv.InCI() {
			t.Skipf("pgtest: %v", err)
		}
		t.Fatalf("pgtest: %v", err)
	}
	name := fmt.Sprintf("t%d_%d", os.Getpid(), dbs.Add(1))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := s.pool.ExecContext(ctx, `CREATE DATABASE `+name); err != nil {
		t.Fatalf("pgtest: create database: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if _, err := s.pool.ExecContext(ctx, `DROP DATABASE IF EXISTS `+name+` WITH (FORCE)`); err != nil {
			t.Logf("pgtest: drop database %s: %v", name, err)
		}
	})
	return s.url(name)
}

// Admin returns a connection pool to the cluster's "postgres" database,
// for statistics and other cluster-wide queries. It starts the cluster on
// first use.
func Admin(t testing.TB) *sql.DB {
	t.Helper()
	s, err := start()
	if err != nil {
		if errors.Is(err, errNoBinaries) && !testenv.InCI() {
			t.Skipf("pgtest: %v", err)
		}
		t.Fatalf("pgtest: %v", err)
	}
	return s.pool
}

func (s *server) url(db string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", s.port, db)
}

var errNoBinaries = errors.New("no PostgreSQL binaries")

// start starts the cluster once.
func start() (*server, error) {
	mu.Lock()
	defer mu.Unlock()
	if cluster != nil || failed != nil {
		return cluster, failed
	}
	bin, err := Bin()
	if err != nil {
		failed = fmt.Errorf("%w: %v", errNoBinaries, err)
		return nil, failed
	}
	s, err := launch(bin, opts)
	if err != nil {
		failed = err
		return nil, err
	}
	cluster = s
	return s, nil
}

// ids returns the numeric user and group ids of a Unix user.
func ids(u *user.User) (uid, gid int) {
	uid, _ = strconv.Atoi(u.Uid)
	gid, _ = strconv.Atoi(u.Gid)
	return uid, gid
}

// launch runs initdb and starts the postmaster.
func launch(bin string, o Options) (*server, error) {
	dir, err := os.MkdirTemp("", "backtrail-pgtest-")
	if err != nil {
		return nil, err
	}
	s := &server{dir: dir, done: make(chan struct{}), log: filepath.Join(dir, "postgres.log")}
	ok := false
	defer func() {
		if !ok {
			os.RemoveAll(dir)
		}
	}()
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			return nil, fmt.Errorf("running as root needs the user postgres to run PostgreSQL as: %v", err)
		}
		s.user = u
		uid, gid := ids(u)
		if err := os.Chown(dir, uid, gid); err != nil {
			return nil, err
		}
	}
	data := filepath.Join(dir, "data")
	initdb := exec.Command(filepath.Join(bin, "initdb"), "-D", data, "--auth=trust", "--username=postgres",
		"--encoding=UTF8", "--locale=C", "--no-sync", "--no-instructions")
	initdb.SysProcAttr = procAttr(s.user, false)
	initdb.Dir = dir
	if out, err := initdb.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("initdb: %v\n%s", err, out)
	}
	settings := map[string]string{
		"listen_addresses":        "127.0.0.1",
		"unix_socket_directories": dir,
		"fsync":                   "off",
		"synchronous_commit":      "off",
		"full_page_writes":        "off",
		"max_connections":         "300",
		"shared_buffers":          "128MB",
		"log_min_messages":        "warning",
		"logging_collector":       "off",
	}
	for k, v := range o.Settings {
		settings[k] = v
	}
	for try := 0; ; try++ {
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		args := []string{"-D", data, "-p", strconv.Itoa(port)}
		keys := make([]string, 0, len(settings))
		for k := range settings {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			args = append(args, "-c", k+"="+settings[k])
		}
		logf, err := os.OpenFile(s.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o666)
		if err != nil {
			return nil, err
		}
		cmd := exec.Command(filepath.Join(bin, "postgres"), args...)
		cmd.Stdout, cmd.Stderr = logf, logf
		cmd.Dir = dir
		// The fork happens on a locked thread that lives as long as the
		// postmaster: see dieWithParent.
		cmd.SysProcAttr = procAttr(s.user, true)
		done := make(chan struct{})
		started := make(chan error, 1)
		go func() {
			runtime.LockOSThread() // never unlocked: the thread ends with the postmaster
			if err := cmd.Start(); err != nil {
				started <- err
				return
			}
			started <- nil
			s.exit = cmd.Wait()
			close(done)
		}()
		err = <-started
		logf.Close()
		if err != nil {
			return nil, fmt.Errorf("postgres: %v", err)
		}
		s.cmd, s.port, s.done = cmd, port, done
		err = s.ready(30 * time.Second)
		if err == nil {
			break
		}
		s.kill()
		if try == 2 {
			b, _ := os.ReadFile(s.log)
			return nil, fmt.Errorf("postgres did not start: %v\n%s", err, b)
		}
	}
	ok = true
	return s, nil
}

// ready waits until the server accepts connections.
func (s *server) ready(timeout time.Duration) error {
	pool, err := sql.Open("pgx", s.url("postgres"))
	if err != nil {
		return err
	}
	deadline := time.Now().Add(timeout)
	for {
		select {
		case <-s.done:
			pool.Close()
			return fmt.Errorf("postgres exited: %v", s.exit)
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		err = pool.PingContext(ctx)
		cancel()
		if err == nil {
			s.pool = pool
			return nil
		}
		if time.Now().After(deadline) {
			pool.Close()
			return err
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (s *server) kill() {
	if s.cmd != nil && s.cmd.Process != nil {
		s.cmd.Process.Kill()
		<-s.done
	}
}

// freePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// Stop stops the cluster, if it was started, and removes its directory.
// TestMain calls it after m.Run.
func Stop() {
	mu.Lock()
	defer mu.Unlock()
	s := cluster
	cluster = nil
	if s == nil {
		return
	}
	if s.pool != nil {
		s.pool.Close()
	}
	// SIGINT is PostgreSQL's fast shutdown: it ends sessions and exits.
	s.cmd.Process.Signal(os.Interrupt)
	select {
	case <-s.done:
	case <-time.After(30 * time.Second):
		s.kill()
	}
	os.RemoveAll(s.dir)
}

// Log returns the server's log so far, for a failing test to show.
func Log() string {
	mu.Lock()
	defer mu.Unlock()
	if cluster == nil {
		return ""
	}
	b, _ := os.ReadFile(cluster.log)
	return strings.TrimSpace(string(b))
}
