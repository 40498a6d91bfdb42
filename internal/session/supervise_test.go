package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/upstream"
)

// lastWorker is the newest worker the spawner handed out.
func lastWorker(sp *fakeSpawner) *fakeWorker {
	all := sp.all()
	return all[len(all)-1]
}

func TestCrashedWorkerIsRestartedWithState(t *testing.T) {
	ctx := context.Background()
	m, sp, _ := newManager(t, Options{restartBackoff: 10 * time.Millisecond})
	s, err := m.Create(ctx)
	if err != nil {
		t.Fatal(err)
	}
	navigate(t, m, s.ID, "http://127.0.0.1/page")
	first := lastWorker(sp)
	// The navigation's state reaches the store in the background.
	waitFor(t, "a background state save", func() bool { return m.Stats().StateSaves == 1 })

	first.die()
	waitFor(t, "a replacement worker", func() bool { return len(sp.all()) == 2 })
	second := lastWorker(sp)
	waitFor(t, "the saved state restored", func() bool {
		second.mu.Lock()
		defer second.mu.Unlock()
		return second.restoredFrom == "http://127.0.0.1/page"
	})
	res, err := m.Call(ctx, CallRequest{SessionID: s.ID, Tool: "browser_snapshot"})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Metadata.Restored {
		t.Error("first call after the restart: restored = false")
	}
	res, err = m.Call(ctx, CallRequest{SessionID: s.ID, Tool: "browser_snapshot"})
	if err != nil || res.Metadata.Restored {
		t.Errorf("second call after the restart: restored = %v, err %v; want false", res.Metadata.Restored, err)
	}
	if got := m.Stats(); got.WorkerCrashes != 1 || got.WorkerRestarts != 1 {
		t.Errorf("stats = %+v, want one crash and one restart", got)
	}
}

func TestReadOnlyCallsDoNotSaveState(t *testing.T) {
	ctx := context.Background()
	m, sp, _ := newManager(t, Options{})
	s, err := m.Create(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := m.Call(ctx, CallRequest{SessionID: s.ID, Tool: "browser_snapshot"}); err != nil {
			t.Fatal(err)
		}
	}
	navigate(t, m, s.ID, "http://127.0.0.1/a")
	waitFor(t, "the save after a navigation", func() bool { return m.Stats().StateSaves == 1 })
	time.Sleep(50 * time.Millisecond) // a wrongly scheduled save would show now
	w := lastWorker(sp)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.saves != 1 {
		t.Errorf("worker saved %d times; want once, after the navigation only", w.saves)
	}
}

