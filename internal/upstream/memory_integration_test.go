//go:build linux

package upstream

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"
)

// isRenderer reports whether pid is a Chromium renderer process (which
// rewrites its argv as one string).
func isRenderer(pid int) bool {
	return strings.Contains(strings.Join(procArgs(pid), " "), " --type=renderer ")
}

// In the shared browser each worker's renderers are found by pid: real
// Chromium renderer processes, none shared between two workers' contexts,
// and Memory counts them with the worker's node apart.
func TestIntegrationRendererPIDs(t *testing.T) {
	root := realSetup(t)
	b := launchTestBrowser(t, root)
	site := testSite(t)
	w1, w2 := startRealWorker(t, root, b), startRealWorker(t, root, b)
	found := map[*Worker][]int{}
	for _, w := range []*Worker{w1, w2} {
		if !w.SharesBrowser() {
			t.Fatal("a worker of the browser server does not say it shares it")
		}
		call(t, w, "browser_navigate", map[string]string{"url": site.URL + "/"})
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		start := time.Now()
		pids, err := w.RendererPIDs(ctx)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("worker %d: renderers %v found in %v", w.PID(), pids, time.Since(start).Round(time.Millisecond))
		if len(pids) == 0 {
			t.Fatalf("worker %d: no renderer pids", w.PID())
		}
		for _, pid := range pids {
			if !isRenderer(pid) {
				t.Errorf("worker %d: pid %d is not a renderer: %q", w.PID(), pid, procArgs(pid))
			}
		}
		found[w] = pids
		m := w.Memory(pids)
		if m.WorkerBytes < 10<<20 || m.RendererBytes < 10<<20 || m.Renderers != len(pids) {
			t.Errorf("worker %d: Memory = %+v, want node and %d renderers above 10 MB each", w.PID(), m, len(pids))
		}
	}
	for _, pid := range found[w1] {
		if slices.Contains(found[w2], pid) {
			t.Errorf("renderer %d serves both workers' contexts (%v, %v)", pid, found[w1], found[w2])
		}
	}
}

// In per-session mode the worker's own browser is its renderers' side:
// every Chromium process it started, found from the process tree, with
// no trace to run.
func TestIntegrationOwnBrowserMemory(t *testing.T) {
	root := realSetup(t)
	w := startRealWorker(t, root, nil)
	call(t, w, "browser_navigate", map[string]string{"url": "about:blank"})
	pids, err := w.RendererPIDs(t.Context())
	if err != nil || pids != nil {
		t.Errorf("RendererPIDs with a browser of its own = %v, %v; want nil, nil", pids, err)
	}
	m := w.Memory(nil)
	t.Logf("own browser: %+v", m)
	if m.WorkerBytes < 10<<20 || m.RendererBytes < 20<<20 || m.Renderers < 3 {
		t.Errorf("Memory = %+v, want node above 10 MB and its Chromium (browser, zygote, renderer...) above 20 MB", m)
	}
}
