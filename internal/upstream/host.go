package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/answer"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/clock"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/nodes"
)

// HostConfig configures a Host.
type HostConfig struct {
	Browser BrowserConfig
	// RemoteCDPEndpoint, when set, points every worker at an existing
	// browser instead of launching one.
	RemoteCDPEndpoint string
	// PerSession makes each worker launch its own browser.
	PerSession bool
	// Nodes, when set, places every worker on a remote browser node of
	// the pool instead of a browser of ours; the host launches none.
	Nodes *nodes.Pool
	// ShareOverCDP makes the shared browser a plain Chromium that workers
	// reach over CDP, as with a remote endpoint, instead of running it
	// under a Playwright browser server. It is the fallback when the worker
	// command gives no playwright-core to run that server with; over CDP
	// every worker attaches to every page, so calls slow as sessions grow.
	ShareOverCDP bool
	// Node runs the browser server; "" means node on PATH.
	Node string
	// Worker is the template for every worker; OutputDir, Dir and
	// CDPEndpoint are filled per spawn.
	Worker WorkerConfig
	// InstanceID, when set, is put in the environment of every process the
	// host starts (InstanceEnv=InstanceID), and so of all their descendants:
	// a later proxy-server can then find and end exactly the leftovers of
	// this one, and nothing else.
	InstanceID string
	// TempDir is where the host makes every directory it needs (workers'
	// output, the browser's profile and runtime files) and the TMPDIR its
	// workers get; "" means os.TempDir(). A caller that removes it after a
	// crash removes whatever the crash left behind, and nothing else.
	TempDir string
	// SpawnAttempts is how many times Spawn tries to start a worker before
	// it fails; 0 means 3.
	SpawnAttempts int
	// SpawnBackoff is the wait after the first failed attempt, doubled
	// after each further one; 0 means 500 ms.
	SpawnBackoff time.Duration
	// BreakerThreshold is how many Spawns in a row must fail before Spawn
	// fails fast with ErrCircuitOpen; 0 means 3.
	BreakerThreshold int
	// BreakerCooldown is how long the breaker stays open before one trial
	// Spawn is let through; 0 means 30 s.
	BreakerCooldown time.Duration
	Logger          *slog.Logger
	// Reserve, when set, is told the host:port of every CDP port of a
	// browser the host starts, as it starts, and the release it returns
	// is called when that browser goes: no session's page may open the
	// port (its /json lists and closes every session's pages).
	Reserve func(addr string) (release func())
	// Clock times the host's own waits: spawn retry backoffs and the delay
	// before relaunching a crash-looping browser. nil is the real clock;
	// Worker.Clock times the workers' stops.
	Clock clock.Clock
}

const (
	defaultSpawnAttempts = 3
	defaultSpawnBackoff  = 500 * time.Millisecond
	// relaunchBackoffMax caps the wait between failed browser relaunches.
	relaunchBackoffMax = 30 * time.Second
	// stableUptime is how long a browser must run for its death not to
	// count towards a crash loop.
	stableUptime = 30 * time.Second
	// watchStopTimeout bounds stopping a worker whose browser died.
	watchStopTimeout = 5 * time.Second
)

// Host owns the browser the workers share and spawns workers on it. A
// browser that dies takes the workers connected to it down with it (their
// Done closes, which the session layer treats as a crash) and is relaunched
// at once in the background, or on the next spawn, whichever comes first.
// Spawn retries failed starts and sits behind a circuit breaker.
type Host struct {
	cfg   HostConfig
	log   *slog.Logger
	clock clock.Clock

	crashes atomic.Int64 // unplanned exits of the shared browser

	// spawns bounds concurrent worker starts: on a small machine twenty
	// node processes starting and attaching to one browser at once all
	// time out together; a few at a time all finish.
	spawns chan struct{}
	// launching serialises browser launches; a channel so that waiting
	// for one honours ctx.
	launching chan struct{}
	breaker   *breaker
	// launchBrowser starts a shared browser (h.launch; tests fake it).
	launchBrowser func(context.Context) (*Browser, error)

	// life ends at Close: background relaunches and in-flight launches stop.
	life     context.Context
	stopLife context.CancelFunc
	// bg counts browser supervisors and worker watchers; Add only under mu
	// while !closed, so Close's Wait never races an Add.
	bg sync.WaitGroup

	mu          sync.Mutex
	browser     *Browser
	closed      bool
	exit        *browserExit // the last unplanned browser exit
	relaunchErr error        // why the last relaunch failed; nil once one works
	youngDeaths int          // browsers in a row that died before stableUptime
	// runtimeDir holds keep-group.js for per-session workers.
	runtimeDir string
	preload    string
	// nodeLost has a channel per browser node with workers on it, closed
	// when that node goes down (Nodes only).
	nodeLost map[string]chan struct{}
}

