package mcpserver

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/coder/websocket"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/toolset"
)

// WSSubprotocol is the WebSocket subprotocol of MCP, the one the official
// TypeScript SDK's WebSocketClientTransport offers.
const WSSubprotocol = "mcp"

// defaultWSReadLimit bounds one message from a client when
// HTTPConfig.MaxBodyBytes sets no bound.
const defaultWSReadLimit = 2 << 20

const (
	// wsWriteBudget bounds one write to a client: a client that stops
	// reading must not hold a call's goroutine forever.
	wsWriteBudget = 30 * time.Second
	// wsMaxInFlight bounds the requests of one connection served at once;
	// the next one waits to be read (the socket pushes back).
	wsMaxInFlight = 16
	// wsNotificationBuffer is what mcp-go may queue for one connection
	// before it drops notifications (it never blocks on a slow client).
	wsNotificationBuffer = 100
)

// WebSocket returns the /ws handler: MCP over WebSocket, one JSON-RPC
// message per text frame. A connection is one MCP client, as one MCP
// session of /mcp is: its own default browser session, made on its first
// browser call, and the sessions it creates, all closed when the
// connection closes. It shares the MCP server of /mcp, so the two list and
// call the same tools.
//
// The request defences (Host, Origin, token) are the router's, before the
// upgrade; this handler does not check Origin again, since the router's
// list of allowed origins is the one that applies.
func (h *HTTPHandler) WebSocket() http.Handler { return wsHandler{h} }

type wsHandler struct{ h *HTTPHandler }

func (ws wsHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := ws.h
	if !isUpgrade(r) {
		// Said in JSON-RPC, as /mcp's transport errors are: a client that
		// posted here meant /mcp.
		w.Header().Set("Upgrade", "websocket")
		w.Header().Set("Connection", "Upgrade")
		writeRPCError(w, http.StatusUpgradeRequired, rpcTransportError, "/ws speaks MCP over WebSocket (GET with Upgrade: websocket, subprotocol "+WSSubprotocol+"); MCP over HTTP is /mcp")
		return
	}
	if offered := offeredSubprotocols(r); len(offered) > 0 && !slices.Contains(offered, WSSubprotocol) {
		// Accepting would answer without a subprotocol, which such a
		// client must treat as a failed handshake; say why instead.
		writeRPCError(w, http.StatusBadRequest, rpcTransportError, fmt.Sprintf("subprotocols %s offered; /ws speaks only %q", strings.Join(offered, ", "), WSSubprotocol))
		return
	}
	if h.closing.Load() {
		writeRPCError(w, http.StatusServiceUnavailable, mcp.INTERNAL_ERROR, "proxy-server is shutting down")
		return
	}
	// The connection outlives nothing of the request but its values: the
	// request id of the log lines, the client token's scope, the tool
	// groups the URL chose.
	ctx := r.Context()
	if list, given := r.URL.Query()[toolsetsParam]; given {
		var err error
		if ctx, err = toolset.WithChoice(ctx, strings.Join(list, ",")); err != nil {
			writeRPCError(w, http.StatusBadRequest, rpcTransportError, "query parameter "+toolsetsParam+": "+err.Error())
			return
		}
	}
	profile, err := queryProfile(r.URL.Query())
	if err != nil {
		writeRPCError(w, http.StatusBadRequest, rpcTransportError, "query parameter "+profileParam+": "+proxy.AsError(err).Message)
		return
	}
	if _, err := h.ready(ctx); err != nil {
		h.log.Warn("MCP over WebSocket is not ready", "err", err)
		writeRPCError(w, http.StatusServiceUnavailable, mcp.INTERNAL_ERROR, err.Error())
		return
	}
	h.mu.Lock()
	srv := h.srv
	h.mu.Unlock()

	conn, err := websocket.Accept(w, r, &websocket.AcceptOptions{
		Subprotocols: []string{WSSubprotocol},
		// Origin was judged by the router (this server's own origin or
		// one of PROXY_ALLOWED_ORIGINS); the library's own check (same
		// host only) would refuse the listed ones.
		InsecureSkipVerify: true,
	})
	if err != nil {
		// Accept has answered the client already.
		h.log.Info("WebSocket handshake refused", "err", err)
		return
	}
	limit := h.cfg.MaxBodyBytes
	if limit <= 0 {
		limit = defaultWSReadLimit
	}
	conn.SetReadLimit(limit)
	c := &wsConn{
		conn:          conn,
		srv:           srv.MCPServer(),
		log:           h.log,
		id:            "ws-" + rand.Text(),
		notifications: make(chan mcp.JSONRPCNotification, wsNotificationBuffer),
		updates:       h.updates,
	}
	if !h.addConn(c) {
		_ = conn.Close(websocket.StatusGoingAway, "proxy-server is shutting down")
		return
	}
	srv.setClientProfile(c.id, profile)
	defer h.dropConn(c)
	c.serve(context.WithoutCancel(ctx))
}

