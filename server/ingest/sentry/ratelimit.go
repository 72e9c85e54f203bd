package sentry

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// RateLimitHeaders returns the headers of a 429 Too Many Requests answer
// that asks Sentry SDKs to wait retryAfter before sending data in the given
// categories ("error", "transaction", "session", "attachment", …; none
// means all). Sentry's "Rate Limiting" document specifies them:
//
//	Retry-After: 60
//	X-Sentry-Rate-Limits: 60:error;transaction:key
//
// Seconds are rounded up, and are at least 1. The quota's scope is "key":
// the limit applies to the project key the request used. Categories that
// are empty or contain a character the header reserves (":;, ") are left
// out; if that leaves none, the limit applies to all categories.
func RateLimitHeaders(retryAfter time.Duration, categories ...string) http.Header {
	secs := int64(retryAfter / time.Second)
	if retryAfter%time.Second > 0 {
		secs++
	}
	if secs < 1 {
		secs = 1
	}
	s := strconv.FormatInt(secs, 10)
	var cats []string
	for _, c := range categories {
		if c != "" && !strings.ContainsAny(c, ":;, \t\r\n") {
			cats = append(cats, c)
		}
	}
	h := make(http.Header, 2)
	h.Set("Retry-After", s)
	h.Set("X-Sentry-Rate-Limits", s+":"+strings.Join(cats, ";")+":key")
	return h
}
