package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/catalog"
)

// serveWS runs h at /mcp and its WebSocket handler at /ws on a loopback
// test server, and returns the ws:// URL of /ws.
func serveWS(t *testing.T, h *HTTPHandler) string {
	t.Helper()
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	mux.Handle("/ws", h.WebSocket())
	ts := httptest.NewServer(mux)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = h.Close(ctx)
		ts.Close()
	})
	return "ws" + strings.TrimPrefix(ts.URL, "http") + "/ws"
}

// wsClient is one MCP client over WebSocket speaking raw JSON-RPC: what
// the server sends is read by one goroutine, answers matched to requests
// by id, notifications kept in order.
type wsClient struct {
	conn *websocket.Conn
	next int

	mu            sync.Mutex
	waiting       map[string]chan json.RawMessage
	notifications []string // methods, in arrival order
	notified      chan struct{}
	// closed is the close status the server ended the connection with
	// (-1 until it did), and done is closed then.
	closed websocket.StatusCode
	done   chan struct{}
}

// rpcAnswer is a JSON-RPC answer, the parts the tests read.
type rpcAnswer struct {
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func dialWS(t *testing.T, url string, subprotocols ...string) *wsClient {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, resp, err := websocket.Dial(ctx, url, &websocket.DialOptions{Subprotocols: subprotocols})
	if err != nil {
		t.Fatalf("dial %s: %v (%+v)", url, err, resp)
	}
	c := &wsClient{conn: conn, waiting: map[string]chan json.RawMessage{}, notified: make(chan struct{}, 100), closed: -1, done: make(chan struct{})}
	go c.read()
	t.Cleanup(func() { _ = conn.CloseNow() })
	return c
}

func (c *wsClient) read() {
	defer close(c.done)
	for {
		_, data, err := c.conn.Read(context.Background())
		if err != nil {
			c.mu.Lock()
			c.closed = websocket.CloseStatus(err)
			c.mu.Unlock()
			return
		}
		var head struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		_ = json.Unmarshal(data, &head)
		c.mu.Lock()
		switch {
		case head.Method != "":
			c.notifications = append(c.notifications, head.Method)
			c.notified <- struct{}{}
		case c.waiting[string(head.ID)] != nil:
			c.waiting[string(head.ID)] <- data
			delete(c.waiting, string(head.ID))
		}
		c.mu.Unlock()
	}
}

// send writes one text frame.
func (c *wsClient) send(t *testing.T, msg string) {
	t.Helper()
	if err := c.conn.Write(context.Background(), websocket.MessageText, []byte(msg)); err != nil {
		t.Fatalf("write: %v", err)
	}
}

// rpc sends a request and waits for its answer.
func (c *wsClient) rpc(t *testing.T, method string, params any) rpcAnswer {
	t.Helper()
	c.mu.Lock()
	c.next++
	id := fmt.Sprint(c.next)
	ch := make(chan json.RawMessage, 1)
	c.waiting[id] = ch
	c.mu.Unlock()
	msg, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": c.next, "method": method, "params": params})
	if err != nil {
		t.Fatal(err)
	}
	c.send(t, string(msg))
	select {
	case data := <-ch:
		var a rpcAnswer
		if err := json.Unmarshal(data, &a); err != nil {
			t.Fatalf("%s answer %s: %v", method, data, err)
		}
		return a
	case <-c.done:
		t.Fatalf("%s: the connection closed (%v) before the answer", method, c.closeStatus())
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: no answer within 10s", method)
	}
	return rpcAnswer{}
}

func (c *wsClient) initialize(t *testing.T) {
	t.Helper()
	a := c.rpc(t, "initialize", map[string]any{"protocolVersion": mcp.ProtocolVersion20251125, "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "ws-test", "version": "1"}})
	if a.Error != nil {
		t.Fatalf("initialize: %+v", a.Error)
	}
	c.send(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

// callTool calls a tool and returns its text and isError.
func (c *wsClient) callTool(t *testing.T, name string, args map[string]any) (string, bool) {
	t.Helper()
	a := c.rpc(t, "tools/call", map[string]any{"name": name, "arguments": args})
	if a.Error != nil {
		t.Fatalf("%s: %+v", name, a.Error)
	}
	var res mcp.CallToolResult
	if err := json.Unmarshal(a.Result, &res); err != nil {
		t.Fatalf("%s result %s: %v", name, a.Result, err)
	}
	var text strings.Builder
	for _, ct := range res.Content {
		if tc, ok := ct.(mcp.TextContent); ok {
			text.WriteString(tc.Text)
		}
	}
	return text.String(), res.IsError
}

func (c *wsClient) closeStatus() websocket.StatusCode {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closed
}

// waitClosed waits for the server to end the connection.
func (c *wsClient) waitClosed(t *testing.T) websocket.StatusCode {
	t.Helper()
	select {
	case <-c.done:
		return c.closeStatus()
	case <-time.After(10 * time.Second):
		t.Fatal("the server did not close the connection within 10s")
		return -1
	}
}

// waitFor polls cond until it holds, failing after 10s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 10s", what)
		}
	}
}

// TestWSConnectionIsOneClient: each connection gets its own default
// browser session and sees only its own sessions; closing a connection
// closes the sessions it created and nothing of the other's.
func TestWSConnectionIsOneClient(t *testing.T) {
	b := &fakeBackend{}
	h := NewHTTPHandler(b, b, HTTPConfig{Logger: quiet()})
	url := serveWS(t, h)
	one, two := dialWS(t, url, WSSubprotocol), dialWS(t, url, WSSubprotocol)
	one.initialize(t)
	two.initialize(t)

	nav := map[string]any{"url": "http://127.0.0.1/"}
	var wg sync.WaitGroup
	for range 3 {
		for _, c := range []*wsClient{one, two} {
			wg.Go(func() {
				if text, isErr := c.callTool(t, "browser_navigate", nav); isErr {
					t.Errorf("navigate: %s", text)
				}
			})
		}
	}
	wg.Wait()
	created, _, calls := b.snapshot()
	if len(created) != 2 {
		t.Fatalf("created %v: want one default session per connection", created)
	}
	perSession := map[string]int{}
	for _, c := range calls {
		perSession[c.Session]++
	}
	if diff := cmp.Diff(map[string]int{created[0]: 3, created[1]: 3}, perSession); diff != "" {
		t.Errorf("calls per browser session (-want +got):\n%s", diff)
	}

	listed := func(c *wsClient) []string {
		text, isErr := c.callTool(t, "list_sessions", nil)
		var got struct {
			Sessions []struct {
				ID string `json:"session_id"`
			} `json:"sessions"`
		}
		if err := json.Unmarshal([]byte(text), &got); isErr || err != nil {
			t.Fatalf("list_sessions: %s (%v)", text, err)
		}
		var ids []string
		for _, s := range got.Sessions {
			ids = append(ids, s.ID)
		}
		return ids
	}
	a, bs := listed(one), listed(two)
	if len(a) != 1 || len(bs) != 1 || a[0] == bs[0] {
		t.Fatalf("list_sessions: %v and %v, want one session each, not the same", a, bs)
	}

	if err := one.conn.Close(websocket.StatusNormalClosure, ""); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the closed connection's session closed", func() bool {
		_, closed, _ := b.snapshot()
		return len(closed) > 0
	})
	if _, closed, _ := b.snapshot(); !slices.Equal(closed, a) {
		t.Errorf("closed %v, want only %v", closed, a)
	}
	if got := listed(two); !slices.Equal(got, bs) {
		t.Errorf("the other connection lists %v after the close, want %v", got, bs)
	}
}

