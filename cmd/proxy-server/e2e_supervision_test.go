//go:build unix

package main

// End-to-end tests of supervision with the real binary (runBinary, in
// e2e_recovery_test.go): the spawn circuit breaker, and a restart after
// kill -9 that ends the dead server's leftovers (and only those).

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/proctest"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/upstream"
)

// TestCircuitBreakerFailsFast: with a worker command that fails after the
// first start (serve refuses one that never starts), session creates fail
// with a retryable 503 after their retries; once the breaker opens they
// fail fast, and /health names it.
func TestCircuitBreakerFailsFast(t *testing.T) {
	requireBrowser(t)
	dir := t.TempDir()
	script := filepath.Join(dir, "worker.sh")
	started := filepath.Join(dir, "started")
	body := fmt.Sprintf("#!/bin/sh\nif [ -e %q ]; then echo 'broken after its first start' >&2; exit 1; fi\n: > %q\nexec node %q \"$@\"\n",
		started, started, filepath.Join(projectRoot(t), "node_modules/@playwright/mcp/cli.js"))
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	s := runBinary(t, filepath.Join(dir, "p.db"), map[string]string{"PROXY_PLAYWRIGHT_MCP_COMMAND": script})
	// The worker serve started first serves the first session.
	s.createSession(t)

	create := func() (proxy.Error, int, time.Duration) {
		t.Helper()
		var raw string
		start := time.Now()
		code := do(t, "POST", s.URL+"/sessions", nil, &raw)
		took := time.Since(start)
		var body struct {
			Error, Message string
			Retryable      bool
		}
		if err := json.Unmarshal([]byte(raw), &body); err != nil {
			t.Fatalf("POST /sessions = %d %q: %v", code, raw, err)
		}
		return proxy.Error{Code: body.Error, Message: body.Message, Retryable: body.Retryable}, code, took
	}
	opened := false
	for i := 1; i <= 5 && !opened; i++ {
		e, code, took := create()
		t.Logf("create %d: %d in %v: %s", i, code, took.Round(time.Millisecond), e.Message)
		if code != http.StatusServiceUnavailable || e.Code != proxy.EUNAVAILABLE || !e.Retryable {
			t.Fatalf("create %d = %d %+v, want a retryable 503 UPSTREAM_UNAVAILABLE", i, code, e)
		}
		opened = strings.Contains(e.Message, "circuit breaker is open")
	}
	if !opened {
		t.Fatal("the breaker did not open after 5 failed creates")
	}

	e, code, took := create()
	if code != http.StatusServiceUnavailable || e.Code != proxy.EUNAVAILABLE || !e.Retryable ||
		!strings.Contains(e.Message, "circuit breaker is open") || !strings.Contains(e.Message, "next start is tried at") {
		t.Fatalf("create with the breaker open = %d %+v", code, e)
	}
	// A failing create with retries takes at least their backoff (1.5 s).
	if took > 1500*time.Millisecond {
		t.Errorf("create with the breaker open took %v: it did not fail fast", took)
	}

	var h health
	if code := do(t, "GET", s.URL+"/health", nil, &h); code != http.StatusServiceUnavailable || h.Status != "degraded" {
		t.Fatalf("/health = %d %+v, want 503 degraded", code, h)
	}
	checkHealthKeys(t, h)
	if cb := h.Checks["circuit_breaker"]; !strings.HasPrefix(cb, "error: ") || !strings.Contains(cb, "circuit breaker is open") || !strings.Contains(cb, "worker starts failed in a row") {
		t.Errorf("/health circuit_breaker = %q", cb)
	}
	// No worker can start, and no session has failed (none was created).
	if w := h.Checks["workers"]; !strings.HasPrefix(w, "error: workers cannot be started") || !strings.Contains(w, "circuit breaker is open") || !strings.HasSuffix(w, "; 0 session(s) in the error state") {
		t.Errorf("/health workers = %q", w)
	}
	for _, name := range []string{"database", "sessions"} {
		if h.Checks[name] != "ok" {
			t.Errorf("/health %s = %q, want ok", name, h.Checks[name])
		}
	}
	t.Logf("/health: %+v", h)
}

// TestRestartAfterKill9EndsLeftovers: a second server on the same data
// directory is refused while the first lives; after the first is killed
// with -9, the next one starts, ends whatever still carries the dead
// server's instance marker, and spares everything else.
func TestRestartAfterKill9EndsLeftovers(t *testing.T) {
	requireBrowser(t)
	db := filepath.Join(t.TempDir(), "p.db")
	first := runBinary(t, db, nil)
	var rec struct {
		PID      int    `json:"pid"`
		Instance string `json:"instance"`
	}
	b, err := os.ReadFile(filepath.Join(filepath.Dir(db), "proxy-server.pid"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &rec); err != nil || rec.PID != first.cmd.Process.Pid || rec.Instance == "" {
		t.Fatalf("pid file %q: %v", b, err)
	}

	serverBin, _ := binaries(t)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	rival := exec.CommandContext(ctx, serverBin, "serve", "-port", "0", "-db", db)
	out, err := rival.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "another proxy-server is using this data directory") {
		t.Fatalf("a second server on a live server's directory: %v\n%s", err, out)
	}

	// Leftovers the kernel's parent-death signal would not reach: one
	// marked as the first server's, one marked as another's, one unmarked.
	type sleeper struct {
		cmd  *exec.Cmd
		done chan error
	}
	sleep := func(env ...string) sleeper {
		cmd := exec.Command("sleep", "120")
		cmd.Env = append(os.Environ(), env...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		s := sleeper{cmd: cmd, done: make(chan error, 1)}
		go func() { s.done <- cmd.Wait() }()
		t.Cleanup(func() {
			_ = cmd.Process.Kill()
			<-s.done
		})
		return s
	}
	marked := sleep(upstream.InstanceEnv + "=" + rec.Instance)
	foreign := sleep(upstream.InstanceEnv + "=not-" + rec.Instance)
	plain := sleep()

	children := proctest.Descendants(first.cmd.Process.Pid)
	first.kill9(t)
	restarted := runBinary(t, db, nil)
	select {
	case err := <-marked.done:
		marked.done <- err
		t.Logf("the dead server's marked leftover: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatalf("the dead server's marked leftover %d still runs:\n%s", marked.cmd.Process.Pid, restarted.log())
	}
	for _, c := range []sleeper{foreign, plain} {
		if !proctest.Alive(c.cmd.Process.Pid) {
			t.Errorf("process %d without the dead server's marker was killed", c.cmd.Process.Pid)
		}
	}
	if left := proctest.WaitGone(5*time.Second, func() []proctest.Proc { return proctest.StillAlive(children) }); len(left) > 0 {
		t.Errorf("the dead server's children still run: %v", left)
	}
	if !strings.Contains(restarted.log(), "killed a leftover of a previous proxy-server") {
		t.Errorf("the restart did not log what it killed:\n%s", restarted.log())
	}
	if code := waitHealthy(t, restarted.URL, 60*time.Second); code != http.StatusOK {
		t.Errorf("/health after the restart = %d", code)
	}
}
