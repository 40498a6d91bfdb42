package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/catalog"
)

// quiet keeps the test output to failures.
func quiet() *slog.Logger { return slog.New(slog.DiscardHandler) }

// snapshot returns what the fake saw, under its lock.
func (b *fakeBackend) snapshot() (created, closed []string, calls []fakeCall) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for id := range b.closed {
		closed = append(closed, id)
	}
	slices.Sort(closed)
	return slices.Clone(b.created), closed, slices.Clone(b.calls)
}

// serveHTTP runs h on a loopback test server and returns the /mcp URL.
func serveHTTP(t *testing.T, h *HTTPHandler) string {
	t.Helper()
	ts := httptest.NewServer(h)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = h.Close(ctx)
		ts.Close()
	})
	return ts.URL + "/mcp"
}

// httpClient is one MCP session over Streamable HTTP.
type httpClient struct {
	*client.Client
	tr *transport.StreamableHTTP
}

func dialHTTP(t *testing.T, url string) *httpClient {
	t.Helper()
	tr, err := transport.NewStreamableHTTP(url)
	if err != nil {
		t.Fatal(err)
	}
	c := client.NewClient(tr, client.WithProtocolVersion(mcp.ProtocolVersion20251125))
	startAndInitialize(t, c)
	if tr.GetSessionId() == "" {
		t.Fatal("initialize returned no Mcp-Session-Id")
	}
	return &httpClient{Client: c, tr: tr}
}

// callHTTP is call for a client over HTTP; a transport error is returned,
// not fatal, for the tests that expect one.
func callHTTP(c *httpClient, tool string, args map[string]any) (string, bool, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req := mcp.CallToolRequest{}
	req.Params.Name = tool
	req.Params.Arguments = args
	res, err := c.CallTool(ctx, req)
	if err != nil {
		return "", false, err
	}
	if len(res.Content) == 0 {
		return "", res.IsError, nil
	}
	return res.Content[0].(mcp.TextContent).Text, res.IsError, nil
}

// step is one tool call of a scripted MCP session; "$default" in a
// session_id stands for the default session created so far.
type step struct {
	tool string
	args map[string]any
}

func TestHTTPDefaultSessionIsLazyAndClosedOnDelete(t *testing.T) {
	const explicit = "99999999-9999-4999-8999-999999999999"
	nav := step{"browser_navigate", map[string]any{"url": "http://127.0.0.1/"}}
	for _, tc := range []struct {
		name  string
		steps []step
		// wantCreated browser sessions; wantClosed after DELETE (indexes
		// into the created ones).
		wantCreated int
		wantClosed  []int
	}{
		{name: "no tool call", wantCreated: 0},
		{name: "proxy tools only", steps: []step{{catalog.ToolListSessions, nil}, {catalog.ToolGetConsole, map[string]any{"ref_id": "r"}}}, wantCreated: 0},
		{name: "explicit session only", steps: []step{{"browser_navigate", map[string]any{"url": "http://127.0.0.1/", "session_id": explicit}}}, wantCreated: 0},
		{name: "first browser call creates it", steps: []step{nav, nav, nav}, wantCreated: 1, wantClosed: []int{0}},
		{name: "closed default is replaced, the new one closed on DELETE",
			steps:       []step{nav, {catalog.ToolCloseSession, map[string]any{"session_id": "$default"}}, nav},
			wantCreated: 2, wantClosed: []int{0, 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := &fakeBackend{}
			h := NewHTTPHandler(b, b, HTTPConfig{Logger: quiet()})
			c := dialHTTP(t, serveHTTP(t, h))
			mcpID := c.tr.GetSessionId()
			for _, st := range tc.steps {
				args := map[string]any{}
				for k, v := range st.args {
					if v == "$default" {
						v = h.DefaultSessionOf(mcpID)
					}
					args[k] = v
				}
				if text, isErr, err := callHTTP(c, st.tool, args); err != nil || (isErr && st.tool != catalog.ToolGetConsole) {
					t.Fatalf("%s: %q %v", st.tool, text, err)
				}
			}
			created, _, calls := b.snapshot()
			if len(created) != tc.wantCreated {
				t.Fatalf("created %v, want %d sessions", created, tc.wantCreated)
			}
			if tc.wantCreated > 0 && h.DefaultSessionOf(mcpID) != created[len(created)-1] {
				t.Errorf("default = %q, want the last created %s", h.DefaultSessionOf(mcpID), created[len(created)-1])
			}
			for _, call := range calls {
				if strings.Contains(call.Params, "session_id") {
					t.Errorf("session_id forwarded to the browser: %+v", call)
				}
			}

			if err := c.Close(); err != nil { // sends DELETE
				t.Fatal(err)
			}
			_, closed, _ := b.snapshot()
			var want []string
			for _, i := range tc.wantClosed {
				want = append(want, created[i])
			}
			if diff := cmp.Diff(want, closed); diff != "" {
				t.Errorf("closed after DELETE (-want +got):\n%s", diff)
			}
			if got := h.DefaultSessionOf(mcpID); got != "" {
				t.Errorf("default of the ended MCP session is still %q", got)
			}
		})
	}
}

