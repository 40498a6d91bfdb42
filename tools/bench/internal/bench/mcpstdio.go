package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/upstream"
)

type StdioConfig struct {
	Name, Command, Dir string
	Args               []string
	Env                map[string]string
}

// StdioServer is an MCP server with a connected mcp-go client, the same for
// every side so that the client-side cost is identical: a stdio child, or
// from StartHTTP a client of an endpoint (PID 0). Calls are serialised: the
// byte count is taken per call.
type StdioServer struct {
	Name           string
	PID            int
	Tools          []mcp.Tool
	ToolsListBytes int

	cfg        StdioConfig
	log        *slog.Logger
	client     *client.Client
	lastResult *atomic.Int64
	stderr     *tailWriter
	cmd        atomic.Pointer[exec.Cmd]
	callMu     sync.Mutex
	stopOnce   sync.Once
	stopReport StdioStopReport
}

// countingStdio and countingHTTP count the size of the last JSON-RPC result
// as it came off the wire, before any decoding. Not one type embedding
// transport.Interface: mcp-go's client looks for optional methods on the
// concrete transport that an embedded interface would hide.
type countingStdio struct {
	*transport.Stdio
	last atomic.Int64
}

func (t *countingStdio) SendRequest(ctx context.Context, req transport.JSONRPCRequest) (*transport.JSONRPCResponse, error) {
	return counted(&t.last)(t.Stdio.SendRequest(ctx, req))
}

type countingHTTP struct {
	*transport.StreamableHTTP
	last atomic.Int64
}

func (t *countingHTTP) SendRequest(ctx context.Context, req transport.JSONRPCRequest) (*transport.JSONRPCResponse, error) {
	return counted(&t.last)(t.StreamableHTTP.SendRequest(ctx, req))
}

func counted(last *atomic.Int64) func(*transport.JSONRPCResponse, error) (*transport.JSONRPCResponse, error) {
	return func(resp *transport.JSONRPCResponse, err error) (*transport.JSONRPCResponse, error) {
		if resp != nil {
			last.Store(int64(len(resp.Result)))
		}
		return resp, err
	}
}

type tailWriter struct {
	mu  sync.Mutex
	buf []byte
	max int
}

func newTailWriter(max int) *tailWriter { return &tailWriter{max: max} }

func (w *tailWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.buf = append(w.buf, p...); len(w.buf) > w.max {
		w.buf = append(w.buf[:0], w.buf[len(w.buf)-w.max:]...)
	}
	return len(p), nil
}

func (w *tailWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return string(w.buf)
}

// StartStdio starts cfg's command in its own process group (so Ctrl-C in
// the terminal reaches only the benchmark, which then stops it, and so
// stopping it reaches everything it started), connects, initializes and
// lists the tools. On error the child is already stopped.
func StartStdio(ctx context.Context, log *slog.Logger, cfg StdioConfig) (_ *StdioServer, err error) {
	s := &StdioServer{Name: cfg.Name, cfg: cfg, log: log.With("side", cfg.Name), stderr: newTailWriter(16 << 10)}
	env := childEnv(os.Environ(), cfg.Env)
	tr := &countingStdio{Stdio: transport.NewStdioWithOptions(cfg.Command, nil, cfg.Args,
		transport.WithCommandFunc(func(_ context.Context, command string, _ []string, args []string) (*exec.Cmd, error) {
			// Not CommandContext: a cancelled ctx must not SIGKILL the
			// leader alone and orphan its browser; Stop ends the group.
			cmd := exec.Command(command, args...)
			cmd.Env, cmd.Dir, cmd.SysProcAttr = env, cfg.Dir, KilledWithParent()
			cmd.SysProcAttr.Setpgid = true
			s.cmd.Store(cmd)
			return cmd, nil
		}),
		transport.WithCommandStderrWriter(s.stderr), transport.WithCommandLogger(s.log))}
	defer func() {
		if err != nil {
			rep := s.Stop(context.WithoutCancel(ctx))
			lines := strings.Split(strings.TrimRight(s.stderr.String(), "\n"), "\n")
			err = fmt.Errorf("%w; stderr: %s (%s)", err, strings.Join(lines[max(0, len(lines)-10):], " | "), rep.Summary())
		}
	}()
	return s, s.connect(ctx, tr, &tr.last)
}

