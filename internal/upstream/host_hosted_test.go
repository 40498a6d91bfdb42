//go:build linux

package upstream

import (
	"context"
	"errors"
	"os"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/clock"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/clock/clocktest"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/nodes"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/proctest"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/worker"
)

// Hosted-mode Host tests without node or Chromium: session hosts are this
// test binary (fakeHost), which announces a browser of its own when asked
// for one and launches nothing.

// hostedFake returns a started Host that runs k sessions per session host,
// the fakes standing in for both; hostEnv goes to every fake host.
func hostedFake(t *testing.T, k int, clk clock.Clock, ping time.Duration, hostEnv ...string) *Host {
	t.Helper()
	h := NewHost(HostConfig{Worker: fakeWorkerConfig(t), Logger: testLogger(t), Clock: clk, TempDir: t.TempDir(),
		SessionsPerWorker: k, PingInterval: ping})
	h.launchBrowser = func(context.Context) (*Browser, error) {
		t.Error("a Host with session hosts launched a shared browser; each host runs its own")
		return nil, errors.New("no shared browser in hosted mode")
	}
	h.startSessionHost = func(ctx context.Context, cfg SessionHostConfig) (*SessionHost, error) {
		cfg.Node, cfg.ResolveFrom = os.Args[0], t.TempDir()
		cfg.Env = append([]string{"PWP_FAKE_HOST=1"}, hostEnv...)
		if cfg.Browser != nil {
			cfg.Browser.Executable = os.Args[0]
		}
		return StartSessionHost(ctx, cfg)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	if err := h.Start(ctx); err != nil {
		t.Fatal(err)
	}
	closeHostAtCleanup(t, h)
	return h
}

// spawnHosted opens a session through h.SpawnSession, which must be hosted,
// and closes it at cleanup.
func spawnHosted(t *testing.T, h *Host) *HostedSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	w, err := h.SpawnSession(ctx)
	if err != nil {
		t.Fatalf("SpawnSession: %v", err)
	}
	s, ok := w.(*HostedSession)
	if !ok {
		t.Fatalf("SpawnSession gave a %T, want a hosted session", w)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		_ = s.Close(ctx)
	})
	return s
}

// hostPIDs lists the session hosts in h's pool.
func hostPIDs(h *Host) []int {
	h.mu.Lock()
	defer h.mu.Unlock()
	var pids []int
	for _, ph := range h.sessionHosts {
		pids = append(pids, ph.sh.PID())
	}
	return pids
}

// waitDone waits for ch with a bound only a hang reaches.
func waitDone(t *testing.T, what string, ch <-chan struct{}) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(30 * time.Second):
		t.Fatalf("%s: not done", what)
	}
}

func closeNow(t *testing.T, w worker.Worker) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 15*time.Second)
	defer cancel()
	if err := w.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
}

func TestHostedPlacementFillsHostsAndStopsIdleOnes(t *testing.T) {
	h := hostedFake(t, 2, nil, 0)
	a, b, c := spawnHosted(t, h), spawnHosted(t, h), spawnHosted(t, h)
	if a.PID() != b.PID() || c.PID() == a.PID() {
		t.Fatalf("hosts of three sessions at K=2: %d %d %d, want the first two together, the third apart", a.PID(), b.PID(), c.PID())
	}
	if got := len(hostPIDs(h)); got != 2 {
		t.Fatalf("hosts after three sessions at K=2: %d, want 2", got)
	}
	for _, s := range []*HostedSession{a, b, c} {
		if got := callText(t, s, "echo", `{}`); got != s.Key()+" {}" {
			t.Fatalf("session %s answered %q", s.Key(), got)
		}
	}

	// The third session's host, left empty, stops; the first stays.
	second := c.Host()
	closeNow(t, c)
	waitDone(t, "the emptied second host", second.Done())
	if left := proctest.WaitGone(5*time.Second, func() []proctest.Proc { return proctest.Group(second.PID()) }); len(left) > 0 {
		t.Fatalf("second host's processes left: %+v", left)
	}
	if _, err := os.Stat(second.dir); !os.IsNotExist(err) {
		t.Fatalf("second host's dir %s left: %v", second.dir, err)
	}

	// The last host is kept warm when its sessions close, and placed on.
	closeNow(t, a)
	closeNow(t, b)
	if got, want := hostPIDs(h), []int{a.PID()}; len(got) != 1 || got[0] != want[0] {
		t.Fatalf("hosts after every session closed: %v, want %v", got, want)
	}
	if d := spawnHosted(t, h); d.PID() != a.PID() {
		t.Fatalf("a new session went to host %d, want the warm one %d", d.PID(), a.PID())
	}
}

