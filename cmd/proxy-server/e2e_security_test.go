package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
)

// TestRequestDefences runs a server with PROXY_AUTH_TOKEN set and checks the
// DNS-rebinding and token defences on the real listener, then drives it
// through a real mcp-bridge that carries MCP_PROXY_TOKEN.
func TestRequestDefences(t *testing.T) {
	const token = "e2e-token-Zq8"
	s := startServer(t, "", map[string]string{"PROXY_AUTH_TOKEN": token})
	u, err := url.Parse(s.URL)
	if err != nil {
		t.Fatal(err)
	}
	port := u.Port()

	type answer struct {
		Status int
		Code   string
	}
	send := func(method, path, body string, hdr map[string]string) answer {
		t.Helper()
		req, err := http.NewRequest(method, s.URL+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range hdr {
			if k == "Host" {
				req.Host = v
			} else {
				req.Header.Set(k, v)
			}
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		got := answer{Status: resp.StatusCode}
		if resp.StatusCode >= 400 {
			var eb struct {
				Error string `json:"error"`
			}
			_ = json.Unmarshal(data, &eb)
			got.Code = eb.Error
		}
		return got
	}
	bearer := "Bearer " + token
	unknown := `{"session_id":"6f1c1d2e-0000-4000-8000-000000000000","tool":"browser_snapshot"}`

	// /mcp is mounted by another change; probe it with every credential so
	// that a 403 below means the guard, not a missing route.
	mcpMounted := send("POST", "/mcp", `{}`, map[string]string{"Authorization": bearer}).Code != proxy.ENOENDPOINT

	tests := []struct {
		name, method, path, body string
		hdr                      map[string]string
		want                     answer
		needsMCP                 bool
	}{
		{"health open without token", "GET", "/health", "", nil, answer{200, ""}, false},
		{"no token", "POST", "/call", unknown, nil, answer{401, proxy.EUNAUTHORIZED}, false},
		{"wrong token", "GET", "/sessions", "", map[string]string{"Authorization": "Bearer nope"}, answer{401, proxy.EUNAUTHORIZED}, false},
		{"token", "POST", "/call", unknown, map[string]string{"Authorization": bearer}, answer{404, proxy.ESESSIONMISSING}, false},
		{"evil origin on /call", "POST", "/call", unknown, map[string]string{"Authorization": bearer, "Origin": "http://evil.example"}, answer{403, proxy.EORIGIN}, false},
		{"evil origin on /mcp", "POST", "/mcp", `{}`, map[string]string{"Authorization": bearer, "Origin": "http://evil.example"}, answer{403, proxy.EORIGIN}, true},
		{"no token on /mcp", "POST", "/mcp", `{}`, nil, answer{401, proxy.EUNAUTHORIZED}, true},
		{"foreign host", "GET", "/sessions", "", map[string]string{"Authorization": bearer, "Host": "evil.example:" + port}, answer{403, proxy.EHOST}, false},
		{"rebound page", "POST", "/sessions", "", map[string]string{"Host": "evil.example:" + port, "Origin": "http://evil.example:" + port}, answer{403, proxy.EHOST}, false},
		{"loopback origin", "GET", "/sessions", "", map[string]string{"Authorization": bearer, "Origin": "http://localhost:5173"}, answer{200, ""}, false},
		{"localhost host", "GET", "/sessions", "", map[string]string{"Authorization": bearer, "Host": "localhost:" + port}, answer{200, ""}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.needsMCP && !mcpMounted {
				t.Skip("/mcp is not mounted in this build yet; the guard covers it once it is (see internal/api TestGuard)")
			}
			got := send(tc.method, tc.path, tc.body, tc.hdr)
			if tc.path == "/health" && got.Status == http.StatusServiceUnavailable {
				got.Status = http.StatusOK // degraded is fine here: only "not 401" matters
				got.Code = ""
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s %s (-want +got):\n%s", tc.method, tc.path, diff)
			}
		})
	}

	// A real bridge with MCP_PROXY_TOKEN drives the browser.
	pages := site(t)
	_, bridgeBin := binaries(t)
	tr := transport.NewStdio(bridgeBin, []string{"MCP_PROXY_URL=" + s.URL, "MCP_PROXY_TOKEN=" + token, "MCP_PROXY_AUTOSTART=0"})
	c := client.NewClient(tr, client.WithProtocolVersion(mcp.ProtocolVersion20251125))
	if err := c.Start(context.Background()); err != nil {
		t.Fatalf("bridge start: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.ProtocolVersion20251125
	init.Params.ClientInfo = mcp.Implementation{Name: "defences", Version: "1"}
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatalf("bridge initialize: %v", err)
	}
	req := mcp.CallToolRequest{}
	req.Params.Name = "browser_navigate"
	req.Params.Arguments = map[string]any{"url": pages + "/index.html"}
	res, err := c.CallTool(ctx, req)
	if err != nil {
		t.Fatalf("browser_navigate through the bridge: %v", err)
	}
	var text strings.Builder
	for _, part := range res.Content {
		if tc, ok := part.(mcp.TextContent); ok {
			text.WriteString(tc.Text)
		}
	}
	var call proxy.CallResult
	if err := json.Unmarshal([]byte(text.String()), &call); err != nil || res.IsError || call.Status != proxy.StatusSuccess {
		t.Fatalf("browser_navigate through a bridge with the token = %q (isError=%v, %v)", text.String(), res.IsError, err)
	}
}
