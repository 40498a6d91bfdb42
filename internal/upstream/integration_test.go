//go:build linux

package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/answer"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/proctest"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/worker"
)

// Integration tests against the real @playwright/mcp 0.0.83 and Chromium.

// realSetup returns the repository root, or skips when the real thing is
// not installed here.
func realSetup(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("integration test with real Chromium and @playwright/mcp: skipped under -short")
	}
	if _, err := FindBrowser(); err != nil {
		t.Skipf("no browser: %v", err)
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed")
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(DefaultCommand(root)[len(DefaultCommand(root))-1]); err != nil {
		t.Skipf("@playwright/mcp is not installed (run npm ci): %v", err)
	}
	return root
}

// launchTestBrowser starts the shared browser the way the Host does by
// default, under a Playwright browser server, and checks at cleanup that
// Close left nothing of it behind.
func launchTestBrowser(t *testing.T, root string, opts ...func(*BrowserConfig)) *Browser {
	t.Helper()
	from, err := PlaywrightFrom(DefaultCommand(root))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	start := time.Now()
	cfg := BrowserConfig{Headless: true, Logger: testLogger(t)}
	for _, o := range opts {
		o(&cfg)
	}
	b, err := LaunchBrowserServer(ctx, cfg, "", from)
	if err != nil {
		t.Fatalf("LaunchBrowserServer: %v", err)
	}
	t.Logf("browser server launch: %v (endpoint %s)", time.Since(start).Round(time.Millisecond), b.PlaywrightEndpoint())
	cleanupBrowser(t, b, b.dir)
	return b
}

// launchCDPBrowser starts a plain Chromium that workers reach over CDP.
func launchCDPBrowser(t *testing.T) *Browser {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	start := time.Now()
	b, err := LaunchBrowser(ctx, BrowserConfig{Headless: true, Logger: testLogger(t)})
	if err != nil {
		t.Fatalf("LaunchBrowser: %v", err)
	}
	t.Logf("browser launch: %v (endpoint %s)", time.Since(start).Round(time.Millisecond), b.CDPEndpoint())
	if profile := browserProfileDir(t, b.PID()); !strings.HasPrefix(profile, b.dir+string(os.PathSeparator)) {
		t.Errorf("profile %s is not inside the browser's directory %s", profile, b.dir)
	}
	cleanupBrowser(t, b, b.dir)
	return b
}

// cleanupBrowser closes b at the end of the test and checks that nothing of
// its process group, nor its profile, is left.
func cleanupBrowser(t *testing.T, b *Browser, profile string) {
	t.Helper()
	pgid := b.PID()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := b.Close(ctx); err != nil {
			t.Errorf("Browser.Close: %v", err)
		}
		if left := groupGone(pgid); len(left) > 0 {
			t.Errorf("browser processes left in group %d: %+v", pgid, left)
		}
		if profile != "" {
			if _, err := os.Stat(profile); !os.IsNotExist(err) {
				t.Errorf("browser profile %s left: %v", profile, err)
			}
		}
	})
}

// browserProfileDir reads --user-data-dir from the browser's command line.
func browserProfileDir(t *testing.T, pid int) string {
	for _, arg := range procArgs(pid) {
		if dir, ok := strings.CutPrefix(arg, "--user-data-dir="); ok {
			return dir
		}
	}
	t.Fatal("no --user-data-dir")
	return ""
}

// startRealWorker starts a worker and checks, at cleanup, that Close left
// neither processes nor its output dir behind.
// A nil b makes the worker launch its own browser.
func startRealWorker(t *testing.T, root string, b *Browser) *Worker {
	t.Helper()
	return startRealWorkerWith(t, root, b, nil)
}

