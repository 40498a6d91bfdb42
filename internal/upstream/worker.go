package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
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

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/clock"
)

const (
	// defaultMaxLineBytes bounds one JSON-RPC line from a worker. Full-page
	// screenshots travel base64-encoded inline, so this is generous.
	defaultMaxLineBytes = 64 << 20
	// maxToolPages bounds tools/list pagination against a looping cursor.
	maxToolPages = 100
	// cancelNotifyTimeout bounds sending notifications/cancelled.
	cancelNotifyTimeout = 5 * time.Second
	// requestIDPrefix keeps our string ids apart from mcp-go's integer ids on
	// the same transport.
	requestIDPrefix = "pwp-"
)

// ErrWorkerExited is returned (wrapped) by calls on a worker whose process is
// gone or whose stdio is closed.
var ErrWorkerExited = errors.New("upstream worker exited")

// ErrNotDelivered is returned (wrapped, with ErrWorkerExited) when the worker
// was already gone before the request could reach it: the request certainly
// did not run, so sending it to another worker is safe. Without it, a call
// that fails with ErrWorkerExited may have run.
var ErrNotDelivered = errors.New("request not delivered")

// WorkerConfig configures one @playwright/mcp process.
type WorkerConfig struct {
	// Command is the worker's argv prefix, e.g. DefaultCommand(root).
	Command []string
	// PlaywrightEndpoint is a shared browser run by a browser server
	// (Browser.PlaywrightEndpoint); it wins over CDPEndpoint.
	PlaywrightEndpoint string
	// Remote is a browser node's Playwright server; it wins over both
	// endpoints. Its URL and headers may hold credentials, so they reach
	// the worker in a private file read at start, never on its command
	// line, which anyone on the machine can read.
	Remote *RemoteBrowser
	// CDPEndpoint is a shared browser's CDP endpoint (Browser.CDPEndpoint,
	// or a remote browser). With neither endpoint the worker launches its
	// own headless browser (per-session mode).
	CDPEndpoint string
	// DebugPort makes a worker that launches its own browser (neither
	// endpoint, no Remote) open that browser's CDP port on loopback, for
	// the live view (FindDebugEndpoint finds it).
	DebugPort bool
	// OutputDir receives the worker's files. It must not exist or be empty:
	// it is created, and Close removes it. Give every worker its own.
	OutputDir string
	// Browser is the engine of Remote's server (firefox, webkit; "" is
	// chromium).
	Browser string
	// ContextOptions are the session's BrowserContext options (JSON), given
	// to the worker in its configuration file; nil keeps upstream's.
	ContextOptions json.RawMessage
	// ExtraArgs are appended after ours (commander: the last value wins);
	// --caps values are merged with ours instead of replacing them.
	ExtraArgs []string
	// Env is added to the proxy's environment.
	Env []string
	// Dir is the worker's working directory, which @playwright/mcp uses as
	// the workspace root: files the model names explicitly (a screenshot
	// "x.png") land there. "" means OutputDir, so they are ingested and
	// cleaned up like the automatically named ones.
	Dir string
	// MaxLineBytes bounds one line of the worker's stdout; 0 means 64 MiB.
	MaxLineBytes int
	Logger       *slog.Logger
	// Clock times Close's grace periods; nil is the real clock.
	Clock clock.Clock
}

// DefaultCommand runs the @playwright/mcp pinned in root/node_modules.
//
// One worker per session makes the worker the largest per-session cost the
// proxy controls, so V8 trades a little speed for memory:
// --optimize-for-size shrinks it, and --single-threaded runs V8's garbage
// collector and compilers on the main thread instead of a pool of threads,
// which costs little because a worker waits on its browser far more than
// it computes. docs/BENCHMARKS.md has the measurements.
func DefaultCommand(root string) []string {
	return []string{"node", "--optimize-for-size", "--single-threaded", filepath.Join(root, "node_modules", "@playwright", "mcp", "cli.js")}
}

// RPCError is a JSON-RPC error the worker answered with (unknown tool,
// invalid params, …), as opposed to a tool that ran and failed (isError).
type RPCError struct {
	Code    int
	Message string
	Data    json.RawMessage
}

func (e *RPCError) Error() string {
	return fmt.Sprintf("upstream JSON-RPC error %d: %s", e.Code, e.Message)
}

