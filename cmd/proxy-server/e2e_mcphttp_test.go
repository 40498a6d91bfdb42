package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
)

// sdkNavigation is what testdata/mcp_http_client.mjs reports of one call.
type sdkNavigation struct {
	SessionID string `json:"session_id"`
	PageTitle string `json:"page_title"`
	Status    string `json:"status"`
}

type sdkClient struct {
	MCPSessionID         string        `json:"mcp_session_id"`
	Tools                []string      `json:"tools"`
	Set                  sdkNavigation `json:"set"`
	Read                 sdkNavigation `json:"read"`
	ReadAfter            sdkNavigation `json:"read_after"`
	StatusAfterTerminate int           `json:"status_after_terminate"`
}

// TestStreamableHTTPWithOfficialSDK connects the official MCP TypeScript SDK
// to /mcp twice: two MCP sessions, two isolated default browser sessions,
// the bridge's tool list, and a terminated MCP session closes its browser
// session.
func TestStreamableHTTPWithOfficialSDK(t *testing.T) {
	requireBrowser(t)
	root := projectRoot(t)
	if _, err := os.Stat(filepath.Join(root, "node_modules/@modelcontextprotocol/sdk/package.json")); err != nil {
		t.Skip("node_modules/@modelcontextprotocol/sdk is missing: run `npm ci` (make test does)")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not on PATH")
	}
	s := startServer(t, "", nil)
	pages := site(t)

	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, node, "testdata/mcp_http_client.mjs", s.URL+"/mcp", pages)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Run(); err != nil {
		t.Fatalf("SDK client: %v\nstdout: %s\nstderr: %s", err, stdout.String(), stderr.String())
	}
	var got struct{ A, B sdkClient }
	if err := json.Unmarshal(stdout.Bytes(), &got); err != nil {
		t.Fatalf("SDK client output %q: %v\nstderr: %s", stdout.String(), err, stderr.String())
	}
	t.Logf("SDK client reported: %s", stdout.String())
	a, b := got.A, got.B

	if a.MCPSessionID == "" || b.MCPSessionID == "" || a.MCPSessionID == b.MCPSessionID {
		t.Errorf("Mcp-Session-Ids %q and %q: want two distinct ones", a.MCPSessionID, b.MCPSessionID)
	}

	// The same tools as the bridge, which lists GET /tools.
	var catalogue struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	if code := do(t, "GET", s.URL+"/tools", nil, &catalogue); code != http.StatusOK {
		t.Fatalf("GET /tools = %d", code)
	}
	var want []string
	for _, tl := range catalogue.Tools {
		want = append(want, tl.Name)
	}
	slices.Sort(want)
	for name, c := range map[string]sdkClient{"a": a, "b": b} {
		if diff := cmp.Diff(want, c.Tools); diff != "" {
			t.Errorf("tools of MCP session %s (-GET /tools +tools/list):\n%s", name, diff)
		}
	}

	// Each MCP session has its own browser session, made on its first call.
	for _, tc := range []struct {
		name       string
		c          sdkClient
		set, reads string
	}{
		{"a", a, "set alpha", "ls=alpha;ck=who=alpha"},
		{"b", b, "set beta", "ls=beta;ck=who=beta"},
	} {
		if tc.c.Set.PageTitle != tc.set || tc.c.Set.Status != proxy.StatusSuccess {
			t.Errorf("%s: set = %+v, want title %q", tc.name, tc.c.Set, tc.set)
		}
		if tc.c.Read.PageTitle != tc.reads {
			t.Errorf("%s reads %q, want %q (state leaked between MCP sessions)", tc.name, tc.c.Read.PageTitle, tc.reads)
		}
		if tc.c.Set.SessionID == "" || tc.c.Read.SessionID != tc.c.Set.SessionID {
			t.Errorf("%s: calls went to sessions %q then %q: want one default session", tc.name, tc.c.Set.SessionID, tc.c.Read.SessionID)
		}
	}
	if a.Set.SessionID == b.Set.SessionID {
		t.Fatalf("both MCP sessions used browser session %s", a.Set.SessionID)
	}

	// Terminating a's MCP session closed its browser session (by the time
	// DELETE answered) and retired its Mcp-Session-Id; b's goes on.
	if a.StatusAfterTerminate != http.StatusNotFound {
		t.Errorf("request with a terminated Mcp-Session-Id = %d, want 404", a.StatusAfterTerminate)
	}
	if b.ReadAfter.PageTitle != "ls=beta;ck=who=beta" || b.ReadAfter.SessionID != b.Set.SessionID {
		t.Errorf("b after a's DELETE: %+v", b.ReadAfter)
	}
	for _, tc := range []struct {
		id    string
		state proxy.SessionState
	}{
		{a.Set.SessionID, proxy.SessionClosed},
		{b.Set.SessionID, proxy.SessionActive},
	} {
		var sess proxy.Session
		if code := do(t, "GET", s.URL+"/sessions/"+tc.id, nil, &sess); code != http.StatusOK || sess.State != tc.state {
			t.Errorf("GET /sessions/%s = %d, state %q: want %q", tc.id, code, sess.State, tc.state)
		}
	}
}
