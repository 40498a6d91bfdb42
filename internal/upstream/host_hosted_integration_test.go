//go:build linux

package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/proctest"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/worker"
)

// Hosted-mode Host with the real worker-host.js, @playwright/mcp and
// Chromium: SpawnSession, placement over hosts, a host killed or hung, the
// worker arguments read by upstream's own parser.

// startHostedHost starts a real Host running k sessions per session host
// with args as PROXY_PLAYWRIGHT_ARGS, and checks at cleanup that no process
// of it is left.
func startHostedHost(t *testing.T, root string, k int, ping time.Duration, args ...string) *Host {
	t.Helper()
	var pids []int
	t.Cleanup(func() {
		// Registered first, so it runs after startHost's Close: every
		// session host the Host started must be gone.
		for _, pid := range pids {
			if left := proctest.WaitGone(5*time.Second, func() []proctest.Proc { return proctest.Group(pid) }); len(left) > 0 {
				t.Errorf("session host group %d left: %+v", pid, left)
			}
		}
	})
	h := startHost(t, HostConfig{
		Browser:           BrowserConfig{Headless: true, Logger: testLogger(t)},
		Worker:            WorkerConfig{Command: DefaultCommand(root), ExtraArgs: args, Logger: testLogger(t)},
		Logger:            testLogger(t),
		TempDir:           shortTempDir(t),
		SessionsPerWorker: k,
		PingInterval:      ping,
	})
	h.startSessionHost = func(ctx context.Context, cfg SessionHostConfig) (*SessionHost, error) {
		sh, err := StartSessionHost(ctx, cfg)
		if err == nil {
			pids = append(pids, sh.PID())
		}
		return sh, err
	}
	return h
}

// spawnHostedShaped is spawnHosted with a shape in the context.
func spawnHostedShaped(t *testing.T, h *Host, shape Shape) *HostedSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	w, err := h.SpawnSession(WithShape(ctx, shape))
	if err != nil {
		t.Fatalf("SpawnSession: %v", err)
	}
	s := w.(*HostedSession)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		_ = s.Close(ctx)
	})
	return s
}

