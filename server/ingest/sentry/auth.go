package sentry

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// maxKey bounds the length of a public key. Sentry's are 32 hex digits.
const maxKey = 256

// Auth returns the public key ("sentry_key") a request authenticates with,
// looking where Sentry SDKs put it: the X-Sentry-Auth header
// ("Sentry sentry_key=…, sentry_version=7, sentry_client=…"; the "Sentry "
// prefix is optional there), the Authorization header with the same
// "Sentry " scheme, or the sentry_key query parameter that browser SDKs use.
// The first place that holds a well-formed key wins. ok is false if none
// does: a key must be 1 to 256 printable ASCII characters without spaces,
// commas or quotes.
//
// Auth does not check the key against anything; the caller looks it up.
// A secret key (sentry_secret, from legacy DSNs) is ignored.
func Auth(r *http.Request) (key string, ok bool) {
	if h := r.Header.Get("X-Sentry-Auth"); h != "" {
		if k, ok := authParam(h, true); ok {
			return k, true
		}
	}
	if h := r.Header.Get("Authorization"); h != "" {
		if k, ok := authParam(h, false); ok {
			return k, true
		}
	}
	if r.URL != nil {
		if k := r.URL.Query().Get("sentry_key"); validKey(k) {
			return k, true
		}
	}
	return "", false
}

// authParam returns the sentry_key parameter of a "Sentry k=v, k=v" header
// value. The scheme is matched without regard to case.
func authParam(h string, prefixOptional bool) (string, bool) {
	h = strings.TrimSpace(h)
	if len(h) > len("Sentry ") && strings.EqualFold(h[:len("Sentry ")], "Sentry ") {
		h = h[len("Sentry "):]
	} else if !prefixOptional {
		return "", false
	}
	for part := range strings.SplitSeq(h, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok || !strings.EqualFold(strings.TrimSpace(k), "sentry_key") {
			continue
		}
		v = strings.TrimSpace(v)
		if len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' {
			v = v[1 : len(v)-1]
		}
		if validKey(v) {
			return v, true
		}
	}
	return "", false
}

func validKey(k string) bool {
	if k == "" || len(k) > maxKey {
		return false
	}
	for i := 0; i < len(k); i++ {
		if c := k[i]; c <= ' ' || c >= 0x7f || c == ',' || c == '"' {
			return false
		}
	}
	return true
}

// KeyFromDSN returns the public key and project id of a DSN,
// "{scheme}://{public_key}[:{secret_key}]@{host}[:{port}]/[{path}/]{project_id}",
// as browser SDKs send it in the "dsn" header of envelopes posted to a
// tunnel. The project id is the last path segment; Sentry's are numbers, but
// KeyFromDSN accepts any non-empty segment and leaves checking it to the
// caller. Errors wrap ErrInvalid and name the DSN's bad part.
func KeyFromDSN(dsn string) (key, projectID string, err error) {
	bad := func(format string, args ...any) (string, string, error) {
		return "", "", fmt.Errorf("%w: DSN: %s", ErrInvalid, fmt.Sprintf(format, args...))
	}
	u, err := url.Parse(strings.TrimSpace(dsn))
	if err != nil {
		return bad("%v", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return bad("scheme %q is not http or https", u.Scheme)
	}
	if u.Host == "" {
		return bad("no host")
	}
	if u.User == nil || !validKey(u.User.Username()) {
		return bad("no public key before the host")
	}
	path := strings.TrimRight(u.Path, "/")
	i := strings.LastIndexByte(path, '/')
	if i < 0 || path[i+1:] == "" {
		return bad("no project id in path %q", u.Path)
	}
	return u.User.Username(), path[i+1:], nil
}
