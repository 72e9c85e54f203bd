package sentry_test

import (
	"errors"
	"net/http/httptest"
	"testing"

	"github.com/backtrail/backtrail/server/ingest/sentry"
)

func TestAuth(t *testing.T) {
	const k = "0123456789abcdef0123456789abcdef"
	tests := []struct {
		name          string
		xSentryAuth   string
		authorization string
		query         string
		key           string
		ok            bool
	}{
		{"X-Sentry-Auth, sentry-go", "Sentry sentry_version=7, sentry_client=sentry.go/0.50.0, sentry_key=" + k, "", "", k, true},
		{"X-Sentry-Auth, no spaces", "Sentry sentry_version=7,sentry_key=" + k + ",sentry_timestamp=1", "", "", k, true},
		{"X-Sentry-Auth, key first", "Sentry sentry_key=" + k + ", sentry_version=7", "", "", k, true},
		{"X-Sentry-Auth, quoted, lower-case scheme", `sentry sentry_key="` + k + `"`, "", "", k, true},
		{"X-Sentry-Auth without scheme", "sentry_key=" + k + ", sentry_version=7", "", "", k, true},
		{"X-Sentry-Auth with secret", "Sentry sentry_key=" + k + ", sentry_secret=s3cret", "", "", k, true},
		{"X-Sentry-Auth without key", "Sentry sentry_version=7", "", "", "", false},
		{"X-Sentry-Auth with empty key", "Sentry sentry_key=, sentry_version=7", "", "", "", false},
		{"X-Sentry-Auth with a bad key, query good", "Sentry sentry_key=a b", "", "sentry_key=" + k, k, true},
		{"Authorization Sentry", "", "Sentry sentry_key=" + k + ", sentry_version=7", "", k, true},
		{"Authorization Bearer", "", "Bearer " + k, "", "", false},
		{"Authorization without scheme", "", "sentry_key=" + k, "", "", false},
		{"query", "", "", "sentry_version=7&sentry_key=" + k + "&sentry_client=sentry.javascript.node%2F11.12.0", k, true},
		{"X-Sentry-Auth wins", "Sentry sentry_key=first", "Sentry sentry_key=second", "sentry_key=third", "first", true},
		{"Authorization before query", "", "Sentry sentry_key=second", "sentry_key=third", "second", true},
		{"nothing", "", "", "", "", false},
		{"key too long", "Sentry sentry_key=" + string(make([]byte, 300)), "", "", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest("POST", "/api/1/envelope/?"+tt.query, nil)
			if tt.xSentryAuth != "" {
				r.Header.Set("X-Sentry-Auth", tt.xSentryAuth)
			}
			if tt.authorization != "" {
				r.Header.Set("Authorization", tt.authorization)
			}
			key, ok := sentry.Auth(r)
			if key != tt.key || ok != tt.ok {
				t.Errorf("Auth(X-Sentry-Auth %q, Authorization %q, ?%s) = %q, %v; want %q, %v",
					tt.xSentryAuth, tt.authorization, tt.query, key, ok, tt.key, tt.ok)
			}
		})
	}
}

func TestKeyFromDSN(t *testing.T) {
	tests := []struct {
		dsn, key, project string
	}{
		{"https://e12d836b15bb49d7bbf99e64295d995b@o1.ingest.sentry.io/42", "e12d836b15bb49d7bbf99e64295d995b", "42"},
		{"https://e12d836b15bb49d7bbf99e64295d995b:@sentry.io/42", "e12d836b15bb49d7bbf99e64295d995b", "42"},
		{"http://public:secret@localhost:9000/sentry/prefix/7/", "public", "7"},
		{" https://k@h/1 ", "k", "1"},
		{"https://k@h/shop-backend", "k", "shop-backend"},
	}
	for _, tt := range tests {
		key, project, err := sentry.KeyFromDSN(tt.dsn)
		if key != tt.key || project != tt.project || err != nil {
			t.Errorf("KeyFromDSN(%q) = %q, %q, %v; want %q, %q", tt.dsn, key, project, err, tt.key, tt.project)
		}
	}
	for _, bad := range []string{
		"", "not a dsn", "https://sentry.io/42", "https://k@sentry.io", "https://k@sentry.io/", "ftp://k@h/1",
		"https://@h/1", "https://k@/1", "https://k y@h/1", "https://k@h/1%zz",
	} {
		key, project, err := sentry.KeyFromDSN(bad)
		if !errors.Is(err, sentry.ErrInvalid) || key != "" || project != "" {
			t.Errorf("KeyFromDSN(%q) = %q, %q, %v; want ErrInvalid", bad, key, project, err)
		}
	}
}
