package bridge

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/e2etest"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/wire"
)

func TestRetrySafe(t *testing.T) {
	dial := func(inner error) error {
		return &url.Error{Op: "Post", URL: "http://127.0.0.1:1/call", Err: &net.OpError{Op: "dial", Net: "tcp", Err: inner}}
	}
	read := func(inner error) error {
		return &url.Error{Op: "Post", URL: "http://127.0.0.1:1/call", Err: &net.OpError{Op: "read", Net: "tcp", Err: inner}}
	}
	sys := func(call string, errno syscall.Errno) error { return os.NewSyscallError(call, errno) }
	tests := []struct {
		name      string
		err       error
		connected bool
		want      bool
	}{
		{"refused dial", dial(sys("connect", syscall.ECONNREFUSED)), false, true},
		// The transport dialled again after a stale keep-alive connection:
		// a refusal still proves nothing was sent.
		{"refused after a reused connection", dial(sys("connect", syscall.ECONNREFUSED)), true, true},
		{"reset during dial", dial(sys("connect", syscall.ECONNRESET)), false, true},
		{"dial timeout", dial(errors.New("i/o timeout")), false, true},
		{"no such host", dial(&net.DNSError{Err: "no such host", Name: "proxy.invalid", IsNotFound: true}), false, true},
		{"reset before a connection, not a dial error", fmt.Errorf("tls: %w", syscall.ECONNRESET), false, true},
		{"aborted before a connection", fmt.Errorf("x: %w", syscall.ECONNABORTED), false, true},
		{"reset while waiting for the answer", read(sys("read", syscall.ECONNRESET)), true, false},
		{"EOF while waiting for the answer", &url.Error{Op: "Post", URL: "u", Err: io.EOF}, true, false},
		{"unexpected EOF", &url.Error{Op: "Post", URL: "u", Err: io.ErrUnexpectedEOF}, true, false},
		{"broken pipe on write", &net.OpError{Op: "write", Err: sys("write", syscall.EPIPE)}, true, false},
		{"timeout once connected", &url.Error{Op: "Post", URL: "u", Err: context.DeadlineExceeded}, true, false},
		{"cancelled during dial", dial(context.Canceled), false, false},
		{"cancelled", &url.Error{Op: "Post", URL: "u", Err: context.Canceled}, true, false},
		{"unknown error before a connection", errors.New("unsupported protocol scheme"), false, false},
		{"nil", nil, false, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := retrySafe(tc.err, tc.connected); got != tc.want {
				t.Errorf("retrySafe(%v, connected=%v) = %v, want %v", tc.err, tc.connected, got, tc.want)
			}
		})
	}
}

// TestRetrySafeOnRealErrors classifies the errors net/http really returns.
func TestRetrySafeOnRealErrors(t *testing.T) {
	port := e2etest.FreePort(t)
	c, err := NewClient("http://127.0.0.1:"+port, "", WithRetryTimeout(0))
	if err != nil {
		t.Fatal(err)
	}
	_, _, connected, err := c.send(context.Background(), http.MethodPost, "/call", []byte("{}"))
	if err == nil || connected || !retrySafe(err, connected) || !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("nothing listening: err=%v connected=%v; want a retryable ECONNREFUSED", err, connected)
	}

	hangUp := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		conn, _, _ := w.(http.Hijacker).Hijack()
		conn.Close()
	}))
	defer hangUp.Close()
	c2, _ := NewClient(hangUp.URL, "")
	_, _, connected, err = c2.send(context.Background(), http.MethodPost, "/call", []byte("{}"))
	if err == nil || !connected || retrySafe(err, connected) {
		t.Errorf("server hung up after reading the request: err=%v connected=%v; want a non-retryable error", err, connected)
	}
}

// logWatch is a slog handler target that reports when a message appears.
type logWatch struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	waits map[string]chan struct{}
}

func newLogWatch() *logWatch { return &logWatch{waits: map[string]chan struct{}{}} }

func (l *logWatch) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf.Write(p)
	for s, ch := range l.waits {
		if strings.Contains(l.buf.String(), s) {
			close(ch)
			delete(l.waits, s)
		}
	}
	return len(p), nil
}

// seen returns a channel closed once s has been logged.
func (l *logWatch) seen(s string) <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	ch := make(chan struct{})
	if strings.Contains(l.buf.String(), s) {
		close(ch)
	} else {
		l.waits[s] = ch
	}
	return ch
}