// Worker is one @playwright/mcp stdio process: one isolated BrowserContext.
// Its methods are safe for concurrent use.
type Worker struct {
	proc      *process
	outputDir string
	logger    *slog.Logger
	stderr    *ringBuffer
	transport *transport.Stdio
	client    *client.Client
	stdinW    *os.File
	stdoutR   *os.File

	tools     atomic.Pointer[[]proxy.Tool]
	refreshMu sync.Mutex // one tools refresh at a time; Close waits for it
	closed    atomic.Bool
	// stdoutEOF: the worker's stdout ended, so it is exiting or gone and
	// a request written now could never be answered.
	stdoutEOF atomic.Bool
	// lostBrowser: stopped because the shared browser it was attached to
	// died, not for anything of its own.
	lostBrowser atomic.Bool
	nextID      atomic.Int64
	// node is the browser node the worker was placed on ("" for ours);
	// nodeDown checks that node now, reporting whether it is down, and
	// nodeGone whether it is known gone without a probe unless there is
	// news of it (nodes.Pool.Gone). All set before the worker is handed
	// out, never changed after.
	node     string
	nodeDown func(context.Context) bool
	nodeGone func(context.Context) bool
	lifeStop context.CancelFunc
	// browserServer: the worker's pages live in the local shared browser
	// run by our browser server, whose renderer pids are this machine's.
	browserServer bool
	// debug is the CDP address of the browser holding the worker's pages
	// (DebugEndpoint); set before the worker is handed out.
	debug string

	closeOnce sync.Once
	closeErr  error
}

// workerArgs builds the worker's argv after the command prefix.
func workerArgs(cfg WorkerConfig, outputDir string) ([]string, error) {
	args := []string{"--isolated", "--output-dir", outputDir, "--file-paths", "absolute"}
	switch {
	case cfg.Remote != nil:
		// The remote browser is named in the configuration file below.
	case cfg.PlaywrightEndpoint != "":
		args = append(args, "--endpoint", cfg.PlaywrightEndpoint)
	case cfg.CDPEndpoint != "":
		args = append(args, "--cdp-endpoint", cfg.CDPEndpoint)
		if !hasFlag(cfg.ExtraArgs, "--cdp-timeout") {
			// Upstream's 30 s default is too short when many workers attach
			// to one busy browser at once: each connect attaches to every
			// existing target, so it slows as sessions are added.
			args = append(args, "--cdp-timeout", "120000")
		}
	default:
		args = append(args, "--headless")
		if !hasFlag(cfg.ExtraArgs, "--executable-path") {
			exe, err := FindBrowser()
			if err != nil {
				return nil, err
			}
			args = append(args, "--executable-path", exe)
		}
		if os.Geteuid() == 0 && !hasFlag(cfg.ExtraArgs, "--no-sandbox") {
			args = append(args, "--no-sandbox")
		}
	}
	if !hasFlag(cfg.ExtraArgs, IdleTimeoutFlag) {
		// Upstream closes a headless browser it launched after an hour
		// without a call (pings do not count), and would detach from an
		// attached one with a timeout set in its environment: a session the
		// proxy keeps would silently lose its pages and cookies. The
		// proxy's own idle policy (PROXY_SESSION_IDLE_TIMEOUT) is the only
		// one; 0 switches upstream's off.
		args = append(args, IdleTimeoutFlag+"=0")
	}
	if needsConfig(cfg) {
		args = append(args, "--config", configPath(outputDir))
	}
	if cfg.Browser != "" && cfg.Browser != proxy.BrowserChromium {
		// Connecting to a node's server needs the client of its engine.
		args = append(args, "--browser", cfg.Browser)
	}
	caps, extra := splitCaps(cfg.ExtraArgs)
	args = append(args, "--caps="+strings.Join(mergeCaps([]string{"storage"}, caps), ","))
	return append(args, extra...), nil
}

// IdleTimeoutFlag is upstream's idle timeout, which every worker gets
// switched off unless its extra arguments set it.
const IdleTimeoutFlag = proxy.UpstreamIdleTimeoutFlag

func hasFlag(args []string, flag string) bool {
	for _, a := range args {
		if a == flag || strings.HasPrefix(a, flag+"=") {
			return true
		}
	}
	return false
}

// splitCaps pulls every --caps value out of args: commander keeps only the
// last --caps, so a user's --caps=network would silently drop our storage.
func splitCaps(args []string) (caps, rest []string) {
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "--caps" && i+1 < len(args):
			caps = append(caps, strings.Split(args[i+1], ",")...)
			i++
		case strings.HasPrefix(a, "--caps="):
			caps = append(caps, strings.Split(strings.TrimPrefix(a, "--caps="), ",")...)
		default:
			rest = append(rest, a)
		}
	}
	return caps, rest
}

