package api

import (
	"bytes"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
)

// seenRequest is what a mounted handler got past the defences.
type seenRequest struct {
	Query, RequestURI string
	Scoped            bool
}

// TestQueryToken: on /ws, and nowhere else, the token may come as the
// query parameter token; it is gone from the request the handler gets,
// and from every log line, whether it was right or wrong. A page's
// WebSocket is served from this server's origin or a listed one only.
func TestQueryToken(t *testing.T) {
	var mu sync.Mutex
	var seen []seenRequest
	mounted := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, scoped := proxy.TokenScopeFrom(r.Context())
		mu.Lock()
		seen = append(seen, seenRequest{r.URL.RawQuery, r.RequestURI, scoped})
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	})
	var logs logBuffer
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	locked := New(&fakeSessions{}, fakeContent{}, WithLogger(log), WithAuthToken(operatorToken),
		WithClientTokens(ClientToken{Name: "alice", Token: aliceToken}),
		WithClientMount("/mcp", mounted), WithWebSocket(mounted))
	open := New(&fakeSessions{}, fakeContent{}, WithLogger(log), WithWebSocket(mounted))
	listed := New(&fakeSessions{}, fakeContent{}, WithLogger(log), WithWebSocket(mounted), WithAllowedOrigins([]string{"http://localhost:5173"}))
	origin := answer{http.StatusForbidden, proxy.EORIGIN}
	unauthorized := answer{http.StatusUnauthorized, proxy.EUNAUTHORIZED}
	served := answer{http.StatusNoContent, ""}
	for _, tc := range []struct {
		name   string
		srv    *Server
		target string
		hdr    map[string]string
		want   answer
		// wantSeen is what the handler got, when it was reached.
		wantSeen *seenRequest
	}{
		{"operator's token", locked, "/ws?token=" + operatorToken, nil, served, &seenRequest{"", "/ws", false}},
		{"client token", locked, "/ws?token=" + aliceToken, nil, served, &seenRequest{"", "/ws", true}},
		{"other parameters kept", locked, "/ws?toolsets=storage&token=" + operatorToken + "&x=1", nil, served, &seenRequest{"toolsets=storage&x=1", "/ws?toolsets=storage&x=1", false}},
		{"percent-encoded name", locked, "/ws?%74oken=" + operatorToken, nil, served, &seenRequest{"", "/ws", false}},
		{"wrong token", locked, "/ws?token=" + strings.ToUpper(aliceToken), nil, unauthorized, nil},
		{"empty token", locked, "/ws?token=", nil, unauthorized, nil},
		{"two tokens", locked, "/ws?token=" + operatorToken + "&token=" + operatorToken, nil, unauthorized, nil},
		{"header wins over the query", locked, "/ws?token=" + operatorToken, map[string]string{"Authorization": "Bearer " + aliceToken + "x"}, unauthorized, nil},
		{"header alone", locked, "/ws", map[string]string{"Authorization": "Bearer " + operatorToken}, served, &seenRequest{"", "/ws", false}},
		{"not on /mcp", locked, "/mcp?token=" + operatorToken, nil, unauthorized, nil},
		{"not on the API", locked, "/sessions?token=" + operatorToken, nil, unauthorized, nil},
		{"not under /ws", locked, "/ws/x?token=" + operatorToken, nil, unauthorized, nil},
		{"open server drops it too", open, "/ws?token=" + operatorToken, nil, served, &seenRequest{"", "/ws", false}},
		// A page's WebSocket: only this server's own origin, or a listed one.
		{"page of this server", locked, "/ws?token=" + operatorToken, map[string]string{"Origin": "http://127.0.0.1:34501"}, served, &seenRequest{"", "/ws", false}},
		{"page of a listed origin", listed, "/ws", map[string]string{"Origin": "http://localhost:5173"}, served, &seenRequest{"", "/ws", false}},
		{"page of another loopback port", locked, "/ws?token=" + operatorToken, map[string]string{"Origin": "http://127.0.0.1:8080"}, origin, nil},
		{"page of another loopback name", locked, "/ws?token=" + operatorToken, map[string]string{"Origin": "http://localhost:34501"}, origin, nil},
		{"page of another loopback port, open server", open, "/ws", map[string]string{"Origin": "http://localhost:5173"}, origin, nil},
		{"page of another scheme", locked, "/ws?token=" + operatorToken, map[string]string{"Origin": "https://127.0.0.1:34501"}, origin, nil},
		{"a loopback page elsewhere is as before", locked, "/mcp", map[string]string{"Origin": "http://localhost:5173", "Authorization": "Bearer " + operatorToken}, served, &seenRequest{"", "/mcp", false}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mu.Lock()
			seen = nil
			mu.Unlock()
			if diff := cmp.Diff(tc.want, send(t, tc.srv, "GET", tc.target, "", tc.hdr)); diff != "" {
				t.Errorf("GET %s (-want +got):\n%s", tc.target, diff)
			}
			mu.Lock()
			got := seen
			mu.Unlock()
			var want []seenRequest
			if tc.wantSeen != nil {
				want = []seenRequest{*tc.wantSeen}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("what the handler got (-want +got):\n%s", diff)
			}
			out := logs.take()
			if len(out) == 0 {
				t.Fatal("nothing logged: the check below would prove nothing")
			}
			for _, secret := range []string{operatorToken, aliceToken, strings.ToUpper(aliceToken)} {
				if bytes.Contains(out, []byte(secret)) {
					t.Errorf("a token is in the log:\n%s", out)
				}
			}
		})
	}
}
