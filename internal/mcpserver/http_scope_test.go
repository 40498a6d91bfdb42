package mcpserver

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
)

// scopeHeader stands, in these tests, for the client token the API's
// guard found on a request: it puts that token's scope in the context.
const scopeHeader = "X-Test-Token-Scope"

// TestHTTPMCPSessionBoundToTokenScope: an Mcp-Session-Id is usable only
// with the token scope that initialized it. With another client token, or
// the operator's, it is an unknown id (404), and ending it from there
// closes nothing.
func TestHTTPMCPSessionBoundToTokenScope(t *testing.T) {
	b := &fakeBackend{}
	h := NewHTTPHandler(b, b, HTTPConfig{Logger: quiet()})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if scope := r.Header.Get(scopeHeader); scope != "" {
			r = r.WithContext(proxy.WithTokenScope(r.Context(), scope))
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = h.Close(ctx)
		ts.Close()
	})
	url := ts.URL + "/mcp"
	dial := func(scope string) (*client.Client, string) {
		t.Helper()
		var opts []transport.StreamableHTTPCOption
		if scope != "" {
			opts = append(opts, transport.WithHTTPHeaders(map[string]string{scopeHeader: scope}))
		}
		tr, err := transport.NewStreamableHTTP(url, opts...)
		if err != nil {
			t.Fatal(err)
		}
		c := client.NewClient(tr, client.WithProtocolVersion(mcp.ProtocolVersion20251125))
		startAndInitialize(t, c)
		t.Cleanup(func() { _ = c.Close() })
		return c, tr.GetSessionId()
	}
	alice, aliceID := dial("scope-alice")
	if _, isErr := call(t, alice, "browser_navigate", map[string]any{"url": "http://127.0.0.1/"}); isErr {
		t.Fatal("alice's first call failed")
	}
	_, operatorID := dial("")

	send := func(method, id, scope string) (int, int) {
		t.Helper()
		var body io.Reader
		if method == http.MethodPost {
			body = strings.NewReader(`{"jsonrpc":"2.0","id":7,"method":"tools/list"}`)
		}
		req, err := http.NewRequest(method, url, body)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Session-Id", id)
		req.Header.Set("Mcp-Protocol-Version", mcp.ProtocolVersion20251125)
		if scope != "" {
			req.Header.Set(scopeHeader, scope)
		}
		// A stream that is wrongly served would stay open: the bound
		// turns that into a failure.
		resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var rpc struct {
			Error struct{ Code int } `json:"error"`
		}
		_ = json.NewDecoder(resp.Body).Decode(&rpc)
		return resp.StatusCode, rpc.Error.Code
	}
	type answer struct{ Status, RPCCode int }
	tests := []struct {
		name, method, id, scope string
		want                    answer
	}{
		{"alice's id with bob's token", http.MethodPost, aliceID, "scope-bob", answer{404, rpcSessionNotFound}},
		{"alice's id with the operator's token", http.MethodPost, aliceID, "", answer{404, rpcSessionNotFound}},
		{"alice's stream with bob's token", http.MethodGet, aliceID, "scope-bob", answer{404, rpcSessionNotFound}},
		{"ending alice's id with bob's token", http.MethodDelete, aliceID, "scope-bob", answer{404, rpcSessionNotFound}},
		{"the operator's id with alice's token", http.MethodPost, operatorID, "scope-alice", answer{404, rpcSessionNotFound}},
		{"alice's id with alice's token", http.MethodPost, aliceID, "scope-alice", answer{200, 0}},
		{"the operator's id with the operator's token", http.MethodPost, operatorID, "", answer{200, 0}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			status, code := send(tc.method, tc.id, tc.scope)
			if diff := cmp.Diff(tc.want, answer{status, code}); diff != "" {
				t.Errorf("%s /mcp (-want +got):\n%s", tc.method, diff)
			}
		})
	}
	if _, closed, _ := b.snapshot(); len(closed) != 0 {
		t.Errorf("sessions closed by another token's DELETE: %v", closed)
	}
	// Alice's session is whole: her calls still reach her default session.
	if text, isErr := call(t, alice, "browser_navigate", map[string]any{"url": "http://127.0.0.1/two"}); isErr {
		t.Errorf("alice's call after the others' attempts failed: %s", text)
	}
}
