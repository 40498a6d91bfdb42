package api

import (
	"context"
	"log/slog"
	"net/http"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
)

// HealthFunc reports the state of one dependency; nil means healthy.
type HealthFunc func(ctx context.Context) error

type mount struct {
	pattern string
	h       http.Handler
	// client: open to client tokens too.
	client bool
}

// Option configures a Server.
type Option func(*Server)

// WithLogger sets the logger.
func WithLogger(l *slog.Logger) Option { return func(s *Server) { s.log = l } }

// WithMaxBodyBytes bounds every request body.
func WithMaxBodyBytes(n int64) Option { return func(s *Server) { s.maxBodyBytes = n } }

// WithHealthCheck adds a named check to GET /health.
func WithHealthCheck(name string, f HealthFunc) Option {
	return func(s *Server) { s.health[name] = f }
}

// WithCounters adds supervision counters (restarts, crashes, …) to /health.
func WithCounters(f func() any) Option { return func(s *Server) { s.counters = f } }

// WithHealthRestartsLeft adds restarts_left to /health: the live sessions
// that used some of their restart budget, with what is left of it.
func WithHealthRestartsLeft(f func() map[string]int) Option {
	return func(s *Server) { s.restartsLeft = f }
}

// WithHealthNodes adds nodes to /health: the browser nodes and their state.
func WithHealthNodes(f func() []proxy.Node) Option { return func(s *Server) { s.nodeList = f } }

// WithUI serves the session inspector's files (internal/ui) at /ui/.
func WithUI(h http.Handler) Option { return func(s *Server) { s.ui = h } }

// WithNodes serves the browser nodes sessions are placed on at /nodes.
func WithNodes(n proxy.NodeService) Option { return func(s *Server) { s.nodes = n } }

// WithVersion sets the version reported by /health.
func WithVersion(v string) Option { return func(s *Server) { s.version = v } }

// WithMount mounts an extra handler (e.g. /mcp) on the router. It is
// registered after the middleware, so the request defences, body limit and
// logging apply to it like to every built-in route (chi also refuses
// middleware added after a route).
// It is the operator's: a client token gets 403 FORBIDDEN there.
func WithMount(pattern string, h http.Handler) Option {
	return func(s *Server) { s.mounts = append(s.mounts, mount{pattern: pattern, h: h}) }
}

// WithClientMount is WithMount for a handler that client tokens may use
// too (/mcp): it acts for its own clients, with the token's scope in the
// request's context (proxy.TokenScopeFrom).
func WithClientMount(pattern string, h http.Handler) Option {
	return func(s *Server) { s.mounts = append(s.mounts, mount{pattern: pattern, h: h, client: true}) }
}

// wsPath is where WithWebSocket mounts MCP over WebSocket.
const wsPath = "/ws"

// WithWebSocket mounts MCP over WebSocket at /ws, open to client tokens as
// /mcp is, and the one path that takes the token as a query parameter too.
func WithWebSocket(h http.Handler) Option { return WithClientMount(wsPath, h) }
