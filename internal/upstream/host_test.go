//go:build linux

package upstream

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/clock/clocktest"
)

// Host tests without node or Chromium: workers are the fake (this test
// binary), the remote endpoint or the "browser" a sleep process.

// closeHostAtCleanup closes h at the end of the test and checks it returns.
func closeHostAtCleanup(t *testing.T, h *Host) {
	t.Helper()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		if err := h.Close(ctx); err != nil {
			t.Errorf("Host.Close: %v", err)
		}
	})
}

// hostSpawn spawns through h and closes the worker at cleanup.
func hostSpawn(t *testing.T, h *Host) (*Worker, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	w, err := h.Spawn(ctx)
	if w != nil {
		pgid := w.PID()
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_ = w.Close(ctx)
			if left := groupGone(pgid); len(left) > 0 {
				t.Errorf("processes left in group %d: %+v", pgid, left)
			}
		})
	}
	return w, err
}

// environ reads a process's environment.
func environ(t *testing.T, pid int) []string {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		t.Fatalf("environ of %d: %v", pid, err)
	}
	return strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
}

// markers returns the instance markers in env.
func markers(env []string) []string {
	var out []string
	for _, kv := range env {
		if strings.HasPrefix(kv, InstanceEnv+"=") {
			out = append(out, kv)
		}
	}
	return out
}

func TestHostSpawnRetriesAndCircuitBreaker(t *testing.T) {
	attempts := filepath.Join(t.TempDir(), "attempts")
	failing := []string{"sh", "-c", `echo x >> "$0"; exit 1`, attempts}
	count := func() int {
		b, _ := os.ReadFile(attempts)
		return strings.Count(string(b), "x")
	}
	h := NewHost(HostConfig{
		RemoteCDPEndpoint: "http://127.0.0.1:1",
		Worker:            WorkerConfig{Command: failing, Logger: testLogger(t)},
		SpawnAttempts:     3,
		SpawnBackoff:      time.Millisecond,
		BreakerThreshold:  2,
		BreakerCooldown:   time.Minute,
		Logger:            testLogger(t),
	})
	now := time.Now()
	var clockMu sync.Mutex
	h.breaker.now = func() time.Time { clockMu.Lock(); defer clockMu.Unlock(); return now }
	closeHostAtCleanup(t, h)

	// A caller that gave up is no evidence against the upstream.
	gone, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := h.Spawn(gone); !errors.Is(err, context.Canceled) {
		t.Fatalf("Spawn with a cancelled ctx = %v", err)
	}

	for i := 1; i <= 2; i++ {
		_, err := hostSpawn(t, h)
		if err == nil || errors.Is(err, ErrCircuitOpen) || !strings.Contains(err.Error(), "3 attempts failed") {
			t.Fatalf("Spawn %d = %v, want a failure after 3 attempts", i, err)
		}
		if got := count(); got != 3*i {
			t.Fatalf("after Spawn %d: %d attempts, want %d", i, got, 3*i)
		}
		if open := h.CheckCircuitBreaker(t.Context()) != nil; open != (i == 2) {
			t.Fatalf("after Spawn %d: breaker open = %v", i, open)
		}
	}

	_, err := hostSpawn(t, h)
	if !errors.Is(err, ErrCircuitOpen) || proxy.ErrorCode(err) != proxy.EUNAVAILABLE {
		t.Fatalf("Spawn with the breaker open = %v, want ErrCircuitOpen", err)
	}
	if got := count(); got != 6 {
		t.Errorf("an open breaker still started %d workers", got-6)
	}
	health := h.CheckCircuitBreaker(t.Context())
	for _, want := range []string{"circuit breaker is open", "2 worker starts failed in a row", "3 attempts failed", "in 1m0s"} {
		if health == nil || !strings.Contains(health.Error(), want) {
			t.Errorf("CheckCircuitBreaker = %v, lacks %q", health, want)
		}
	}

	// The upstream is fixed; after the cooldown one trial goes through and
	// closes the breaker.
	h.cfg.Worker = fakeWorkerConfig(t)
	clockMu.Lock()
	now = now.Add(time.Minute)
	clockMu.Unlock()
	if _, err := hostSpawn(t, h); err != nil {
		t.Fatalf("trial Spawn: %v", err)
	}
	if err := h.CheckCircuitBreaker(t.Context()); err != nil {
		t.Errorf("after a successful trial: %v", err)
	}
}

func TestHostInstanceMarker(t *testing.T) {
	// The proxy's own marker (inherited from whoever started it) must not
	// reach its children: only the host's own does.
	t.Setenv(InstanceEnv, "inherited")
	h := NewHost(HostConfig{
		RemoteCDPEndpoint: "http://127.0.0.1:1",
		Worker:            fakeWorkerConfig(t),
		InstanceID:        "abc123",
		Logger:            testLogger(t),
	})
	closeHostAtCleanup(t, h)
	w, err := hostSpawn(t, h)
	if err != nil {
		t.Fatal(err)
	}
	if got := markers(environ(t, w.PID())); len(got) != 1 || got[0] != InstanceEnv+"=abc123" {
		t.Errorf("worker markers = %q, want only %s=abc123", got, InstanceEnv)
	}
}

