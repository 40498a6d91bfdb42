package upstream

import (
	"bufio"
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/clock"
)

// workerHostJS runs many @playwright/mcp sessions in one node process; see
// the file for its protocol and for how it keeps the sessions apart.
//
//go:embed js/worker-host.js
var workerHostJS []byte

// workerHostEnv carries the host's JSON configuration.
const workerHostEnv = "PWPROXY_WORKER_HOST"

const (
	// defaultHostSessions is the host's own default for maxSessions.
	defaultHostSessions = 16
	// hostHeapBaseMB and hostHeapPerSessionMB size V8's old space for a
	// host: the bundle and one session rest near 44 MB, each further
	// session adds about 2 MB, and a snapshot or a base64 screenshot in
	// flight needs several times that; an OOM takes every session down.
	hostHeapBaseMB       = 128
	hostHeapPerSessionMB = 16
)

// SessionHostConfig configures one node process that hosts many sessions
// (SessionHost), each an @playwright/mcp server on its own BrowserContext
// of a browser server: the host's own (Browser), or one it is pointed at.
type SessionHostConfig struct {
	// Node is the node executable; "" is node on PATH.
	Node string
	// ResolveFrom is where node finds @playwright/mcp and playwright-core
	// (PlaywrightFrom of the worker command).
	ResolveFrom string
	// Endpoint is the browser server the sessions connect to
	// (Browser.PlaywrightEndpoint), unless a session names its own.
	Endpoint string
	// Browser, when set, has the host launch Chromium under a browser
	// server inside its own process (kept in its process group), which
	// sessions naming no endpoint connect to: a session's Playwright round
	// trips then never leave the host. Its Env is ignored (Env is the
	// host's); DebugPort opens the CDP port the live view reads.
	Browser *BrowserConfig
	// MaxSessions is how many sessions the host holds at once; 0 is 16.
	MaxSessions int
	// MaxHeapMB is V8's old-space limit; 0 is 128 MB plus 16 per session.
	MaxHeapMB int
	// Env is added to the proxy's environment.
	Env []string
	// TempDir is where the host's runtime directory (its script, its
	// TMPDIR, its working directory) is made; "" is os.TempDir(). Close
	// removes it.
	TempDir string
	// MaxLineBytes bounds one line of the host's stdout; 0 means 64 MiB.
	MaxLineBytes int
	// FirstPageDelay is how long after it opens a session's first page is
	// opened ahead, in the background, once the host's other sessions
	// have no call in flight (at most 5 s more): a session handed out
	// then starts its first call with its renderer running. 0 is 1 s;
	// negative opens it only on the session's first call.
	FirstPageDelay time.Duration
	Logger         *slog.Logger
	// Clock times Close's grace periods; nil is the real clock.
	Clock clock.Clock
}

// Pong is the host's answer to a ping: how loaded it is.
type Pong struct {
	Sessions int
	// HeapUsed is V8's heap in use, the figure to hold against MaxHeapMB.
	HeapUsed int64
	RSS      int64
}

// SessionHost is one node process running worker-host.js: the sessions
// opened in it (Open) share its heap and module graph, and each has its own
// connection to the browser server and its own BrowserContext. Its methods
// are safe for concurrent use.
type SessionHost struct {
	proc    *process
	dir     string
	logger  *slog.Logger
	stderr  *ringBuffer
	stdoutR *os.File
	version string
	// browser is the host's own browser (SessionHostConfig.Browser).
	browser *hostBrowser
	started time.Time

	writeMu sync.Mutex // one envelope at a time on stdin
	stdin   *os.File

	mu       sync.Mutex
	sessions map[string]*HostedSession
	pings    map[int64]chan Pong
	gone     bool // stdout ended: no session can be opened or answered
	nextKey  atomic.Int64
	nextPing atomic.Int64
	// readerDone is closed once the host's stdout ended and every session
	// was told.
	readerDone chan struct{}

	// unanswered is set once a session's close went unanswered: the host
	// is stuck or stopped, so its own Close kills it at once instead of
	// spending a shutdown's budget on polite steps it will not take, and
	// no session is placed on it.
	unanswered atomic.Bool
	// hung is set before the host is killed for missing its pings, so its
	// sessions, ending with it, can tell why.
	hung atomic.Bool

	closeOnce sync.Once
	closeErr  error
}

