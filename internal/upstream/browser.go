package upstream

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// browserStartTimeout bounds how long LaunchBrowser waits for Chromium to
// announce its DevTools endpoint, with room for a cold disk.
const browserStartTimeout = 30 * time.Second

// browserCandidates are tried in order on PATH, then the absolute fallbacks.
var browserCandidates = []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"}

// browserFallbacks cover a PATH that lacks /usr/bin (systemd units, cron).
var browserFallbacks = []string{"/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"}

// BrowserConfig configures the shared browser host.
type BrowserConfig struct {
	// Executable is the Chromium/Chrome binary; "" auto-detects (FindBrowser).
	Executable string
	Headless   bool
	// ExtraArgs are appended after ours, so they win where Chromium lets the
	// last flag win.
	ExtraArgs []string
	// Env is added to the environment the browser (or its browser server)
	// inherits from the proxy.
	Env []string
	// OptimizeMemory makes V8 in every renderer optimise for size
	// (PROXY_BROWSER_OPTIMIZE_MEMORY): less memory per session for fewer
	// calls/s on a heavy page (docs/BENCHMARKS.md).
	OptimizeMemory bool
	// TempDir is where the browser's directory (its profile, and the
	// TMPDIR of the browser and its helpers) is made; "" means
	// os.TempDir(). Close removes that directory.
	TempDir string
	// ServerAddr is the host:port a browser server (LaunchBrowserServer)
	// listens on; "" means a free port on 127.0.0.1. A browser node that
	// other machines' proxies reach listens on a routable address.
	ServerAddr string
	// ServerPath is the browser server's WebSocket path; "" means a
	// random one, which no one who was not told it can guess.
	ServerPath string
	// DebugPort also opens Chromium's CDP port on 127.0.0.1 under a browser
	// server (LaunchBrowser always has one), for the live view: the
	// server's own, reserved from every session's pages. A browser node
	// leaves it off: its loopback is not the proxy's to reserve.
	DebugPort bool
	Logger    *slog.Logger
}

// executable is the configured browser binary, or the one FindBrowser finds.
func (cfg BrowserConfig) executable() (string, error) {
	if cfg.Executable != "" {
		return cfg.Executable, nil
	}
	return FindBrowser()
}

