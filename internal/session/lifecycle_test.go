package session

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
)

// waitFor polls cond: background suspension takes a tick or two.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func stateOf(t *testing.T, m *Manager, id string) proxy.SessionState {
	t.Helper()
	s, err := m.Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return s.State
}

func navigate(t *testing.T, m *Manager, id, url string) *proxy.CallResult {
	t.Helper()
	res, err := m.Call(context.Background(), CallRequest{SessionID: id, Tool: "browser_navigate", Params: json.RawMessage(`{"url":"` + url + `"}`)})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestCreateAtLimitSuspendsLeastRecentlyUsed(t *testing.T) {
	ctx := context.Background()
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	now := func() time.Time { mu.Lock(); defer mu.Unlock(); clock = clock.Add(time.Second); return clock }
	m, sp, _ := newManager(t, Options{MaxSessions: 3, Now: now})
	var ids []string
	for i := 0; i < 3; i++ {
		s, err := m.Create(ctx)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, s.ID)
	}
	// Touch 0 and 2: session 1 becomes the least recently used.
	navigate(t, m, ids[0], "http://127.0.0.1/a")
	navigate(t, m, ids[1], "http://127.0.0.1/b")
	navigate(t, m, ids[2], "http://127.0.0.1/c")
	navigate(t, m, ids[0], "http://127.0.0.1/a2")
	navigate(t, m, ids[2], "http://127.0.0.1/c2")

	if _, err := m.Create(ctx); err != nil {
		t.Fatalf("fourth create at the limit: %v", err)
	}
	want := []proxy.SessionState{proxy.SessionActive, proxy.SessionSuspended, proxy.SessionActive}
	for i, id := range ids {
		if got := stateOf(t, m, id); got != want[i] {
			t.Errorf("session %d is %s, want %s", i, got, want[i])
		}
	}
	evicted := sp.all()[1]
	// One save after its navigation (in the background), one at eviction.
	if !evicted.closed.Load() || evicted.saves < 1 || evicted.saves > 2 {
		t.Errorf("evicted worker: closed=%v saves=%d, want closed after one or two state saves", evicted.closed.Load(), evicted.saves)
	}

	// The evicted session comes back on its next call, with its state, by
	// evicting the now least recently used one.
	res := navigate(t, m, ids[1], "http://127.0.0.1/b2")
	if !res.Metadata.Restored {
		t.Errorf("call on an evicted session: restored=false")
	}
	back := sp.all()[len(sp.all())-1]
	if back.restoredFrom != "http://127.0.0.1/b" {
		t.Errorf("resumed worker restored %q, want the saved URL", back.restoredFrom)
	}
	if got := stateOf(t, m, ids[0]); got != proxy.SessionSuspended {
		t.Errorf("next LRU session is %s, want suspended", got)
	}
}

func TestCreateWhenAllBusyIsRefused(t *testing.T) {
	ctx := context.Background()
	m, sp, _ := newManager(t, Options{MaxSessions: 2})
	release := make(chan struct{})
	started := make(chan struct{}, 2)
	sp.prepare = func(w *fakeWorker) {
		w.answer = func(name string, _ json.RawMessage) (json.RawMessage, error) {
			if name == "browser_click" {
				started <- struct{}{}
				<-release
			}
			return json.RawMessage(snapshotResult), nil
		}
	}
	var wg sync.WaitGroup
	for i := 0; i < 2; i++ {
		s, err := m.Create(ctx)
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := m.Call(ctx, CallRequest{SessionID: s.ID, Tool: "browser_click"}); err != nil {
				t.Error(err)
			}
		}()
	}
	<-started
	<-started
	_, err := m.Create(ctx)
	if proxy.ErrorCode(err) != proxy.EMAXSESSIONS {
		t.Errorf("create with every session busy: %v, want MAX_SESSIONS_REACHED", err)
	}
	close(release)
	wg.Wait()
	if _, err := m.Create(ctx); err != nil {
		t.Errorf("create once calls finished: %v", err)
	}
}

func TestIdleSessionIsSuspendedAndResumesWithState(t *testing.T) {
	ctx := context.Background()
	m, sp, db := newManager(t, Options{IdleTimeout: 200 * time.Millisecond})
	s, _ := m.Create(ctx)
	navigate(t, m, s.ID, "http://127.0.0.1/page")
	first := sp.all()[0]

	waitFor(t, "idle suspension", func() bool { return stateOf(t, m, s.ID) == proxy.SessionSuspended })
	if !first.closed.Load() {
		t.Errorf("suspended session's worker is still open")
	}
	if state, _, err := db.LoadSessionState(ctx, s.ID); err != nil || state == nil {
		t.Errorf("no saved state after suspension: %s, %v", state, err)
	}
	if got, _ := m.Get(ctx, s.ID); got.WorkerPID != 0 {
		t.Errorf("suspended session reports worker %d", got.WorkerPID)
	}

	res, err := m.Call(ctx, CallRequest{SessionID: s.ID, Tool: "browser_snapshot"})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Metadata.Restored {
		t.Errorf("first call after suspension: restored=false")
	}
	if got := sp.all()[1].restoredFrom; got != "http://127.0.0.1/page" {
		t.Errorf("restored URL = %q", got)
	}
	if got := stateOf(t, m, s.ID); got != proxy.SessionActive {
		t.Errorf("after resume: %s", got)
	}
	// A second call in the same worker is not "restored".
	if res, _ := m.Call(ctx, CallRequest{SessionID: s.ID, Tool: "browser_snapshot"}); res.Metadata.Restored {
		t.Errorf("second call after resume: restored=true")
	}
}

func TestResumeIsExplicitAndIdempotent(t *testing.T) {
	ctx := context.Background()
	m, sp, _ := newManager(t, Options{})
	s, _ := m.Create(ctx)
	navigate(t, m, s.ID, "http://127.0.0.1/r")
	m.mu.Lock()
	l := m.live[s.ID]
	m.mu.Unlock()
	if !m.trySuspend(ctx, l, "test") {
		t.Fatal("could not suspend an idle session")
	}

	got, restored, err := m.Resume(ctx, s.ID)
	if err != nil || !restored || got.State != proxy.SessionActive || got.WorkerPID == 0 {
		t.Fatalf("Resume = %+v, %v, %v", got, restored, err)
	}
	if sp.all()[1].restoredFrom != "http://127.0.0.1/r" {
		t.Errorf("resume did not restore the URL")
	}
	if _, restored, err := m.Resume(ctx, s.ID); err != nil || restored {
		t.Errorf("resuming a live session: restored=%v err=%v, want false, nil", restored, err)
	}
	if err := m.Close(ctx, s.ID); err != nil {
		t.Fatal(err)
	}
	if _, _, err := m.Resume(ctx, s.ID); proxy.ErrorCode(err) != proxy.ESESSIONCLOSED {
		t.Errorf("resuming a closed session: %v", err)
	}
}
