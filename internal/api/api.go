// Package api owns proxy-server's HTTP surface: routing, request decoding and
// limits, and the mapping of *proxy.Error codes onto the documented error
// body and status codes. It holds no session or storage logic of its own and
// must never answer with anything but the documented JSON shapes.
package api

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/logging"
)

// BridgeVersionHeader carries mcp-bridge's version on its requests.
const BridgeVersionHeader = "X-Mcp-Bridge-Version"

// HealthFunc reports the state of one dependency; nil means healthy.
type HealthFunc func(ctx context.Context) error

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
	details      []healthDetail
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

// WithHealthDetail adds what f returns to /health under name (a top-level
// key beside status, checks and counters).
func WithHealthDetail(name string, f func() any) Option {
	return func(s *Server) { s.details = append(s.details, healthDetail{name, f}) }
}

type healthDetail struct {
	name string
	f    func() any
}

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
		if v := r.Header.Get(BridgeVersionHeader); v != "" && v != s.version {
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
	body := map[string]any{"status": status, "checks": checks, "version": s.version}
	if s.counters != nil {
		body["counters"] = s.counters()
	}
	for _, d := range s.details {
		body[d.name] = d.f()
	}
	s.writeJSON(w, code, body)
}

func (s *Server) handleTools(w http.ResponseWriter, r *http.Request) {
	tools, err := s.sessions.Tools(r.Context())
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	s.writeJSON(w, http.StatusOK, map[string]any{"tools": tools})
}

func (s *Server) handleCreateSession(w http.ResponseWriter, r *http.Request) {
	// The body is optional: the session's browser options, or nothing.
	var raw json.RawMessage
	if err := decodeBody(r, &raw, true); err != nil {
		s.writeErr(w, r, err)
		return
	}
	opts, err := proxy.DecodeBrowserOptions(raw)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	sess, err := s.sessions.CreateSession(r.Context(), opts)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	s.writeJSON(w, http.StatusCreated, sess)
}

func (s *Server) handleListSessions(w http.ResponseWriter, r *http.Request) {
	ss, err := s.sessions.ListSessions(r.Context())
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	if ss == nil {
		ss = []*proxy.Session{}
	}
	s.writeJSON(w, http.StatusOK, map[string]any{"sessions": ss})
}

func (s *Server) handleGetSession(w http.ResponseWriter, r *http.Request) {
	sess, err := s.sessions.GetSession(r.Context(), chi.URLParam(r, "id"))
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	s.writeJSON(w, http.StatusOK, sess)
}

func (s *Server) handleCloseSession(w http.ResponseWriter, r *http.Request) {
	id := chi.URLParam(r, "id")
	if err := s.sessions.CloseSession(r.Context(), id); err != nil {
		s.writeErr(w, r, err)
		return
	}
	sess, err := s.sessions.GetSession(r.Context(), id)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	s.writeJSON(w, http.StatusOK, sess)
}

// ResumeBody is the answer of POST /sessions/{id}/resume.
type ResumeBody struct {
	*proxy.Session
	// Restored is true when the session came back in a new worker with its
	// saved state: element refs from before are stale.
	Restored bool `json:"restored"`
}

func (s *Server) handleResumeSession(w http.ResponseWriter, r *http.Request) {
	if err := decodeBody(r, &struct{}{}, true); err != nil {
		s.writeErr(w, r, err)
		return
	}
	sess, restored, err := s.sessions.ResumeSession(r.Context(), chi.URLParam(r, "id"))
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	s.writeJSON(w, http.StatusOK, ResumeBody{Session: sess, Restored: restored})
}

// CallBody is the body of POST /call.
type CallBody struct {
	SessionID string          `json:"session_id"`
	Tool      string          `json:"tool"`
	Params    json.RawMessage `json:"params"`
	RequestID string          `json:"request_id,omitempty"`
	// Changes asks for "changes" in the answer: what the call did to the
	// page against the session's previous snapshot (what MCP clients see).
	Changes bool `json:"changes,omitempty"`
}

func (s *Server) handleCall(w http.ResponseWriter, r *http.Request) {
	var body CallBody
	if err := decodeBody(r, &body, false); err != nil {
		s.writeErr(w, r, err)
		return
	}
	if body.SessionID == "" {
		s.writeErr(w, r, proxy.Errorf(proxy.EINVALID, "session_id is required"))
		return
	}
	if err := objectParams(body.Params); err != nil {
		s.writeErr(w, r, err)
		return
	}
	res, err := s.sessions.Call(r.Context(), proxy.CallRequest{SessionID: body.SessionID, Tool: body.Tool, Params: body.Params, RequestID: body.RequestID, Changes: body.Changes})
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	if len(res.Encoded) > 0 {
		s.writeJSON(w, http.StatusOK, res.Encoded) // as the manager encoded it
		return
	}
	s.writeJSON(w, http.StatusOK, res)
}