// FindBrowser returns the first Chromium or Chrome found on PATH (or at the
// usual absolute paths). PROXY_BROWSER_EXECUTABLE is the caller's business.
func FindBrowser() (string, error) {
	for _, name := range browserCandidates {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	for _, p := range browserFallbacks {
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("no Chromium or Chrome found (looked for %s on PATH and %s): install one with `apt-get install chromium` or set PROXY_BROWSER_EXECUTABLE: %w",
		strings.Join(browserCandidates, ", "), strings.Join(browserFallbacks, ", "), exec.ErrNotFound)
}

// Browser is one Chromium the workers share; each worker opens its own
// BrowserContext in it (--isolated). LaunchBrowser starts Chromium itself
// and workers connect to its CDP endpoint; LaunchBrowserServer runs it under
// a Playwright browser server and workers connect to its PlaywrightEndpoint.
type Browser struct {
	proc       *process
	endpoint   string // CDP, http://127.0.0.1:PORT (LaunchBrowser)
	playwright string // ws://127.0.0.1:PORT/… (LaunchBrowserServer)
	debug      string // CDP beside a browser server, http://127.0.0.1:PORT (DebugPort)
	browserPID int    // Chromium's pid under the browser server
	stdin      *os.File
	dir        string // profile and temp files; removed by Close
	stderr     *ringBuffer
	logger     *slog.Logger
	started    time.Time

	// release gives back the reservation of the CDP port (Host.reserve);
	// Close calls it.
	release func()

	closeOnce sync.Once
	closeErr  error
}

// browserArgs are Chromium's flags when we launch it ourselves.
func browserArgs(cfg BrowserConfig, userDataDir string) []string {
	args := []string{
		"--remote-debugging-port=0",
		"--remote-debugging-address=127.0.0.1",
		"--user-data-dir=" + userDataDir,
	}
	args = append(args, chromiumFlags(cfg)...)
	if cfg.Headless {
		args = append(args, "--headless", "--hide-scrollbars", "--mute-audio")
	}
	args = append(args, cfg.ExtraArgs...)
	return append(args, "about:blank")
}

// chromiumFlags are the flags every Chromium we start gets, however it is
// started. Beyond the basics, they mirror what Playwright passes when it
// launches Chromium itself, so pages behave the same under our launcher (no
// background throttling of the many contexts that are never "visible", no
// first-run or update traffic on a machine without internet).
func chromiumFlags(cfg BrowserConfig) []string {
	args := []string{
		"--disable-gpu",
		"--disable-dev-shm-usage",
		"--disable-background-networking",
		"--disable-component-update",
		"--disable-sync",
		"--no-first-run",
		"--disable-quic",
		"--no-default-browser-check",
		// Not --disable-crashpad-for-testing, though crashpad handlers
		// setsid() out of our process group: with Chromium 156 it makes
		// every navigation fail with net::ERR_ABORTED. The handlers exit
		// with the browser; in a container PID 1 must reap them (init).
		"--disable-breakpad",
		"--disable-field-trial-config",
		"--disable-background-timer-throttling",
		"--disable-backgrounding-occluded-windows",
		"--disable-renderer-backgrounding",
		"--disable-back-forward-cache",
		"--disable-client-side-phishing-detection",
		"--disable-component-extensions-with-background-pages",
		"--disable-default-apps",
		"--disable-extensions",
		// The WebUI omnibox popups (chrome://omnibox-popup.top-chrome) get
		// a renderer of their own in every BrowserContext: memory in every
		// session for a popup a headless browser never shows.
		"--disable-features=Translate,OptimizationHints,NetworkTimeServiceQuerying,MediaRouter,DialMediaRouteProvider,HttpsUpgrades,PaintHolding,AimEnabled,LensOverlay," +
			"WebUIOmniboxPopup,WebUIOmniboxFullPopup,WebUIOmniboxAimPopup",
		"--disable-hang-monitor",
		"--disable-ipc-flooding-protection",
		"--disable-popup-blocking",
		"--disable-prompt-on-repost",
		"--disable-search-engine-choice-screen",
		"--force-color-profile=srgb",
		"--metrics-recording-only",
		"--password-store=basic",
		"--use-mock-keychain",
		"--no-service-autorun",
	}
	if cfg.OptimizeMemory {
		// Renderers are most of a session's memory (the page plus the
		// accessibility snapshot's work).
		args = append(args, "--js-flags=--optimize-for-size")
	}
	if os.Geteuid() == 0 {
		// Chromium refuses to start its sandbox as root.
		args = append(args, "--no-sandbox")
	}
	return args
}

// ChromiumFlags are the flags the proxy gives every Chromium it starts (the
// benchmark gives them to a plain @playwright/mcp's browser too, so that the
// two are compared like for like).
func ChromiumFlags() []string { return chromiumFlags(BrowserConfig{OptimizeMemory: true}) }

// LaunchBrowser starts Chromium with a throw-away profile and returns once its
// DevTools endpoint is known. ctx bounds only the start-up.
func LaunchBrowser(ctx context.Context, cfg BrowserConfig) (*Browser, error) {
	logger := loggerOr(cfg.Logger).With("component", "browser")
	exe, err := cfg.executable()
	if err != nil {
		return nil, err
	}
	// Chromium keeps its singleton socket in TMPDIR and leaves it there
	// when killed: TMPDIR=dir goes with Close like the profile inside it.
	dir, err := os.MkdirTemp(cfg.TempDir, "pwp-chromium-")
	if err != nil {
		return nil, fmt.Errorf("browser profile dir: %w", err)
	}
	profile := filepath.Join(dir, "profile")
	if err := os.Mkdir(profile, 0o700); err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("browser profile dir: %w", err)
	}
	stderrR, stderrW, err := os.Pipe()
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("browser stderr pipe: %w", err)
	}
	cmd := exec.Command(exe, browserArgs(cfg, profile)...)
	cmd.Stderr = stderrW // stdin and stdout stay /dev/null
	cmd.Env = append(childEnv(cfg.Env), tmpdirEnv(dir, logger)...)
	cmd.SysProcAttr = sysProcAttr()
	started := time.Now()
	proc, err := startProcess(cmd, nil)
	_ = stderrW.Close()
	if err != nil {
		closeFiles(stderrR)
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("start %s: %w", exe, err)
	}
	b := &Browser{proc: proc, dir: dir, stderr: newRingBuffer(stderrRingBytes), logger: logger.With("pid", proc.pid), started: started}

	found := make(chan string, 1)
	var announced atomic.Bool
	onLine := func(line string) {
		if announced.Load() {
			return
		}
		if _, ws, ok := strings.Cut(line, "DevTools listening on "); ok {
			announced.Store(true)
			found <- strings.TrimSpace(ws)
		}
	}
	go func() {
		defer closeFiles(stderrR)
		drainStderr(stderrR, b.stderr, b.logger, onLine)
	}()

	ws, err := awaitStart(ctx, b, found, "chromium", "announce its DevTools endpoint")
	if err != nil {
		return nil, err
	}
	if b.endpoint, err = cdpHTTPEndpoint(ws); err != nil {
		b.closeAfterFailedStart(ctx)
		return nil, err
	}
	b.logger.Info("browser started", "endpoint", b.endpoint, "executable", exe, "took", time.Since(started).Round(time.Millisecond))
	return b, nil
}