func (l *logWatch) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

func (l *logWatch) logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(l, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// fakeServer answers /health and /call like proxy-server, and counts calls.
type fakeServer struct {
	version  string
	calls    atomic.Int32
	bridgeVs sync.Map // X-Mcp-Bridge-Version values seen
}

func (f *fakeServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.bridgeVs.Store(r.Header.Get(wire.BridgeVersionHeader), true)
	w.Header().Set("Content-Type", "application/json")
	switch r.URL.Path {
	case "/health":
		json.NewEncoder(w).Encode(map[string]any{"status": "ok", "checks": map[string]string{}, "version": f.version})
	case "/call":
		f.calls.Add(1)
		json.NewEncoder(w).Encode(proxy.CallResult{RefID: "r1", SessionID: "s1", Status: proxy.StatusSuccess})
	default:
		http.NotFound(w, r)
	}
}

// serveOn starts h on 127.0.0.1:port.
func serveOn(t *testing.T, port string, h http.Handler) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:"+port)
	if err != nil {
		t.Fatalf("listening on the reserved port: %v", err)
	}
	srv := &http.Server{Handler: h}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
}

// TestCallWaitsForServer: the server comes up after the call was first
// refused; the call goes through once, and the bridge's version travels
// with it.
func TestCallWaitsForServer(t *testing.T) {
	port := e2etest.FreePort(t)
	logs := newLogWatch()
	c, err := NewClient("http://127.0.0.1:"+port, "", WithVersion("v-bridge"), WithLogger(logs.logger()), WithRetryTimeout(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	type result struct {
		res *proxy.CallResult
		err error
	}
	done := make(chan result, 1)
	go func() {
		res, err := c.Call(context.Background(), proxy.CallRequest{SessionID: "s1", Tool: "browser_click", Params: json.RawMessage(`{}`), Changes: true})
		done <- result{res, err}
	}()
	select {
	case <-logs.seen("proxy-server unreachable; retrying"):
	case r := <-done:
		t.Fatalf("call returned before any server listened: %+v %v", r.res, r.err)
	}
	fake := &fakeServer{version: "v-bridge"}
	serveOn(t, port, fake)
	r := <-done
	if r.err != nil || r.res.RefID != "r1" {
		t.Fatalf("call after the server came up = %+v, %v\nlogs:\n%s", r.res, r.err, logs)
	}
	if n := fake.calls.Load(); n != 1 {
		t.Errorf("server received %d calls, want exactly 1", n)
	}
	if _, ok := fake.bridgeVs.Load("v-bridge"); !ok {
		t.Errorf("the server never saw %s: v-bridge", wire.BridgeVersionHeader)
	}
}

// TestCallNeverReplayed: a server that takes the call and drops the
// connection without answering gets it once; the bridge reports
// UPSTREAM_UNAVAILABLE, retryable.
func TestCallNeverReplayed(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		_, _ = io.Copy(io.Discard, r.Body)
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			conn.Close()
		}
	}))
	defer srv.Close()
	c, err := NewClient(srv.URL, "", WithRetryTimeout(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Call(context.Background(), proxy.CallRequest{SessionID: "s1", Tool: "browser_click", Params: json.RawMessage(`{"target":"e1"}`), Changes: true})
	var pe *proxy.Error
	if !errors.As(err, &pe) || pe.Code != proxy.EUNAVAILABLE || !pe.Retryable {
		t.Fatalf("call on a dropped connection = %v, want a retryable %s", err, proxy.EUNAVAILABLE)
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("the server received the call %d times, want 1 (a call that may have run is never replayed)", n)
	}
}

// TestStarterRunsOncePerRequest: the starter brings the server up and the
// request goes through at once.
func TestStarterRunsOncePerRequest(t *testing.T) {
	port := e2etest.FreePort(t)
	fake := &fakeServer{version: "dev"}
	var started atomic.Int32
	starter := func(ctx context.Context) error {
		if started.Add(1) == 1 {
			serveOn(t, port, fake)
		}
		return nil
	}
	c, err := NewClient("http://127.0.0.1:"+port, "", WithStarter(starter), WithRetryTimeout(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Call(context.Background(), proxy.CallRequest{SessionID: "s1", Tool: "browser_navigate", Params: json.RawMessage(`{}`), Changes: true}); err != nil {
		t.Fatalf("call with a starter: %v", err)
	}
	if _, err := c.Call(context.Background(), proxy.CallRequest{SessionID: "s1", Tool: "browser_navigate", Params: json.RawMessage(`{}`), Changes: true}); err != nil {
		t.Fatalf("second call: %v", err)
	}
	if n := started.Load(); n != 1 {
		t.Errorf("starter ran %d times, want 1 (only while the server was unreachable)", n)
	}
	if n := fake.calls.Load(); n != 2 {
		t.Errorf("server received %d calls, want 2", n)
	}
}

// TestRetryIsBounded: the retry timeout and ctx both end the wait for a
// server that never comes.
func TestRetryIsBounded(t *testing.T) {
	port := e2etest.FreePort(t)
	t.Run("retry timeout", func(t *testing.T) {
		failing := func(context.Context) error { return errors.New("no proxy-server binary") }
		c, _ := NewClient("http://127.0.0.1:"+port, "", WithRetryTimeout(300*time.Millisecond), WithStarter(failing))
		_, err := c.Call(context.Background(), proxy.CallRequest{SessionID: "s1", Tool: "browser_click", Params: json.RawMessage(`{}`), Changes: true})
		var pe *proxy.Error
		if !errors.As(err, &pe) || pe.Code != proxy.EUNAVAILABLE || !pe.Retryable || !strings.Contains(pe.Message, ErrUnreachable.Error()) {
			t.Errorf("err = %v, want retryable %s saying the server is unreachable", err, proxy.EUNAVAILABLE)
		}
	})
	t.Run("ctx", func(t *testing.T) {
		logs := newLogWatch()
		c, _ := NewClient("http://127.0.0.1:"+port, "", WithRetryTimeout(time.Hour), WithLogger(logs.logger()))
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		done := make(chan error, 1)
		go func() {
			_, err := c.Call(ctx, proxy.CallRequest{SessionID: "s1", Tool: "browser_click", Params: json.RawMessage(`{}`), Changes: true})
			done <- err
		}()
		<-logs.seen("proxy-server unreachable; retrying")
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v, want context.Canceled", err)
		}
	})
}

func TestVersionMismatchWarns(t *testing.T) {
	tests := []struct {
		name, bridge, server string
		warn                 bool
	}{
		{"same", "v1.2.0", "v1.2.0", false},
		{"different", "v1.2.0", "v1.3.0", true},
		{"dev bridge, release server", "dev", "v1.3.0", true},
		{"server reports none", "v1.2.0", "", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(&fakeServer{version: tc.server})
			defer srv.Close()
			logs := newLogWatch()
			c, _ := NewClient(srv.URL, "", WithVersion(tc.bridge), WithLogger(logs.logger()))
			for range 2 { // warned once, not on every health check
				h, err := c.Health(context.Background())
				if err != nil || !h.OK() || h.Version != tc.server {
					t.Fatalf("Health = %+v, %v", h, err)
				}
			}
			got := strings.Count(logs.String(), "versions differ")
			if want := map[bool]int{true: 1, false: 0}[tc.warn]; got != want {
				t.Errorf("%d warnings, want %d:\n%s", got, want, logs)
			}
			if tc.warn && !strings.Contains(logs.String(), "bridge_version="+tc.bridge) {
				t.Errorf("warning does not name the bridge version:\n%s", logs)
			}
		})
	}
}

// TestHealthDegradedIsAnAnswer: 503 with a health body means a server is
// there; other errors keep their code.
func TestHealthDegradedIsAnAnswer(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprint(w, `{"status":"degraded","checks":{"browser":"error: gone"},"version":"dev"}`)
	}))
	defer srv.Close()
	c, _ := NewClient(srv.URL, "")
	h, err := c.Health(context.Background())
	if err != nil || h.OK() || h.Checks["browser"] != "error: gone" {
		t.Errorf("Health = %+v, %v; want a degraded answer", h, err)
	}
}

