// Package servertest runs the backtrail server in-process for end-to-end
// tests: the store, the blob store, symbols, the processor and the API,
// wired the way `backtrail serve` (cmd/backtrail/serve.go) wires them,
// listening on 127.0.0.1:0 over a temporary directory. Clients under test
// talk to it over real HTTP.
//
// The store is SQLite in the data directory, or a database of its own on
// the PostgreSQL cluster internal/pgtest runs: when Options.Database says
// so, or for every server of the test binary when the environment
// variable BACKTRAIL_TEST_DB is "postgres" (the test command runs the
// end-to-end suite once per database that way). A test binary that may
// use PostgreSQL calls pgtest.Stop from its TestMain. Several servers may
// share one database and data directory, as replicas do.
//
// It follows WTF Dial's cmd/wtfd/main_test.go: one helper that starts the
// whole program and stops it when the test ends.
package servertest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/backtrail/backtrail/internal/pgtest"
	"github.com/backtrail/backtrail/report"
	"github.com/backtrail/backtrail/server"
	"github.com/backtrail/backtrail/server/api"
	"github.com/backtrail/backtrail/server/blob"
	"github.com/backtrail/backtrail/server/process"
	"github.com/backtrail/backtrail/server/store"
)

// Options change how the server runs. The zero value is the server as
// `backtrail serve` runs it, with a random admin token.
type Options struct {
	// Dir is the data directory (default t.TempDir()).
	Dir string
	// Limits are the API's request limits.
	Limits api.Limits
	// Logger receives the server's logs (default: the test's log, warnings
	// and errors only).
	Logger *slog.Logger
	// Upstream lists debuginfod servers asked for debug files nobody
	// uploaded.
	Upstream []string
	// Database is "sqlite" for SQLite in Dir, "postgres" for a new
	// database on the test PostgreSQL cluster, or a DSN (a postgres://
	// URL or an SQLite file) to share a database with another server.
	// The default is $BACKTRAIL_TEST_DB, else "sqlite".
	Database string
	// Lease is how long the processor leases events (default 30 s).
	Lease time.Duration
}

// EnvDatabase is the environment variable that picks the database of the
// servers whose Options leave Database empty: "sqlite" or "postgres".
const EnvDatabase = "BACKTRAIL_TEST_DB"

// Server is a running in-process server. Its methods fail the test on
// transport errors; HTTP statuses are the caller's to check.
type Server struct {
	URL        string          // base URL, "http://127.0.0.1:port"
	AdminToken string          // the admin token
	Project    *server.Project // the project "default"
	Dir        string          // the data directory
	Database   string          // the database's DSN, for another replica
	Store      *store.DB
	Blobs      *blob.Dir
	API        *api.Server

	client *http.Client
}

