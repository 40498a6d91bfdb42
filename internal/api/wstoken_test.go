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
// and from every log line, whether it was right or wrong.
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
