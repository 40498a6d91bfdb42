package upstream

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

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
	// Clock times the host's own waits: spawn retry backoffs, the delay
	// before relaunching a crash-looping browser, session hosts' pings.
	// nil is the real clock; Worker.Clock times the workers' stops.
	Clock clock.Clock
	// SessionsPerWorker (K) above 1 runs sessions K to a node process
	// (session hosts, SpawnSession) where sessions share that host's own
	// browser (or are placed on browser nodes), under a Playwright browser
	// server; elsewhere (a remote CDP endpoint, per-session browsers), and
	// at 0 or 1, every session is a worker process of its own.
	SessionsPerWorker int
	// PingInterval is how often each session host is pinged; one that
	// does not answer within the interval (bounded to 1–10 s) is killed.
	// 0 pings none.
	PingInterval time.Duration
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
// Spawn retries failed starts and sits behind a circuit breaker. With
// session hosts (SpawnSession), each host runs its own browser instead and
// is stopped with it: a browser that dies ends its host's sessions alone.
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
	// startSessionHost starts a session host (StartSessionHost; tests
	// fake it).
	startSessionHost func(context.Context, SessionHostConfig) (*SessionHost, error)

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
	// sessionHosts are the node processes hosting sessions (hosted mode).
	sessionHosts []*pooledHost
	// hostStarts serialises session host starts.
	hostStarts chan struct{}
	// hostStartErr is why the last session host start failed; nil once
	// one works.
	hostStartErr error
}

// browserExit is what /health says about a browser that died on its own.
type browserExit struct {
	pid     int
	hostPID int // the session host it ran under; 0 for the shared browser
	at      time.Time
	uptime  time.Duration
	err     error
	stderr  string // its last stderr line
}

// ErrHostClosed is returned by Spawn after Close.
var ErrHostClosed = errors.New("browser host is closed")

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
		cfg:        cfg,
		log:        log,
		clock:      clock.Or(cfg.Clock),
		spawns:     make(chan struct{}, max(2, 2*runtime.NumCPU())),
		launching:  make(chan struct{}, 1),
		hostStarts: make(chan struct{}, 1),
		breaker:    newBreaker(cfg.BreakerThreshold, cfg.BreakerCooldown),
		life:       life,
		stopLife:   stop,
	}
	h.launchBrowser = h.launch
	h.startSessionHost = StartSessionHost
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

// Start launches the shared browser (shared mode), or the first session
// host with its own, so that a missing or broken Chromium fails the start,
// not the first call.
func (h *Host) Start(ctx context.Context) error {
	if h.cfg.RemoteCDPEndpoint != "" || h.cfg.Nodes != nil {
		return nil
	}
	if h.ownBrowsers() {
		return h.startFirstHost(ctx)
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

// BrowserCrashes counts unplanned exits of the shared browser and of
// session hosts' own browsers.
func (h *Host) BrowserCrashes() int64 { return h.crashes.Load() }

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
	if h.ownBrowsers() {
		return h.checkSessionHosts()
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

	// Hosts first: their sessions close their contexts on a live browser.
	err := h.closeSessionHosts(ctx)
	if b != nil {
		err = errors.Join(err, b.Close(ctx))
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

// background runs f in the host's background work, which Close waits
// for; false, and f not run, when the host is closed.
func (h *Host) background(f func()) bool {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return false
	}
	h.bg.Add(1)
	h.mu.Unlock()
	go func() {
		defer h.bg.Done()
		f()
	}()
	return true
}

// lastLine returns the last non-empty line of s, at most n bytes of it.
func lastLine(s string, n int) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return tail(s, n)
}