// Start starts a server and registers its shutdown with t.Cleanup.
func Start(t testing.TB, opts Options) *Server {
	t.Helper()
	ctx := context.Background()
	dir := opts.Dir
	if dir == "" {
		dir = t.TempDir()
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	var raw [16]byte
	rand.Read(raw[:])
	token := hex.EncodeToString(raw[:])

	dsn := opts.Database
	if dsn == "" {
		dsn = os.Getenv(EnvDatabase)
	}
	switch dsn {
	case "", "sqlite":
		dsn = filepath.Join(dir, "backtrail.db")
	case "postgres":
		dsn = pgtest.URL(t)
	}
	db, err := store.Open(ctx, dsn)
	if err != nil {
		t.Fatalf("servertest: %v", err)
	}
	blobs, err := blob.Open(filepath.Join(dir, "blobs"))
	if err != nil {
		db.Close()
		t.Fatalf("servertest: %v", err)
	}
	def, err := db.ProjectByName(ctx, "default")
	if server.ErrorCode(err) == server.ENOTFOUND {
		def, err = db.CreateProject(ctx, "default")
		if server.ErrorCode(err) == server.ECONFLICT {
			def, err = db.ProjectByName(ctx, "default")
		}
	}
	if err != nil {
		db.Close()
		t.Fatalf("servertest: %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		db.Close()
		t.Fatalf("servertest: %v", err)
	}
	base := "http://" + ln.Addr().String()
	syms := &process.Symbols{Store: db, Blobs: blobs, CacheDir: filepath.Join(dir, "symcaches")}
	if len(opts.Upstream) > 0 {
		syms.Upstream = &process.Upstream{URLs: opts.Upstream}
	}
	// A short poll: tests wait for processing, and the processor is also
	// woken by every accepted event.
	proc := &process.Processor{Store: db, Symbols: syms, Logger: logger, Poll: 50 * time.Millisecond, Lease: opts.Lease}
	srv := &api.Server{
		Store: db, Blobs: blobs, Symbols: syms, Processor: proc,
		AdminToken: token, BaseURL: base, ChunkDir: filepath.Join(dir, "chunks"),
		Limits: opts.Limits, Logger: logger,
	}
	hs := &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 10 * time.Second}
	procCtx, stopProc := context.WithCancel(context.Background())
	procDone := make(chan struct{})
	go func() {
		defer close(procDone)
		proc.Run(procCtx)
	}()
	serveDone := make(chan struct{})
	go func() {
		defer close(serveDone)
		hs.Serve(ln)
	}()
	t.Cleanup(func() {
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		hs.Shutdown(sctx)
		<-serveDone
		srv.Close()
		stopProc()
		<-procDone
		db.Close()
	})
	return &Server{
		URL: base, AdminToken: token, Project: def, Dir: dir, Database: dsn,
		Store: db, Blobs: blobs, API: srv,
		client: &http.Client{Timeout: 2 * time.Minute},
	}
}

// testWriter sends log lines to the test's log.
type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSuffix(string(p), "\n"))
	return len(p), nil
}

// DSN returns the Sentry DSN of project p (the default project when nil).
func (s *Server) DSN(p *server.Project) string {
	if p == nil {
		p = s.Project
	}
	return p.DSN(s.URL)
}

// CreateProject creates another project.
func (s *Server) CreateProject(t testing.TB, name string) *server.Project {
	t.Helper()
	p, err := s.Store.CreateProject(context.Background(), name)
	if err != nil {
		t.Fatalf("servertest: create project %q: %v", name, err)
	}
	return p
}

// Response is an answered request.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// JSON decodes the body into v, failing the test if it is not JSON.
func (r *Response) JSON(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		t.Fatalf("servertest: response %d %q: %v", r.Status, r.Body, err)
	}
}

