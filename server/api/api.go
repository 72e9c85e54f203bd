// Package api is the HTTP face of `backtrail serve`: ingestion (Sentry's
// envelope and store endpoints, backtrail's /api/v1/reports), debug files
// (our API, sentry-cli's chunk upload and assemble, debuginfod), the read
// API the web UI uses, and health. Handlers return errors carrying a
// server error code; one table maps codes to HTTP status, and a panic in a
// handler becomes a logged 500.
package api

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/backtrail/backtrail/server"
	"github.com/backtrail/backtrail/server/process"
)

// Server serves the API. Set the fields, then use Handler.
type Server struct {
	Store     server.Store
	Blobs     server.Blobs
	Symbols   *process.Symbols
	Processor *process.Processor
	// AdminToken guards the read API and debug file uploads.
	AdminToken string
	// BaseURL is the address clients reach the server at, for DSNs.
	BaseURL string
	// Limits on requests; zero fields take defaults.
	Limits Limits
	// UI serves the web interface at /, when set.
	UI     http.Handler
	Logger *slog.Logger
	// ChunkDir holds the chunks sentry-cli uploads before it assembles
	// them into debug files.
	ChunkDir string

	accept   *batcher
	limiter  *rateLimiter
	projects atomic.Pointer[projectCache]
	once     sync.Once
	mux      *http.ServeMux
}

// Limits bound what clients may send.
type Limits struct {
	Body        int64   // compressed request body (default 20 MiB)
	Event       int64   // one decompressed event (default 1 MiB)
	Envelope    int64   // one decompressed envelope (default 20 MiB)
	DebugFile   int64   // one uploaded debug file (default 2 GiB)
	EventsPerS  float64 // per project; 0 means unlimited
	EventsBurst int     // per project (default 10 × EventsPerS)
}

func (l *Limits) defaults() {
	if l.Body <= 0 {
		l.Body = 20 << 20
	}
	if l.Event <= 0 {
		l.Event = 1 << 20
	}
	if l.Envelope <= 0 {
		l.Envelope = 20 << 20
	}
	if l.DebugFile <= 0 {
		l.DebugFile = 2 << 30
	}
	if l.EventsBurst <= 0 {
		l.EventsBurst = int(10*l.EventsPerS) + 1
	}
}

func (s *Server) init() {
	s.once.Do(func() {
		if s.Logger == nil {
			s.Logger = slog.Default()
		}
		s.Limits.defaults()
		s.accept = newBatcher(s.Store, s.Processor)
		s.limiter = newRateLimiter(s.Limits.EventsPerS, s.Limits.EventsBurst)
		s.routes()
	})
}

// Close stops the ingestion batcher after it has stored what it holds.
func (s *Server) Close() {
	s.init()
	s.accept.close()
}

// Handler returns the server's HTTP handler.
func (s *Server) Handler() http.Handler {
	s.init()
	return s.mux
}

// handlerFunc is a handler that returns an error instead of writing it.
type handlerFunc func(w http.ResponseWriter, r *http.Request) error

func (s *Server) handle(pattern string, h handlerFunc) {
	s.mux.Handle(pattern, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if p := recover(); p != nil {
				s.Logger.Error("handler panicked", "method", r.Method, "path", r.URL.Path, "panic", p)
				writeError(w, server.Errorf(server.EINTERNAL, "internal error"))
			}
		}()
		if err := h(w, r); err != nil {
			if server.ErrorCode(err) == server.EINTERNAL {
				s.Logger.Error("request failed", "method", r.Method, "path", r.URL.Path, "err", err)
			}
			writeError(w, err)
		}
	}))
}

var codeStatus = map[string]int{
	server.EINVALID:      http.StatusBadRequest,
	server.ENOTFOUND:     http.StatusNotFound,
	server.EUNAUTHORIZED: http.StatusUnauthorized,
	server.ECONFLICT:     http.StatusConflict,
	server.ETOOLARGE:     http.StatusRequestEntityTooLarge,
	server.ERATELIMITED:  http.StatusTooManyRequests,
	server.EUNSUPPORTED:  http.StatusUnsupportedMediaType,
	server.EUNAVAILABLE:  http.StatusServiceUnavailable,
	server.EINTERNAL:     http.StatusInternalServerError,
}

// writeError writes err as JSON with the status its code maps to. Only the
// client-safe message is sent.
func writeError(w http.ResponseWriter, err error) {
	code := server.ErrorCode(err)
	status, ok := codeStatus[code]
	if !ok {
		status = http.StatusInternalServerError
	}
	var re *retryError
	if errors.As(err, &re) {
		for k, v := range re.header {
			w.Header()[k] = v
		}
	}
	writeJSON(w, status, map[string]string{"error": code, "detail": server.ErrorMessage(err)})
}

// retryError is a rate-limit error carrying the headers to send.
type retryError struct {
	err    *server.Error
	header http.Header
}

func (e *retryError) Error() string { return e.err.Error() }

func (e *retryError) Unwrap() error { return e.err }

