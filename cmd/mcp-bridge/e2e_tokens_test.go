//go:build linux

package main

// Tokens by role, end to end: a real proxy-server with the operator's
// token and a client tokens file, real bridges and a client of /mcp
// holding client tokens, real Chromium.

import (
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/e2etest"
)

// Tokens of these tests.
const (
	e2eOperatorToken = "operator-9d1c5e7a3b2f4860a1c7e9d3b5f20486"
	e2eAliceToken    = "alice-5b8e2d7f1a3c4e6b9d0f2a4c6e8b1d3f"
	e2eBobToken      = "bob-Qw7Er2Ty9Ui4Op1As6Df3Gh8Jk5Lz0Xc"
)

// writeTokens writes a client tokens file for alice and bob.
func writeTokens(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "client.tokens")
	body := "# the MCP clients of this test\nalice " + e2eAliceToken + "\nbob   " + e2eBobToken + "  # the other one\n"
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestClientTokens: two bridges with alice's token (two clients), one
// with bob's and a client of /mcp with alice's each drive sessions of
// their own; none reads another's; a client token gets 403 FORBIDDEN on
// the operator's views and only its own client's sessions elsewhere; the
// operator's token still sees everything; a bridge with a client token
// closes its sessions when its client leaves.
func TestClientTokens(t *testing.T) {
	requireBrowser(t)
	pages, port := site(t), e2etest.FreePort(t)
	srv := startServer(t, port, filepath.Join(t.TempDir(), "proxy.db"),
		"PROXY_AUTH_TOKEN="+e2eOperatorToken, "PROXY_CLIENT_TOKENS_FILE="+writeTokens(t))
	api := "http://127.0.0.1:" + port
	bearer := func(token string) map[string]string { return map[string]string{"Authorization": "Bearer " + token} }
	operator, alice, bob := bearer(e2eOperatorToken), bearer(e2eAliceToken), bearer(e2eBobToken)

	withToken := func(token string) []string { return []string{"MCP_PROXY_TOKEN=" + token} }
	clients := []*mcpClient{
		startBridgeEnv(t, "alice-1", port, withToken(e2eAliceToken), "--toolsets="+ownershipToolsets),
		startBridgeEnv(t, "alice-2", port, withToken(e2eAliceToken), "--toolsets="+ownershipToolsets),
		startBridgeEnv(t, "bob", port, withToken(e2eBobToken), "--toolsets="+ownershipToolsets),
		// The token rides on every request of the client's own (mcp-go's
		// DELETE at Close leaves WithHTTPHeaders out).
		startHTTPClientAt(t, "alice-mcp", api+"/mcp?toolsets="+ownershipToolsets,
			transport.WithHTTPBasicClient(&http.Client{Transport: bearerTransport(e2eAliceToken)})),
	}
	held := map[*mcpClient]*holdings{}
	var all []string
	for _, c := range clients {
		nav := c.browser(t, "browser_navigate", map[string]any{"url": pages + "/"})
		var created struct {
			SessionID string `json:"session_id"`
		}
		c.mustCall(t, "create_new_session", nil, &created)
		held[c] = &holdings{sessions: []string{c.defaultSession(t), created.SessionID}, refs: []string{nav.RefID}}
		all = append(all, held[c].sessions...)
	}

	// Each client sees its own sessions and refs, and nobody else's: the
	// same token held by two bridges is still two clients.
	for _, viewer := range clients {
		if ids := viewer.listedSessions(t); !sameSet(ids, held[viewer].sessions) {
			t.Errorf("%s: list_sessions = %v, want its own %v", viewer.name, ids, held[viewer].sessions)
		}
		viewer.mustCall(t, "get_content", map[string]any{"ref_id": held[viewer].refs[0], "search_for": "First"}, nil)
		for _, owner := range clients {
			if owner == viewer {
				continue
			}
			if text, _, _ := viewer.call("get_content", map[string]any{"ref_id": held[owner].refs[0]}); answerCode(text) != proxy.EREFMISSING {
				t.Errorf("%s reading %s's ref = %s, want REF_NOT_FOUND", viewer.name, owner.name, text)
			}
			if text, _, _ := viewer.call("browser_evaluate", map[string]any{"session_id": held[owner].sessions[0], "function": "() => document.title"}); answerCode(text) != proxy.ESESSIONMISSING {
				t.Errorf("%s using %s's session = %s, want SESSION_NOT_FOUND", viewer.name, owner.name, text)
			}
		}
	}

	// The HTTP API with a client token: the operator's views are 403, the
	// token's own client (no bridge identity) has no session, and the
	// bridges' sessions and refs do not exist for it.
	someRef, someSession := held[clients[0]].refs[0], held[clients[0]].sessions[0]
	for _, tc := range []struct {
		name, method, path, body string
		hdr                      map[string]string
		want                     string // status and, for errors, the code
	}{
		{"alice lists", "GET", "/sessions", "", alice, `200 {"sessions":[]}`},
		{"alice's metrics", "GET", "/metrics", "", alice, `403 {"error":"FORBIDDEN"`},
		{"alice's nodes", "GET", "/nodes", "", alice, `403 {"error":"FORBIDDEN"`},
		{"alice drains", "POST", "/nodes/n1/drain", "", alice, `403 {"error":"FORBIDDEN"`},
		{"alice's inspector", "GET", "/ui/", "", alice, `403 {"error":"FORBIDDEN"`},
		{"alice logs in to the inspector", "POST", "/ui/login", `{"token":"%s"}`, nil, `403 {"error":"FORBIDDEN"`},
		{"alice reads a bridge's ref", "GET", "/content/" + someRef, "", alice, `404 {"error":"REF_NOT_FOUND"`},
		{"bob reads alice's bridge's ref", "GET", "/content/" + someRef, "", bob, `404 {"error":"REF_NOT_FOUND"`},
		{"alice reads a bridge's session", "GET", "/sessions/" + someSession, "", alice, `404 {"error":"SESSION_NOT_FOUND"`},
		{"alice exports a bridge's session", "GET", "/sessions/" + someSession + "/export?format=json", "", alice, `404 {"error":"SESSION_NOT_FOUND"`},
		{"alice closes a bridge's session", "DELETE", "/sessions/" + someSession, "", alice, `404 {"error":"SESSION_NOT_FOUND"`},
		{"health is open", "GET", "/health", "", alice, `200 {`},
		{"no token", "GET", "/sessions", "", nil, `401 {"error":"UNAUTHORIZED"`},
		{"a wrong token", "GET", "/sessions", "", bearer(strings.ToUpper(e2eAliceToken)), `401 {"error":"UNAUTHORIZED"`},
		{"the operator reads the ref", "GET", "/content/" + someRef + "?search_for=First", "", operator, `200 {`},
		{"the operator's metrics", "GET", "/metrics", "", operator, `200 `},
		{"the operator's nodes", "GET", "/nodes", "", operator, `200 {"nodes":[]}`},
	} {
		// do puts its id into a body: the only body here is a token's.
		if got := do(t, api, tc.method, tc.path, tc.body, e2eAliceToken, tc.hdr); !strings.HasPrefix(got, tc.want) {
			t.Errorf("%s: %s %s = %.300s, want %s…", tc.name, tc.method, tc.path, got, tc.want)
		}
	}
	if got := listIDs(t, api, operator); !sameSet(got, all) {
		t.Errorf("the operator's GET /sessions = %v, want every client's %v", got, all)
	}
	if strings.Contains(srv.logs.String(), e2eAliceToken) || strings.Contains(srv.logs.String(), e2eBobToken) {
		t.Error("proxy-server's log holds a client token")
	}

	// Clients with a client token close their sessions when they leave
	// (a bridge's stdin closed; DELETE of an MCP session); the others'
	// stay.
	bridgeLeaver, mcpLeaver := clients[0], clients[3]
	go bridgeLeaver.c.Close()
	select {
	case <-bridgeLeaver.exit:
	case <-time.After(30 * time.Second):
		t.Fatal("the bridge did not exit within 30s of its stdin closing")
	}
	_ = bridgeLeaver.c.Close()
	if err := mcpLeaver.c.Close(); err != nil {
		t.Fatal(err)
	}
	for _, c := range clients {
		want := `"state":"active"`
		if c == bridgeLeaver || c == mcpLeaver {
			want = `"state":"closed"`
		}
		for _, id := range held[c].sessions {
			if got := do(t, api, "GET", "/sessions/%s", "", id, operator); !strings.Contains(got, want) {
				t.Errorf("%s's session %s after alice-1 and alice-mcp left: %.300s, want %s", c.name, id, got, want)
			}
		}
	}
}

