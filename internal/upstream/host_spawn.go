package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/answer"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/nodes"
)

// ErrNoBrowser is wrapped by Spawn's error when the worker itself started
// but could not reach its browser: the browser's fault, not the worker
// command's.
var ErrNoBrowser = errors.New("the worker could not reach the browser")

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
	return spawnGuarded(ctx, h, h.spawnOnce)
}

// spawnGuarded runs once behind the circuit breaker, retrying.
func spawnGuarded[W any](ctx context.Context, h *Host, once func(context.Context) (W, error)) (W, error) {
	var none W
	trial, err := h.breaker.allow()
	if err != nil {
		return none, err
	}
	w, err := spawnRetrying(ctx, h, once)
	if err != nil && (errors.Is(err, ErrHostClosed) || ctx.Err() != nil && errors.Is(err, ctx.Err()) || isPlacement(err)) {
		// The caller gave up or the host is closing: that says nothing
		// about whether workers can start.
		h.breaker.abandon(trial)
		return none, err
	}
	if opened, closed := h.breaker.done(trial, err); opened {
		h.log.Error("circuit breaker open: worker starts keep failing; spawns fail fast until the cooldown ends",
			"cooldown", h.breaker.cooldown, "err", err)
	} else if closed {
		h.log.Info("circuit breaker closed: a worker started again")
	}
	return w, err
}

// CheckCircuitBreaker is nil while Spawn's circuit breaker is closed; else
// it says why it opened and when it lets a start through, for /health.
func (h *Host) CheckCircuitBreaker(context.Context) error {
	return h.breaker.check()
}

// spawnRetrying runs once up to SpawnAttempts times.
func spawnRetrying[W any](ctx context.Context, h *Host, once func(context.Context) (W, error)) (W, error) {
	var none W
	attempts := h.cfg.SpawnAttempts
	if attempts <= 0 {
		attempts = defaultSpawnAttempts
	}
	backoff := h.cfg.SpawnBackoff
	if backoff <= 0 {
		backoff = defaultSpawnBackoff
	}
	for attempt := 1; ; attempt++ {
		w, err := once(ctx)
		if err == nil {
			return w, nil
		}
		if errors.Is(err, ErrHostClosed) || ctx.Err() != nil || isPlacement(err) {
			return none, err
		}
		if attempt >= attempts {
			if attempts > 1 {
				err = fmt.Errorf("%d attempts failed, last: %w", attempts, err)
			}
			return none, err
		}
		h.log.Warn("worker start failed; retrying", "attempt", attempt, "of", attempts, "retry_in", backoff, "err", err)
		t := h.clock.NewTimer(backoff)
		select {
		case <-t.C():
		case <-ctx.Done():
			// The failure stands (and counts); the wait was the caller's.
			t.Stop()
			return none, fmt.Errorf("%d of %d attempts failed before %v, last: %w", attempt, attempts, ctx.Err(), err)
		case <-h.life.Done():
			t.Stop()
			return none, ErrHostClosed
		}
		backoff *= 2
	}
}

// spawnSlot waits for one of the concurrent starts spawns allows.
func (h *Host) spawnSlot(ctx context.Context) (release func(), err error) {
	// select picks at random among ready cases: without this, a caller
	// that already gave up could still start a process.
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	select {
	case h.spawns <- struct{}{}:
		return func() { <-h.spawns }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// spawnOnce is one attempt at starting a worker.
func (h *Host) spawnOnce(ctx context.Context) (*Worker, error) {
	release, err := h.spawnSlot(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
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
	return h.background(func() {
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
	})
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