// browserExit is what /health says about a browser that died on its own.
type browserExit struct {
	pid    int
	at     time.Time
	uptime time.Duration
	err    error
	stderr string // its last stderr line
}

// ErrHostClosed is returned by Spawn after Close.
var ErrHostClosed = errors.New("browser host is closed")

// ErrNoBrowser is wrapped by Spawn's error when the worker itself started
// but could not reach its browser: the browser's fault, not the worker
// command's.
var ErrNoBrowser = errors.New("the worker could not reach the browser")

// NewHost returns a Host; Start launches its browser.
func NewHost(cfg HostConfig) *Host {
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	if cfg.Browser.TempDir == "" {
		cfg.Browser.TempDir = cfg.TempDir
	}
	life, stop := context.WithCancel(context.Background())
	h := &Host{
		cfg:       cfg,
		log:       log,
		clock:     clock.Or(cfg.Clock),
		spawns:    make(chan struct{}, max(2, 2*runtime.NumCPU())),
		launching: make(chan struct{}, 1),
		breaker:   newBreaker(cfg.BreakerThreshold, cfg.BreakerCooldown),
		life:      life,
		stopLife:  stop,
	}
	h.launchBrowser = h.launch
	if cfg.Nodes != nil {
		h.nodeLost = map[string]chan struct{}{}
		cfg.Nodes.OnDown(h.nodeDown)
	}
	return h
}

// instanceEnv is the marker every child of this host carries, if any.
func (h *Host) instanceEnv() []string {
	if h.cfg.InstanceID == "" {
		return nil
	}
	return []string{InstanceEnv + "=" + h.cfg.InstanceID}
}

// Start launches the shared browser (shared mode only) so that a missing or
// broken Chromium fails the start, not the first call.
func (h *Host) Start(ctx context.Context) error {
	if h.cfg.RemoteCDPEndpoint != "" || h.cfg.Nodes != nil {
		return nil
	}
	if h.cfg.PerSession {
		_, _, err := h.runtime()
		return err
	}
	_, _, err := h.endpoint(ctx)
	return err
}

// runtime returns the host's own directory, made on first use and removed
// by Close: keep-group.js, which keeps a per-session worker's browser (that
// Playwright launches detached) in the worker's process group, so stopping
// the worker stops its browser; and the workers' TMPDIR, so what they and
// their browsers leave there (Playwright's sockets, a killed browser's
// profile) goes with the host.
func (h *Host) runtime() (dir, preload string, err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return "", "", ErrHostClosed
	}
	if h.runtimeDir != "" {
		return h.runtimeDir, h.preload, nil
	}
	dir, err = os.MkdirTemp(h.cfg.TempDir, "pwp-host-")
	if err != nil {
		return "", "", fmt.Errorf("host runtime dir: %w", err)
	}
	preload, err = writeRuntimeFile(dir, "keep-group.js", keepGroupJS)
	if err != nil {
		os.RemoveAll(dir)
		return "", "", err
	}
	h.runtimeDir, h.preload = dir, preload
	return dir, preload, nil
}

// endpoint returns a worker configuration pointing at the shared browser,
// and that browser (nil for a remote one), relaunching a browser that died.
func (h *Host) endpoint(ctx context.Context) (WorkerConfig, *Browser, error) {
	cfg := h.cfg.Worker
	if h.cfg.RemoteCDPEndpoint != "" {
		cfg.CDPEndpoint = h.cfg.RemoteCDPEndpoint
		return cfg, nil, nil
	}
	// Fast path: a live browser needs no launch slot, so spawns do not
	// queue behind a relaunch they have no part in.
	if b, err := h.liveBrowser(); err != nil || b != nil {
		return withBrowser(cfg, b), b, err
	}
	select {
	case h.launching <- struct{}{}:
		defer func() { <-h.launching }()
	case <-ctx.Done():
		return cfg, nil, fmt.Errorf("waiting for the browser to launch: %w", ctx.Err())
	case <-h.life.Done():
		return cfg, nil, ErrHostClosed
	}
	// Someone else may have launched it while we waited.
	if b, err := h.liveBrowser(); err != nil || b != nil {
		return withBrowser(cfg, b), b, err
	}
	// A launch must not outlive Close, whoever's ctx it runs under.
	lctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(h.life, cancel)
	defer stop()
	b, err := h.launchBrowser(lctx)
	if err != nil {
		if h.life.Err() != nil {
			return cfg, nil, ErrHostClosed
		}
		return cfg, nil, err
	}
	b.release = h.reserve(b.DebugEndpoint())
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		b.closeAfterFailedStart(ctx)
		return cfg, nil, ErrHostClosed
	}
	h.browser, h.relaunchErr = b, nil
	h.bg.Add(1)
	h.mu.Unlock()
	go h.supervise(b)
	return withBrowser(cfg, b), b, nil
}

