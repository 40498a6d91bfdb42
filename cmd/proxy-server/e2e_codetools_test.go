//go:build unix

package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/e2etest"
)

// TestServeRefusesUnsafeWithASharedBrowser: asking for tool group unsafe
// where sessions share a browser process stops the real binary at start,
// naming PROXY_TOOLSETS, saying why and what to set instead.
func TestServeRefusesUnsafeWithASharedBrowser(t *testing.T) {
	requireBrowser(t)
	serverBin, _ := binaries(t)
	tests := []struct {
		name string
		env  []string
		why  string
	}{
		{"shared mode", []string{"PROXY_BROWSER_MODE=shared"}, "PROXY_BROWSER_MODE is shared"},
		{"CDP endpoint", []string{"PROXY_BROWSER_MODE=per-session", "PROXY_BROWSER_CDP_ENDPOINT=http://127.0.0.1:" + e2etest.FreePort(t)}, "PROXY_BROWSER_CDP_ENDPOINT is set"},
		{"browser nodes", []string{"PROXY_BROWSER_ENDPOINTS=ws://127.0.0.1:" + e2etest.FreePort(t) + "/pw"}, "PROXY_BROWSER_MODE is shared"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(serverBin, "serve", "-port", "0", "-db", filepath.Join(t.TempDir(), "p.db"))
			cmd.Env = append(append(os.Environ(), "PROXY_HOST=127.0.0.1", "PROXY_TOOLSETS=upstream,session,content,unsafe"), tc.env...)
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			e2etest.ExitsNonZero(t, cmd, 45*time.Second)
			msg := out.String()
			for _, want := range []string{"PROXY_TOOLSETS", tc.why, "share one browser process", "every session's pages and cookies", "PROXY_BROWSER_MODE=per-session"} {
				if !strings.Contains(msg, want) {
					t.Errorf("serve's message lacks %q:\n%s", want, msg)
				}
			}
			if strings.Contains(msg, "proxy-server listening") {
				t.Errorf("serve announced it was listening:\n%s", msg)
			}
		})
	}
}

// TestHTTPAPIKeepsCodeToolsFromASharedBrowser: over the HTTP API too, with
// sessions in one browser and workers given the config and devtools
// capabilities, GET /tools never lists upstream's tools that reach past the
// page and POST /call and /call/validate refuse them (404 TOOL_NOT_FOUND,
// saying why and what to set), whatever X-Mcp-Toolsets names; the proxy's
// own tools, which run their fixed programs through the hidden runner,
// still work.
func TestHTTPAPIKeepsCodeToolsFromASharedBrowser(t *testing.T) {
	s := startServer(t, "", map[string]string{"PROXY_PLAYWRIGHT_ARGS": "--caps=config,devtools"})
	pages := site(t)
	id := s.createSession(t)
	hidden := map[string][]string{ // what a refusal says
		"browser_run_code_unsafe": {"share one browser process", "PROXY_BROWSER_MODE=per-session", "unsafe"},
		"browser_get_config":      {"browser's endpoint", "share one browser process", "PROXY_BROWSER_MODE=per-session"},
		"browser_annotate":        {"detached process", "no configuration of this proxy offers it"},
	}
	// send makes an API request with the client's choice of groups ("" for
	// none) and decodes the answer into out.
	send := func(choice, method, path string, body any, out any) int {
		t.Helper()
		var b []byte
		if body != nil {
			var err error
			if b, err = json.Marshal(body); err != nil {
				t.Fatal(err)
			}
		}
		req, err := http.NewRequest(method, s.URL+path, bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		if choice != "" {
			req.Header.Set("X-Mcp-Toolsets", choice)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		return resp.StatusCode
	}
	for _, choice := range []string{"", "all", "upstream,unsafe"} {
		t.Run("toolsets="+choice, func(t *testing.T) {
			var list struct{ Tools []proxy.Tool }
			if code := send(choice, "GET", "/tools", nil, &list); code != http.StatusOK || len(list.Tools) == 0 {
				t.Fatalf("GET /tools = %d, %d tools", code, len(list.Tools))
			}
			var listed []string
			for _, tl := range list.Tools {
				listed = append(listed, tl.Name)
			}
			if !slices.Contains(listed, "browser_highlight") {
				t.Errorf("GET /tools lacks browser_highlight: the workers did not get the devtools capability (%v)", listed)
			}
			for tool, whys := range hidden {
				if slices.Contains(listed, tool) {
					t.Errorf("GET /tools lists %s", tool)
				}
				args := map[string]string{"code": "async (page) => page.context().browser().contexts().length"}
				for path, call := range map[string]any{
					"/call":          map[string]any{"session_id": id, "tool": tool, "params": args},
					"/call/validate": map[string]any{"tool": tool, "params": args},
				} {
					var e struct {
						Error, Message string
					}
					if code := send(choice, "POST", path, call, &e); code != http.StatusNotFound || e.Error != proxy.ETOOLMISSING {
						t.Errorf("POST %s %s = %d %+v, want 404 TOOL_NOT_FOUND", path, tool, code, e)
					}
					for _, want := range whys {
						if !strings.Contains(e.Message, want) {
							t.Errorf("POST %s %s: %q does not say %q", path, tool, e.Message, want)
						}
					}
				}
			}
		})
	}
	// The proxy's own tools run their programs through the hidden runner.
	s.call(t, id, "browser_navigate", map[string]string{"url": pages + "/index.html"})
	var res proxy.CallResult
	if code := send("extraction", "POST", "/call", map[string]any{"session_id": id, "tool": "get_text", "params": map[string]string{"selector": "h1"}}, &res); code != http.StatusOK || res.Status != proxy.StatusSuccess || len(res.Value) == 0 {
		t.Errorf("get_text = %d %+v, want its value", code, res)
	}
}

// TestPerSessionBrowserOutlivesUpstreamIdleTimeout: a session the proxy
// keeps, in per-session mode, keeps its page and cookie past the idle
// timeout upstream's environment asks for, with no call in between:
// upstream's timer would have closed the worker's browser (the upstream
// package's tests show it does), and the proxy's is the only one.
func TestPerSessionBrowserOutlivesUpstreamIdleTimeout(t *testing.T) {
	const idle = 4 * time.Second
	s := startServer(t, "", map[string]string{
		"PROXY_BROWSER_MODE":          "per-session",
		"PLAYWRIGHT_MCP_IDLE_TIMEOUT": "4000",
		"PROXY_INLINE_RESULT_MAX":     "4096",
	})
	pages := site(t)
	id := s.createSession(t)
	if got := s.call(t, id, "browser_navigate", map[string]string{"url": pages + "/set.html?v=kept"}); got.Metadata.PageTitle != "set kept" {
		t.Fatalf("navigate: %+v", got)
	}
	// A timer that never fires marks no event: wait out several of its
	// lengths.
	time.Sleep(3 * idle)
	got := s.call(t, id, "browser_evaluate", map[string]string{"function": "() => location.href + ' ' + document.cookie + ' ' + localStorage.getItem('who')"})
	if got.Status != proxy.StatusSuccess || got.Metadata.Restored {
		t.Fatalf("evaluate after %v idle: %+v, want success in the same browser", 3*idle, got)
	}
	for _, want := range []string{"/set.html?v=kept", "who=kept", " kept"} {
		if !strings.Contains(got.Metadata.Result, want) {
			t.Errorf("after %v idle the page reads %q, want %q in it", 3*idle, got.Metadata.Result, want)
		}
	}
}
