package api

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/wire"
)

// Tokens of the role tests: the operator's and two clients'.
const (
	operatorToken = "operator-3f9c2b7e1d4a6085c3e9f1b27d5a8c40"
	aliceToken    = "Zq8-xL2_vN5kR7tY1mW4pB6sD9fH0jGc"
	bobToken      = "b1e2d3c4a5968778695a4b3c2d1e0f9e8d7c6b5a"
)

// rolesServer is an API with the operator's token, two client tokens, the
// inspector, browser nodes, /metrics (the operator's), /mcp and /ws (open
// to clients), each mount answering 204.
func rolesServer(sessions proxy.SessionService, mounted http.Handler) *Server {
	files := http.FileServerFS(fstest.MapFS{"ui/index.html": {Data: []byte("<!doctype html><title>x</title>")}})
	nodes := &fakeNodes{nodes: map[string]*proxy.Node{
		"a": {ID: "a", Endpoint: "ws://a:3000/", State: proxy.NodeUp, Capacity: 10},
		"b": {ID: "b", Endpoint: "ws://b:3000/", State: proxy.NodeUp, Capacity: 10},
	}}
	return New(sessions, fakeContent{},
		WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))),
		WithAuthToken(operatorToken),
		WithClientTokens(ClientToken{Name: "alice", Token: aliceToken}, ClientToken{Name: "bob", Token: bobToken}),
		WithUI(files), WithNodes(nodes),
		WithMount("/metrics", mounted), WithClientMount("/mcp", mounted), WithWebSocket(mounted))
}

// TestTokenRoles: every endpoint with the operator's token, a client
// token, no token and a wrong token. A client token opens /mcp and what
// mcp-bridge calls, and gets 403 FORBIDDEN everywhere else; /health is
// open to all.
func TestTokenRoles(t *testing.T) {
	mounted := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	srv := rolesServer(&fakeSessions{}, mounted)
	ok := func(status int) answer { return answer{status, ""} }
	forbidden := answer{http.StatusForbidden, proxy.EFORBIDDEN}
	unauthorized := answer{http.StatusUnauthorized, proxy.EUNAUTHORIZED}
	call := `{"session_id":"` + knownID + `","tool":"browser_snapshot","params":{}}`
	tests := []struct {
		method, path, body string
		operator, client   answer
		// anonymous is what no token and a wrong one get.
		anonymous answer
	}{
		{"GET", "/health", "", ok(200), ok(200), ok(200)},
		// What mcp-bridge calls, and /mcp.
		{"GET", "/tools", "", ok(200), ok(200), unauthorized},
		{"POST", "/sessions", "{}", ok(201), ok(201), unauthorized},
		{"GET", "/sessions", "", ok(200), ok(200), unauthorized},
		{"GET", "/sessions/" + knownID, "", ok(200), ok(200), unauthorized},
		{"POST", "/sessions/" + knownID + "/resume", "{}", ok(200), ok(200), unauthorized},
		{"GET", "/sessions/" + knownID + "/export?format=json", "", ok(200), ok(200), unauthorized},
		{"DELETE", "/sessions/" + knownID, "", ok(200), ok(200), unauthorized},
		{"POST", "/call", call, ok(200), ok(200), unauthorized},
		{"POST", "/call/validate", `{"tool":"browser_snapshot","params":{}}`, ok(200), ok(200), unauthorized},
		{"GET", "/content/r1", "", ok(200), ok(200), unauthorized},
		{"GET", "/console/r1", "", ok(200), ok(200), unauthorized},
		{"POST", "/credentials", `{"value":"hunter22"}`, ok(201), ok(201), unauthorized},
		{"POST", "/mcp", "{}", ok(204), ok(204), unauthorized},
		{"GET", "/mcp", "", ok(204), ok(204), unauthorized},
		{"DELETE", "/mcp", "", ok(204), ok(204), unauthorized},
		{"GET", "/ws", "", ok(204), ok(204), unauthorized},
		// The operator's views.
		{"GET", "/metrics", "", ok(204), forbidden, unauthorized},
		{"GET", "/nodes", "", ok(200), forbidden, unauthorized},
		{"GET", "/nodes/a", "", ok(200), forbidden, unauthorized},
		{"POST", "/nodes/a/drain", "", ok(200), forbidden, unauthorized},
		{"POST", "/nodes/b/undrain", "", ok(200), forbidden, unauthorized},
		{"GET", "/ui", "", ok(302), forbidden, ok(302)},
		{"GET", "/ui/", "", ok(200), forbidden, ok(200)},
		{"POST", "/ui/login", `{"token":"` + operatorToken + `"}`, ok(204), forbidden, ok(204)},
		// Not a client's call: another method on a client's path, and
		// paths that are no endpoint (the operator learns it is none).
		{"PUT", "/sessions", "{}", answer{405, proxy.EINVALID}, forbidden, unauthorized},
		{"GET", "/call", "", answer{405, proxy.EINVALID}, forbidden, unauthorized},
		{"GET", "/nowhere", "", answer{404, proxy.ENOENDPOINT}, forbidden, unauthorized},
		{"GET", "/sessions/" + knownID + "/calls", "", answer{404, proxy.ENOENDPOINT}, forbidden, unauthorized},
	}
	roles := []struct {
		name string
		hdr  map[string]string
		want func(operator, client, anonymous answer) answer
	}{
		{"operator", map[string]string{"Authorization": "Bearer " + operatorToken}, func(o, _, _ answer) answer { return o }},
		{"client", map[string]string{"Authorization": "Bearer " + aliceToken}, func(_, c, _ answer) answer { return c }},
		{"other client", map[string]string{"Authorization": "Bearer " + bobToken}, func(_, c, _ answer) answer { return c }},
		{"no token", nil, func(_, _, a answer) answer { return a }},
		{"wrong token", map[string]string{"Authorization": "Bearer " + strings.ToUpper(aliceToken)}, func(_, _, a answer) answer { return a }},
	}
	for _, tc := range tests {
		for _, role := range roles {
			t.Run(tc.method+" "+tc.path+" as "+role.name, func(t *testing.T) {
				want := role.want(tc.operator, tc.client, tc.anonymous)
				if diff := cmp.Diff(want, send(t, srv, tc.method, tc.path, tc.body, role.hdr)); diff != "" {
					t.Errorf("(-want +got):\n%s", diff)
				}
			})
		}
	}
}

