package session

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/worker"
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
	s, err := m.GetSession(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return s.State
}

func navigate(t *testing.T, m *Manager, id, url string) *proxy.CallResult {
	t.Helper()
	res, err := m.Call(context.Background(), proxy.CallRequest{SessionID: id, Tool: "browser_navigate", Params: json.RawMessage(`{"url":"` + url + `"}`)})
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
	m, sp, _ := newManager(t, Options{MaxSessions: 3, Clock: nowClock(now)})
	var ids []string
	for i := 0; i < 3; i++ {
		s, err := m.CreateSession(ctx)
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

	if _, err := m.CreateSession(ctx); err != nil {
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
		s, err := m.CreateSession(ctx)
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := m.Call(ctx, proxy.CallRequest{SessionID: s.ID, Tool: "browser_click"}); err != nil {
				t.Error(err)
			}
		}()
	}
	<-started
	<-started
	_, err := m.CreateSession(ctx)
	if proxy.ErrorCode(err) != proxy.EMAXSESSIONS {
		t.Errorf("create with every session busy: %v, want MAX_SESSIONS_REACHED", err)
	}
	close(release)
	wg.Wait()
	if _, err := m.CreateSession(ctx); err != nil {
		t.Errorf("create once calls finished: %v", err)
	}
}

func TestIdleSessionIsSuspendedAndResumesWithState(t *testing.T) {
	ctx := context.Background()
	m, sp, db := newManager(t, Options{IdleTimeout: 200 * time.Millisecond})
	s, _ := m.CreateSession(ctx)
	navigate(t, m, s.ID, "http://127.0.0.1/page")
	first := sp.all()[0]

	waitFor(t, "idle suspension", func() bool { return stateOf(t, m, s.ID) == proxy.SessionSuspended })
	if !first.closed.Load() {
		t.Errorf("suspended session's worker is still open")
	}
	if state, _, err := db.LoadSessionState(ctx, s.ID); err != nil || state == nil {
		t.Errorf("no saved state after suspension: %s, %v", state, err)
	}
	if got, _ := m.GetSession(ctx, s.ID); got.WorkerPID != 0 {
		t.Errorf("suspended session reports worker %d", got.WorkerPID)
	}

	res, err := m.Call(ctx, proxy.CallRequest{SessionID: s.ID, Tool: "browser_snapshot"})
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
	if res, _ := m.Call(ctx, proxy.CallRequest{SessionID: s.ID, Tool: "browser_snapshot"}); res.Metadata.Restored {
		t.Errorf("second call after resume: restored=true")
	}
}

func TestResumeIsExplicitAndIdempotent(t *testing.T) {
	ctx := context.Background()
	m, sp, _ := newManager(t, Options{})
	s, _ := m.CreateSession(ctx)
	navigate(t, m, s.ID, "http://127.0.0.1/r")
	l := m.reg.get(s.ID)
	if !m.trySuspend(ctx, l, "test") {
		t.Fatal("could not suspend an idle session")
	}

	got, restored, err := m.ResumeSession(ctx, s.ID)
	if err != nil || !restored || got.State != proxy.SessionActive || got.WorkerPID == 0 {
		t.Fatalf("Resume = %+v, %v, %v", got, restored, err)
	}
	if sp.all()[1].restoredFrom != "http://127.0.0.1/r" {
		t.Errorf("resume did not restore the URL")
	}
	if _, restored, err := m.ResumeSession(ctx, s.ID); err != nil || restored {
		t.Errorf("resuming a live session: restored=%v err=%v, want false, nil", restored, err)
	}
	if err := m.CloseSession(ctx, s.ID); err != nil {
		t.Fatal(err)
	}
	if _, _, err := m.ResumeSession(ctx, s.ID); proxy.ErrorCode(err) != proxy.ESESSIONCLOSED {
		t.Errorf("resuming a closed session: %v", err)
	}
}

// closingWorker is a fake worker that offers browser_close and records, in
// order, the state saves, browser_close calls and stops it sees, with the
// deadline of each one's first context (a real worker's later stops do
// nothing).
type closingWorker struct {
	*fakeWorker
	// save, if set, runs inside SaveState; its error fails the save.
	save func(ctx context.Context) error

	evMu      sync.Mutex
	events    []string
	deadlines map[string]time.Time
	saveErr   error
}

func (w *closingWorker) note(ev string, ctx context.Context) {
	w.evMu.Lock()
	defer w.evMu.Unlock()
	w.events = append(w.events, ev)
	if dl, ok := ctx.Deadline(); ok {
		if w.deadlines == nil {
			w.deadlines = map[string]time.Time{}
		}
		if _, seen := w.deadlines[ev]; !seen {
			w.deadlines[ev] = dl
		}
	}
}