// TestWSHandshake: the subprotocol offered decides; a request that is no
// WebSocket handshake is told where MCP over HTTP is.
func TestWSHandshake(t *testing.T) {
	b := &fakeBackend{}
	url := serveWS(t, NewHTTPHandler(b, b, HTTPConfig{Logger: quiet()}))
	for _, tc := range []struct {
		name    string
		offered []string
		want    string // the subprotocol agreed
	}{
		{"mcp", []string{"mcp"}, "mcp"},
		{"mcp among others", []string{"graphql-ws", "mcp"}, "mcp"},
		{"none offered", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := dialWS(t, url, tc.offered...)
			if got := c.conn.Subprotocol(); got != tc.want {
				t.Errorf("subprotocol %q, want %q", got, tc.want)
			}
			c.initialize(t)
			if a := c.rpc(t, "tools/list", nil); a.Error != nil || !strings.Contains(string(a.Result), "browser_navigate") {
				t.Errorf("tools/list: %s %+v", a.Result, a.Error)
			}
		})
	}

	t.Run("only other subprotocols", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, resp, err := websocket.Dial(ctx, url, &websocket.DialOptions{Subprotocols: []string{"graphql-ws"}})
		if err == nil || resp == nil || resp.StatusCode != http.StatusBadRequest {
			t.Fatalf("dial = %v, %+v: want 400", err, resp)
		}
	})

	httpURL := "http" + strings.TrimPrefix(url, "ws")
	for _, method := range []string{http.MethodGet, http.MethodPost} {
		t.Run("plain "+method, func(t *testing.T) {
			resp := sendHTTP(t, method, httpURL, "", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
			defer resp.Body.Close()
			var body rpcAnswer
			derr := json.NewDecoder(resp.Body).Decode(&body)
			if resp.StatusCode != http.StatusUpgradeRequired || derr != nil || body.Error == nil || !strings.Contains(body.Error.Message, "/mcp") {
				t.Errorf("%s = %d, %+v (%v): want 426 and a JSON-RPC error naming /mcp", method, resp.StatusCode, body.Error, derr)
			}
		})
	}
}

