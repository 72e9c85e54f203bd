package sentry_test

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/backtrail/backtrail/report"
	"github.com/backtrail/backtrail/server/ingest/sentry"
)

// captured is one request as a client sent it, body still encoded.
type captured struct {
	Method string
	URL    string
	Header http.Header
	Body   []byte
}

// request rebuilds the request for the functions under test.
func (c captured) request() *http.Request {
	r := httptest.NewRequest(c.Method, c.URL, bytes.NewReader(c.Body))
	r.Header = c.Header.Clone()
	return r
}

// captureServer is a Sentry stand-in on 127.0.0.1 that records every request
// and answers 200 with an empty JSON object, as Relay answers envelopes.
type captureServer struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []captured
}

func newCaptureServer(t *testing.T) *captureServer {
	t.Helper()
	s := new(captureServer)
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		s.mu.Lock()
		s.reqs = append(s.reqs, captured{Method: r.Method, URL: r.URL.String(), Header: r.Header.Clone(), Body: body})
		s.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, "{}")
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *captureServer) requests() []captured {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]captured(nil), s.reqs...)
}

// dsn returns a DSN for this server with the given public key and project.
func (s *captureServer) dsn(key, project string) string {
	return "http://" + key + "@" + s.Listener.Addr().String() + "/" + project
}

// decoded is one captured envelope after Auth, Body and ParseEnvelope.
type decoded struct {
	key string
	env *sentry.Envelope
	req captured
}

// decodeAll runs every captured request through the protocol layer, as the
// HTTP handler will, failing the test on any error.
func decodeAll(t *testing.T, reqs []captured, wantKey string) []decoded {
	t.Helper()
	var out []decoded
	for i, c := range reqs {
		if !strings.Contains(c.URL, "/envelope/") {
			t.Errorf("request %d: %s %s is not to the envelope endpoint", i, c.Method, c.URL)
			continue
		}
		r := c.request()
		key, ok := sentry.Auth(r)
		if !ok || key != wantKey {
			t.Errorf("request %d: Auth = %q, %v; want %q (headers %v, URL %s)", i, key, ok, wantKey, c.Header, c.URL)
		}
		body, err := sentry.Body(r, sentry.Limits{})
		if err != nil {
			t.Fatalf("request %d: Body (Content-Encoding %q): %v", i, c.Header.Get("Content-Encoding"), err)
		}
		env, err := sentry.ParseEnvelope(body, sentry.Limits{})
		if err != nil {
			t.Fatalf("request %d: ParseEnvelope: %v\n%s", i, err, body)
		}
		out = append(out, decoded{key: key, env: env, req: c})
	}
	return out
}

// byEventID returns the reports of all envelopes with an event, by event id.
// Envelopes without one (sessions, client reports) must give ErrNoEvent.
func byEventID(t *testing.T, envs []decoded) map[string]*report.Report {
	t.Helper()
	m := make(map[string]*report.Report)
	for i, d := range envs {
		r, err := d.env.Event()
		if errors.Is(err, sentry.ErrNoEvent) {
			continue
		}
		if err != nil {
			t.Fatalf("envelope %d: Event: %v", i, err)
		}
		checkReport(t, r)
		m[r.EventID] = r
	}
	return m
}

// checkReport checks that r survives report.Encode and report.Decode
// unchanged and that it breaks no rule of report.Validate except the ones
// this package knowingly breaks: Sentry platforms other than go and native,
// and module types pe and wasm, which report format 1.0 does not list yet.
func checkReport(t testing.TB, r *report.Report) {
	t.Helper()
	var buf bytes.Buffer
	if err := report.Encode(&buf, r); err != nil {
		t.Fatalf("report.Encode: %v", err)
	}
	back, err := report.Decode(&buf, 64<<20)
	if err != nil {
		t.Fatalf("report.Decode: %v", err)
	}
	var again bytes.Buffer
	if err := report.Encode(&again, back); err != nil {
		t.Fatalf("report.Encode after Decode: %v", err)
	}
	buf.Reset()
	report.Encode(&buf, r)
	if !bytes.Equal(buf.Bytes(), again.Bytes()) {
		t.Fatalf("report changed through Encode and Decode:\nbefore %s\nafter  %s", buf.Bytes(), again.Bytes())
	}
	if err := validateKnown(r); err != nil {
		t.Fatalf("Validate: %v\nreport: %s", err, buf.Bytes())
	}
}

// validateKnown is r.Validate with Sentry platforms and the module types pe
// and wasm accepted.
func validateKnown(r *report.Report) error {
	c := *r
	if c.Platform != report.PlatformGo && c.Platform != report.PlatformNative {
		c.Platform = report.PlatformNative
	}
	c.Modules = append([]report.Module(nil), r.Modules...)
	for i := range c.Modules {
		if c.Modules[i].Type == "pe" || c.Modules[i].Type == "wasm" {
			c.Modules[i].Type = "elf"
		}
	}
	return c.Validate()
}

// firstInApp returns the first in-app frame of frames, innermost first.
func firstInApp(frames []report.Frame) (report.Frame, bool) {
	for _, f := range frames {
		if f.InApp {
			return f, true
		}
	}
	return report.Frame{}, false
}

// crashed returns the thread marked crashed.
func crashed(t testing.TB, r *report.Report) *report.Thread {
	t.Helper()
	var found *report.Thread
	for i := range r.Threads {
		if r.Threads[i].Crashed {
			if found != nil {
				t.Fatalf("threads %d and %d are both crashed", found.ID, r.Threads[i].ID)
			}
			found = &r.Threads[i]
		}
	}
	if found == nil {
		t.Fatalf("no crashed thread among %d", len(r.Threads))
	}
	return found
}