// hostEnvelope is one line of the host's stdout.
type hostEnvelope struct {
	S      string          `json:"s"`
	M      json.RawMessage `json:"m"`
	Ready  *hostReady      `json:"ready"`
	Opened *struct {
		MS int64 `json:"ms"`
	} `json:"opened"`
	Closed *struct {
		Reason string `json:"reason"`
	} `json:"closed"`
	Refused  *string         `json:"refused"`
	Pong     json.RawMessage `json:"pong"`
	Sessions int             `json:"sessions"`
	HeapUsed int64           `json:"heapUsed"`
	RSS      int64           `json:"rss"`
	Error    string          `json:"error"`
}

// hostReady is the host's announcement that it can open sessions.
type hostReady struct {
	PID     int          `json:"pid"`
	Version string       `json:"version"`
	Browser *hostBrowser `json:"browser"`
}

// hostBrowser is a session host's own browser, as it announced it.
type hostBrowser struct {
	Endpoint string `json:"endpoint"`
	PID      int    `json:"pid"`
	CDP      string `json:"cdp"`
}

// nodeFlags are the V8 flags of every node process the proxy starts for
// @playwright/mcp (DefaultCommand has why).
func nodeFlags() []string { return []string{"--optimize-for-size", "--single-threaded"} }

// ownBrowserNodeFlags are the V8 flags of a session host that runs its own
// browser server: it serves both ends of every Playwright round trip, and
// V8's helper threads (concurrent GC and compilation) keep that work off
// the one thread the sessions' calls wait for, so it runs without
// --single-threaded (docs/BENCHMARKS.md has the figures).
func ownBrowserNodeFlags() []string { return []string{"--optimize-for-size"} }