// bearerTransport sends token as a bearer token on every request.
type bearerTransport string

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+string(b))
	return http.DefaultTransport.RoundTrip(r)
}

// TestClientTokensNeedTheOperatorsToken: proxy-server refuses a client
// tokens file without PROXY_AUTH_TOKEN, naming it, before it starts
// anything, and never prints a token.
func TestClientTokensNeedTheOperatorsToken(t *testing.T) {
	serverBin, _ := binaries(t)
	tokens := writeTokens(t)
	for _, tc := range []struct {
		name string
		env  []string
		want string
	}{
		{"no operator's token", []string{"PROXY_CLIENT_TOKENS_FILE=" + tokens}, "PROXY_AUTH_TOKEN: must be set when PROXY_CLIENT_TOKENS_FILE is"},
		{"a client token as the operator's", []string{"PROXY_CLIENT_TOKENS_FILE=" + tokens, "PROXY_AUTH_TOKEN=" + e2eBobToken}, "line 3 (bob): the same token as PROXY_AUTH_TOKEN"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, serverBin, "serve", "-port", "0", "-db", filepath.Join(t.TempDir(), "proxy.db"))
			cmd.Env = append(os.Environ(), tc.env...)
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			out, err := cmd.CombinedOutput()
			if err == nil || !strings.Contains(string(out), tc.want) {
				t.Errorf("proxy-server = %v, output:\n%s\nwant a failure saying %q", err, out, tc.want)
			}
			if strings.Contains(string(out), e2eAliceToken) || strings.Contains(string(out), e2eBobToken) {
				t.Errorf("the output holds a token:\n%s", out)
			}
		})
	}
}

