//go:build unix

package main

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
)

// TestSessionsCannotOpenTheBrowsersCDPPort: the browser the sessions share
// has a CDP port on loopback for the live view, and its /json lists every session's
// pages (/json/close/ID closes one). A session's page may not open it, by
// a tool's URL or a redirect.
func TestSessionsCannotOpenTheBrowsersCDPPort(t *testing.T) {
	// The server's temp directory, where its browser's profile is, goes
	// below one of this test's, short enough for Chromium's sockets.
	tmp, err := os.MkdirTemp("", "pwpc-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(tmp) })
	t.Setenv("TMPDIR", tmp)
	s := startServer(t, "", nil)
	port := browserCDPPort(t, tmp)
	cdp := "http://127.0.0.1:" + port

	// The port is live: what the policy refuses is real.
	resp, err := http.Get(cdp + "/json/version")
	if err != nil {
		t.Fatalf("the browser's CDP port %s does not answer: %v", port, err)
	}
	resp.Body.Close()

	id := s.createSession(t)
	for _, u := range []string{
		cdp + "/json/version",
		"http://localhost:" + port + "/json/list",
		"http://[::1]:" + port + "/json",
		"ws://127.0.0.1:" + port + "/devtools/browser",
	} {
		s.wantNavigateBlocked(t, id, u)
	}

	redirect := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, cdp+"/json/list", http.StatusFound)
	}))
	t.Cleanup(redirect.Close)
	res := s.call(t, id, "browser_navigate", map[string]any{"url": redirect.URL + "/"})
	if res.Status != proxy.StatusError || res.ErrorCode != proxy.EDOMAINBLOCKED {
		t.Errorf("a redirect to the CDP port: %+v, want an error %s", res, proxy.EDOMAINBLOCKED)
	}
	if u := s.call(t, id, "browser_snapshot", map[string]any{}).Metadata.PageURL; strings.Contains(u, ":"+port) {
		t.Errorf("after the redirect the session's page is %q", u)
	}
}

// browserCDPPort reads the CDP port of the shared browser the server below
// tmp launched, from the DevToolsActivePort Chromium wrote in its profile.
func browserCDPPort(t *testing.T, tmp string) string {
	t.Helper()
	// The browser runs in a session host's directory (pwp-host-*), or at
	// one session per worker process in the browser server's.
	var files []string
	for _, dir := range []string{"pwp-host-*", "pwp-browser-*"} {
		found, err := filepath.Glob(filepath.Join(tmp, "*", dir, "playwright_chromiumdev_profile-*", "DevToolsActivePort"))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, found...)
	}
	if len(files) != 1 {
		t.Fatalf("the browser's DevToolsActivePort below %s: %v, want one", tmp, files)
	}
	b, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	port, _, _ := strings.Cut(string(b), "\n")
	if n, err := strconv.Atoi(port); err != nil || n <= 0 {
		t.Fatalf("DevToolsActivePort holds %q", b)
	}
	if _, err := url.Parse("http://127.0.0.1:" + port); err != nil {
		t.Fatal(err)
	}
	return port
}
