package api

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/mcp"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/catalog"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/content"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/mcpserver"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/metrics"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/session"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/session/sessiontest"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/store"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/wire"
)

const testToken = "s3cret-token"

// answer is the status and error code of one response ("" for success).
type answer struct {
	Status int
	Code   string
}

// newRequest is httptest.NewRequest addressed to a loopback Host, as real
// clients of proxy-server send it (httptest's default, example.com, is
// refused by the Host check).
func newRequest(method, target string, body io.Reader) *http.Request {
	req := httptest.NewRequest(method, target, body)
	req.Host = "127.0.0.1:34501"
	return req
}

func send(t *testing.T, h http.Handler, method, target, body string, hdr map[string]string) answer {
	t.Helper()
	req := newRequest(method, target, strings.NewReader(body))
	for k, v := range hdr {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	got := answer{Status: rec.Code}
	if rec.Code >= 400 {
		var eb wire.ErrorBody
		if err := json.Unmarshal(rec.Body.Bytes(), &eb); err != nil || eb.Message == "" {
			t.Errorf("%s %s: error body %q is not the documented shape (%v)", method, target, rec.Body.String(), err)
		}
		got.Code = eb.Error
	}
	return got
}

func TestGuard(t *testing.T) {
	mounted := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	newSrv := func(opts ...Option) *Server {
		opts = append([]Option{WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))), WithMount("/mcp", mounted)}, opts...)
		return New(&fakeSessions{}, fakeContent{}, opts...)
	}
	open := newSrv(WithAllowedOrigins([]string{"https://app.example", "http://tools.example:8080/", "not an origin"}), WithAllowedHosts("10.0.0.5", "0.0.0.0"))
	locked := newSrv(WithAuthToken(testToken))
	bearer := map[string]string{"Authorization": "Bearer " + testToken}
	with := func(base map[string]string, k, v string) map[string]string {
		m := map[string]string{k: v}
		for bk, bv := range base {
			m[bk] = bv
		}
		return m
	}
	tests := []struct {
		name         string
		srv          *Server
		method, path string
		hdr          map[string]string
		want         answer
	}{
		{"no origin", open, "GET", "/sessions", nil, answer{200, ""}},
		{"loopback origin", open, "GET", "/sessions", map[string]string{"Origin": "http://127.0.0.1:3000"}, answer{200, ""}},
		{"localhost origin", open, "GET", "/sessions", map[string]string{"Origin": "https://localhost"}, answer{200, ""}},
		{"ipv6 loopback origin", open, "GET", "/sessions", map[string]string{"Origin": "http://[::1]:8080"}, answer{200, ""}},
		{"listed origin", open, "GET", "/sessions", map[string]string{"Origin": "https://APP.example:443"}, answer{200, ""}},
		{"listed origin with port", open, "GET", "/sessions", map[string]string{"Origin": "http://tools.example:8080"}, answer{200, ""}},
		{"evil origin", open, "POST", "/call", map[string]string{"Origin": "http://evil.example"}, answer{403, proxy.EORIGIN}},
		{"evil origin on mount", open, "POST", "/mcp", map[string]string{"Origin": "http://evil.example"}, answer{403, proxy.EORIGIN}},
		{"evil origin on health", open, "GET", "/health", map[string]string{"Origin": "http://evil.example"}, answer{403, proxy.EORIGIN}},
		{"listed origin other port", open, "GET", "/sessions", map[string]string{"Origin": "http://tools.example:9090"}, answer{403, proxy.EORIGIN}},
		{"listed origin other scheme", open, "GET", "/sessions", map[string]string{"Origin": "http://app.example"}, answer{403, proxy.EORIGIN}},
		{"loopback lookalike origin", open, "GET", "/sessions", map[string]string{"Origin": "http://127.0.0.1.evil.example"}, answer{403, proxy.EORIGIN}},
		{"null origin", open, "GET", "/sessions", map[string]string{"Origin": "null"}, answer{403, proxy.EORIGIN}},
		{"file origin", open, "GET", "/sessions", map[string]string{"Origin": "file://"}, answer{403, proxy.EORIGIN}},
		{"foreign host", open, "GET", "/sessions", map[string]string{"Host": "evil.example:34501"}, answer{403, proxy.EHOST}},
		{"foreign host on mount", open, "GET", "/mcp", map[string]string{"Host": "evil.example"}, answer{403, proxy.EHOST}},
		{"rebinding: host and origin", open, "POST", "/sessions", map[string]string{"Host": "evil.example:34501", "Origin": "http://evil.example:34501"}, answer{403, proxy.EHOST}},
		{"localhost host", open, "GET", "/sessions", map[string]string{"Host": "localhost:34501"}, answer{200, ""}},
		{"ipv6 host", open, "GET", "/sessions", map[string]string{"Host": "[::1]:34501"}, answer{200, ""}},
		{"bound host", open, "GET", "/sessions", map[string]string{"Host": "10.0.0.5:34501"}, answer{200, ""}},
		{"listed origin's host", open, "GET", "/sessions", map[string]string{"Host": "app.example"}, answer{200, ""}},
		{"unspecified is not a host", open, "GET", "/sessions", map[string]string{"Host": "0.0.0.0:34501"}, answer{403, proxy.EHOST}},
		{"open server needs no token", open, "POST", "/mcp", nil, answer{204, ""}},
		{"no token", locked, "GET", "/sessions", nil, answer{401, proxy.EUNAUTHORIZED}},
		{"no token on mount", locked, "POST", "/mcp", nil, answer{401, proxy.EUNAUTHORIZED}},
		{"no token on unknown path", locked, "GET", "/nowhere", nil, answer{401, proxy.EUNAUTHORIZED}},
		{"wrong token", locked, "GET", "/sessions", map[string]string{"Authorization": "Bearer nope"}, answer{401, proxy.EUNAUTHORIZED}},
		{"token prefix", locked, "GET", "/sessions", map[string]string{"Authorization": "Bearer " + testToken[:4]}, answer{401, proxy.EUNAUTHORIZED}},
		{"basic scheme", locked, "GET", "/sessions", map[string]string{"Authorization": "Basic " + testToken}, answer{401, proxy.EUNAUTHORIZED}},
		{"bare token", locked, "GET", "/sessions", map[string]string{"Authorization": testToken}, answer{401, proxy.EUNAUTHORIZED}},
		{"token", locked, "GET", "/sessions", bearer, answer{200, ""}},
		{"lower-case scheme", locked, "GET", "/sessions", map[string]string{"Authorization": "bearer " + testToken}, answer{200, ""}},
		{"token on mount", locked, "POST", "/mcp", bearer, answer{204, ""}},
		{"health open without token", locked, "GET", "/health", nil, answer{200, ""}},
		{"evil origin before token", locked, "GET", "/sessions", with(bearer, "Origin", "http://evil.example"), answer{403, proxy.EORIGIN}},
		{"no token and evil origin", locked, "GET", "/sessions", map[string]string{"Origin": "http://evil.example"}, answer{403, proxy.EORIGIN}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := send(t, tc.srv, tc.method, tc.path, "", tc.hdr)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s %s (-want +got):\n%s", tc.method, tc.path, diff)
			}
		})
	}
}