// startRealWorkerWith is startRealWorker with the configuration changed by
// tune (when not nil) before the worker starts.
func startRealWorkerWith(t *testing.T, root string, b *Browser, tune func(*WorkerConfig)) *Worker {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	start := time.Now()
	cfg := WorkerConfig{
		Command:   DefaultCommand(root),
		OutputDir: filepath.Join(t.TempDir(), "out"),
		// Not /tmp: Playwright leaves sockets and, when killed, its own
		// browser's profile in TMPDIR (under a Host, the host's directory).
		Env:    []string{"TMPDIR=" + shortTempDir(t)},
		Logger: testLogger(t),
	}
	if b != nil {
		cfg.PlaywrightEndpoint, cfg.CDPEndpoint = b.PlaywrightEndpoint(), b.CDPEndpoint()
	}
	if tune != nil {
		tune(&cfg)
	}
	w, err := StartWorker(ctx, cfg)
	if err != nil {
		t.Fatalf("StartWorker: %v", err)
	}
	t.Logf("worker spawn→initialize+tools/list: %v (%d tools)", time.Since(start).Round(time.Millisecond), len(w.Tools()))
	pgid, dir := w.PID(), w.OutputDir()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := w.Close(ctx); err != nil {
			t.Errorf("Worker.Close: %v", err)
		}
		if left := groupGone(pgid); len(left) > 0 {
			t.Errorf("worker processes left in group %d: %+v", pgid, left)
		}
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("output dir %s left: %v", dir, err)
		}
	})
	return w
}

