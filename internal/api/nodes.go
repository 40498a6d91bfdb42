package api

import (
	"fmt"
	"net/http"

	"github.com/go-chi/chi/v5"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/wire"
)

func (s *Server) handleListNodes(w http.ResponseWriter, r *http.Request) {
	list := []proxy.Node{}
	if s.nodes != nil {
		ns, err := s.nodes.ListNodes(r.Context())
		if err != nil {
			s.writeErr(w, r, err)
			return
		}
		list = append(list, ns...)
	}
	s.writeJSON(w, http.StatusOK, wire.NodesBody{Nodes: list})
}

func (s *Server) handleGetNode(w http.ResponseWriter, r *http.Request) {
	nodes, ok := s.nodeService(w, r)
	if !ok {
		return
	}
	n, err := nodes.GetNode(r.Context(), chi.URLParam(r, "id"))
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	s.writeJSON(w, http.StatusOK, n)
}

func (s *Server) handleDrainNode(w http.ResponseWriter, r *http.Request) {
	nodes, ok := s.nodeService(w, r)
	if !ok {
		return
	}
	if err := decodeBody(r, &struct{}{}, true); err != nil {
		s.writeErr(w, r, err)
		return
	}
	n, moved, err := nodes.DrainNode(r.Context(), chi.URLParam(r, "id"))
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	s.writeJSON(w, http.StatusOK, wire.DrainBody{Node: n, Moved: moved})
}

func (s *Server) handleUndrainNode(w http.ResponseWriter, r *http.Request) {
	nodes, ok := s.nodeService(w, r)
	if !ok {
		return
	}
	if err := decodeBody(r, &struct{}{}, true); err != nil {
		s.writeErr(w, r, err)
		return
	}
	n, err := nodes.UndrainNode(r.Context(), chi.URLParam(r, "id"))
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	s.writeJSON(w, http.StatusOK, n)
}

// nodeService is the node service, or false once it has answered that
// this server has no browser nodes, so none of that id.
func (s *Server) nodeService(w http.ResponseWriter, r *http.Request) (proxy.NodeService, bool) {
	if s.nodes == nil {
		id := chi.URLParam(r, "id")
		s.writeErr(w, r, &proxy.Error{Code: proxy.ENODEMISSING, Message: fmt.Sprintf("no browser node %q: this server runs its own browser (PROXY_BROWSER_ENDPOINTS is not set)", id), Details: map[string]any{"node": id}})
		return nil, false
	}
	return s.nodes, true
}
