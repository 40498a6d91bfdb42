//go:build linux

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/catalog"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/e2etest"
)

// listNames is the client's tools/list, names sorted.
func (m *mcpClient) listNames(t *testing.T) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	res, err := m.c.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		t.Fatalf("%s: tools/list: %v", m.name, err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	return names
}

// probeBrowser is browser_run_code_unsafe's program that looks at the
// whole browser process it can reach: every context's pages and cookies
// through Playwright's objects, and every target through a CDP session on
// the browser.
const probeBrowser = `async (page) => {
  const browser = page.context().browser();
  const contexts = browser.contexts();
  const pages = contexts.flatMap(c => c.pages().map(p => p.url()));
  const cookies = (await Promise.all(contexts.map(c => c.cookies()))).flat().map(c => c.name + '=' + c.value);
  const cdp = await browser.newBrowserCDPSession();
  const { targetInfos } = await cdp.send('Target.getTargets');
  await cdp.detach();
  return { contexts: contexts.length, pages, cookies, targets: targetInfos.map(t => t.url) };
}`

type probe struct {
	Contexts int      `json:"contexts"`
	Pages    []string `json:"pages"`
	Cookies  []string `json:"cookies"`
	Targets  []string `json:"targets"`
}

// runProbe runs probeBrowser in m's default session and reads its result.
func runProbe(t *testing.T, m *mcpClient) probe {
	t.Helper()
	res := m.browser(t, "browser_run_code_unsafe", map[string]any{"code": probeBrowser})
	text := m.answer(catalog.ToolGetContent, map[string]any{"ref_id": res.RefID})
	// The result is the line after "### Result"; the code it ran follows.
	_, after, _ := strings.Cut(text, "### Result\n")
	line, _, _ := strings.Cut(after, "\n")
	var p probe
	if err := json.Unmarshal([]byte(line), &p); err != nil {
		t.Fatalf("%s: the probe's result is not JSON (%v): %s", m.name, err, text)
	}
	return p
}

// TestUnsafeToolsetWithABrowserPerSession: with a browser process per
// session and PROXY_TOOLSETS naming unsafe, the server warns at start,
// clients that keep the server's groups are offered browser_run_code_unsafe
// and run it, and its code sees only its own session's browser: another
// session's pages and cookies are in no context and no CDP target of it.
// A client choosing groups without unsafe is not offered it.
func TestUnsafeToolsetWithABrowserPerSession(t *testing.T) {
	requireBrowser(t)
	port := e2etest.FreePort(t)
	s := startServer(t, port, filepath.Join(t.TempDir(), "proxy.db"),
		"PROXY_BROWSER_MODE=per-session", "PROXY_TOOLSETS=upstream,session,content,unsafe")
	if !strings.Contains(s.logs.String(), "tool group unsafe is on") {
		t.Errorf("no warning at start that unsafe is on:\n%s", s.logs)
	}
	pages := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		who := r.URL.Query().Get("who")
		http.SetCookie(w, &http.Cookie{Name: who, Value: "1", Path: "/"})
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, "<!doctype html><title>%s</title><p>%s</p>", who, who)
	}))
	t.Cleanup(pages.Close)
	mcpURL := "http://127.0.0.1:" + port + "/mcp"

	a := startBridgeWith(t, "alpha", port)
	b := startHTTPClientAt(t, "beta", mcpURL)
	for _, c := range []*mcpClient{a, b} {
		if names := c.listNames(t); !slices.Contains(names, "browser_run_code_unsafe") {
			t.Errorf("%s does not list browser_run_code_unsafe: %v", c.name, names)
		}
	}
	a.browser(t, "browser_navigate", map[string]any{"url": pages.URL + "/a?who=alpha-secret"})
	b.browser(t, "browser_navigate", map[string]any{"url": pages.URL + "/b?who=beta"})

	// The probe sees its own session: it does work.
	own := runProbe(t, a)
	if !slices.ContainsFunc(own.Pages, func(u string) bool { return strings.Contains(u, "alpha-secret") }) || !slices.Contains(own.Cookies, "alpha-secret=1") {
		t.Fatalf("alpha's probe of its own browser: %+v, want its page and cookie", own)
	}
	// And nothing of another session's.
	other := runProbe(t, b)
	t.Logf("beta's probe: %d contexts, pages %v, cookies %v, targets %v", other.Contexts, other.Pages, other.Cookies, other.Targets)
	all := slices.Concat(other.Pages, other.Cookies, other.Targets)
	if slices.ContainsFunc(all, func(s string) bool { return strings.Contains(s, "alpha-secret") }) {
		t.Errorf("beta's code reaches alpha's session: %+v", other)
	}
	if !slices.Contains(other.Cookies, "beta=1") {
		t.Errorf("beta's probe: %+v, want its own cookie", other)
	}

	// A client's own groups without unsafe: not offered, and refused.
	for _, c := range []*mcpClient{
		startBridgeWith(t, "no-unsafe", port, "--toolsets", "all"),
		startHTTPClientAt(t, "no-unsafe", mcpURL+"?toolsets=upstream,session"),
	} {
		if names := c.listNames(t); slices.Contains(names, "browser_run_code_unsafe") {
			t.Errorf("%s chose groups without unsafe but lists browser_run_code_unsafe", c.name)
		}
		if _, _, err := c.call("browser_run_code_unsafe", map[string]any{"code": "async () => 1"}); err == nil || !strings.Contains(err.Error(), "tool group unsafe, which is not selected") {
			t.Errorf("%s: browser_run_code_unsafe = %v, want it refused naming group unsafe", c.name, err)
		}
	}
}