// Do sends a request and reads the whole answer.
func (s *Server) Do(t testing.TB, req *http.Request) *Response {
	t.Helper()
	resp, err := s.client.Do(req)
	if err != nil {
		t.Fatalf("servertest: %s %s: %v", req.Method, req.URL, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("servertest: %s %s: reading answer: %v", req.Method, req.URL, err)
	}
	return &Response{Status: resp.StatusCode, Header: resp.Header, Body: body}
}

// Request builds a request to path (relative to the base URL). Header
// pairs follow: name, value, name, value…
func (s *Server) Request(t testing.TB, method, path string, body []byte, header ...string) *http.Request {
	t.Helper()
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, s.URL+path, r)
	if err != nil {
		t.Fatalf("servertest: %v", err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	return req
}

// Admin sends a request with the admin token.
func (s *Server) Admin(t testing.TB, method, path string, body []byte) *Response {
	t.Helper()
	return s.Do(t, s.Request(t, method, path, body, "Authorization", "Bearer "+s.AdminToken))
}

// Get GETs path with the admin token, wants 200 and decodes the JSON
// answer into v.
func (s *Server) Get(t testing.TB, path string, v any) {
	t.Helper()
	resp := s.Admin(t, "GET", path, nil)
	if resp.Status != http.StatusOK {
		t.Fatalf("servertest: GET %s: %d %s", path, resp.Status, resp.Body)
	}
	resp.JSON(t, v)
}

// StoreEvent posts a Sentry event to the store endpoint of project p (the
// default project when nil) with the project's key, as Sentry SDKs of the
// store era did.
func (s *Server) StoreEvent(t testing.TB, p *server.Project, event []byte) *Response {
	t.Helper()
	if p == nil {
		p = s.Project
	}
	return s.Do(t, s.Request(t, "POST", fmt.Sprintf("/api/%d/store/", p.ID), event,
		"Content-Type", "application/json",
		"X-Sentry-Auth", "Sentry sentry_version=7, sentry_client=servertest/1.0, sentry_key="+p.Key))
}

// PostReport posts a body to /api/v1/reports with project p's key (the
// default project when nil).
func (s *Server) PostReport(t testing.TB, p *server.Project, body []byte) *Response {
	t.Helper()
	if p == nil {
		p = s.Project
	}
	return s.Do(t, s.Request(t, "POST", "/api/v1/reports", body, "Authorization", "Bearer "+p.Key))
}

// UploadDebugFile uploads the file at path to project p (the default
// project when nil) through /api/v1/debug-files, wants 200, and returns
// the debug files the server recorded.
func (s *Server) UploadDebugFile(t testing.TB, p *server.Project, path string) []*server.DebugFile {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	resp := s.UploadDebugData(t, p, filepath.Base(path), data)
	if resp.Status != http.StatusOK {
		t.Fatalf("servertest: upload %s: %d %s", path, resp.Status, resp.Body)
	}
	var fs []*server.DebugFile
	resp.JSON(t, &fs)
	return fs
}

// UploadDebugData uploads data as a debug file called name.
func (s *Server) UploadDebugData(t testing.TB, p *server.Project, name string, data []byte) *Response {
	t.Helper()
	if p == nil {
		p = s.Project
	}
	q := url.Values{"project": {p.Name}, "name": {name}}
	return s.Admin(t, "POST", "/api/v1/debug-files?"+q.Encode(), data)
}

// Pending returns the number of events waiting to be processed, as
// /healthz reports it.
func (s *Server) Pending(t testing.TB) int64 {
	t.Helper()
	resp := s.Do(t, s.Request(t, "GET", "/healthz", nil))
	var h struct {
		Status  string `json:"status"`
		Pending *int64 `json:"pending"`
	}
	resp.JSON(t, &h)
	if resp.Status != http.StatusOK || h.Pending == nil {
		t.Fatalf("servertest: /healthz: %d %s", resp.Status, resp.Body)
	}
	return *h.Pending
}

// Wait waits until every accepted event is processed, polling /healthz.
// It fails the test after a minute.
func (s *Server) Wait(t testing.TB) {
	t.Helper()
	if err := Poll(time.Minute, func() error {
		if n := s.Pending(t); n > 0 {
			return fmt.Errorf("%d events pending", n)
		}
		return nil
	}); err != nil {
		t.Fatalf("servertest: waiting for processing: %v", err)
	}
}

// Poll calls f every 20 ms until it returns nil or timeout has passed, and
// returns its last error then.
func Poll(timeout time.Duration, f func() error) error {
	deadline := time.Now().Add(timeout)
	for {
		err := f()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("after %v: %w", timeout, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Event is an event as GET /api/v1/events/{id} shows it: the stored row's
// fields and the processed report.
type Event struct {
	report.Report
	ID        string `json:"id"`
	ProjectID int64  `json:"project"`
	IssueID   int64  `json:"issue"`
	Format    string `json:"format"`
	Processed bool   `json:"processed"`
	Error     string `json:"error"`
	Title     string `json:"title"`
}

// Event fetches an event by id (in any project) and fails the test unless
// the server answers 200.
func (s *Server) Event(t testing.TB, id string) *Event {
	t.Helper()
	var e Event
	s.Get(t, "/api/v1/events/"+id, &e)
	return &e
}

// Issue is an issue as GET /api/v1/issues/{id} shows it.
type Issue struct {
	server.Issue
	Releases []string             `json:"releases"`
	Counts   []server.CountBucket `json:"counts"`
}

// Issue fetches an issue.
func (s *Server) Issue(t testing.TB, id int64) *Issue {
	t.Helper()
	var is Issue
	s.Get(t, fmt.Sprintf("/api/v1/issues/%d", id), &is)
	return &is
}
