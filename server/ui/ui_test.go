package ui_test

import (
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/backtrail/backtrail/server/ui"
)

const wantCSP = "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'"

func get(t *testing.T, h http.Handler, path string) (*http.Response, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
	resp := rec.Result()
	body, _ := io.ReadAll(resp.Body)
	return resp, string(body)
}

func TestIndex(t *testing.T) {
	h := ui.Handler()
	resp, body := get(t, h, "/")
	if resp.StatusCode != 200 {
		t.Fatalf("GET /: status %d", resp.StatusCode)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
		t.Errorf("GET /: Content-Type %q, want text/html", ct)
	}
	for _, want := range []string{`<div id="app">`, `<script type="module" src="/js/app.js">`, `<link rel="stylesheet" href="/css/app.css">`} {
		if !strings.Contains(body, want) {
			t.Errorf("GET /: body lacks %s", want)
		}
	}
}

// TestFallback checks that the app's own routes, loaded directly, get
// index.html.
func TestFallback(t *testing.T) {
	h := ui.Handler()
	_, index := get(t, h, "/")
	for _, path := range []string{"/issues", "/issues/12", "/issues/12/flame?event=abc", "/missing-symbols", "/debug-files", "/sign-in", "/no/such/page", "/js/", "/css"} {
		resp, body := get(t, h, path)
		if resp.StatusCode != 200 || body != index {
			t.Errorf("GET %s: status %d, index.html %v; want 200 and index.html", path, resp.StatusCode, body == index)
		}
		if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
			t.Errorf("GET %s: Content-Type %q, want text/html", path, ct)
		}
	}
}

func TestContentTypes(t *testing.T) {
	h := ui.Handler()
	for _, tt := range []struct{ path, want string }{
		{"/js/app.js", "text/javascript"},
		{"/js/theme.js", "text/javascript"},
		{"/js/pages/issue.js", "text/javascript"},
		{"/css/app.css", "text/css"},
		{"/favicon.svg", "image/svg+xml"},
	} {
		resp, body := get(t, h, tt.path)
		ct := resp.Header.Get("Content-Type")
		if resp.StatusCode != 200 || !strings.HasPrefix(ct, tt.want) {
			t.Errorf("GET %s: status %d, Content-Type %q; want 200, %s", tt.path, resp.StatusCode, ct, tt.want)
		}
		if strings.HasPrefix(body, "<!doctype html>") {
			t.Errorf("GET %s: got index.html, want the asset", tt.path)
		}
	}
}

func TestSecurityHeaders(t *testing.T) {
	h := ui.Handler()
	for _, path := range []string{"/", "/issues/1", "/js/app.js", "/css/app.css"} {
		resp, _ := get(t, h, path)
		if got := resp.Header.Get("Content-Security-Policy"); got != wantCSP {
			t.Errorf("GET %s: Content-Security-Policy %q, want %q", path, got, wantCSP)
		}
		if got := resp.Header.Get("X-Content-Type-Options"); got != "nosniff" {
			t.Errorf("GET %s: X-Content-Type-Options %q, want nosniff", path, got)
		}
	}
}

var importRE = regexp.MustCompile(`(?m)^\s*(?:import|export)\s[^'"]*?from\s+'([^']+)'`)

// TestImports checks that every module a page imports is served as
// JavaScript, not as the index.html fallback.
func TestImports(t *testing.T) {
	h := ui.Handler()
	files := staticFiles(t, ".js")
	for _, name := range files {
		src, err := os.ReadFile(filepath.Join("static", name))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range importRE.FindAllStringSubmatch(string(src), -1) {
			target := "/" + filepath.ToSlash(filepath.Join(filepath.Dir(name), m[1]))
			resp, _ := get(t, h, target)
			if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/javascript") {
				t.Errorf("%s imports %s: served as %q", name, m[1], ct)
			}
		}
	}
}

// TestNoHTMLSinks guards the rule that event data is only ever set as text:
// the scripts use no API that parses HTML or evaluates strings, and load
// nothing from other origins.
func TestNoHTMLSinks(t *testing.T) {
	sinks := regexp.MustCompile(`\.innerHTML|\.outerHTML|insertAdjacentHTML|document\.write|\beval\(|new Function\(|setTimeout\('|createContextualFragment|DOMParser`)
	external := regexp.MustCompile(`https?://[^\s'"]+`)
	for _, name := range staticFiles(t, "") {
		if strings.HasSuffix(name, ".md") {
			continue
		}
		src, err := os.ReadFile(filepath.Join("static", name))
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(name, ".js") {
			for _, m := range sinks.FindAllString(string(src), -1) {
				t.Errorf("%s uses %s", name, m)
			}
		}
		for _, m := range external.FindAllString(string(src), -1) {
			if m != "http://www.w3.org/2000/svg" {
				t.Errorf("%s refers to %s: the UI must work offline", name, m)
			}
		}
	}
}

func staticFiles(t *testing.T, ext string) []string {
	t.Helper()
	var out []string
	err := fs.WalkDir(os.DirFS("static"), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ext) {
			out = append(out, p)
		}
		return nil
	})
	if err != nil || len(out) == 0 {
		t.Fatalf("static files: %v (found %d)", err, len(out))
	}
	return out
}
