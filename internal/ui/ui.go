// Package ui owns the session inspector served at /ui: static pages,
// embedded in the binary, that read the HTTP API from the browser. It holds
// no data and no secret; what it shows comes from the API under the API's
// own defences, and everything it shows is written into the page as text,
// never as markup.
package ui

import (
	"embed"
	"io/fs"
	"net/http"
	"strings"
)

//go:embed static
var static embed.FS

// contentSecurityPolicy allows the inspector's own files and images decoded
// from the API's base64 (data:) and nothing else: no inline script, no
// other origin, no framing.
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// Handler serves the inspector's files under prefix (e.g. "/ui/").
func Handler(prefix string) http.Handler {
	sub, err := fs.Sub(static, "static")
	if err != nil {
		panic(err) // the embedded tree is fixed at build time
	}
	files := http.StripPrefix(prefix, http.FileServer(http.FS(sub)))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		h := w.Header()
		h.Set("Content-Security-Policy", contentSecurityPolicy)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cache-Control", "no-cache")
		if !strings.HasPrefix(r.URL.Path, prefix) {
			http.Redirect(w, r, prefix, http.StatusFound)
			return
		}
		if isLivePath(strings.TrimPrefix(r.URL.Path, prefix)) {
			// One page for every session: its script reads the id from
			// the address, so the file holds no data.
			http.ServeFileFS(w, r, sub, "live.html")
			return
		}
		files.ServeHTTP(w, r)
	})
}

// isLivePath reports whether rest (the path under the prefix) is a
// session's live view, sessions/{id}/live.
func isLivePath(rest string) bool {
	id, ok := strings.CutPrefix(rest, "sessions/")
	if !ok {
		return false
	}
	id, ok = strings.CutSuffix(id, "/live")
	return ok && id != "" && !strings.Contains(id, "/")
}