// TestClientTokensReloadOnSIGHUP: proxy-server reads its client tokens
// file again on SIGHUP: a token taken out is refused, one put in is let
// through; a file that fails to load keeps the tokens served and says
// which line, never a token.
func TestClientTokensReloadOnSIGHUP(t *testing.T) {
	requireBrowser(t)
	port := e2etest.FreePort(t)
	tokens := writeTokens(t)
	srv := startServer(t, port, filepath.Join(t.TempDir(), "proxy.db"),
		"PROXY_AUTH_TOKEN="+e2eOperatorToken, "PROXY_CLIENT_TOKENS_FILE="+tokens)
	api := "http://127.0.0.1:" + port
	status := func(token string) string {
		t.Helper()
		return strings.SplitN(do(t, api, "GET", "/sessions", "", "", map[string]string{"Authorization": "Bearer " + token}), " ", 2)[0]
	}
	reload := func(body, said string, n int) {
		t.Helper()
		if err := os.WriteFile(tokens, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := srv.proc.Cmd.Process.Signal(syscall.SIGHUP); err != nil {
			t.Fatal(err)
		}
		await(t, srv.logs.seen(said, n), time.Minute, "proxy-server saying "+said, srv.logs)
	}
	const carol = "carol-7Yh2Kd9Lm4Np6Qr8St1Uv3Wx5Za0Bc"
	if a, b, c := status(e2eAliceToken), status(e2eBobToken), status(carol); a != "200" || b != "200" || c != "401" {
		t.Fatalf("before SIGHUP: alice %s, bob %s, carol %s; want 200, 200, 401", a, b, c)
	}

	reload("bob "+e2eBobToken+"\ncarol "+carol+"\n", "client tokens reloaded", 1)
	if a, b, c := status(e2eAliceToken), status(e2eBobToken), status(carol); a != "401" || b != "200" || c != "200" {
		t.Errorf("after alice was taken out and carol put in: alice %s, bob %s, carol %s; want 401, 200, 200", a, b, c)
	}

	reload("bob "+e2eBobToken+"\nalice too-short\n", "reloading the client tokens failed", 1)
	if b, c := status(e2eBobToken), status(carol); b != "200" || c != "200" {
		t.Errorf("after a bad file: bob %s, carol %s; want both still 200", b, c)
	}
	logs := srv.logs.String()
	if !strings.Contains(logs, "line 2 (alice): the token is shorter than 32 characters") {
		t.Errorf("the failed reload does not name the line:\n%s", logs)
	}
	for _, tok := range []string{e2eAliceToken, e2eBobToken, carol, "too-short"} {
		if strings.Contains(logs, tok) {
			t.Errorf("proxy-server's log holds the token %.8s…", tok)
		}
	}
}
