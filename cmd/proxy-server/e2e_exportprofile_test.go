//go:build unix

package main

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/export"
)

// TestExportFromProfileRunsWithPlaywright: the test exported from a session
// that started from a login profile names a storage-state file in place of
// the state; given the file the profile's export writes, Playwright's own
// runner starts signed in. The page's title says whether the request
// carried the profile's cookie, and the exported test asserts the title the
// session saw.
func TestExportFromProfileRunsWithPlaywright(t *testing.T) {
	if testing.Short() {
		t.Skip("drives Chromium")
	}
	secret := "SESSIONSECRET-" + rand.Text()
	pages := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		title := "Anonymous"
		if c, err := r.Cookie("sid"); err == nil && c.Value == secret {
			title = "Signed in"
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><title>%s</title><link rel="icon" href="data:,"><h1>%s</h1>`, title, title)
	}))
	t.Cleanup(pages.Close)
	host := strings.TrimPrefix(pages.URL, "http://")
	host = host[:strings.LastIndex(host, ":")]

	// The call as the proxy records it: upstream's answer with the code it
	// ran and the page it left.
	answer, _ := json.Marshal(map[string]any{"content": []map[string]string{{"type": "text", "text": "### Ran Playwright code\n```js\nawait page.goto('" +
		pages.URL + "/');\n```\n### Page\n- Page URL: " + pages.URL + "/\n- Page Title: Signed in"}}})
	at := time.Now().UTC()
	s := &proxy.Session{ID: "s-profile", CreatedAt: at, State: proxy.SessionClosed, Profile: "github", ProfileVersion: 2, ProfileWrite: true}
	calls := []proxy.Call{{
		Request:  proxy.Request{RefID: "r1", SessionID: s.ID, ToolName: "browser_navigate", Params: json.RawMessage(`{"url":"` + pages.URL + `/"}`), Timestamp: at},
		Response: &proxy.Response{RefID: "r1", Status: proxy.StatusSuccess, Result: string(answer), Timestamp: at},
	}}
	spec := string(export.Playwright(s, calls))
	if strings.Contains(spec, secret) {
		t.Fatalf("the export holds the profile's contents:\n%s", spec)
	}
	const placeholder = `"<path to github.json>"`
	if !strings.Contains(spec, "test.use({ storageState: "+placeholder+" });") || !strings.Contains(spec, "proxy-server profile export github github.json") {
		t.Fatalf("the export does not start from the profile's file:\n%s", spec)
	}

	// What `proxy-server profile export github github.json` writes: the
	// Playwright storage state the profile holds.
	state, _ := json.Marshal(map[string]any{
		"cookies": []map[string]any{{"name": "sid", "value": secret, "domain": host, "path": "/", "expires": -1, "httpOnly": true, "secure": false, "sameSite": "Lax"}},
		"origins": []any{},
	})
	if _, err := proxy.CheckStorageState(state); err != nil {
		t.Fatalf("the test's storage state is not one a profile holds: %v", err)
	}
	file := filepath.Join(t.TempDir(), "github.json")
	if err := os.WriteFile(file, state, 0o600); err != nil {
		t.Fatal(err)
	}
	quoted, _ := json.Marshal(file)
	out, err := runPlaywrightTest(t, strings.Replace(spec, placeholder, string(quoted), 1))
	if err != nil {
		t.Fatalf("the exported test, given the profile's file, failed: %v\n%s\nthe test:\n%s", err, out, spec)
	}
	if !strings.Contains(out, "1 passed") {
		t.Errorf("Playwright's runner did not report a pass:\n%s", out)
	}
}
