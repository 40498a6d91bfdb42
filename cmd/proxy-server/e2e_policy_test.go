//go:build unix

package main

import (
	"bytes"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
)

// TestNavigationPolicySwitchesAndSecrets drives the proxy's own policy
// against real workers: refused navigations never reach the browser (no
// request row, no forwarded call, the session untouched, the page still
// blank), the script-evaluation tools are gone, and a typed secret never
// lands in the database file.
func TestNavigationPolicySwitchesAndSecrets(t *testing.T) {
	const secret = "S3cret-pa55-zq81"
	secrets := filepath.Join(t.TempDir(), "secrets.env")
	if err := os.WriteFile(secrets, []byte("# test\nSITE_PASSWORD="+secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := startServer(t, "", map[string]string{
		"PROXY_BLOCKED_DOMAINS":          "blocked.example,*.evil.test",
		"PROXY_ENABLE_SCRIPT_EVALUATION": "false",
		"PROXY_SECRETS_FILE":             secrets,
	})
	pages := site(t)

	var tools struct {
		Tools []struct{ Name string } `json:"tools"`
	}
	if code := do(t, "GET", s.URL+"/tools", nil, &tools); code != http.StatusOK || len(tools.Tools) == 0 {
		t.Fatalf("GET /tools = %d, %d tools", code, len(tools.Tools))
	}
	for _, tool := range tools.Tools {
		if tool.Name == "browser_evaluate" || tool.Name == "browser_run_code_unsafe" {
			t.Errorf("%s is listed with PROXY_ENABLE_SCRIPT_EVALUATION=false", tool.Name)
		}
	}

	id := s.createSession(t)
	// What a forwarded call would change: the session's request rows, its
	// record (last activity, worker), and the calls timed in /metrics,
	// which counts only the calls that reached a worker.
	db := openRO(t, s.DBPath)
	requestRows := func() int {
		t.Helper()
		var n int
		if err := db.QueryRow(`SELECT count(*) FROM requests WHERE session_id = ?`, id).Scan(&n); err != nil {
			t.Fatalf("counting requests: %v", err)
		}
		return n
	}
	getSession := func() proxy.Session {
		t.Helper()
		var sess proxy.Session
		if code := do(t, "GET", s.URL+"/sessions/"+id, nil, &sess); code != http.StatusOK {
			t.Fatalf("GET /sessions/%s = %d", id, code)
		}
		// Memory moves on its own: sampled on its own schedule, and a
		// session host's share with its neighbours.
		sess.RSSBytes, sess.Memory = 0, nil
		return sess
	}
	forwarded := func() float64 { return histogramCount(metricsOf(t, s), "pwproxy_tool_call_duration_seconds", nil) }
	sessBefore, forwardedBefore := getSession(), forwarded()
	if n := requestRows(); n != 0 {
		t.Fatalf("a new session has %d request rows", n)
	}

	refused := func(tool string, params map[string]any, wantCode string, wantStatus int) {
		t.Helper()
		var e proxyErr
		code := do(t, "POST", s.URL+"/call", map[string]any{"session_id": id, "tool": tool, "params": params}, &e)
		if code != wantStatus || e.Error != wantCode || e.Suggestion == "" {
			t.Errorf("%s %v = %d %+v, want %d %s with a suggestion", tool, params, code, e, wantStatus, wantCode)
		}
	}
	refused("browser_navigate", map[string]any{"url": "https://Blocked.Example./login"}, proxy.EDOMAINBLOCKED, http.StatusForbidden)
	refused("browser_navigate", map[string]any{"url": "http://x.evil.test:8080/"}, proxy.EDOMAINBLOCKED, http.StatusForbidden)
	refused("browser_navigate", map[string]any{"url": "file:///etc/passwd"}, proxy.EDOMAINBLOCKED, http.StatusForbidden)
	refused("browser_tabs", map[string]any{"action": "new", "url": "file:///etc/passwd"}, proxy.EDOMAINBLOCKED, http.StatusForbidden)
	refused("browser_evaluate", map[string]any{"function": "() => document.cookie"}, proxy.ETOOLMISSING, http.StatusNotFound)

	// Nothing reached the browser: no request row was stored, no call was
	// forwarded to a worker, the session is as it was…
	if n := requestRows(); n != 0 {
		t.Errorf("refused calls left %d request rows", n)
	}
	if d := forwarded() - forwardedBefore; d != 0 {
		t.Errorf("%v calls were forwarded to a worker while every call was refused", d)
	}
	if diff := cmp.Diff(sessBefore, getSession()); diff != "" {
		t.Errorf("refused calls changed the session (-before +after):\n%s", diff)
	}
	// …and its page is still blank.
	snap := s.call(t, id, "browser_snapshot", map[string]any{})
	if u := snap.Metadata.PageURL; u != "" && u != "about:blank" {
		t.Errorf("after refused calls the page is %q", u)
	}
	// The same measures do see a call that is forwarded.
	if n, d := requestRows(), forwarded()-forwardedBefore; n != 1 || d != 1 {
		t.Errorf("after one forwarded call: %d request rows, %v forwarded calls; want 1 and 1", n, d)
	}

	nav := s.call(t, id, "browser_navigate", map[string]any{"url": pages + "/index.html"})
	if nav.Status != proxy.StatusSuccess {
		t.Fatalf("allowed navigation = %+v", nav)
	}
	box := regexp.MustCompile(`textbox "Search query" \[ref=(e\d+)\]`).FindStringSubmatch(s.content(t, nav.RefID, "?search_for=Search%20query"))
	if box == nil {
		t.Fatal("no search box in the snapshot")
	}
	typed := s.call(t, id, "browser_type", map[string]any{"element": "Search query", "target": box[1], "text": secret})
	if typed.Status != proxy.StatusSuccess {
		t.Fatalf("browser_type = %+v", typed)
	}
	shown := s.call(t, id, "browser_snapshot", map[string]any{})
	got := s.content(t, shown.RefID, "?reset_cursor=true")
	if strings.Contains(got, secret) || !strings.Contains(got, "<secret>SITE_PASSWORD</secret>") {
		t.Errorf("the snapshot of the typed field is not masked:\n%s", got)
	}

	s.stop()
	for _, suffix := range []string{"", "-wal"} {
		data, err := os.ReadFile(s.DBPath + suffix)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		if bytes.Contains(data, []byte(secret)) {
			t.Errorf("the typed secret is in %s%s", filepath.Base(s.DBPath), suffix)
		}
	}
}
