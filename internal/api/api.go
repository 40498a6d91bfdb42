// Package api owns proxy-server's HTTP surface: routing, request decoding and
// limits, and the mapping of *proxy.Error codes onto the documented error
// body and status codes. It holds no session or storage logic of its own and
// must never answer with anything but the documented JSON shapes, which are
// internal/wire's so that mcp-bridge decodes the types the server encodes.
package api

import (
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/logging"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/wire"
)

// Server is the HTTP handler of proxy-server.
type Server struct {
	sessions     proxy.SessionService
	content      proxy.ContentService
	nodes        proxy.NodeService // nil: no browser nodes configured
	health       map[string]HealthFunc
	log          *slog.Logger
	maxBodyBytes int64
	router       chi.Router
	version      string
	counters     func() any
	restartsLeft func() map[string]int
	nodeList     func() []proxy.Node
	// bridgeVersions remembers the mcp-bridge versions already warned about.
	bridgeVersions sync.Map
	// tokenHash is the SHA-256 of PROXY_AUTH_TOKEN; nil: no token required.
	tokenHash []byte
	// uiCookie is the inspector's cookie value for that token.
	uiCookie string
	// clients are the client tokens by the SHA-256 of each; nil: none
	// were ever given.
	clients atomic.Pointer[map[[32]byte]clientGrant]
	// clientRoutes matches the requests a client token may make.
	clientRoutes   *chi.Mux
	ui             http.Handler    // the inspector's files; nil: no /ui
	allowedOrigins map[string]bool // normalised scheme://host[:port]
	allowedHosts   map[string]bool // bare lower-case host names/addresses
	mounts         []mount
	// profiles serves /profiles; nil: no profile routes.
	profiles        proxy.ProfileService
	maxProfileBytes int64
	// human serves the control lease and request_human; nil: no such
	// routes.
	human proxy.HumanService
	// live serves the live view's WebSocket; nil: none.
	live LiveViewer
}

// New builds the router.
func New(sessions proxy.SessionService, content proxy.ContentService, opts ...Option) *Server {
	s := &Server{
		sessions:       sessions,
		content:        content,
		health:         map[string]HealthFunc{},
		log:            slog.Default(),
		maxBodyBytes:   2 << 20,
		router:         chi.NewRouter(),
		allowedOrigins: map[string]bool{},
		allowedHosts:   map[string]bool{},
		clientRoutes:   chi.NewRouter(),
	}
	for _, o := range opts {
		o(s)
	}
	r := s.router
	r.Use(middleware.RequestID, s.logRequests, middleware.Recoverer, s.guard)
	r.Use(func(next http.Handler) http.Handler {
		limited := http.MaxBytesHandler(next, s.maxBodyBytes)
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if s.profileUpload(r) {
				// Bounded by PROXY_PROFILE_MAX_BYTES in its handler, which
				// may allow more than other requests.
				next.ServeHTTP(w, r)
				return
			}
			limited.ServeHTTP(w, r)
		})
	})
	for _, m := range s.mounts {
		r.Handle(m.pattern, m.h)
		if m.client {
			s.clientRoutes.Handle(m.pattern, m.h)
		}
	}
	r.Get("/health", s.handleHealth)
	if s.ui != nil {
		r.Get("/ui", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/ui/", http.StatusFound) })
		r.Post("/ui/login", s.handleUILogin)
		r.Handle("/ui/*", s.ui)
	}
	// The routes of clientRoute are what mcp-bridge calls; every other
	// one is the operator's alone.
	s.clientRoute(r.With(s.toolsets), http.MethodGet, "/tools", s.handleTools)
	r.Get("/nodes", s.handleListNodes)
	r.Get("/nodes/{id}", s.handleGetNode)
	r.Post("/nodes/{id}/drain", s.handleDrainNode)
	r.Post("/nodes/{id}/undrain", s.handleUndrainNode)
	// /mcp (mounted above) acts for its own MCP sessions, never for a
	// header its caller sends.
	r.Group(func(r chi.Router) {
		r.Use(s.clientIdentity, s.toolsets)
		// A client token lists, reads and exports only its own sessions
		// (clientIdentity): the bridge's list_sessions, its resources and
		// closing its sessions on exit need those.
		s.clientRoute(r, http.MethodPost, "/sessions", s.handleCreateSession)
		s.clientRoute(r, http.MethodGet, "/sessions", s.handleListSessions)
		s.clientRoute(r, http.MethodGet, "/sessions/{id}", s.handleGetSession)
		s.clientRoute(r, http.MethodDelete, "/sessions/{id}", s.handleCloseSession)
		s.clientRoute(r, http.MethodPost, "/sessions/{id}/resume", s.handleResumeSession)
		s.clientRoute(r, http.MethodGet, "/sessions/{id}/export", s.handleExport)
		s.clientRoute(r, http.MethodPost, "/call", s.handleCall)
		s.clientRoute(r, http.MethodPost, "/call/validate", s.handleValidate)
		s.clientRoute(r, http.MethodGet, "/content/{ref}", s.handleContent)
		s.clientRoute(r, http.MethodGet, "/console/{ref}", s.handleConsole)
		s.clientRoute(r, http.MethodGet, "/content/{ref}/downloads/{name}", s.handleDownload)
		s.clientRoute(r, http.MethodPost, "/credentials", s.handleAddCredential)
		s.clientRoute(r, http.MethodGet, "/sessions/{id}/pages", s.handlePages)
		s.clientRoute(r, http.MethodGet, "/sessions/{id}/pages/{page}/elements/{ref}", s.handleElement)
		s.clientRoute(r, http.MethodGet, "/sessions/{id}/pages/{page}/network", s.handleNetworkLog)
		s.routeProfiles(r)
		s.routeHuman(r)
	})
	r.NotFound(func(w http.ResponseWriter, r *http.Request) {
		s.writeError(w, r, &proxy.Error{Code: proxy.ENOENDPOINT, Message: "no such endpoint: " + r.Method + " " + r.URL.Path}, http.StatusNotFound)
	})
	r.MethodNotAllowed(func(w http.ResponseWriter, r *http.Request) {
		s.writeError(w, r, &proxy.Error{Code: proxy.EINVALID, Message: "method " + r.Method + " is not allowed on " + r.URL.Path}, http.StatusMethodNotAllowed)
	})
	return s
}

