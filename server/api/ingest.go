package api

import (
	"context"
	"errors"
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/backtrail/backtrail/server"
	"github.com/backtrail/backtrail/server/ingest"
	"github.com/backtrail/backtrail/server/ingest/sentry"
	"github.com/backtrail/backtrail/server/process"
)

// sentryLimits converts our limits into the sentry package's.
func (s *Server) sentryLimits() sentry.Limits {
	return sentry.Limits{Compressed: s.Limits.Body, Decompressed: s.Limits.Envelope, Event: s.Limits.Event}
}

// body reads and decompresses a request body within the limits.
func (s *Server) body(r *http.Request) ([]byte, error) {
	b, err := sentry.Body(r, s.sentryLimits())
	switch {
	case errors.Is(err, sentry.ErrTooLarge):
		return nil, &server.Error{Code: server.ETOOLARGE, Message: "request body too large", Err: err}
	case errors.Is(err, sentry.ErrBadBody):
		return nil, &server.Error{Code: server.EINVALID, Message: err.Error(), Err: err}
	case err != nil:
		return nil, &server.Error{Code: server.EINVALID, Message: "reading request body failed", Err: err}
	}
	return b, nil
}

// sentryProject authenticates a Sentry request: the key from the auth
// header, query string or envelope DSN, the project from the path, which
// must be the key's.
func (s *Server) sentryProject(r *http.Request, dsn string) (*server.Project, error) {
	key, ok := sentry.Auth(r)
	if !ok && dsn != "" {
		if k, _, err := sentry.KeyFromDSN(dsn); err == nil {
			key, ok = k, true
		}
	}
	if !ok {
		return nil, server.Errorf(server.EUNAUTHORIZED, "missing sentry_key")
	}
	p, err := s.projectByKey(r.Context(), key)
	if err != nil {
		return nil, err
	}
	if id := r.PathValue("project"); id != strconv.FormatInt(p.ID, 10) && id != p.Name {
		return nil, server.Errorf(server.EUNAUTHORIZED, "key does not belong to project %q", id)
	}
	return p, nil
}

func (s *Server) sentryEnvelope(w http.ResponseWriter, r *http.Request) error {
	body, err := s.body(r)
	if err != nil {
		return err
	}
	env, err := sentry.ParseEnvelope(body, s.sentryLimits())
	if err != nil {
		code := server.EINVALID
		if errors.Is(err, sentry.ErrTooLarge) {
			code = server.ETOOLARGE
		}
		return &server.Error{Code: code, Message: err.Error(), Err: err}
	}
	p, err := s.sentryProject(r, env.Header.DSN)
	if err != nil {
		return err
	}
	var evs []*server.Incoming
	now := time.Now()
	for _, it := range env.Items {
		if it.Type != "event" {
			continue // sessions, client reports, attachments, transactions…
		}
		pl, err := ingest.Split(server.FormatSentry, it.Payload)
		if err != nil {
			return err
		}
		for _, x := range pl {
			if env.Header.EventID != "" && len(env.Items) == 1 {
				x.EventID = env.Header.EventID
			}
			evs = append(evs, &server.Incoming{ProjectID: p.ID, EventID: x.EventID, Format: x.Format, Raw: x.Raw, Received: now})
		}
	}
	if len(evs) == 0 {
		return writeJSON(w, http.StatusOK, map[string]string{"id": env.Header.EventID})
	}
	if err := s.rateLimit(p, len(evs)); err != nil {
		return err
	}
	if _, err := s.accept.add(r.Context(), evs); err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, map[string]string{"id": evs[0].EventID})
}

func (s *Server) sentryStore(w http.ResponseWriter, r *http.Request) error {
	body, err := s.body(r)
	if err != nil {
		return err
	}
	if int64(len(body)) > s.Limits.Event {
		return server.Errorf(server.ETOOLARGE, "event larger than %d bytes", s.Limits.Event)
	}
	p, err := s.sentryProject(r, "")
	if err != nil {
		return err
	}
	pl, err := ingest.Split(server.FormatStore, body)
	if err != nil {
		return err
	}
	if err := s.rateLimit(p, 1); err != nil {
		return err
	}
	ev := &server.Incoming{ProjectID: p.ID, EventID: pl[0].EventID, Format: server.FormatStore, Raw: body, Received: time.Now()}
	if _, err := s.accept.add(r.Context(), []*server.Incoming{ev}); err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, map[string]string{"id": ev.EventID})
}

