package api

import (
	"net/http"
	"strconv"

	"github.com/go-chi/chi/v5"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/wire"
)

// pageService is the backend's page reads; one that has none answers as
// for an endpoint that does not exist.
func (s *Server) pageService(w http.ResponseWriter, r *http.Request) proxy.PageService {
	ps, ok := s.sessions.(proxy.PageService)
	if !ok {
		s.writeError(w, r, &proxy.Error{Code: proxy.ENOENDPOINT, Message: "this server does not read pages: " + r.URL.Path}, http.StatusNotFound)
		return nil
	}
	return ps
}

// pageIndex is the {page} of the path: a tab index, 0 or more.
func pageIndex(r *http.Request) (int, error) {
	raw := chi.URLParam(r, "page")
	n, err := strconv.Atoi(raw)
	if err != nil || n < 0 || n > 1<<20 {
		return 0, proxy.Errorf(proxy.EINVALID, "page %q is not a page index (0, 1, … as browser_tabs numbers them)", raw)
	}
	return n, nil
}

func (s *Server) handlePages(w http.ResponseWriter, r *http.Request) {
	ps := s.pageService(w, r)
	if ps == nil {
		return
	}
	pages, err := ps.Pages(r.Context(), chi.URLParam(r, "id"))
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	s.writeJSON(w, http.StatusOK, wire.PagesBody{Pages: pages})
}

// pageOf is the page service and the {page} of a request, or false when
// the request was answered with an error.
func (s *Server) pageOf(w http.ResponseWriter, r *http.Request) (proxy.PageService, int, bool) {
	ps := s.pageService(w, r)
	if ps == nil {
		return nil, 0, false
	}
	n, err := pageIndex(r)
	if err != nil {
		s.writeErr(w, r, err)
		return nil, 0, false
	}
	return ps, n, true
}

func (s *Server) handleElement(w http.ResponseWriter, r *http.Request) {
	ps, n, ok := s.pageOf(w, r)
	if !ok {
		return
	}
	el, err := ps.Element(r.Context(), chi.URLParam(r, "id"), n, chi.URLParam(r, "ref"))
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	s.writeJSON(w, http.StatusOK, el)
}

func (s *Server) handleNetworkLog(w http.ResponseWriter, r *http.Request) {
	ps, n, ok := s.pageOf(w, r)
	if !ok {
		return
	}
	entries, err := ps.NetworkLog(r.Context(), chi.URLParam(r, "id"), n)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	s.writeJSON(w, http.StatusOK, wire.NetworkLogBody{Entries: entries})
}
