package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"
)

// HostConfig configures a Host.
type HostConfig struct {
	Browser BrowserConfig
	// RemoteCDPEndpoint, when set, points every worker at an existing
	// browser instead of launching one.
	RemoteCDPEndpoint string
	// PerSession makes each worker launch its own browser.
	PerSession bool
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
	Logger *slog.Logger
}

// Host owns the browser the workers share and spawns workers on it. A dead
// browser is relaunched on the next spawn.
type Host struct {
	cfg HostConfig
	log *slog.Logger

	// spawns bounds concurrent worker starts: on a small machine twenty
	// node processes starting and attaching to one browser at once all
	// time out together; a few at a time all finish.
	spawns chan struct{}

	mu      sync.Mutex
	browser *Browser
	closed  bool
	// runtimeDir holds keep-group.js for per-session workers.
	runtimeDir string
	preload    string
}

// ErrHostClosed is returned by Spawn after Close.
var ErrHostClosed = errors.New("browser host is closed")

// NewHost returns a Host; Start launches its browser.
func NewHost(cfg HostConfig) *Host {
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	return &Host{cfg: cfg, log: log, spawns: make(chan struct{}, max(2, 2*runtime.NumCPU()))}
}

// Start launches the shared browser (shared mode only) so that a missing or
// broken Chromium fails the start, not the first call.
func (h *Host) Start(ctx context.Context) error {
	if h.cfg.RemoteCDPEndpoint != "" {
		return nil
	}
	if h.cfg.PerSession {
		// Playwright launches each worker's browser detached; the preload
		// keeps it in the worker's process group, so stopping the worker
		// stops its browser.
		h.mu.Lock()
		defer h.mu.Unlock()
		if h.closed {
			return ErrHostClosed
		}
		if h.runtimeDir != "" {
			return nil
		}
		dir, err := os.MkdirTemp("", "pwp-host-")
		if err != nil {
			return fmt.Errorf("host runtime dir: %w", err)
		}
		p, err := writeRuntimeFile(dir, "keep-group.js", keepGroupJS)
		if err != nil {
			os.RemoveAll(dir)
			return err
		}
		h.runtimeDir, h.preload = dir, p
		return nil
	}
	_, err := h.endpoint(ctx)
	return err
}

// endpoint returns a worker configuration pointing at the shared browser,
// relaunching a browser that died.
func (h *Host) endpoint(ctx context.Context) (WorkerConfig, error) {
	cfg := h.cfg.Worker
	if h.cfg.RemoteCDPEndpoint != "" {
		cfg.CDPEndpoint = h.cfg.RemoteCDPEndpoint
		return cfg, nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return cfg, ErrHostClosed
	}
	if h.browser != nil {
		select {
		case <-h.browser.Done():
			h.log.Warn("browser exited; relaunching", "pid", h.browser.PID(), "exit", h.browser.ExitErr())
			_ = h.browser.Close(ctx)
			h.browser = nil
		default:
		}
	}
	if h.browser == nil {
		b, err := h.launch(ctx)
		if err != nil {
			return cfg, err
		}
		h.browser = b
	}
	cfg.PlaywrightEndpoint, cfg.CDPEndpoint = h.browser.PlaywrightEndpoint(), h.browser.CDPEndpoint()
	return cfg, nil
}

// launch starts the shared browser: under a browser server when the
// workers' playwright-core can be found, else plain Chromium over CDP.
func (h *Host) launch(ctx context.Context) (*Browser, error) {
	if !h.cfg.ShareOverCDP {
		from, err := PlaywrightFrom(h.cfg.Worker.Command)
		if err == nil {
			return LaunchBrowserServer(ctx, h.cfg.Browser, h.cfg.Node, from)
		}
		h.log.Warn("sharing the browser over CDP, which slows as sessions grow", "reason", err)
	}
	return LaunchBrowser(ctx, h.cfg.Browser)
}

// Spawn starts one worker with its own output directory and BrowserContext,
// connected to its browser: the connection (1–2 s, more as sessions grow) is
// paid here, in the warm pool, rather than by the session's first call.
func (h *Host) Spawn(ctx context.Context) (*Worker, error) {
	select {
	case h.spawns <- struct{}{}:
		defer func() { <-h.spawns }()
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	cfg := h.cfg.Worker
	if h.cfg.PerSession {
		if err := h.Start(ctx); err != nil {
			return nil, err
		}
		cfg.Env = append(slices.Clone(cfg.Env), nodeRequire(h.preload))
	} else {
		var err error
		if cfg, err = h.endpoint(ctx); err != nil {
			return nil, err
		}
	}
	dir, err := os.MkdirTemp("", "pwproxy-worker-*")
	if err != nil {
		return nil, fmt.Errorf("creating worker output dir: %w", err)
	}
	cfg.OutputDir, cfg.Dir = dir, dir
	w, err := StartWorker(ctx, cfg)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	if err := connect(ctx, w); err != nil {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = w.Close(cctx)
		return nil, fmt.Errorf("connecting worker %d to the browser: %w", w.PID(), err)
	}
	return w, nil
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
			if p, err := Parse(raw); err == nil && p.IsError {
				return &ToolError{Tool: toolTabs, Message: p.ErrorText}
			}
			return nil
		}
	}
	return nil
}

// Check reports whether workers can reach a browser, for /health.
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
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.browser == nil {
		return errors.New("browser not running")
	}
	select {
	case <-h.browser.Done():
		return errors.New("browser exited; it is relaunched on the next session start")
	default:
		return nil
	}
}

// Close stops the browser. Workers are the session manager's to stop.
func (h *Host) Close(ctx context.Context) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	var err error
	if h.browser != nil {
		err = h.browser.Close(ctx)
		h.browser = nil
	}
	if h.runtimeDir != "" {
		err = errors.Join(err, os.RemoveAll(h.runtimeDir))
		h.runtimeDir = ""
	}
	return err
}