// TestInspectorLoginRefusesClientTokens: the inspector is the operator's;
// a client token given to its login gets 403 and no cookie.
func TestInspectorLoginRefusesClientTokens(t *testing.T) {
	srv := rolesServer(&fakeSessions{}, http.NotFoundHandler())
	for _, tc := range []struct {
		token string
		want  int
	}{
		{aliceToken, http.StatusForbidden},
		{"not-a-token-of-this-server-at-all", http.StatusUnauthorized},
		{operatorToken, http.StatusNoContent},
	} {
		a := hit(srv, "POST", "/ui/login", `{"token":"`+tc.token+`"}`, nil)
		if a.code != tc.want || (tc.want != http.StatusNoContent) != (a.header.Get("Set-Cookie") == "") {
			t.Errorf("login with token %.8s… = %d, cookie %q; want %d (a cookie only with 204)", tc.token, a.code, a.header.Get("Set-Cookie"), tc.want)
		}
	}
}

// actingSessions records the client each request acted for.
type actingSessions struct {
	fakeSessions
	mu   sync.Mutex
	seen []string // proxy.ClientFrom of each ListSessions, "operator" for none
}

func (a *actingSessions) ListSessions(ctx context.Context) ([]*proxy.Session, error) {
	id, ok := proxy.ClientFrom(ctx)
	a.mu.Lock()
	defer a.mu.Unlock()
	if !ok {
		a.seen = append(a.seen, "operator")
	} else {
		a.seen = append(a.seen, string(id))
	}
	return nil, nil
}

func (a *actingSessions) last() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.seen[len(a.seen)-1]
}

