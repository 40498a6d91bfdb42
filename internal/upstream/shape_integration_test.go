package upstream

import (
	"context"
	"encoding/json"
	"testing"
	"time"
)

// TestShapedWorkersSeeTheirContextOptions starts workers with and without
// a shape in each way the host gives them a browser, and reads what their
// pages see.
func TestShapedWorkersSeeTheirContextOptions(t *testing.T) {
	root := realSetup(t)
	site := testSite(t)
	shape := Shape{Context: json.RawMessage(`{"viewport":{"width":640,"height":480},"locale":"fr-FR","timezoneId":"Asia/Tokyo","colorScheme":"dark","userAgent":"Shaped/1"}`)}
	const look = `() => [innerWidth, innerHeight, navigator.language, Intl.DateTimeFormat().resolvedOptions().timeZone, matchMedia('(prefers-color-scheme: dark)').matches, navigator.userAgent].join('|')`
	const want = `"640|480|fr-FR|Asia/Tokyo|true|Shaped/1"`
	for _, tt := range []struct {
		name string
		cfg  HostConfig
	}{
		{"shared via browser server", HostConfig{}},
		{"shared over CDP", HostConfig{ShareOverCDP: true}},
		{"per session", HostConfig{PerSession: true}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := tt.cfg
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
