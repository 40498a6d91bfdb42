package proxyserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"

	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/config"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/upstream"
)

// NodeOptions configures RunBrowserNode.
type NodeOptions struct {
	// Addr is the host:port to listen on; "" picks a free loopback port.
	Addr string
	// Path is the WebSocket path; "" makes a random one.
	Path string
	// Root is where the project's node_modules is looked for (as Serve).
	Root   string
	Logger *slog.Logger
	// OnListen receives the endpoint to put in PROXY_BROWSER_ENDPOINTS.
	OnListen func(endpoint string)
}

// ErrNodeBrowserExited is returned when a browser node's browser ends on its
// own.
var ErrNodeBrowserExited = errors.New("the browser node's browser exited")

// RunBrowserNode runs one Playwright browser server on this machine's
// Chromium, the same server the shared browser is, until ctx ends or the
// browser exits: a node another proxy-server can place sessions on.
func RunBrowserNode(ctx context.Context, cfg config.Config, opts NodeOptions) error {
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	command, err := workerCommand(cfg, opts.Root)
	if err != nil {
		return err
	}
	from, err := upstream.PlaywrightFrom(command)
	if err != nil {
		return fmt.Errorf("a browser node runs Playwright's server from the project's node_modules: %w", err)
	}
	tempDir, err := newTempDir()
	if err != nil {
		return err
	}
	defer func() {
		if err := os.RemoveAll(tempDir); err != nil {
			log.Warn("removing the temp directory", "dir", tempDir, "err", err)
		}
	}()
	b, err := upstream.LaunchBrowserServer(ctx, upstream.BrowserConfig{
		Executable:     cfg.BrowserExecutable,
		Headless:       cfg.Headless,
		OptimizeMemory: cfg.BrowserOptimizeMemory,
		TempDir:        tempDir,
		ServerAddr:     opts.Addr,
		ServerPath:     opts.Path,
		Logger:         log,
	}, "", from)
	if err != nil {
		return fmt.Errorf("starting the browser node: %w", err)
	}
	if opts.OnListen != nil {
		opts.OnListen(b.PlaywrightEndpoint())
	}
	select {
	case <-ctx.Done():
	case <-b.Done():
	}
	exited := ctx.Err() == nil
	cctx, cancel := context.WithTimeout(context.Background(), ShutdownBudget)
	defer cancel()
	if err := b.Close(cctx); err != nil {
		log.Error("stopping the browser node", "err", err)
	}
	if exited {
		return fmt.Errorf("%w: %s", ErrNodeBrowserExited, b.LastStderrLine())
	}
	return nil
}
