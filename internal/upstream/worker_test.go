//go:build linux

package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/client/transport"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/clock/clocktest"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/proctest"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/worker"
)

// groupGone waits briefly for process group pgid to empty and returns what
// is left. Close returns once the leader is reaped, right after SIGKILLing
// the group; the other members die a moment later, so checking at once
// raced with the kernel (a SIGKILLed `sleep` was seen alive).
func groupGone(pgid int) []proctest.Proc {
	return proctest.WaitGone(2*time.Second, func() []proctest.Proc { return proctest.Group(pgid) })
}

// startFake starts a fake worker and makes sure it is gone after the test.
func startFake(t *testing.T, cfg WorkerConfig) *Worker {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	w, err := StartWorker(ctx, cfg)
	if err != nil {
		t.Fatalf("StartWorker: %v", err)
	}
	pgid := w.PID()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = w.Close(ctx)
		if left := groupGone(pgid); len(left) > 0 {
			t.Errorf("processes left in group %d: %+v", pgid, left)
		}
	})
	return w
}

func TestWorkerArgs(t *testing.T) {
	tests := []struct {
		name string
		cfg  WorkerConfig
		want []string
	}{
		{"shared browser", WorkerConfig{CDPEndpoint: "http://127.0.0.1:9222"},
			[]string{"--isolated", "--output-dir", "/o", "--file-paths", "absolute", "--cdp-endpoint", "http://127.0.0.1:9222", "--cdp-timeout", "120000", "--idle-timeout=0", "--caps=storage"}},
		{"caps are merged, other flags kept in order", WorkerConfig{CDPEndpoint: "http://c", ExtraArgs: []string{"--caps=network,pdf", "--timeout-settle", "100", "--caps", "storage,vision"}},
			[]string{"--isolated", "--output-dir", "/o", "--file-paths", "absolute", "--cdp-endpoint", "http://c", "--cdp-timeout", "120000", "--idle-timeout=0", "--caps=storage,network,pdf,vision", "--timeout-settle", "100"}},
		{"a user's cdp timeout wins", WorkerConfig{CDPEndpoint: "http://c", ExtraArgs: []string{"--cdp-timeout=5000"}},
			[]string{"--isolated", "--output-dir", "/o", "--file-paths", "absolute", "--cdp-endpoint", "http://c", "--idle-timeout=0", "--caps=storage", "--cdp-timeout=5000"}},
		{"own browser with explicit executable", WorkerConfig{ExtraArgs: []string{"--executable-path=/x/chrome", "--no-sandbox"}},
			[]string{"--isolated", "--output-dir", "/o", "--file-paths", "absolute", "--headless", "--idle-timeout=0", "--caps=storage", "--executable-path=/x/chrome", "--no-sandbox"}},
		// proxy-server refuses one in PROXY_PLAYWRIGHT_ARGS; at this level
		// the caller's own value stands, as every flag's does.
		{"an explicit idle timeout", WorkerConfig{ExtraArgs: []string{"--executable-path=/x/chrome", "--no-sandbox", "--idle-timeout", "1500"}},
			[]string{"--isolated", "--output-dir", "/o", "--file-paths", "absolute", "--headless", "--caps=storage", "--executable-path=/x/chrome", "--no-sandbox", "--idle-timeout", "1500"}},
		{"a firefox node", WorkerConfig{Remote: &RemoteBrowser{URL: "ws://ff:3000/pw"}, Browser: "firefox"},
			[]string{"--isolated", "--output-dir", "/o", "--file-paths", "absolute", "--idle-timeout=0", "--config", "/o.config.json", "--browser", "firefox", "--caps=storage"}},
		{"a webkit node", WorkerConfig{Remote: &RemoteBrowser{URL: "ws://wk:3000/pw"}, Browser: "webkit"},
			[]string{"--isolated", "--output-dir", "/o", "--file-paths", "absolute", "--idle-timeout=0", "--config", "/o.config.json", "--browser", "webkit", "--caps=storage"}},
		{"a chromium node needs no --browser", WorkerConfig{Remote: &RemoteBrowser{URL: "ws://cr:3000/pw"}, Browser: "chromium"},
			[]string{"--isolated", "--output-dir", "/o", "--file-paths", "absolute", "--idle-timeout=0", "--config", "/o.config.json", "--caps=storage"}},
		{"context options go in the configuration file", WorkerConfig{PlaywrightEndpoint: "ws://127.0.0.1:1/x", ContextOptions: json.RawMessage(`{"locale":"fr-FR"}`)},
			[]string{"--isolated", "--output-dir", "/o", "--file-paths", "absolute", "--endpoint", "ws://127.0.0.1:1/x", "--idle-timeout=0", "--config", "/o.config.json", "--caps=storage"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := workerArgs(tt.cfg, "/o")
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("args (-want +got):\n%s", diff)
			}
		})
	}
}