func StartHTTP(ctx context.Context, log *slog.Logger, name, endpoint, token string) (_ *StdioServer, err error) {
	if err := checkURL(endpoint); err != nil {
		return nil, err
	}
	var opts []transport.StreamableHTTPCOption
	if token != "" {
		// On the client, not as the transport's headers: mcp-go sends those
		// with requests but not with the DELETE that ends the session.
		opts = append(opts, transport.WithHTTPBasicClient(&http.Client{Transport: bearer(token)}))
	}
	st, err := transport.NewStreamableHTTP(endpoint, opts...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	s := &StdioServer{Name: name, cfg: StdioConfig{Name: name, Command: endpoint}, log: log.With("side", name)}
	tr := &countingHTTP{StreamableHTTP: st}
	if err := s.connect(ctx, tr, &tr.last); err != nil {
		s.Stop(context.WithoutCancel(ctx))
		return nil, err
	}
	return s, nil
}

type bearer string

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+string(b))
	return http.DefaultTransport.RoundTrip(r)
}

// connect pins protocol 2025-11-25, as proxy-server's own client of its
// workers does: unpinned, mcp-go negotiates a newer version first, where
// ping is a no-op.
func (s *StdioServer) connect(ctx context.Context, tr transport.Interface, last *atomic.Int64) error {
	s.lastResult = last
	s.client = client.NewClient(tr, client.WithProtocolVersion(mcp.ProtocolVersion20251125))
	// The transport keeps the Start ctx for the child's whole life.
	if err := s.client.Start(context.WithoutCancel(ctx)); err != nil {
		return fmt.Errorf("%s: starting %s: %w", s.Name, s.cfg.Command, err)
	}
	if cmd := s.cmd.Load(); cmd != nil && cmd.Process != nil {
		s.PID = cmd.Process.Pid
	}
	sctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	initReq := mcp.InitializeRequest{}
	initReq.Params.ProtocolVersion = mcp.ProtocolVersion20251125
	initReq.Params.ClientInfo = mcp.Implementation{Name: "playwright-mcp-proxy-bench", Version: "1"}
	if _, err := s.client.Initialize(sctx, initReq); err != nil {
		return fmt.Errorf("%s: initialize: %w", s.Name, err)
	}
	tools, err := s.client.ListTools(sctx, mcp.ListToolsRequest{})
	if err != nil {
		return fmt.Errorf("%s: tools/list: %w", s.Name, err)
	}
	s.Tools, s.ToolsListBytes = tools.Tools, int(s.lastResult.Load())
	return nil
}

func childEnv(env []string, over map[string]string) []string {
	out := slices.DeleteFunc(slices.Clone(env), func(kv string) bool {
		k, _, _ := strings.Cut(kv, "=")
		_, ok := over[k]
		return ok
	})
	for _, k := range slices.Sorted(maps.Keys(over)) {
		out = append(out, k+"="+over[k])
	}
	return out
}

type ToolCall struct {
	Result *mcp.CallToolResult
	Bytes  int
	Took   time.Duration
}

func (c ToolCall) Text() string {
	var b strings.Builder
	if c.Result != nil {
		for _, ct := range c.Result.Content {
			if t, ok := ct.(mcp.TextContent); ok {
				b.WriteString(t.Text)
			}
		}
	}
	return b.String()
}

type ToolResultError struct{ Side, Tool, Text string }

func (e *ToolResultError) Error() string {
	return fmt.Sprintf("%s %s: isError: %s", e.Side, e.Tool, truncate(e.Text, 300))
}

