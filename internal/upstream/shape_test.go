//go:build linux

package upstream

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/nodes"
)

func TestWriteConfig(t *testing.T) {
	tests := []struct {
		name string
		cfg  WorkerConfig
		want string
	}{
		{"remote browser", WorkerConfig{Remote: &RemoteBrowser{URL: "ws://n:1/pw", Header: http.Header{"X-Key": {"a", "b"}}}},
			`{"browser":{"remoteEndpoint":"ws://n:1/pw","remoteHeaders":{"X-Key":"b"}}}`},
		{"context options", WorkerConfig{ContextOptions: json.RawMessage(`{"locale":"de-DE","viewport":{"width":400,"height":300}}`)},
			`{"browser":{"contextOptions":{"locale":"de-DE","viewport":{"width":400,"height":300}}}}`},
		{"both", WorkerConfig{Remote: &RemoteBrowser{URL: "ws://n:1/pw"}, ContextOptions: json.RawMessage(`{"colorScheme":"dark"}`)},
			`{"browser":{"contextOptions":{"colorScheme":"dark"},"remoteEndpoint":"ws://n:1/pw","remoteHeaders":{}}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "w")
			p, err := writeConfig(out, tt.cfg)
			if err != nil {
				t.Fatal(err)
			}
			if p != configPath(out) {
				t.Errorf("path %s, want %s", p, configPath(out))
			}
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, string(data)); diff != "" {
				t.Errorf("config (-want +got):\n%s", diff)
			}
			if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o600 {
				t.Errorf("config mode %v (%v), want 0600", fi.Mode(), err)
			}
		})
	}
}

func TestShapeWorker(t *testing.T) {
	pool, err := nodes.New([]nodes.Endpoint{{ID: "ff", URL: "ws://ff/pw", Capacity: 1, Browser: proxy.BrowserFirefox}}, nodes.Config{Prober: noProbe{}})
	if err != nil {
		t.Fatal(err)
	}
	ctxOpts := json.RawMessage(`{"locale":"fr-FR"}`)
	tests := []struct {
		name     string
		nodes    *nodes.Pool
		shape    Shape
		wantCode string
		want     WorkerConfig
	}{
		{"no shape", nil, Shape{}, "", WorkerConfig{Command: []string{"node"}}},
		{"context options on the local browser", nil, Shape{Context: ctxOpts}, "", WorkerConfig{Command: []string{"node"}, ContextOptions: ctxOpts}},
		{"chromium on the local browser", nil, Shape{Browser: proxy.BrowserChromium}, "", WorkerConfig{Command: []string{"node"}, Browser: proxy.BrowserChromium}},
		{"firefox without nodes", nil, Shape{Browser: proxy.BrowserFirefox}, proxy.EINVALID, WorkerConfig{Command: []string{"node"}}},
		{"webkit without nodes", nil, Shape{Browser: proxy.BrowserWebKit}, proxy.EINVALID, WorkerConfig{Command: []string{"node"}}},
		{"firefox with nodes", pool, Shape{Browser: proxy.BrowserFirefox, Context: ctxOpts}, "", WorkerConfig{Command: []string{"node"}, Browser: proxy.BrowserFirefox, ContextOptions: ctxOpts}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := &Host{cfg: HostConfig{Nodes: tt.nodes}}
			got, err := h.shapeWorker(WorkerConfig{Command: []string{"node"}}, tt.shape)
			refused, ok := PlacementRefusal(err)
			switch {
			case tt.wantCode == "" && err != nil:
				t.Fatalf("shapeWorker: %v", err)
			case tt.wantCode != "" && (!ok || refused.Code != tt.wantCode):
				t.Fatalf("shapeWorker = %v, want a placement refusal %s", err, tt.wantCode)
			}
			if diff := cmp.Diff(tt.want, got, cmp.Comparer(func(a, b json.RawMessage) bool { return string(a) == string(b) })); diff != "" {
				t.Errorf("config (-want +got):\n%s", diff)
			}
		})
	}
}

func TestShapeTravelsInTheContext(t *testing.T) {
	ctx := context.Background()
	if got := ShapeFrom(ctx); !got.IsZero() {
		t.Errorf("ShapeFrom(no shape) = %+v", got)
	}
	if WithShape(ctx, Shape{Browser: proxy.BrowserChromium}) != ctx {
		t.Error("a zero shape should leave the context as it is")
	}
	want := Shape{Browser: proxy.BrowserWebKit, Context: json.RawMessage(`{"locale":"ja-JP"}`)}
	if diff := cmp.Diff(want, ShapeFrom(WithShape(ctx, want))); diff != "" {
		t.Errorf("ShapeFrom (-want +got):\n%s", diff)
	}
}

type noProbe struct{}

func (noProbe) Probe(context.Context, nodes.Endpoint) error { return nil }

func TestDevicesFromTheWorkersPlaywright(t *testing.T) {
	root := realSetup(t)
	d := NewDevices(DefaultCommand(root))
	list, err := d.Devices(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var iphone struct {
		UserAgent string `json:"userAgent"`
		Viewport  struct {
			Width int `json:"width"`
		} `json:"viewport"`
		IsMobile bool `json:"isMobile"`
	}
	if err := json.Unmarshal(list["iPhone 15"], &iphone); err != nil {
		t.Fatalf("iPhone 15: %v (%d devices)", err, len(list))
	}
	if !iphone.IsMobile || iphone.Viewport.Width == 0 || iphone.UserAgent == "" {
		t.Errorf("iPhone 15 = %+v, want a mobile viewport and user agent", iphone)
	}
	again, err := d.Devices(t.Context())
	if err != nil || len(again) != len(list) {
		t.Errorf("second read: %d devices, %v; want the same %d", len(again), err, len(list))
	}
}

func TestDevicesWithoutPlaywright(t *testing.T) {
	_, err := NewDevices([]string{"npx", "@playwright/mcp"}).Devices(t.Context())
	if err == nil {
		t.Fatal("Devices with no playwright-core to read: no error")
	}
}
