//go:build linux

package main

// End-to-end tests of the bridge's resilience: real mcp-bridge and
// proxy-server binaries, real @playwright/mcp workers and headless Chromium,
// on a page this test serves on 127.0.0.1. They are skipped under -short,
// and skipped with a clear message only when Chromium or node_modules is
// truly absent. Every process they start is stopped and reaped on every
// path; TestMain fails the run if anything is left.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/autostart"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/e2etest"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/mcpserver"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/proctest"
)

// bins are proxy-server and mcp-bridge, built once, side by side (so a
// bridge finds its proxy-server next to itself).
var bins e2etest.Binaries

func TestMain(m *testing.M) { e2etest.Main(m, bins.Remove) }

func projectRoot(t testing.TB) string { return e2etest.ProjectRoot(t) }

// requireBrowser skips only when the real parts are truly absent.
func requireBrowser(t *testing.T) { e2etest.RequireBrowser(t) }

// binaries builds both commands once per test run.
func binaries(t *testing.T) (proxyServer, bridge string) { return bins.Build(t) }

// site serves two small pages on 127.0.0.1.
func site(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		title := map[string]string{"/": "First page", "/two": "Second page"}[r.URL.Path]
		if title == "" {
			http.NotFound(w, r)
			return
		}
		fmt.Fprintf(w, "<!doctype html><title>%s</title><h1>%s</h1><button>Go</button>", title, title)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// logWatch collects a process's stderr and tells when a line appeared.
type logWatch struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	waits []logWait
}

type logWait struct {
	s  string
	n  int
	ch chan struct{}
}

func (l *logWatch) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf.Write(p)
	kept := l.waits[:0]
	for _, w := range l.waits {
		if strings.Count(l.buf.String(), w.s) >= w.n {
			close(w.ch)
		} else {
			kept = append(kept, w)
		}
	}
	l.waits = kept
	return len(p), nil
}

// seen returns a channel closed once s has been written n times.
func (l *logWatch) seen(s string, n int) <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	ch := make(chan struct{})
	if strings.Count(l.buf.String(), s) >= n {
		close(ch)
	} else {
		l.waits = append(l.waits, logWait{s, n, ch})
	}
	return ch
}

func (l *logWatch) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// await waits for ch, failing the test with the log after d (a bound on a
// hang, not an assertion about speed).
func await(t *testing.T, ch <-chan struct{}, d time.Duration, what string, logs ...*logWatch) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(d):
		var sb strings.Builder
		for _, l := range logs {
			sb.WriteString(l.String())
		}
		t.Fatalf("%s did not happen within %s; logs:\n%s", what, d, sb.String())
	}
}

// serverProc is a real `proxy-server serve` process.
type serverProc struct {
	proc *proctest.Server
	logs *logWatch
	once sync.Once
}

// startServer runs proxy-server on port with the database db, and env
// (NAME=value) over this environment, and waits until it listens.
func startServer(t *testing.T, port, db string, env ...string) *serverProc {
	t.Helper()
	serverBin, _ := binaries(t)
	s := &serverProc{logs: &logWatch{}}
	var err error
	s.proc, err = proctest.StartServer(proctest.ServerConfig{
		Binary: serverBin, Args: []string{"-port", port, "-db", db},
		Env: append(append(os.Environ(), "PROXY_WARM_POOL=0", "PROXY_HOST=127.0.0.1"), env...), Log: s.logs,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		s.stop(t)
		if t.Failed() {
			t.Logf("proxy-server (pid %d) log:\n%s", s.proc.PID, s.logs)
		}
	})
	if _, err := s.proc.WaitListening(context.Background(), 90*time.Second); err != nil {
		t.Fatalf("%v:\n%s", err, s.logs)
	}
	return s
}

// stop sends SIGTERM and waits for a graceful exit (SIGKILL as a last resort).
func (s *serverProc) stop(t *testing.T) {
	s.once.Do(func() {
		if s.proc.Stop(30 * time.Second) {
			t.Errorf("proxy-server did not stop within 30s of SIGTERM")
		}
	})
}

// bridgeProc is a real mcp-bridge process driven over stdio MCP.
type bridgeProc struct {
	c    *client.Client
	logs *logWatch
	once sync.Once
}

// startBridge launches mcp-bridge with env; it does not initialize yet.
func startBridge(t *testing.T, env ...string) *bridgeProc {
	t.Helper()
	_, bridgeBin := binaries(t)
	b := &bridgeProc{logs: &logWatch{}}
	tr := transport.NewStdioWithOptions(bridgeBin, append(env, "MCP_PROXY_LOG_LEVEL=debug"), nil, transport.WithCommandStderrWriter(b.logs))
	b.c = client.NewClient(tr, client.WithProtocolVersion(mcp.ProtocolVersion20251125))
	if err := b.c.Start(context.Background()); err != nil {
		t.Fatalf("starting mcp-bridge: %v", err)
	}
	t.Cleanup(func() {
		b.close()
		if t.Failed() {
			t.Logf("mcp-bridge log:\n%s", b.logs)
		}
	})
	return b
}

