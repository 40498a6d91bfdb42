//go:build linux

package upstream

import (
	"context"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestWorkerFakeKillSkipsPoliteSteps: a worker that answers nothing
// (stopped, deaf to stdin closing and to SIGTERM) is stopped by Close
// through every polite step, and by Kill with SIGKILL alone; either way
// its whole group and output dir are gone.
func TestWorkerFakeKillSkipsPoliteSteps(t *testing.T) {
	tests := []struct {
		name        string
		stop        func(w *Worker, ctx context.Context) error
		wantSignals []string
	}{
		{"Close", (*Worker).Close, []string{"SIGTERM", "SIGKILL"}},
		{"Kill", (*Worker).Kill, []string{"SIGKILL"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := startFake(t, fakeWorkerConfig(t, "PWP_FAKE_CHILD=1", "PWP_FAKE_HANG_ON_EOF=1", "PWP_FAKE_IGNORE_TERM=1"))
			pgid := w.PID()
			if !eventually(2*time.Second, func() bool { return strings.Contains(w.Stderr(), "fake: child ") }) {
				t.Fatalf("no child; stderr %s", w.Stderr())
			}
			if err := syscall.Kill(-pgid, syscall.SIGSTOP); err != nil {
				t.Fatal(err)
			}
			// A short ctx cuts Close's waits: the steps it takes are what
			// is checked, not how long they last.
			ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
			defer cancel()
			if err := tc.stop(w, ctx); err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			if diff := cmp.Diff(tc.wantSignals, w.proc.signals()); diff != "" {
				t.Errorf("signals sent to the group (-want +got):\n%s", diff)
			}
			if left := groupGone(pgid); len(left) > 0 {
				t.Errorf("left in group: %+v", left)
			}
			if _, err := os.Stat(w.OutputDir()); !os.IsNotExist(err) {
				t.Errorf("output dir still there: %v", err)
			}
			// The other way of stopping finds the stop done.
			if err := w.Close(ctx); err != nil {
				t.Errorf("Close after %s: %v", tc.name, err)
			}
			if err := w.Kill(ctx); err != nil {
				t.Errorf("Kill after %s: %v", tc.name, err)
			}
		})
	}
}
