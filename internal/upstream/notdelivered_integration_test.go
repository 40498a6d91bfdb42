//go:build linux

package upstream

import (
	"context"
	"errors"
	"syscall"
	"testing"
	"time"

	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/worker"
)

// TestIntegrationKilledWorkerCallNotDelivered: a call made right after a
// real worker's group was sent SIGKILL, while node is still going down
// (its stdin still open), fails as not delivered: it cannot have run.
func TestIntegrationKilledWorkerCallNotDelivered(t *testing.T) {
	root := realSetup(t)
	b := launchTestBrowser(t, root)
	w := startRealWorker(t, root, b)
	call(t, w, "browser_navigate", map[string]string{"url": "about:blank"})
	if err := syscall.Kill(-w.PID(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	_, err := w.CallTool(ctx, "browser_snapshot", nil)
	if !errors.Is(err, worker.ErrNotDelivered) || !errors.Is(err, worker.ErrWorkerExited) {
		t.Fatalf("call right after SIGKILL = %v; want worker.ErrNotDelivered", err)
	}
}