// StartSessionHost starts the host and returns once it announced it is
// ready. ctx bounds only the start-up.
func StartSessionHost(ctx context.Context, cfg SessionHostConfig) (_ *SessionHost, err error) {
	if cfg.ResolveFrom == "" {
		return nil, errors.New("session host: empty resolveFrom")
	}
	node := cfg.Node
	if node == "" {
		node = "node"
	}
	maxSessions := cfg.MaxSessions
	if maxSessions <= 0 {
		maxSessions = defaultHostSessions
	}
	heap := cfg.MaxHeapMB
	if heap <= 0 {
		heap = hostHeapBaseMB + hostHeapPerSessionMB*maxSessions
	}
	maxLine := cfg.MaxLineBytes
	if maxLine <= 0 {
		maxLine = defaultMaxLineBytes
	}
	logger := loggerOr(cfg.Logger).With("component", "session-host")
	dir, err := os.MkdirTemp(cfg.TempDir, "pwp-host-")
	if err != nil {
		return nil, fmt.Errorf("session host runtime dir: %w", err)
	}
	fail := func(err error) (*SessionHost, error) {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	script, err := writeRuntimeFile(dir, "worker-host.js", workerHostJS)
	if err != nil {
		return fail(err)
	}
	hostConf := map[string]any{"resolveFrom": cfg.ResolveFrom, "endpoint": cfg.Endpoint, "maxSessions": maxSessions}
	var browserEnv []string
	flags := nodeFlags()
	if cfg.Browser != nil {
		exe, err := cfg.Browser.executable()
		if err != nil {
			return fail(err)
		}
		if hostConf["browser"], browserEnv, err = browserLaunch(dir, *cfg.Browser, exe, logger); err != nil {
			return fail(err)
		}
		flags = ownBrowserNodeFlags()
	}
	switch d := cfg.FirstPageDelay; {
	case d < 0:
		hostConf["firstPageDelayMs"] = -1
	case d > 0:
		hostConf["firstPageDelayMs"] = max(1, d.Milliseconds())
	}
	conf, err := json.Marshal(hostConf)
	if err != nil {
		return fail(err)
	}
	stdinR, stdinW, err := os.Pipe()
	if err != nil {
		return fail(fmt.Errorf("session host stdin: %w", err))
	}
	stdoutR, stdoutW, err := os.Pipe()
	if err != nil {
		closeFiles(stdinR, stdinW)
		return fail(fmt.Errorf("session host stdout: %w", err))
	}
	stderrR, stderrW, err := os.Pipe()
	if err != nil {
		closeFiles(stdinR, stdinW, stdoutR, stdoutW)
		return fail(fmt.Errorf("session host stderr: %w", err))
	}
	args := append(flags, "--max-old-space-size="+strconv.Itoa(heap), script)
	cmd := exec.Command(node, args...)
	cmd.Dir = dir
	cmd.Env = append(append(childEnv(cfg.Env), browserEnv...), workerHostEnv+"="+string(conf))
	// Playwright's client writes its temporary files (downloads, traces)
	// in TMPDIR: they go with the runtime dir.
	cmd.Env = append(cmd.Env, tmpdirEnv(dir, logger)...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdinR, stdoutW, stderrW
	cmd.SysProcAttr = sysProcAttr()
	started := time.Now()
	proc, err := startProcess(cmd, cfg.Clock)
	closeFiles(stdinR, stdoutW, stderrW)
	if err != nil {
		closeFiles(stdinW, stdoutR, stderrR)
		return fail(fmt.Errorf("start session host %q: %w", node, err))
	}
	h := &SessionHost{
		proc:       proc,
		dir:        dir,
		logger:     logger.With("pid", proc.pid),
		stderr:     newRingBuffer(stderrRingBytes),
		stdoutR:    stdoutR,
		stdin:      stdinW,
		started:    started,
		sessions:   map[string]*HostedSession{},
		pings:      map[int64]chan Pong{},
		readerDone: make(chan struct{}),
	}
	go func() {
		defer closeFiles(stderrR)
		// The host prefixes its lines with "host: " or "session KEY: ".
		drainStderr(stderrR, h.stderr, h.logger, nil)
	}()
	ready := make(chan *hostReady, 1)
	stdout := &lineLimitReader{r: stdoutR, max: maxLine, exceeded: func() {
		h.logger.Error("session host exceeded the line limit; killing it", "limit", maxLine)
		h.proc.signalGroup(syscall.SIGKILL)
	}}
	go h.read(stdout, ready)
	defer func() {
		if err != nil {
			closeCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), stopStepTimeout)
			defer cancel()
			_ = h.Kill(closeCtx)
		}
	}()
	startCtx, cancel := context.WithTimeout(ctx, browserStartTimeout)
	defer cancel()
	select {
	case r := <-ready:
		h.version = r.Version
		if cfg.Browser != nil {
			if h.browser, err = checkHostBrowser(r.Browser, cfg.Browser.DebugPort); err != nil {
				return nil, err
			}
		}
	case <-h.readerDone:
		<-h.proc.done
		return nil, fmt.Errorf("session host exited before it was ready (%v); stderr: %s", h.proc.exitErr, tail(h.stderr.String(), 2048))
	case <-startCtx.Done():
		return nil, fmt.Errorf("session host not ready: %w; stderr: %s", startCtx.Err(), tail(h.stderr.String(), 2048))
	}
	attrs := []any{"version", h.version, "max_sessions", maxSessions, "max_heap_mb", heap}
	if b := h.browser; b != nil {
		attrs = append(attrs, "browser_pid", b.PID, "endpoint", b.Endpoint, "cdp", b.CDP)
	}
	h.logger.Info("session host started", append(attrs, "took", time.Since(started).Round(time.Millisecond))...)
	return h, nil
}

// checkHostBrowser checks what a host said of the browser it was asked to
// launch; the CDP endpoint, when one was asked for and is not usable, is
// dropped: only the live view goes without.
func checkHostBrowser(b *hostBrowser, debugPort bool) (*hostBrowser, error) {
	if b == nil || !strings.HasPrefix(b.Endpoint, "ws://") {
		return nil, fmt.Errorf("session host announced no usable browser endpoint (%+v)", b)
	}
	c := *b
	if !debugPort {
		c.CDP = ""
	} else if ep, err := cdpHTTPEndpoint(c.CDP); err == nil {
		c.CDP = ep
	} else {
		c.CDP = ""
	}
	return &c, nil
}

