package session

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
)

// A session over MaxSessionMemory is restarted at a ping with the state it
// had (saved just before), the next call says restored, and the session's
// timeline says why with the figures.
func TestMemoryLimitRestartsWithState(t *testing.T) {
	ctx := context.Background()
	const limit = 10 << 20
	m, sp, db := newManager(t, Options{PingInterval: 10 * time.Millisecond, restartBackoff: time.Millisecond, MaxSessionMemory: limit})
	s, err := m.CreateSession(ctx)
	if err != nil {
		t.Fatal(err)
	}
	navigate(t, m, s.ID, "http://127.0.0.1/heavy")
	big := workerOf(t, m, sp, s.ID)
	big.rendererBytes.Store(50 << 20)
	waitFor(t, "the worker over the limit replaced", func() bool { return big.closed.Load() })
	res := navigate(t, m, s.ID, "http://127.0.0.1/next")
	if !res.Metadata.Restored {
		t.Error("call after the memory restart: restored = false")
	}
	fresh := workerOf(t, m, sp, s.ID)
	fresh.mu.Lock()
	from := fresh.restoredFrom
	fresh.mu.Unlock()
	if from != "http://127.0.0.1/heavy" {
		t.Errorf("new worker restored from %q, want the session's page", from)
	}
	events, err := db.ListSessionEvents(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	var over, restarted string
	for _, e := range events {
		switch e.Kind {
		case proxy.EventMemoryLimit:
			over = e.Detail
		case proxy.EventRestarted:
			restarted = e.Detail
		}
	}
	for _, want := range []string{"51.0 MB", "worker 1.0 MB", "renderers 50.0 MB", "PROXY_MAX_SESSION_MEMORY (10.0 MB)"} {
		if !strings.Contains(over, want) || !strings.Contains(restarted, want) {
			t.Errorf("events memory_limit %q and restarted %q: want both to say %q", over, restarted, want)
		}
	}
	if got := m.Stats(); got.WorkerCrashes != 0 || got.WorkerRestarts != 1 {
		t.Errorf("stats = %+v, want one restart and no crash", got)
	}
	if left := liveOf(t, m, s.ID).restartsLeft(m.clock.Now()); left != restartLimit-1 {
		t.Errorf("restarts left = %d, want %d: a memory restart uses the budget", left, restartLimit-1)
	}
}

// The shared browser's renderers of a session are looked up after a call
// has ended, once, not at every ping; GET /sessions/{id} shows what they
// hold, with the worker, and the lookup's result is what Memory reads.
func TestRenderersFoundAfterCalls(t *testing.T) {
	ctx := context.Background()
	m, sp, _ := newManager(t, Options{PingInterval: 5 * time.Millisecond})
	var pings atomic.Int32
	sp.prepare = func(w *fakeWorker) {
		w.shares, w.renderers = true, []int{4101, 4102}
		w.rendererBytes.Store(300 << 20)
		w.ping = func(context.Context) error { pings.Add(1); return nil }
	}
	// pingsPass waits for n more pings: the memory check after a ping runs
	// before the next ping of the same session starts.
	pingsPass := func(n int32) {
		t.Helper()
		target := pings.Load() + n
		waitFor(t, "pings", func() bool { return pings.Load() >= target })
	}
	s, err := m.CreateSession(ctx)
	if err != nil {
		t.Fatal(err)
	}
	w := workerOf(t, m, sp, s.ID)
	// No call yet: the worker's browser may not exist, and a lookup would
	// launch it.
	pingsPass(3)
	if n := w.lookups.Load(); n != 0 {
		t.Fatalf("%d renderer lookups before any call, want 0", n)
	}
	navigate(t, m, s.ID, "http://127.0.0.1/a")
	waitFor(t, "the renderers looked up", func() bool { return w.lookups.Load() == 1 })
	got, err := m.GetSession(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Memory == nil {
		t.Fatal("GET session: no memory")
	}
	want := proxy.SessionMemory{WorkerBytes: 1 << 20, RendererBytes: 300 << 20, TotalBytes: 301 << 20, Renderers: 2}
	if diff := cmp.Diff(want, *got.Memory, cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".RenderersFound" }, cmp.Ignore())); diff != "" {
		t.Errorf("memory (-want +got):\n%s", diff)
	}
	if got.Memory.RenderersFound.IsZero() {
		t.Error("renderers_found is zero after a lookup")
	}
	w.mu.Lock()
	pids := w.memoryPIDs
	w.mu.Unlock()
	if diff := cmp.Diff([]int{4101, 4102}, pids); diff != "" {
		t.Errorf("pids measured (-want +got):\n%s", diff)
	}
	pingsPass(3)
	if n := w.lookups.Load(); n != 1 {
		t.Errorf("%d renderer lookups after one call, want 1", n)
	}
}