// dumpRows returns every row of every table, as text, by table name.
func dumpRows(t *testing.T, db *sql.DB) map[string][]string {
	t.Helper()
	ctx := context.Background()
	rows, err := db.QueryContext(ctx, `SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name`)
	if err != nil {
		t.Fatal(err)
	}
	var tables []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		tables = append(tables, n)
	}
	rows.Close()
	out := map[string][]string{}
	for _, tbl := range tables {
		rs, err := db.QueryContext(ctx, `SELECT * FROM "`+tbl+`"`)
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := rs.Columns()
		out[tbl] = []string{}
		for rs.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rs.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			out[tbl] = append(out[tbl], fmt.Sprintf("%q", vals))
		}
		rs.Close()
		sort.Strings(out[tbl])
	}
	return out
}

// mcpAnswer is what /mcp answered: the HTTP status; the JSON-RPC error code
// when the answer is a JSON-RPC error (0 otherwise); and, when it is a tool
// result with isError, the documented error code its text carries.
type mcpAnswer struct {
	Status    int
	RPCError  int
	ToolError string
}

// JSON-RPC error codes as mcp-go answers them on /mcp.
const (
	rpcParseError     = mcp.PARSE_ERROR      // -32700: not JSON (or over the body limit)
	rpcInvalidRequest = mcp.INVALID_REQUEST  // -32600: JSON, but not a JSON-RPC request
	rpcNoMethod       = mcp.METHOD_NOT_FOUND // -32601
	rpcInvalidParams  = mcp.INVALID_PARAMS   // -32602: params of the wrong shape, unknown tool
	// The transport errors the handler answers itself, with the codes of
	// the official TypeScript SDK's server.
	rpcTransportError  = -32000 // a method the transport does not have
	rpcSessionNotFound = -32001 // DELETE of an unknown or ended Mcp-Session-Id
)