// Call returns the call also with an error: an isError result's bytes
// still count.
func (s *StdioServer) Call(ctx context.Context, tool string, args map[string]any) (ToolCall, error) {
	s.callMu.Lock()
	defer s.callMu.Unlock()
	req := mcp.CallToolRequest{}
	req.Params.Name, req.Params.Arguments = tool, args
	s.lastResult.Store(0)
	t0 := time.Now()
	res, err := s.client.CallTool(ctx, req)
	c := ToolCall{Result: res, Took: time.Since(t0), Bytes: int(s.lastResult.Load())}
	if err != nil {
		return c, fmt.Errorf("%s %s: %w", s.Name, tool, err)
	}
	if res.IsError {
		return c, &ToolResultError{Side: s.Name, Tool: tool, Text: c.Text()}
	}
	return c, nil
}

func (s *StdioServer) HasTool(name string) bool {
	return slices.ContainsFunc(s.Tools, func(t mcp.Tool) bool { return t.Name == name })
}

func (s *StdioServer) CommandLine() string {
	return strings.Join(append([]string{s.cfg.Command}, s.cfg.Args...), " ")
}

type StdioStopReport struct {
	Name     string   `json:"name"`
	PID      int      `json:"pid"`
	TookMS   float64  `json:"took_ms"`
	Exit     string   `json:"exit"`
	Procs    int      `json:"processes_at_stop"`
	Leftover []string `json:"leftover"`
}

func (r StdioStopReport) Clean() bool { return len(r.Leftover) == 0 }

func (r StdioStopReport) Summary() string {
	s := fmt.Sprintf("%s (pid %d) stopped in %.0f ms (exit: %s), %d processes in its tree; ", r.Name, r.PID, r.TookMS, r.Exit, r.Procs)
	if r.Clean() {
		return s + "none left running"
	}
	return s + "LEFT RUNNING (then killed by pid): " + strings.Join(r.Leftover, " ")
}

// Stop closes stdin (the MCP way to end a stdio server; @playwright/mcp
// then closes its browser), lets the transport escalate to SIGTERM and
// SIGKILL of the leader, then kills whatever of the child's process tree
// is still alive. Call it before the proxy-server's Stop, whose orphan
// reaping waits for any child of this process.
func (s *StdioServer) Stop(ctx context.Context) StdioStopReport {
	s.stopOnce.Do(func() { s.stopReport = s.stop(ctx) })
	return s.stopReport
}

func (s *StdioServer) stop(ctx context.Context) StdioStopReport {
	if cmd := s.cmd.Load(); s.PID == 0 && cmd != nil && cmd.Process != nil {
		s.PID = cmd.Process.Pid
	}
	rep := StdioStopReport{Name: s.Name, PID: s.PID, Exit: "0"}
	var tree []Proc
	if s.PID > 0 {
		tree = processTree(s.PID)
	}
	rep.Procs = len(tree)
	anyAlive := func() bool { return slices.ContainsFunc(tree, alive) }
	start := time.Now()
	if s.client != nil {
		if err := s.client.Close(); err != nil {
			rep.Exit = err.Error()
		}
	}
	// The leader is reaped now; while any member of its group lives the
	// group id cannot be reused, so signalling it is safe.
	if s.PID > 0 && anyAlive() {
		_ = syscall.Kill(-s.PID, syscall.SIGKILL)
	}
	for deadline := time.Now().Add(5 * time.Second); anyAlive() && time.Now().Before(deadline) && ctx.Err() == nil; {
		time.Sleep(50 * time.Millisecond)
	}
	for _, p := range tree {
		if alive(p) {
			p.Comm = procKind(p)
			rep.Leftover = append(rep.Leftover, procName(p))
			_ = syscall.Kill(p.PID, syscall.SIGKILL)
		}
	}
	rep.TookMS = ms(time.Since(start))
	if s.cfg.Dir != "" {
		if err := os.RemoveAll(s.cfg.Dir); err != nil {
			s.log.Warn("removing a temp dir", "dir", s.cfg.Dir, "err", err)
		}
	}
	return rep
}

