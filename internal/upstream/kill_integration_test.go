//go:build linux

package upstream

import (
	"context"
	"errors"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/proctest"
)

// TestIntegrationStoppedWorkerKilled: a real worker stopped with SIGSTOP
// fails a ping (the ping is really sent: a no-op ping would pass), and
// Kill takes its whole group down with SIGKILL alone, none of Close's
// polite steps.
func TestIntegrationStoppedWorkerKilled(t *testing.T) {
	root := realSetup(t)
	b := launchTestBrowser(t, root)
	w := startRealWorker(t, root, b)
	call(t, w, "browser_navigate", map[string]string{"url": "about:blank"})
	pgid := w.PID()
	group := proctest.Group(pgid)
	if err := syscall.Kill(-pgid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Second)
	err := w.Ping(ctx)
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Ping of a stopped worker = %v, want the deadline exceeded", err)
	}
	if err := w.Kill(t.Context()); err != nil {
		t.Fatalf("Kill: %v", err)
	}
	if diff := cmp.Diff([]string{"SIGKILL"}, w.proc.signals()); diff != "" {
		t.Errorf("signals sent to the group (-want +got):\n%s", diff)
	}
	if left := proctest.WaitGone(2*time.Second, func() []proctest.Proc { return proctest.StillAlive(group) }); len(left) > 0 {
		t.Errorf("left of the killed worker: %+v", left)
	}
}