// TestClientTokenIdentity: a request with a client token acts for a client
// derived from the token (and the bridge's identity header when sent):
// the same header with another token, or with the operator's, is another
// client, and no client token request is ever the operator's. /mcp gets
// the token's scope, never a client: it acts for its own MCP sessions.
func TestClientTokenIdentity(t *testing.T) {
	sessions := &actingSessions{}
	var mcpScope string
	var mcpClient bool
	mounted := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mcpScope, _ = proxy.TokenScopeFrom(r.Context())
		_, mcpClient = proxy.ClientFrom(r.Context())
		w.WriteHeader(http.StatusNoContent)
	})
	srv := rolesServer(sessions, mounted)
	const bridgeA, bridgeB = "bridge-identity-aaaaaaaaaaaaaaaa", "bridge-identity-bbbbbbbbbbbbbbbb"
	actsFor := func(token, identity string) string {
		t.Helper()
		hdr := map[string]string{"Authorization": "Bearer " + token}
		if identity != "" {
			hdr[wire.ClientIDHeader] = identity
		}
		if got := send(t, srv, "GET", "/sessions", "", hdr); got.Status != http.StatusOK {
			t.Fatalf("GET /sessions = %+v", got)
		}
		return sessions.last()
	}
	aliceOwn, aliceBridgeA := actsFor(aliceToken, ""), actsFor(aliceToken, bridgeA)
	got := map[string]string{
		"alice, no identity":          aliceOwn,
		"alice, no identity again":    actsFor(aliceToken, ""),
		"alice, bridge A":             aliceBridgeA,
		"alice, bridge A again":       actsFor(aliceToken, bridgeA),
		"alice, bridge B":             actsFor(aliceToken, bridgeB),
		"bob, no identity":            actsFor(bobToken, ""),
		"bob, bridge A":               actsFor(bobToken, bridgeA),
		"operator, no identity":       actsFor(operatorToken, ""),
		"operator, bridge A":          actsFor(operatorToken, bridgeA),
		"operator, alice's identity":  actsFor(operatorToken, aliceOwn[:40]),
		"alice, a digest as identity": actsFor(aliceToken, aliceBridgeA[:40]),
	}
	if got["alice, no identity"] != got["alice, no identity again"] || got["alice, bridge A"] != got["alice, bridge A again"] {
		t.Errorf("one token and identity act for different clients on two requests: %v", got)
	}
	if got["operator, no identity"] != "operator" {
		t.Errorf("the operator's token without an identity acts for %q, want the operator", got["operator, no identity"])
	}
	distinct := map[string]string{}
	for name, id := range got {
		if name == "alice, no identity again" || name == "alice, bridge A again" {
			continue
		}
		if other, dup := distinct[id]; dup {
			t.Errorf("%q and %q act for the same client %s", name, other, id)
		}
		distinct[id] = name
	}

	if a := send(t, srv, "POST", "/mcp", "{}", map[string]string{"Authorization": "Bearer " + aliceToken, wire.ClientIDHeader: bridgeA}); a.Status != http.StatusNoContent || mcpScope == "" || mcpClient {
		t.Errorf("/mcp with a client token = %+v, scope %q, client set %v; want 204 with the token's scope and no client", a, mcpScope, mcpClient)
	}
	if strings.Contains(mcpScope, aliceToken) {
		t.Errorf("the scope %q holds the token", mcpScope)
	}
	aliceScope := mcpScope
	send(t, srv, "POST", "/mcp", "{}", map[string]string{"Authorization": "Bearer " + bobToken})
	if mcpScope == aliceScope || mcpScope == "" {
		t.Errorf("bob's scope %q, alice's %q: want two scopes", mcpScope, aliceScope)
	}
	send(t, srv, "POST", "/mcp", "{}", map[string]string{"Authorization": "Bearer " + operatorToken})
	if mcpScope != "" || mcpClient {
		t.Errorf("/mcp with the operator's token has scope %q, client set %v; want neither", mcpScope, mcpClient)
	}
}

// TestSetClientTokens: replacing the client tokens (SIGHUP) judges the
// next request by the new list; an empty list, even on a server without
// the operator's token, leaves it closed, never open.
func TestSetClientTokens(t *testing.T) {
	quiet := WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))
	srv := New(&fakeSessions{}, fakeContent{}, quiet, WithAuthToken(operatorToken), WithClientTokens(ClientToken{Name: "alice", Token: aliceToken}))
	noOperator := New(&fakeSessions{}, fakeContent{}, quiet, WithClientTokens(ClientToken{Name: "alice", Token: aliceToken}))
	bearer := func(token string) map[string]string { return map[string]string{"Authorization": "Bearer " + token} }
	type step struct {
		name  string
		srv   *Server
		set   []ClientToken // nil: keep
		token string
		want  int
	}
	steps := []step{
		{"alice at first", srv, nil, aliceToken, 200},
		{"bob at first", srv, nil, bobToken, 401},
		{"bob once put in", srv, []ClientToken{{Name: "bob", Token: bobToken}}, bobToken, 200},
		{"alice once taken out", srv, nil, aliceToken, 401},
		{"the operator throughout", srv, nil, operatorToken, 200},
		{"bob once none are left", srv, []ClientToken{}, bobToken, 401},
		{"no token once none are left", srv, nil, "", 401},
		{"no operator: alice", noOperator, nil, aliceToken, 200},
		{"no operator: no token", noOperator, nil, "", 401},
		{"no operator: no token once none are left", noOperator, []ClientToken{}, "", 401},
	}
	for _, st := range steps {
		if st.set != nil {
			st.srv.SetClientTokens(st.set...)
		}
		hdr := bearer(st.token)
		if st.token == "" {
			hdr = nil
		}
		if got := send(t, st.srv, "GET", "/sessions", "", hdr); got.Status != st.want {
			t.Errorf("%s: GET /sessions = %+v, want %d", st.name, got, st.want)
		}
	}
}