func writeJSON(w http.ResponseWriter, status int, v any) error {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// admin checks the admin token: Authorization "Bearer <token>" (or
// "Token <token>" as sentry-cli may send), compared in constant time.
func (s *Server) admin(r *http.Request) error {
	tok := bearer(r)
	if tok == "" || s.AdminToken == "" || subtle.ConstantTimeCompare([]byte(tok), []byte(s.AdminToken)) != 1 {
		return server.Errorf(server.EUNAUTHORIZED, "admin token required")
	}
	return nil
}

func bearer(r *http.Request) string {
	h := r.Header.Get("Authorization")
	for _, p := range []string{"Bearer ", "bearer ", "Token ", "token "} {
		if strings.HasPrefix(h, p) {
			return strings.TrimSpace(h[len(p):])
		}
	}
	return ""
}

// projectByKey finds the project whose key is key. Keys are compared in
// constant time against every project's, so timing tells nothing about
// how much of a guess was right. The project list is cached, as every
// ingested event needs it; an unknown key reloads it, at most once a
// second, so new projects work at once and bad keys cannot flood the
// database.
func (s *Server) projectByKey(ctx context.Context, key string) (*server.Project, error) {
	find := func(ps []*server.Project) *server.Project {
		var found *server.Project
		for _, p := range ps {
			if subtle.ConstantTimeCompare([]byte(key), []byte(p.Key)) == 1 {
				found = p
			}
		}
		return found
	}
	c := s.projects.Load()
	if c != nil && time.Since(c.at) < projectsTTL {
		if p := find(c.list); p != nil {
			return p, nil
		}
		if time.Since(c.at) < time.Second {
			return nil, server.Errorf(server.EUNAUTHORIZED, "unknown project key")
		}
	}
	ps, err := s.Store.Projects(ctx)
	if err != nil {
		return nil, err
	}
	s.projects.Store(&projectCache{list: ps, at: time.Now()})
	if p := find(ps); p != nil {
		return p, nil
	}
	return nil, server.Errorf(server.EUNAUTHORIZED, "unknown project key")
}

// projectsTTL is how long the cached project list is trusted.
const projectsTTL = 30 * time.Second

type projectCache struct {
	list []*server.Project
	at   time.Time
}

// projectParam resolves the project a read request names by ?project= (a
// name or id); empty means every project.
func (s *Server) projectParam(r *http.Request) (int64, error) {
	v := r.URL.Query().Get("project")
	if v == "" {
		return 0, nil
	}
	if id, err := strconv.ParseInt(v, 10, 64); err == nil {
		p, err := s.Store.Project(r.Context(), id)
		if err != nil {
			return 0, err
		}
		return p.ID, nil
	}
	p, err := s.Store.ProjectByName(r.Context(), v)
	if err != nil {
		return 0, err
	}
	return p.ID, nil
}

func (s *Server) routes() {
	s.mux = http.NewServeMux()
	// Ingestion.
	s.handle("POST /api/{project}/envelope/", s.sentryEnvelope)
	s.handle("POST /api/{project}/store/", s.sentryStore)
	s.handle("POST /api/v1/reports", s.postReport)
	// Debug files.
	s.handle("POST /api/v1/debug-files", s.postDebugFile)
	s.handle("GET /api/v1/debug-files", s.listDebugFiles)
	s.handle("DELETE /api/v1/debug-files/{id}", s.deleteDebugFile)
	s.handle("GET /api/0/organizations/{org}/chunk-upload/", s.chunkOptions)
	s.handle("POST /api/0/organizations/{org}/chunk-upload/", s.chunkUpload)
	s.handle("POST /api/0/projects/{org}/{project}/files/difs/assemble/", s.assemble)
	s.handle("GET /buildid/{id}/debuginfo", s.debuginfod)
	s.handle("GET /buildid/{id}/executable", s.debuginfod)
	s.handle("GET /debuginfod/{key}/buildid/{id}/debuginfo", s.debuginfod)
	s.handle("GET /debuginfod/{key}/buildid/{id}/executable", s.debuginfod)
	// Reading.
	s.handle("GET /api/v1/projects", s.listProjects)
	s.handle("GET /api/v1/issues", s.listIssues)
	s.handle("GET /api/v1/issues/{id}", s.getIssue)
	s.handle("PUT /api/v1/issues/{id}", s.updateIssue)
	s.handle("GET /api/v1/issues/{id}/events", s.issueEvents)
	s.handle("GET /api/v1/events/{id}", s.getEvent)
	s.handle("GET /api/v1/events/{id}/raw", s.rawEvent)
	s.handle("GET /api/v1/missing-symbols", s.missingSymbols)
	s.handle("GET /healthz", s.health)
	if s.UI != nil {
		s.mux.Handle("GET /", s.UI)
	}
}

// health answers load balancers: 200 while the database answers.
func (s *Server) health(w http.ResponseWriter, r *http.Request) error {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	n, err := s.Store.Pending(ctx)
	if err != nil {
		return server.Errorf(server.EUNAVAILABLE, "database unavailable")
	}
	return writeJSON(w, http.StatusOK, map[string]any{"status": "ok", "pending": n})
}