type PlainConfig struct {
	Root, Endpoint string
	SettleMS       int
	Relay          []string
}

func plainArgs(browser, outputDir, configPath string, settleMS int, root bool) []string {
	args := []string{"--headless", "--isolated", "--executable-path", browser,
		"--output-dir", outputDir, "--file-paths", "absolute", "--config", configPath}
	args = append(args, settleArg(settleMS)...)
	if root {
		args = append(args, "--no-sandbox")
	}
	return args
}

func endpointArgs(endpoint, outputDir string, settleMS int) []string {
	return append([]string{"--isolated", "--endpoint", endpoint, "--output-dir", outputDir, "--file-paths", "absolute"}, settleArg(settleMS)...)
}

func settleArg(ms int) []string {
	if ms < 0 {
		return nil
	}
	return []string{fmt.Sprintf("--timeout-settle=%d", ms)}
}

func StartPlain(ctx context.Context, log *slog.Logger, cfg PlainConfig) (_ *StdioServer, err error) {
	browser := os.Getenv("PROXY_BROWSER_EXECUTABLE")
	if browser == "" {
		if browser, err = upstream.FindBrowser(); err != nil {
			return nil, err
		}
	}
	dir, err := os.MkdirTemp("", "pwproxy-bench-plain-*")
	if err != nil {
		return nil, fmt.Errorf("plain upstream temp dir: %w", err)
	}
	preload, confPath, out := filepath.Join(dir, "keep-group.js"), filepath.Join(dir, "config.json"), filepath.Join(dir, "output")
	// Chromium flags go through the config file: the CLI has no flag for
	// launch arguments, and the config's launchOptions merge with the CLI's.
	conf, _ := json.Marshal(map[string]any{"browser": map[string]any{"launchOptions": map[string]any{"args": upstream.ChromiumFlags()}}})
	if err := errors.Join(os.WriteFile(preload, upstream.KeepGroupJS(), 0o600), os.WriteFile(confPath, conf, 0o600), os.Mkdir(out, 0o700)); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("plain upstream: %w", err)
	}
	nodeOpts := strings.TrimSpace(os.Getenv("NODE_OPTIONS") + fmt.Sprintf(" --require=%q", preload))
	args, name := plainArgs(browser, out, confPath, cfg.SettleMS, os.Geteuid() == 0), "plain"
	if cfg.Endpoint != "" {
		args, name = endpointArgs(cfg.Endpoint, out, cfg.SettleMS), "plain via browser server"
	}
	args = slices.Concat(cfg.Relay, upstream.DefaultCommand(cfg.Root), args)
	if len(cfg.Relay) > 0 {
		name += " behind relays"
	}
	// TMPDIR=dir: what Playwright and Chromium leave in TMPDIR when stopped
	// hard (sockets, a profile) goes with dir at Stop, as the proxy's does
	// with its host's directory.
	return StartStdio(ctx, log, StdioConfig{Name: name, Command: args[0], Args: args[1:],
		Env: map[string]string{"NODE_OPTIONS": nodeOpts, "TMPDIR": dir}, Dir: dir})
}

func StartBridge(ctx context.Context, log *slog.Logger, bridge, proxyURL string) (*StdioServer, error) {
	if err := checkURL(proxyURL); err != nil {
		return nil, err
	}
	if _, err := os.Stat(bridge); err != nil {
		return nil, fmt.Errorf("%s: %w (run `make build` first)", bridge, err)
	}
	env := map[string]string{"MCP_PROXY_URL": proxyURL, "MCP_PROXY_AUTOSTART": "0"}
	if tok := os.Getenv("PROXY_AUTH_TOKEN"); tok != "" {
		env["MCP_PROXY_TOKEN"] = tok
	}
	return StartStdio(ctx, log, StdioConfig{Name: "proxy", Command: bridge, Env: env})
}
