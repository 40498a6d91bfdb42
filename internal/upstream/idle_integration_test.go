//go:build linux

package upstream

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/proctest"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/worker"
)

// shortIdle is the idle timeout, in milliseconds, the test of a worker that
// keeps its browser asks upstream for: short enough to wait out several times.
const shortIdle = 4000

// closingIdle is the idle timeout the test of upstream's own timer asks for.
// Upstream counts it from the last completed call, and on a loaded machine
// launching the browser and the first navigation outlast shortIdle, so the
// timer fires before the test can see the page it is about to lose.
const closingIdle = 20000

// chromiumBelow is the worker's own browser: the Chromium processes below it.
func chromiumBelow(t *testing.T, w *Worker) []proctest.Proc {
	t.Helper()
	var out []proctest.Proc
	for _, p := range proctest.Descendants(w.PID()) {
		if strings.Contains(p.Comm, "chrom") {
			out = append(out, p)
		}
	}
	if len(out) == 0 {
		t.Fatalf("no Chromium below worker %d", w.PID())
	}
	return out
}

// pageState is the page's URL and cookies, or the error of reading them.
func pageState(t *testing.T, w *Worker) string {
	t.Helper()
	p := call(t, w, "browser_evaluate", map[string]string{"function": "() => location.href + ' ' + document.cookie"})
	if p.IsError {
		return "error: " + p.ErrorText
	}
	return p.ResultText
}

// What the proxy switches off: a worker whose upstream has a short idle
// timeout closes its own browser without any call, and the next call
// finds a new one — the session's page and cookie are gone, though the
// worker never stopped.
func TestIntegrationUpstreamIdleTimeoutClosesItsBrowser(t *testing.T) {
	root := realSetup(t)
	site := testSite(t)
	w := startRealWorkerWith(t, root, nil, func(c *WorkerConfig) {
		c.ExtraArgs = []string{worker.IdleTimeoutFlag, strconv.Itoa(closingIdle)}
	})
	call(t, w, "browser_navigate", map[string]string{"url": site.URL})
	if got := pageState(t, w); !strings.Contains(got, site.URL) || !strings.Contains(got, "sid=abc") {
		t.Fatalf("before: %s, want the page and its cookie", got)
	}
	browser := chromiumBelow(t, w)
	if !eventually(2*time.Minute, func() bool { return len(proctest.StillAlive(browser)) == 0 }) {
		t.Fatalf("upstream kept its browser past an idle timeout of %d ms: %v", closingIdle, proctest.StillAlive(browser))
	}
	if got := pageState(t, w); strings.Contains(got, site.URL) || strings.Contains(got, "sid=abc") {
		t.Errorf("after upstream closed its browser: %s, want neither the page nor its cookie", got)
	}
}

// A worker as the proxy starts it keeps its own browser, with the page and
// its cookie, past upstream's idle timeout without a call — even where the
// environment asks upstream for a short one.
func TestIntegrationWorkerKeepsItsBrowserWhenIdle(t *testing.T) {
	root := realSetup(t)
	site := testSite(t)
	w := startRealWorkerWith(t, root, nil, func(c *WorkerConfig) {
		c.Env = append(c.Env, "PLAYWRIGHT_MCP_IDLE_TIMEOUT="+strconv.Itoa(shortIdle))
	})
	call(t, w, "browser_navigate", map[string]string{"url": site.URL})
	browser := chromiumBelow(t, w)
	// A timer that never fires marks no event: wait out several of its
	// lengths (the test above shows one that does fire).
	time.Sleep(3 * shortIdle * time.Millisecond)
	if alive := proctest.StillAlive(browser); len(alive) != len(browser) {
		t.Errorf("the worker's browser lost processes while idle: %d of %d left", len(alive), len(browser))
	}
	if got := pageState(t, w); !strings.Contains(got, site.URL) || !strings.Contains(got, "sid=abc") {
		t.Errorf("after %d ms idle: %s, want the page and its cookie", 3*shortIdle, got)
	}
}