func TestRepeatedCrashesPutSessionInError(t *testing.T) {
	ctx := context.Background()
	m, sp, _ := newManager(t, Options{restartBackoff: time.Millisecond})
	s, err := m.Create(ctx)
	if err != nil {
		t.Fatal(err)
	}
	other, err := m.Create(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Three crashes are restarted; the fourth within the window is not.
	var current *fakeWorker
	for i := range restartLimit {
		current = workerOf(t, m, sp, s.ID)
		current.die()
		waitFor(t, "a restart", func() bool { return m.Stats().WorkerRestarts == int64(i+1) })
		if _, err := m.Call(ctx, CallRequest{SessionID: s.ID, Tool: "browser_snapshot"}); err != nil {
			t.Fatalf("call after restart %d: %v", i+1, err)
		}
	}
	workerOf(t, m, sp, s.ID).die()
	waitFor(t, "the error state", func() bool { return stateOf(t, m, s.ID) == proxy.SessionError })
	_, err = m.Call(ctx, CallRequest{SessionID: s.ID, Tool: "browser_snapshot"})
	var perr *proxy.Error
	if !errors.As(err, &perr) || perr.Code != proxy.EUNAVAILABLE || !perr.Retryable || proxy.HTTPStatus(perr.Code) != 503 {
		t.Fatalf("call on a failed session = %v; want retryable 503 %s", err, proxy.EUNAVAILABLE)
	}
	// Other sessions do not notice.
	if _, err := m.Call(ctx, CallRequest{SessionID: other.ID, Tool: "browser_snapshot"}); err != nil {
		t.Errorf("call on another session: %v", err)
	}
	// An explicit resume is a fresh start.
	if _, restored, err := m.Resume(ctx, s.ID); err != nil || !restored {
		t.Errorf("Resume of a failed session = restored %v, %v", restored, err)
	}
	if got := stateOf(t, m, s.ID); got != proxy.SessionActive {
		t.Errorf("after resume the session is %s", got)
	}
}

// workerOf returns the live worker of session id.
func workerOf(t *testing.T, m *Manager, sp *fakeSpawner, id string) *fakeWorker {
	t.Helper()
	var pid int
	waitFor(t, "a live worker", func() bool {
		s, err := m.Get(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		pid = s.WorkerPID
		return pid != 0
	})
	for _, w := range sp.all() {
		if w.pid == pid {
			return w
		}
	}
	t.Fatalf("no worker with pid %d", pid)
	return nil
}

func TestHungWorkerIsKilledAndReplaced(t *testing.T) {
	ctx := context.Background()
	m, sp, _ := newManager(t, Options{PingInterval: 10 * time.Millisecond, restartBackoff: time.Millisecond})
	var hang atomic.Bool
	sp.prepare = func(w *fakeWorker) {
		w.ping = func(ctx context.Context) error {
			if hang.Load() {
				<-ctx.Done() // a stopped process never answers
				return ctx.Err()
			}
			return nil
		}
	}
	s, err := m.Create(ctx)
	if err != nil {
		t.Fatal(err)
	}
	navigate(t, m, s.ID, "http://127.0.0.1/p")
	waitFor(t, "the state save", func() bool { return m.Stats().StateSaves == 1 })
	hung := workerOf(t, m, sp, s.ID)
	hang.Store(true)
	waitFor(t, "the hung worker killed", func() bool { return hung.closed.Load() })
	hang.Store(false)
	res := navigate(t, m, s.ID, "http://127.0.0.1/q")
	if !res.Metadata.Restored {
		t.Error("call after the replacement: restored = false")
	}
	if got := m.Stats(); got.WorkersHung != 1 {
		t.Errorf("stats = %+v, want one hung worker", got)
	}
}

func TestBusyWorkerIsNotPinged(t *testing.T) {
	ctx := context.Background()
	m, sp, _ := newManager(t, Options{PingInterval: 5 * time.Millisecond})
	var pingedWhileBusy atomic.Bool
	var busy atomic.Bool
	release := make(chan struct{})
	sp.prepare = func(w *fakeWorker) {
		w.ping = func(context.Context) error {
			if busy.Load() {
				pingedWhileBusy.Store(true)
			}
			return nil
		}
		w.answer = func(name string, _ json.RawMessage) (json.RawMessage, error) {
			if name == "browser_click" {
				busy.Store(true)
				<-release
				busy.Store(false)
			}
			return json.RawMessage(snapshotResult), nil
		}
	}
	s, err := m.Create(ctx)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error)
	go func() {
		_, err := m.Call(ctx, CallRequest{SessionID: s.ID, Tool: "browser_click"})
		done <- err
	}()
	waitFor(t, "the call in flight", busy.Load)
	time.Sleep(50 * time.Millisecond) // ten ping intervals
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if pingedWhileBusy.Load() {
		t.Error("a worker was pinged while its call was in flight")
	}
}

func TestCallsDuringRestartWaitAndRunOnce(t *testing.T) {
	ctx := context.Background()
	m, sp, _ := newManager(t, Options{restartBackoff: 100 * time.Millisecond})
	s, err := m.Create(ctx)
	if err != nil {
		t.Fatal(err)
	}
	workerOf(t, m, sp, s.ID).die()
	var wg sync.WaitGroup
	errs := make(chan error, 5)
	for range 5 {
		wg.Go(func() {
			_, err := m.Call(ctx, CallRequest{SessionID: s.ID, Tool: "browser_click"})
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("call during the restart: %v", err)
		}
	}
	all := sp.all()
	if len(all) != 2 {
		t.Fatalf("%d workers; want the dead one and one replacement", len(all))
	}
	var clicks int32
	for _, w := range all {
		clicks += w.calls.Load()
	}
	if clicks != 5 {
		t.Errorf("upstream saw %d calls; want each of the 5 exactly once", clicks)
	}
}

func TestMaxConcurrentCallsBoundsUpstream(t *testing.T) {
	ctx := context.Background()
	var inFlight, peak atomic.Int32
	m, sp, _ := newManager(t, Options{MaxConcurrentCalls: 2, MaxSessions: 6})
	sp.prepare = func(w *fakeWorker) {
		w.answer = func(string, json.RawMessage) (json.RawMessage, error) {
			n := inFlight.Add(1)
			for {
				p := peak.Load()
				if n <= p || peak.CompareAndSwap(p, n) {
					break
				}
			}
			time.Sleep(5 * time.Millisecond)
			inFlight.Add(-1)
			return json.RawMessage(snapshotResult), nil
		}
	}
	var ids []string
	for range 6 {
		s, err := m.Create(ctx)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, s.ID)
	}
	var wg sync.WaitGroup
	for _, id := range ids {
		wg.Go(func() {
			for range 5 {
				if _, err := m.Call(ctx, CallRequest{SessionID: id, Tool: "browser_snapshot"}); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	if got := peak.Load(); got > 2 || got == 0 {
		t.Errorf("peak concurrent upstream calls = %d; want 1..2", got)
	}
}

// TestEvictionWaitsForBackgroundSave: a session that is only saving its
// state (no call) is idle and may be evicted; a create must not get 429.
func TestEvictionWaitsForBackgroundSave(t *testing.T) {
	ctx := context.Background()
	m, sp, _ := newManager(t, Options{MaxSessions: 1})
	slow := make(chan struct{})
	sp.prepare = func(w *fakeWorker) { w.saveGate = slow }
	s, err := m.Create(ctx)
	if err != nil {
		t.Fatal(err)
	}
	navigate(t, m, s.ID, "http://127.0.0.1/a") // schedules a save, which blocks
	go func() {
		time.Sleep(50 * time.Millisecond)
		close(slow)
	}()
	if _, err := m.Create(ctx); err != nil {
		t.Fatalf("create while the only session saves its state: %v", err)
	}
	if got := stateOf(t, m, s.ID); got != proxy.SessionSuspended {
		t.Errorf("evicted session is %s", got)
	}
}

// TestUndeliveredCallGoesToNewWorker: a worker found dead before the call
// reached it is replaced and the call runs there, once.
func TestUndeliveredCallGoesToNewWorker(t *testing.T) {
	ctx := context.Background()
	m, sp, _ := newManager(t, Options{restartBackoff: time.Millisecond})
	s, err := m.Create(ctx)
	if err != nil {
		t.Fatal(err)
	}
	first := workerOf(t, m, sp, s.ID)
	first.answer = func(string, json.RawMessage) (json.RawMessage, error) {
		return nil, fmt.Errorf("%w: %w", upstream.ErrWorkerExited, upstream.ErrNotDelivered)
	}
	res, err := m.Call(ctx, CallRequest{SessionID: s.ID, Tool: "browser_click"})
	if err != nil {
		t.Fatalf("call: %v", err)
	}
	if !res.Metadata.Restored {
		t.Error("restored = false after the worker was replaced")
	}
	all := sp.all()
	if len(all) != 2 || all[1].calls.Load() != 1 {
		t.Errorf("workers %d; the new one ran %d calls, want 1", len(all), all[len(all)-1].calls.Load())
	}
}