// isUpgrade reports whether r asks for a WebSocket.
func isUpgrade(r *http.Request) bool {
	return headerHasToken(r.Header, "Connection", "upgrade") && headerHasToken(r.Header, "Upgrade", "websocket")
}

func headerHasToken(h http.Header, key, token string) bool {
	for _, v := range h.Values(key) {
		for t := range strings.SplitSeq(v, ",") {
			if strings.EqualFold(strings.TrimSpace(t), token) {
				return true
			}
		}
	}
	return false
}

// offeredSubprotocols lists the subprotocols of the handshake.
func offeredSubprotocols(r *http.Request) []string {
	var out []string
	for _, v := range r.Header.Values("Sec-WebSocket-Protocol") {
		for p := range strings.SplitSeq(v, ",") {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
	}
	return out
}

// addConn records a connection for Close; false once closing.
func (h *HTTPHandler) addConn(c *wsConn) bool {
	h.wsMu.Lock()
	defer h.wsMu.Unlock()
	if h.closing.Load() {
		return false
	}
	if h.wsConns == nil {
		h.wsConns = map[*wsConn]bool{}
	}
	h.wsConns[c] = true
	return true
}

func (h *HTTPHandler) dropConn(c *wsConn) {
	h.wsMu.Lock()
	defer h.wsMu.Unlock()
	delete(h.wsConns, c)
}

// closeConns closes every WebSocket connection (proxy-server's shutdown):
// http.Server.Shutdown does not wait for hijacked connections, nor close
// them. Each client is told why (1001, going away), which the library
// bounds to a few seconds for a client that does not answer.
func (h *HTTPHandler) closeConns() {
	h.wsMu.Lock()
	conns := make([]*wsConn, 0, len(h.wsConns))
	for c := range h.wsConns {
		conns = append(conns, c)
	}
	h.wsMu.Unlock()
	var wg sync.WaitGroup
	for _, c := range conns {
		wg.Go(func() { _ = c.conn.Close(websocket.StatusGoingAway, "proxy-server is shutting down") })
	}
	wg.Wait()
}

// wsConn is one MCP client over WebSocket, and its mcp-go client session.
type wsConn struct {
	conn *websocket.Conn
	srv  *server.MCPServer
	log  *slog.Logger
	// id is the MCP session id (never sent to the client): the owner of
	// the browser sessions the connection creates is derived from it, so
	// it is random, and prefixed so that it cannot be an id of /mcp.
	id            string
	notifications chan mcp.JSONRPCNotification
	initialized   atomic.Bool
	logLevel      atomic.Value
	// updates learns of the resource updates written, which the call that
	// sent them waits for.
	updates *updateWrites
}

func (c *wsConn) SessionID() string { return c.id }

func (c *wsConn) Initialize() { c.initialized.Store(true) }

func (c *wsConn) Initialized() bool { return c.initialized.Load() }

func (c *wsConn) NotificationChannel() chan<- mcp.JSONRPCNotification { return c.notifications }

func (c *wsConn) SetLogLevel(level mcp.LoggingLevel) { c.logLevel.Store(level) }

func (c *wsConn) GetLogLevel() mcp.LoggingLevel {
	if l, ok := c.logLevel.Load().(mcp.LoggingLevel); ok {
		return l
	}
	return mcp.LoggingLevelError
}

var _ server.SessionWithLogging = (*wsConn)(nil)

// serve runs the connection until the client closes it or it fails, then
// ends the MCP session: the router's unregister hook closes the browser
// sessions it created (or, at shutdown, only forgets them).
func (c *wsConn) serve(base context.Context) {
	if err := c.srv.RegisterSession(base, c); err != nil {
		_ = c.conn.Close(websocket.StatusInternalError, "registering the MCP session failed")
		return
	}
	c.log.Debug("MCP over WebSocket connected", "mcp_session", c.id)
	ctx, cancel := context.WithCancel(c.srv.WithContext(base, c))
	var wg sync.WaitGroup
	wg.Go(func() { c.forwardNotifications(ctx) })
	reason := c.readLoop(ctx, &wg)
	// Calls in flight end with the connection, as an HTTP request's do
	// when its client goes away.
	cancel()
	wg.Wait()
	c.srv.UnregisterSession(base, c.id)
	_ = c.conn.CloseNow()
	c.log.Debug("MCP over WebSocket disconnected", "mcp_session", c.id, "reason", reason)
}

// readLoop serves the client's messages until reading fails, and returns
// why it stopped.
func (c *wsConn) readLoop(ctx context.Context, wg *sync.WaitGroup) string {
	slots := make(chan struct{}, wsMaxInFlight)
	for {
		typ, data, err := c.conn.Read(ctx)
		if err != nil {
			if s := websocket.CloseStatus(err); s != -1 {
				return "closed by the client: " + s.String()
			}
			return err.Error()
		}
		if typ != websocket.MessageText {
			_ = c.conn.Close(websocket.StatusUnsupportedData, "MCP messages are text frames of JSON-RPC")
			return "a binary frame"
		}
		if !utf8.Valid(data) {
			// As /mcp refuses it: decoding would turn it into other text
			// than the client sent.
			c.write(ctx, createRPCError(nil, mcp.PARSE_ERROR, "message is not valid UTF-8"))
			continue
		}
		var head struct {
			ID     any    `json:"id"`
			Method string `json:"method"`
		}
		if json.Unmarshal(data, &head) != nil || head.ID == nil || head.Method == "" {
			// Notifications (and garbage, answered with a parse error)
			// are served in order, before the next message is read.
			c.handle(ctx, head.ID, data)
			continue
		}
		// Requests run on their own: a long browser call must not hold
		// the pings and the other calls behind it.
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			return ctx.Err().Error()
		}
		wg.Go(func() {
			defer func() { <-slots }()
			c.handle(ctx, head.ID, data)
		})
	}
}

