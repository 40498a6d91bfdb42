//go:build linux

package upstream

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/proctest"
)

// startHost starts a Host and checks at cleanup that Close left nothing.
func startHost(t *testing.T, cfg HostConfig) *Host {
	t.Helper()
	h := NewHost(cfg)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if err := h.Start(ctx); err != nil {
		t.Fatalf("Host.Start: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		dir := h.runtimeDir
		if err := h.Close(ctx); err != nil {
			t.Errorf("Host.Close: %v", err)
		}
		if dir != "" {
			if _, err := os.Stat(dir); !os.IsNotExist(err) {
				t.Errorf("host runtime dir %s left: %v", dir, err)
			}
		}
	})
	return h
}

func spawn(t *testing.T, h *Host) *Worker {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	w, err := h.Spawn(ctx)
	if err != nil {
		t.Fatalf("Spawn: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = w.Close(ctx)
	})
	return w
}

// shortTempDir is a temp dir short enough for Chromium's sockets below it
// (t.TempDir's, named after the test, is not).
func shortTempDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "pwpt-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// dirNames lists dir's entries by name.
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

func cmdline(pid int) string {
	b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	return strings.ReplaceAll(string(b), "\x00", " ")
}

func TestIntegrationHostModes(t *testing.T) {
	root := realSetup(t)
	site := testSite(t)
	tests := []struct {
		name string
		cfg  HostConfig
		// flag is what the worker's command line must carry.
		flag string
	}{
		{"shared via browser server", HostConfig{}, "--endpoint ws://127.0.0.1:"},
		{"shared over CDP", HostConfig{ShareOverCDP: true}, "--cdp-endpoint http://127.0.0.1:"},
		{"per session", HostConfig{PerSession: true}, "--executable-path"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := tt.cfg
			cfg.Browser = BrowserConfig{Headless: true, Logger: testLogger(t)}
			cfg.Worker = WorkerConfig{Command: DefaultCommand(root), Logger: testLogger(t)}
			cfg.Logger = testLogger(t)
			// Every file any process of the host writes goes under
			// TempDir, none under the TMPDIR the proxy was given (decoy),
			// and Close removes what it wrote.
			cfg.TempDir = shortTempDir(t)
			decoy := t.TempDir()
			t.Setenv("TMPDIR", decoy)
			t.Cleanup(func() {
				if left := dirNames(t, cfg.TempDir); len(left) > 0 {
					t.Errorf("left in the host's TempDir after Close: %v", left)
				}
			})
			h := startHost(t, cfg)
			w1, w2 := spawn(t, h), spawn(t, h)
			if got := cmdline(w1.PID()); !strings.Contains(got, tt.flag) {
				t.Errorf("worker command line %q lacks %q", got, tt.flag)
			}
			for i, w := range []*Worker{w1, w2} {
				call(t, w, "browser_navigate", map[string]string{"url": site.URL + "/blank"})
				evaluate(t, w, "() => localStorage.setItem('who', '"+strconv.Itoa(i)+"')")
			}
			for i, w := range []*Worker{w1, w2} {
				if got, want := evaluate(t, w, "() => localStorage.getItem('who')"), `"`+strconv.Itoa(i)+`"`; got != want {
					t.Errorf("worker %d reads %s, want %s", i, got, want)
				}
			}
			if left := dirNames(t, decoy); len(left) > 0 {
				t.Errorf("written to the proxy's TMPDIR instead of the host's TempDir: %v", left)
			}
			if got := dirNames(t, cfg.TempDir); len(got) < 2 {
				t.Errorf("host's TempDir holds %v, want the two workers' directories at least", got)
			}
			if !cfg.PerSession {
				return
			}
			// Per-session browsers stay in their worker's process group, so
			// stopping the worker stops its browser.
			var chromium int
			for _, p := range proctest.Descendants(w1.PID()) {
				if strings.Contains(p.Comm, "chrom") && !strings.Contains(p.Comm, "crashpad") {
					chromium++
					if p.PGID != w1.PID() {
						t.Errorf("%v is not in the worker's group %d", p, w1.PID())
					}
				}
			}
			if chromium == 0 {
				t.Error("no chromium below the per-session worker")
			}
		})
	}
}