// close ends stdin; the bridge exits (the transport waits, then kills).
func (b *bridgeProc) close() { b.once.Do(func() { _ = b.c.Close() }) }

func (b *bridgeProc) initialize(t *testing.T, name string) {
	t.Helper()
	// The bridge answers once proxy-server does: a generous bound.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.ProtocolVersion20251125
	init.Params.ClientInfo = mcp.Implementation{Name: name, Version: "1"}
	if _, err := b.c.Initialize(ctx, init); err != nil {
		t.Fatalf("%s: initialize: %v\nbridge log:\n%s", name, err, b.logs)
	}
}

// navigated is what a navigation's answer says, and the session it went to.
type navigated struct {
	mcpserver.Parsed
	// SessionID is the bridge's default session as list_sessions names it
	// after the call (answers do not repeat it).
	SessionID string
}

// navigate calls browser_navigate on the bridge's default session.
func (b *bridgeProc) navigate(url string) (navigated, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	call := func(tool string, args map[string]any) (string, error) {
		req := mcp.CallToolRequest{}
		req.Params.Name = tool
		req.Params.Arguments = args
		res, err := b.c.CallTool(ctx, req)
		if err != nil {
			return "", err
		}
		var text strings.Builder
		for _, part := range res.Content {
			if tc, ok := part.(mcp.TextContent); ok {
				text.WriteString(tc.Text)
			}
		}
		if res.IsError {
			return "", fmt.Errorf("%s answered %s (isError)", tool, text.String())
		}
		return text.String(), nil
	}
	var out navigated
	text, err := call("browser_navigate", map[string]any{"url": url})
	if err != nil {
		return out, err
	}
	if out.Parsed, err = mcpserver.ParseAnswer(text); err != nil {
		return out, err
	}
	if text, err = call("list_sessions", nil); err != nil {
		return out, err
	}
	out.SessionID, err = e2etest.DefaultSession(text)
	return out, err
}

func (b *bridgeProc) mustNavigate(t *testing.T, url string) navigated {
	t.Helper()
	res, err := b.navigate(url)
	if err != nil {
		t.Fatalf("%v\nbridge log:\n%s", err, b.logs)
	}
	return res
}

const retrying = "proxy-server unreachable; retrying"

// TestBridgeStartedBeforeServer: the bridge waits for a server that comes
// up after it, then works.
func TestBridgeStartedBeforeServer(t *testing.T) {
	requireBrowser(t)
	pages := site(t)
	port := e2etest.FreePort(t)
	b := startBridge(t, "MCP_PROXY_URL=http://127.0.0.1:"+port, "MCP_PROXY_AUTOSTART=0", "MCP_PROXY_RETRY_TIMEOUT=5m")
	await(t, b.logs.seen(retrying, 1), 2*time.Minute, "the bridge noticing that no server runs", b.logs)

	startServer(t, port, filepath.Join(t.TempDir(), "proxy.db"))
	b.initialize(t, "early-bridge")
	res := b.mustNavigate(t, pages+"/")
	if res.PageTitle != "First page" || res.SessionID == "" {
		t.Errorf("navigate = %+v, want the first page in a session", res)
	}
}

// TestBridgeAcrossServerRestart: a call made while the server is down waits
// for the restarted server and lands in the same default session, restored.
func TestBridgeAcrossServerRestart(t *testing.T) {
	requireBrowser(t)
	pages := site(t)
	port, db := e2etest.FreePort(t), filepath.Join(t.TempDir(), "proxy.db")
	first := startServer(t, port, db)
	b := startBridge(t, "MCP_PROXY_URL=http://127.0.0.1:"+port, "MCP_PROXY_AUTOSTART=0", "MCP_PROXY_RETRY_TIMEOUT=5m")
	b.initialize(t, "restart-bridge")
	before := b.mustNavigate(t, pages+"/")

	first.stop(t)
	type result struct {
		res navigated
		err error
	}
	done := make(chan result, 1)
	go func() {
		res, err := b.navigate(pages + "/two")
		done <- result{res, err}
	}()
	// The call is waiting for a server before the new one starts.
	select {
	case <-b.logs.seen(retrying, 1):
	case r := <-done:
		t.Fatalf("the call while the server was down returned %+v, %v; want it to wait\nbridge log:\n%s", r.res, r.err, b.logs)
	case <-time.After(2 * time.Minute):
		t.Fatalf("the bridge did not report waiting for the server\nbridge log:\n%s", b.logs)
	}
	startServer(t, port, db)
	r := <-done
	if r.err != nil {
		t.Fatalf("call across the restart: %v\nbridge log:\n%s", r.err, b.logs)
	}
	if r.res.SessionID != before.SessionID {
		t.Errorf("session after restart = %s, want the same default session %s", r.res.SessionID, before.SessionID)
	}
	if r.res.PageTitle != "Second page" || !r.res.Restored {
		t.Errorf("call after restart = %+v, want the second page with restored=true", r.res)
	}
	// And the session goes on normally.
	if again := b.mustNavigate(t, pages+"/"); again.SessionID != before.SessionID || again.Restored {
		t.Errorf("next call = %+v, want the same session, not restored again", again)
	}
}

