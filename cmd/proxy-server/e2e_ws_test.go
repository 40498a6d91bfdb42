//go:build unix

package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/google/go-cmp/cmp"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/e2etest"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/mcpserver"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/proctest"
)

// Tokens of the WebSocket test: the operator's and a client's.
const (
	wsOperatorToken = "operator-ws-4e8a1c6f2b9d3057e1a4c8f6b2d9e305"
	wsClientToken   = "client-ws-Mv3Nq8Rt1Yw6Zk4Bp9Xc2Lf7Hd5Gs0Ja"
)

// sdkAnswer is one tool call of testdata/mcp_ws_client.mjs as the model
// reads it.
type sdkAnswer struct {
	Text    string `json:"text"`
	IsError bool   `json:"is_error"`
}

// TestWebSocketWithOfficialSDK runs the real proxy-server with the
// operator's token and a client token, checks the defences of /ws before
// the upgrade, then drives it with the official TypeScript SDK's
// WebSocketClientTransport: two connections are two clients with their
// own sessions, neither can use the other's session or ref, and closing a
// socket closes its sessions and their workers; a page in a session's
// browser cannot open /ws; at shutdown an open connection is ended and its
// session suspended. No token reaches the log.
func TestWebSocketWithOfficialSDK(t *testing.T) {
	requireSDK(t)
	tokens := filepath.Join(t.TempDir(), "client.tokens")
	if err := os.WriteFile(tokens, []byte("wsclient "+wsClientToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := runBinary(t, filepath.Join(t.TempDir(), "proxy.db"), map[string]string{"PROXY_AUTH_TOKEN": wsOperatorToken, "PROXY_CLIENT_TOKENS_FILE": tokens,
		// A worker process per session: a socket's close is checked by its
		// session's process group ending.
		"PROXY_SESSIONS_PER_WORKER": "1"})
	pages := site(t)
	wsURL := "ws" + strings.TrimPrefix(s.URL, "http") + "/ws"

	t.Run("defences before the upgrade", func(t *testing.T) {
		bearer := http.Header{"Authorization": {"Bearer " + wsOperatorToken}}
		withHeader := func(h http.Header, k, v string) http.Header {
			h = h.Clone()
			h.Set(k, v)
			return h
		}
		for _, tc := range []struct {
			name, query string
			hdr         http.Header
			host        string
			wantStatus  int
			wantCode    string
		}{
			{"operator's token as a header", "", bearer, "", http.StatusSwitchingProtocols, ""},
			{"operator's token in the query", "?token=" + wsOperatorToken, nil, "", http.StatusSwitchingProtocols, ""},
			{"client token in the query", "?token=" + wsClientToken, nil, "", http.StatusSwitchingProtocols, ""},
			{"a page of the server's own origin", "?token=" + wsOperatorToken, http.Header{"Origin": {s.URL}}, "", http.StatusSwitchingProtocols, ""},
			{"a page of another loopback origin", "?token=" + wsOperatorToken, http.Header{"Origin": {"http://localhost:5173"}}, "", http.StatusForbidden, proxy.EORIGIN},
			{"no token", "", nil, "", http.StatusUnauthorized, proxy.EUNAUTHORIZED},
			{"wrong token in the query", "?token=" + strings.ToUpper(wsClientToken), nil, "", http.StatusUnauthorized, proxy.EUNAUTHORIZED},
			{"wrong token as a header", "", http.Header{"Authorization": {"Bearer nope"}}, "", http.StatusUnauthorized, proxy.EUNAUTHORIZED},
			{"foreign origin", "", withHeader(bearer, "Origin", "http://evil.example"), "", http.StatusForbidden, proxy.EORIGIN},
			{"foreign origin, token in the query", "?token=" + wsOperatorToken, http.Header{"Origin": {"http://evil.example"}}, "", http.StatusForbidden, proxy.EORIGIN},
			{"started by another site's page", "?token=" + wsOperatorToken, http.Header{"Sec-Fetch-Site": {"cross-site"}}, "", http.StatusForbidden, proxy.EORIGIN},
			{"foreign host", "", bearer, "evil.example", http.StatusForbidden, proxy.EHOST},
		} {
			t.Run(tc.name, func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				conn, resp, err := websocket.Dial(ctx, wsURL+tc.query, &websocket.DialOptions{HTTPHeader: tc.hdr, Host: tc.host, Subprotocols: []string{mcpserver.WSSubprotocol}})
				if resp == nil {
					t.Fatalf("dial: no answer (%v)", err)
				}
				if resp.StatusCode != tc.wantStatus {
					t.Fatalf("dial = %d (%v), want %d", resp.StatusCode, err, tc.wantStatus)
				}
				if tc.wantCode == "" {
					defer conn.CloseNow()
					// Served: an MCP client over this connection.
					if conn.Subprotocol() != mcpserver.WSSubprotocol {
						t.Errorf("subprotocol %q, want %q", conn.Subprotocol(), mcpserver.WSSubprotocol)
					}
					wsPing(ctx, t, conn)
					return
				}
				// Refused before the upgrade, with the API's error.
				var body struct {
					Error string `json:"error"`
				}
				raw, _ := io.ReadAll(resp.Body)
				if resp.Header.Get("Upgrade") != "" || json.Unmarshal(raw, &body) != nil || body.Error != tc.wantCode {
					t.Errorf("refusal: Upgrade %q, body %s; want no upgrade and %s", resp.Header.Get("Upgrade"), raw, tc.wantCode)
				}
			})
		}
		// The query parameter is a token on /ws only.
		for _, path := range []string{"/sessions", "/mcp"} {
			var body string
			if code := do(t, "GET", s.URL+path+"?token="+wsOperatorToken, nil, &body); code != http.StatusUnauthorized {
				t.Errorf("GET %s?token=… = %d %s, want 401", path, code, body)
			}
		}
	})

	t.Run("official SDK", func(t *testing.T) {
		sdk := startSDK(t, "testdata/mcp_ws_client.mjs", wsURL, pages, s.URL+"/mcp", wsOperatorToken, wsClientToken)
		var first struct {
			ToolsWS            []json.RawMessage `json:"tools_ws"`
			ToolsWSClientToken []json.RawMessage `json:"tools_ws_client_token"`
			ToolsHTTP          []json.RawMessage `json:"tools_http"`
			ASet               sdkAnswer         `json:"a_set"`
			BSet               sdkAnswer         `json:"b_set"`
			ARead              sdkAnswer         `json:"a_read"`
			BRead              sdkAnswer         `json:"b_read"`
			ASession           string            `json:"a_session"`
			BSession           string            `json:"b_session"`
		}
		sdk.read(&first)

		want := toolDefs(t, first.ToolsHTTP)
		if len(want) == 0 {
			t.Fatal("/mcp lists no tools")
		}
		if diff := cmp.Diff(want, toolDefs(t, first.ToolsWS)); diff != "" {
			t.Errorf("tools over /ws (-/mcp +/ws):\n%s", diff)
		}
		if diff := cmp.Diff(want, toolDefs(t, first.ToolsWSClientToken)); diff != "" {
			t.Errorf("tools over /ws with a client token (-/mcp +/ws):\n%s", diff)
		}
		for _, tc := range []struct {
			name string
			got  sdkAnswer
			want string
		}{
			{"a sets", first.ASet, "set alpha"},
			{"b sets", first.BSet, "set beta"},
			{"a reads", first.ARead, "ls=alpha;ck=who=alpha"},
			{"b reads", first.BRead, "ls=beta;ck=who=beta"},
		} {
			p, err := mcpserver.ParseAnswer(tc.got.Text)
			if err != nil || tc.got.IsError || p.Error != "" || p.PageTitle != tc.want {
				t.Errorf("%s: %q (isError=%v, %v), want page %q", tc.name, tc.got.Text, tc.got.IsError, err, tc.want)
			}
		}
		if first.ASession == "" || first.BSession == "" || first.ASession == first.BSession {
			t.Fatalf("default sessions %q and %q: want one per connection", first.ASession, first.BSession)
		}
		bRead, err := mcpserver.ParseAnswer(first.BRead.Text)
		if err != nil || bRead.RefID == "" {
			t.Fatalf("b's answer names no ref: %q (%v)", first.BRead.Text, err)
		}
		aSess := wsSession(t, s.URL, first.ASession)
		if aSess.WorkerPID == 0 {
			t.Fatalf("a's session has no worker: %+v", aSess)
		}
		sdk.write(bRead.RefID)

		var second struct {
			AUsesBSession   sdkAnswer `json:"a_uses_b_session"`
			AClosesBSession sdkAnswer `json:"a_closes_b_session"`
			AReadsBRef      sdkAnswer `json:"a_reads_b_ref"`
			BReadsBRef      sdkAnswer `json:"b_reads_b_ref"`
			BAfter          sdkAnswer `json:"b_after"`
			BSessionAfter   string    `json:"b_session_after"`
		}
		sdk.read(&second)
		sdk.wait()
		for _, tc := range []struct {
			name string
			got  sdkAnswer
			want string
		}{
			{"a calls in b's session", second.AUsesBSession, proxy.ESESSIONMISSING},
			{"a closes b's session", second.AClosesBSession, proxy.ESESSIONMISSING},
			{"a reads b's ref", second.AReadsBRef, proxy.EREFMISSING},
		} {
			if code := errorCodeOf(tc.got.Text); !tc.got.IsError || code != tc.want {
				t.Errorf("%s: %q (isError=%v), want %s", tc.name, tc.got.Text, tc.got.IsError, tc.want)
			}
		}
		if second.BReadsBRef.IsError {
			t.Errorf("b reads its own ref: %q", second.BReadsBRef.Text)
		}
		if p, err := mcpserver.ParseAnswer(second.BAfter.Text); err != nil || second.BAfter.IsError || p.Error != "" || second.BSessionAfter != first.BSession {
			t.Errorf("b after a left: %q in session %q (%v), want a call in %s", second.BAfter.Text, second.BSessionAfter, err, first.BSession)
		}

		// a's socket is closed: its session closes, its worker goes. The
		// SDK's close does not wait for the server, so this waits for it.
		deadline := time.Now().Add(time.Minute)
		for wsSession(t, s.URL, first.ASession).State != proxy.SessionClosed {
			if time.Now().After(deadline) {
				t.Fatalf("a's session %s is not closed a minute after its socket was", first.ASession)
			}
			time.Sleep(100 * time.Millisecond)
		}
		if left := proctest.WaitGone(30*time.Second, func() []proctest.Proc { return proctest.Group(aSess.WorkerPID) }); len(left) > 0 {
			t.Errorf("a's worker is still running after its socket closed: %v", left)
		}
		// b's socket is closed too, by now.
		for wsSession(t, s.URL, first.BSession).State != proxy.SessionClosed {
			if time.Now().After(deadline) {
				t.Fatalf("b's session %s is not closed after its socket was", first.BSession)
			}
			time.Sleep(100 * time.Millisecond)
		}
	})

	// A page a session's browser opens runs on this machine, often on a
	// loopback origin, and a browser's WebSocket carries no Sec-Fetch-Site
	// and passes no CORS check: even holding the token, it is refused.
	t.Run("a page in a session's browser cannot open /ws", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		conn := wsConnect(ctx, t, wsURL, wsOperatorToken)
		if nav, err := mcpserver.ParseAnswer(wsToolText(ctx, t, conn, 3, "browser_navigate", map[string]any{"url": pages + "/index.html"})); err != nil || nav.Error != "" {
			t.Fatalf("navigate: %+v (%v)", nav, err)
		}
		before := strings.Count(s.log(), "path=/ws status=403")
		for i, target := range []string{wsURL, strings.Replace(wsURL, "127.0.0.1", "localhost", 1)} {
			open := fmt.Sprintf(`() => new Promise((done) => {
				const ws = new WebSocket(%q, 'mcp');
				ws.onopen = () => { ws.close(); done('op' + 'ened'); };
				ws.onerror = () => done('ref' + 'used');
			})`, target+"?token="+wsOperatorToken) // the words split: the stored code must not match

			evaluated, err := mcpserver.ParseAnswer(wsToolText(ctx, t, conn, 4+i, "browser_evaluate", map[string]any{"function": open}))
			if err != nil || evaluated.Error != "" || evaluated.RefID == "" {
				t.Fatalf("evaluate: %+v (%v)", evaluated, err)
			}
			if got := wsContent(t, s.URL, evaluated.RefID); !strings.Contains(got, "refused") || strings.Contains(got, "opened") {
				t.Errorf("the page's WebSocket to %s: %q, want refused", target, got)
			}
		}
		// Refused by the server, before the upgrade, not by the browser.
		if after := strings.Count(s.log(), "path=/ws status=403"); after != before+2 {
			t.Errorf("the server refused %d of the page's 2 WebSockets with 403", after-before)
		}
	})

	// Shutdown with a connection open ends it without waiting for the
	// client, and suspends its session (resumable) instead of closing it.
	t.Run("shutdown with a connection open", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		conn := wsConnect(ctx, t, wsURL, wsClientToken)
		nav, err := mcpserver.ParseAnswer(wsToolText(ctx, t, conn, 3, "browser_navigate", map[string]any{"url": pages + "/index.html"}))
		if err != nil || nav.Error != "" || nav.PageTitle != "Test Home" {
			t.Fatalf("navigate: %+v (%v)", nav, err)
		}
		id, err := e2etest.DefaultSession(wsToolText(ctx, t, conn, 4, "list_sessions", nil))
		if err != nil {
			t.Fatal(err)
		}
		if killed := s.proc.Stop(time.Minute); killed {
			t.Fatal("proxy-server did not stop within a minute of SIGTERM with a WebSocket open")
		}
		if err := s.proc.Err(); err != nil {
			t.Errorf("proxy-server exited with %v", err)
		}
		if _, _, err := conn.Read(ctx); websocket.CloseStatus(err) != websocket.StatusGoingAway {
			t.Errorf("the connection ended with %v, want 1001 (going away)", err)
		}
		var state string
		if err := openRO(t, s.DBPath).QueryRow("SELECT state FROM sessions WHERE session_id = ?", id).Scan(&state); err != nil || state != string(proxy.SessionSuspended) {
			t.Errorf("session %s after shutdown: %q (%v), want %s", id, state, err, proxy.SessionSuspended)
		}
	})

	t.Run("no token in the log", func(t *testing.T) {
		log := s.log()
		if !strings.Contains(log, "path=/ws") {
			t.Fatalf("the log has no request to /ws; the check would prove nothing:\n%s", log)
		}
		for _, token := range []string{wsOperatorToken, wsClientToken, strings.ToUpper(wsClientToken)} {
			if strings.Contains(log, token) {
				t.Errorf("a token is in the server's log")
			}
		}
	})
}