func TestWorkerFakeCalls(t *testing.T) {
	w := startFake(t, fakeWorkerConfig(t))
	ctx := t.Context()

	t.Run("tools keep raw schemas", func(t *testing.T) {
		var want struct {
			Tools []proxy.Tool `json:"tools"`
		}
		// The fake sends the file compacted, as a real worker sends one line.
		tools, err := os.ReadFile(filepath.Join("testdata", "tools.json"))
		if err != nil {
			t.Fatal(err)
		}
		var compact bytes.Buffer
		if err := json.Compact(&compact, tools); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(compact.Bytes(), &want); err != nil {
			t.Fatal(err)
		}
		got := w.Tools()
		if diff := cmp.Diff(want.Tools, got); diff != "" {
			t.Errorf("Tools (-want +got):\n%s", diff)
		}
		var sawAnyOf bool
		for _, tool := range got {
			if !bytes.Contains(tool.InputSchema, []byte(`"$schema"`)) {
				t.Errorf("%s lost $schema", tool.Name)
			}
			sawAnyOf = sawAnyOf || bytes.Contains(tool.InputSchema, []byte(`"anyOf"`)) || bytes.Contains(tool.InputSchema, []byte(`"oneOf"`))
		}
		if !sawAnyOf {
			t.Error("no tool kept its anyOf/oneOf")
		}
	})

	t.Run("result bytes exactly as sent, string ids", func(t *testing.T) {
		for _, args := range []string{`{"url":"http://x/"}`, ``, `null`} {
			got, err := w.CallTool(ctx, "echo", json.RawMessage(args))
			if err != nil {
				t.Fatal(err)
			}
			wantArgs := args
			if args == "" || args == "null" {
				wantArgs = "{}"
			}
			m := regexp.MustCompile(`^\{"content":\[\{"type":"text","text":"### Result\\n\\"(pwp-\d+)\\" (.*)"\}\],  "extra": 1.50 \}$`).FindStringSubmatch(string(got))
			if m == nil {
				t.Fatalf("result = %s", got)
			}
			var gotArgs string
			if err := json.Unmarshal([]byte(`"`+m[2]+`"`), &gotArgs); err != nil || gotArgs != wantArgs {
				t.Errorf("worker saw arguments %q, want %q", gotArgs, wantArgs)
			}
		}
	})

	t.Run("concurrent calls", func(t *testing.T) {
		var wg sync.WaitGroup
		for i := range 20 {
			wg.Go(func() {
				args := json.RawMessage(`{"i":` + strconv.Itoa(i) + `}`)
				got, err := w.CallTool(ctx, "echo", args)
				if err != nil {
					t.Error(err)
					return
				}
				if !strings.Contains(string(got), `{\"i\":`+strconv.Itoa(i)+`}`) {
					t.Errorf("call %d got %s", i, got)
				}
			})
		}
		wg.Wait()
	})

	t.Run("invalid arguments", func(t *testing.T) {
		if _, err := w.CallTool(ctx, "echo", json.RawMessage(`{`)); err == nil {
			t.Error("no error for invalid JSON")
		}
		if _, err := w.CallTool(ctx, "", nil); err == nil {
			t.Error("no error for empty name")
		}
	})

	t.Run("json-rpc error", func(t *testing.T) {
		_, err := w.CallTool(ctx, "fail", nil)
		var rpcErr *RPCError
		if !errors.As(err, &rpcErr) || rpcErr.Code != -32602 || rpcErr.Message != `Tool "fail" not found` {
			t.Fatalf("err = %v", err)
		}
		if errors.Is(err, worker.ErrWorkerExited) {
			t.Error("a JSON-RPC error is not an exit")
		}
	})

	t.Run("cancel sends notifications/cancelled", func(t *testing.T) {
		cctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		defer cancel()
		_, err := w.CallTool(cctx, "sleep", nil)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err = %v, want deadline exceeded", err)
		}
		if !eventually(3*time.Second, func() bool { return strings.Contains(w.Stderr(), `fake: cancelled "pwp-`) }) {
			t.Errorf("worker never saw notifications/cancelled; stderr:\n%s", w.Stderr())
		}
		if err := w.Ping(ctx); err != nil {
			t.Errorf("Ping after cancel: %v", err)
		}
	})

	t.Run("worker gets its flags", func(t *testing.T) {
		if !strings.Contains(w.Stderr(), "fake: args --isolated --output-dir "+w.OutputDir()+" --file-paths absolute --cdp-endpoint http://127.0.0.1:1 --cdp-timeout 120000 --idle-timeout=0 --caps=storage") {
			t.Errorf("stderr = %s", w.Stderr())
		}
	})
}