// TestWSFrames: what a connection does with frames that are no MCP
// message: a bad one is answered and the connection goes on; a binary or
// oversize one ends it with the close code that says why.
func TestWSFrames(t *testing.T) {
	b := &fakeBackend{}
	url := serveWS(t, NewHTTPHandler(b, b, HTTPConfig{Logger: quiet(), MaxBodyBytes: 1 << 10}))

	t.Run("invalid UTF-8 and bad JSON are answered", func(t *testing.T) {
		c := dialWS(t, url, WSSubprotocol)
		c.initialize(t)
		for _, bad := range []string{
			"{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ping\",\"params\":{\"x\":\"\xff\"}}",
			`{"jsonrpc":"2.0","id":8,"method":`,
		} {
			c.mu.Lock()
			ch := make(chan json.RawMessage, 1)
			c.waiting["null"] = ch // neither message's id can be read
			c.mu.Unlock()
			c.send(t, bad)
			var a rpcAnswer
			select {
			case data := <-ch:
				if err := json.Unmarshal(data, &a); err != nil {
					t.Fatal(err)
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("no answer to %q", bad)
			}
			if a.Error == nil || a.Error.Code != mcp.PARSE_ERROR {
				t.Errorf("%q: %+v, want a parse error", bad, a.Error)
			}
		}
		if got := c.rpc(t, "ping", nil); got.Error != nil {
			t.Errorf("ping after a bad message: %+v", got.Error)
		}
	})

	for _, tc := range []struct {
		name string
		typ  websocket.MessageType
		msg  string
		want websocket.StatusCode
	}{
		{"binary frame", websocket.MessageBinary, `{"jsonrpc":"2.0","id":1,"method":"ping"}`, websocket.StatusUnsupportedData},
		{"over PROXY_MAX_BODY_BYTES", websocket.MessageText, `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"` + strings.Repeat("a", 2<<10) + `"}}`, websocket.StatusMessageTooBig},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := dialWS(t, url, WSSubprotocol)
			if err := c.conn.Write(context.Background(), tc.typ, []byte(tc.msg)); err != nil {
				t.Fatal(err)
			}
			if got := c.waitClosed(t); got != tc.want {
				t.Errorf("closed with %v, want %v", got, tc.want)
			}
		})
	}
}

// TestWSNotificationsReachTheSocket: what mcp-go sends a client outside of
// an answer (here a list change) is written to its connection.
func TestWSNotificationsReachTheSocket(t *testing.T) {
	b := &fakeBackend{}
	h := NewHTTPHandler(b, b, HTTPConfig{Logger: quiet()})
	c := dialWS(t, serveWS(t, h), WSSubprotocol)
	c.initialize(t)
	// The ping answered proves notifications/initialized was served
	// before it (notifications are served in order).
	if a := c.rpc(t, "ping", nil); a.Error != nil {
		t.Fatal(a.Error)
	}
	h.mu.Lock()
	srv := h.srv
	h.mu.Unlock()
	srv.MCPServer().SendNotificationToAllClients(string(mcp.MethodNotificationToolsListChanged), nil)
	select {
	case <-c.notified:
	case <-time.After(10 * time.Second):
		t.Fatal("no notification within 10s")
	}
	c.mu.Lock()
	got := slices.Clone(c.notifications)
	c.mu.Unlock()
	if diff := cmp.Diff([]string{string(mcp.MethodNotificationToolsListChanged)}, got); diff != "" {
		t.Errorf("notifications (-want +got):\n%s", diff)
	}
}

// TestWSCloseKeepsBrowserSessions: at shutdown the connections end but the
// browser sessions stay, resumable; a new connection is refused.
func TestWSCloseKeepsBrowserSessions(t *testing.T) {
	b := &fakeBackend{}
	h := NewHTTPHandler(b, b, HTTPConfig{Logger: quiet()})
	url := serveWS(t, h)
	c := dialWS(t, url, WSSubprotocol)
	c.initialize(t)
	if text, isErr := c.callTool(t, "browser_navigate", map[string]any{"url": "http://127.0.0.1/"}); isErr {
		t.Fatal(text)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := h.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if got := c.waitClosed(t); got != websocket.StatusGoingAway {
		t.Errorf("closed with %v, want %v", got, websocket.StatusGoingAway)
	}
	if _, closed, _ := b.snapshot(); len(closed) != 0 {
		t.Errorf("shutdown closed browser sessions %v; they must stay resumable", closed)
	}
	dctx, dcancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer dcancel()
	_, resp, err := websocket.Dial(dctx, url, &websocket.DialOptions{Subprotocols: []string{WSSubprotocol}})
	if err == nil || resp == nil || resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("dial after Close = %v, %+v: want 503", err, resp)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		t.Error("dial after Close hung")
	}
}

