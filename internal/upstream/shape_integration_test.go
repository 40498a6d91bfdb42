//go:build linux

package upstream

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/nodes"
)

// TestShapedWorkersSeeTheirContextOptions starts workers with and without
// a shape on each kind of browser the host shares between workers (its
// own, over either protocol, and a node's), and reads what their pages
// see. A worker launching its own browser reads the same configuration.
func TestShapedWorkersSeeTheirContextOptions(t *testing.T) {
	root := realSetup(t)
	site := testSite(t)
	shape := Shape{Context: json.RawMessage(`{"viewport":{"width":640,"height":480},"locale":"fr-FR","timezoneId":"Asia/Tokyo","colorScheme":"dark","userAgent":"Shaped/1"}`)}
	const look = `() => [innerWidth, innerHeight, navigator.language, Intl.DateTimeFormat().resolvedOptions().timeZone, matchMedia('(prefers-color-scheme: dark)').matches, navigator.userAgent].join('|')`
	const want = `"640|480|fr-FR|Asia/Tokyo|true|Shaped/1"`
	for _, tt := range []struct {
		name string
		cfg  func(t *testing.T) HostConfig
	}{
		{"shared via browser server", func(*testing.T) HostConfig { return HostConfig{} }},
		{"shared over CDP", func(*testing.T) HostConfig { return HostConfig{ShareOverCDP: true} }},
		// The worker's configuration file then names the node too.
		{"on a browser node", func(t *testing.T) HostConfig {
			node := launchTestBrowser(t, root)
			pool, err := nodes.New([]nodes.Endpoint{{ID: "n1", URL: node.PlaywrightEndpoint(), Capacity: 2}},
				nodes.Config{Prober: noProbe{}, Interval: time.Hour})
			if err != nil {
				t.Fatal(err)
			}
			pool.ProbeAll(t.Context())
			return HostConfig{Nodes: pool}
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := tt.cfg(t)
			cfg.Browser = BrowserConfig{Headless: true, Logger: testLogger(t)}
			cfg.Worker = WorkerConfig{Command: DefaultCommand(root), Logger: testLogger(t)}
			cfg.Logger = testLogger(t)
			cfg.TempDir = shortTempDir(t)
			h := startHost(t, cfg)
			ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
			defer cancel()
			shaped, err := h.Spawn(WithShape(ctx, shape))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = shaped.Close(context.Background()) })
			plain := spawn(t, h)
			for _, w := range []*Worker{shaped, plain} {
				call(t, w, "browser_navigate", map[string]string{"url": site.URL + "/blank"})
			}
			if got := evaluate(t, shaped, look); got != want {
				t.Errorf("shaped worker sees %s, want %s", got, want)
			}
			if got := evaluate(t, plain, look); got == want {
				t.Errorf("plain worker sees %s too", got)
			}
		})
	}
}