func withBrowser(cfg WorkerConfig, b *Browser) WorkerConfig {
	if b != nil {
		cfg.PlaywrightEndpoint, cfg.CDPEndpoint = b.PlaywrightEndpoint(), b.CDPEndpoint()
	}
	return cfg
}

// liveBrowser returns the running browser, or nil when there is none; a
// browser found dead is recorded, stopped (its profile removed) and dropped.
func (h *Host) liveBrowser() (*Browser, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, ErrHostClosed
	}
	b := h.browser
	if b == nil {
		return nil, nil
	}
	select {
	case <-b.Done():
	default:
		return b, nil
	}
	h.noteExitLocked(b)
	h.browser = nil
	// Its processes are gone and reaped: Close only removes the profile.
	ctx, cancel := context.WithTimeout(context.Background(), stopStepTimeout)
	defer cancel()
	_ = b.Close(ctx)
	return nil, nil
}

// noteExitLocked records and logs the unplanned exit of b, the current
// browser, once. mu must be held.
func (h *Host) noteExitLocked(b *Browser) {
	if h.exit != nil && h.exit.pid == b.PID() {
		return
	}
	e := &browserExit{pid: b.PID(), at: time.Now(), uptime: time.Since(b.started), err: b.ExitErr(), stderr: b.LastStderrLine()}
	h.exit = e
	h.crashes.Add(1)
	h.log.Error("browser exited unexpectedly; its workers are stopped and it is relaunched",
		"pid", e.pid, "browser_pid", b.BrowserPID(), "exit", e.err, "uptime", e.uptime.Round(time.Millisecond), "stderr", e.stderr)
}

// supervise waits for b to die and relaunches it at once (after a growing
// delay when it keeps dying young) rather than on the next spawn: sessions
// whose workers died with it restart sooner, and /health recovers by itself.
func (h *Host) supervise(b *Browser) {
	defer h.bg.Done()
	select {
	case <-b.Done():
	case <-h.life.Done():
		return
	}
	h.mu.Lock()
	if h.closed || h.browser != b {
		h.mu.Unlock()
		return // stopped on purpose, or already replaced by a spawn
	}
	h.noteExitLocked(b)
	h.mu.Unlock()

	// One crash is relaunched at once; a browser that keeps dying young is
	// crash-looping and gets a growing delay.
	var delay time.Duration
	h.mu.Lock()
	if time.Since(b.started) < stableUptime {
		h.youngDeaths++
	} else {
		h.youngDeaths = 0
	}
	if h.youngDeaths > 1 {
		delay = min(time.Second<<min(h.youngDeaths-2, 5), relaunchBackoffMax)
	}
	h.mu.Unlock()
	for {
		if delay > 0 {
			t := h.clock.NewTimer(delay)
			select {
			case <-t.C():
			case <-h.life.Done():
				t.Stop()
				return
			}
		}
		ctx, cancel := context.WithTimeout(h.life, browserStartTimeout+10*time.Second)
		_, nb, err := h.endpoint(ctx)
		cancel()
		if err == nil {
			h.log.Info("browser relaunched", "pid", nb.PID(), "after", b.PID())
			return
		}
		if errors.Is(err, ErrHostClosed) || h.life.Err() != nil {
			return
		}
		delay = min(max(2*delay, time.Second), relaunchBackoffMax)
		h.mu.Lock()
		h.relaunchErr = err
		h.mu.Unlock()
		h.log.Error("relaunching the browser failed", "err", err, "retry_in", delay)
	}
}