// TestWSIdentityIsNotAnMCPSessionID: the id a connection acts under is no
// Mcp-Session-Id: sent to /mcp (by someone who read it in a debug log) it
// is refused as an unknown one, and the connection's sessions stay its own.
func TestWSIdentityIsNotAnMCPSessionID(t *testing.T) {
	b := &fakeBackend{}
	h := NewHTTPHandler(b, b, HTTPConfig{Logger: quiet()})
	wsURL := serveWS(t, h)
	mcpURL := "http" + strings.TrimSuffix(strings.TrimPrefix(wsURL, "ws"), "/ws") + "/mcp"
	c := dialWS(t, wsURL, WSSubprotocol)
	c.initialize(t)
	if text, isErr := c.callTool(t, "browser_navigate", map[string]any{"url": "http://127.0.0.1/"}); isErr {
		t.Fatal(text)
	}
	h.wsMu.Lock()
	var id string
	for conn := range h.wsConns {
		id = conn.id
	}
	h.wsMu.Unlock()
	if id == "" || h.DefaultSessionOf(id) == "" {
		t.Fatalf("connection id %q with default %q: want both", id, h.DefaultSessionOf(id))
	}
	for _, body := range []string{
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"list_sessions","arguments":{}}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/list"}`,
	} {
		resp := sendHTTP(t, http.MethodPost, mcpURL, id, body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("POST /mcp with the connection's id = %d, want 404", resp.StatusCode)
		}
	}
	resp := sendHTTP(t, http.MethodDelete, mcpURL, id, "")
	resp.Body.Close()
	if _, closed, _ := b.snapshot(); resp.StatusCode != http.StatusNotFound || len(closed) != 0 {
		t.Errorf("DELETE /mcp with the connection's id = %d, closed %v: want 404 and nothing closed", resp.StatusCode, closed)
	}
}

// TestWSClientToolsets: the endpoint URL chooses a connection's tool
// groups as on /mcp; an unknown group refuses the handshake.
func TestWSClientToolsets(t *testing.T) {
	for _, tc := range []struct {
		query string
		want  []string
	}{
		{"", []string{"browser_navigate", catalog.ToolCloseSession, catalog.ToolCreateSession, catalog.ToolGetConsole, catalog.ToolGetContent, catalog.ToolListProfiles, catalog.ToolListSessions, catalog.ToolRequestHuman, catalog.ToolResumeSession, catalog.ToolSaveProfile}},
		{"?toolsets=storage,session", []string{"browser_localstorage_get", catalog.ToolCloseSession, catalog.ToolCreateSession, catalog.ToolListProfiles, catalog.ToolListSessions, catalog.ToolRequestHuman, catalog.ToolResumeSession, catalog.ToolSaveProfile}},
	} {
		t.Run(tc.query, func(t *testing.T) {
			b := &fakeBackend{tools: groupedTools}
			c := dialWS(t, serveWS(t, NewHTTPHandler(b, b, HTTPConfig{Logger: quiet()}))+tc.query, WSSubprotocol)
			c.initialize(t)
			a := c.rpc(t, "tools/list", nil)
			var res mcp.ListToolsResult
			if a.Error != nil || json.Unmarshal(a.Result, &res) != nil {
				t.Fatalf("tools/list: %s %+v", a.Result, a.Error)
			}
			var names []string
			for _, tl := range res.Tools {
				names = append(names, tl.Name)
			}
			slices.Sort(names)
			if diff := cmp.Diff(tc.want, names); diff != "" {
				t.Errorf("tools/list (-want +got):\n%s", diff)
			}
		})
	}
	t.Run("unknown group", func(t *testing.T) {
		url := serveWS(t, NewHTTPHandler(&fakeBackend{}, &fakeBackend{}, HTTPConfig{Logger: quiet()}))
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, resp, err := websocket.Dial(ctx, url+"?toolsets=storage,cookies", &websocket.DialOptions{Subprotocols: []string{WSSubprotocol}})
		if err == nil || resp == nil || resp.StatusCode != http.StatusBadRequest {
			t.Errorf("dial = %v, %+v: want 400", err, resp)
		}
	})
}