// wsConnect opens an MCP client over WebSocket with the token as a header,
// closed when the test ends.
func wsConnect(ctx context.Context, t *testing.T, wsURL, token string) *websocket.Conn {
	t.Helper()
	conn, _, err := websocket.Dial(ctx, wsURL, &websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer " + token}}, Subprotocols: []string{mcpserver.WSSubprotocol}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.CloseNow() })
	wsPing(ctx, t, conn)
	return conn
}

// wsPing initializes an MCP client on conn and pings the server.
func wsPing(ctx context.Context, t *testing.T, conn *websocket.Conn) {
	t.Helper()
	wsRPC(ctx, t, conn, 1, "initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "ws-e2e", "version": "1"}})
	wsRPC(ctx, t, conn, 2, "ping", nil)
}

// wsRPC sends a JSON-RPC request on conn and returns its result, skipping
// the notifications that come before it.
func wsRPC(ctx context.Context, t *testing.T, conn *websocket.Conn, id int, method string, params any) json.RawMessage {
	t.Helper()
	msg, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	if err != nil {
		t.Fatal(err)
	}
	if err := conn.Write(ctx, websocket.MessageText, msg); err != nil {
		t.Fatalf("%s: write: %v", method, err)
	}
	for {
		_, data, err := conn.Read(ctx)
		if err != nil {
			t.Fatalf("%s: read: %v", method, err)
		}
		var a struct {
			ID     *int            `json:"id"`
			Result json.RawMessage `json:"result"`
		}
		if json.Unmarshal(data, &a) != nil || a.ID == nil {
			continue // a notification
		}
		if *a.ID != id || a.Result == nil {
			t.Fatalf("answer to %s: %s", msg, data)
		}
		return a.Result
	}
}

// wsToolText calls a tool over conn and returns the text of its answer.
func wsToolText(ctx context.Context, t *testing.T, conn *websocket.Conn, id int, name string, args map[string]any) string {
	t.Helper()
	var res struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	}
	raw := wsRPC(ctx, t, conn, id, "tools/call", map[string]any{"name": name, "arguments": args})
	if err := json.Unmarshal(raw, &res); err != nil || res.IsError || len(res.Content) == 0 {
		t.Fatalf("%s: %s (%v)", name, raw, err)
	}
	return res.Content[0].Text
}

// wsSession is GET /sessions/{id} with the operator's token.
func wsSession(t *testing.T, base, id string) proxy.Session {
	t.Helper()
	var sess proxy.Session
	if err := json.Unmarshal(wsGet(t, base+"/sessions/"+url.PathEscape(id)), &sess); err != nil {
		t.Fatalf("GET /sessions/%s: %v", id, err)
	}
	return sess
}

// wsContent is GET /content/{ref} with the operator's token.
func wsContent(t *testing.T, base, ref string) string {
	t.Helper()
	return string(wsGet(t, base+"/content/"+url.PathEscape(ref)+"?peek=true"))
}

// wsGet is a GET with the operator's token that must answer 200.
func wsGet(t *testing.T, u string) []byte {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+wsOperatorToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s = %d %s (%v)", u, resp.StatusCode, body, err)
	}
	return body
}