// reserve hands the host:port of a CDP endpoint to HostConfig.Reserve
// and returns its release (a no-op when there is nothing to release).
func (h *Host) reserve(endpoint string) func() {
	u, err := url.Parse(endpoint)
	if h.cfg.Reserve == nil || endpoint == "" || err != nil || u.Port() == "" {
		return func() {}
	}
	if release := h.cfg.Reserve(u.Host); release != nil {
		return release
	}
	return func() {}
}

// launch starts the shared browser: under a browser server when the
// workers' playwright-core can be found, else plain Chromium over CDP.
func (h *Host) launch(ctx context.Context) (*Browser, error) {
	cfg := h.cfg.Browser
	cfg.Env = append(slices.Clone(cfg.Env), h.instanceEnv()...)
	cfg.DebugPort = true
	if !h.cfg.ShareOverCDP {
		from, err := PlaywrightFrom(h.cfg.Worker.Command)
		if err == nil {
			return LaunchBrowserServer(ctx, cfg, h.cfg.Node, from)
		}
		h.log.Warn("sharing the browser over CDP, which slows as sessions grow", "reason", err)
	}
	return LaunchBrowser(ctx, cfg)
}

// Spawn starts one worker with its own output directory and BrowserContext,
// connected to its browser: the connection (1–2 s, more as sessions grow) is
// paid here, in the warm pool, rather than by the session's first call.
//
// A failed start is retried (SpawnAttempts, with exponential backoff within
// ctx). Spawns that fail in a row open a circuit breaker: Spawn then fails
// fast with an error matching ErrCircuitOpen until the cooldown ends and a
// trial start succeeds. A worker on the shared browser is stopped when that
// browser dies.
func (h *Host) Spawn(ctx context.Context) (*Worker, error) {
	trial, err := h.breaker.allow()
	if err != nil {
		return nil, err
	}
	w, err := h.spawnRetrying(ctx)
	if err != nil && (errors.Is(err, ErrHostClosed) || ctx.Err() != nil && errors.Is(err, ctx.Err()) || isPlacement(err)) {
		// The caller gave up or the host is closing: that says nothing
		// about whether workers can start.
		h.breaker.abandon(trial)
		return nil, err
	}
	if opened, closed := h.breaker.done(trial, err); opened {
		h.log.Error("circuit breaker open: worker starts keep failing; spawns fail fast until the cooldown ends",
			"cooldown", h.breaker.cooldown, "err", err)
	} else if closed {
		h.log.Info("circuit breaker closed: a worker started again")
	}
	return w, err
}

// BrowserCrashes counts unplanned exits of the shared browser.
func (h *Host) BrowserCrashes() int64 { return h.crashes.Load() }

// CheckCircuitBreaker is nil while Spawn's circuit breaker is closed; else
// it says why it opened and when it lets a start through, for /health.
func (h *Host) CheckCircuitBreaker(context.Context) error {
	return h.breaker.check()
}

// spawnRetrying runs spawnOnce up to SpawnAttempts times.
func (h *Host) spawnRetrying(ctx context.Context) (*Worker, error) {
	attempts := h.cfg.SpawnAttempts
	if attempts <= 0 {
		attempts = defaultSpawnAttempts
	}
	backoff := h.cfg.SpawnBackoff
	if backoff <= 0 {
		backoff = defaultSpawnBackoff
	}
	for attempt := 1; ; attempt++ {
		w, err := h.spawnOnce(ctx)
		if err == nil {
			return w, nil
		}
		if errors.Is(err, ErrHostClosed) || ctx.Err() != nil || isPlacement(err) {
			return nil, err
		}
		if attempt >= attempts {
			if attempts > 1 {
				err = fmt.Errorf("%d attempts failed, last: %w", attempts, err)
			}
			return nil, err
		}
		h.log.Warn("worker start failed; retrying", "attempt", attempt, "of", attempts, "retry_in", backoff, "err", err)
		t := h.clock.NewTimer(backoff)
		select {
		case <-t.C():
		case <-ctx.Done():
			// The failure stands (and counts); the wait was the caller's.
			t.Stop()
			return nil, fmt.Errorf("%d of %d attempts failed before %v, last: %w", attempt, attempts, ctx.Err(), err)
		case <-h.life.Done():
			t.Stop()
			return nil, ErrHostClosed
		}
		backoff *= 2
	}
}

