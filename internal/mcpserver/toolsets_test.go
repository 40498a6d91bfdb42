package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/catalog"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/toolset"
)

// groupedTools has a tool of upstream's default list, one of its storage
// tools and one of the proxy's navigation tools.
var groupedTools = []proxy.Tool{
	{Name: "browser_navigate", Description: "Navigate", InputSchema: navigateSchema},
	{Name: "browser_localstorage_get", Description: "Get a localStorage item by key", InputSchema: schema("key")},
	{Name: "navigate", Description: "Navigate by URL", InputSchema: schema("url")},
}

func listNames(t *testing.T, c *httpClient) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := c.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	slices.Sort(names)
	return names
}

// One /mcp serves clients of different choices: each MCP session lists and
// calls the groups its endpoint URL names (?toolsets=), else the server's;
// a tool outside them is refused as an unknown one, before the backend.
func TestHTTPClientToolsets(t *testing.T) {
	storageOnly, _ := toolset.Select([]string{"storage"})
	tests := []struct {
		name     string
		server   toolset.Selection // the server's PROXY_TOOLSETS
		query    string
		want     []string
		callable string
		refused  []string
	}{
		{name: "server default", query: "",
			want:     []string{"browser_navigate", catalog.ToolCloseSession, catalog.ToolCreateSession, catalog.ToolGetConsole, catalog.ToolGetContent, catalog.ToolListProfiles, catalog.ToolListSessions, catalog.ToolRequestHuman, catalog.ToolResumeSession, catalog.ToolSaveProfile},
			callable: "browser_navigate", refused: []string{"browser_localstorage_get", "navigate"}},
		{name: "server's own choice", server: storageOnly, query: "",
			want:     []string{"browser_localstorage_get"},
			callable: "browser_localstorage_get", refused: []string{"browser_navigate", catalog.ToolListSessions}},
		{name: "client chooses storage", query: "?toolsets=storage,session",
			want:     []string{"browser_localstorage_get", catalog.ToolCloseSession, catalog.ToolCreateSession, catalog.ToolListProfiles, catalog.ToolListSessions, catalog.ToolRequestHuman, catalog.ToolResumeSession, catalog.ToolSaveProfile},
			callable: "browser_localstorage_get", refused: []string{"browser_navigate", "navigate", catalog.ToolGetContent}},
		{name: "client's choice replaces the server's", server: storageOnly, query: "?toolsets=upstream",
			want:     []string{"browser_navigate"},
			callable: "browser_navigate", refused: []string{"browser_localstorage_get"}},
		{name: "all", query: "?toolsets=all",
			want:     []string{"browser_localstorage_get", "browser_navigate", catalog.ToolCloseSession, catalog.ToolCreateSession, catalog.ToolGetConsole, catalog.ToolGetContent, catalog.ToolListProfiles, catalog.ToolListSessions, "navigate", catalog.ToolRequestHuman, catalog.ToolResumeSession, catalog.ToolSaveProfile},
			callable: "navigate"},
		{name: "empty choice is the server's", query: "?toolsets=",
			want:     []string{"browser_navigate", catalog.ToolCloseSession, catalog.ToolCreateSession, catalog.ToolGetConsole, catalog.ToolGetContent, catalog.ToolListProfiles, catalog.ToolListSessions, catalog.ToolRequestHuman, catalog.ToolResumeSession, catalog.ToolSaveProfile},
			callable: "browser_navigate"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := &fakeBackend{tools: groupedTools}
			c := dialHTTP(t, serveHTTP(t, NewHTTPHandler(b, b, HTTPConfig{Logger: quiet(), Toolsets: tt.server}))+tt.query)
			if diff := cmp.Diff(tt.want, listNames(t, c)); diff != "" {
				t.Errorf("tools/list (-want +got):\n%s", diff)
			}
			if text, isErr, err := callHTTP(c, tt.callable, map[string]any{"url": "http://127.0.0.1/", "key": "k"}); err != nil || isErr {
				t.Errorf("%s: %q %v", tt.callable, text, err)
			}
			for _, name := range tt.refused {
				_, _, err := callHTTP(c, name, map[string]any{"session_id": "x", "ref_id": "r"})
				// mcp-go's answer to an unknown tool: -32602, "tool not found".
				if err == nil || !strings.Contains(err.Error(), "not found") {
					t.Errorf("%s outside the selection: %v, want tool not found", name, err)
				}
			}
			_, _, calls := b.snapshot()
			if len(calls) != 1 || calls[0].Tool != tt.callable {
				t.Errorf("backend calls %+v, want only %s", calls, tt.callable)
			}
		})
	}
}