func mergeCaps(base, more []string) []string {
	out := slices.Clone(base)
	for _, c := range more {
		if c = strings.TrimSpace(c); c != "" && !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	return out
}

// StartWorker spawns a worker, performs the MCP handshake and fetches its
// tools. ctx bounds only the start-up; the worker lives until Close or until
// it dies.
func StartWorker(ctx context.Context, cfg WorkerConfig) (_ *Worker, err error) {
	if len(cfg.Command) == 0 || cfg.Command[0] == "" {
		return nil, errors.New("upstream worker: empty command")
	}
	if cfg.OutputDir == "" {
		return nil, errors.New("upstream worker: empty output dir")
	}
	outputDir, err := filepath.Abs(cfg.OutputDir)
	if err != nil {
		return nil, fmt.Errorf("upstream worker output dir: %w", err)
	}
	// Close removes OutputDir wholesale, so refuse one that already holds
	// something: a misconfigured path must not cost anyone their files.
	if entries, err := os.ReadDir(outputDir); err == nil && len(entries) > 0 {
		return nil, fmt.Errorf("upstream worker output dir %s is not empty", outputDir)
	}
	args, err := workerArgs(cfg, outputDir)
	if err != nil {
		return nil, err
	}
	if needsConfig(cfg) {
		conf, err := writeConfig(outputDir, cfg)
		if err != nil {
			return nil, err
		}
		// Read once, as the worker starts: by the time it answers
		// initialize, the file has served its purpose.
		defer os.Remove(conf)
	}
	if err := os.MkdirAll(outputDir, 0o700); err != nil {
		return nil, fmt.Errorf("upstream worker output dir: %w", err)
	}
	closeOwnsDir := false // once the process runs, Close removes the dir
	defer func() {
		if err != nil && !closeOwnsDir {
			_ = os.RemoveAll(outputDir)
		}
	}()
	maxLine := cfg.MaxLineBytes
	if maxLine <= 0 {
		maxLine = defaultMaxLineBytes
	}
	logger := loggerOr(cfg.Logger).With("component", "worker")

	// Our own pipes rather than StdinPipe/StdoutPipe: exec.Cmd.Wait would
	// close those under the transport's reader and could lose the last
	// response of a worker that exits.
	stdinR, stdinW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("upstream worker stdin: %w", err)
	}
	stdoutR, stdoutW, err := os.Pipe()
	if err != nil {
		closeFiles(stdinR, stdinW)
		return nil, fmt.Errorf("upstream worker stdout: %w", err)
	}
	stderrR, stderrW, err := os.Pipe()
	if err != nil {
		closeFiles(stdinR, stdinW, stdoutR, stdoutW)
		return nil, fmt.Errorf("upstream worker stderr: %w", err)
	}

	cmd := exec.Command(cfg.Command[0], append(slices.Clone(cfg.Command[1:]), args...)...)
	cmd.Env = childEnv(cfg.Env)
	cmd.Dir = cfg.Dir
	if cmd.Dir == "" {
		cmd.Dir = outputDir
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdinR, stdoutW, stderrW
	cmd.SysProcAttr = sysProcAttr()
	started := time.Now()
	proc, err := startProcess(cmd, cfg.Clock)
	closeFiles(stdinR, stdoutW, stderrW) // the child's ends
	if err != nil {
		closeFiles(stdinW, stdoutR, stderrR)
		return nil, fmt.Errorf("start upstream worker %q: %w", cfg.Command[0], err)
	}

	closeOwnsDir = true
	w := &Worker{
		proc:          proc,
		outputDir:     outputDir,
		logger:        logger.With("pid", proc.pid),
		stderr:        newRingBuffer(stderrRingBytes),
		stdinW:        stdinW,
		stdoutR:       stdoutR,
		browserServer: cfg.Remote == nil && cfg.PlaywrightEndpoint != "",
	}
	go func() {
		defer closeFiles(stderrR)
		drainStderr(stderrR, w.stderr, w.logger, nil)
	}()

	stdout := &lineLimitReader{r: stdoutR, max: maxLine, exceeded: func() {
		w.logger.Error("upstream worker exceeded the line limit; killing it", "limit", maxLine)
		w.proc.signalGroup(syscall.SIGKILL)
	}}
	w.transport = transport.NewIO(&eofReader{r: stdout, eof: &w.stdoutEOF}, stdinW, nil)
	// Without the pin, mcp-go negotiates 2026-07-28 first, where Ping is a
	// no-op that succeeds even against a dead worker.
	w.client = client.NewClient(w.transport, client.WithProtocolVersion(mcp.ProtocolVersion20251125))

	defer func() {
		if err != nil {
			closeCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), stopStepTimeout)
			defer cancel()
			_ = w.Close(closeCtx)
		}
	}()

	// The transport keeps this ctx for the worker's whole life (it hands it
	// to handlers of server-initiated requests), so it must not be ctx.
	lifeCtx, lifeStop := context.WithCancel(context.Background())
	w.lifeStop = lifeStop
	if err := w.client.Start(lifeCtx); err != nil {
		return nil, fmt.Errorf("upstream worker transport: %w", err)
	}
	w.client.OnNotification(func(n mcp.JSONRPCNotification) {
		// Runs on the transport's read goroutine: must not block it.
		if n.Method == string(mcp.MethodNotificationToolsListChanged) {
			go w.refreshTools()
		}
	})

	initReq := mcp.InitializeRequest{}
	initReq.Params.ProtocolVersion = mcp.ProtocolVersion20251125
	initReq.Params.ClientInfo = mcp.Implementation{Name: "playwright-mcp-proxy", Version: "1"}
	if _, err := w.client.Initialize(ctx, initReq); err != nil {
		return nil, w.startErr("initialize", err)
	}
	initialized := time.Since(started)
	tools, err := w.listTools(ctx)
	if err != nil {
		return nil, w.startErr("tools/list", err)
	}
	w.tools.Store(&tools)
	w.logger.Info("upstream worker started", "output_dir", outputDir, "tools", len(tools),
		"initialize", initialized.Round(time.Millisecond), "took", time.Since(started).Round(time.Millisecond))
	return w, nil
}