// read demultiplexes the host's stdout until it ends; then every session
// and every ping still waiting learns that the host is gone.
func (h *SessionHost) read(r io.Reader, ready chan<- *hostReady) {
	defer h.readerEnded()
	br := bufio.NewReaderSize(r, 64<<10)
	announced := false
	for {
		line, err := br.ReadBytes('\n')
		if key, msg, ok := splitSessionMessage(line); ok {
			if s := h.session(key); s != nil {
				s.tr.deliver(msg)
			}
		} else if len(trimEOL(line)) > 0 {
			var env hostEnvelope
			if jsonErr := json.Unmarshal(line, &env); jsonErr != nil {
				h.logger.Warn("session host wrote a line that is not an envelope", "err", jsonErr, "line", tail(string(line), 200))
			} else if env.Ready != nil {
				if !announced {
					announced = true
					ready <- env.Ready
				}
			} else {
				h.dispatch(&env)
			}
		}
		if err != nil {
			return
		}
	}
}

// splitSessionMessage cuts a session's message out of the host's
// commonest line, {"s":KEY,"m":MSG}, without decoding MSG: the session's
// transport decodes it once, and a snapshot of hundreds of kilobytes is
// not scanned twice more on the way. The host writes that line with
// JSON.stringify({s, m}): the key first, one of ours, with nothing to
// escape. Any other line (ok false) is decoded as a whole; an MSG that is
// not JSON is the transport's to reject.
func splitSessionMessage(line []byte) (key string, msg json.RawMessage, ok bool) {
	rest, found := bytes.CutPrefix(line, []byte(`{"s":"`))
	if !found {
		return "", nil, false
	}
	end := bytes.IndexByte(rest, '"')
	if end <= 0 || bytes.IndexByte(rest[:end], '\\') >= 0 {
		return "", nil, false
	}
	k := rest[:end]
	if rest, found = bytes.CutPrefix(rest[end:], []byte(`","m":`)); !found {
		return "", nil, false
	}
	if msg, found = bytes.CutSuffix(trimEOL(rest), []byte("}")); !found || len(msg) == 0 {
		return "", nil, false
	}
	return string(k), msg, true
}

// session is the open session of key; nil once closed on our side (Kill).
func (h *SessionHost) session(key string) *HostedSession {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.sessions[key]
}

func (h *SessionHost) dispatch(env *hostEnvelope) {
	if env.Pong != nil {
		seq, _ := strconv.ParseInt(string(env.Pong), 10, 64)
		h.mu.Lock()
		ch := h.pings[seq]
		delete(h.pings, seq)
		h.mu.Unlock()
		if ch != nil {
			ch <- Pong{Sessions: env.Sessions, HeapUsed: env.HeapUsed, RSS: env.RSS}
		}
		return
	}
	if env.S == "" {
		h.logger.Warn("session host could not use an envelope", "error", env.Error)
		return
	}
	s := h.session(env.S)
	if s == nil {
		return
	}
	switch {
	case env.M != nil:
		s.tr.deliver(env.M)
	case env.Opened != nil:
		s.openResult(nil)
	case env.Refused != nil:
		s.ended(fmt.Errorf("session host refused it: %s", *env.Refused))
	case env.Closed != nil:
		s.ended(&sessionClosedError{reason: env.Closed.Reason})
	case env.Error != "":
		s.logger.Warn("session host could not use an envelope for this session", "error", env.Error)
	}
}

func (h *SessionHost) readerEnded() {
	h.mu.Lock()
	h.gone = true
	sessions := make([]*HostedSession, 0, len(h.sessions))
	for _, s := range h.sessions {
		sessions = append(sessions, s)
	}
	h.mu.Unlock()
	for _, s := range sessions {
		s.ended(errHostExited)
	}
	close(h.readerDone)
}

// errHostExited ends the sessions of a host whose stdout ended.
var errHostExited = errors.New("its session host exited")

// send writes one envelope to the host.
func (h *SessionHost) send(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("session host envelope: %w", err)
	}
	b = append(b, '\n')
	h.writeMu.Lock()
	defer h.writeMu.Unlock()
	if h.stdin == nil {
		return fmt.Errorf("session host stdin: %w", os.ErrClosed)
	}
	if _, err := h.stdin.Write(b); err != nil {
		return fmt.Errorf("session host stdin: %w", err)
	}
	return nil
}