func (w *closingWorker) seen() ([]string, map[string]time.Time, error) {
	w.evMu.Lock()
	defer w.evMu.Unlock()
	return append([]string(nil), w.events...), w.deadlines, w.saveErr
}

func (w *closingWorker) Tools() []proxy.Tool {
	return append(w.fakeWorker.Tools(), proxy.Tool{Name: "browser_close", InputSchema: json.RawMessage(`{"type":"object"}`)})
}

func (w *closingWorker) CallTool(ctx context.Context, name string, args json.RawMessage) (json.RawMessage, error) {
	if name == "browser_close" {
		w.note("browser_close", ctx)
	}
	return w.fakeWorker.CallTool(ctx, name, args)
}

func (w *closingWorker) SaveState(ctx context.Context) (json.RawMessage, error) {
	w.note("save", ctx)
	if w.save != nil {
		if err := w.save(ctx); err != nil {
			w.evMu.Lock()
			w.saveErr = err
			w.evMu.Unlock()
			return nil, err
		}
	}
	return w.fakeWorker.SaveState(ctx)
}

func (w *closingWorker) Close(ctx context.Context) error {
	w.note("stop", ctx)
	return w.fakeWorker.Close(ctx)
}

// closingWorkers spawns closingWorkers, each prepared by prepare (if set).
type closingWorkers struct {
	t       *testing.T
	prepare func(*closingWorker)
	mu      sync.Mutex
	workers []*closingWorker
}

func (s *closingWorkers) Spawn(context.Context) (Worker, error) {
	w := &closingWorker{fakeWorker: newFakeWorker(s.t)}
	if s.prepare != nil {
		s.prepare(w)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.workers = append(s.workers, w)
	return w, nil
}

func (s *closingWorkers) all() []*closingWorker {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*closingWorker(nil), s.workers...)
}

// TestShutdownSavesClosesBrowserThenStops: Shutdown saves every live
// session's state, then calls browser_close in its worker, then stops the
// worker; the sessions are left suspended with their state, and the save and
// browser_close end before the shutdown budget, leaving the worker's stop
// its reserve.
func TestShutdownSavesClosesBrowserThenStops(t *testing.T) {
	ctx := context.Background()
	sp := &closingWorkers{t: t}
	m, db := newManagerWith(t, sp, Options{})
	urls := map[string]string{}
	for _, u := range []string{"http://127.0.0.1/a", "http://127.0.0.1/b", "http://127.0.0.1/c"} {
		s, err := m.CreateSession(ctx)
		if err != nil {
			t.Fatal(err)
		}
		w := sp.all()[len(sp.all())-1]
		w.mu.Lock()
		w.url = u // what the page "visited"; no call, so no background save
		w.mu.Unlock()
		urls[s.ID] = u
	}

	// proxy-server's budget: less than the save's own limit plus the
	// reserve, so the budget is what bounds the save.
	sctx, cancel := context.WithTimeout(ctx, 8*time.Second)
	defer cancel()
	deadline, _ := sctx.Deadline()
	last := deadline.Add(-ShutdownStopReserve)
	if err := m.Shutdown(sctx); err != nil {
		t.Fatal(err)
	}
	for i, w := range sp.all() {
		events, deadlines, _ := w.seen()
		if diff := cmp.Diff([]string{"save", "browser_close", "stop"}, events); diff != "" {
			t.Errorf("worker %d (-want +got):\n%s", i, diff)
		}
		if dl := deadlines["save"]; !dl.Equal(last) {
			t.Errorf("worker %d: the save's deadline is %v; want %v, the shutdown's less the stop reserve", i, dl, last)
		}
		if dl, ok := deadlines["browser_close"]; !ok || dl.After(last) {
			t.Errorf("worker %d: browser_close's deadline is %v (set: %v); want one by %v", i, dl, ok, last)
		}
	}
	for id, u := range urls {
		state, _, err := db.LoadSessionState(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		var saved struct{ URL string }
		if err := json.Unmarshal(state, &saved); err != nil || saved.URL != u {
			t.Errorf("session %s: saved state %s (%v), want url %s", id, state, err, u)
		}
		if got := stateOf(t, m, id); got != proxy.SessionSuspended {
			t.Errorf("session %s is %s after shutdown, want suspended", id, got)
		}
	}
}

// TestShutdownSaveEndsWithBudget: a state save that would never end stops
// when the shutdown's budget (less the stop reserve) is spent, or when the
// shutdown is cancelled; browser_close is then skipped, the worker stopped
// and the session still left suspended.
// TestShutdownStopsWorkersWithinBudget: however the budget is spent before
// a worker is stopped (a call in flight that does not end, a save that
// takes all it may), the stop gets what is left of the shutdown's budget,
// not a budget of its own that would run past it.
func TestShutdownStopsWorkersWithinBudget(t *testing.T) {
	tests := []struct {
		name    string
		prepare func(w *closingWorker, started chan<- struct{})
		call    bool // a call is in flight when the shutdown begins
	}{
		{"a call in flight", func(w *closingWorker, started chan<- struct{}) {
			w.answer = func(string, json.RawMessage) (json.RawMessage, error) {
				close(started)
				<-w.done // a call only the worker's stop ends
				return nil, worker.ErrWorkerExited
			}
		}, true},
		{"a save that takes its whole share", func(w *closingWorker, started chan<- struct{}) {
			w.save = func(ctx context.Context) error {
				close(started)
				<-ctx.Done()
				return ctx.Err()
			}
		}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			started := make(chan struct{})
			sp := &closingWorkers{t: t, prepare: func(w *closingWorker) { tc.prepare(w, started) }}
			m, _ := newManagerWith(t, sp, Options{})
			s, err := m.CreateSession(ctx)
			if err != nil {
				t.Fatal(err)
			}
			called := make(chan struct{})
			if tc.call {
				go func() {
					defer close(called)
					_, _ = m.Call(ctx, proxy.CallRequest{SessionID: s.ID, Tool: "browser_click"})
				}()
				<-started
			} else {
				close(called)
			}
			sctx, cancel := context.WithTimeout(ctx, ShutdownStopReserve+100*time.Millisecond)
			defer cancel()
			done := make(chan error, 1)
			go func() { done <- m.Shutdown(sctx) }()
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			<-called
			_, deadlines, _ := sp.all()[0].seen()
			shutdownDL, _ := sctx.Deadline()
			if dl, ok := deadlines["stop"]; !ok || dl.After(shutdownDL) {
				t.Errorf("the worker's stop had deadline %v (set: %v), after the shutdown's %v", dl, ok, shutdownDL)
			}
			if got := stateOf(t, m, s.ID); got != proxy.SessionSuspended {
				t.Errorf("session is %s after shutdown, want suspended", got)
			}
		})
	}
}