// clientRoute registers h on r and opens it to client tokens.
func (s *Server) clientRoute(r chi.Router, method, pattern string, h http.HandlerFunc) {
	r.Method(method, pattern, h)
	s.clientRoutes.Method(method, pattern, h)
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.router.ServeHTTP(w, r) }

func (s *Server) logRequests(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ww := middleware.NewWrapResponseWriter(w, r.ProtoMajor)
		start := time.Now()
		if v := r.Header.Get(wire.BridgeVersionHeader); v != "" && v != s.version {
			if _, seen := s.bridgeVersions.LoadOrStore(v, true); !seen {
				s.log.Warn("mcp-bridge and proxy-server versions differ; reinstall both (make install)", "bridge", v, "server", s.version)
			}
		}
		id := middleware.GetReqID(r.Context())
		// Clients (and the bridge's logs) can quote it to find this request.
		ww.Header().Set("X-Request-Id", id)
		// Lines logged below this handler with the request's context (the
		// session manager's, /mcp's) carry the same request_id.
		r = r.WithContext(logging.WithRequestID(r.Context(), id))
		next.ServeHTTP(ww, r)
		if ww.Header().Get("Content-Length") != "" {
			// The whole answer is written: send it now, not after the log
			// line below (net/http flushes only when the handler returns),
			// so a tool call's answer does not wait for a write to the log.
			_ = http.NewResponseController(ww).Flush()
		}
		// Reads are routine; changes and failures are worth a line at info.
		level := slog.LevelDebug
		switch status := ww.Status(); {
		case status >= 500:
			level = slog.LevelWarn
		case status >= 400, r.Method != http.MethodGet && r.Method != http.MethodHead:
			level = slog.LevelInfo
		}
		s.log.Log(r.Context(), level, "http request", "request_id", id, "method", r.Method, "path", r.URL.Path,
			"status", ww.Status(), "bytes", ww.BytesWritten(), "duration", time.Since(start))
	})
}
