package nodes_test

import (
	"context"
	"errors"
	"os/exec"
	"strings"
	"testing"

	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/e2etest"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/nodes"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/upstream"
)

// TestHTTPProberRealBrowserServer probes a real Playwright browser server:
// up with the pinned version, refused with another minor version.
func TestHTTPProberRealBrowserServer(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Chromium")
	}
	e2etest.RequireBrowser(t)
	root := e2etest.ProjectRoot(t)
	from, err := upstream.PlaywrightFrom(upstream.DefaultCommand(root))
	if err != nil {
		t.Fatal(err)
	}
	version, err := upstream.PlaywrightVersion(from)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("no node on PATH")
	}
	ctx := context.Background()
	b, err := upstream.LaunchBrowserServer(ctx, upstream.BrowserConfig{Headless: true, TempDir: t.TempDir()}, "", from)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close(context.Background()) })
	ep := nodes.Endpoint{ID: "real", URL: b.PlaywrightEndpoint()}

	if err := (nodes.HTTPProber{Version: version}).Probe(ctx, ep); err != nil {
		t.Errorf("Probe with Playwright %s: %v", version, err)
	}
	err = nodes.HTTPProber{Version: "1.20.0"}.Probe(ctx, ep)
	if !errors.Is(err, nodes.ErrVersionMismatch) || !strings.Contains(err.Error(), "it runs v1.") {
		t.Errorf("Probe with Playwright 1.20.0 = %v, want a version mismatch naming the server's version", err)
	}
}
