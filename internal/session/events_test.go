package session

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
)

// TestSessionEvents: a session's life is in its events, in order: created,
// its worker lost and replaced (with its state given back), suspended,
// resumed, closed.
func TestSessionEvents(t *testing.T) {
	ctx := context.Background()
	m, sp, db := newManager(t, Options{restartBackoff: time.Millisecond})
	s, err := m.CreateSession(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Call(ctx, proxy.CallRequest{SessionID: s.ID, Tool: "browser_snapshot"}); err != nil {
		t.Fatal(err)
	}
	first := workerOf(t, m, sp, s.ID)
	first.die()
	waitFor(t, "a new worker", func() bool {
		got, _ := m.GetSession(ctx, s.ID)
		return got.WorkerPID != 0 && got.WorkerPID != first.pid
	})
	l := m.reg.get(s.ID)
	if err := l.lock(ctx); err != nil {
		t.Fatal(err)
	}
	m.suspendLocked(ctx, l, "idle")
	l.unlock()
	if _, _, err := m.ResumeSession(ctx, s.ID); err != nil {
		t.Fatal(err)
	}
	if err := m.CloseSession(ctx, s.ID); err != nil {
		t.Fatal(err)
	}
	var kinds []string
	waitFor(t, "the close event", func() bool {
		evs, err := db.ListSessionEvents(ctx, s.ID)
		if err != nil {
			t.Fatal(err)
		}
		kinds = kinds[:0]
		for _, e := range evs {
			kinds = append(kinds, e.Kind)
		}
		return len(kinds) > 0 && kinds[len(kinds)-1] == proxy.EventClosed
	})
	// The restart gives the saved state back when there is one, else says
	// it resumed without.
	restored := func(k string) bool { return k == proxy.EventStateRestore || k == proxy.EventResumed }
	want := []string{proxy.EventCreated, proxy.EventWorkerLost, proxy.EventRestarted, "restore", proxy.EventSuspended, "restore", proxy.EventClosed}
	got := make([]string, len(kinds))
	for i, k := range kinds {
		if restored(k) {
			k = "restore"
		}
		got[i] = k
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}