func TestHTTPMCPSessionsGetTheirOwnDefaults(t *testing.T) {
	b := &fakeBackend{}
	h := NewHTTPHandler(b, b, HTTPConfig{Logger: quiet()})
	url := serveHTTP(t, h)
	one, two := dialHTTP(t, url), dialHTTP(t, url)
	t.Cleanup(func() { two.Close() })
	if one.tr.GetSessionId() == two.tr.GetSessionId() {
		t.Fatalf("both clients got Mcp-Session-Id %s", one.tr.GetSessionId())
	}

	// Concurrent first calls from both: one browser session each.
	var wg sync.WaitGroup
	for range 4 {
		for _, c := range []*httpClient{one, two} {
			wg.Go(func() {
				if text, isErr, err := callHTTP(c, "browser_navigate", map[string]any{"url": "http://127.0.0.1/"}); err != nil || isErr {
					t.Errorf("navigate: %q %v", text, err)
				}
			})
		}
	}
	wg.Wait()
	d1, d2 := h.DefaultSessionOf(one.tr.GetSessionId()), h.DefaultSessionOf(two.tr.GetSessionId())
	created, _, calls := b.snapshot()
	if len(created) != 2 || d1 == "" || d2 == "" || d1 == d2 {
		t.Fatalf("created %v, defaults %q and %q: want one each", created, d1, d2)
	}
	perSession := map[string]int{}
	for _, c := range calls {
		perSession[c.Session]++
	}
	if diff := cmp.Diff(map[string]int{d1: 4, d2: 4}, perSession); diff != "" {
		t.Errorf("calls per browser session (-want +got):\n%s", diff)
	}

	// Ending one MCP session closes its default only; the other goes on.
	one.Close()
	if _, closed, _ := b.snapshot(); !slices.Equal(closed, []string{d1}) {
		t.Errorf("closed %v, want only %s", closed, d1)
	}
	if text, isErr, err := callHTTP(two, "browser_navigate", map[string]any{"url": "http://127.0.0.1/"}); err != nil || isErr {
		t.Errorf("the other MCP session after the DELETE: %q %v", text, err)
	}
	if got := h.DefaultSessionOf(two.tr.GetSessionId()); got != d2 {
		t.Errorf("the other MCP session's default changed to %q", got)
	}
}

func TestHTTPAbandonedMCPSessionIsSwept(t *testing.T) {
	b := &fakeBackend{}
	// mcp-go sweeps every max(TTL/2, 1s).
	h := NewHTTPHandler(b, b, HTTPConfig{Logger: quiet(), IdleTTL: 200 * time.Millisecond})
	c := dialHTTP(t, serveHTTP(t, h))
	t.Cleanup(func() { c.Close() })
	if _, _, err := callHTTP(c, "browser_navigate", map[string]any{"url": "http://127.0.0.1/"}); err != nil {
		t.Fatal(err)
	}
	created, _, _ := b.snapshot()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, closed, _ := b.snapshot(); slices.Equal(closed, created) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("default session %v not closed 10s after the MCP session went idle", created)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// The swept Mcp-Session-Id is refused (404), so the client knows to
	// start a new MCP session rather than silently getting a new browser.
	if _, _, err := callHTTP(c, "browser_navigate", map[string]any{"url": "http://127.0.0.1/"}); err == nil {
		t.Error("a call on a swept MCP session succeeded")
	}
	if created2, _, _ := b.snapshot(); len(created2) != 1 {
		t.Errorf("created %v after the sweep, want no new session", created2)
	}
}

