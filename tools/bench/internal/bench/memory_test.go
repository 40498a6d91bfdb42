package bench

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestKindOf(t *testing.T) {
	tests := []struct {
		name, comm, cmdline, want string
	}{
		{"proxy-server", "proxy-server", "/root/bin/proxy-server\x00-port\x000\x00", "proxy-server"},
		{"a worker", "node", "node\x00--optimize-for-size\x00/root/node_modules/@playwright/mcp/cli.js\x00--output-dir\x00/tmp/x\x00", "node"},
		{"a session host", "node", "node\x00--single-threaded\x00--max-old-space-size=256\x00/tmp/pwp-host-1/worker-host.js\x00", "node"},
		{"the browser server", "node", "node\x00--optimize-for-size\x00/tmp/pwp-1/browser-server.js\x00", "node-browser-server"},
		{"a renderer, its title rewritten", "chromium", "/usr/lib/chromium/chromium --type=renderer --lang=en-US", "chromium-renderer"},
		{"the browser", "chromium", "/usr/lib/chromium/chromium\x00--headless\x00", "chromium-browser"},
		{"crashpad", "chrome_crashpad", "/usr/lib/chromium/chrome_crashpad_handler\x00--database=/tmp\x00", "chromium-crashpad"},
		{"anything else", "sh", "/bin/sh\x00-c\x00true\x00", "sh"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := kindOf(tt.comm, tt.cmdline); got != tt.want {
				t.Errorf("kindOf(%q, %q) = %q, want %q", tt.comm, tt.cmdline, got, tt.want)
			}
		})
	}
}

// TestMemorySlope: kinds fall in their parts, "our share" is everything
// but Chromium, and the per-session figure is the slope between two counts.
func TestMemorySlope(t *testing.T) {
	sample := func(node, browserServer, proxy, renderer, gpu, other int64) MemSample {
		m := MemSample{ByKind: map[string]KindMem{
			"node": {PSSKB: node}, "node-browser-server": {PSSKB: browserServer}, "proxy-server": {PSSKB: proxy},
			"chromium-renderer": {PSSKB: renderer}, "chromium-gpu-process": {PSSKB: gpu}, "sh": {PSSKB: other},
		}}
		for _, k := range m.ByKind {
			m.PSSKB += k.PSSKB
		}
		return m
	}
	one := MemoryPoint{Sessions: 1, PSSKB: partsPSS(sample(80, 60, 20, 50, 30, 2))}
	if diff := cmp.Diff(map[string]int64{partSessions: 80, partServer: 80, partOther: 2, partOurs: 162, partRenderer: 50, partChromium: 30, partTotal: 242}, one.PSSKB); diff != "" {
		t.Errorf("partsPSS (-want +got):\n%s", diff)
	}
	eleven := MemoryPoint{Sessions: 11, PSSKB: partsPSS(sample(100, 70, 30, 550, 40, 2))}
	want := map[string]float64{partSessions: 2, partServer: 2, partOther: 0, partOurs: 4, partRenderer: 50, partChromium: 1, partTotal: 55}
	if diff := cmp.Diff(want, slope(one, eleven)); diff != "" {
		t.Errorf("slope (-want +got):\n%s", diff)
	}
}

func TestMemoryConfigCheck(t *testing.T) {
	tests := []struct {
		name string
		cfg  MemoryConfig
		want string // "" = valid
	}{
		{"defaults", MemoryConfig{Modes: []int{1, 8}, Counts: []int{1, 16}, Page: "catalogue", Navigations: 2, Readings: 3}, ""},
		{"three counts", MemoryConfig{Modes: []int{4}, Counts: []int{1, 8, 16}, Page: "form", Navigations: 1, Readings: 1}, ""},
		{"one count: no slope", MemoryConfig{Modes: []int{1}, Counts: []int{16}, Page: "catalogue", Navigations: 1, Readings: 1}, "-sessions"},
		{"counts not ascending", MemoryConfig{Modes: []int{1}, Counts: []int{16, 1}, Page: "catalogue", Navigations: 1, Readings: 1}, "-sessions"},
		{"a count twice", MemoryConfig{Modes: []int{1}, Counts: []int{4, 4}, Page: "catalogue", Navigations: 1, Readings: 1}, "-sessions"},
		{"no session", MemoryConfig{Modes: []int{1}, Counts: []int{0, 4}, Page: "catalogue", Navigations: 1, Readings: 1}, "-sessions"},
		{"mode 0", MemoryConfig{Modes: []int{0, 8}, Counts: []int{1, 4}, Page: "catalogue", Navigations: 1, Readings: 1}, "-modes"},
		{"unknown page", MemoryConfig{Modes: []int{1}, Counts: []int{1, 4}, Page: "nope", Navigations: 1, Readings: 1}, "-page"},
		{"no readings", MemoryConfig{Modes: []int{1}, Counts: []int{1, 4}, Page: "form", Navigations: 1}, "-readings"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Check()
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("Check() = %v, want nil", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("Check() = %v, want an error mentioning %q", err, tt.want)
			}
		})
	}
}

func TestMemoryCharts(t *testing.T) {
	if _, err := MemoryCharts(nil); err == nil {
		t.Error("MemoryCharts(nil): want an error")
	}
	if _, err := MemoryCharts(&MemoryResult{Runs: []MemoryRun{{SessionsPerWorker: 1}}}); err == nil {
		t.Error("MemoryCharts(a run with no slope): want an error")
	}
	points := []MemoryPoint{{Sessions: 1}, {Sessions: 16}}
	res := &MemoryResult{Page: "catalogue", Runs: []MemoryRun{
		{SessionsPerWorker: 1, Points: points, PerSessionKB: map[string]float64{partSessions: 60 << 10, partTotal: 140 << 10}},
		{SessionsPerWorker: 8, Points: points, PerSessionKB: map[string]float64{partSessions: 2 << 10, partServer: -1 << 10, partTotal: 80 << 10}},
	}}
	charts, err := MemoryCharts(res)
	if err != nil {
		t.Fatal(err)
	}
	if len(charts) != 1 || charts[0].Name != "memory-per-session.svg" {
		t.Fatalf("charts %v, want memory-per-session.svg alone", charts)
	}
	svg := charts[0].SVG
	want := []string{"K=1 sessions per node process", "K=8 sessions per node process"}
	if got := wellFormedSVG(t, svg); !slices.Equal(got, want) {
		t.Errorf("series %q, want %q", got, want)
	}
	for _, s := range []string{"between 1 and 16 open sessions", "K=1 sessions per node process, node (sessions): 60<",
		"K=8 sessions per node process, total: 80<", ">our share<", ">renderer<"} {
		if !bytes.Contains(svg, []byte(s)) {
			t.Errorf("%q not in the SVG", s)
		}
	}
	if bytes.Contains(svg, []byte("K=8 sessions per node process, server:")) {
		t.Error("a negative slope is drawn as a bar")
	}
	if bytes.Contains(svg, []byte(">other<")) {
		t.Error("the part no process of the proxy's falls in is charted")
	}
}