// startErr describes a failed start-up with what the worker said on stderr,
// which is where node explains a missing module or a bad flag.
func (w *Worker) startErr(step string, err error) error {
	err = w.wrapErr(err)
	if w.proc.exited() || errors.Is(err, ErrWorkerExited) {
		// Let the stderr drain catch up with a worker that just died.
		time.Sleep(50 * time.Millisecond)
	}
	if s := tail(w.stderr.String(), 2048); s != "" {
		return fmt.Errorf("upstream worker %s: %w; stderr: %s", step, err, s)
	}
	return fmt.Errorf("upstream worker %s: %w", step, err)
}

func (w *Worker) newID() mcp.RequestId {
	return mcp.NewRequestId(fmt.Sprintf("%s%d", requestIDPrefix, w.nextID.Add(1)))
}

// listTools decodes tools/list ourselves to keep the raw schemas.
func (w *Worker) listTools(ctx context.Context) ([]proxy.Tool, error) {
	var tools []proxy.Tool
	cursor := ""
	seen := map[string]bool{}
	for range maxToolPages {
		var params any
		if cursor != "" {
			params = map[string]string{"cursor": cursor}
		}
		raw, err := w.request(ctx, "tools/list", params)
		if err != nil {
			return nil, err
		}
		var page struct {
			Tools      []proxy.Tool `json:"tools"`
			NextCursor string       `json:"nextCursor"`
		}
		if err := json.Unmarshal(raw, &page); err != nil {
			return nil, fmt.Errorf("decode tools/list: %w", err)
		}
		tools = append(tools, page.Tools...)
		if page.NextCursor == "" {
			return tools, nil
		}
		if seen[page.NextCursor] {
			return nil, fmt.Errorf("tools/list cursor %q repeated", page.NextCursor)
		}
		seen[page.NextCursor] = true
		cursor = page.NextCursor
	}
	return nil, fmt.Errorf("tools/list: more than %d pages", maxToolPages)
}

func (w *Worker) refreshTools() {
	w.refreshMu.Lock()
	defer w.refreshMu.Unlock()
	if w.closed.Load() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tools, err := w.listTools(ctx)
	if err != nil {
		if !w.closed.Load() {
			w.logger.Warn("refresh upstream tools", "err", err)
		}
		return
	}
	w.tools.Store(&tools)
	w.logger.Info("upstream tools changed", "tools", len(tools))
}

