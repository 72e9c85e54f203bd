package backtrail_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/backtrail/backtrail"
	"github.com/backtrail/backtrail/report"
)

// step is one scripted server answer: a status, an optional Retry-After,
// or (status 0) a dropped connection.
type step struct {
	status     int
	retryAfter string
}

// flakyServer answers requests from a script and then with 200s. It checks
// every request the way the real server will.
type flakyServer struct {
	t      *testing.T
	script []step

	mu       sync.Mutex
	times    []time.Time // arrival of every request
	accepted []string    // exception values of accepted reports, in order
	srv      *httptest.Server
}

func newFlakyServer(t *testing.T, script ...step) *flakyServer {
	s := &flakyServer{t: t, script: script}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *flakyServer) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	n := len(s.times)
	s.times = append(s.times, time.Now())
	s.mu.Unlock()
	if r.Method != http.MethodPost || r.URL.Path != backtrail.ReportsPath ||
		r.Header.Get("Authorization") != "Bearer project-key" || r.Header.Get("Content-Encoding") != "gzip" {
		s.t.Errorf("request %d: %s %s auth %q encoding %q", n, r.Method, r.URL.Path, r.Header.Get("Authorization"), r.Header.Get("Content-Encoding"))
	}
	zr, err := gzip.NewReader(r.Body)
	if err != nil {
		s.t.Errorf("request %d: %v", n, err)
		return
	}
	rep, err := report.Decode(zr, 1<<20)
	if err != nil {
		s.t.Errorf("request %d: %v", n, err)
		return
	}
	if n < len(s.script) {
		st := s.script[n]
		if st.status == 0 {
			hj, _ := w.(http.Hijacker)
			conn, _, _ := hj.Hijack()
			conn.Close() // the client sees a network error
			return
		}
		if st.retryAfter != "" {
			w.Header().Set("Retry-After", st.retryAfter)
		}
		w.WriteHeader(st.status)
		if st.status < 300 {
			s.accept(rep)
		}
		return
	}
	s.accept(rep)
}

func (s *flakyServer) accept(r *report.Report) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v := ""
	if r.Exception != nil {
		v = r.Exception.Value
	}
	s.accepted = append(s.accepted, v)
}

// spoolPanics records n panics, "p0" … "p(n-1)", through c.
func spoolPanics(c *backtrail.Client, n int) {
	for i := range n {
		c.Wrap(func() { panic("p" + strconv.Itoa(i)) })()
	}
}

type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestUploader runs the uploader against servers that fail, throttle,
// drop connections and recover.
func TestUploader(t *testing.T) {
	tests := []struct {
		name      string
		script    []step
		reports   int
		requests  int      // total requests the server sees
		accepted  []string // delivered, in order
		minGap    time.Duration
		gapAfter  int    // request index after which minGap must pass
		logSubstr string // expected in the log
	}{
		{"accepts at once", nil, 3, 3, []string{"p0", "p1", "p2"}, 0, 0, ""},
		{"server errors then recovery", []step{{status: 500}, {status: 503}, {status: 502}}, 2, 5, []string{"p0", "p1"}, 0, 0, "will retry"},
		{"throttled with Retry-After", []step{{status: 429, retryAfter: "1"}}, 2, 3, []string{"p0", "p1"}, 900 * time.Millisecond, 0, "429"},
		{"request timeout is retried", []step{{status: 408}}, 1, 2, []string{"p0"}, 0, 0, "408"},
		{"connection dropped", []step{{status: 0}, {status: 0}}, 1, 3, []string{"p0"}, 0, 0, "will retry"},
		{"rejected report dropped", []step{{status: 400}, {status: 413}}, 3, 3, []string{"p2"}, 0, 0, "report dropped"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newFlakyServer(t, tt.script...)
			var logs logBuffer
			c := newClient(t, backtrail.Options{
				Endpoint: srv.srv.URL, Key: "project-key", SpoolDir: t.TempDir(),
				RecoverPanics: true, RetryBase: 10 * time.Millisecond, RetryMax: 50 * time.Millisecond,
				Logger: slog.New(slog.NewTextHandler(&logs, nil)),
			})
			spoolPanics(c, tt.reports)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := c.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			srv.mu.Lock()
			defer srv.mu.Unlock()
			if len(srv.times) != tt.requests || strings.Join(srv.accepted, ",") != strings.Join(tt.accepted, ",") {
				t.Errorf("%d requests, accepted %v; want %d, %v", len(srv.times), srv.accepted, tt.requests, tt.accepted)
			}
			if tt.minGap > 0 {
				if gap := srv.times[tt.gapAfter+1].Sub(srv.times[tt.gapAfter]); gap < tt.minGap {
					t.Errorf("retried after %v, want at least %v", gap, tt.minGap)
				}
			}
			if !strings.Contains(logs.String(), tt.logSubstr) {
				t.Errorf("log lacks %q:\n%s", tt.logSubstr, logs.String())
			}
			if rs := pending(t, c); len(rs) != 0 {
				t.Errorf("%d reports left in the spool", len(rs))
			}
		})
	}
}

// TestUploaderShouldUpload: nothing is sent while the hook says no.
func TestUploaderShouldUpload(t *testing.T) {
	srv := newFlakyServer(t)
	var ok atomic.Bool
	c := newClient(t, backtrail.Options{
		Endpoint: srv.srv.URL + "/", Key: "project-key", RecoverPanics: true,
		ShouldUpload: ok.Load,
	})
	spoolPanics(c, 2)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if err := c.Flush(ctx); err == nil {
		t.Fatal("Flush succeeded while ShouldUpload said no")
	}
	srv.mu.Lock()
	n := len(srv.times)
	srv.mu.Unlock()
	if n != 0 {
		t.Fatalf("%d requests while ShouldUpload said no", n)
	}
	ok.Store(true)
	ctx, cancel = context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if strings.Join(srv.accepted, ",") != "p0,p1" {
		t.Errorf("accepted %v", srv.accepted)
	}
}

// TestUploaderDeliversLeftovers: reports spooled by an earlier run without
// an endpoint are delivered when a client with one starts.
func TestUploaderDeliversLeftovers(t *testing.T) {
	dir := t.TempDir()
	offline := newClient(t, backtrail.Options{SpoolDir: dir, RecoverPanics: true, DisableCrashOutput: true})
	spoolPanics(offline, 2)
	offline.Close()
	srv := newFlakyServer(t)
	c := newClient(t, backtrail.Options{Endpoint: srv.srv.URL, Key: "project-key", SpoolDir: dir})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if strings.Join(srv.accepted, ",") != "p0,p1" {
		t.Errorf("accepted %v", srv.accepted)
	}
}
