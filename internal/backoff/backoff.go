// Package backoff computes retry delays: exponential growth with a cap and
// optional jitter, and the HTTP Retry-After header (RFC 9110 section 10.2.3)
// in both of its forms, delay-seconds and HTTP-date.
//
// It holds no state and starts no goroutines; callers keep the attempt count
// and inject the clock, so the same code serves the SDK uploader, the
// watchdog's suppression windows and, later, the server's own clients.
package backoff

import (
	"math"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Policy describes an exponential backoff. The zero value is usable: it means
// Base 1s, Max 5m, Factor 2 and no jitter. A Policy is a value; it is safe for
// concurrent use as long as Rand is.
type Policy struct {
	Base   time.Duration // delay before the first retry; default 1s
	Max    time.Duration // upper bound of any delay; default 5m
	Factor float64       // growth per attempt; default 2

	// Jitter is the fraction of each delay that is randomised, in [0, 1]:
	// with 0.5 the delay is drawn uniformly from [d/2, d]. Jitter spreads out
	// clients that failed together so they do not retry together. 0 means none.
	Jitter float64

	// Rand returns a number in [0, 1). Nil means math/rand/v2's Float64;
	// tests set it to make delays exact.
	Rand func() float64
}

func (p Policy) base() time.Duration {
	if p.Base <= 0 {
		return time.Second
	}
	return p.Base
}

func (p Policy) max() time.Duration {
	if p.Max <= 0 {
		return 5 * time.Minute
	}
	return p.Max
}

// Delay returns the wait before retry number attempt, counted from 0:
// Base·Factor^attempt, capped at Max, then shortened by up to Jitter of itself.
// Negative attempts count as 0. Delay never returns more than Max or less
// than zero, and does not overflow for large attempts.
func (p Policy) Delay(attempt int) time.Duration {
	if attempt < 0 {
		attempt = 0
	}
	f := p.Factor
	if f < 1 {
		f = 2
	}
	maxD := p.max()
	d := float64(p.base()) * math.Pow(f, float64(attempt))
	if math.IsInf(d, 0) || math.IsNaN(d) || d > float64(maxD) {
		d = float64(maxD)
	}
	if j := p.Jitter; j > 0 {
		if j > 1 {
			j = 1
		}
		r := p.Rand
		if r == nil {
			r = rand.Float64
		}
		d -= d * j * r()
	}
	if d < 0 {
		d = 0
	}
	return time.Duration(d)
}

// ParseRetryAfter interprets a Retry-After header value at time now. It
// accepts delay-seconds ("120") and an HTTP-date in any of the three formats
// http.ParseTime knows. A date in the past yields 0. ok is false when the
// value is empty or malformed, so the caller falls back to its own Policy.
func ParseRetryAfter(value string, now time.Time) (d time.Duration, ok bool) {
	value = strings.TrimSpace(value)
	if value == "" {
		return 0, false
	}
	if secs, err := strconv.ParseUint(value, 10, 63); err == nil {
		// Clamp absurd values rather than overflowing time.Duration.
		const maxSecs = uint64(math.MaxInt64 / int64(time.Second))
		if secs > maxSecs {
			secs = maxSecs
		}
		return time.Duration(secs) * time.Second, true
	}
	t, err := http.ParseTime(value)
	if err != nil {
		return 0, false
	}
	if d = t.Sub(now); d < 0 {
		d = 0
	}
	return d, true
}
