package api

import (
	"fmt"
	"net/http"

	"github.com/go-chi/chi/v5"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/export"
)

// handleExport answers GET /sessions/{id}/export?format=playwright|json: the
// session's actions as a Playwright test, or its whole record, as a
// download.
func (s *Server) handleExport(w http.ResponseWriter, r *http.Request) {
	format := r.URL.Query().Get("format")
	if format == "" {
		format = export.FormatPlaywright
	}
	if format != export.FormatPlaywright && format != export.FormatJSON {
		s.writeErr(w, r, proxy.Errorf(proxy.EINVALID, "format %q: use playwright or json", format))
		return
	}
	id := chi.URLParam(r, "id")
	sess, err := s.sessions.GetSession(r.Context(), id)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	calls, err := s.content.Calls(r.Context(), id)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	var body []byte
	name, ctype := fmt.Sprintf("session-%s.spec.ts", safeName(id)), "text/plain; charset=utf-8"
	if format == export.FormatJSON {
		name, ctype = fmt.Sprintf("session-%s.json", safeName(id)), "application/json"
		snapshots, err := parseBool(r.URL.Query().Get("snapshots"), "snapshots")
		if err != nil {
			s.writeErr(w, r, err)
			return
		}
		if r.URL.Query().Get("snapshots") == "" {
			snapshots = true
		}
		events, err := s.content.Events(r.Context(), id)
		if err != nil {
			s.writeErr(w, r, err)
			return
		}
		if body, err = export.JSON(sess, calls, events, snapshots); err != nil {
			s.writeErr(w, r, err)
			return
		}
	} else {
		body = export.Playwright(sess, calls)
	}
	w.Header().Set("Content-Type", ctype)
	w.Header().Set("Content-Disposition", fmt.Sprintf("attachment; filename=%q", name))
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}

// safeName keeps the characters of a session id a file name may hold.
func safeName(id string) string {
	out := make([]byte, 0, len(id))
	for i := 0; i < len(id) && len(out) < 64; i++ {
		if c := id[i]; c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' {
			out = append(out, c)
		}
	}
	return string(out)
}
