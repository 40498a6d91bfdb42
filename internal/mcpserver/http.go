package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/clock"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/toolset"
)

// DefaultHTTPIdleTTL is how long an MCP session over HTTP may stay silent
// before its transport state is dropped and the browser sessions it created
// closed. It is much longer than the browser idle timeout on purpose: the
// browser session is already suspended (worker stopped, state kept) long
// before, and a conversation that comes back within the day keeps it.
const DefaultHTTPIdleTTL = 24 * time.Hour

// closeBudget bounds closing the browser session of an ended MCP session.
const closeBudget = 30 * time.Second

// HTTPConfig configures the Streamable HTTP endpoint.
type HTTPConfig struct {
	// IdleTTL ends MCP sessions that made no request for this long, the
	// clean-up for clients that go away without DELETE (DefaultHTTPIdleTTL
	// when 0).
	IdleTTL time.Duration
	// MaxBodyBytes bounds a request body (mcp-go reads it whole, with no
	// limit of its own); 0 means no limit here.
	MaxBodyBytes int64
	// Toolsets is the server's selection of tool groups (PROXY_TOOLSETS):
	// what an MCP session lists and calls when its endpoint URL makes no
	// choice of its own (/mcp?toolsets=storage,extraction). The zero value
	// is toolset.DefaultGroups.
	Toolsets toolset.Selection
	Logger   *slog.Logger
	// Options are passed to New for the MCP server.
	Options []Option
	// Clock times the wait for update notifications to be written
	// (clock.Real when nil).
	Clock clock.Clock
}

// HTTPHandler serves the MCP tool surface over Streamable HTTP (POST, GET
// and DELETE on one endpoint). Each MCP session (Mcp-Session-Id) gets its
// own default browser session on its first browser tool call; ending the
// MCP session — DELETE, or the idle TTL — closes every browser session it
// created. A client chooses its tool groups with the query parameter
// toolsets on the endpoint URL, which it sends with every request; without
// it, the server's (HTTPConfig.Toolsets) apply.
//
// The MCP server is built on the first request, not at start-up: the tool
// catalogue comes from an upstream worker, and proxy-server must come up
// (and answer /health) even while no worker can start.
type HTTPHandler struct {
	sessions proxy.SessionService
	content  proxy.ContentService
	cfg      HTTPConfig
	log      *slog.Logger

	// ids knows the Mcp-Session-Ids issued and ended, for the answers
	// mcp-go gets wrong (DELETE of an unknown one).
	ids *server.InsecureStatefulSessionIdManager

	mu   sync.Mutex
	srv  *Server
	http *server.StreamableHTTPServer

	// closing turns the end of MCP sessions into a mere forget: at shutdown
	// the browser sessions must stay resumable, not be closed.
	closing atomic.Bool

	// scopes binds each Mcp-Session-Id to the client token scope that
	// initialized it ("" for the operator's token or none): an id is
	// another client's browser sessions, and a holder of another token,
	// even one who learned the id, must not use it.
	scopes sync.Map

	// wsConns are the open connections of /ws (WebSocket), closed by Close.
	wsMu    sync.Mutex
	wsConns map[*wsConn]bool

	// updates counts the update notifications written to each client.
	updates *updateWrites
}

