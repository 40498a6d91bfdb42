//go:build unix

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
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
)

// sdkNavigation is what testdata/mcp_http_client.mjs reports of one call.
type sdkNavigation struct {
	SessionID string `json:"session_id"`
	PageTitle string `json:"page_title"`
	Status    string `json:"status"`
}

type sdkClient struct {
	MCPSessionID         string            `json:"mcp_session_id"`
	Tools                []json.RawMessage `json:"tools"`
	Set                  sdkNavigation     `json:"set"`
	Read                 sdkNavigation     `json:"read"`
	ReadAfter            sdkNavigation     `json:"read_after"`
	StatusAfterTerminate int               `json:"status_after_terminate"`
}

// toolDef is the part of a tool definition a client acts on, decoded
// generically so that every schema keyword counts.
type toolDef map[string]any

// toolDefs decodes raw tool objects, keeps the fields of a definition (name,
// title, description, inputSchema, outputSchema, annotations) and sorts
// them by name.
func toolDefs(t *testing.T, raw []json.RawMessage) []toolDef {
	t.Helper()
	out := make([]toolDef, 0, len(raw))
	for _, r := range raw {
		var all map[string]any
		if err := json.Unmarshal(r, &all); err != nil {
			t.Fatalf("tool %s: %v", r, err)
		}
		def := toolDef{}
		for _, k := range []string{"name", "title", "description", "inputSchema", "outputSchema", "annotations"} {
			if v, ok := all[k]; ok {
				def[k] = v
			}
		}
		out = append(out, def)
	}
	slices.SortFunc(out, func(a, b toolDef) int {
		an, _ := a["name"].(string)
		bn, _ := b["name"].(string)
		return strings.Compare(an, bn)
	})
	return out
}