func TestHTTPCloseKeepsBrowserSessions(t *testing.T) {
	b := &fakeBackend{}
	h := NewHTTPHandler(b, b, HTTPConfig{Logger: quiet()})
	url := serveHTTP(t, h)
	c := dialHTTP(t, url)
	if _, _, err := callHTTP(c, "browser_navigate", map[string]any{"url": "http://127.0.0.1/"}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := h.Close(ctx); err != nil {
		t.Fatal(err)
	}
	c.Close()
	if _, closed, _ := b.snapshot(); len(closed) != 0 {
		t.Errorf("shutdown closed browser sessions %v; they must stay resumable", closed)
	}
	resp, err := http.Post(url, "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("request after Close = %d, want 503", resp.StatusCode)
	}
}

// flakyTools fails its first catalogue fetch, as when no worker can start yet.
type flakyTools struct {
	fakeBackend
	mu    sync.Mutex
	calls int
}

func (f *flakyTools) Tools(ctx context.Context) ([]proxy.Tool, error) {
	f.mu.Lock()
	f.calls++
	n := f.calls
	f.mu.Unlock()
	if n == 1 {
		return nil, errors.New("no worker yet")
	}
	return f.fakeBackend.Tools(ctx)
}

// sendHTTP sends one raw request to /mcp, naming sessionID when not "".
func sendHTTP(t *testing.T, method, url, sessionID, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if sessionID != "" {
		req.Header.Set("Mcp-Session-Id", sessionID)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func TestHTTPRefusesBadRequests(t *testing.T) {
	b := &flakyTools{}
	url := serveHTTP(t, NewHTTPHandler(b, b, HTTPConfig{Logger: quiet(), MaxBodyBytes: 1 << 10}))
	initBody := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	for _, tc := range []struct {
		name, method, sessionID, body string
		want                          int
	}{
		{"catalogue not available yet", "POST", "", initBody, http.StatusServiceUnavailable},
		{"then it is", "POST", "", initBody, http.StatusOK},
		{"unknown Mcp-Session-Id", "POST", "mcp-session-6f1c1d2e-0000-4000-8000-000000000000", `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, http.StatusNotFound},
		{"no Mcp-Session-Id", "POST", "", `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, http.StatusNotFound},
		{"oversize body", "POST", "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"x":"` + strings.Repeat("a", 2<<10) + `"}}`, http.StatusBadRequest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := sendHTTP(t, tc.method, url, tc.sessionID, tc.body)
			defer resp.Body.Close()
			var body map[string]any
			_ = json.NewDecoder(resp.Body).Decode(&body)
			if resp.StatusCode != tc.want {
				t.Errorf("%s = %d %v, want %d", tc.name, resp.StatusCode, body, tc.want)
			}
			if tc.name == "oversize body" && body["error"] == nil {
				t.Errorf("oversize body answered %v, want a JSON-RPC error", body)
			}
		})
	}
}

// TestHTTPTransportErrors: the answers mcp-go's transport gets wrong are
// JSON-RPC errors with the right status: a method the transport does not
// have is 405 with Allow, and a DELETE that names no live MCP session 404
// (or 400 without the header), as any other request naming one is.
func TestHTTPTransportErrors(t *testing.T) {
	url := serveHTTP(t, NewHTTPHandler(&fakeBackend{}, &fakeBackend{}, HTTPConfig{Logger: quiet()}))
	ended := dialHTTP(t, url)
	endedID := ended.tr.GetSessionId()
	if err := ended.Close(); err != nil { // DELETE
		t.Fatal(err)
	}
	live := dialHTTP(t, url).tr.GetSessionId()
	type answer struct {
		Status  int
		Allow   string
		RPCCode int
	}
	tests := []struct {
		name, method, sessionID string
		want                    answer
	}{
		{"PUT", http.MethodPut, "", answer{http.StatusMethodNotAllowed, allowedMethods, rpcTransportError}},
		{"PATCH with a live session", http.MethodPatch, live, answer{http.StatusMethodNotAllowed, allowedMethods, rpcTransportError}},
		{"OPTIONS", http.MethodOptions, "", answer{http.StatusMethodNotAllowed, allowedMethods, rpcTransportError}},
		{"DELETE unknown Mcp-Session-Id", http.MethodDelete, "mcp-session-6f1c1d2e-0000-4000-8000-000000000000", answer{http.StatusNotFound, "", rpcSessionNotFound}},
		{"DELETE malformed Mcp-Session-Id", http.MethodDelete, "x", answer{http.StatusNotFound, "", rpcSessionNotFound}},
		{"DELETE ended Mcp-Session-Id", http.MethodDelete, endedID, answer{http.StatusNotFound, "", rpcSessionNotFound}},
		{"DELETE no Mcp-Session-Id", http.MethodDelete, "", answer{http.StatusBadRequest, "", rpcTransportError}},
		{"POST ended Mcp-Session-Id", http.MethodPost, endedID, answer{http.StatusNotFound, "", 0}}, // mcp-go's own
		{"DELETE live Mcp-Session-Id", http.MethodDelete, live, answer{http.StatusOK, "", 0}},
		{"DELETE it again", http.MethodDelete, live, answer{http.StatusNotFound, "", rpcSessionNotFound}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp := sendHTTP(t, tc.method, url, tc.sessionID, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
			defer resp.Body.Close()
			got := answer{Status: resp.StatusCode, Allow: resp.Header.Get("Allow")}
			if strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
				var body struct {
					Error struct{ Code int } `json:"error"`
				}
				if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
					t.Fatalf("JSON answer: %v", err)
				}
				got.RPCCode = body.Error.Code
			} else if tc.want.RPCCode != 0 {
				t.Errorf("answered with Content-Type %q, want a JSON-RPC error", resp.Header.Get("Content-Type"))
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s /mcp (-want +got):\n%s", tc.method, diff)
			}
		})
	}
}