func TestWorkerFakeExitMidCall(t *testing.T) {
	w := startFake(t, fakeWorkerConfig(t))
	ctx := t.Context()
	if err := w.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	_, err := w.CallTool(ctx, "exit", nil)
	if !errors.Is(err, worker.ErrWorkerExited) || !errors.Is(err, transport.ErrTransportClosed) {
		t.Fatalf("err = %v, want worker.ErrWorkerExited wrapping transport closed", err)
	}
	if code := proxy.ErrorCode(err); code != proxy.EUNAVAILABLE {
		t.Errorf("ErrorCode = %s", code)
	}
	select {
	case <-w.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("Done not closed")
	}
	if w.ExitErr() == nil || !strings.Contains(w.ExitErr().Error(), "exit status 3") {
		t.Errorf("ExitErr = %v", w.ExitErr())
	}
	if err := w.Ping(ctx); !errors.Is(err, worker.ErrWorkerExited) {
		t.Errorf("Ping = %v", err)
	}
	if _, err := w.CallTool(ctx, "echo", nil); !errors.Is(err, worker.ErrWorkerExited) {
		t.Errorf("CallTool after exit = %v", err)
	}
}

func TestWorkerFakeLineLimit(t *testing.T) {
	cfg := fakeWorkerConfig(t)
	cfg.MaxLineBytes = 1 << 20
	w := startFake(t, cfg)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	_, err := w.CallTool(ctx, "huge", nil)
	if !errors.Is(err, worker.ErrWorkerExited) {
		t.Fatalf("err = %v, want worker.ErrWorkerExited", err)
	}
	select {
	case <-w.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("runaway worker not killed")
	}
}

func TestWorkerFakeClose(t *testing.T) {
	tests := []struct {
		name    string
		env     []string
		graces  int // stop steps the worker sits out, each waited out in full
		ctxWait time.Duration
		maxTook time.Duration
	}{
		{"exits on stdin EOF", nil, 0, 10 * time.Second, 1500 * time.Millisecond},
		{"ignores EOF, stops on SIGTERM", []string{"PWP_FAKE_HANG_ON_EOF=1"}, 1, 10 * time.Second, 3 * time.Second},
		{"ignores EOF and SIGTERM", []string{"PWP_FAKE_HANG_ON_EOF=1", "PWP_FAKE_IGNORE_TERM=1"}, 2, 10 * time.Second, 5500 * time.Millisecond},
		{"ctx ends the waits early", []string{"PWP_FAKE_HANG_ON_EOF=1", "PWP_FAKE_IGNORE_TERM=1"}, 0, 300 * time.Millisecond, 1500 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := clocktest.New()
			cfg := fakeWorkerConfig(t, append(tt.env, "PWP_FAKE_CHILD=1")...)
			cfg.Clock = clk
			w := startFake(t, cfg)
			pgid := w.PID()
			if !eventually(2*time.Second, func() bool { return strings.Contains(w.Stderr(), "fake: child ") }) {
				t.Fatalf("no child; stderr %s", w.Stderr())
			}
			if n := len(proctest.Group(pgid)); n < 2 {
				t.Fatalf("group %d has %d processes, want the worker and its child", pgid, n)
			}
			if err := os.WriteFile(w.OutputDir()+"/page-x.yml", []byte("x"), 0o600); err != nil {
				t.Fatal(err)
			}

			ctx, cancel := context.WithTimeout(context.Background(), tt.ctxWait)
			defer cancel()
			start := time.Now()
			var wg sync.WaitGroup
			errs := make([]error, 3)
			for i := range errs {
				wg.Go(func() { errs[i] = w.Close(ctx) })
			}
			for range tt.graces {
				clk.WaitForTimer(t, stopStepTimeout)
				clk.Advance(stopStepTimeout)
			}
			wg.Wait()
			// The time Close would have taken on the real clock.
			took := time.Since(start) + clk.Advanced()
			for _, err := range errs {
				if err != nil {
					t.Errorf("Close: %v", err)
				}
			}
			if took > tt.maxTook {
				t.Errorf("Close took %v, want ≤ %v", took, tt.maxTook)
			}
			if left := groupGone(pgid); len(left) > 0 {
				t.Errorf("left in group: %+v", left)
			}
			if _, err := os.Stat(w.OutputDir()); !os.IsNotExist(err) {
				t.Errorf("output dir still there: %v", err)
			}
			if err := w.Close(ctx); err != nil {
				t.Errorf("second Close: %v", err)
			}
			if _, err := w.CallTool(context.Background(), "echo", nil); !errors.Is(err, worker.ErrWorkerExited) {
				t.Errorf("CallTool after Close = %v", err)
			}
		})
	}
}