// fakeBrowsers launches sleep processes as the host's "browser"; while
// fail is set, launches fail with it.
type fakeBrowsers struct {
	t       *testing.T
	mu      sync.Mutex
	started []*Browser
	fail    error
}

func (f *fakeBrowsers) setFail(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fail = err
}

func (f *fakeBrowsers) launch(ctx context.Context) (*Browser, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail != nil {
		return nil, f.fail
	}
	cmd := exec.Command("sleep", "300")
	cmd.SysProcAttr = sysProcAttr()
	proc, err := startProcess(cmd, nil)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp(f.t.TempDir(), "browser-")
	if err != nil {
		return nil, err
	}
	b := &Browser{proc: proc, endpoint: "http://127.0.0.1:1", dir: dir, stderr: newRingBuffer(1024),
		logger: testLogger(f.t), started: time.Now().Add(-time.Hour)}
	_, _ = b.stderr.Write([]byte("something\nchromium fell over\n"))
	f.started = append(f.started, b)
	f.t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = b.Close(ctx)
	})
	return b, nil
}

func (f *fakeBrowsers) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.started)
}

func (f *fakeBrowsers) first() *Browser {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.started[0]
}

func TestHostBrowserDeathStopsWorkersAndRelaunches(t *testing.T) {
	before := runtime.NumGoroutine()
	fb := &fakeBrowsers{t: t}
	clk := clocktest.New()
	h := NewHost(HostConfig{Worker: fakeWorkerConfig(t), Logger: testLogger(t), Clock: clk})
	h.launchBrowser = fb.launch
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	if err := h.Start(ctx); err != nil {
		t.Fatal(err)
	}
	closed := false
	t.Cleanup(func() {
		if !closed {
			_ = h.Close(context.Background())
		}
	})
	w1, err := hostSpawn(t, h)
	if err != nil {
		t.Fatal(err)
	}
	w2, err := hostSpawn(t, h)
	if err != nil {
		t.Fatal(err)
	}
	// A worker closed before its browser dies ends its watcher.
	w3, err := hostSpawn(t, h)
	if err != nil {
		t.Fatal(err)
	}
	if err := w3.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := h.Check(ctx); err != nil {
		t.Fatalf("Check with a live browser: %v", err)
	}

	first := fb.first()
	fb.setFail(errors.New("no chromium today"))
	if err := syscall.Kill(-first.PID(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for _, w := range []*Worker{w1, w2} {
		select {
		case <-w.Done():
		case <-time.After(10 * time.Second):
			t.Fatalf("worker %d still running 10s after its browser died", w.PID())
		}
	}
	// While relaunches fail, /health says what happened and that the host
	// keeps trying; once Chromium can start again, it is back by itself.
	var seen string
	if !eventually(10*time.Second, func() bool {
		if err := h.Check(ctx); err != nil && strings.Contains(err.Error(), "relaunching it failed") {
			seen = err.Error()
		}
		return seen != ""
	}) {
		t.Fatalf("Check while relaunches fail = %v", h.Check(ctx))
	}
	for _, want := range []string{"browser (pid " + strconv.Itoa(first.PID()) + ") exited unexpectedly", "signal: killed", "chromium fell over", "its workers were stopped", "no chromium today"} {
		if !strings.Contains(seen, want) {
			t.Errorf("Check while relaunching = %q, lacks %q", seen, want)
		}
	}
	fb.setFail(nil)
	// A failed relaunch is retried a second later.
	clk.WaitForTimer(t, time.Second)
	clk.Advance(time.Second)
	if !eventually(10*time.Second, func() bool { return h.Check(ctx) == nil && fb.count() == 2 }) {
		t.Fatalf("browser not relaunched: Check = %v, launches = %d", h.Check(ctx), fb.count())
	}
	w4, err := hostSpawn(t, h)
	if err != nil {
		t.Fatalf("Spawn after the relaunch: %v", err)
	}
	if !strings.Contains(cmdline(w4.PID()), "--cdp-endpoint http://127.0.0.1:1") {
		t.Errorf("new worker: %s", cmdline(w4.PID()))
	}

	if err := h.Close(ctx); err != nil {
		t.Fatal(err)
	}
	closed = true
	select {
	case <-w4.Done():
	case <-time.After(10 * time.Second):
		t.Error("a worker outlived its host's browser")
	}
	if !errors.Is(h.Check(ctx), ErrHostClosed) {
		t.Errorf("Check after Close = %v", h.Check(ctx))
	}
	if _, err := h.Spawn(ctx); !errors.Is(err, ErrHostClosed) {
		t.Errorf("Spawn after Close = %v", err)
	}
	if !eventually(3*time.Second, func() bool { return runtime.NumGoroutine() <= before }) {
		buf := make([]byte, 1<<20)
		t.Errorf("goroutines: %d before, %d after Close\n%s", before, runtime.NumGoroutine(), buf[:runtime.Stack(buf, true)])
	}
}
