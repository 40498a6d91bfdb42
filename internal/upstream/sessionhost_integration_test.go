//go:build linux

package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/worker"
)

// Integration tests of hosted sessions: the real worker-host.js with the
// real @playwright/mcp, sessions on one real Chromium behind our browser
// server.

// startRealSessionHost starts a host on b's browser server, its config
// changed by opts, and checks at cleanup that nothing of it is left.
func startRealSessionHost(t *testing.T, root string, b *Browser, opts ...func(*SessionHostConfig)) *SessionHost {
	t.Helper()
	from, err := PlaywrightFrom(DefaultCommand(root))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	start := time.Now()
	cfg := SessionHostConfig{
		ResolveFrom: from, Endpoint: b.PlaywrightEndpoint(), MaxSessions: 4,
		TempDir: shortTempDir(t), Logger: testLogger(t),
	}
	for _, o := range opts {
		o(&cfg)
	}
	h, err := StartSessionHost(ctx, cfg)
	if err != nil {
		t.Fatalf("StartSessionHost: %v", err)
	}
	t.Logf("session host start: %v (@playwright/mcp %s)", time.Since(start).Round(time.Millisecond), h.Version())
	closeSessionHostAtCleanup(t, h)
	return h
}

// bodyText reads the page's text.
const bodyText = "() => document.body.innerText"

// twoHostedSessions opens two sessions in one host on a browser server of
// their own, with the test's site.
func twoHostedSessions(t *testing.T) (*httptest.Server, *SessionHost, *HostedSession, *HostedSession) {
	t.Helper()
	root := realSetup(t)
	site := testSite(t)
	h := startRealSessionHost(t, root, launchTestBrowser(t, root))
	return site, h, openSession(t, h, SessionSpec{}), openSession(t, h, SessionSpec{})
}

func tabCount(t *testing.T, s *HostedSession) int {
	t.Helper()
	p := call(t, s, "browser_tabs", map[string]string{"action": "list"})
	n := 0
	for line := range strings.SplitSeq(p.ResultText, "\n") {
		if _, ok := parseTabLine(strings.TrimRight(line, "\r")); ok {
			n++
		}
	}
	return n
}