func TestConfigFromEnv(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		want    Config
		wantErr string
	}{
		{"defaults", map[string]string{"HOME": "/home/u"}, Config{URL: "http://127.0.0.1:34501", LogLevel: "warn", Autostart: true, RetryTimeout: 30 * time.Second, DatabasePath: "/home/u/.local/state/playwright-mcp-proxy/proxy.db"}, ""},
		{"database in XDG_STATE_HOME", map[string]string{"HOME": "/home/u", "XDG_STATE_HOME": "/s"}, Config{URL: "http://127.0.0.1:34501", LogLevel: "warn", Autostart: true, RetryTimeout: 30 * time.Second, DatabasePath: "/s/playwright-mcp-proxy/proxy.db"}, ""},
		{"set", map[string]string{"MCP_PROXY_URL": "http://127.0.0.1:9", "MCP_PROXY_TOKEN": "tk", "MCP_PROXY_AUTOSTART": "0", "MCP_PROXY_RETRY_TIMEOUT": "2m", "PROXY_DATABASE_PATH": "/d/p.db"},
			Config{URL: "http://127.0.0.1:9", Token: "tk", LogLevel: "warn", Autostart: false, RetryTimeout: 2 * time.Minute, DatabasePath: "/d/p.db"}, ""},
		{"no retry", map[string]string{"MCP_PROXY_RETRY_TIMEOUT": "0", "HOME": "/h"}, Config{URL: "http://127.0.0.1:34501", LogLevel: "warn", Autostart: true, DatabasePath: "/h/.local/state/playwright-mcp-proxy/proxy.db"}, ""},
		{"bad autostart", map[string]string{"MCP_PROXY_AUTOSTART": "maybe"}, Config{}, "MCP_PROXY_AUTOSTART"},
		{"bad timeout", map[string]string{"MCP_PROXY_RETRY_TIMEOUT": "soon"}, Config{}, "MCP_PROXY_RETRY_TIMEOUT"},
		{"negative timeout", map[string]string{"MCP_PROXY_RETRY_TIMEOUT": "-1s"}, Config{}, "MCP_PROXY_RETRY_TIMEOUT"},
		{"toolsets", map[string]string{"MCP_PROXY_TOOLSETS": " storage,extraction ", "HOME": "/h"},
			Config{URL: "http://127.0.0.1:34501", LogLevel: "warn", Autostart: true, RetryTimeout: 30 * time.Second, DatabasePath: "/h/.local/state/playwright-mcp-proxy/proxy.db", Toolsets: "storage,extraction"}, ""},
		{"unknown toolset", map[string]string{"MCP_PROXY_TOOLSETS": "storage,cookies"}, Config{}, `MCP_PROXY_TOOLSETS: unknown tool group "cookies" (groups: upstream, storage,`},
		{"profile", map[string]string{"MCP_PROXY_PROFILE": " github ", "HOME": "/h"},
			Config{URL: "http://127.0.0.1:34501", LogLevel: "warn", Autostart: true, RetryTimeout: 30 * time.Second, DatabasePath: "/h/.local/state/playwright-mcp-proxy/proxy.db", Profile: "github"}, ""},
		{"bad profile", map[string]string{"MCP_PROXY_PROFILE": "../github"}, Config{}, `MCP_PROXY_PROFILE "../github" is not a profile name`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ConfigFromEnv(func(k string) string { return tc.env[k] })
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Errorf("err = %v, want one naming %s", err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("ConfigFromEnv = %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}

// The client's choice of tool groups travels with every request, the ones
// of leaving too; without one, no header leaves the choice to the server.
func TestToolsetsTravelWithEveryRequest(t *testing.T) {
	for _, toolsets := range []string{"storage,extraction", ""} {
		t.Run(toolsets, func(t *testing.T) {
			var mu sync.Mutex
			seen := map[string][]string{}
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				seen[r.Method+" "+r.URL.Path] = r.Header.Values(wire.ToolsetsHeader)
				mu.Unlock()
				w.Header().Set("Content-Type", "application/json")
				switch r.URL.Path {
				case "/tools":
					fmt.Fprint(w, `{"tools":[]}`)
				case "/sessions":
					fmt.Fprint(w, `{"sessions":[]}`)
				default:
					json.NewEncoder(w).Encode(proxy.CallResult{RefID: "r1", SessionID: "s1", Status: proxy.StatusSuccess})
				}
			}))
			defer srv.Close()
			c, err := NewClient(srv.URL, "", WithToolsets(toolsets))
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			if _, err := c.Tools(ctx); err != nil {
				t.Fatal(err)
			}
			if err := c.Validate(ctx, "browser_localstorage_get", json.RawMessage(`{}`)); err != nil {
				t.Fatal(err)
			}
			if _, err := c.Call(ctx, proxy.CallRequest{SessionID: "s1", Tool: "browser_localstorage_get", Params: json.RawMessage(`{}`), Changes: true}); err != nil {
				t.Fatal(err)
			}
			if _, err := c.Once().ListSessions(ctx); err != nil {
				t.Fatal(err)
			}
			var want []string
			if toolsets != "" {
				want = []string{toolsets}
			}
			mu.Lock()
			defer mu.Unlock()
			for _, req := range []string{"GET /tools", "POST /call/validate", "POST /call", "GET /sessions"} {
				if diff := cmp.Diff(want, seen[req]); diff != "" {
					t.Errorf("%s %s (-want +got):\n%s", req, wire.ToolsetsHeader, diff)
				}
			}
		})
	}
}

// TestHealthNotProxyServer: an answer at the URL that is no proxy-server's
// /health is ErrNotProxyServer; a proxy-server refusing keeps its code. No
// wait changes either (Hopeless), unlike a server not reachable.
func TestHealthNotProxyServer(t *testing.T) {
	tests := []struct {
		name     string
		status   int
		body     string
		notProxy bool
	}{
		{"404", http.StatusNotFound, "404 page not found", true},
		{"html", http.StatusOK, "<!doctype html><title>dev server</title>", true},
		{"other json", http.StatusOK, `{"ok":true}`, true},
		{"empty 503", http.StatusServiceUnavailable, "", true},
		{"proxy-server refusing", http.StatusForbidden, `{"error":"ORIGIN_NOT_ALLOWED","message":"host not allowed"}`, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(tc.status)
				fmt.Fprint(w, tc.body)
			}))
			defer srv.Close()
			c, _ := NewClient(srv.URL, "", WithRetryTimeout(time.Minute))
			_, err := c.Health(context.Background())
			if errors.Is(err, ErrNotProxyServer) != tc.notProxy || !Hopeless(err) {
				t.Errorf("Health = %v; want ErrNotProxyServer %v and hopeless", err, tc.notProxy)
			}
		})
	}
	if Hopeless(&proxy.Error{Code: proxy.EUNAVAILABLE}) || Hopeless(context.DeadlineExceeded) {
		t.Error("an unreachable server or an ended wait is not hopeless")
	}
}

