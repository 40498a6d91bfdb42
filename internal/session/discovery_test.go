package session

import (
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"sync/atomic"
	"testing"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/store"
)

// A caller that gives up while the first worker starts (a /health check
// with a short budget on a loaded machine) must not abandon that start: the
// tool list is learned once, by one worker, which then serves a create.
func TestToolDiscoveryOutlivesImpatientCallers(t *testing.T) {
	db, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "p.db"))
	if err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	var spawns atomic.Int32
	spawner := SpawnFunc(func(ctx context.Context) (Worker, error) {
		spawns.Add(1)
		select {
		case <-release:
			return newFakeWorker(t), nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	})
	m := New(db, spawner, Options{Logger: slog.New(slog.DiscardHandler)})
	t.Cleanup(func() {
		m.Shutdown(context.Background())
		db.Close()
	})

	for i := range 3 {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := m.Tools(ctx)
		var pe *proxy.Error
		if !errors.As(err, &pe) || pe.Code != proxy.EUNAVAILABLE || !pe.Retryable {
			t.Fatalf("impatient caller %d: err = %v, want retryable %s", i, err, proxy.EUNAVAILABLE)
		}
	}
	close(release)
	tools, err := m.Tools(context.Background())
	if err != nil || len(tools) == 0 {
		t.Fatalf("Tools after the start finished: %d tools, err %v", len(tools), err)
	}
	if _, err := m.CreateSession(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := spawns.Load(); n != 1 {
		t.Errorf("worker starts = %d, want 1 (learning the tools, then serving the create)", n)
	}
}

// A failed start is not remembered: the next caller tries again.
func TestToolDiscoveryRetriesAfterFailure(t *testing.T) {
	m, sp, _ := newManager(t, Options{})
	sp.mu.Lock()
	sp.fail = errors.New("no chromium")
	sp.mu.Unlock()
	if _, err := m.Tools(context.Background()); err == nil {
		t.Fatal("Tools with a failing spawner: no error")
	}
	sp.mu.Lock()
	sp.fail = nil
	sp.mu.Unlock()
	if tools, err := m.Tools(context.Background()); err != nil || len(tools) == 0 {
		t.Fatalf("Tools once spawns work: %d tools, err %v", len(tools), err)
	}
}
