package api

import (
	"context"
	"net/http"
	"time"

	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/wire"
)

func (s *Server) handleHealth(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
	defer cancel()
	checks := map[string]string{}
	status, code := "ok", http.StatusOK
	for name, f := range s.health {
		if err := f(ctx); err != nil {
			checks[name] = "error: " + err.Error()
			status, code = "degraded", http.StatusServiceUnavailable
		} else {
			checks[name] = "ok"
		}
	}
	body := wire.Health{Status: status, Checks: checks, Version: s.version}
	if s.counters != nil {
		body.Counters = s.counters()
	}
	if s.restartsLeft != nil {
		body.RestartsLeft = s.restartsLeft()
	}
	if s.nodeList != nil {
		body.Nodes = s.nodeList()
	}
	s.writeJSON(w, code, body)
}