// spawnOnce is one attempt at starting a worker.
func (h *Host) spawnOnce(ctx context.Context) (*Worker, error) {
	// select picks at random among ready cases: without this, a caller
	// that already gave up could still start a process.
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	select {
	case h.spawns <- struct{}{}:
		defer func() { <-h.spawns }()
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	runtimeDir, preload, err := h.runtime()
	if err != nil {
		return nil, err
	}
	cfg, err := h.shapeWorker(h.cfg.Worker, ShapeFrom(ctx))
	if err != nil {
		return nil, err
	}
	var browser *Browser
	var lease *nodes.Lease
	debug := h.cfg.RemoteCDPEndpoint
	switch {
	case h.cfg.PerSession:
		cfg.Env = append(slices.Clone(cfg.Env), nodeRequire(preload))
		cfg.DebugPort = true
	case h.cfg.Nodes != nil:
		if cfg, lease, err = h.placeOnNode(ctx, cfg); err != nil {
			return nil, err
		}
	default:
		var shared WorkerConfig
		if shared, browser, err = h.endpoint(ctx); err != nil {
			return nil, err
		}
		cfg.CDPEndpoint, cfg.PlaywrightEndpoint = shared.CDPEndpoint, shared.PlaywrightEndpoint
		if browser != nil {
			debug = browser.DebugEndpoint()
		}
	}
	cfg.Env = append(slices.Clone(cfg.Env), h.instanceEnv()...)
	cfg.Env = append(cfg.Env, tmpdirEnv(runtimeDir, h.log)...)
	dir, err := os.MkdirTemp(h.cfg.TempDir, "pwproxy-worker-*")
	if err != nil {
		if lease != nil {
			lease.Release()
		}
		return nil, fmt.Errorf("creating worker output dir: %w", err)
	}
	cfg.OutputDir, cfg.Dir = dir, dir
	w, err := StartWorker(ctx, cfg)
	if err != nil {
		if lease != nil {
			lease.Release()
		}
		os.RemoveAll(dir)
		return nil, err
	}
	w.debug = debug
	stop := func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = w.Close(cctx)
	}
	// Watch before connecting: a browser that dies during the connect
	// must not leave a worker behind that the caller never sees.
	if browser != nil && !h.watch(w, browser) || lease != nil && !h.trackNode(w, lease) {
		stop()
		return nil, ErrHostClosed
	}
	if err := connect(ctx, w); err != nil {
		stop()
		return nil, fmt.Errorf("%w (worker %d): %w", ErrNoBrowser, w.PID(), err)
	}
	if h.cfg.PerSession && !h.ownDebugPort(ctx, w) {
		stop()
		return nil, ErrHostClosed
	}
	return w, nil
}

// debugPortWait bounds the wait for a per-session browser, launched by
// now, to write its CDP port.
const (
	debugPortWait = 5 * time.Second
	debugPortPoll = 50 * time.Millisecond
)

// ownDebugPort finds the CDP port of w's own browser (launched by connect)
// for DebugEndpoint and reserves it until w or the host ends. A port not
// found leaves the session without a live view, not without a worker.
// false means the host is closed.
func (h *Host) ownDebugPort(ctx context.Context, w *Worker) bool {
	// Nothing to find without /proc, or when the operator's configuration
	// file replaces the one that opens the port.
	tries := 0
	if findsDebugPort && !hasFlag(h.cfg.Worker.ExtraArgs, "--config") {
		tries = int(debugPortWait / debugPortPoll)
	}
	w.debug = groupDebugEndpoint(w.PID())
	for ; w.debug == "" && tries > 0; tries-- {
		t := h.clock.NewTimer(debugPortPoll)
		select {
		case <-t.C():
		case <-ctx.Done():
			t.Stop()
			tries = 0
			continue
		}
		w.debug = groupDebugEndpoint(w.PID())
	}
	if w.debug == "" {
		h.log.Warn("per-session browser: its CDP port was not found; no live view of this session", "worker_pid", w.PID())
	}
	release := h.reserve(w.debug)
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		release()
		return false
	}
	h.bg.Add(1)
	h.mu.Unlock()
	go func() {
		defer h.bg.Done()
		defer release()
		select {
		case <-w.Done():
		case <-h.life.Done():
		}
	}()
	return true
}