// NewHTTPHandler returns the /mcp handler over the session manager and the
// record of proxy-server's own process.
func NewHTTPHandler(sessions proxy.SessionService, content proxy.ContentService, cfg HTTPConfig) *HTTPHandler {
	if cfg.IdleTTL <= 0 {
		cfg.IdleTTL = DefaultHTTPIdleTTL
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &HTTPHandler{sessions: sessions, content: content, cfg: cfg, log: cfg.Logger, ids: &server.InsecureStatefulSessionIdManager{}, updates: newUpdateWrites(cfg.Clock)}
}

// toolsetsParam is the query parameter of the endpoint URL that chooses the
// client's tool groups (a comma list, or all).
const toolsetsParam = "toolsets"

// allowedMethods are the methods of the Streamable HTTP transport (HEAD as
// GET without a body).
const allowedMethods = "GET, HEAD, POST, DELETE"

// JSON-RPC codes of transport errors, which the MCP spec leaves unnamed:
// those the official TypeScript SDK's server answers.
const (
	rpcTransportError  = -32000
	rpcSessionNotFound = -32001
)

func (h *HTTPHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	scope, _ := proxy.TokenScopeFrom(r.Context())
	if id := r.Header.Get(server.HeaderKeySessionID); id != "" {
		bound, _ := h.scopes.Load(id)
		if b, _ := bound.(string); b != scope {
			// As for an id never issued: whether it exists is not told.
			writeRPCError(w, http.StatusNotFound, rpcSessionNotFound, "unknown or ended Mcp-Session-Id")
			return
		}
	}
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodPost:
	case http.MethodDelete:
		// mcp-go answers 200 to a DELETE of any id, known or not; every
		// other request naming an unknown or ended session gets 404.
		id := r.Header.Get(server.HeaderKeySessionID)
		if id == "" {
			writeRPCError(w, http.StatusBadRequest, rpcTransportError, "DELETE needs the Mcp-Session-Id header of the session to end")
			return
		}
		if ended, err := h.ids.Validate(id); err != nil || ended {
			writeRPCError(w, http.StatusNotFound, rpcSessionNotFound, "unknown or ended Mcp-Session-Id")
			return
		}
	default:
		// mcp-go answers other methods with a plain-text 404.
		w.Header().Set("Allow", allowedMethods)
		writeRPCError(w, http.StatusMethodNotAllowed, rpcTransportError, fmt.Sprintf("method %s is not allowed on the MCP endpoint (allowed: %s)", r.Method, allowedMethods))
		return
	}
	if h.closing.Load() {
		writeRPCError(w, http.StatusServiceUnavailable, mcp.INTERNAL_ERROR, "proxy-server is shutting down")
		return
	}
	if list, given := r.URL.Query()[toolsetsParam]; given {
		ctx, err := toolset.WithChoice(r.Context(), strings.Join(list, ","))
		if err != nil {
			writeRPCError(w, http.StatusBadRequest, rpcTransportError, "query parameter "+toolsetsParam+": "+err.Error())
			return
		}
		r = r.WithContext(ctx)
	}
	profile, err := queryProfile(r.URL.Query())
	if err != nil {
		writeRPCError(w, http.StatusBadRequest, rpcTransportError, "query parameter "+profileParam+": "+proxy.AsError(err).Message)
		return
	}
	hs, err := h.ready(r.Context())
	if err != nil {
		h.log.Warn("MCP over HTTP is not ready", "err", err)
		writeRPCError(w, http.StatusServiceUnavailable, mcp.INTERNAL_ERROR, err.Error())
		return
	}
	if h.cfg.MaxBodyBytes > 0 {
		r.Body = http.MaxBytesReader(w, r.Body, h.cfg.MaxBodyBytes)
	}
	if r.Method == http.MethodPost && r.Body != nil {
		// encoding/json turns invalid UTF-8 into U+FFFD: the call would
		// reach the browser and the record with other text than the client
		// sent. Refused as POST /call refuses it (mcp-go reads the body
		// whole anyway).
		body, err := io.ReadAll(r.Body)
		switch {
		case err != nil:
			writeRPCError(w, http.StatusBadRequest, mcp.PARSE_ERROR, "reading the request body: "+err.Error())
			return
		case !utf8.Valid(body):
			writeRPCError(w, http.StatusBadRequest, mcp.PARSE_ERROR, "request body is not valid UTF-8")
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
	}
	if r.Header.Get(server.HeaderKeySessionID) == "" {
		// An initialize: the id mcp-go issues is bound to the caller's
		// scope, and to the profile its URL names, before its answer (the
		// only way to learn the id) leaves. Later requests' URLs are not
		// read for a profile: the default session is the MCP session's.
		h.mu.Lock()
		srv := h.srv
		h.mu.Unlock()
		hs.ServeHTTP(&bindingResponse{rpcCodeResponse: rpcCodeResponse{w}, bind: func(id string) {
			h.scopes.Store(id, scope)
			srv.setClientProfile(id, profile)
		}}, r)
		return
	}
	hs.ServeHTTP(rpcCodeResponse{watchingResponse{ResponseWriter: w, writes: h.updates, id: r.Header.Get(server.HeaderKeySessionID)}}, r)
}

// bindingResponse calls bind with the Mcp-Session-Id of the answer, if it
// has one, before any of the answer is sent.
type bindingResponse struct {
	rpcCodeResponse
	bind  func(mcpSessionID string)
	bound bool
}

func (b *bindingResponse) bindOnce() {
	if b.bound {
		return
	}
	b.bound = true
	if id := b.Header().Get(server.HeaderKeySessionID); id != "" {
		b.bind(id)
	}
}

func (b *bindingResponse) WriteHeader(code int) {
	b.bindOnce()
	b.ResponseWriter.WriteHeader(code)
}

func (b *bindingResponse) Write(p []byte) (int, error) {
	b.bindOnce()
	return b.rpcCodeResponse.Write(p)
}

func (b *bindingResponse) Flush() {
	b.bindOnce()
	b.rpcCodeResponse.Flush()
}

// ready builds the MCP server once; a failure is retried by the next request.
func (h *HTTPHandler) ready(ctx context.Context) (*server.StreamableHTTPServer, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.http != nil {
		return h.http, nil
	}
	var srv *Server
	hooks := &server.Hooks{}
	// Fired on DELETE, on the idle sweep and at shutdown (mcp-go calls it
	// synchronously, so a DELETE answers once the browser session is closed).
	hooks.AddOnUnregisterSession(func(ctx context.Context, cs server.ClientSession) {
		h.endClient(ctx, srv, cs.SessionID())
	})
	opts := append([]Option{WithLogger(h.log)}, h.cfg.Options...)
	opts = append(opts, WithServerOptions(server.WithHooks(hooks)), WithClientToolsets(h.cfg.Toolsets), actForClients(), watchUpdates(h.updates))
	srv, err := New(ctx, h.sessions, h.content, opts...)
	if err != nil {
		return nil, err
	}
	h.srv = srv
	h.http = server.NewStreamableHTTPServer(srv.MCPServer(),
		// Unknown or terminated Mcp-Session-Ids get 404 (the default
		// manager would accept them and make a stray default session).
		server.WithSessionIdManager(h.ids),
		// Without a TTL the state of clients that vanish without DELETE
		// is never dropped.
		server.WithSessionIdleTTL(h.cfg.IdleTTL),
		// 2026-07-28 has no sessions: every such client would share one
		// default browser session. Clients negotiate down to these.
		server.WithStreamableHTTPProtocolVersions(mcp.LegacyProtocolVersions()...),
		server.WithStreamableHTTPLogger(h.log),
	)
	h.log.Info("MCP over Streamable HTTP ready", "idle_ttl", h.cfg.IdleTTL)
	return h.http, nil
}

// endClient forgets an ended MCP session and closes every browser session
// it created (its default and the ones it made with create_new_session): a
// client that leaves takes its sessions with it, as a bridge does when its
// client goes away. Their history stays.
func (h *HTTPHandler) endClient(ctx context.Context, srv *Server, mcpSessionID string) {
	srv.ForgetClient(mcpSessionID)
	h.scopes.Delete(mcpSessionID)
	h.updates.forget(mcpSessionID)
	if h.closing.Load() {
		return
	}
	// The DELETE's own context may end with the client's connection; the
	// close must still happen.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), closeBudget)
	defer cancel()
	n, err := CloseSessions(proxy.WithClient(ctx, MCPClientID(mcpSessionID)), h.sessions)
	if err != nil {
		h.log.Warn("closing the sessions of an ended MCP session", "mcp_session", mcpSessionID, "closed", n, "err", err)
		return
	}
	h.log.Debug("MCP session ended; its sessions are closed", "mcp_session", mcpSessionID, "closed", n)
}

// Close ends every MCP session without closing their browser sessions (the
// session manager suspends those at shutdown, resumable later), stops the
// idle sweeper, closes the WebSocket connections of /ws and unblocks open
// GET streams so an http.Server can shut down.
// It is safe to call more than once, and as an http.Server OnShutdown hook.
func (h *HTTPHandler) Close(ctx context.Context) error {
	h.closing.Store(true)
	h.closeConns()
	h.mu.Lock()
	hs := h.http
	h.mu.Unlock()
	if hs == nil {
		return nil
	}
	if err := hs.Shutdown(ctx); err != nil {
		return fmt.Errorf("closing MCP sessions: %w", err)
	}
	return nil
}

// DefaultSessionOf returns the default browser session of an MCP session
// ("" when it has none yet).
func (h *HTTPHandler) DefaultSessionOf(mcpSessionID string) string {
	h.mu.Lock()
	srv := h.srv
	h.mu.Unlock()
	if srv == nil {
		return ""
	}
	return srv.DefaultSessionOf(mcpSessionID)
}

// writeRPCError answers a request the MCP server never saw with a JSON-RPC
// error, the shape MCP clients read on this endpoint.
func writeRPCError(w http.ResponseWriter, status, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{
		"jsonrpc": mcp.JSONRPC_VERSION,
		"id":      nil,
		"error":   map[string]any{"code": code, "message": msg},
	})
}
