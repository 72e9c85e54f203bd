// Package ui serves backtrail's web interface: static files embedded in
// the binary (see static/README.md for where they came from). The pages
// read the JSON API with the admin token the user signs in with.
package ui

import (
	"embed"
	"io/fs"
	"net/http"
)

//go:embed static
var static embed.FS

// Handler serves the interface. Unknown paths get index.html, so the
// single-page app's own routes (#/issues/12 and the like) load it.
func Handler() http.Handler {
	sub, _ := fs.Sub(static, "static")
	files := http.FileServer(http.FS(sub))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		// Unknown paths and directories (no listings) get index.html.
		if fi, err := fs.Stat(sub, trim(r.URL.Path)); err != nil || fi.IsDir() {
			r.URL.Path = "/"
		}
		files.ServeHTTP(w, r)
	})
}

func trim(p string) string {
	for len(p) > 0 && p[0] == '/' {
		p = p[1:]
	}
	if p == "" {
		return "index.html"
	}
	return p
}