// TestStarterCannotStart: a starter saying no retry can help ends the
// request at once with its error.
func TestStarterCannotStart(t *testing.T) {
	port := e2etest.FreePort(t)
	logs := newLogWatch()
	cannot := func(context.Context) error { return fmt.Errorf("%w: data directory /x is read-only", ErrCannotStart) }
	c, _ := NewClient("http://127.0.0.1:"+port, "", WithRetryTimeout(time.Minute), WithStarter(cannot), WithLogger(logs.logger()))
	began := time.Now()
	_, err := c.Health(context.Background())
	if !errors.Is(err, ErrCannotStart) || !strings.Contains(err.Error(), "/x") || !Hopeless(err) {
		t.Errorf("Health = %v, want the starter's ErrCannotStart", err)
	}
	if took := time.Since(began); took > 10*time.Second {
		t.Errorf("Health took %s, want it to end at once, not wait out the retry timeout", took)
	}
}

// TestStarterQuietWhenItWorks: nothing running, a starter that brings a
// server up: the usual first request of a conversation, worth no warning.
func TestStarterQuietWhenItWorks(t *testing.T) {
	port := e2etest.FreePort(t)
	logs := newLogWatch()
	starter := func(context.Context) error { serveOn(t, port, &fakeServer{version: "dev"}); return nil }
	c, _ := NewClient("http://127.0.0.1:"+port, "", WithStarter(starter), WithLogger(logs.logger()))
	if _, err := c.Health(context.Background()); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(logs.String(), "level=WARN") {
		t.Errorf("a start that worked logged a warning:\n%s", logs)
	}
}