// sendMCP posts one JSON-RPC body to /mcp with hdr and reads the answer.
func sendMCP(t *testing.T, h http.Handler, method, body string, hdr map[string]string) (mcpAnswer, http.Header) {
	t.Helper()
	req := newRequest(method, "/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range hdr {
		if v != "" {
			req.Header.Set(k, v)
		}
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	got := mcpAnswer{Status: rec.Code}
	data := rec.Body.Bytes()
	if strings.HasPrefix(rec.Header().Get("Content-Type"), "text/event-stream") {
		// One event: the JSON-RPC answer is its data line.
		for _, line := range bytes.Split(data, []byte("\n")) {
			if d, ok := bytes.CutPrefix(line, []byte("data: ")); ok {
				data = d
			}
		}
	}
	if !strings.Contains(rec.Header().Get("Content-Type"), "json") && !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/event-stream") {
		return got, rec.Header() // a plain HTTP error of the transport
	}
	var msg struct {
		Error *struct {
			Code int `json:"code"`
		} `json:"error"`
		Result *mcp.CallToolResult `json:"result"`
	}
	if err := json.Unmarshal(data, &msg); err != nil {
		t.Errorf("/mcp answered %d with %q: not JSON-RPC (%v)", rec.Code, data, err)
		return got, rec.Header()
	}
	if msg.Error != nil {
		got.RPCError = msg.Error.Code
	}
	if msg.Result != nil && msg.Result.IsError {
		var p mcpserver.Parsed
		for _, c := range msg.Result.Content {
			if tc, ok := c.(mcp.TextContent); ok {
				var err error
				if p, err = mcpserver.ParseAnswer(tc.Text); err != nil || p.ErrorCode == "" || p.ErrorMessage == "" {
					t.Errorf("tool error %q is not the documented compact answer (%v)", tc.Text, err)
				}
			}
		}
		got.ToolError = p.ErrorCode
	}
	return got, rec.Header()
}