func TestIntegrationSessionHostIsolation(t *testing.T) {
	site, h, a, c := twoHostedSessions(t)
	if a.PID() != h.PID() || c.PID() != h.PID() {
		t.Errorf("sessions' PID %d, %d; host's %d", a.PID(), c.PID(), h.PID())
	}

	// Each navigates its own page.
	if p := call(t, a, "browser_navigate", map[string]string{"url": site.URL + "/set?who=A"}); p.IsError || p.PageTitle != "Set A" {
		t.Fatalf("a navigate: title %q, error %q", p.PageTitle, p.ErrorText)
	}
	if p := call(t, c, "browser_navigate", map[string]string{"url": site.URL + "/echo"}); p.IsError || p.PageTitle != "Echo" {
		t.Fatalf("c navigate: title %q, error %q", p.PageTitle, p.ErrorText)
	}
	// Cookies do not cross: a's is sent by a only.
	if got := evaluate(t, c, bodyText); !strings.Contains(got, "cookies=[]") {
		t.Errorf("c's request carried cookies: %s", got)
	}
	call(t, a, "browser_navigate", map[string]string{"url": site.URL + "/echo"})
	if got := evaluate(t, a, bodyText); !strings.Contains(got, "cookies=[who=A]") {
		t.Errorf("a's request did not carry its cookie: %s", got)
	}

	// Tabs do not cross.
	if p := call(t, a, "browser_tabs", map[string]string{"action": "new"}); p.IsError {
		t.Fatalf("new tab: %s", p.ErrorText)
	}
	if got := tabCount(t, a); got != 2 {
		t.Errorf("a has %d tabs, want 2", got)
	}
	if got := tabCount(t, c); got != 1 {
		t.Errorf("c has %d tabs, want 1", got)
	}

	// A file the model names lands in the session's own directory.
	if p := call(t, c, "browser_take_screenshot", map[string]string{"filename": "named.png"}); p.IsError {
		t.Fatalf("screenshot: %s", p.ErrorText)
	}
	if _, err := os.Stat(filepath.Join(c.OutputDir(), "named.png")); err != nil {
		t.Errorf("the named screenshot is not in c's output dir: %v", err)
	}
	for _, dir := range []string{a.OutputDir(), h.dir} {
		if _, err := os.Stat(filepath.Join(dir, "named.png")); !os.IsNotExist(err) {
			t.Errorf("named.png in %s: %v", dir, err)
		}
	}
	// Naming a file in another session's directory is refused.
	if p := call(t, c, "browser_take_screenshot", map[string]string{"filename": filepath.Join(a.OutputDir(), "x.png")}); !p.IsError {
		t.Errorf("c wrote into a's directory: %s", p.Text)
	}

	// A rejection nobody awaits, in Node, from a's call: upstream reports
	// it in a's answer, never in c's.
	const reject = `async (page) => { Promise.reject(new Error('REJECT-A-7f3')); await page.title(); return 1; }`
	if p := call(t, a, "browser_run_code_unsafe", map[string]string{"code": reject}); !strings.Contains(p.Text, "REJECT-A-7f3") {
		t.Fatalf("a's own answer does not report its rejection: %s", p.Text)
	}
	if p := call(t, c, "browser_tabs", map[string]string{"action": "list"}); strings.Contains(p.Text, "REJECT-A-7f3") {
		t.Errorf("c's answer reports a's rejection: %s", p.Text)
	}

	// Closing a leaves c working.
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	if err := a.Close(ctx); err != nil {
		t.Fatalf("Close a: %v", err)
	}
	if _, err := os.Stat(a.OutputDir()); !os.IsNotExist(err) {
		t.Errorf("a's output dir after Close: %v", err)
	}
	if _, err := a.CallTool(ctx, "browser_tabs", json.RawMessage(`{"action":"list"}`)); !errors.Is(err, worker.ErrNotDelivered) {
		t.Errorf("call on a closed session = %v, want ErrNotDelivered", err)
	}
	if p := call(t, c, "browser_navigate", map[string]string{"url": site.URL + "/set?who=C"}); p.IsError || p.PageTitle != "Set C" {
		t.Errorf("c after a closed: title %q, error %q", p.PageTitle, p.ErrorText)
	}
	pong, err := h.Ping(ctx)
	if err != nil || pong.Sessions != 1 {
		t.Errorf("host Ping = %+v, %v; want 1 session", pong, err)
	}
	t.Logf("host with 1 session: heap used %.1f MB, RSS %.1f MB", float64(pong.HeapUsed)/(1<<20), float64(pong.RSS)/(1<<20))
}

func TestIntegrationSessionHostUncaughtException(t *testing.T) {
	site, h, a, c := twoHostedSessions(t)
	// A throw from a timer a's call set: the host ends a alone, as the
	// crash of a worker of its own.
	const throw = `async (page) => { setTimeout(() => { throw new Error('THROW-A-5d1'); }, 0); return 1; }`
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	// The call may be answered before the timer fires, or be answered by
	// the host with the session's end: either way the session ends.
	if _, err := a.CallTool(ctx, "browser_run_code_unsafe", json.RawMessage(fmt.Sprintf(`{"code":%q}`, throw))); err != nil && !errors.Is(err, worker.ErrWorkerExited) {
		t.Fatalf("run_code: %v", err)
	}
	select {
	case <-a.Done():
	case <-ctx.Done():
		t.Fatal("a's Done not closed after its uncaught exception")
	}
	var closed *sessionClosedError
	if !errors.As(a.Err(), &closed) || !strings.Contains(closed.reason, "THROW-A-5d1") {
		t.Errorf("a ended with %v, want the host's uncaught exception", a.Err())
	}
	if _, err := a.CallTool(ctx, "browser_tabs", json.RawMessage(`{"action":"list"}`)); !errors.Is(err, worker.ErrWorkerExited) {
		t.Errorf("call on a = %v, want ErrWorkerExited", err)
	}
	if p := call(t, c, "browser_navigate", map[string]string{"url": site.URL + "/echo"}); p.IsError || p.PageTitle != "Echo" {
		t.Errorf("c after a's exception: title %q, error %q", p.PageTitle, p.ErrorText)
	}
	if h.proc.exited() {
		t.Error("the host exited")
	}
}

