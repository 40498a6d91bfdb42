package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
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

// The overhead and bytes scenarios talk MCP over stdio to two servers with
// the same mcp-go client, so that the client-side cost is identical: a plain
// @playwright/mcp process, and mcp-bridge in front of the benchmark's
// proxy-server. This file starts, calls and stops such children.

// StdioConfig says how to start one stdio MCP server as a child process:
// Name labels it in progress lines and reports ("plain", "proxy"), Env
// overrides the inherited environment, StartTimeout bounds start,
// initialize and tools/list (default 60 s), and Stop removes the
// RemoveOnStop directories once the child is gone.
type StdioConfig struct {
	Name, Command string
	Args          []string
	Env           map[string]string
	Dir           string
	StartTimeout  time.Duration
	RemoveOnStop  []string
}

// StdioServer is a running stdio MCP server child with a connected mcp-go
// client (or, from StartHTTP, a client of a Streamable HTTP endpoint that
// the benchmark did not start: no child, PID 0). Calls are serialised: the
// byte count is taken per call.
type StdioServer struct {
	Name string
	PID  int
	// Tools is what tools/list answered at start; ToolsListBytes the size
	// of that result as received: what a client hands the model on every
	// turn.
	Tools          []mcp.Tool
	ToolsListBytes int

	cfg    StdioConfig
	log    *slog.Logger
	client *client.Client
	// lastResult is the counting transport's size of the last result.
	lastResult *atomic.Int64
	stderr     *tailWriter
	cmd        atomic.Pointer[exec.Cmd]

	callMu     sync.Mutex
	stopOnce   sync.Once
	stopReport StdioStopReport
}

// countingTransport is the stdio transport, plus the size of the last
// JSON-RPC result exactly as it came off the wire: what the client (and so
// the model) receives, before any decoding. countingHTTP is the same for
// Streamable HTTP: not one type embedding transport.Interface for both, as
// mcp-go's client looks for optional methods on the concrete transport
// (HTTPConnection, a connection-lost setter) that an embedded interface
// would hide.
type countingTransport struct {
	*transport.Stdio
	lastResult atomic.Int64
}

func (t *countingTransport) SendRequest(ctx context.Context, req transport.JSONRPCRequest) (*transport.JSONRPCResponse, error) {
	return counted(&t.lastResult)(t.Stdio.SendRequest(ctx, req))
}

type countingHTTP struct {
	*transport.StreamableHTTP
	lastResult atomic.Int64
}

func (t *countingHTTP) SendRequest(ctx context.Context, req transport.JSONRPCRequest) (*transport.JSONRPCResponse, error) {
	return counted(&t.lastResult)(t.StreamableHTTP.SendRequest(ctx, req))
}

func counted(last *atomic.Int64) func(*transport.JSONRPCResponse, error) (*transport.JSONRPCResponse, error) {
	return func(resp *transport.JSONRPCResponse, err error) (*transport.JSONRPCResponse, error) {
		if resp != nil {
			last.Store(int64(len(resp.Result)))
		}
		return resp, err
	}
}

// tailWriter keeps the last max bytes written (a child's stderr, for error
// messages) so that a chatty child cannot grow the benchmark's memory.
type tailWriter struct {
	mu  sync.Mutex
	buf []byte
	max int
}

func newTailWriter(max int) *tailWriter { return &tailWriter{max: max} }

func (w *tailWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	if over := len(w.buf) - w.max; over > 0 {
		w.buf = append(w.buf[:0], w.buf[over:]...)
	}
	return len(p), nil
}

func (w *tailWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return string(w.buf)
}

