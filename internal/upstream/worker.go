package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/clock"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/worker"
)

// defaultMaxLineBytes bounds one JSON-RPC line from a worker. Full-page
// screenshots travel base64-encoded inline, so this is generous.
const defaultMaxLineBytes = 64 << 20

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
	return append(append([]string{"node"}, nodeFlags()...), filepath.Join(root, "node_modules", "@playwright", "mcp", "cli.js"))
}

// Worker is one @playwright/mcp stdio process: one isolated BrowserContext.
// Its methods are safe for concurrent use.
type Worker struct {
	proc      *process
	outputDir string
	logger    *slog.Logger
	stderr    *ringBuffer
	transport *transport.Stdio
	conn      mcpConn
	client    *client.Client
	stdinW    *os.File
	stdoutR   *os.File

	// stdoutEOF: the worker's stdout ended, so it is exiting or gone and
	// a request written now could never be answered.
	stdoutEOF atomic.Bool
	// lostBrowser: stopped because the shared browser it was attached to
	// died, not for anything of its own.
	lostBrowser atomic.Bool
	// nodePlace is the browser node the worker was placed on (none for
	// ours).
	nodePlace
	// browserServer: the worker's pages live in the local shared browser
	// run by our browser server, whose renderer pids are this machine's.
	browserServer bool
	// debug is the CDP address of the browser holding the worker's pages
	// (DebugEndpoint); set before the worker is handed out.
	debug string

	closeOnce sync.Once
	closeErr  error
}

// StartWorker spawns a worker, performs the MCP handshake and fetches its
// tools. ctx bounds only the start-up; the worker lives until Close or until
// it dies.
func StartWorker(ctx context.Context, cfg WorkerConfig) (_ *Worker, err error) {
	if len(cfg.Command) == 0 || cfg.Command[0] == "" {
		return nil, errors.New("upstream worker: empty command")
	}
	outputDir, err := freshOutputDir("upstream worker", cfg.OutputDir)
	if err != nil {
		return nil, err
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
	w.conn.transport = w.transport
	w.conn.gone = func() bool { return w.stdoutEOF.Load() || w.proc.dying() }
	w.conn.wrap = w.wrapErr
	w.conn.logger = w.logger
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

	if err := w.conn.start(w.client); err != nil {
		return nil, fmt.Errorf("upstream worker transport: %w", err)
	}

	initialized, step, err := w.conn.handshake(ctx, w.client)
	if err != nil {
		return nil, w.startErr(step, err)
	}
	w.logger.Info("upstream worker started", "output_dir", outputDir, "tools", len(w.Tools()),
		"initialize", initialized.Round(time.Millisecond), "took", time.Since(started).Round(time.Millisecond))
	return w, nil
}

// freshOutputDir is dir made absolute, refused when empty or when it
// already holds something: Close removes it wholesale, and a misconfigured
// path must not cost anyone their files.
func freshOutputDir(who, dir string) (string, error) {
	if dir == "" {
		return "", fmt.Errorf("%s: empty output dir", who)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("%s output dir: %w", who, err)
	}
	if entries, err := os.ReadDir(abs); err == nil && len(entries) > 0 {
		return "", fmt.Errorf("%s output dir %s is not empty", who, abs)
	}
	return abs, nil
}

// startErr describes a failed start-up with what the worker said on stderr,
// which is where node explains a missing module or a bad flag.
func (w *Worker) startErr(step string, err error) error {
	err = w.wrapErr(err)
	if w.proc.exited() || errors.Is(err, worker.ErrWorkerExited) {
		// Let the stderr drain catch up with a worker that just died.
		time.Sleep(50 * time.Millisecond)
	}
	if s := tail(w.stderr.String(), 2048); s != "" {
		return fmt.Errorf("upstream worker %s: %w; stderr: %s", step, err, s)
	}
	return fmt.Errorf("upstream worker %s: %w", step, err)
}

func (w *Worker) log() *slog.Logger { return w.logger }

// PID is the worker's process id (also its process group id).
func (w *Worker) PID() int { return w.proc.pid }

// DebugEndpoint is the CDP address (http://host:port) of the browser that
// holds the worker's pages, for the server's own live view; "" when the
// server cannot reach one (a Playwright-protocol browser node). It is the
// server's alone: never shown to a session or a viewer.
func (w *Worker) DebugEndpoint() string { return w.debug }

// OutputDir is the absolute directory the worker writes to; pass it to answer.Ingest.
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
		w.conn.closed.Store(true)
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
		w.conn.endLife()
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
