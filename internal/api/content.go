package api

import (
	"encoding/base64"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/go-chi/chi/v5"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/wire"
)

func (s *Server) handleContent(w http.ResponseWriter, r *http.Request) {
	ref := chi.URLParam(r, "ref")
	q := r.URL.Query()
	reset, err := parseBool(q.Get("reset_cursor"), "reset_cursor")
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	peek, err := parseBool(q.Get("peek"), "peek")
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	search, err := parseSearch(q)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	if img := q.Get("image"); img != "" {
		s.serveImage(w, r, ref, img)
		return
	}
	var c *proxy.Content
	if peek {
		// A peek is a look from elsewhere (an MCP resource read): the whole
		// content, and the diff cursor is neither read nor moved.
		if reset || search.Text != "" {
			s.writeErr(w, r, proxy.Errorf(proxy.EINVALID, "peek=true returns the whole content and leaves the diff cursor alone; it takes neither search_for nor reset_cursor"))
			return
		}
		c, err = s.content.Peek(r.Context(), ref)
	} else {
		c, err = s.content.Content(r.Context(), ref, search, reset)
	}
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	if wantsJSON(r) {
		body := wire.ContentBody{RefID: ref, Text: c.Text, Unchanged: c.Unchanged, Snapshot: c.Snapshot, NoMatch: c.NoMatch}
		for _, im := range c.Images {
			body.Images = append(body.Images, wire.ImageBody{MimeType: im.MimeType, Data: base64.StdEncoding.EncodeToString(im.Data)})
		}
		s.writeJSON(w, http.StatusOK, body)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Image-Count", strconv.Itoa(len(c.Images)))
	if c.Unchanged {
		w.Header().Set("X-Content-Unchanged", "true")
	}
	if c.NoMatch {
		w.Header().Set("X-Search-No-Match", "true")
	}
	_, _ = io.WriteString(w, c.Text)
}

// serveImage answers ?image=N with the raw bytes of the ref's Nth image.
// It does not move the diff cursor: images are not diffed.
func (s *Server) serveImage(w http.ResponseWriter, r *http.Request, ref, index string) {
	n, err := strconv.Atoi(index)
	if err != nil || n < 0 {
		s.writeErr(w, r, proxy.Errorf(proxy.EINVALID, "image must be a non-negative integer, got %q", index))
		return
	}
	images, err := s.content.Images(r.Context(), ref)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	if n >= len(images) {
		s.writeErr(w, r, proxy.Errorf(proxy.EREFMISSING, "ref %s has %d images, no image %d", ref, len(images), n))
		return
	}
	w.Header().Set("Content-Type", images[n].MimeType)
	_, _ = w.Write(images[n].Data)
}

func (s *Server) handleConsole(w http.ResponseWriter, r *http.Request) {
	text, err := s.content.Console(r.Context(), chi.URLParam(r, "ref"), r.URL.Query().Get("level"))
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	if wantsJSON(r) {
		s.writeJSON(w, http.StatusOK, wire.ConsoleBody{RefID: chi.URLParam(r, "ref"), Text: text})
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = io.WriteString(w, text)
}

func wantsJSON(r *http.Request) bool {
	return strings.Contains(r.Header.Get("Accept"), "application/json") || r.URL.Query().Get("format") == "json"
}

// parseSearch reads search_for and its options regex, case_sensitive and
// outline.
func parseSearch(q url.Values) (proxy.Query, error) {
	out := proxy.Query{Text: q.Get("search_for")}
	var err error
	if out.Regex, err = parseBool(q.Get("regex"), "regex"); err != nil {
		return out, err
	}
	if out.CaseSensitive, err = parseBool(q.Get("case_sensitive"), "case_sensitive"); err != nil {
		return out, err
	}
	if out.Outline, err = parseBool(q.Get("outline"), "outline"); err != nil {
		return out, err
	}
	return out, nil
}