// Ping asks the host for its load; it fails once the host is gone or
// answers nothing before ctx ends. The host answers between the sessions'
// work, so a host busy with a large answer is slow, not dead.
func (h *SessionHost) Ping(ctx context.Context) (Pong, error) {
	seq := h.nextPing.Add(1)
	ch := make(chan Pong, 1)
	h.mu.Lock()
	if h.gone {
		h.mu.Unlock()
		return Pong{}, exitedErr(errHostExited)
	}
	h.pings[seq] = ch
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		delete(h.pings, seq)
		h.mu.Unlock()
	}()
	if err := h.send(map[string]int64{"ping": seq}); err != nil {
		return Pong{}, exitedErr(err)
	}
	select {
	case p := <-ch:
		return p, nil
	case <-h.readerDone:
		return Pong{}, exitedErr(errHostExited)
	case <-ctx.Done():
		return Pong{}, fmt.Errorf("session host ping: %w", ctx.Err())
	}
}

// PID is the host's process id (also its process group id).
func (h *SessionHost) PID() int { return h.proc.pid }

// Version is the @playwright/mcp version the host loaded.
func (h *SessionHost) Version() string { return h.version }

// Done is closed once the host process has exited and been reaped.
func (h *SessionHost) Done() <-chan struct{} { return h.proc.done }

// ExitErr is the host's exit status once Done is closed, else nil.
func (h *SessionHost) ExitErr() error { return h.proc.exitStatus() }

// Stderr returns the last 64 KB the host wrote to stderr; each line names
// the session it is about ("session KEY: ") or the host ("host: ").
func (h *SessionHost) Stderr() string { return h.stderr.String() }

// RSS is the resident memory of the host's node process, in bytes: its
// own browser's processes are counted as the browser's (the renderers, by
// their sessions). One read of its own stat: a create's answer, which
// shows it, need not wait for a scan of every process.
func (h *SessionHost) RSS() int64 { return h.proc.leaderRSS() }

// DebugEndpoint is the CDP address of the host's own browser, for the
// live view; "" when it has none or opened no CDP port.
func (h *SessionHost) DebugEndpoint() string {
	if h.browser == nil {
		return ""
	}
	return h.browser.CDP
}

// BrowserPID is the pid of the host's own browser; 0 when it has none.
func (h *SessionHost) BrowserPID() int {
	if h.browser == nil {
		return 0
	}
	return h.browser.PID
}

// Sessions is how many sessions are open in the host, as the proxy sees it.
func (h *SessionHost) Sessions() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.sessions)
}

// Close stops the host: its stdin ends (it closes every session and exits),
// up to 2 s, SIGTERM to its group, up to 2 s, SIGKILL, reap; then its
// runtime directory goes. Every session still open ends with
// ErrWorkerExited. ctx ending skips the waits, never the kill. Safe to call
// more than once and concurrently.
func (h *SessionHost) Close(ctx context.Context) error { return h.stop(ctx, false) }

// Kill stops the host at once: SIGKILL to its group, reap. Close and Kill
// share one stop; whichever comes first decides.
func (h *SessionHost) Kill(ctx context.Context) error { return h.stop(ctx, true) }

func (h *SessionHost) stop(ctx context.Context, kill bool) error {
	kill = kill || h.unanswered.Load()
	h.closeOnce.Do(func() {
		start := time.Now()
		var stopErr error
		if kill {
			stopErr = h.proc.kill()
		}
		h.writeMu.Lock()
		closeFiles(h.stdin)
		h.stdin = nil
		h.writeMu.Unlock()
		if !kill {
			stopErr = h.proc.stop(ctx, true)
		}
		// The host is reaped; its last envelopes are read, but a grandchild
		// holding its stdout must not keep the reader, and the sessions
		// waiting on it, waiting.
		t := h.proc.clock.NewTimer(stopStepTimeout)
		select {
		case <-h.readerDone:
		case <-t.C():
		}
		t.Stop()
		closeFiles(h.stdoutR)
		<-h.readerDone
		var rmErr error
		if err := os.RemoveAll(h.dir); err != nil {
			rmErr = fmt.Errorf("remove session host dir: %w", err)
		}
		h.closeErr = errors.Join(stopErr, rmErr)
		h.logger.Info("session host stopped", "killed", kill, "signals", h.proc.signals(), "exit", h.proc.exitStatus(),
			"took", time.Since(start).Round(time.Millisecond))
	})
	return h.closeErr
}