func TestShutdownSaveEndsWithBudget(t *testing.T) {
	tests := []struct {
		name string
		// budget is the shutdown's timeout; 0: none, the test cancels the
		// shutdown once the save has begun.
		budget       time.Duration
		wantErr      error
		wantDeadline bool // the save had the shutdown's deadline less the reserve
	}{
		// The save's share ends 50 ms after the shutdown begins.
		{"budget spent", ShutdownStopReserve + 50*time.Millisecond, context.DeadlineExceeded, true},
		{"shutdown cancelled", 0, context.Canceled, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			saving := make(chan struct{})
			sp := &closingWorkers{t: t, prepare: func(w *closingWorker) {
				w.save = func(ctx context.Context) error {
					close(saving)
					<-ctx.Done() // a save that only its context ends
					return ctx.Err()
				}
			}}
			m, _ := newManagerWith(t, sp, Options{})
			s, err := m.CreateSession(ctx)
			if err != nil {
				t.Fatal(err)
			}
			sctx, cancel := context.WithCancel(ctx)
			if tc.budget > 0 {
				sctx, cancel = context.WithTimeout(ctx, tc.budget)
			}
			defer cancel()
			done := make(chan error, 1)
			go func() { done <- m.Shutdown(sctx) }()
			<-saving
			if tc.budget == 0 {
				cancel()
			}
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			w := sp.all()[0]
			events, deadlines, saveErr := w.seen()
			if diff := cmp.Diff([]string{"save", "stop"}, events); diff != "" {
				t.Errorf("worker events (-want +got):\n%s", diff)
			}
			if !errors.Is(saveErr, tc.wantErr) {
				t.Errorf("the save ended with %v, want %v", saveErr, tc.wantErr)
			}
			dl, ok := deadlines["save"]
			if shutdownDL, _ := sctx.Deadline(); tc.wantDeadline && (!ok || !dl.Equal(shutdownDL.Add(-ShutdownStopReserve))) {
				t.Errorf("save deadline = %v (set: %v), want the shutdown's %v less %v", dl, ok, shutdownDL, ShutdownStopReserve)
			}
			if got := stateOf(t, m, s.ID); got != proxy.SessionSuspended {
				t.Errorf("session is %s after shutdown, want suspended", got)
			}
		})
	}
}
