package api

import (
	"context"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/wire"
)

// WithHuman serves the control lease (POST and DELETE
// /sessions/{id}/control, the operator's) and an agent's wait for a person
// (POST /sessions/{id}/human, mcp-bridge's request_human).
func WithHuman(h proxy.HumanService) Option { return func(s *Server) { s.human = h } }

// LiveViewer serves one viewer's WebSocket of a session's live view
// (internal/liveview).
type LiveViewer interface {
	ServeLive(w http.ResponseWriter, r *http.Request, sessionID string)
	// HandingBack is told before a hand-back with lease, while the lease
	// still holds: the holder's viewer records what is pending (the
	// characters typed since its last action).
	HandingBack(ctx context.Context, sessionID, lease string)
}

// WithLiveView serves the live view's WebSocket at GET /sessions/{id}/live,
// the operator's alone: it shows the page and, with a lease, acts in it.
func WithLiveView(v LiveViewer) Option { return func(s *Server) { s.live = v } }

// routeHuman registers the person-in-the-loop routes. Only the wait is a
// client's: taking and handing back the browser is the operator's, from
// the live view.
func (s *Server) routeHuman(r chi.Router) {
	if s.human != nil {
		r.Post("/sessions/{id}/control", s.handleTakeControl)
		r.Delete("/sessions/{id}/control", s.handleHandBack)
		s.clientRoute(r, http.MethodPost, "/sessions/{id}/human", s.handleRequestHuman)
	}
	if s.live != nil {
		r.Get("/sessions/{id}/live", s.handleLive)
	}
}

// handleLive hands a WebSocket handshake to the live view; anything else
// is told what the endpoint is, in the documented error shape.
func (s *Server) handleLive(w http.ResponseWriter, r *http.Request) {
	if !isWebSocket(r) {
		w.Header().Set("Upgrade", "websocket")
		w.Header().Set("Connection", "Upgrade")
		s.writeError(w, r, proxy.Errorf(proxy.EINVALID, "%s is a WebSocket (GET with Upgrade: websocket), the live view's", r.URL.Path), http.StatusUpgradeRequired)
		return
	}
	s.live.ServeLive(w, r, chi.URLParam(r, "id"))
}

func (s *Server) handleTakeControl(w http.ResponseWriter, r *http.Request) {
	if err := decodeBody(r, &struct{}{}, true); err != nil {
		s.writeErr(w, r, err)
		return
	}
	l, err := s.human.TakeControl(r.Context(), chi.URLParam(r, "id"))
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	s.writeJSON(w, http.StatusOK, l)
}

func (s *Server) handleHandBack(w http.ResponseWriter, r *http.Request) {
	var body wire.HandBackBody
	if err := decodeBody(r, &body, false); err != nil {
		s.writeErr(w, r, err)
		return
	}
	if body.Lease == "" {
		e := proxy.Errorf(proxy.EINVALID, "lease is required: the one POST /sessions/{id}/control answered")
		e.Details = map[string]any{"field": "lease"}
		s.writeErr(w, r, e)
		return
	}
	id := chi.URLParam(r, "id")
	if s.live != nil {
		s.live.HandingBack(r.Context(), id, body.Lease)
	}
	if err := s.human.HandBack(r.Context(), id, body.Lease); err != nil {
		s.writeErr(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// handleRequestHuman blocks until a person hands back or the wait times
// out: the server sets no write timeout, and mcp-bridge's client none
// beyond its caller's context.
func (s *Server) handleRequestHuman(w http.ResponseWriter, r *http.Request) {
	var body wire.HumanBody
	if err := decodeBody(r, &body, false); err != nil {
		s.writeErr(w, r, err)
		return
	}
	timeout := time.Duration(body.TimeoutMS) * time.Millisecond
	if err := proxy.ValidHumanRequest(body.Reason, timeout); err != nil {
		s.writeErr(w, r, err)
		return
	}
	res, err := s.human.RequestHuman(r.Context(), chi.URLParam(r, "id"), body.Reason, timeout)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	s.writeJSON(w, http.StatusOK, res)
}