// postReport accepts backtrail reports and the formats detected from
// content: Apple .ips, .crash and MetricKit, Go panic text. The project
// key comes as "Authorization: Bearer <key>".
func (s *Server) postReport(w http.ResponseWriter, r *http.Request) error {
	key := bearer(r)
	if key == "" {
		return server.Errorf(server.EUNAUTHORIZED, "Authorization: Bearer <project key> required")
	}
	p, err := s.projectByKey(r.Context(), key)
	if err != nil {
		return err
	}
	body, err := s.body(r)
	if err != nil {
		return err
	}
	if int64(len(body)) > s.Limits.Event {
		return server.Errorf(server.ETOOLARGE, "report larger than %d bytes", s.Limits.Event)
	}
	format := ingest.Detect(body)
	if format == "" {
		return server.Errorf(server.EUNSUPPORTED, "not a report this server can read (backtrail report JSON, Apple .ips/.crash/MetricKit, Go panic text)")
	}
	pl, err := ingest.Split(format, body)
	if err != nil {
		return err
	}
	if err := s.rateLimit(p, len(pl)); err != nil {
		return err
	}
	now := time.Now()
	evs := make([]*server.Incoming, len(pl))
	ids := make([]string, len(pl))
	for i, x := range pl {
		evs[i] = &server.Incoming{ProjectID: p.ID, EventID: x.EventID, Format: x.Format, Raw: x.Raw, Received: now}
		ids[i] = x.EventID
	}
	dup, err := s.accept.add(r.Context(), evs)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, map[string]any{"ids": ids, "format": format, "duplicate": dup})
}

func (s *Server) rateLimit(p *server.Project, n int) error {
	wait := s.limiter.take(p.ID, n)
	if wait <= 0 {
		return nil
	}
	return &retryError{
		err:    server.Errorf(server.ERATELIMITED, "project %s is over its rate limit", p.Name),
		header: sentry.RateLimitHeaders(wait),
	}
}

// batcher commits incoming events in groups: while one transaction
// commits, the events of concurrent requests gather for the next. Each
// request is answered only after its events are committed, so an
// acknowledged event survives a crash of the server.
type batcher struct {
	store server.Store
	proc  *process.Processor
	in    chan *pending
	quit  chan struct{}
	done  chan struct{}
}

type pending struct {
	evs   []*server.Incoming
	dup   []bool
	err   error
	ready chan struct{}
}

// maxBatch bounds the events of one transaction.
const maxBatch = 512

func newBatcher(st server.Store, proc *process.Processor) *batcher {
	b := &batcher{store: st, proc: proc, in: make(chan *pending, 1024), quit: make(chan struct{}), done: make(chan struct{})}
	go b.loop()
	return b
}

func (b *batcher) add(ctx context.Context, evs []*server.Incoming) ([]bool, error) {
	p := &pending{evs: evs, ready: make(chan struct{})}
	select {
	case b.in <- p:
	case <-b.quit:
		return nil, server.Errorf(server.EUNAVAILABLE, "server is shutting down")
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	// Once queued, the events are committed or failed whatever the
	// client does; wait for the verdict.
	<-p.ready
	return p.dup, p.err
}

func (b *batcher) loop() {
	defer close(b.done)
	for {
		var batch []*pending
		select {
		case p := <-b.in:
			batch = append(batch, p)
		case <-b.quit:
			// Commit what was queued before the quit.
			for {
				select {
				case p := <-b.in:
					b.commit([]*pending{p})
				default:
					return
				}
			}
		}
		n := len(batch[0].evs)
	gather:
		for n < maxBatch {
			select {
			case p := <-b.in:
				batch = append(batch, p)
				n += len(p.evs)
			default:
				break gather
			}
		}
		b.commit(batch)
	}
}

func (b *batcher) commit(batch []*pending) {
	var all []*server.Incoming
	for _, p := range batch {
		all = append(all, p.evs...)
	}
	dup, err := b.store.Accept(context.Background(), all)
	if err != nil {
		err = &server.Error{Code: server.EUNAVAILABLE, Message: "could not store the event", Err: err}
	}
	i := 0
	for _, p := range batch {
		p.err = err
		if err == nil {
			p.dup = dup[i : i+len(p.evs)]
		}
		i += len(p.evs)
		close(p.ready)
	}
	if err == nil && b.proc != nil {
		b.proc.Notify()
	}
}

func (b *batcher) close() {
	select {
	case <-b.quit:
	default:
		close(b.quit)
	}
	<-b.done
}

// rateLimiter is a token bucket per project. It is safe for concurrent
// use.
type rateLimiter struct {
	rate  float64 // tokens per second; 0: unlimited
	burst float64

	mu      sync.Mutex // guards buckets
	buckets map[int64]*bucket
}

type bucket struct {
	tokens float64
	at     time.Time
}

func newRateLimiter(rate float64, burst int) *rateLimiter {
	return &rateLimiter{rate: rate, burst: float64(burst), buckets: make(map[int64]*bucket)}
}

// take spends n tokens of a project and returns 0, or how long to wait
// until n tokens would be there (spending nothing).
func (l *rateLimiter) take(project int64, n int) time.Duration {
	if l.rate <= 0 {
		return 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	now := time.Now()
	b := l.buckets[project]
	if b == nil {
		b = &bucket{tokens: l.burst, at: now}
		l.buckets[project] = b
	}
	b.tokens = math.Min(l.burst, b.tokens+now.Sub(b.at).Seconds()*l.rate)
	b.at = now
	if b.tokens >= float64(n) {
		b.tokens -= float64(n)
		return 0
	}
	return time.Duration((float64(n) - b.tokens) / l.rate * float64(time.Second))
}
