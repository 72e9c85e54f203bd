package backoff_test

import (
	"testing"
	"time"

	"github.com/backtrail/backtrail/internal/backoff"
)

func TestDelay(t *testing.T) {
	half := func() float64 { return 0.5 }
	tests := []struct {
		name    string
		p       backoff.Policy
		attempt int
		want    time.Duration
	}{
		{"zero policy first", backoff.Policy{}, 0, time.Second},
		{"zero policy second", backoff.Policy{}, 1, 2 * time.Second},
		{"negative attempt", backoff.Policy{}, -3, time.Second},
		{"below cap", backoff.Policy{Base: 100 * time.Millisecond, Max: time.Second}, 3, 800 * time.Millisecond},
		{"at cap", backoff.Policy{Base: 100 * time.Millisecond, Max: 800 * time.Millisecond}, 3, 800 * time.Millisecond},
		{"above cap", backoff.Policy{Base: 100 * time.Millisecond, Max: time.Second}, 4, time.Second},
		{"huge attempt", backoff.Policy{}, 1 << 20, 5 * time.Minute},
		{"factor 3", backoff.Policy{Base: time.Second, Factor: 3, Max: time.Hour}, 2, 9 * time.Second},
		{"jitter half", backoff.Policy{Base: time.Second, Jitter: 0.5, Rand: half}, 0, 750 * time.Millisecond},
		{"jitter clamp", backoff.Policy{Base: time.Second, Jitter: 7, Rand: half}, 0, 500 * time.Millisecond},
	}
	for _, tt := range tests {
		if got := tt.p.Delay(tt.attempt); got != tt.want {
			t.Errorf("%s: %+v.Delay(%d) = %v, want %v", tt.name, tt.p, tt.attempt, got, tt.want)
		}
	}
}

func TestDelayJitterBounds(t *testing.T) {
	p := backoff.Policy{Base: time.Second, Max: time.Minute, Jitter: 1}
	for i := range 1000 {
		d := p.Delay(i % 10)
		if d < 0 || d > time.Minute {
			t.Fatalf("Delay(%d) = %v, outside [0, 1m]", i%10, d)
		}
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		in     string
		want   time.Duration
		wantOK bool
	}{
		{"", 0, false},
		{"   ", 0, false},
		{"0", 0, true},
		{"1", time.Second, true},
		{" 120 ", 2 * time.Minute, true},
		{"-1", 0, false},
		{"1.5", 0, false},
		{"soon", 0, false},
		{"99999999999999999999", 0, false},             // overflows uint63
		{"9223372036", 9223372036 * time.Second, true}, // max representable seconds
		{"9223372037", 9223372036 * time.Second, true}, // clamped
		{"Sat, 01 Mar 2025 12:00:30 GMT", 30 * time.Second, true},
		{"Saturday, 01-Mar-25 12:01:00 GMT", time.Minute, true}, // RFC 850
		{"Sat Mar  1 12:00:05 2025", 5 * time.Second, true},     // ANSI C
		{"Sat, 01 Mar 2025 11:00:00 GMT", 0, true},              // past
	}
	for _, tt := range tests {
		got, ok := backoff.ParseRetryAfter(tt.in, now)
		if got != tt.want || ok != tt.wantOK {
			t.Errorf("ParseRetryAfter(%q) = %v, %v; want %v, %v", tt.in, got, ok, tt.want, tt.wantOK)
		}
	}
}