// request sends one JSON-RPC request with a string id and returns its result
// bytes as received.
func (w *Worker) request(ctx context.Context, method string, params any) (json.RawMessage, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("upstream %s: %w", method, err)
	}
	if w.stdoutEOF.Load() || w.proc.dying() {
		return nil, &workerExitedError{cause: ErrNotDelivered, code: proxy.Errorf(proxy.EUNAVAILABLE, "upstream worker exited")}
	}
	id := w.newID()
	resp, err := w.transport.SendRequest(ctx, transport.JSONRPCRequest{
		JSONRPC: mcp.JSONRPC_VERSION, ID: id, Method: method, Params: params,
	})
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			w.cancelRequest(id, ctxErr)
			return nil, fmt.Errorf("upstream %s: %w", method, ctxErr)
		}
		return nil, w.wrapErr(err)
	}
	if resp.Error != nil {
		e := &RPCError{Code: resp.Error.Code, Message: resp.Error.Message}
		if resp.Error.Data != nil {
			e.Data, _ = json.Marshal(resp.Error.Data)
		}
		return nil, e
	}
	if len(resp.Result) == 0 {
		return nil, fmt.Errorf("upstream %s: response without result", method)
	}
	return resp.Result, nil
}

// cancelRequest tells the worker to stop working on id. Best effort, off the
// caller's path: the caller already has its error.
func (w *Worker) cancelRequest(id mcp.RequestId, reason error) {
	n := mcp.JSONRPCNotification{
		JSONRPC: mcp.JSONRPC_VERSION,
		Notification: mcp.Notification{
			Method: string(mcp.MethodNotificationCancelled),
			Params: mcp.NotificationParams{AdditionalFields: map[string]any{"requestId": id, "reason": reason.Error()}},
		},
	}
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), cancelNotifyTimeout)
		defer cancel()
		_ = w.transport.SendNotification(ctx, n)
	}()
}

// eofReader notes when the worker's stdout ends.
type eofReader struct {
	r   io.Reader
	eof *atomic.Bool
}

func (e *eofReader) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err != nil {
		e.eof.Store(true)
	}
	return n, err
}

// workerExitedError is what calls on a dead worker return: errors.Is matches
// ErrWorkerExited and the transport cause, and proxy.ErrorCode gives
// UPSTREAM_UNAVAILABLE.
type workerExitedError struct {
	cause error
	code  *proxy.Error
}

func (e *workerExitedError) Error() string {
	return ErrWorkerExited.Error() + ": " + e.cause.Error()
}

func (e *workerExitedError) Unwrap() []error {
	return []error{ErrWorkerExited, e.code, e.cause}
}

// wrapErr turns the transport's ways of saying "the worker is gone" into
// ErrWorkerExited.
func (w *Worker) wrapErr(err error) error {
	if err == nil || errors.Is(err, ErrWorkerExited) {
		return err
	}
	if errors.Is(err, syscall.EPIPE) {
		// The write failed: the worker never read the request.
		err = fmt.Errorf("%w: %w", ErrNotDelivered, err)
	}
	if errors.Is(err, transport.ErrTransportClosed) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, os.ErrClosed) || errors.Is(err, errLineTooLong) || w.proc.exited() {
		return &workerExitedError{cause: err, code: proxy.Errorf(proxy.EUNAVAILABLE, "upstream worker exited")}
	}
	return err
}

// Tools returns the tools the worker announced (refreshed on
// tools/list_changed). The slice is a copy; the raw schemas are shared and
// must not be modified.
func (w *Worker) Tools() []proxy.Tool {
	if t := w.tools.Load(); t != nil {
		return slices.Clone(*t)
	}
	return nil
}

// callParams is tools/call's params with the arguments passed through as
// given.
type callParams struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// CallTool calls an upstream tool and returns the JSON-RPC result exactly as
// the worker sent it. A tool that ran and failed is a result with isError,
// not an error. Errors: *RPCError for a JSON-RPC error, ErrWorkerExited
// (wrapped) when the worker is gone, ctx's error when ctx ended first (the
// worker is then sent notifications/cancelled).
func (w *Worker) CallTool(ctx context.Context, name string, args json.RawMessage) (json.RawMessage, error) {
	if name == "" {
		return nil, errors.New("upstream tools/call: empty tool name")
	}
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage("{}")
	} else if !json.Valid(args) {
		return nil, fmt.Errorf("upstream tools/call %s: arguments are not valid JSON", name)
	}
	if err := w.nodeGoneErr(ctx); err != nil {
		return nil, fmt.Errorf("tools/call %s: %w", name, err)
	}
	res, err := w.request(ctx, string(mcp.MethodToolsCall), callParams{Name: name, Arguments: args})
	if err != nil {
		if w.node != "" && w.lostBrowser.Load() && errors.Is(err, ErrWorkerExited) && !errors.Is(err, ErrNodeDown) {
			// Stopped because its node went down (trackNode), during the call.
			err = fmt.Errorf("%w: %w", ErrNodeDown, err)
		}
		return nil, fmt.Errorf("tools/call %s: %w", name, err)
	}
	if w.nodeDown != nil && lostRemote(res) && w.nodeDown(ctx) {
		return nil, fmt.Errorf("tools/call %s: %w", name, ErrNodeDown)
	}
	return res, nil
}