// StartStdio starts cfg's command in its own process group (so Ctrl-C in the
// terminal reaches only the benchmark, which then stops it, and so stopping
// it reaches everything it started), connects an mcp-go client pinned to
// protocol 2025-11-25 (as proxy-server's own client of its workers is:
// unpinned, mcp-go negotiates a newer version first, where ping is a no-op),
// initializes and lists the tools. On error the child is already stopped.
func StartStdio(ctx context.Context, log *slog.Logger, cfg StdioConfig) (_ *StdioServer, err error) {
	if cfg.StartTimeout <= 0 {
		cfg.StartTimeout = 60 * time.Second
	}
	s := &StdioServer{Name: cfg.Name, cfg: cfg, log: log.With("side", cfg.Name), stderr: newTailWriter(16 << 10)}
	env := childEnv(os.Environ(), cfg.Env)
	st := transport.NewStdioWithOptions(cfg.Command, nil, cfg.Args,
		transport.WithCommandFunc(func(_ context.Context, command string, _ []string, args []string) (*exec.Cmd, error) {
			// exec.Command, not CommandContext: a cancelled ctx must not
			// SIGKILL the leader alone and orphan its browser; Stop ends
			// the whole group.
			cmd := exec.Command(command, args...)
			cmd.Env, cmd.Dir = env, cfg.Dir
			cmd.SysProcAttr = KilledWithParent()
			cmd.SysProcAttr.Setpgid = true
			s.cmd.Store(cmd)
			return cmd, nil
		}),
		transport.WithCommandStderrWriter(s.stderr),
		transport.WithCommandLogger(s.log),
	)
	tr := &countingTransport{Stdio: st}
	s.lastResult = &tr.lastResult
	s.client = client.NewClient(tr, client.WithProtocolVersion(mcp.ProtocolVersion20251125))
	// The transport keeps the Start ctx for the child's whole life: not a
	// request ctx.
	if err := s.client.Start(context.WithoutCancel(ctx)); err != nil {
		s.Stop(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("%s: starting %s: %w", cfg.Name, cfg.Command, err)
	}
	if cmd := s.cmd.Load(); cmd != nil && cmd.Process != nil {
		s.PID = cmd.Process.Pid
	}
	defer func() {
		if err != nil {
			rep := s.Stop(context.WithoutCancel(ctx))
			if tail := lastLines(s.stderr.String(), 10); tail != "" {
				err = fmt.Errorf("%w; stderr: %s", err, tail)
			}
			err = fmt.Errorf("%w (%s)", err, rep.Summary())
		}
	}()
	if err := s.initialize(ctx); err != nil {
		return nil, err
	}
	s.log.Info("stdio MCP server started", "pid", s.PID, "tools", len(s.Tools))
	return s, nil
}

// StartHTTP connects the same kind of client to a Streamable HTTP MCP
// endpoint, such as proxy-server's /mcp, sending token as a bearer token
// when it is not empty. Stop ends the MCP session; there is no child.
func StartHTTP(ctx context.Context, log *slog.Logger, name, endpoint, token string) (*StdioServer, error) {
	if err := checkURL(endpoint); err != nil {
		return nil, err
	}
	var opts []transport.StreamableHTTPCOption
	if token != "" {
		// On the client, not as the transport's headers: mcp-go sends those
		// with requests but not with the DELETE that ends the session.
		opts = append(opts, transport.WithHTTPBasicClient(&http.Client{Transport: bearer{token: token, next: http.DefaultTransport}}))
	}
	st, err := transport.NewStreamableHTTP(endpoint, opts...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	s := &StdioServer{Name: name, cfg: StdioConfig{Name: name, Command: endpoint, StartTimeout: 60 * time.Second},
		log: log.With("side", name)}
	tr := &countingHTTP{StreamableHTTP: st}
	s.lastResult = &tr.lastResult
	s.client = client.NewClient(tr, client.WithProtocolVersion(mcp.ProtocolVersion20251125))
	if err := s.client.Start(context.WithoutCancel(ctx)); err != nil {
		return nil, fmt.Errorf("%s: connecting to %s: %w", name, endpoint, err)
	}
	if err := s.initialize(ctx); err != nil {
		s.Stop(context.WithoutCancel(ctx))
		return nil, err
	}
	s.log.Info("HTTP MCP client connected", "endpoint", endpoint, "tools", len(s.Tools))
	return s, nil
}

// bearer adds a bearer token to every request.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// initialize runs the MCP handshake and lists the tools.
func (s *StdioServer) initialize(ctx context.Context) error {
	cfg := s.cfg
	sctx, cancel := context.WithTimeout(ctx, cfg.StartTimeout)
	defer cancel()
	initReq := mcp.InitializeRequest{}
	initReq.Params.ProtocolVersion = mcp.ProtocolVersion20251125
	initReq.Params.ClientInfo = mcp.Implementation{Name: "playwright-mcp-proxy-bench", Version: "1"}
	if _, err := s.client.Initialize(sctx, initReq); err != nil {
		return fmt.Errorf("%s: initialize: %w", cfg.Name, err)
	}
	tools, err := s.client.ListTools(sctx, mcp.ListToolsRequest{})
	if err != nil {
		return fmt.Errorf("%s: tools/list: %w", cfg.Name, err)
	}
	s.Tools = tools.Tools
	s.ToolsListBytes = int(s.lastResult.Load())
	return nil
}

// childEnv is env with over applied (sorted, so runs are reproducible).
func childEnv(env []string, over map[string]string) []string {
	out := make([]string, 0, len(env)+len(over))
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if _, ok := over[k]; !ok {
			out = append(out, kv)
		}
	}
	keys := make([]string, 0, len(over))
	for k := range over {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		out = append(out, k+"="+over[k])
	}
	return out
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}

// ToolCall is one tools/call as the client saw it.
type ToolCall struct {
	Tool   string
	Result *mcp.CallToolResult
	// Bytes is the size of the JSON-RPC result (content, isError, …) as
	// received: what the model is given.
	Bytes int
	// Start is when the request was handed to the client; Took is until
	// the decoded result was back.
	Start time.Time
	Took  time.Duration
}

// Text is the concatenated text content of the result.
func (c ToolCall) Text() string {
	if c.Result == nil {
		return ""
	}
	var b strings.Builder
	for _, ct := range c.Result.Content {
		if t, ok := ct.(mcp.TextContent); ok {
			b.WriteString(t.Text)
		}
	}
	return b.String()
}

// ToolResultError is a call that ran but answered isError.
type ToolResultError struct {
	Side, Tool, Text string
}

func (e *ToolResultError) Error() string {
	t := e.Text
	if len(t) > 300 {
		t = t[:300] + "…"
	}
	return fmt.Sprintf("%s %s: isError: %s", e.Side, e.Tool, t)
}

// Call calls tool with args and times it; an isError result comes back with
// a *ToolResultError (and the call, whose bytes still count).
func (s *StdioServer) Call(ctx context.Context, tool string, args map[string]any) (ToolCall, error) {
	s.callMu.Lock()
	defer s.callMu.Unlock()
	req := mcp.CallToolRequest{}
	req.Params.Name = tool
	req.Params.Arguments = args
	s.lastResult.Store(0)
	t0 := time.Now()
	res, err := s.client.CallTool(ctx, req)
	c := ToolCall{Tool: tool, Result: res, Start: t0, Took: time.Since(t0), Bytes: int(s.lastResult.Load())}
	if err != nil {
		return c, fmt.Errorf("%s %s: %w", s.Name, tool, err)
	}
	if res.IsError {
		return c, &ToolResultError{Side: s.Name, Tool: tool, Text: c.Text()}
	}
	return c, nil
}

// HasTool reports whether tools/list offered name.
func (s *StdioServer) HasTool(name string) bool {
	_, ok := s.tool(name)
	return ok
}

func (s *StdioServer) tool(name string) (mcp.Tool, bool) {
	for _, t := range s.Tools {
		if t.Name == name {
			return t, true
		}
	}
	return mcp.Tool{}, false
}

// TargetParam returns the name of tool's element argument: "target" in
// @playwright/mcp 0.0.83, "ref" before. The schemas change between
// versions, so they are read from tools/list, never hard-coded.
func (s *StdioServer) TargetParam(tool string) (string, error) {
	t, ok := s.tool(tool)
	if !ok {
		return "", fmt.Errorf("%s: tools/list has no %s", s.Name, tool)
	}
	for _, p := range []string{"target", "ref"} {
		if _, ok := t.InputSchema.Properties[p]; ok {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s: %s has neither a target nor a ref argument", s.Name, tool)
}

// StdioStopReport says how a stdio child stopped and whether anything of
// its process tree outlived it.
type StdioStopReport struct {
	Name   string  `json:"name"`
	PID    int     `json:"pid"`
	TookMS float64 `json:"took_ms"`
	Exit   string  `json:"exit"`
	// Procs is the size of its process tree when the stop began.
	Procs int `json:"processes_at_stop"`
	// Leftover lists processes of that tree still alive after the stop; they
	// were then killed by pid.
	Leftover []string `json:"leftover"`
}

// Clean reports whether nothing was left behind.
func (r StdioStopReport) Clean() bool { return len(r.Leftover) == 0 }

// Summary is the one line printed about the stop.
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
// is still alive: its group first, then by pid. Safe to call twice; call
// it before the proxy-server's Stop, whose orphan reaping waits for any
// child of this process.
func (s *StdioServer) Stop(ctx context.Context) StdioStopReport {
	s.stopOnce.Do(func() { s.stopReport = s.stop(ctx) })
	return s.stopReport
}

func (s *StdioServer) stop(ctx context.Context) StdioStopReport {
	rep := StdioStopReport{Name: s.Name, PID: s.PID, Exit: "0"}
	if s.PID == 0 {
		if cmd := s.cmd.Load(); cmd != nil && cmd.Process != nil {
			s.PID = cmd.Process.Pid
			rep.PID = s.PID
		}
	}
	var tree []Proc
	if s.PID > 0 {
		tree = processTree(s.PID)
	}
	rep.Procs = len(tree)
	start := time.Now()
	if err := s.client.Close(); err != nil {
		rep.Exit = err.Error()
	}
	// The leader is reaped now; while any member of its group lives the
	// group id cannot be reused, so signalling it is safe.
	if s.PID > 0 && anyAlive(tree) {
		_ = syscall.Kill(-s.PID, syscall.SIGKILL)
	}
	deadline := time.Now().Add(5 * time.Second)
	for anyAlive(tree) && time.Now().Before(deadline) && ctx.Err() == nil {
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
	for _, d := range s.cfg.RemoveOnStop {
		if err := os.RemoveAll(d); err != nil {
			s.log.Warn("removing a temp dir", "dir", d, "err", err)
		}
	}
	s.log.Info("stopped", "result", rep.Summary())
	return rep
}

func anyAlive(ps []Proc) bool {
	for _, p := range ps {
		if alive(p) {
			return true
		}
	}
	return false
}

// PlainConfig says how to start a plain @playwright/mcp, configured like the
// proxy's workers but launching its own browser.
type PlainConfig struct {
	// Root is the project root, where node_modules/@playwright/mcp is.
	Root string
	// Browser is the Chromium executable; "" means PROXY_BROWSER_EXECUTABLE
	// or the one the proxy would find.
	Browser string
	// SettleMS is --timeout-settle; negative leaves upstream's default.
	SettleMS int
	// Endpoint, when set, is a Playwright browser server the plain process
	// connects to (--endpoint, as the proxy's workers do in shared mode)
	// instead of launching its own browser.
	Endpoint string
	// Relay, when set, is a command prefix that runs the plain process
	// behind relays (OverheadConfig.Relay).
	Relay []string
}

// plainArgs builds the plain @playwright/mcp arguments after the command
// prefix: what the brief of the overhead scenario names, plus what the
// proxy gives its workers (internal/upstream workerArgs): --isolated, an
// output dir with absolute paths, --no-sandbox as root.
func plainArgs(browser, outputDir, configPath string, settleMS int, root bool) []string {
	args := []string{"--headless", "--isolated", "--executable-path", browser,
		"--output-dir", outputDir, "--file-paths", "absolute",
		"--config", configPath}
	if settleMS >= 0 {
		args = append(args, fmt.Sprintf("--timeout-settle=%d", settleMS))
	}
	if root {
		args = append(args, "--no-sandbox")
	}
	return args
}

// endpointArgs are plainArgs for a plain @playwright/mcp that connects to a
// browser server, as the proxy's workers do (internal/upstream workerArgs):
// the browser's flags are the server's.
func endpointArgs(endpoint, outputDir string, settleMS int) []string {
	args := []string{"--isolated", "--endpoint", endpoint, "--output-dir", outputDir, "--file-paths", "absolute"}
	if settleMS >= 0 {
		args = append(args, fmt.Sprintf("--timeout-settle=%d", settleMS))
	}
	return args
}

// StartPlain starts a plain @playwright/mcp over stdio in a temp directory
// (its workspace root and output dir), removed at Stop.
func StartPlain(ctx context.Context, log *slog.Logger, cfg PlainConfig) (*StdioServer, error) {
	browser := cfg.Browser
	if browser == "" {
		browser = os.Getenv("PROXY_BROWSER_EXECUTABLE")
	}
	if browser == "" {
		var err error
		if browser, err = upstream.FindBrowser(); err != nil {
			return nil, err
		}
	}
	dir, err := os.MkdirTemp("", "pwproxy-bench-plain-*")
	if err != nil {
		return nil, fmt.Errorf("plain upstream temp dir: %w", err)
	}
	fail := func(err error) (*StdioServer, error) {
		os.RemoveAll(dir)
		return nil, err
	}
	preload := filepath.Join(dir, "keep-group.js")
	if err := os.WriteFile(preload, upstream.KeepGroupJS(), 0o600); err != nil {
		return fail(fmt.Errorf("plain upstream: %w", err))
	}
	// Chromium flags go through the config file: the CLI has no flag for
	// launch arguments, and the config's launchOptions merge with the CLI's.
	conf, err := json.Marshal(map[string]any{"browser": map[string]any{"launchOptions": map[string]any{"args": upstream.ChromiumFlags()}}})
	if err != nil {
		return fail(err)
	}
	confPath := filepath.Join(dir, "config.json")
	if err := os.WriteFile(confPath, conf, 0o600); err != nil {
		return fail(fmt.Errorf("plain upstream: %w", err))
	}
	out := filepath.Join(dir, "output")
	if err := os.Mkdir(out, 0o700); err != nil {
		return fail(fmt.Errorf("plain upstream: %w", err))
	}
	command := upstream.DefaultCommand(cfg.Root)
	nodeOpts := fmt.Sprintf("--require=%q", preload)
	if prev := strings.TrimSpace(os.Getenv("NODE_OPTIONS")); prev != "" {
		nodeOpts = prev + " " + nodeOpts
	}
	args, name := plainArgs(browser, out, confPath, cfg.SettleMS, os.Geteuid() == 0), "plain"
	if cfg.Endpoint != "" {
		args, name = endpointArgs(cfg.Endpoint, out, cfg.SettleMS), "plain via browser server"
	}
	args = slices.Concat(command, args)
	if len(cfg.Relay) > 0 {
		args, name = slices.Concat(cfg.Relay, args), name+" behind relays"
	}
	return StartStdio(ctx, log, StdioConfig{
		Name:    name,
		Command: args[0],
		Args:    args[1:],
		// TMPDIR=dir: what Playwright and Chromium leave in TMPDIR when
		// stopped hard (sockets, a profile) goes with dir at Stop, as the
		// proxy's does with its host's directory.
		Env:          map[string]string{"NODE_OPTIONS": nodeOpts, "TMPDIR": dir},
		Dir:          dir,
		RemoveOnStop: []string{dir},
	})
}

// StartBridge starts mcp-bridge against the proxy-server at proxyURL, with
// autostart off: it must use the benchmark's server, never start its own.
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

// CommandLine is the child's command line, for the report.
func (s *StdioServer) CommandLine() string {
	return strings.Join(append([]string{s.cfg.Command}, s.cfg.Args...), " ")
}