func TestHostedPlacementSkipsAHostWithAFullHeap(t *testing.T) {
	// Every fake host reports a heap past the placement limit of K=4.
	full := int64(hostHeapPlaceFraction*float64(hostHeapCapMB(4))*(1<<20)) + 1
	h := hostedFake(t, 4, nil, 0, "PWP_FAKE_HOST_HEAP="+strconv.FormatInt(full, 10))
	a := spawnHosted(t, h)
	if b := spawnHosted(t, h); b.PID() != a.PID() {
		t.Fatalf("before any pong the second session went to host %d, want %d", b.PID(), a.PID())
	}
	h.mu.Lock()
	ph := h.sessionHosts[0]
	h.mu.Unlock()
	if err := h.pingSessionHost(ph); err != nil {
		t.Fatalf("ping: %v", err)
	}
	if c := spawnHosted(t, h); c.PID() == a.PID() {
		t.Fatalf("a session went to host %d, whose heap is past the limit", c.PID())
	}
}

func TestHostedHungHostIsKilledAndItsSessionsEnd(t *testing.T) {
	clk := clocktest.New()
	// An interval past hostPingMax, so the two waits of a ping (the interval,
	// then the 10 s answer timeout) are told apart by their timers.
	const interval = 12 * time.Second
	h := hostedFake(t, 2, clk, interval)
	if h.hostPingTimeout() == interval {
		t.Fatalf("the ping timeout equals the interval %v; the steps below need them apart", interval)
	}
	a, b := spawnHosted(t, h), spawnHosted(t, h)
	hung := a.Host()
	closeNow(t, b) // room on the host that is about to hang
	h.mu.Lock()
	ph := h.sessionHosts[0]
	h.mu.Unlock()
	if err := syscall.Kill(hung.PID(), syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(hung.PID(), syscall.SIGCONT) })
	// kill returns before every thread has stopped; one that has not may
	// still answer the first ping.
	if !eventually(10*time.Second, func() bool { return proctest.Stopped(hung.PID()) }) {
		t.Fatal("the host did not stop")
	}

	// Each ping goes out at the interval and gets no answer within the
	// timeout. After the first miss no session is placed there; at the
	// hostPingFailLimit-th it is killed.
	for i := 1; i <= hostPingFailLimit; i++ {
		clk.WaitForTimer(t, interval)
		clk.Advance(interval)
		clk.WaitForTimer(t, h.hostPingTimeout())
		clk.Advance(h.hostPingTimeout())
		if i == 1 {
			if !eventually(10*time.Second, func() bool { return ph.missed.Load() == 1 }) {
				t.Fatal("the missed ping was not counted")
			}
			if got, err := h.pickHost(); got != nil || err != nil {
				t.Fatalf("pickHost = %v, %v: want no host, the only one missed its ping", got, err)
			}
		}
	}
	waitDone(t, "the hung host", hung.Done())
	waitDone(t, "session "+a.Key(), a.Done())
	if _, err := a.CallTool(t.Context(), "echo", nil); !errors.Is(err, worker.ErrWorkerExited) {
		t.Fatalf("call on session %s of the killed host: %v, want ErrWorkerExited", a.Key(), err)
	}
	if c := spawnHosted(t, h); c.PID() == hung.PID() {
		t.Fatalf("a new session went to the killed host %d", c.PID())
	}
}

func TestHostedOnlyOnABrowserServer(t *testing.T) {
	pool, err := nodes.New([]nodes.Endpoint{{ID: "n1", URL: "ws://127.0.0.1:1/", Capacity: 1}}, nodes.Config{Prober: nodes.HTTPProber{}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		cfg  HostConfig
		want int
	}{
		{"shared", HostConfig{SessionsPerWorker: 8}, 8},
		{"browser nodes", HostConfig{SessionsPerWorker: 8, Nodes: pool}, 8},
		{"one", HostConfig{SessionsPerWorker: 1}, 1},
		{"per-session", HostConfig{SessionsPerWorker: 8, PerSession: true}, 1},
		{"CDP endpoint", HostConfig{SessionsPerWorker: 8, RemoteCDPEndpoint: "http://127.0.0.1:1"}, 1},
		{"over CDP", HostConfig{SessionsPerWorker: 8, ShareOverCDP: true}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := NewHost(tc.cfg).SessionsPerWorker(); got != tc.want {
				t.Fatalf("SessionsPerWorker = %d, want %d", got, tc.want)
			}
		})
	}
}
