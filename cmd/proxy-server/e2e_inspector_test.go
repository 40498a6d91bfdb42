//go:build unix

package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/upstream"
)

// hostileTitle is a page title that runs script if anyone writes it into a
// page as markup.
const hostileTitle = "<img src=x onerror=alert(1)>"

// hostilePage logs to the console (markup in an error), and has a button
// that changes a status line.
const hostilePage = `<!doctype html><html><head><title>` + hostileTitle + `</title><link rel="icon" href="data:,"></head>
<body><h1>Inspector check</h1><p id="s">Status: idle</p>
<button onclick="document.getElementById('s').textContent = 'Status: done <i>x</i>'">Finish</button>
<script>console.log('log line'); console.error('<b>bold</b> error');</script></body></html>`

// TestInspectorInBrowser drives /ui in headless Chromium (the project's
// playwright-core, testdata/inspector.js) against a server with a token and
// a session on a hostile page. PWPROXY_UI_SCREENSHOTS=dir keeps the
// screenshots it takes (the README's comes from there).
func TestInspectorInBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("drives Chromium twice")
	}
	const token = "t0k-inspector-9c1e"
	pages := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, hostilePage)
	}))
	t.Cleanup(pages.Close)
	s := startServer(t, "", map[string]string{"PROXY_AUTH_TOKEN": token})
	authed := func(method, path string, body any, out any) int {
		t.Helper()
		data, _ := json.Marshal(body)
		req, err := http.NewRequest(method, s.URL+path, bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if text, ok := out.(*string); ok {
			b, _ := io.ReadAll(resp.Body)
			*text = string(b)
		} else if out != nil {
			if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
				t.Fatalf("%s %s: %v", method, path, err)
			}
		}
		return resp.StatusCode
	}
	call := func(id, tool string, params any) proxy.CallResult {
		t.Helper()
		var res proxy.CallResult
		if code := authed("POST", "/call", map[string]any{"session_id": id, "tool": tool, "params": params}, &res); code != http.StatusOK {
			t.Fatalf("%s = %d", tool, code)
		}
		return res
	}
	var sess proxy.Session
	if code := authed("POST", "/sessions", nil, &sess); code != http.StatusCreated {
		t.Fatalf("POST /sessions = %d", code)
	}
	nav := call(sess.ID, "browser_navigate", map[string]string{"url": pages.URL + "/"})
	var snap string
	authed("GET", "/content/"+nav.RefID+"?reset_cursor=true", nil, &snap)
	click := call(sess.ID, "browser_click", map[string]any{"target": refOf(t, snap, `button "Finish"`)})
	shot := call(sess.ID, "browser_take_screenshot", map[string]any{})
	call(sess.ID, "browser_click", map[string]any{"target": "e9999"})
	// The worker dies; the session comes back with its saved state, and
	// the timeline says so.
	var live proxy.Session
	authed("GET", "/sessions/"+sess.ID, nil, &live)
	waitStateSaved(t, openRO(t, s.DBPath), sess.ID, pages.URL+"/")
	if err := syscall.Kill(live.WorkerPID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitReaped(t, live.WorkerPID)
	if res := call(sess.ID, "browser_snapshot", nil); !res.Metadata.Restored {
		t.Fatalf("the call after the worker's death: restored = false")
	}

	// A login profile, and a session started from it: the Profiles page
	// lists it with its session and never shows its contents.
	secret := "SESSIONSECRET-" + rand.Text()
	state := `{"cookies":[{"name":"sid","value":"` + secret + `","domain":"127.0.0.1","path":"/","expires":-1,"httpOnly":true,"secure":false,"sameSite":"Lax"}],"origins":[]}`
	if code := authed("PUT", "/profiles/insp", json.RawMessage(state), nil); code != http.StatusCreated && code != http.StatusOK {
		t.Fatalf("PUT /profiles/insp = %d", code)
	}
	var fromProfile proxy.Session
	if code := authed("POST", "/sessions", map[string]string{"profile": "insp"}, &fromProfile); code != http.StatusCreated || fromProfile.Profile != "insp" {
		t.Fatalf("POST /sessions from profile insp = %d, profile %q", code, fromProfile.Profile)
	}
	// Its exports name the profile and hold none of it.
	for format, want := range map[string]string{"playwright": `test.use({ storageState: "<path to insp.json>" });`, "json": `"profile": "insp"`} {
		var body string
		if code := authed("GET", "/sessions/"+fromProfile.ID+"/export?format="+format, nil, &body); code != http.StatusOK || !strings.Contains(body, want) || strings.Contains(body, secret) {
			t.Errorf("the %s export (%d) lacks %s or holds the profile's contents:\n%s", format, code, want, body)
		}
	}

	shots := os.Getenv("PWPROXY_UI_SCREENSHOTS")
	if shots == "" {
		shots = t.TempDir()
	}
	chromium, err := upstream.FindBrowser()
	if err != nil {
		t.Fatal(err)
	}
	root := projectRoot(t)
	conf, _ := json.Marshal(map[string]string{
		"base": s.URL, "token": token, "session": sess.ID, "hostileTitle": hostileTitle,
		"navigateRef": nav.RefID, "clickRef": click.RefID, "screenshotRef": shot.RefID,
		"changedText": "Status: done <i>x</i>", "search": "button", "consoleText": "<b>bold</b> error",
		"chromium": chromium, "playwright": filepath.Join(root, "node_modules", "playwright-core"),
		"screenshotList": filepath.Join(shots, "inspector-sessions.png"), "screenshotTimeline": filepath.Join(shots, "inspector-timeline.png"),
		"screenshotCall": filepath.Join(shots, "inspector-call.png"), "profile": "insp", "profileSession": fromProfile.ID, "profileSecret": secret,
	})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", filepath.Join("testdata", "inspector.js"))
	cmd.Env = append(os.Environ(), "INSPECTOR_CHECK="+string(conf), "TMPDIR="+t.TempDir())
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("the inspector check failed: %v\n%s%s", err, stderr.String(), stdout.String())
	}
	if !strings.Contains(stdout.String(), `"ok":true`) {
		t.Fatalf("the inspector check said: %s", stdout.String())
	}
}