// TestAutostartStartsOneServer: two bridges launched together on a port
// where nothing runs start exactly one proxy-server, which outlives them.
func TestAutostartStartsOneServer(t *testing.T) {
	requireBrowser(t)
	pages := site(t)
	port, dataDir := e2etest.FreePort(t), t.TempDir()
	// Whatever happens, stop the server the bridges start (registered
	// first, so it runs after the bridges are closed).
	t.Cleanup(func() { stopAutostarted(t, dataDir) })
	env := []string{
		"MCP_PROXY_URL=http://127.0.0.1:" + port,
		"MCP_PROXY_AUTOSTART=1",
		"MCP_PROXY_RETRY_TIMEOUT=5m",
		"PROXY_DATABASE_PATH=" + filepath.Join(dataDir, "proxy.db"),
		"PROXY_WARM_POOL=0",
	}
	bridges := []*bridgeProc{startBridge(t, env...), startBridge(t, env...)}
	var wg sync.WaitGroup
	for i, b := range bridges {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			init := mcp.InitializeRequest{}
			init.Params.ProtocolVersion = mcp.ProtocolVersion20251125
			init.Params.ClientInfo = mcp.Implementation{Name: fmt.Sprintf("autostart-%d", i), Version: "1"}
			if _, err := b.c.Initialize(ctx, init); err != nil {
				t.Errorf("bridge %d: initialize: %v\nlog:\n%s", i, err, b.logs)
			}
		}()
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}

	servers := processesNamed(autostart.ServerName)
	if len(servers) != 1 {
		t.Fatalf("%d proxy-server processes run (%v), want exactly 1", len(servers), servers)
	}
	logText, err := os.ReadFile(filepath.Join(dataDir, autostart.LogFile))
	if err != nil {
		t.Fatalf("autostart log: %v", err)
	}
	if n := strings.Count(string(logText), "mcp-bridge (pid"); n != 1 {
		t.Errorf("the log records %d starts, want 1:\n%s", n, logText)
	}
	if pid := readPID(t, dataDir); pid != servers[0].PID {
		t.Errorf("pid file says %d, the running server is %v", pid, servers[0])
	}

	one, two := bridges[0].mustNavigate(t, pages+"/"), bridges[1].mustNavigate(t, pages+"/two")
	if one.PageTitle != "First page" || two.PageTitle != "Second page" || one.SessionID == two.SessionID {
		t.Errorf("bridges answered %+v and %+v; want each its page in its own session", one, two)
	}

	// The server is detached: it outlives the bridges that started it.
	for _, b := range bridges {
		b.close()
	}
	if p, ok := proctest.Stat(servers[0].PID); !ok || p.Comm != autostart.ServerName {
		t.Errorf("proxy-server %v did not outlive its bridges", servers[0])
	}
	stopAutostarted(t, dataDir)
}

// processesNamed lists this test's live descendants with that command name.
func processesNamed(name string) []proctest.Proc {
	var out []proctest.Proc
	for _, p := range proctest.Descendants(os.Getpid()) {
		if p.Comm == name {
			out = append(out, p)
		}
	}
	return out
}

func readPID(t *testing.T, dataDir string) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dataDir, autostart.PIDFile))
	if err != nil {
		return 0
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return pid
}

// stopAutostarted SIGTERMs the server of dataDir (and any other
// proxy-server this test started) and waits for it, reaping it when it has
// been re-parented to the test.
func stopAutostarted(t *testing.T, dataDir string) {
	pids := map[int]bool{}
	if pid := readPID(t, dataDir); pid > 0 {
		if p, ok := proctest.Stat(pid); ok && p.Comm == autostart.ServerName {
			pids[pid] = true
		}
	}
	for _, p := range processesNamed(autostart.ServerName) {
		pids[p.PID] = true
	}
	for pid := range pids {
		_ = syscall.Kill(pid, syscall.SIGTERM)
		deadline := time.Now().Add(30 * time.Second)
		for {
			var ws syscall.WaitStatus
			got, err := syscall.Wait4(pid, &ws, syscall.WNOHANG, nil)
			if got == pid || (errors.Is(err, syscall.ECHILD) && !proctest.Alive(pid)) {
				break
			}
			if time.Now().After(deadline) {
				t.Errorf("proxy-server %d did not stop within 30s of SIGTERM", pid)
				_ = syscall.Kill(-pid, syscall.SIGKILL)
				_ = syscall.Kill(pid, syscall.SIGKILL)
				_, _ = syscall.Wait4(pid, &ws, 0, nil)
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	if t.Failed() {
		if logText, err := os.ReadFile(filepath.Join(dataDir, autostart.LogFile)); err == nil {
			t.Logf("autostarted proxy-server log:\n%s", logText)
		}
	}
}