// ValidateBody is the body of POST /call/validate: a call without its
// session.
type ValidateBody struct {
	Tool   string          `json:"tool"`
	Params json.RawMessage `json:"params"`
}

// handleValidate answers whether a call would be refused before it reaches
// a session (200 {"valid":true}, or the error the call would get).
func (s *Server) handleValidate(w http.ResponseWriter, r *http.Request) {
	var body ValidateBody
	if err := decodeBody(r, &body, false); err != nil {
		s.writeErr(w, r, err)
		return
	}
	if err := s.sessions.Validate(r.Context(), body.Tool, body.Params); err != nil {
		s.writeErr(w, r, err)
		return
	}
	s.writeJSON(w, http.StatusOK, map[string]bool{"valid": true})
}

// ContentBody is the JSON form of GET /content (Accept: application/json).
type ContentBody struct {
	RefID     string      `json:"ref_id"`
	Text      string      `json:"text"`
	Unchanged bool        `json:"unchanged"`
	Images    []ImageBody `json:"images,omitempty"`
	// Snapshot is true when Text is (a view of) the page snapshot, false
	// when it is the result text.
	Snapshot bool `json:"snapshot,omitempty"`
	// NoMatch is true when search_for matched nothing (Text is "").
	NoMatch bool `json:"no_match,omitempty"`
}

// ImageBody is one stored image, base64 encoded.
type ImageBody struct {
	MimeType string `json:"mime_type"`
	Data     string `json:"data"`
}

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
		body := ContentBody{RefID: ref, Text: c.Text, Unchanged: c.Unchanged, Snapshot: c.Snapshot, NoMatch: c.NoMatch}
		for _, im := range c.Images {
			body.Images = append(body.Images, ImageBody{MimeType: im.MimeType, Data: base64.StdEncoding.EncodeToString(im.Data)})
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
		s.writeJSON(w, http.StatusOK, map[string]string{"ref_id": chi.URLParam(r, "ref"), "text": text})
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = io.WriteString(w, text)
}

// CredentialBody is the body of POST /credentials.
type CredentialBody struct {
	Value string `json:"value"`
}

// CredentialAnswer is the answer of POST /credentials.
type CredentialAnswer struct {
	// Placeholder (<secret>cred_…</secret>) stands for the value: typed into
	// a page through any tool, the browser gets the value; the record and
	// every answer show the placeholder.
	Placeholder string `json:"placeholder"`
}

// handleAddCredential puts a value in the credential vault. The value is
// never logged or returned: errors name the rule, not the value.
func (s *Server) handleAddCredential(w http.ResponseWriter, r *http.Request) {
	var body CredentialBody
	if err := decodeBody(r, &body, false); err != nil {
		s.writeErr(w, r, err)
		return
	}
	placeholder, err := s.sessions.AddCredential(r.Context(), body.Value)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	s.writeJSON(w, http.StatusCreated, CredentialAnswer{Placeholder: placeholder})
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

func parseBool(v, name string) (bool, error) {
	if v == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, proxy.Errorf(proxy.EINVALID, "%s must be true or false, got %q", name, v)
	}
	return b, nil
}

// decodeBody reads a JSON object body, refusing unknown fields, trailing
// data, invalid UTF-8 and oversize bodies with INVALID_PARAMETERS. An
// optional body may be empty.
func decodeBody(r *http.Request, v any, optional bool) error {
	// The body is read whole (MaxBytesHandler bounds it) because
	// encoding/json silently turns invalid UTF-8 into U+FFFD and keeps
	// json.RawMessage bytes as sent: the params would reach the browser
	// and the record differently from what the client meant.
	data, err := io.ReadAll(r.Body)
	if err != nil {
		return decodeErr(err)
	}
	if !utf8.Valid(data) {
		return proxy.Errorf(proxy.EINVALID, "request body is not valid UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		if optional && errors.Is(err, io.EOF) {
			return nil
		}
		return decodeErr(err)
	}
	if dec.More() {
		return proxy.Errorf(proxy.EINVALID, "request body has data after the JSON object")
	}
	return nil
}

func decodeErr(err error) error {
	var mbe *http.MaxBytesError
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &mbe):
		return &proxy.Error{Code: proxy.EINVALID, Message: fmt.Sprintf("request body is larger than %d bytes", mbe.Limit),
			Details: map[string]any{"limit_bytes": mbe.Limit}, Suggestion: "Send a smaller request."}
	case errors.Is(err, io.EOF):
		return proxy.Errorf(proxy.EINVALID, "request body is empty; a JSON object is required")
	case errors.As(err, &se):
		return proxy.Errorf(proxy.EINVALID, "malformed JSON at byte %d: %v", se.Offset, se)
	case errors.As(err, &te):
		e := proxy.Errorf(proxy.EINVALID, "field %q must be %s, got %s", te.Field, te.Type, te.Value)
		e.Details = map[string]any{"field": te.Field}
		return e
	default:
		return proxy.Errorf(proxy.EINVALID, "invalid request body: %v", err)
	}
}

