//go:build linux

package upstream

import (
	"errors"
	"os/exec"
	"syscall"
	"testing"

	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/worker"
)

// TestWorkerFakeKilledBeforeCall: a call made right after the worker was
// sent SIGKILL, while its process is still going down, is known not to
// have reached it: ErrNotDelivered, so the session may send it elsewhere.
func TestWorkerFakeKilledBeforeCall(t *testing.T) {
	w := startFake(t, fakeWorkerConfig(t))
	ctx := t.Context()
	if err := w.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(-w.PID(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_, err := w.CallTool(ctx, "echo", nil)
	if !errors.Is(err, worker.ErrNotDelivered) || !errors.Is(err, worker.ErrWorkerExited) {
		t.Fatalf("call right after SIGKILL = %v; want worker.ErrNotDelivered", err)
	}
}

// TestProcDying: what procDying makes of a process that runs, one that
// exited and is not reaped yet, and one that no longer exists.
func TestProcDying(t *testing.T) {
	start := func(t *testing.T, name string, args ...string) *exec.Cmd {
		t.Helper()
		cmd := exec.Command(name, args...)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return cmd
	}
	tests := []struct {
		name string
		// pid starts a process in the state under test and returns its
		// pid and a cleanup.
		pid  func(t *testing.T) (int, func())
		want bool
	}{
		{"running", func(t *testing.T) (int, func()) {
			cmd := start(t, "sleep", "30")
			return cmd.Process.Pid, func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }
		}, false},
		{"exited, not reaped", func(t *testing.T) (int, func()) {
			cmd := start(t, "true")
			if err := waitExited(cmd.Process.Pid); err != nil {
				t.Fatal(err)
			}
			return cmd.Process.Pid, func() { _ = cmd.Wait() }
		}, true},
		{"reaped", func(t *testing.T) (int, func()) {
			cmd := start(t, "true")
			_ = cmd.Wait()
			return cmd.Process.Pid, func() {}
		}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pid, cleanup := tc.pid(t)
			defer cleanup()
			if got := procDying(pid); got != tc.want {
				t.Errorf("procDying = %v, want %v", got, tc.want)
			}
		})
	}
}