// errorCodeOf is the error code of a refusal: the HTTP API's JSON error
// body, or an MCP tool call's compact answer.
func errorCodeOf(text string) string {
	var body struct {
		Error string `json:"error"`
	}
	if json.Unmarshal([]byte(text), &body) == nil && body.Error != "" {
		return body.Error
	}
	p, err := mcpserver.ParseAnswer(text)
	if err != nil {
		return ""
	}
	return p.ErrorCode
}

// sdkRun is a node script of testdata that talks JSON lines with the test.
type sdkRun struct {
	t      *testing.T
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout *bufio.Reader
	stderr *bytes.Buffer
}

// startSDK starts a script of testdata with a WebSocket global (node 20
// has it behind a flag).
func startSDK(t *testing.T, script string, args ...string) *sdkRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	var flags []string
	if exec.Command("node", "-e", "if (typeof WebSocket === 'undefined') process.exit(1)").Run() != nil {
		flags = []string{"--experimental-websocket"}
	}
	r := &sdkRun{t: t, stderr: &bytes.Buffer{}}
	r.cmd = exec.CommandContext(ctx, "node", append(append(flags, script), args...)...)
	r.cmd.Stderr = r.stderr
	r.cmd.WaitDelay = 5 * time.Second
	var err error
	if r.stdin, err = r.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	out, err := r.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	r.stdout = bufio.NewReader(out)
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = r.cmd.Process.Kill() // gone already on the normal path
		_ = r.cmd.Wait()
	})
	return r
}

// read decodes the script's next line into out.
func (r *sdkRun) read(out any) {
	r.t.Helper()
	line, err := r.stdout.ReadBytes('\n')
	if err != nil {
		_ = r.cmd.Wait()
		r.t.Fatalf("SDK client: %v\nstderr: %s", err, r.stderr.String())
	}
	if err := json.Unmarshal(line, out); err != nil {
		r.t.Fatalf("SDK client output %q: %v\nstderr: %s", line, err, r.stderr.String())
	}
}

// write sends the script one line.
func (r *sdkRun) write(line string) {
	r.t.Helper()
	if _, err := io.WriteString(r.stdin, line+"\n"); err != nil {
		r.t.Fatalf("SDK client stdin: %v", err)
	}
}

// wait waits for the script to exit, and fails on an error exit.
func (r *sdkRun) wait() {
	r.t.Helper()
	if err := r.cmd.Wait(); err != nil {
		r.t.Fatalf("SDK client: %v\nstderr: %s", err, r.stderr.String())
	}
}