// awaitStart waits for a starting browser's announcement, which its output
// reader sends on found. On failure b is closed and the error carries the
// end of its stderr.
func awaitStart[T any](ctx context.Context, b *Browser, found <-chan T, who, what string) (T, error) {
	startCtx, cancel := context.WithTimeout(ctx, browserStartTimeout)
	defer cancel()
	var zero T
	var err error
	select {
	case v := <-found:
		return v, nil
	case <-b.proc.done:
		err = fmt.Errorf("%s exited before it could %s (%v); stderr: %s", who, what, b.proc.exitErr, tail(b.stderr.String(), 2048))
	case <-startCtx.Done():
		err = fmt.Errorf("%s did not %s: %w; stderr: %s", who, what, startCtx.Err(), tail(b.stderr.String(), 2048))
	}
	b.closeAfterFailedStart(ctx)
	return zero, err
}

// closeAfterFailedStart stops a browser whose start failed.
func (b *Browser) closeAfterFailedStart(ctx context.Context) {
	closeCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), stopStepTimeout)
	defer cancel()
	_ = b.Close(closeCtx)
}

// cdpHTTPEndpoint turns "ws://127.0.0.1:PORT/devtools/browser/ID" into the
// http://127.0.0.1:PORT form Playwright's connectOverCDP expects.
func cdpHTTPEndpoint(ws string) (string, error) {
	u, err := url.Parse(ws)
	if err != nil || u.Host == "" || u.Port() == "" {
		return "", fmt.Errorf("unexpected DevTools endpoint %q", ws)
	}
	return "http://" + u.Host, nil
}

// CDPEndpoint is the browser's http://127.0.0.1:PORT endpoint, or "" for a
// browser run by a browser server.
func (b *Browser) CDPEndpoint() string { return b.endpoint }

// DebugEndpoint is the browser's CDP address, http://127.0.0.1:PORT,
// whoever the workers connect through; "" when it has none (a browser
// server without DebugPort, or whose port was not found).
func (b *Browser) DebugEndpoint() string {
	if b.endpoint != "" {
		return b.endpoint
	}
	return b.debug
}

// PlaywrightEndpoint is the browser server's ws:// endpoint (workers pass it
// as --endpoint), or "" for a browser started by LaunchBrowser.
func (b *Browser) PlaywrightEndpoint() string { return b.playwright }

// PID is the id of the process we started (Chromium, or the browser
// server's node), which is also the process group id of the browser.
func (b *Browser) PID() int { return b.proc.pid }

// BrowserPID is Chromium's own pid: PID for LaunchBrowser, the browser
// server's child for LaunchBrowserServer.
func (b *Browser) BrowserPID() int {
	if b.browserPID != 0 {
		return b.browserPID
	}
	return b.proc.pid
}

// Done is closed once the browser process has exited and been reaped.
func (b *Browser) Done() <-chan struct{} { return b.proc.done }

// ExitErr is the browser's exit status once Done is closed, else nil.
func (b *Browser) ExitErr() error { return b.proc.exitStatus() }

// LastStderrLine is the last line the browser (or its server) wrote to
// stderr, at most 200 bytes of it: what it said as it died.
func (b *Browser) LastStderrLine() string { return lastLine(b.Stderr(), 200) }

// Stderr returns the last 64 KB the browser wrote to stderr.
func (b *Browser) Stderr() string { return b.stderr.String() }

// Close stops the browser's whole process group (a browser server first
// gets its stdin closed and up to 2 s; then SIGTERM, up to 2 s or ctx,
// SIGKILL), reaps it and removes its profile. Safe to call more than once and
// concurrently; later calls return the first result.
func (b *Browser) Close(ctx context.Context) error {
	b.closeOnce.Do(func() {
		start := time.Now()
		polite := b.stdin != nil
		if polite {
			// The browser server closes the browser when its stdin ends.
			closeFiles(b.stdin)
		}
		stopErr := b.proc.stop(ctx, polite)
		rmErr := os.RemoveAll(b.dir)
		if rmErr != nil {
			rmErr = fmt.Errorf("remove browser profile: %w", rmErr)
		}
		b.closeErr = errors.Join(stopErr, rmErr)
		if b.release != nil {
			b.release()
		}
		b.logger.Info("browser stopped", "exit", b.proc.exitStatus(), "took", time.Since(start).Round(time.Millisecond))
	})
	return b.closeErr
}

// chromiumTMPDIRMax is the longest TMPDIR Chromium starts in: its singleton
// socket, TMPDIR/org.chromium.Chromium.XXXXXX/SingletonSocket, must fit in
// a Unix socket address (107 bytes and a NUL), or it aborts at start.
const chromiumTMPDIRMax = 107 - len("/org.chromium.Chromium.XXXXXX/SingletonSocket")

// tmpdirEnv sets TMPDIR to dir for a process that runs Chromium, or leaves
// the inherited one (and says so) when dir is too long for Chromium: it
// then starts, but what it leaves in TMPDIR when killed is not removed
// with dir.
func tmpdirEnv(dir string, log *slog.Logger) []string {
	if len(dir) > chromiumTMPDIRMax {
		log.Warn("temp directory too long for Chromium's sockets; its temp files stay in the inherited TMPDIR", "dir", dir, "max_bytes", chromiumTMPDIRMax)
		return nil
	}
	return []string{"TMPDIR=" + dir}
}

// tail returns the last n bytes of s, for error messages.
func tail(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}