// Ping sends an MCP ping; it fails once the worker is gone or wedged past ctx.
func (w *Worker) Ping(ctx context.Context) error {
	// A worker whose node is gone answers pings but can serve no call.
	if err := w.nodeGoneErr(ctx); err != nil {
		return fmt.Errorf("upstream ping: %w", err)
	}
	if err := w.client.Ping(ctx); err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return fmt.Errorf("upstream ping: %w", ctxErr)
		}
		return fmt.Errorf("upstream ping: %w", w.wrapErr(err))
	}
	return nil
}

// PID is the worker's process id (also its process group id).
func (w *Worker) PID() int { return w.proc.pid }

// DebugEndpoint is the CDP address (http://host:port) of the browser that
// holds the worker's pages, for the server's own live view; "" when the
// server cannot reach one (a Playwright-protocol browser node). It is the
// server's alone: never shown to a session or a viewer.
func (w *Worker) DebugEndpoint() string { return w.debug }

// OutputDir is the absolute directory the worker writes to; pass it to Ingest.
func (w *Worker) OutputDir() string { return w.outputDir }

// Done is closed once the worker process has exited and been reaped.
func (w *Worker) Done() <-chan struct{} { return w.proc.done }

// ExitErr is the worker's exit status once Done is closed, else nil.
func (w *Worker) ExitErr() error { return w.proc.exitStatus() }

// Stderr returns the last 64 KB the worker wrote to stderr.
func (w *Worker) Stderr() string { return w.stderr.String() }

// LostBrowser reports whether the worker was stopped because the shared
// browser it was attached to died: its end says nothing about the worker
// or the page it served, so it is no crash of the session's own.
func (w *Worker) LostBrowser() bool { return w.lostBrowser.Load() }

// Close stops the worker: close its stdin (it exits on EOF), wait up to 2 s,
// SIGTERM its process group, wait up to 2 s, SIGKILL the group, reap; then
// remove OutputDir. ctx ending skips the waits, never the kill. Safe to call
// more than once, concurrently, and after the worker crashed.
func (w *Worker) Close(ctx context.Context) error { return w.stop(ctx, false) }

// Kill stops the worker at once: SIGKILL its process group, reap, remove
// OutputDir. It is for a worker that answers nothing (one that failed its
// pings), on which Close's polite steps would only wait out their time.
// Kill and Close share one stop: whichever comes first decides how the
// worker ends, and the other waits for it.
func (w *Worker) Kill(ctx context.Context) error { return w.stop(ctx, true) }

func (w *Worker) stop(ctx context.Context, kill bool) error {
	w.closeOnce.Do(func() {
		start := time.Now()
		w.closed.Store(true)
		var stopErr error
		if kill {
			stopErr = w.proc.kill()
			_ = w.client.Close()
		} else {
			// Closes stdin and unblocks in-flight calls with ErrTransportClosed.
			_ = w.client.Close()
			stopErr = w.proc.stop(ctx, true)
		}
		// A grandchild that inherited stdout could keep the transport's
		// reader waiting for EOF forever; our end is no longer needed.
		closeFiles(w.stdoutR)
		// A tools refresh in flight fails fast now; wait for it so nothing
		// of this worker runs (or logs) after Close.
		w.refreshMu.Lock()
		if w.lifeStop != nil {
			w.lifeStop()
		}
		w.refreshMu.Unlock()
		var rmErr error
		if err := os.RemoveAll(w.outputDir); err != nil {
			rmErr = fmt.Errorf("remove worker output dir: %w", err)
		}
		w.closeErr = errors.Join(stopErr, rmErr)
		w.logger.Info("upstream worker stopped", "killed", kill, "signals", w.proc.signals(), "exit", w.proc.exitStatus(),
			"took", time.Since(start).Round(time.Millisecond))
	})
	return w.closeErr
}