func TestIntegrationSessionHostSaveRestore(t *testing.T) {
	site, _, a, c := twoHostedSessions(t)
	call(t, a, "browser_navigate", map[string]string{"url": site.URL + "/set?who=A"})
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	state, err := a.SaveState(ctx)
	if err != nil {
		t.Fatalf("SaveState: %v", err)
	}
	if err := c.RestoreState(ctx, state); err != nil {
		t.Fatalf("RestoreState: %v", err)
	}
	call(t, c, "browser_navigate", map[string]string{"url": site.URL + "/echo"})
	if got := evaluate(t, c, bodyText); !strings.Contains(got, "cookies=[who=A]") {
		t.Errorf("restored session's request: %s, want a's cookie", got)
	}
	// The storage-state files of save and restore are removed; the
	// snapshots of the test's own calls are not theirs.
	for _, s := range []*HostedSession{a, c} {
		for _, name := range dirNames(t, s.OutputDir()) {
			if strings.Contains(name, "state") {
				t.Errorf("%s left by save/restore in %s", name, s.OutputDir())
			}
		}
	}
}

func TestIntegrationSessionHostKilled(t *testing.T) {
	root := realSetup(t)
	site := testSite(t)
	b := launchTestBrowser(t, root)
	h := startRealSessionHost(t, root, b)
	a, c := openSession(t, h, SessionSpec{}), openSession(t, h, SessionSpec{})
	call(t, a, "browser_navigate", map[string]string{"url": site.URL + "/echo"})

	if err := syscall.Kill(h.PID(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	for _, s := range []*HostedSession{a, c} {
		select {
		case <-s.Done():
		case <-ctx.Done():
			t.Fatalf("%s: Done not closed after the host was killed", s.Key())
		}
		if _, err := s.CallTool(ctx, "browser_tabs", json.RawMessage(`{"action":"list"}`)); !errors.Is(err, worker.ErrWorkerExited) || !errors.Is(err, worker.ErrNotDelivered) {
			t.Errorf("%s: call after the host died = %v, want ErrWorkerExited and ErrNotDelivered", s.Key(), err)
		}
		if err := s.Ping(ctx); !errors.Is(err, worker.ErrWorkerExited) {
			t.Errorf("%s: Ping = %v, want ErrWorkerExited", s.Key(), err)
		}
	}
	// The browser server outlives the host: a new host serves sessions.
	h2 := startRealSessionHost(t, root, b)
	d := openSession(t, h2, SessionSpec{})
	if p := call(t, d, "browser_navigate", map[string]string{"url": site.URL + "/echo"}); p.IsError || p.PageTitle != "Echo" {
		t.Errorf("new host: title %q, error %q", p.PageTitle, p.ErrorText)
	}
}

func TestIntegrationSessionHostBrowserUnreachable(t *testing.T) {
	root := realSetup(t)
	from, err := PlaywrightFrom(DefaultCommand(root))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	h, err := StartSessionHost(ctx, SessionHostConfig{
		ResolveFrom: from, Endpoint: "ws://127.0.0.1:1/nobody", TempDir: shortTempDir(t), Logger: testLogger(t),
	})
	if err != nil {
		t.Fatalf("StartSessionHost: %v", err)
	}
	closeSessionHostAtCleanup(t, h)
	var pkg struct {
		Version string `json:"version"`
	}
	data, err := os.ReadFile(filepath.Join(root, "node_modules", "@playwright", "mcp", "package.json"))
	if err != nil || json.Unmarshal(data, &pkg) != nil {
		t.Fatalf("@playwright/mcp's package.json: %v", err)
	}
	if h.Version() != pkg.Version {
		t.Errorf("host announced @playwright/mcp %q, want %q", h.Version(), pkg.Version)
	}
	if args := procArgs(h.PID()); !strings.Contains(strings.Join(args, " "), "--max-old-space-size=384") {
		t.Errorf("host command line %q: no heap limit of 128 + 16·16 MB", args)
	}
	dir := filepath.Join(t.TempDir(), "out")
	_, err = h.Open(ctx, SessionSpec{OutputDir: dir})
	if err == nil || !strings.Contains(err.Error(), "open failed") {
		t.Errorf("Open with no browser = %v, want the host's open failure", err)
	}
	if _, statErr := os.Stat(dir); !os.IsNotExist(statErr) {
		t.Errorf("output dir after a failed open: %v", statErr)
	}
	pong, err := h.Ping(ctx)
	if err != nil {
		t.Fatalf("Ping: %v", err)
	}
	if pong.Sessions != 0 || pong.HeapUsed <= 0 || pong.RSS <= 0 {
		t.Errorf("pong = %+v, want no session and some memory", pong)
	}
}

// pageTargets counts the browser's pages, every context's, from its CDP
// endpoint's target list.
func pageTargets(t *testing.T, b *Browser) int {
	t.Helper()
	resp, err := http.Get(b.DebugEndpoint() + "/json/list")
	if err != nil {
		t.Fatalf("CDP target list: %v", err)
	}
	defer resp.Body.Close()
	var targets []struct {
		Type string `json:"type"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&targets); err != nil {
		t.Fatalf("CDP target list: %v", err)
	}
	n := 0
	for _, tg := range targets {
		if tg.Type == "page" {
			n++
		}
	}
	return n
}

// A session's first page is opened ahead, while the session waits
// unused, and upstream adopts it: the first call finds it there instead of
// starting a renderer, and the session still has exactly one tab. A call
// that comes first opens it itself, once.
func TestIntegrationSessionHostFirstPageAhead(t *testing.T) {
	root := realSetup(t)
	site := testSite(t)
	// The debug port lists every context's pages.
	b := launchTestBrowser(t, root, func(c *BrowserConfig) { c.DebugPort = true })
	start := func(delay time.Duration) *SessionHost {
		return startRealSessionHost(t, root, b, func(c *SessionHostConfig) { c.FirstPageDelay = delay })
	}
	navigate := func(s *HostedSession, path string) {
		t.Helper()
		if p := call(t, s, "browser_navigate", map[string]string{"url": site.URL + path}); p.IsError || p.PageTitle != "Echo" {
			t.Fatalf("navigate: title %q, error %q", p.PageTitle, p.ErrorText)
		}
	}

	t.Run("ahead", func(t *testing.T) {
		h := start(10 * time.Millisecond)
		before := pageTargets(t, b)
		s := openSession(t, h, SessionSpec{})
		if !eventually(20*time.Second, func() bool { return pageTargets(t, b) == before+1 }) {
			t.Fatalf("%d pages 20 s after the open, want %d: the first page was not opened ahead", pageTargets(t, b), before+1)
		}
		navigate(s, "/echo")
		if n := pageTargets(t, b); n != before+1 {
			t.Errorf("%d pages after the first navigate, want %d: the page opened ahead was not the one used", n, before+1)
		}
		if n := tabCount(t, s); n != 1 {
			t.Errorf("%d tabs, want 1", n)
		}
	})
	t.Run("call first", func(t *testing.T) {
		h := start(-1)
		before := pageTargets(t, b)
		s := openSession(t, h, SessionSpec{})
		time.Sleep(500 * time.Millisecond) // no page is opened ahead meanwhile
		if n := pageTargets(t, b); n != before {
			t.Fatalf("%d pages before any call, want %d", n, before)
		}
		navigate(s, "/echo")
		if n := tabCount(t, s); n != 1 {
			t.Errorf("%d tabs, want 1", n)
		}
		if n := pageTargets(t, b); n != before+1 {
			t.Errorf("%d pages, want %d", n, before+1)
		}
	})
}