// handle serves one message and writes its answer, if it has one.
func (c *wsConn) handle(ctx context.Context, id any, data []byte) {
	var resp any
	func() {
		defer func() {
			if p := recover(); p != nil {
				c.log.Info("panic serving an MCP message over WebSocket", "mcp_session", c.id, "panic", fmt.Sprint(p))
				if id != nil {
					resp = createRPCError(id, mcp.INTERNAL_ERROR, fmt.Sprintf("internal error: %v", p))
				}
			}
		}()
		if r := c.srv.HandleMessage(ctx, data); r != nil {
			resp = r
		}
	}()
	if resp != nil {
		c.write(ctx, resp)
	}
}

// forwardNotifications sends what mcp-go queues for this client (progress,
// list changes, resource updates, log messages) until ctx ends.
func (c *wsConn) forwardNotifications(ctx context.Context) {
	for {
		select {
		case n := <-c.notifications:
			c.write(ctx, n)
		case <-ctx.Done():
			return
		}
	}
}

// write sends one JSON-RPC message as one text frame. A failed write ends
// the connection's reads too (the library closes it), so it is not
// reported further.
func (c *wsConn) write(ctx context.Context, msg any) {
	data, err := json.Marshal(msg)
	if err != nil {
		c.log.Info("encoding an MCP message for WebSocket", "mcp_session", c.id, "err", err)
		return
	}
	// An answer is still written after its call's context ended with the
	// connection's reads: the write fails then, harmlessly.
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), wsWriteBudget)
	defer cancel()
	if err := c.conn.Write(wctx, websocket.MessageText, fixCodes(data)); err != nil && !errors.Is(err, context.Canceled) {
		c.log.Debug("writing to an MCP client over WebSocket", "mcp_session", c.id, "err", err)
	}
	if c.updates != nil {
		c.updates.wrote(c.id, data)
	}
}

// createRPCError is a JSON-RPC error answer the transport makes itself.
func createRPCError(id any, code int, msg string) mcp.JSONRPCError {
	return mcp.JSONRPCError{JSONRPC: mcp.JSONRPC_VERSION, ID: mcp.NewRequestId(id), Error: mcp.NewJSONRPCErrorDetails(code, msg, nil)}
}