// TestContentSendsTheSearch: the bridge puts a search and its options in
// the query of GET /content as the HTTP API reads them, and brings back
// its no-match answer.
func TestContentSendsTheSearch(t *testing.T) {
	var got url.Values
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.URL.Query()
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(wire.ContentBody{RefID: "r1", NoMatch: got.Get("search_for") == "zz", Snapshot: true})
	}))
	defer srv.Close()
	c, err := NewClient(srv.URL, "")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		q     proxy.Query
		reset bool
		want  url.Values
	}{
		{"no search", proxy.Query{}, false, url.Values{"format": {"json"}}},
		{"options without a search are not sent", proxy.Query{Regex: true, CaseSensitive: true}, true, url.Values{"format": {"json"}, "reset_cursor": {"true"}}},
		{"text", proxy.Query{Text: "Product 7"}, false, url.Values{"format": {"json"}, "search_for": {"Product 7"}}},
		{"regex, case-sensitive", proxy.Query{Text: `^\s*- button`, Regex: true, CaseSensitive: true}, false,
			url.Values{"format": {"json"}, "search_for": {`^\s*- button`}, "regex": {"true"}, "case_sensitive": {"true"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := c.Content(context.Background(), "r1", tt.q, tt.reset); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("query (-want +got):\n%s", diff)
			}
		})
	}
	res, err := c.Content(context.Background(), "r1", proxy.Query{Text: "zz"}, false)
	if err != nil || !res.NoMatch || !res.Snapshot {
		t.Errorf("Content(no match) = %+v, %v; want NoMatch and Snapshot", res, err)
	}
}

