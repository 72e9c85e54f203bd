package sentry_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	sentrygo "github.com/getsentry/sentry-go"

	"github.com/backtrail/backtrail/server/ingest/sentry"
)

func TestRateLimitHeaders(t *testing.T) {
	tests := []struct {
		retry      time.Duration
		categories []string
		retryAfter string
		limits     string
	}{
		{60 * time.Second, []string{"error"}, "60", "60:error:key"},
		{1500 * time.Millisecond, []string{"error", "transaction"}, "2", "2:error;transaction:key"},
		{time.Second, nil, "1", "1::key"},
		{time.Second + 1, nil, "2", "2::key"},
		{0, []string{"error"}, "1", "1:error:key"},
		{-time.Hour, nil, "1", "1::key"},
		{1<<63 - 1, nil, "9223372037", "9223372037::key"},
		{time.Minute, []string{"", "bad:cat", "a;b", "x y", "session"}, "60", "60:session:key"},
	}
	for _, tt := range tests {
		h := sentry.RateLimitHeaders(tt.retry, tt.categories...)
		if got := h.Get("Retry-After"); got != tt.retryAfter {
			t.Errorf("RateLimitHeaders(%v, %q): Retry-After %q, want %q", tt.retry, tt.categories, got, tt.retryAfter)
		}
		if got := h.Get("X-Sentry-Rate-Limits"); got != tt.limits {
			t.Errorf("RateLimitHeaders(%v, %q): X-Sentry-Rate-Limits %q, want %q", tt.retry, tt.categories, got, tt.limits)
		}
	}
}

// TestRateLimitSentryGo checks that the real sentry-go client obeys the
// headers: after a 429 for category "error" it sends no more errors, and
// after a 429 for "transaction" only it still sends them.
func TestRateLimitSentryGo(t *testing.T) {
	for _, tt := range []struct {
		category string
		want     int32 // requests for two captured errors
	}{
		{"error", 1},
		{"transaction", 2},
	} {
		t.Run(tt.category, func(t *testing.T) {
			var n atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				n.Add(1)
				for k, v := range sentry.RateLimitHeaders(time.Minute, tt.category) {
					w.Header()[k] = v
				}
				w.WriteHeader(http.StatusTooManyRequests)
			}))
			defer srv.Close()
			client, err := sentrygo.NewClient(sentrygo.ClientOptions{
				Dsn:       "http://0123456789abcdef0123456789abcdef@" + srv.Listener.Addr().String() + "/1",
				Transport: sentrygo.NewHTTPSyncTransport(),
			})
			if err != nil {
				t.Fatal(err)
			}
			hub := sentrygo.NewHub(client, sentrygo.NewScope())
			hub.CaptureException(errors.New("first"))
			hub.CaptureException(errors.New("second"))
			hub.Flush(5 * time.Second)
			if got := n.Load(); got != tt.want {
				t.Errorf("sentry-go sent %d requests after a 429 for %q, want %d", got, tt.category, tt.want)
			}
		})
	}
}