// testSite serves the pages the tests browse.
func testSite(t *testing.T) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/favicon.ico", http.NotFound)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		http.SetCookie(w, &http.Cookie{Name: "sid", Value: "abc", Path: "/"})
		fmt.Fprint(w, `<!doctype html><html><head><title>Home</title></head><body>
<h1>Hello</h1><button onclick="console.log('clicked'); document.title='Clicked'">Click me</button>
<script>
console.log('log line'); console.warn('warn line'); console.error('error line');
console.log('two\nlines');
localStorage.setItem('k', 'v');
setTimeout(() => { throw new Error('boom'); }, 0);
</script></body></html>`)
	})
	// /set?who=X sets a cookie, /echo shows the cookies the request
	// carried: what a session's neighbours must never see.
	mux.HandleFunc("/set", func(w http.ResponseWriter, r *http.Request) {
		who := r.URL.Query().Get("who")
		http.SetCookie(w, &http.Cookie{Name: "who", Value: who, Path: "/"})
		fmt.Fprintf(w, `<!doctype html><title>Set %s</title><p>set</p>`, who)
	})
	mux.HandleFunc("/echo", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `<!doctype html><title>Echo</title><p id="c">cookies=[%s]</p>`, r.Header.Get("Cookie"))
	})
	mux.HandleFunc("/blank", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><html><head><title>Blank</title></head><body><p>nothing</p></body></html>`)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// call runs a tool and parses its result.
func call(t *testing.T, w stateWorker, tool string, args any) *answer.Parsed {
	t.Helper()
	p, _ := callTimed(t, w, tool, args)
	return p
}

func callTimed(t *testing.T, w stateWorker, tool string, args any) (*answer.Parsed, time.Duration) {
	t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	start := time.Now()
	res, err := w.CallTool(ctx, tool, raw)
	took := time.Since(start)
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	p, err := answer.Parse(res)
	if err != nil {
		t.Fatalf("%s: Parse: %v", tool, err)
	}
	return p, took
}

// evaluate runs a function in the page and returns its JSON result text.
func evaluate(t *testing.T, w stateWorker, fn string) string {
	t.Helper()
	p := call(t, w, "browser_evaluate", map[string]string{"function": fn})
	if p.IsError {
		t.Fatalf("evaluate %s: %s", fn, p.ErrorText)
	}
	return p.ResultText
}

func TestIntegrationSharedBrowserIsolationAndPipeline(t *testing.T) {
	root := realSetup(t)
	site := testSite(t)
	b := launchTestBrowser(t, root)
	w1 := startRealWorker(t, root, b)
	w2 := startRealWorker(t, root, b)

	// navigate → Parse → Ingest.
	before := time.Now()
	nav, took := callTimed(t, w1, "browser_navigate", map[string]string{"url": site.URL + "/"})
	t.Logf("first browser_navigate: %v", took.Round(time.Millisecond))
	if nav.IsError || nav.PageTitle != "Home" || nav.PageURL != site.URL+"/" {
		t.Fatalf("navigate: %+v", nav)
	}
	if nav.SnapshotFile == "" || nav.ConsoleFile == "" {
		t.Fatalf("navigate links no snapshot/console file: %s", nav.Text)
	}
	in, err := answer.Ingest(nav, w1.OutputDir(), time.Now())
	if err != nil {
		t.Fatalf("Ingest: %v", err)
	}
	if !regexp.MustCompile(`button "Click me" \[ref=e\d+\]`).MatchString(in.Snapshot) {
		t.Errorf("snapshot has no button ref:\n%s", in.Snapshot)
	}
	levels := map[string][]string{}
	for _, e := range in.Console {
		levels[e.Level] = append(levels[e.Level], e.Message)
		if e.Timestamp.Before(before.Add(-2*time.Second)) || e.Timestamp.After(time.Now().Add(2*time.Second)) {
			t.Errorf("console timestamp %v not around the call (%v)", e.Timestamp, before)
		}
	}
	t.Logf("console raw:\n%s", in.ConsoleRaw)
	for _, want := range []struct{ level, msg string }{{"info", "log line"}, {"warn", "warn line"}, {"error", "error line"}, {"info", "two\nlines"}} {
		found := false
		for _, m := range levels[want.level] {
			found = found || m == want.msg
		}
		if !found {
			t.Errorf("no %s entry %q in %v", want.level, want.msg, levels)
		}
	}
	if _, err := os.Stat(nav.SnapshotFile); !os.IsNotExist(err) {
		t.Errorf("ingested snapshot file not removed: %v", err)
	}
	if _, err := os.Stat(nav.ConsoleFile); err != nil {
		t.Errorf("console log must stay: %v", err)
	}

	// The uncaught error arrives after navigate returned; the next action
	// reports it, and deleting the ingested files did not upset the worker.
	snap, took := callTimed(t, w1, "browser_snapshot", map[string]any{})
	t.Logf("browser_snapshot #1: %v", took.Round(time.Millisecond))
	ref := regexp.MustCompile(`button "Click me" \[ref=(e\d+)\]`).FindStringSubmatch(snap.SnapshotInline)
	if ref == nil {
		t.Fatalf("inline snapshot has no button: %q", snap.SnapshotInline)
	}
	click := call(t, w1, "browser_click", map[string]string{"target": ref[1], "element": "Click me button"})
	if click.IsError || click.PageTitle != "Clicked" {
		t.Errorf("click: %s", click.Text)
	}
	in2, err := answer.Ingest(click, w1.OutputDir(), time.Now())
	if err != nil {
		t.Fatalf("Ingest click: %v", err)
	}
	t.Logf("click console raw (%s#L%d-L%d):\n%s", filepath.Base(click.ConsoleFile), click.ConsoleFrom, click.ConsoleTo, in2.ConsoleRaw)
	var sawClicked bool
	for _, e := range append(in.Console, in2.Console...) {
		sawClicked = sawClicked || e.Message == "clicked"
	}
	if !sawClicked {
		t.Errorf("no 'clicked' console entry: %+v", in2.Console)
	}

	var total time.Duration
	const n = 5
	for range n {
		p, took := callTimed(t, w1, "browser_snapshot", map[string]any{})
		if p.SnapshotInline == "" {
			t.Fatal("empty snapshot")
		}
		total += took
	}
	t.Logf("browser_snapshot: %v per call (mean of %d)", (total / n).Round(time.Millisecond), n)

	// Isolation: w2 shares the browser but not w1's cookies or storage.
	if got := evaluate(t, w1, "() => localStorage.getItem('k') + '|' + document.cookie"); got != `"v|sid=abc"` {
		t.Errorf("w1 sees %s, want its own storage", got)
	}
	call(t, w2, "browser_navigate", map[string]string{"url": site.URL + "/blank"})
	if got := evaluate(t, w2, "() => localStorage.getItem('k') + '|' + document.cookie"); got != `"null|"` {
		t.Errorf("w2 sees %s: storage leaked between workers", got)
	}

	// Storage state round trip, as a session resume will do it.
	state := call(t, w1, "browser_storage_state", map[string]any{})
	sin, err := answer.Ingest(state, w1.OutputDir(), time.Now())
	if err != nil || !strings.Contains(string(sin.StorageState), `"sid"`) {
		t.Fatalf("storage state: %v, %s", err, sin.StorageState)
	}
	w3 := startRealWorker(t, root, b)
	if err := os.WriteFile(filepath.Join(w3.OutputDir(), "restore.json"), sin.StorageState, 0o600); err != nil {
		t.Fatal(err)
	}
	if p := call(t, w3, "browser_set_storage_state", map[string]string{"filename": "restore.json"}); p.IsError {
		t.Fatalf("set storage state: %s", p.ErrorText)
	}
	call(t, w3, "browser_navigate", map[string]string{"url": site.URL + "/blank"})
	if got := evaluate(t, w3, "() => localStorage.getItem('k') + '|' + document.cookie"); got != `"v|sid=abc"` {
		t.Errorf("restored worker sees %s", got)
	}

	// Leftovers in the output dir: only console logs.
	entries, _ := os.ReadDir(w1.OutputDir())
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	t.Logf("w1 output dir after the run: %v", names)
	for _, n := range names {
		if !strings.HasPrefix(n, "console-") {
			t.Errorf("unexpected file left in output dir: %s", n)
		}
	}
}

func TestIntegrationWorkerKilled(t *testing.T) {
	root := realSetup(t)
	b := launchTestBrowser(t, root)
	w := startRealWorker(t, root, b)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if err := w.Ping(ctx); err != nil {
		t.Fatalf("Ping: %v", err)
	}
	call(t, w, "browser_navigate", map[string]string{"url": "about:blank"})

	if err := syscall.Kill(w.PID(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case <-w.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("Done not closed after SIGKILL")
	}
	if err := w.Ping(ctx); err == nil || !errors.Is(err, worker.ErrWorkerExited) {
		t.Errorf("Ping after SIGKILL = %v, want worker.ErrWorkerExited", err)
	}
	_, err := w.CallTool(ctx, "browser_snapshot", nil)
	if !errors.Is(err, worker.ErrWorkerExited) || proxy.ErrorCode(err) != proxy.EUNAVAILABLE {
		t.Errorf("CallTool after SIGKILL = %v, want worker.ErrWorkerExited", err)
	}
	t.Logf("exit status: %v", w.ExitErr())

	// The shared browser survives a worker's death.
	w2 := startRealWorker(t, root, b)
	if p := call(t, w2, "browser_navigate", map[string]string{"url": "about:blank"}); p.IsError {
		t.Errorf("navigate on a new worker: %s", p.ErrorText)
	}
}

func TestIntegrationBrowserCrash(t *testing.T) {
	root := realSetup(t)
	b := launchTestBrowser(t, root)
	w := startRealWorker(t, root, b)
	call(t, w, "browser_navigate", map[string]string{"url": "about:blank"})
	if err := syscall.Kill(-b.PID(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case <-b.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("browser Done not closed")
	}
	// What the worker does when its CDP browser is gone: recorded for the
	// supervisor, which must restart the browser and then the workers.
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	raw, err := w.CallTool(ctx, "browser_navigate", json.RawMessage(`{"url":"about:blank"}`))
	pingErr := w.Ping(ctx)
	t.Logf("after browser crash: call err=%v ping=%v result=%.300s", err, pingErr, raw)
}

// TestIntegrationOwnBrowser covers per-session mode: the worker launches its
// own Chromium (in a process group of its own: no preload here, unlike under
// a Host), and Close must still leave nothing behind.
func TestIntegrationOwnBrowser(t *testing.T) {
	root := realSetup(t)
	w := startRealWorker(t, root, nil)
	p, took := callTimed(t, w, "browser_navigate", map[string]string{"url": "about:blank"})
	t.Logf("first browser_navigate (own browser launch): %v", took.Round(time.Millisecond))
	if p.IsError {
		t.Fatalf("navigate: %s", p.ErrorText)
	}
	procs := proctest.Descendants(w.PID())
	var chromium int
	for _, q := range procs {
		if strings.Contains(q.Comm, "chrom") {
			chromium++
		}
	}
	if chromium == 0 {
		t.Fatalf("no chromium below the worker: %+v", procs)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if err := w.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if !eventually(5*time.Second, func() bool { return len(proctest.StillAlive(procs)) == 0 }) {
		t.Errorf("left after Close: %+v", proctest.StillAlive(procs))
	}
}

// TestIntegrationOwnBrowserWorkerKilled: a SIGKILLed per-session worker must
// not leave its Chromium running.
func TestIntegrationOwnBrowserWorkerKilled(t *testing.T) {
	root := realSetup(t)
	w := startRealWorker(t, root, nil)
	call(t, w, "browser_navigate", map[string]string{"url": "about:blank"})
	procs := proctest.Descendants(w.PID())
	if err := syscall.Kill(w.PID(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-w.Done()
	if !eventually(5*time.Second, func() bool { return len(proctest.StillAlive(procs)) == 0 }) {
		t.Errorf("left after the worker was killed: %+v", proctest.StillAlive(procs))
	}
}

// TestIntegrationCDPIsolation: workers sharing a plain Chromium over CDP
// (the remote-endpoint path) still get a BrowserContext each.
func TestIntegrationCDPIsolation(t *testing.T) {
	root := realSetup(t)
	site := testSite(t)
	b := launchCDPBrowser(t)
	w1 := startRealWorker(t, root, b)
	w2 := startRealWorker(t, root, b)
	call(t, w1, "browser_navigate", map[string]string{"url": site.URL + "/blank"})
	call(t, w2, "browser_navigate", map[string]string{"url": site.URL + "/blank"})
	evaluate(t, w1, "() => localStorage.setItem('who', 'one')")
	evaluate(t, w2, "() => localStorage.setItem('who', 'two')")
	for w, want := range map[*Worker]string{w1: `"one"`, w2: `"two"`} {
		if got := evaluate(t, w, "() => localStorage.getItem('who')"); got != want {
			t.Errorf("worker %d reads %s, want %s", w.PID(), got, want)
		}
	}
}

// TestIntegrationBrowserServerGroup: the browser server keeps Chromium in
// its own process group, so killing the server (as the kernel does when the
// proxy dies) takes the browser with it, and Close removes the profile.
func TestIntegrationBrowserServerGroup(t *testing.T) {
	root := realSetup(t)
	b := launchTestBrowser(t, root)
	chromium, ok := proctest.Stat(b.BrowserPID())
	if !ok || b.BrowserPID() == b.PID() {
		t.Fatalf("browser pid %d (server %d): not found", b.BrowserPID(), b.PID())
	}
	if chromium.PGID != b.PID() {
		t.Errorf("chromium %d is in process group %d, want the server's %d", chromium.PID, chromium.PGID, b.PID())
	}
	w := startRealWorker(t, root, b)
	call(t, w, "browser_navigate", map[string]string{"url": "about:blank"})
	group := proctest.Group(b.PID())
	if len(group) < 3 {
		t.Fatalf("browser group %d has only %+v", b.PID(), group)
	}
	checkBrowserFeatures(t, b.BrowserPID(), group)
	if err := syscall.Kill(b.PID(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case <-b.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("Done not closed after the server was killed")
	}
	if left := proctest.WaitGone(5*time.Second, func() []proctest.Proc { return proctest.StillAlive(group) }); len(left) > 0 {
		t.Errorf("left after the browser server was killed: %+v", left)
	}
}

// checkBrowserFeatures checks what the browser server's launcher (js/chromium.sh)
// is for: Chromium got one --disable-features switch holding Playwright's
// list and the proxy's, so no process of the group hosts the omnibox popup
// WebUI (a renderer per session, ≈ 40 MB) and Playwright's own choices hold.
func checkBrowserFeatures(t *testing.T, browserPID int, group []proctest.Proc) {
	t.Helper()
	args := procArgs(browserPID)
	var lists []string
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, "--disable-features="); ok {
			lists = append(lists, v)
		}
	}
	if len(lists) != 1 {
		t.Fatalf("chromium has %d --disable-features switches, want 1 (Chromium keeps only the last): %q", len(lists), lists)
	}
	disabled := strings.Split(lists[0], ",")
	// ThirdPartyStoragePartitioning is Playwright's, WebUIOmniboxPopup the proxy's.
	for _, want := range []string{"ThirdPartyStoragePartitioning", "WebUIOmniboxPopup", "WebUIOmniboxAimPopup"} {
		if !slices.Contains(disabled, want) {
			t.Errorf("%s is not among chromium's disabled features %q", want, disabled)
		}
	}
	for _, p := range group {
		if slices.Contains(procArgs(p.PID), "--top-chrome-webui") {
			t.Errorf("process %v hosts top-chrome WebUI (the omnibox popup): its renderer should not exist", p)
		}
	}
}

// procArgs is a process's argv; nil once it is gone.
func procArgs(pid int) []string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return nil
	}
	return strings.Split(strings.TrimSuffix(string(b), "\x00"), "\x00")
}
