//go:build unix

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
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/mcpserver"
)

// TestRequestDefences runs a server with PROXY_AUTH_TOKEN set and checks the
// DNS-rebinding and token defences on the real listener (/mcp included),
// that with the token real calls succeed over /call and /mcp, and then
// drives it through a real mcp-bridge that carries MCP_PROXY_TOKEN.
func TestRequestDefences(t *testing.T) {
	const token = "e2e-token-Zq8"
	s := startServer(t, "", map[string]string{"PROXY_AUTH_TOKEN": token})
	pages := site(t)
	u, err := url.Parse(s.URL)
	if err != nil {
		t.Fatal(err)
	}
	port := u.Port()

	type answer struct {
		Status int
		Code   string
	}
	send := func(method, path, body string, hdr map[string]string) (answer, []byte) {
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
		return got, data
	}
	bearer := "Bearer " + token
	unknown := `{"session_id":"6f1c1d2e-0000-4000-8000-000000000000","tool":"browser_snapshot"}`
	// A real MCP initialize: on /mcp a 200 means the request got through
	// the defences to the MCP server and was served.
	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"defences","version":"1"}}}`
	mcpHdr := func(extra ...string) map[string]string {
		h := map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
		for i := 0; i+1 < len(extra); i += 2 {
			h[extra[i]] = extra[i+1]
		}
		return h
	}

	tests := []struct {
		name, method, path, body string
		hdr                      map[string]string
		want                     answer
	}{
		{"health open without token", "GET", "/health", "", nil, answer{200, ""}},
		{"no token", "POST", "/call", unknown, nil, answer{401, proxy.EUNAUTHORIZED}},
		{"wrong token", "GET", "/sessions", "", map[string]string{"Authorization": "Bearer nope"}, answer{401, proxy.EUNAUTHORIZED}},
		{"evil origin on /call", "POST", "/call", unknown, map[string]string{"Authorization": bearer, "Origin": "http://evil.example"}, answer{403, proxy.EORIGIN}},
		{"evil origin on /mcp", "POST", "/mcp", initialize, mcpHdr("Authorization", bearer, "Origin", "http://evil.example"), answer{403, proxy.EORIGIN}},
		{"no token on /mcp", "POST", "/mcp", initialize, mcpHdr(), answer{401, proxy.EUNAUTHORIZED}},
		{"wrong token on /mcp", "POST", "/mcp", initialize, mcpHdr("Authorization", "Bearer nope"), answer{401, proxy.EUNAUTHORIZED}},
		{"foreign host on /mcp", "POST", "/mcp", initialize, mcpHdr("Authorization", bearer, "Host", "evil.example:"+port), answer{403, proxy.EHOST}},
		{"loopback origin on /mcp", "POST", "/mcp", initialize, mcpHdr("Authorization", bearer, "Origin", "http://127.0.0.1:5173"), answer{200, ""}},
		{"localhost origin on /mcp", "POST", "/mcp", initialize, mcpHdr("Authorization", bearer, "Origin", "http://localhost:5173"), answer{200, ""}},
		{"foreign host", "GET", "/sessions", "", map[string]string{"Authorization": bearer, "Host": "evil.example:" + port}, answer{403, proxy.EHOST}},
		{"rebound page", "POST", "/sessions", "", map[string]string{"Host": "evil.example:" + port, "Origin": "http://evil.example:" + port}, answer{403, proxy.EHOST}},
		{"loopback origin", "GET", "/sessions", "", map[string]string{"Authorization": bearer, "Origin": "http://localhost:5173"}, answer{200, ""}},
		{"localhost host", "GET", "/sessions", "", map[string]string{"Authorization": bearer, "Host": "localhost:" + port}, answer{200, ""}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, _ := send(tc.method, tc.path, tc.body, tc.hdr)
			if tc.path == "/health" && got.Status == http.StatusServiceUnavailable {
				got.Status = http.StatusOK // degraded is fine here: only "not 401" matters
				got.Code = ""
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s %s (-want +got):\n%s", tc.method, tc.path, diff)
			}
		})
	}

	// With the token, real calls work: a session is created and navigates
	// over the HTTP API…
	auth := map[string]string{"Authorization": bearer, "Origin": "http://127.0.0.1:" + port}
	got, body := send("POST", "/sessions", "", auth)
	var sess proxy.Session
	if got.Status != http.StatusCreated || json.Unmarshal(body, &sess) != nil || sess.ID == "" {
		t.Fatalf("POST /sessions with the token = %+v %s", got, body)
	}
	got, body = send("POST", "/call", `{"session_id":"`+sess.ID+`","tool":"browser_navigate","params":{"url":"`+pages+`/index.html"}}`, auth)
	var nav proxy.CallResult
	if got.Status != http.StatusOK || json.Unmarshal(body, &nav) != nil || nav.Status != proxy.StatusSuccess || nav.Metadata.PageTitle != "Test Home" {
		t.Errorf("browser_navigate over /call with the token = %+v %s", got, body)
	}
	// …and over /mcp, from a loopback origin.
	htr, err := transport.NewStreamableHTTP(s.URL+"/mcp", transport.WithHTTPHeaders(map[string]string{"Authorization": bearer, "Origin": "http://localhost:5173"}))
	if err != nil {
		t.Fatal(err)
	}
	mc := client.NewClient(htr, client.WithProtocolVersion(mcp.ProtocolVersion20251125))
	mctx, mcancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer mcancel()
	if err := mc.Start(mctx); err != nil {
		t.Fatalf("/mcp start: %v", err)
	}
	t.Cleanup(func() { mc.Close() })
	minit := mcp.InitializeRequest{}
	minit.Params.ProtocolVersion = mcp.ProtocolVersion20251125
	minit.Params.ClientInfo = mcp.Implementation{Name: "defences-http", Version: "1"}
	if _, err := mc.Initialize(mctx, minit); err != nil {
		t.Fatalf("/mcp initialize with the token: %v", err)
	}
	mreq := mcp.CallToolRequest{}
	mreq.Params.Name = "browser_navigate"
	mreq.Params.Arguments = map[string]any{"url": pages + "/index.html"}
	mres, err := mc.CallTool(mctx, mreq)
	if err != nil {
		t.Fatalf("browser_navigate over /mcp with the token: %v", err)
	}
	var mtext strings.Builder
	for _, part := range mres.Content {
		if tc, ok := part.(mcp.TextContent); ok {
			mtext.WriteString(tc.Text)
		}
	}
	mnav, err := mcpserver.ParseAnswer(mtext.String())
	if err != nil || mres.IsError || mnav.Error != "" || mnav.PageTitle != "Test Home" {
		t.Errorf("browser_navigate over /mcp with the token = %q (isError=%v, %v)", mtext.String(), mres.IsError, err)
	}
	lreq := mcp.CallToolRequest{}
	lreq.Params.Name = "list_sessions"
	lres, err := mc.CallTool(mctx, lreq)
	if err != nil || lres.IsError || len(lres.Content) == 0 {
		t.Fatalf("list_sessions over /mcp with the token: %v %+v", err, lres)
	}
	var listed struct {
		Sessions []struct {
			ID      string `json:"session_id"`
			Default bool   `json:"default"`
		} `json:"sessions"`
	}
	if tc, ok := lres.Content[0].(mcp.TextContent); !ok || json.Unmarshal([]byte(tc.Text), &listed) != nil || len(listed.Sessions) != 1 ||
		!listed.Sessions[0].Default || listed.Sessions[0].ID == sess.ID {
		t.Errorf("/mcp sessions = %+v: want its own default session only, not %s", listed, sess.ID)
	}

	// A real bridge with MCP_PROXY_TOKEN drives the browser.
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
	if call, err := mcpserver.ParseAnswer(text.String()); err != nil || res.IsError || call.Error != "" {
		t.Fatalf("browser_navigate through a bridge with the token = %q (isError=%v, %v)", text.String(), res.IsError, err)
	}
}
