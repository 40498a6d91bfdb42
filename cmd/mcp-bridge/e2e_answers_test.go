//go:build linux

package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/e2etest"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/mcpserver"
)

// answersToolsets adds a selector group to the defaults: its tools answer
// values of their own.
const answersToolsets = "upstream,session,content,extraction"

// valuesSite serves a page with three values to read, a long text, and a
// console error.
func valuesSite(t *testing.T) string {
	t.Helper()
	long := strings.Repeat("lorem ipsum ", 300)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/values.html" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><title>Values</title>
<h1>Stock</h1><p id="price">12.50</p><p id="count">7</p><p id="sku">AB-123</p>
<p id="long">%s</p><script>console.error("stock feed down")</script>`, long)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/values.html"
}

// TestAnswersCarryResultsAndCompactErrors: through mcp-bridge and through
// /mcp, on the real binaries and Chromium, a tool's small result is in its
// answer (one call reads one value), a large one is its size and the
// ref_id that get_content reads, and every failure answers in the same
// compact lines: never a JSON body.
func TestAnswersCarryResultsAndCompactErrors(t *testing.T) {
	requireBrowser(t)
	page := valuesSite(t)
	port := e2etest.FreePort(t)
	startServer(t, port, filepath.Join(t.TempDir(), "proxy.db"), "PROXY_BLOCKED_DOMAINS=blocked.example")
	clients := []*mcpClient{
		startBridgeWith(t, "bridge", port, "--toolsets="+answersToolsets),
		startHTTPClientAt(t, "mcp", "http://127.0.0.1:"+port+"/mcp?toolsets="+answersToolsets),
	}
	for _, c := range clients {
		t.Run(c.name, func(t *testing.T) {
			c.browser(t, "browser_navigate", map[string]any{"url": page})
			t.Run("results", func(t *testing.T) {
				tests := []struct {
					tool  string
					args  map[string]any
					check func(p mcpserver.Parsed) bool
				}{
					{"browser_evaluate", map[string]any{"function": "() => document.querySelector('#price').textContent"},
						func(p mcpserver.Parsed) bool { return p.Result == `"12.50"` }},
					{"browser_evaluate", map[string]any{"function": "() => ({count: +document.querySelector('#count').textContent, sku: document.querySelector('#sku').textContent})"},
						func(p mcpserver.Parsed) bool { return p.Result == `{"count":7,"sku":"AB-123"}` }},
					{"get_text", map[string]any{"selector": "#sku"},
						func(p mcpserver.Parsed) bool { return strings.Contains(p.Value, `"text":"AB-123"`) }},
					{"browser_tabs", map[string]any{"action": "list"},
						func(p mcpserver.Parsed) bool {
							return p.Tabs == "0 (current) Values "+page
						}},
					{"browser_console_messages", map[string]any{"level": "error"},
						func(p mcpserver.Parsed) bool { return strings.Contains(p.Result, "stock feed down") }},
				}
				for _, tt := range tests {
					text, isErr, err := c.call(tt.tool, tt.args)
					p, perr := mcpserver.ParseAnswer(text)
					if err != nil || isErr || perr != nil || p.RefID == "" || !tt.check(p) {
						t.Errorf("%s %v answered (isError=%v, %v, %v):\n%s", tt.tool, tt.args, isErr, err, perr, text)
					}
				}
			})
			t.Run("large results are their size", func(t *testing.T) {
				for _, tt := range []struct {
					tool string
					args map[string]any
				}{
					{"browser_evaluate", map[string]any{"function": "() => document.querySelector('#long').textContent"}},
					{"get_text", map[string]any{"selector": "#long"}},
				} {
					text, isErr, err := c.call(tt.tool, tt.args)
					p, perr := mcpserver.ParseAnswer(text)
					if err != nil || isErr || perr != nil || p.ResultSize == "" || p.Result != "" || p.Value != "" || strings.Contains(text, "lorem") {
						t.Errorf("%s of a 3.6 KB text answered (isError=%v, %v, %v):\n%s", tt.tool, isErr, err, perr, text)
						continue
					}
					if got, isErr, err := c.call("get_content", map[string]any{"ref_id": p.RefID, "search_for": "lorem"}); err != nil || isErr || !strings.Contains(got, "lorem ipsum lorem ipsum") {
						t.Errorf("get_content of the %s ref %s = %.200q (isError=%v, %v)", tt.tool, p.RefID, got, isErr, err)
					}
				}
			})
			t.Run("failures", func(t *testing.T) {
				tests := []struct {
					name, tool string
					args       map[string]any
					code       string
					retryable  bool
					recorded   bool
				}{
					{"policy refusal", "browser_navigate", map[string]any{"url": "https://blocked.example/"}, proxy.EDOMAINBLOCKED, false, false},
					{"schema check", "browser_navigate", map[string]any{"url": 5}, proxy.EINVALID, false, false},
					{"unknown session", "browser_snapshot", map[string]any{"session_id": "6f1c1d2e-0000-4000-8000-000000000000"}, proxy.ESESSIONMISSING, false, false},
					{"unknown ref", "get_content", map[string]any{"ref_id": "nope"}, proxy.EREFMISSING, false, false},
					{"upstream's own error", "browser_evaluate", map[string]any{"function": "() => { throw new Error('kaput') }"}, proxy.EBROWSER, false, true},
					{"a selector tool's failure", "get_text", map[string]any{"selector": "#price >>> ["}, proxy.EINVALIDSELECTOR, false, true},
				}
				for _, tt := range tests {
					t.Run(tt.name, func(t *testing.T) {
						text, isErr, err := c.call(tt.tool, tt.args)
						if err != nil || !isErr || strings.HasPrefix(text, "{") {
							t.Fatalf("%s %v = %s (isError=%v, %v); want a compact tool error", tt.tool, tt.args, text, isErr, err)
						}
						p, err := mcpserver.ParseAnswer(text)
						if err != nil || p.ErrorCode != tt.code || p.Retryable != tt.retryable || p.ErrorMessage == "" || p.Suggestion == "" || (p.RefID != "") != tt.recorded {
							t.Errorf("%s %v answered (%v):\n%s\nwant %s, retryable %v, a suggestion, a ref_id %v", tt.tool, tt.args, err, text, tt.code, tt.retryable, tt.recorded)
						}
						if lines := strings.Split(text, "\n"); !strings.HasPrefix(lines[0], "error: ") || len(lines) > 3 {
							t.Errorf("the answer is not error, suggestion, ref_id:\n%s", text)
						}
						if tt.recorded {
							if got, isErr, err := c.call("get_content", map[string]any{"ref_id": p.RefID}); err != nil || isErr || got == "" {
								t.Errorf("get_content of the failed call's ref %s = %q (isError=%v, %v)", p.RefID, got, isErr, err)
							}
						}
					})
				}
			})
		})
	}
}