// bridgeTools is what a real mcp-bridge in front of s answers to tools/list,
// every page, as raw JSON: mcp-go's client would decode the schemas into
// its own types and lose keywords (anyOf, descriptions…), so tools/list
// goes through the transport and comes back unparsed.
func bridgeTools(t *testing.T, s *server) []json.RawMessage {
	t.Helper()
	_, bridgeBin := binaries(t)
	tr := transport.NewStdio(bridgeBin, []string{"MCP_PROXY_URL=" + s.URL, "MCP_PROXY_AUTOSTART=0"})
	c := client.NewClient(tr, client.WithProtocolVersion(mcp.ProtocolVersion20251125))
	if err := c.Start(context.Background()); err != nil {
		t.Fatalf("bridge start: %v", err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.ProtocolVersion20251125
	init.Params.ClientInfo = mcp.Implementation{Name: "tools-reference", Version: "1"}
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatalf("bridge initialize: %v", err)
	}
	return rawTools(ctx, t, tr)
}

// rawTools pages through tools/list on an initialised transport and returns
// the tools as sent.
func rawTools(ctx context.Context, t *testing.T, tr transport.Interface) []json.RawMessage {
	t.Helper()
	var all []json.RawMessage
	cursor := ""
	for page := 0; ; page++ {
		req := transport.JSONRPCRequest{JSONRPC: mcp.JSONRPC_VERSION, ID: mcp.NewRequestId("raw-tools-list-" + strconv.Itoa(page)), Method: string(mcp.MethodToolsList)}
		if cursor != "" {
			req.Params = map[string]any{"cursor": cursor}
		}
		resp, err := tr.SendRequest(ctx, req)
		if err != nil {
			t.Fatalf("tools/list: %v", err)
		}
		if resp.Error != nil {
			t.Fatalf("tools/list: %+v", resp.Error)
		}
		var res struct {
			Tools      []json.RawMessage `json:"tools"`
			NextCursor string            `json:"nextCursor"`
		}
		if err := json.Unmarshal(resp.Result, &res); err != nil {
			t.Fatalf("tools/list result %s: %v", resp.Result, err)
		}
		all = append(all, res.Tools...)
		if cursor = res.NextCursor; cursor == "" || page > 20 {
			return all
		}
	}
}

// requireSDK skips a test of the official MCP TypeScript SDK when it or
// node is absent.
func requireSDK(t *testing.T) {
	t.Helper()
	requireBrowser(t)
	if _, err := os.Stat(filepath.Join(projectRoot(t), "node_modules/@modelcontextprotocol/sdk/package.json")); err != nil {
		t.Skip("node_modules/@modelcontextprotocol/sdk is missing: run `npm ci` (make test does)")
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not on PATH")
	}
}

// runSDK runs a script of testdata that drives /mcp with the SDK, within
// limit, and decodes the one JSON object it prints into out.
func runSDK(t *testing.T, out any, limit time.Duration, script string, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, "node", append([]string{script}, args...)...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Run(); err != nil {
		t.Fatalf("SDK client: %v\nstdout: %s\nstderr: %s", err, stdout.String(), stderr.String())
	}
	if err := json.Unmarshal(stdout.Bytes(), out); err != nil {
		t.Fatalf("SDK client output %q: %v\nstderr: %s", stdout.String(), err, stderr.String())
	}
}

// TestStreamableHTTPWithOfficialSDK connects the official MCP TypeScript SDK
// to /mcp twice: two MCP sessions, two isolated default browser sessions,
// the same tool definitions as a real mcp-bridge lists, and a terminated MCP
// session closes its browser session.
func TestStreamableHTTPWithOfficialSDK(t *testing.T) {
	requireSDK(t)
	s := startServer(t, "", nil)
	pages := site(t)
	var got struct{ A, B sdkClient }
	runSDK(t, &got, 4*time.Minute, "testdata/mcp_http_client.mjs", s.URL+"/mcp", pages)
	a, b := got.A, got.B

	if a.MCPSessionID == "" || b.MCPSessionID == "" || a.MCPSessionID == b.MCPSessionID {
		t.Errorf("Mcp-Session-Ids %q and %q: want two distinct ones", a.MCPSessionID, b.MCPSessionID)
	}

	// The same tools as a real mcp-bridge lists over stdio: whole
	// definitions (name, description, input schema, annotations), not only
	// the names.
	want := toolDefs(t, bridgeTools(t, s))
	if len(want) == 0 {
		t.Fatal("the bridge lists no tools")
	}
	for name, c := range map[string]sdkClient{"a": a, "b": b} {
		if diff := cmp.Diff(want, toolDefs(t, c.Tools)); diff != "" {
			t.Errorf("tools/list of MCP session %s over /mcp (-bridge +SDK):\n%s", name, diff)
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

// TestEndedMCPSessionWithOfficialSDK: the official MCP TypeScript SDK ends
// an MCP session (DELETE, 200); ending it again is refused with 404, as any
// request naming an ended session is. A method the transport does not have
// is 405 with Allow and a JSON-RPC error body.
func TestEndedMCPSessionWithOfficialSDK(t *testing.T) {
	requireSDK(t)
	s := startServer(t, "", nil)
	type ending struct {
		OK      bool   `json:"ok"`
		Status  int    `json:"status"`
		Message string `json:"message"`
	}
	var got struct {
		MCPSessionID  string `json:"mcp_session_id"`
		First, Second ending
	}
	runSDK(t, &got, 2*time.Minute, "testdata/mcp_http_end_twice.mjs", s.URL+"/mcp")
	if got.MCPSessionID == "" || !got.First.OK {
		t.Errorf("ending MCP session %q: %+v, want it ended", got.MCPSessionID, got.First)
	}
	if got.Second.OK || got.Second.Status != http.StatusNotFound {
		t.Errorf("ending MCP session %q again: %+v, want refused with 404", got.MCPSessionID, got.Second)
	}

	for _, method := range []string{http.MethodPut, http.MethodPatch} {
		req, err := http.NewRequest(method, s.URL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var body struct {
			JSONRPC string `json:"jsonrpc"`
			Error   *struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		derr := json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != "GET, HEAD, POST, DELETE" ||
			derr != nil || body.JSONRPC != "2.0" || body.Error == nil || !strings.Contains(body.Error.Message, method) {
			t.Errorf("%s /mcp = %d Allow %q, body %+v (%v); want 405 with Allow and a JSON-RPC error naming the method",
				method, resp.StatusCode, resp.Header.Get("Allow"), body, derr)
		}
	}
}