// writeJSON answers v with its length set, so that logRequests can send the
// answer before it logs.
func (s *Server) writeJSON(w http.ResponseWriter, code int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		s.log.Error("encoding response", "err", err)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = io.WriteString(w, `{"error":"INTERNAL_ERROR","message":"the answer could not be encoded","retryable":false}`+"\n")
		return
	}
	b = append(b, '\n')
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(code)
	if _, err := w.Write(b); err != nil {
		s.log.Debug("writing response", "err", err)
	}
}

// ErrorBody is the documented error shape.
type ErrorBody struct {
	Error      string         `json:"error"`
	Message    string         `json:"message"`
	Details    map[string]any `json:"details,omitempty"`
	Retryable  bool           `json:"retryable"`
	Suggestion string         `json:"suggestion,omitempty"`
}

func (s *Server) writeErr(w http.ResponseWriter, r *http.Request, err error) {
	e := proxy.AsError(err)
	code := httpStatus(e.Code)
	if code == http.StatusInternalServerError {
		s.log.Error("internal error", "request_id", middleware.GetReqID(r.Context()), "path", r.URL.Path, "err", err)
	} else {
		// The session id, when the error names one, ties the request to
		// the session's own log lines.
		s.log.Info("request refused", "request_id", middleware.GetReqID(r.Context()), "path", r.URL.Path, "code", e.Code,
			"session_id", e.Details["session_id"], "message", e.Message)
	}
	s.writeError(w, r, e, code)
}

func (s *Server) writeError(w http.ResponseWriter, _ *http.Request, e *proxy.Error, code int) {
	s.writeJSON(w, code, ErrorBody{Error: e.Code, Message: e.Message, Details: e.Details, Retryable: e.Retryable, Suggestion: e.Suggestion})
}

// codes is the HTTP status of each error code; any other code is 500.
var codes = map[string]int{
	proxy.EINVALID:         http.StatusBadRequest,
	proxy.ESESSIONMISSING:  http.StatusNotFound,
	proxy.EREFMISSING:      http.StatusNotFound,
	proxy.ETOOLMISSING:     http.StatusNotFound,
	proxy.ENODEMISSING:     http.StatusNotFound,
	proxy.ENOENDPOINT:      http.StatusNotFound,
	proxy.ESESSIONCLOSED:   http.StatusGone,
	proxy.EMAXSESSIONS:     http.StatusTooManyRequests,
	proxy.EORIGIN:          http.StatusForbidden,
	proxy.EHOST:            http.StatusForbidden,
	proxy.EDOMAINBLOCKED:   http.StatusForbidden,
	proxy.EUNAUTHORIZED:    http.StatusUnauthorized,
	proxy.EFORBIDDEN:       http.StatusForbidden,
	proxy.EUNAVAILABLE:     http.StatusServiceUnavailable,
	proxy.ETIMEOUT:         http.StatusGatewayTimeout,
	proxy.ESTORAGEFULL:     http.StatusInsufficientStorage,
	proxy.EELEMENTMISSING:  http.StatusUnprocessableEntity,
	proxy.ENOTINTERACTIVE:  http.StatusUnprocessableEntity,
	proxy.EINVALIDSELECTOR: http.StatusUnprocessableEntity,
	proxy.ENAVIGATION:      http.StatusUnprocessableEntity,
	proxy.EBROWSER:         http.StatusUnprocessableEntity,
	proxy.EDOWNLOADMISSING: http.StatusNotFound,
	proxy.EPAGEMISSING:     http.StatusNotFound,
	proxy.EPROFILEMISSING:  http.StatusNotFound,
	proxy.ETOOLARGE:        http.StatusRequestEntityTooLarge,
	proxy.ECONTROLHELD:     http.StatusConflict,
	proxy.EHUMANINCONTROL:  http.StatusConflict,
}

// httpStatus is the status an error code is answered with.
func httpStatus(code string) int {
	if s, ok := codes[code]; ok {
		return s
	}
	return http.StatusInternalServerError
}

// objectParams refuses a call body whose params are not a JSON object
// (absent or null stand for {}), so that nothing else reaches a session.
// The body decoder has checked that they are valid JSON, so their first
// byte tells; the session manager decodes them, once.
func objectParams(p json.RawMessage) error {
	p = bytes.TrimLeft(p, " \t\r\n")
	if len(p) == 0 || p[0] == '{' || string(p) == "null" {
		return nil
	}
	e := proxy.Errorf(proxy.EINVALID, "params must be a JSON object")
	e.Details = map[string]any{"field": "params"}
	return e
}
