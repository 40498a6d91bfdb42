package upstream

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"time"
)

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