// TestCallsReadsTheJSONExport: the bridge's Calls is the server's JSON
// export of the session, decoded back into the calls as recorded.
func TestCallsReadsTheJSONExport(t *testing.T) {
	want := []proxy.Call{{
		Request:  proxy.Request{RefID: "r1", SessionID: "s 1", ToolName: "browser_navigate", Params: json.RawMessage(`{"url":"http://127.0.0.1/"}`)},
		Response: &proxy.Response{RefID: "r1", Status: proxy.StatusSuccess, Result: `{"content":[]}`},
	}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.EscapedPath() != "/sessions/s%201/export" || r.URL.Query().Get("format") != "json" {
			http.Error(w, `{"error":"NOT_FOUND","message":"`+r.URL.String()+`"}`, http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		// The export's own fields beside each call are not the bridge's.
		fmt.Fprint(w, `{"session":{"session_id":"s 1"},"calls":[{"request":{"ref_id":"r1","session_id":"s 1","tool_name":"browser_navigate","params":{"url":"http://127.0.0.1/"},"timestamp":"0001-01-01T00:00:00Z"},"response":{"ref_id":"r1","status":"success","result":"{\"content\":[]}","timestamp":"0001-01-01T00:00:00Z"},"page_url":"http://127.0.0.1/","code":"await page.goto('http://127.0.0.1/');"}]}`)
	}))
	defer srv.Close()
	c, err := NewClient(srv.URL, "")
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.Calls(context.Background(), "s 1")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Calls (-want +got):\n%s", diff)
	}
}

// TestWithHTTPClient: the requests go through the given http.Client, with
// the bridge's headers, and its timeout bounds each of them.
func TestWithHTTPClient(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/sessions/slow" {
			<-release
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"session_id":"s1","state":"active"}`)
	}))
	defer srv.Close()
	defer close(release)
	var sent atomic.Int32
	hc := &http.Client{Timeout: 200 * time.Millisecond, Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		sent.Add(1)
		if r.Header.Get(wire.ClientIDHeader) == "" {
			t.Errorf("%s %s without %s", r.Method, r.URL.Path, wire.ClientIDHeader)
		}
		return http.DefaultTransport.RoundTrip(r)
	})}
	c, err := NewClient(srv.URL, "", WithHTTPClient(hc), WithRetryTimeout(0))
	if err != nil {
		t.Fatal(err)
	}
	if s, err := c.GetSession(context.Background(), "s1"); err != nil || s.ID != "s1" {
		t.Fatalf("GetSession = %+v, %v", s, err)
	}
	if n := sent.Load(); n != 1 {
		t.Errorf("the given client sent %d requests, want 1", n)
	}
	start := time.Now()
	_, err = c.GetSession(context.Background(), "slow")
	if proxy.ErrorCode(err) != proxy.EUNAVAILABLE || time.Since(start) > 5*time.Second {
		t.Errorf("a request past the client's timeout: %v after %s, want %s at once", err, time.Since(start), proxy.EUNAVAILABLE)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