func TestIntegrationHostedSpawnSession(t *testing.T) {
	root := realSetup(t)
	site := testSite(t)
	// --caps=config offers browser_get_config: upstream's own account of
	// the configuration it was given.
	h := startHostedHost(t, root, 2, 0, "--timeout-settle=0", "--caps=config")
	small := Shape{Context: json.RawMessage(`{"viewport":{"width":500,"height":400}}`)}
	a, b := spawnHosted(t, h), spawnHostedShaped(t, h, small)
	c := spawnHosted(t, h)
	if a.PID() != b.PID() || c.PID() == a.PID() {
		t.Fatalf("hosts of three sessions at K=2: %d %d %d, want the first two together", a.PID(), b.PID(), c.PID())
	}

	t.Run("worker arguments", func(t *testing.T) {
		p := call(t, a, "browser_get_config", map[string]any{})
		var cfg struct {
			Timeouts struct {
				Settle *int `json:"settle"`
			} `json:"timeouts"`
			Capabilities []string `json:"capabilities"`
		}
		if err := json.Unmarshal([]byte(p.ResultText), &cfg); err != nil {
			t.Fatalf("browser_get_config: %v in %q", err, p.ResultText)
		}
		if cfg.Timeouts.Settle == nil || *cfg.Timeouts.Settle != 0 {
			t.Errorf("timeouts.settle = %v, want 0 (--timeout-settle=0)", cfg.Timeouts.Settle)
		}
		for _, want := range []string{"config", "storage"} {
			if !strings.Contains(strings.Join(cfg.Capabilities, ","), want) {
				t.Errorf("capabilities %v lack %s", cfg.Capabilities, want)
			}
		}
	})

	t.Run("context options per session", func(t *testing.T) {
		for _, s := range []*HostedSession{a, b} {
			call(t, s, "browser_navigate", map[string]string{"url": site.URL + "/blank"})
		}
		if got := evaluate(t, b, "() => window.innerWidth + 'x' + window.innerHeight"); got != `"500x400"` {
			t.Errorf("shaped session's viewport %s, want 500x400", got)
		}
		if got := evaluate(t, a, "() => window.innerWidth"); got == `500` {
			t.Errorf("unshaped session in the same host has the other's viewport width %s", got)
		}
	})

	t.Run("what the session layer reads", func(t *testing.T) {
		if a.DebugEndpoint() == "" || !strings.HasPrefix(a.DebugEndpoint(), "http://127.0.0.1:") {
			t.Errorf("DebugEndpoint = %q, want its host's browser's CDP address", a.DebugEndpoint())
		}
		if !a.SharesBrowser() {
			t.Error("SharesBrowser = false")
		}
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		defer cancel()
		pids, err := a.RendererPIDs(ctx)
		if err != nil || len(pids) == 0 {
			t.Fatalf("RendererPIDs = %v, %v", pids, err)
		}
		if m := a.Memory(pids); m.WorkerBytes <= 0 || m.WorkerBytes >= a.Host().RSS() || m.Renderers == 0 {
			t.Errorf("Memory = %+v with host RSS %d: want a share of the host and the renderers", m, a.Host().RSS())
		}
	})

	t.Run("a host killed ends exactly its sessions", func(t *testing.T) {
		dead := c.Host()
		if err := syscall.Kill(dead.PID(), syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		waitDone(t, "the killed host's session", c.Done())
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		defer cancel()
		if _, err := c.CallTool(ctx, "browser_tabs", json.RawMessage(`{"action":"list"}`)); !errors.Is(err, worker.ErrWorkerExited) {
			t.Errorf("call on the killed host's session = %v, want ErrWorkerExited", err)
		}
		for _, s := range []*HostedSession{a, b} {
			if isDone(s) {
				t.Fatalf("session %s of the other host ended", s.Key())
			}
			call(t, s, "browser_navigate", map[string]string{"url": site.URL + "/echo"})
		}
		waitDone(t, "the killed host's reaping", dead.Done())
		d := spawnHosted(t, h)
		if d.PID() == dead.PID() {
			t.Fatalf("a new session went to the killed host")
		}
		if p := call(t, d, "browser_navigate", map[string]string{"url": site.URL + "/echo"}); p.IsError || p.PageTitle != "Echo" {
			t.Errorf("session on a new host: title %q, error %q", p.PageTitle, p.ErrorText)
		}
	})

	t.Run("a host's browser dying ends its host and exactly its sessions", func(t *testing.T) {
		e := spawnHosted(t, h)
		victim := e.Host()
		if victim.PID() == a.Host().PID() || victim.BrowserPID() == 0 || victim.BrowserPID() == a.Host().BrowserPID() {
			t.Fatalf("session host %d (browser %d) beside %d (browser %d): want two hosts, each with its own browser",
				victim.PID(), victim.BrowserPID(), a.Host().PID(), a.Host().BrowserPID())
		}
		crashes := h.BrowserCrashes()
		if err := syscall.Kill(victim.BrowserPID(), syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		waitDone(t, "the host whose browser died", victim.Done())
		waitDone(t, "its session", e.Done())
		if !e.LostBrowser() {
			t.Errorf("the session's end (%v) does not say it lost its browser: the session layer would charge it a restart", e.Err())
		}
		for _, s := range []*HostedSession{a, b} {
			if isDone(s) {
				t.Fatalf("session %s of the other host ended", s.Key())
			}
			call(t, s, "browser_navigate", map[string]string{"url": site.URL + "/echo"})
		}
		for deadline := time.Now().Add(10 * time.Second); h.BrowserCrashes() == crashes && time.Now().Before(deadline); {
			time.Sleep(20 * time.Millisecond)
		}
		if got := h.BrowserCrashes(); got != crashes+1 {
			t.Errorf("BrowserCrashes = %d after a host's browser died, want %d", got, crashes+1)
		}
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		defer cancel()
		if err := h.Check(ctx); err != nil {
			t.Errorf("Check with a live host left = %v, want nil", err)
		}
	})
}

func TestIntegrationHostedHungHostIsKilled(t *testing.T) {
	root := realSetup(t)
	h := startHostedHost(t, root, 2, time.Second)
	a := spawnHosted(t, h)
	hung := a.Host()
	if err := syscall.Kill(hung.PID(), syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(hung.PID(), syscall.SIGCONT) })
	waitDone(t, "the stopped host", hung.Done())
	waitDone(t, "its session", a.Done())
	if err := a.Ping(t.Context()); !errors.Is(err, worker.ErrWorkerExited) {
		t.Errorf("Ping on the hung host's session = %v, want ErrWorkerExited", err)
	}
	if b := spawnHosted(t, h); b.PID() == hung.PID() {
		t.Fatal("a new session went to the killed host")
	}
}