// An unknown group in the endpoint URL is refused before anything else,
// with a 400 naming every group.
func TestHTTPUnknownToolset(t *testing.T) {
	url := serveHTTP(t, NewHTTPHandler(&fakeBackend{}, &fakeBackend{}, HTTPConfig{Logger: quiet()}))
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	req, _ := http.NewRequest(http.MethodPost, url+"?toolsets=storage,cookies", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	var rpc struct {
		Error struct {
			Code    int
			Message string
		}
	}
	if err := json.Unmarshal(data, &rpc); err != nil {
		t.Fatalf("%s: %v", data, err)
	}
	if resp.StatusCode != http.StatusBadRequest || resp.Header.Get(server.HeaderKeySessionID) != "" {
		t.Errorf("status %d, session %q; want 400 and no MCP session", resp.StatusCode, resp.Header.Get(server.HeaderKeySessionID))
	}
	for _, want := range []string{`"cookies"`, strings.Join(toolset.Groups(), ", ")} {
		if !strings.Contains(rpc.Error.Message, want) {
			t.Errorf("message %q lacks %s", rpc.Error.Message, want)
		}
	}
}

// Prompts are written for the tools the client has: the proxy's navigate
// only when its group is chosen.
func TestHTTPPromptsFollowTheClientsToolsets(t *testing.T) {
	b := &fakeBackend{tools: groupedTools}
	url := serveHTTP(t, NewHTTPHandler(b, b, HTTPConfig{Logger: quiet()}))
	tests := []struct{ query, want, absent string }{
		{"", "Call browser_navigate", "Call navigate"},
		{"?toolsets=upstream,navigation,content", "Call navigate", "Call browser_navigate"},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			c := dialHTTP(t, url+tt.query)
			text, err := getPrompt(c.Client, PromptScrapeWebsite, map[string]string{"url": "http://127.0.0.1/", "selectors": `{"t":"h1"}`})
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(text, tt.want) || strings.Contains(text, tt.absent) {
				t.Errorf("prompt lacks %q or has %q:\n%s", tt.want, tt.absent, text)
			}
		})
	}
}

// A tool the catalogue keeps from every client while sessions share a
// browser is absent from tools/list, and a call of it is refused as an
// unknown tool (-32602) whose message is the catalogue's: TOOL_NOT_FOUND,
// why, and what the server would have to set. A name nobody knows is
// refused as before.
func TestHTTPHiddenToolIsExplained(t *testing.T) {
	tools := []proxy.Tool{
		{Name: "browser_navigate", InputSchema: navigateSchema},
		{Name: "browser_run_code_unsafe", InputSchema: json.RawMessage(`{"type":"object","properties":{"code":{"type":"string"}}}`)},
	}
	for _, query := range []string{"", "?toolsets=all", "?toolsets=upstream,unsafe"} {
		t.Run(query, func(t *testing.T) {
			b := &fakeBackend{tools: tools}
			url := serveHTTP(t, NewHTTPHandler(b, b, HTTPConfig{Logger: quiet()})) + query
			if names := listNames(t, dialHTTP(t, url)); slices.Contains(names, "browser_run_code_unsafe") {
				t.Errorf("tools/list = %v, want no browser_run_code_unsafe", names)
			}
			for _, tc := range []struct{ tool, want string }{
				{"browser_run_code_unsafe", "TOOL_NOT_FOUND: tool browser_run_code_unsafe is not offered"},
				{"browser_run_code_unsafe", "PROXY_BROWSER_MODE=per-session"},
				{"browser_nope", `TOOL_NOT_FOUND: no tool named "browser_nope"`},
			} {
				code, msg := rawToolCall(t, url, tc.tool)
				if code != mcp.INVALID_PARAMS || !strings.Contains(msg, tc.want) {
					t.Errorf("%s: %d %q, want %d saying %q", tc.tool, code, msg, mcp.INVALID_PARAMS, tc.want)
				}
			}
			if _, _, calls := b.snapshot(); len(calls) != 0 {
				t.Errorf("backend calls %+v, want none", calls)
			}
		})
	}
}

// rawToolCall initializes an MCP session at url and calls tool, returning
// the JSON-RPC error's code and message as they come over the wire.
func rawToolCall(t *testing.T, url, tool string) (int, string) {
	t.Helper()
	resp := sendHTTP(t, http.MethodPost, url, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	resp.Body.Close()
	resp = sendHTTP(t, http.MethodPost, url, resp.Header.Get("Mcp-Session-Id"), `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"`+tool+`","arguments":{}}}`)
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if i := bytes.Index(data, []byte("{")); i > 0 { // an SSE event
		data = data[i:]
	}
	var answer struct {
		Error *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(bytes.TrimSpace(data), &answer); err != nil || answer.Error == nil {
		t.Fatalf("tools/call %s answered %s (%v), want a JSON-RPC error", tool, data, err)
	}
	return answer.Error.Code, answer.Error.Message
}