// TestBadInputChangesNothing sends bad input to every endpoint of an API
// backed by the real session manager (fake workers) and a real database —
// /mcp is the real Streamable HTTP handler over the same manager, /metrics
// the real metrics handler: every answer carries the documented code and no
// stored row changes.
func TestBadInputChangesNothing(t *testing.T) {
	ctx := context.Background()
	dbPath := filepath.Join(t.TempDir(), "proxy.db")
	db, err := store.Open(ctx, dbPath)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	quiet := slog.New(slog.DiscardHandler)
	pid := 1000
	mgr := session.New(db, session.SpawnFunc(func(context.Context) (session.Worker, error) {
		pid++
		return sessiontest.New(pid, t.TempDir()), nil
	}), session.Options{MaxSessions: 4, CallTimeout: 10 * time.Second, Logger: quiet})
	t.Cleanup(func() {
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = mgr.Shutdown(sctx)
	})
	const maxBody = 64 << 10
	reader := content.New(db)
	mcpHTTP := mcpserver.NewHTTPHandler(mgr, reader, mcpserver.HTTPConfig{Logger: quiet})
	t.Cleanup(func() { _ = mcpHTTP.Close(context.Background()) })
	srv := New(mgr, reader, WithMaxBodyBytes(maxBody), WithAuthToken(testToken), WithLogger(quiet),
		WithMount("/metrics", metrics.New(metrics.Sources{}).Handler()),
		WithMount("/mcp", mcpHTTP))

	// The record: one active session with one call, one closed session.
	auth := map[string]string{"Authorization": "Bearer " + testToken}
	active, err := mgr.CreateSession(ctx)
	if err != nil {
		t.Fatal(err)
	}
	res, err := mgr.Call(ctx, proxy.CallRequest{SessionID: active.ID, Tool: "browser_snapshot"})
	if err != nil {
		t.Fatal(err)
	}
	ref := res.RefID
	closed, err := mgr.CreateSession(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := mgr.CloseSession(ctx, closed.ID); err != nil {
		t.Fatal(err)
	}
	// One initialised MCP session, as a client would have before sending
	// the bad requests below.
	initBody := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bad-input","version":"1"}}}`
	init, hdr := sendMCP(t, srv, "POST", initBody, auth)
	mcpSession := hdr.Get("Mcp-Session-Id")
	if init != (mcpAnswer{Status: 200}) || mcpSession == "" {
		t.Fatalf("MCP initialize = %+v, Mcp-Session-Id %q", init, mcpSession)
	}
	mcpHdr := map[string]string{"Authorization": auth["Authorization"], "Mcp-Session-Id": mcpSession, "Mcp-Protocol-Version": "2025-11-25"}
	if got, _ := sendMCP(t, srv, "POST", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, mcpHdr); got.Status != http.StatusAccepted {
		t.Fatalf("notifications/initialized = %+v", got)
	}
	// A closed session of that MCP session's own: the operator's sessions
	// above do not exist for it.
	mcpCtx := proxy.WithClient(ctx, mcpserver.MCPClientID(mcpSession))
	mcpClosed, err := mgr.CreateSession(mcpCtx)
	if err != nil {
		t.Fatal(err)
	}
	if err := mgr.CloseSession(mcpCtx, mcpClosed.ID); err != nil {
		t.Fatal(err)
	}

	reader2, err := sql.Open("sqlite", "file:"+dbPath+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { reader2.Close() })
	before := dumpRows(t, reader2)
	if len(before["sessions"]) != 3 || len(before["requests"]) != 1 || len(before["responses"]) != 1 {
		t.Fatalf("seed record is not as expected: %v", before)
	}

	const unknownID = "6f1c1d2e-0000-4000-8000-000000000000"
	call := func(fields string) string {
		return `{"session_id":"` + active.ID + `","tool":"browser_snapshot"` + fields + `}`
	}
	nest := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	deep := call(`,"params":{"a":` + nest(20000) + `}`)
	if len(deep) > maxBody {
		t.Fatalf("deep body is %d bytes, over the %d limit it is meant to stay under", len(deep), maxBody)
	}
	huge := call(`,"params":{"a":"` + strings.Repeat("x", maxBody) + `"}`)
	invalid := answer{400, proxy.EINVALID}
	tests := []struct {
		name, method, path, body string
		hdr                      map[string]string // added to auth; "Authorization": "" removes it
		want                     answer
	}{
		// wrong methods
		{"POST /health", "POST", "/health", "", nil, answer{405, proxy.EINVALID}},
		{"DELETE /tools", "DELETE", "/tools", "", nil, answer{405, proxy.EINVALID}},
		{"POST /tools", "POST", "/tools", "{}", nil, answer{405, proxy.EINVALID}},
		{"PUT /tools", "PUT", "/tools", "{}", nil, answer{405, proxy.EINVALID}},
		{"POST /metrics", "POST", "/metrics", "{}", nil, answer{405, proxy.EINVALID}},
		{"DELETE /metrics", "DELETE", "/metrics", "", nil, answer{405, proxy.EINVALID}},
		{"PUT /sessions", "PUT", "/sessions", "{}", nil, answer{405, proxy.EINVALID}},
		{"PATCH /sessions/{id}", "PATCH", "/sessions/" + active.ID, "{}", nil, answer{405, proxy.EINVALID}},
		{"GET /sessions/{id}/resume", "GET", "/sessions/" + active.ID + "/resume", "", nil, answer{405, proxy.EINVALID}},
		{"GET /call", "GET", "/call", "", nil, answer{405, proxy.EINVALID}},
		{"POST /content", "POST", "/content/" + ref, "{}", nil, answer{405, proxy.EINVALID}},
		{"DELETE /console", "DELETE", "/console/" + ref, "", nil, answer{405, proxy.EINVALID}},
		{"GET /credentials", "GET", "/credentials", "", nil, answer{405, proxy.EINVALID}},
		{"DELETE /credentials", "DELETE", "/credentials", "", nil, answer{405, proxy.EINVALID}},
		{"no endpoint", "POST", "/sessions/" + active.ID + "/delete", "", nil, answer{404, proxy.ENOENDPOINT}},

		// POST /sessions bodies
		{"create: malformed", "POST", "/sessions", `{`, nil, invalid},
		{"create: wrong type", "POST", "/sessions", `["a"]`, nil, invalid},
		{"create: unknown field", "POST", "/sessions", `{"name":"x"}`, nil, invalid},
		{"create: trailing data", "POST", "/sessions", `{} {}`, nil, invalid},
		{"create: invalid UTF-8", "POST", "/sessions", "{\"\xff\":1}", nil, invalid},
		{"create: huge", "POST", "/sessions", `{"x":"` + strings.Repeat("x", maxBody) + `"}`, nil, invalid},
		{"create: deep", "POST", "/sessions", nest(20000), nil, invalid},

		// sessions by id
		{"get: unknown id", "GET", "/sessions/" + unknownID, "", nil, answer{404, proxy.ESESSIONMISSING}},
		{"get: malformed id", "GET", "/sessions/not-a-uuid", "", nil, answer{404, proxy.ESESSIONMISSING}},
		{"get: invalid UTF-8 id", "GET", "/sessions/%FF%FE", "", nil, answer{404, proxy.ESESSIONMISSING}},
		{"close: unknown id", "DELETE", "/sessions/" + unknownID, "", nil, answer{404, proxy.ESESSIONMISSING}},
		{"close: malformed id", "DELETE", "/sessions/..%2F..%2Fetc", "", nil, answer{404, proxy.ESESSIONMISSING}},
		{"resume: unknown id", "POST", "/sessions/" + unknownID + "/resume", "", nil, answer{404, proxy.ESESSIONMISSING}},
		{"resume: malformed id", "POST", "/sessions/" + strings.Repeat("a", 5000) + "/resume", "", nil, answer{404, proxy.ESESSIONMISSING}},
		{"resume: closed", "POST", "/sessions/" + closed.ID + "/resume", "", nil, answer{410, proxy.ESESSIONCLOSED}},
		{"resume: bad body", "POST", "/sessions/" + active.ID + "/resume", `{"restore":true}`, nil, invalid},
		{"resume: huge body", "POST", "/sessions/" + active.ID + "/resume", `{"x":"` + strings.Repeat("x", maxBody) + `"}`, nil, invalid},

		// POST /call
		{"call: empty", "POST", "/call", ``, nil, invalid},
		{"call: null", "POST", "/call", `null`, nil, invalid},
		{"call: array", "POST", "/call", `[]`, nil, invalid},
		{"call: malformed", "POST", "/call", `{"session_id":`, nil, invalid},
		{"call: session_id number", "POST", "/call", `{"session_id":1,"tool":"browser_snapshot"}`, nil, invalid},
		{"call: tool object", "POST", "/call", `{"session_id":"` + active.ID + `","tool":{}}`, nil, invalid},
		{"call: params string", "POST", "/call", call(`,"params":"x"`), nil, invalid},
		{"call: params array", "POST", "/call", call(`,"params":[1]`), nil, invalid},
		{"call: param of the wrong type", "POST", "/call", `{"session_id":"` + active.ID + `","tool":"browser_navigate","params":{"url":42}}`, nil, invalid},
		{"call: required param missing", "POST", "/call", `{"session_id":"` + active.ID + `","tool":"browser_navigate","params":{}}`, nil, invalid},
		{"call: request_id number", "POST", "/call", call(`,"request_id":7`), nil, invalid},
		{"call: request_id malformed", "POST", "/call", call(`,"request_id":"nope"`), nil, invalid},
		{"call: request_id reused", "POST", "/call", call(`,"request_id":"` + ref + `"`), nil, invalid},
		{"call: missing session_id", "POST", "/call", `{"tool":"browser_snapshot"}`, nil, invalid},
		{"call: missing tool", "POST", "/call", `{"session_id":"` + active.ID + `"}`, nil, invalid},
		{"call: unknown field", "POST", "/call", call(`,"sesion":"x"`), nil, invalid},
		{"call: trailing data", "POST", "/call", call(``) + `x`, nil, invalid},
		{"call: invalid UTF-8 in params", "POST", "/call", call(",\"params\":{\"a\":\"\xc3\x28\"}"), nil, invalid},
		{"call: huge", "POST", "/call", huge, nil, invalid},
		{"call: deeply nested", "POST", "/call", deep, nil, invalid},
		{"call: unknown tool", "POST", "/call", `{"session_id":"` + active.ID + `","tool":"browser_rm_rf"}`, nil, answer{404, proxy.ETOOLMISSING}},
		{"call: unknown session", "POST", "/call", `{"session_id":"` + unknownID + `","tool":"browser_snapshot"}`, nil, answer{404, proxy.ESESSIONMISSING}},
		{"call: malformed session", "POST", "/call", `{"session_id":"../x","tool":"browser_snapshot"}`, nil, answer{404, proxy.ESESSIONMISSING}},
		{"call: closed session", "POST", "/call", `{"session_id":"` + closed.ID + `","tool":"browser_snapshot"}`, nil, answer{410, proxy.ESESSIONCLOSED}},

		// POST /call/validate: what a call would get before its session
		{"validate: malformed", "POST", "/call/validate", `{"tool":`, nil, invalid},
		{"validate: session_id given", "POST", "/call/validate", `{"session_id":"` + active.ID + `","tool":"browser_snapshot"}`, nil, invalid},
		{"validate: missing tool", "POST", "/call/validate", `{}`, nil, invalid},
		{"validate: param of the wrong type", "POST", "/call/validate", `{"tool":"browser_navigate","params":{"url":42}}`, nil, invalid},
		{"validate: required param missing", "POST", "/call/validate", `{"tool":"browser_navigate","params":{}}`, nil, invalid},
		{"validate: params array", "POST", "/call/validate", `{"tool":"browser_navigate","params":[]}`, nil, invalid},
		{"validate: unknown tool", "POST", "/call/validate", `{"tool":"browser_rm_rf"}`, nil, answer{404, proxy.ETOOLMISSING}},
		{"validate: a valid call", "POST", "/call/validate", `{"tool":"browser_navigate","params":{"url":"http://127.0.0.1/"}}`, nil, answer{200, ""}},
		{"validate: GET", "GET", "/call/validate", "", nil, answer{405, proxy.EINVALID}},

		// a client's choice of tool groups (X-Mcp-Toolsets)
		{"tools: unknown group", "GET", "/tools", "", map[string]string{wire.ToolsetsHeader: "upstream,cookies"}, invalid},
		{"call: unknown group", "POST", "/call", call(``), map[string]string{wire.ToolsetsHeader: "cookies"}, invalid},
		{"validate: unknown group", "POST", "/call/validate", `{"tool":"browser_snapshot"}`, map[string]string{wire.ToolsetsHeader: "cookies"}, invalid},
		{"call: tool of a group not chosen", "POST", "/call", call(``), map[string]string{wire.ToolsetsHeader: "storage"}, answer{404, proxy.ETOOLMISSING}},
		{"validate: tool of a group not chosen", "POST", "/call/validate", `{"tool":"browser_snapshot"}`, map[string]string{wire.ToolsetsHeader: "session,content"}, answer{404, proxy.ETOOLMISSING}},

		// POST /credentials
		{"credentials: empty", "POST", "/credentials", ``, nil, invalid},
		{"credentials: malformed", "POST", "/credentials", `{"value":`, nil, invalid},
		{"credentials: value number", "POST", "/credentials", `{"value":1234567}`, nil, invalid},
		{"credentials: value object", "POST", "/credentials", `{"value":{"v":"hunter22"}}`, nil, invalid},
		{"credentials: body array", "POST", "/credentials", `["hunter22"]`, nil, invalid},
		{"credentials: missing value", "POST", "/credentials", `{}`, nil, invalid},
		{"credentials: null value", "POST", "/credentials", `{"value":null}`, nil, invalid},
		{"credentials: too short", "POST", "/credentials", `{"value":"abc"}`, nil, invalid},
		{"credentials: unknown field", "POST", "/credentials", `{"value":"hunter22","name":"x"}`, nil, invalid},
		{"credentials: trailing data", "POST", "/credentials", `{"value":"hunter22"} {}`, nil, invalid},
		{"credentials: huge", "POST", "/credentials", `{"value":"` + strings.Repeat("v", maxBody) + `"}`, nil, invalid},
		{"credentials: invalid UTF-8", "POST", "/credentials", "{\"value\":\"hunter\xff\xfe22\"}", nil, invalid},
		{"credentials: deeply nested", "POST", "/credentials", `{"value":` + nest(20000) + `}`, nil, invalid},

		// GET /content and /console
		{"content: unknown ref", "GET", "/content/" + unknownID, "", nil, answer{404, proxy.EREFMISSING}},
		{"content: malformed ref", "GET", "/content/%27%3B--", "", nil, answer{404, proxy.EREFMISSING}},
		{"content: bad reset_cursor", "GET", "/content/" + ref + "?reset_cursor=maybe", "", nil, invalid},
		{"content: bad image", "GET", "/content/" + ref + "?image=x", "", nil, invalid},
		{"content: missing image", "GET", "/content/" + ref + "?image=9", "", nil, answer{404, proxy.EREFMISSING}},
		{"console: unknown ref", "GET", "/console/" + unknownID, "", nil, answer{404, proxy.EREFMISSING}},
		{"console: bad level", "GET", "/console/" + ref + "?level=loud", "", nil, invalid},

		// the defences, on writing endpoints
		{"create: evil origin", "POST", "/sessions", "", map[string]string{"Origin": "http://evil.example"}, answer{403, proxy.EORIGIN}},
		{"call: evil origin", "POST", "/call", call(``), map[string]string{"Origin": "http://evil.example"}, answer{403, proxy.EORIGIN}},
		{"close: foreign host", "DELETE", "/sessions/" + active.ID, "", map[string]string{"Host": "evil.example:34501"}, answer{403, proxy.EHOST}},
		{"create: no token", "POST", "/sessions", "", map[string]string{"Authorization": ""}, answer{401, proxy.EUNAUTHORIZED}},
		{"call: wrong token", "POST", "/call", call(``), map[string]string{"Authorization": "Bearer x"}, answer{401, proxy.EUNAUTHORIZED}},
		{"close: no token", "DELETE", "/sessions/" + active.ID, "", map[string]string{"Authorization": ""}, answer{401, proxy.EUNAUTHORIZED}},
		{"credentials: no token", "POST", "/credentials", `{"value":"hunter22"}`, map[string]string{"Authorization": ""}, answer{401, proxy.EUNAUTHORIZED}},
		{"metrics: no token", "GET", "/metrics", "", map[string]string{"Authorization": ""}, answer{401, proxy.EUNAUTHORIZED}},
		{"mcp: no token", "POST", "/mcp", initBody, map[string]string{"Authorization": ""}, answer{401, proxy.EUNAUTHORIZED}},
		{"mcp: evil origin", "POST", "/mcp", initBody, map[string]string{"Origin": "http://evil.example"}, answer{403, proxy.EORIGIN}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			hdr := map[string]string{}
			for k, v := range auth {
				hdr[k] = v
			}
			for k, v := range tc.hdr {
				if v == "" {
					delete(hdr, k)
				} else {
					hdr[k] = v
				}
			}
			if diff := cmp.Diff(tc.want, send(t, srv, tc.method, tc.path, tc.body, hdr)); diff != "" {
				t.Errorf("%s %.80s (-want +got):\n%s", tc.method, tc.path, diff)
			}
		})
	}

	// /mcp speaks JSON-RPC, so its answers are not the API's error body:
	//   - a body that is not JSON, too deep, too big or not UTF-8: HTTP 400,
	//     JSON-RPC -32700 parse error (mcp-go's, or the handler's UTF-8 check);
	//   - JSON that is not a valid request (params of the wrong type): HTTP
	//     200, -32600 invalid request; an unknown method: 200, -32601; an
	//     unknown tool: 200, -32602 invalid params (mcp-go's "tool not found");
	//   - a call that reaches a tool and is refused: HTTP 200, a tool result
	//     with isError whose text is the documented error body (its code
	//     below);
	//   - transport errors are mcp-go's plain-text answers: an unknown or
	//     missing Mcp-Session-Id 404, an unsupported protocol version or
	//     content type 400; but DELETE of an unknown Mcp-Session-Id is a
	//     JSON-RPC error with 404 too, and another HTTP method one with 405
	//     (and Allow).
	rpc := func(method, params string) string {
		return `{"jsonrpc":"2.0","id":7,"method":"` + method + `","params":` + params + `}`
	}
	tool := func(name, args string) string {
		return rpc("tools/call", `{"name":"`+name+`","arguments":`+args+`}`)
	}
	sid := `"session_id":"` + active.ID + `"`
	parseErr := mcpAnswer{400, rpcParseError, ""}
	toolErr := func(code string) mcpAnswer { return mcpAnswer{200, 0, code} }
	mcpTests := []struct {
		name, method, body string
		hdr                map[string]string // replaces mcpHdr's entries; "" removes one
		want               mcpAnswer
	}{
		{"mcp: malformed JSON", "POST", `{"jsonrpc":"2.0","id":7,"method":`, nil, parseErr},
		{"mcp: not an object", "POST", `"tools/list"`, nil, parseErr},
		{"mcp: deeply nested", "POST", tool("browser_snapshot", `{`+sid+`,"a":`+nest(20000)+`}`), nil, parseErr},
		{"mcp: huge", "POST", tool("browser_snapshot", `{`+sid+`,"a":"`+strings.Repeat("x", maxBody)+`"}`), nil, parseErr},
		{"mcp: invalid UTF-8 in an argument", "POST", tool("browser_navigate", "{"+sid+",\"url\":\"http://127.0.0.1/\xff\xfe\"}"), nil, parseErr},
		{"mcp: invalid UTF-8 in the tool name", "POST", tool("browser_\xff", `{`+sid+`}`), nil, parseErr},
		{"mcp: unknown method", "POST", rpc("tools/teleport", `{}`), nil, mcpAnswer{200, rpcNoMethod, ""}},
		{"mcp: params of the wrong type", "POST", rpc("tools/call", `"browser_snapshot"`), nil, mcpAnswer{200, rpcInvalidRequest, ""}},
		{"mcp: tool name a number", "POST", rpc("tools/call", `{"name":42,"arguments":{`+sid+`}}`), nil, mcpAnswer{200, rpcInvalidRequest, ""}},
		{"mcp: unknown tool", "POST", tool("browser_rm_rf", `{`+sid+`}`), nil, mcpAnswer{200, rpcInvalidParams, ""}},
		{"mcp: arguments a string", "POST", tool("browser_snapshot", `"x"`), nil, toolErr(proxy.EINVALID)},
		{"mcp: arguments an array", "POST", tool("browser_snapshot", `["`+active.ID+`"]`), nil, toolErr(proxy.EINVALID)},
		{"mcp: session_id a number", "POST", tool("browser_snapshot", `{"session_id":42}`), nil, toolErr(proxy.EINVALID)},
		{"mcp: argument of the wrong type", "POST", tool("browser_navigate", `{`+sid+`,"url":42}`), nil, toolErr(proxy.EINVALID)},
		{"mcp: required argument missing", "POST", tool("browser_navigate", `{`+sid+`}`), nil, toolErr(proxy.EINVALID)},
		// The MCP session has no default session yet: a refused first call
		// must not make one.
		{"mcp: first call, argument of the wrong type", "POST", tool("browser_navigate", `{"url":42}`), nil, toolErr(proxy.EINVALID)},
		{"mcp: first call, required argument missing", "POST", tool("browser_navigate", `{}`), nil, toolErr(proxy.EINVALID)},
		{"mcp: unknown session_id", "POST", tool("browser_snapshot", `{"session_id":"`+unknownID+`"}`), nil, toolErr(proxy.ESESSIONMISSING)},
		{"mcp: malformed session_id", "POST", tool("browser_snapshot", `{"session_id":"../x"}`), nil, toolErr(proxy.ESESSIONMISSING)},
		{"mcp: closed session_id", "POST", tool("browser_snapshot", `{"session_id":"`+mcpClosed.ID+`"}`), nil, toolErr(proxy.ESESSIONCLOSED)},
		{"mcp: another client's session_id", "POST", tool("browser_snapshot", `{"session_id":"`+active.ID+`"}`), nil, toolErr(proxy.ESESSIONMISSING)},
		{"mcp: another client's closed session", "POST", tool("browser_snapshot", `{"session_id":"`+closed.ID+`"}`), nil, toolErr(proxy.ESESSIONMISSING)},
		{"mcp: another client's ref", "POST", tool(catalog.ToolGetContent, `{"ref_id":"`+ref+`"}`), nil, toolErr(proxy.EREFMISSING)},
		{"mcp: close unknown session", "POST", tool(catalog.ToolCloseSession, `{"session_id":"`+unknownID+`"}`), nil, toolErr(proxy.ESESSIONMISSING)},
		{"mcp: resume closed session", "POST", tool(catalog.ToolResumeSession, `{"session_id":"`+mcpClosed.ID+`"}`), nil, toolErr(proxy.ESESSIONCLOSED)},
		{"mcp: close another client's session", "POST", tool(catalog.ToolCloseSession, `{"session_id":"`+active.ID+`"}`), nil, toolErr(proxy.ESESSIONMISSING)},
		{"mcp: get_content unknown ref", "POST", tool(catalog.ToolGetContent, `{"ref_id":"`+unknownID+`"}`), nil, toolErr(proxy.EREFMISSING)},
		{"mcp: get_content ref a number", "POST", tool(catalog.ToolGetContent, `{"ref_id":7}`), nil, toolErr(proxy.EINVALID)},
		{"mcp: unknown Mcp-Session-Id", "POST", rpc("tools/list", `{}`), map[string]string{"Mcp-Session-Id": unknownID}, mcpAnswer{404, 0, ""}},
		{"mcp: no Mcp-Session-Id", "POST", tool("browser_snapshot", `{`+sid+`}`), map[string]string{"Mcp-Session-Id": ""}, mcpAnswer{404, 0, ""}},
		{"mcp: unsupported protocol version", "POST", rpc("tools/list", `{}`), map[string]string{"Mcp-Protocol-Version": "1999-01-01"}, mcpAnswer{400, 0, ""}},
		{"mcp: wrong content type", "POST", rpc("tools/list", `{}`), map[string]string{"Content-Type": "text/plain"}, mcpAnswer{400, 0, ""}},
		{"mcp: DELETE unknown Mcp-Session-Id", "DELETE", "", map[string]string{"Mcp-Session-Id": unknownID}, mcpAnswer{404, rpcSessionNotFound, ""}},
		{"mcp: PUT", "PUT", rpc("tools/list", `{}`), nil, mcpAnswer{405, rpcTransportError, ""}},
	}
	for _, tc := range mcpTests {
		t.Run(tc.name, func(t *testing.T) {
			hdr := map[string]string{}
			for k, v := range mcpHdr {
				hdr[k] = v
			}
			for k, v := range tc.hdr {
				hdr[k] = v
			}
			got, _ := sendMCP(t, srv, tc.method, tc.body, hdr)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s /mcp %.100q (-want +got):\n%s", tc.method, tc.body, diff)
			}
		})
	}

	if diff := cmp.Diff(before, dumpRows(t, reader2)); diff != "" {
		t.Errorf("stored rows changed (-before +after):\n%s", diff)
	}
}
