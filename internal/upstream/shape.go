package upstream

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
)

// Shape is what one session asks of its worker's browser beyond the
// server's defaults: the engine, and the options of its BrowserContext
// (Playwright's newContext options as JSON: viewport, userAgent, locale,
// timezoneId, colorScheme, a device's fields).
type Shape struct {
	Browser string
	Context json.RawMessage
}

// IsZero reports whether s asks for nothing: a warm spare fits it.
func (s Shape) IsZero() bool {
	return (s.Browser == "" || s.Browser == proxy.BrowserChromium) && len(s.Context) == 0
}

type shapeKey struct{}

// WithShape asks the spawns made with ctx for a worker of that shape. It
// travels in the context so that the layers between a session and the
// host (warm pool, spawn tracking, the first worker's hand-over) need not
// know of it.
func WithShape(ctx context.Context, s Shape) context.Context {
	if s.IsZero() {
		return ctx
	}
	return context.WithValue(ctx, shapeKey{}, s)
}

// ShapeFrom is the shape WithShape put in ctx; the zero Shape when none.
func ShapeFrom(ctx context.Context) Shape {
	s, _ := ctx.Value(shapeKey{}).(Shape)
	return s
}

// shapeWorker points cfg at shape. An engine other than Chromium exists
// only on browser nodes: the server launches Chromium alone.
func (h *Host) shapeWorker(cfg WorkerConfig, shape Shape) (WorkerConfig, error) {
	if shape.Browser != "" && shape.Browser != proxy.BrowserChromium && h.cfg.Nodes == nil {
		e := proxy.Errorf(proxy.EINVALID, "browser %q runs only on browser nodes, and none is configured (PROXY_BROWSER_ENDPOINTS with #browser=%s)", shape.Browser, shape.Browser)
		e.Details = map[string]any{"field": "browser", "browser": shape.Browser}
		return cfg, placementError{e}
	}
	cfg.Browser, cfg.ContextOptions = shape.Browser, shape.Context
	return cfg, nil
}

// configPath is where StartWorker puts the worker's configuration file
// (its remote browser, its context options): beside its output directory,
// not in it, so it is never taken for a file the worker wrote.
func configPath(outputDir string) string { return outputDir + ".config.json" }

// needsConfig reports whether cfg says something only a configuration
// file can: a remote browser's address and headers (kept off the command
// line, which anyone on the machine can read) or context options.
func needsConfig(cfg WorkerConfig) bool {
	return cfg.Remote != nil || len(cfg.ContextOptions) > 0 || launchesDebugPort(cfg)
}

// launchesDebugPort: the worker launches its own browser and is to open
// its CDP port (WorkerConfig.DebugPort).
func launchesDebugPort(cfg WorkerConfig) bool {
	return cfg.DebugPort && cfg.Remote == nil && cfg.PlaywrightEndpoint == "" && cfg.CDPEndpoint == ""
}

// writeConfig writes @playwright/mcp's configuration for cfg, readable by
// this user only.
func writeConfig(outputDir string, cfg WorkerConfig) (string, error) {
	browser := map[string]any{}
	if rb := cfg.Remote; rb != nil {
		headers := map[string]string{}
		for k, vs := range rb.Header {
			if len(vs) > 0 {
				headers[k] = vs[len(vs)-1]
			}
		}
		browser["remoteEndpoint"], browser["remoteHeaders"] = rb.URL, headers
	}
	if len(cfg.ContextOptions) > 0 {
		browser["contextOptions"] = cfg.ContextOptions
	}
	if launchesDebugPort(cfg) {
		browser["launchOptions"] = map[string]any{"args": debugPortFlags(BrowserConfig{DebugPort: true})}
	}
	data, err := json.Marshal(map[string]any{"browser": browser})
	if err != nil {
		return "", fmt.Errorf("worker configuration: %w", err)
	}
	p := configPath(outputDir)
	if err := os.WriteFile(p, data, 0o600); err != nil {
		return "", fmt.Errorf("worker configuration: %w", err)
	}
	return p, nil
}