func TestWorkerFakeStartFailure(t *testing.T) {
	tests := []struct {
		name    string
		cfg     func(t *testing.T) WorkerConfig
		wantMsg string
	}{
		{"no command", func(t *testing.T) WorkerConfig { return WorkerConfig{OutputDir: t.TempDir()} }, "empty command"},
		{"no output dir", func(t *testing.T) WorkerConfig { return WorkerConfig{Command: []string{"true"}} }, "empty output dir"},
		{"missing binary", func(t *testing.T) WorkerConfig {
			return WorkerConfig{Command: []string{"/nonexistent/node"}, OutputDir: t.TempDir(), CDPEndpoint: "http://x"}
		}, "no such file"},
		{"output dir not empty", func(t *testing.T) WorkerConfig {
			dir := t.TempDir()
			if err := os.WriteFile(dir+"/precious", []byte("x"), 0o600); err != nil {
				t.Fatal(err)
			}
			return WorkerConfig{Command: []string{"true"}, OutputDir: dir, CDPEndpoint: "http://x"}
		}, "not empty"},
		{"exits at once", func(t *testing.T) WorkerConfig {
			return WorkerConfig{Command: []string{"sh", "-c", "echo 'Cannot find module cli.js' >&2; exit 1", "sh"}, OutputDir: t.TempDir() + "/o", CDPEndpoint: "http://x"}
		}, "Cannot find module"},
		{"dies during tools/list", func(t *testing.T) WorkerConfig {
			cfg := fakeWorkerConfig(t)
			cfg.Env = append(cfg.Env, "PWP_FAKE_TOOLS=/nonexistent")
			return cfg
		}, "fake: open /nonexistent"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := tt.cfg(t)
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			defer cancel()
			w, err := StartWorker(ctx, cfg)
			if err == nil {
				_ = w.Close(ctx)
				t.Fatal("StartWorker succeeded")
			}
			if !strings.Contains(err.Error(), tt.wantMsg) {
				t.Errorf("err = %v, want it to mention %q", err, tt.wantMsg)
			}
			if tt.wantMsg != "not empty" && cfg.OutputDir != "" {
				if entries, err := os.ReadDir(cfg.OutputDir); err == nil && len(entries) > 0 {
					t.Errorf("output dir left with %d entries", len(entries))
				}
			}
		})
	}
}

func TestWorkerFakeStartTimeout(t *testing.T) {
	// A worker that never answers initialize: the start ctx bounds the wait
	// and the process is cleaned up.
	cfg := fakeWorkerConfig(t, "PWP_FAKE_SILENT=1")
	pidFile := t.TempDir() + "/pid"
	cfg.Env = append(cfg.Env, "PWP_FAKE_PIDFILE="+pidFile)
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := StartWorker(ctx, cfg)
	if err == nil || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want deadline exceeded", err)
	}
	if took := time.Since(start); took > 4*time.Second {
		t.Errorf("took %v", took)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(string(b))
	if left := proctest.Group(pid); len(left) > 0 {
		t.Errorf("worker left running: %+v", left)
	}
	if _, err := os.Stat(cfg.OutputDir); !os.IsNotExist(err) {
		t.Errorf("output dir left: %v", err)
	}
}

func TestWorkerFakeNoGoroutineLeak(t *testing.T) {
	before := runtime.NumGoroutine()
	cfg := fakeWorkerConfig(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	w, err := StartWorker(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.CallTool(ctx, "echo", nil); err != nil {
		t.Fatal(err)
	}
	cctx, ccancel := context.WithTimeout(ctx, 50*time.Millisecond)
	_, _ = w.CallTool(cctx, "sleep", nil)
	ccancel()
	pending := make(chan error, 1)
	go func() { _, err := w.CallTool(ctx, "sleep", nil); pending <- err }()
	time.Sleep(50 * time.Millisecond)
	if err := w.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-pending; !errors.Is(err, worker.ErrWorkerExited) {
		t.Errorf("in-flight call at Close = %v, want worker.ErrWorkerExited", err)
	}
	if !eventually(3*time.Second, func() bool { return runtime.NumGoroutine() <= before }) {
		buf := make([]byte, 1<<20)
		t.Errorf("goroutines: %d before, %d after Close\n%s", before, runtime.NumGoroutine(), buf[:runtime.Stack(buf, true)])
	}
}
