// Command mcp-bridge is the stdio MCP server a client launches
// (`claude mcp add browser -- mcp-bridge`). It forwards every tool to
// proxy-server over HTTP; each bridge process gets its own default browser
// session, so two conversations never share a browser context.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/mark3labs/mcp-go/server"

	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/bridge"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/logging"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/mcpserver"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/proxyserver"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := NewMain().Run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "mcp-bridge:", err)
		stop()
		os.Exit(1)
	}
}

// Main is the bridge program.
type Main struct {
	// Getenv reads configuration; tests replace it.
	Getenv func(string) string
}

// NewMain returns a Main reading the process environment.
func NewMain() *Main { return &Main{Getenv: os.Getenv} }

// Run serves MCP on stdin/stdout until stdin closes or ctx ends.
func (m *Main) Run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) > 0 && (args[0] == "version" || args[0] == "--version") {
		fmt.Fprintln(stdout, "mcp-bridge", proxyserver.Version)
		return nil
	}
	if len(args) > 0 {
		return fmt.Errorf("unexpected arguments %q: configure with MCP_PROXY_URL and MCP_PROXY_TOKEN", args)
	}
	log := logging.New(stderr, m.env("MCP_PROXY_LOG_LEVEL", "info"), "text")
	url := m.env("MCP_PROXY_URL", "http://127.0.0.1:34501")
	client, err := bridge.NewClient(url, m.Getenv("MCP_PROXY_TOKEN"))
	if err != nil {
		return err
	}
	if err := waitHealthy(ctx, client, log, 30*time.Second); err != nil {
		return err
	}
	srv, err := mcpserver.New(ctx, client, mcpserver.WithLogger(log), mcpserver.WithVersion(proxyserver.Version))
	if err != nil {
		return err
	}
	log.Info("mcp-bridge ready", "proxy", url)
	stdio := server.NewStdioServer(srv.MCPServer())
	err = stdio.Listen(ctx, stdin, stdout)
	if err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, io.EOF) {
		return err
	}
	return nil
}

func (m *Main) env(name, def string) string {
	if v := m.Getenv(name); v != "" {
		return v
	}
	return def
}

// waitHealthy waits, with backoff, for proxy-server to answer.
func waitHealthy(ctx context.Context, c *bridge.Client, log *slog.Logger, budget time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, budget)
	defer cancel()
	delay := 200 * time.Millisecond
	for {
		err := c.Health(ctx)
		if err == nil {
			return nil
		}
		log.Warn("proxy-server not answering yet", "err", err, "retry_in", delay)
		select {
		case <-ctx.Done():
			return fmt.Errorf("proxy-server did not answer within %s: %w", budget, err)
		case <-time.After(delay):
		}
		delay = min(delay*2, 3*time.Second)
	}
}