// watch stops w when b, the browser it is connected to, dies: the worker
// cannot serve a call without it, and a worker's exit is what the session
// layer already handles as a crash (restart with the saved state). The
// goroutine ends with whichever goes first. false means the host is closed.
func (h *Host) watch(w *Worker, b *Browser) bool {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return false
	}
	h.bg.Add(1)
	h.mu.Unlock()
	go func() {
		defer h.bg.Done()
		select {
		case <-w.Done():
			return
		case <-b.Done():
		}
		h.log.Warn("browser exited; stopping a worker connected to it", "worker_pid", w.PID(), "browser_pid", b.PID())
		w.lostBrowser.Store(true)
		ctx, cancel := context.WithTimeout(context.Background(), watchStopTimeout)
		defer cancel()
		_ = w.Close(ctx)
	}()
	return true
}

// connect makes the worker open its browser context with the cheapest tool
// that needs one. Upstream versions without browser_tabs connect lazily.
func connect(ctx context.Context, w *Worker) error {
	for _, t := range w.Tools() {
		if t.Name == toolTabs {
			raw, err := w.CallTool(ctx, toolTabs, json.RawMessage(`{"action":"list"}`))
			if err != nil {
				return err
			}
			if p, err := answer.Parse(raw); err == nil && p.IsError {
				return &ToolError{Tool: toolTabs, Message: p.ErrorText}
			}
			return nil
		}
	}
	return nil
}

// Check reports whether workers can reach a browser, for /health. After a
// crash it says when and how the browser died and where its relaunch is.
func (h *Host) Check(ctx context.Context) error {
	if ep := h.cfg.RemoteCDPEndpoint; ep != "" {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(ep, "/")+"/json/version", nil)
		if err != nil {
			return fmt.Errorf("remote CDP endpoint %q: %w", ep, err)
		}
		resp, err := (&http.Client{Timeout: 3 * time.Second}).Do(req)
		if err != nil {
			return fmt.Errorf("remote CDP endpoint unreachable: %w", err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("remote CDP endpoint answered %s", resp.Status)
		}
		return nil
	}
	if h.cfg.PerSession {
		return nil
	}
	if h.cfg.Nodes != nil {
		return h.checkNodes()
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return ErrHostClosed
	}
	if b := h.browser; b != nil {
		select {
		case <-b.Done():
			// Not yet noticed by its supervisor: say what is known.
			e := browserExit{pid: b.PID(), at: time.Now(), uptime: time.Since(b.started), err: b.ExitErr(), stderr: b.LastStderrLine()}
			return h.exitErrLocked(&e)
		default:
			return nil
		}
	}
	if h.exit == nil {
		return errors.New("browser not running")
	}
	return h.exitErrLocked(h.exit)
}

// exitErrLocked describes a dead browser and its relaunch; mu must be held.
func (h *Host) exitErrLocked(e *browserExit) error {
	msg := fmt.Sprintf("browser (pid %d) exited unexpectedly %s ago after running %s (%v",
		e.pid, time.Since(e.at).Round(time.Second), e.uptime.Round(time.Second), e.err)
	if e.stderr != "" {
		msg += ": " + e.stderr
	}
	msg += "); its workers were stopped"
	if h.relaunchErr != nil {
		return fmt.Errorf("%s; relaunching it failed (retrying): %w", msg, h.relaunchErr)
	}
	return errors.New(msg + "; relaunching it")
}

// Close stops the browser and waits for the host's background work.
// Workers are the session manager's to stop; any still connected to the
// shared browser stop with it.
func (h *Host) Close(ctx context.Context) error {
	h.mu.Lock()
	h.closed = true
	b := h.browser
	h.browser = nil
	runtimeDir := h.runtimeDir
	h.runtimeDir = ""
	h.mu.Unlock()
	h.stopLife()

	var err error
	if b != nil {
		err = b.Close(ctx)
	}
	if runtimeDir != "" {
		err = errors.Join(err, os.RemoveAll(runtimeDir))
	}
	// A launch in flight ends with life and closes what it started; after
	// it, the watchers of workers on the stopped browser finish.
	select {
	case h.launching <- struct{}{}:
		<-h.launching
	case <-ctx.Done():
		return errors.Join(err, fmt.Errorf("waiting for a browser launch to stop: %w", ctx.Err()))
	}
	done := make(chan struct{})
	go func() {
		h.bg.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-ctx.Done():
		err = errors.Join(err, fmt.Errorf("waiting for the browser host's watchers: %w", ctx.Err()))
	}
	return err
}

// lastLine returns the last non-empty line of s, at most n bytes of it.
func lastLine(s string, n int) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return tail(s, n)
}
