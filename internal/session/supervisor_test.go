package session

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/clock"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/store"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/worker"
)

// fakeClock is Options.Now that moves only when told to.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// nowClock is a clock.Clock that tells a test's time and waits on real
// timers: for tests that move the time of what is recorded, not the
// manager's own waits.
type nowClock func() time.Time

func (c nowClock) Now() time.Time { return c() }

func (nowClock) NewTimer(d time.Duration) clock.Timer { return clock.Real{}.NewTimer(d) }

// testSaveDelay is the tests' quiet time before a state save.
const testSaveDelay = time.Millisecond

// sleeps is Options.Clock for tests of backoffs: its Now is the test's
// time, and its timers record the delay asked for and fire at once, so
// backoffs are checked without waiting for them. Two waits are not
// backoffs and are not recorded: the state save's quiet spell
// (testSaveDelay) fires at once, and the bounded waits for a session's
// lock run on real time, since what they wait for is another goroutine's
// work, which firing at once would not hurry.
type sleeps struct {
	now   func() time.Time
	mu    sync.Mutex
	asked []time.Duration
}

func (s *sleeps) Now() time.Time { return s.now() }

func (s *sleeps) NewTimer(d time.Duration) clock.Timer {
	switch d {
	case testSaveDelay:
		return firedTimer()
	case restartLockWait, evictLockWait:
		return clock.Real{}.NewTimer(d)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.asked = append(s.asked, d)
	return firedTimer()
}

// firedTimer is a timer that has fired.
func firedTimer() clock.Timer {
	ch := make(chan time.Time, 1)
	ch <- time.Time{}
	return fired(ch)
}

type fired chan time.Time

func (f fired) C() <-chan time.Time { return f }
func (fired) Stop() bool            { return false }

func (s *sleeps) got() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.asked...)
}

// newManagerWith is newManager with a spawner of the test's own.
func newManagerWith(t *testing.T, sp Spawner, opts Options) (*Manager, *store.DB) {
	t.Helper()
	db, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "p.db"))
	if err != nil {
		t.Fatal(err)
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.saveDelay == 0 {
		opts.saveDelay = testSaveDelay
	}
	m := New(db, sp, opts)
	t.Cleanup(func() {
		m.Shutdown(context.Background())
		db.Close()
	})
	return m, db
}

// logSink collects a JSON slog handler's output.
type logSink struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (s *logSink) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.Write(p)
}

// records returns the logged records whose message is msg.
func (s *logSink) records(t *testing.T, msg string) []map[string]any {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(s.buf.Bytes()))
	for sc.Scan() {
		var r map[string]any
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("log line %q: %v", sc.Text(), err)
		}
		if r["msg"] == msg {
			out = append(out, r)
		}
	}
	return out
}

// liveOf returns session id's live handle.
func liveOf(t *testing.T, m *Manager, id string) *live {
	t.Helper()
	l := m.reg.get(id)
	if l == nil {
		t.Fatalf("session %s has no live handle", id)
	}
	return l
}

// wantUnavailable checks that err is the retryable 503 UPSTREAM_UNAVAILABLE.
func wantUnavailable(t *testing.T, what string, err error) {
	t.Helper()
	var perr *proxy.Error
	if !errors.As(err, &perr) || perr.Code != proxy.EUNAVAILABLE || !perr.Retryable {
		t.Fatalf("%s = %v; want a retryable 503 %s", what, err, proxy.EUNAVAILABLE)
	}
}

// lastWorker is the newest worker the spawner handed out.
func lastWorker(sp *fakeSpawner) *fakeWorker {
	all := sp.all()
	return all[len(all)-1]
}

func TestCrashedWorkerIsRestartedWithState(t *testing.T) {
	ctx := context.Background()
	m, sp, _ := newManager(t, Options{restartBackoff: 10 * time.Millisecond})
	s, err := m.CreateSession(ctx)
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
	res, err := m.Call(ctx, proxy.CallRequest{SessionID: s.ID, Tool: "browser_snapshot"})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Metadata.Restored {
		t.Error("first call after the restart: restored = false")
	}
	res, err = m.Call(ctx, proxy.CallRequest{SessionID: s.ID, Tool: "browser_snapshot"})
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
	s, err := m.CreateSession(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := m.Call(ctx, proxy.CallRequest{SessionID: s.ID, Tool: "browser_snapshot"}); err != nil {
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
	s, err := m.CreateSession(ctx)
	if err != nil {
		t.Fatal(err)
	}
	other, err := m.CreateSession(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Three crashes are restarted; the fourth within the window is not.
	var current *fakeWorker
	for i := range restartLimit {
		current = workerOf(t, m, sp, s.ID)
		current.die()
		waitFor(t, "a restart", func() bool { return m.Stats().WorkerRestarts == int64(i+1) })
		if _, err := m.Call(ctx, proxy.CallRequest{SessionID: s.ID, Tool: "browser_snapshot"}); err != nil {
			t.Fatalf("call after restart %d: %v", i+1, err)
		}
	}
	workerOf(t, m, sp, s.ID).die()
	waitFor(t, "the error state", func() bool { return stateOf(t, m, s.ID) == proxy.SessionError })
	_, err = m.Call(ctx, proxy.CallRequest{SessionID: s.ID, Tool: "browser_snapshot"})
	var perr *proxy.Error
	if !errors.As(err, &perr) || perr.Code != proxy.EUNAVAILABLE || !perr.Retryable {
		t.Fatalf("call on a failed session = %v; want retryable 503 %s", err, proxy.EUNAVAILABLE)
	}
	// Other sessions do not notice.
	if _, err := m.Call(ctx, proxy.CallRequest{SessionID: other.ID, Tool: "browser_snapshot"}); err != nil {
		t.Errorf("call on another session: %v", err)
	}
	// An explicit resume is a fresh start.
	if _, restored, err := m.ResumeSession(ctx, s.ID); err != nil || !restored {
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
		s, err := m.GetSession(context.Background(), id)
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
	m, sp, _ := newManager(t, Options{PingInterval: 10 * time.Millisecond, pingTimeout: 20 * time.Millisecond, restartBackoff: time.Millisecond})
	hang := pingsHang(sp)
	s, err := m.CreateSession(ctx)
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
	s, err := m.CreateSession(ctx)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error)
	go func() {
		_, err := m.Call(ctx, proxy.CallRequest{SessionID: s.ID, Tool: "browser_click"})
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
	s, err := m.CreateSession(ctx)
	if err != nil {
		t.Fatal(err)
	}
	workerOf(t, m, sp, s.ID).die()
	var wg sync.WaitGroup
	errs := make(chan error, 5)
	for range 5 {
		wg.Go(func() {
			_, err := m.Call(ctx, proxy.CallRequest{SessionID: s.ID, Tool: "browser_click"})
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
		s, err := m.CreateSession(ctx)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, s.ID)
	}
	var wg sync.WaitGroup
	for _, id := range ids {
		wg.Go(func() {
			for range 5 {
				if _, err := m.Call(ctx, proxy.CallRequest{SessionID: id, Tool: "browser_snapshot"}); err != nil {
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
	s, err := m.CreateSession(ctx)
	if err != nil {
		t.Fatal(err)
	}
	navigate(t, m, s.ID, "http://127.0.0.1/a") // schedules a save, which blocks
	go func() {
		time.Sleep(50 * time.Millisecond)
		close(slow)
	}()
	if _, err := m.CreateSession(ctx); err != nil {
		t.Fatalf("create while the only session saves its state: %v", err)
	}
	if got := stateOf(t, m, s.ID); got != proxy.SessionSuspended {
		t.Errorf("evicted session is %s", got)
	}
}

// TestUndeliveredCallGoesToNewWorker: a worker found dead before the call
// reached it, or whose browser node was found gone before the call was
// sent, is replaced and the call runs on the new worker, once. A node's
// death is no fault of the session's: its restart waits for no backoff.
func TestUndeliveredCallGoesToNewWorker(t *testing.T) {
	tests := []struct {
		name      string
		err       error
		nodeGone  bool            // the worker says it lost its browser
		wantSleep []time.Duration // the restart's backoff
	}{
		{"the worker was dead", fmt.Errorf("%w: %w", worker.ErrWorkerExited, worker.ErrNotDelivered), false, []time.Duration{time.Second}},
		{"its browser node was gone", fmt.Errorf("tools/call browser_click: %w: %w", worker.ErrNotDelivered, worker.ErrNodeDown), true, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			sl := &sleeps{now: newFakeClock().Now}
			m, sp, db := newManager(t, Options{Clock: sl})
			s, err := m.CreateSession(ctx)
			if err != nil {
				t.Fatal(err)
			}
			first := workerOf(t, m, sp, s.ID)
			first.answer = func(string, json.RawMessage) (json.RawMessage, error) {
				first.lostBrowser.Store(tt.nodeGone)
				return nil, tt.err
			}
			res, err := m.Call(ctx, proxy.CallRequest{SessionID: s.ID, Tool: "browser_click"})
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
			if diff := cmp.Diff(tt.wantSleep, sl.got()); diff != "" {
				t.Errorf("backoff before the restart (-want +got):\n%s", diff)
			}
			// The timeline says the worker was lost, once, though no
			// watcher saw it die: the call found it gone.
			evs, err := db.ListSessionEvents(ctx, s.ID)
			if err != nil {
				t.Fatal(err)
			}
			lost := 0
			for _, e := range evs {
				if e.Kind == proxy.EventWorkerLost {
					lost++
				}
			}
			if lost != 1 {
				t.Errorf("%d %s events, want 1", lost, proxy.EventWorkerLost)
			}
		})
	}
}

// TestRestartBackoffAndBudgetWindow: consecutive crashes wait 1 s, 2 s and
// 4 s before their restarts (asked of the injected sleeper, on a frozen
// clock); a fourth crash fails the session while the three restarts are
// less than 5 minutes old, and is restarted after 1 s again once they are
// older.
func TestRestartBackoffAndBudgetWindow(t *testing.T) {
	tests := []struct {
		name string
		// advance is the fake time between the third restart and the
		// fourth crash.
		advance     time.Duration
		wantRestart bool
		wantDelays  []time.Duration
	}{
		{"fourth crash within the window fails the session", restartWindow - time.Second, false,
			[]time.Duration{time.Second, 2 * time.Second, 4 * time.Second}},
		{"the window expires after five minutes", restartWindow, true,
			[]time.Duration{time.Second, 2 * time.Second, 4 * time.Second, time.Second}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			clock := newFakeClock()
			sl := &sleeps{now: clock.Now}
			// restartBackoff is left at its default: the delays are the real ones.
			m, sp, _ := newManager(t, Options{Clock: sl})
			s, err := m.CreateSession(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for i := 1; i <= restartLimit; i++ {
				workerOf(t, m, sp, s.ID).die()
				waitFor(t, fmt.Sprintf("restart %d", i), func() bool { return m.Stats().WorkerRestarts == int64(i) })
			}
			clock.advance(tc.advance)
			workerOf(t, m, sp, s.ID).die()
			if tc.wantRestart {
				waitFor(t, "restart 4", func() bool { return m.Stats().WorkerRestarts == restartLimit+1 })
				res, err := m.Call(ctx, proxy.CallRequest{SessionID: s.ID, Tool: "browser_snapshot"})
				if err != nil || !res.Metadata.Restored {
					t.Fatalf("call after the fourth restart = %+v, %v; want success with restored", res, err)
				}
			} else {
				waitFor(t, "the error state", func() bool { return stateOf(t, m, s.ID) == proxy.SessionError })
				_, err := m.Call(ctx, proxy.CallRequest{SessionID: s.ID, Tool: "browser_snapshot"})
				wantUnavailable(t, "call on the failed session", err)
			}
			if diff := cmp.Diff(tc.wantDelays, sl.got()); diff != "" {
				t.Errorf("restart delays (-want +got):\n%s", diff)
			}
		})
	}
}

// TestBrowserCrashesUseNoRestartBudget: workers lost with the shared
// browser are replaced at once, as often as it happens, and leave the
// session's restart budget whole; a crash of the session's own worker then
// uses one restart, which the session and the counters show.
func TestBrowserCrashesUseNoRestartBudget(t *testing.T) {
	ctx := context.Background()
	clock := newFakeClock()
	sl := &sleeps{now: clock.Now}
	m, sp, _ := newManager(t, Options{Clock: sl})
	s, err := m.CreateSession(ctx)
	if err != nil {
		t.Fatal(err)
	}
	left := func() int {
		t.Helper()
		got, err := m.GetSession(ctx, s.ID)
		if err != nil || got.RestartsLeft == nil {
			t.Fatalf("Get = %+v, %v; want restarts_left", got, err)
		}
		return *got.RestartsLeft
	}
	if n := left(); n != restartLimit {
		t.Fatalf("restarts_left of a new session = %d, want %d", n, restartLimit)
	}
	for i := 1; i <= restartLimit+2; i++ {
		w := workerOf(t, m, sp, s.ID)
		w.lostBrowser.Store(true)
		w.die()
		waitFor(t, fmt.Sprintf("restart %d", i), func() bool { return m.Stats().WorkerRestarts == int64(i) })
	}
	if st := stateOf(t, m, s.ID); st != proxy.SessionActive {
		t.Fatalf("after %d browser crashes the session is %s, want active", restartLimit+2, st)
	}
	if n, low := left(), m.RestartsLeft(); n != restartLimit || len(low) != 0 || len(sl.got()) != 0 {
		t.Errorf("after browser crashes: restarts_left %d, sessions low on restarts %v, backoffs %v; want %d, none, none", n, low, sl.got(), restartLimit)
	}

	workerOf(t, m, sp, s.ID).die() // its own crash
	waitFor(t, "the restart after its own crash", func() bool { return m.Stats().WorkerRestarts == restartLimit+3 })
	if n, low := left(), m.RestartsLeft(); n != restartLimit-1 || low[s.ID] != restartLimit-1 {
		t.Errorf("after its own crash: restarts_left %d, sessions low on restarts %v; want %d for %s", n, low, restartLimit-1, s.ID)
	}
	if diff := cmp.Diff([]time.Duration{time.Second}, sl.got()); diff != "" {
		t.Errorf("restart delays (-want +got):\n%s", diff)
	}
	res, err := m.Call(ctx, proxy.CallRequest{SessionID: s.ID, Tool: "browser_snapshot"})
	if err != nil || !res.Metadata.Restored {
		t.Errorf("call after the restarts = %+v, %v; want success with restored", res, err)
	}
}

// TestCallDuringFailingRestartGets503: a call that arrives while a restart
// is under way waits for it; when the restart fails (its spawn fails, or it
// is still spawning at its time limit) the call is not left hanging, even
// without a deadline of its own: it makes its own attempt and gets a
// retryable 503. Failed attempts use up the restart budget: the attempt
// that finally works waits the third backoff.
func TestCallDuringFailingRestartGets503(t *testing.T) {
	tests := []struct {
		name string
		// restart is the restart's spawn; queued is closed once a call
		// waits behind the restart.
		restart func(ctx context.Context, queued <-chan struct{}) error
		// limit is the restart's time limit (0: the default).
		limit time.Duration
		// wantRestartErr is what ended the restart's spawn.
		wantRestartErr error
	}{
		{
			name: "the restart's spawn fails",
			restart: func(_ context.Context, queued <-chan struct{}) error {
				<-queued
				return errNoBrowser
			},
			wantRestartErr: errNoBrowser,
		},
		{
			name: "the restart is still spawning at its time limit",
			restart: func(ctx context.Context, queued <-chan struct{}) error {
				<-queued
				<-ctx.Done()
				return ctx.Err()
			},
			limit:          50 * time.Millisecond,
			wantRestartErr: context.DeadlineExceeded,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			var (
				spawns     atomic.Int32
				failing    atomic.Bool
				entered    = make(chan struct{})
				queued     = make(chan struct{})
				restartErr = make(chan error, 1)
			)
			fake := &fakeSpawner{t: t}
			sp := SpawnFunc(func(ctx context.Context) (Worker, error) {
				switch n := spawns.Add(1); {
				case n == 2: // the background restart
					close(entered)
					err := tc.restart(ctx, queued)
					restartErr <- err
					return nil, err
				case n > 2 && failing.Load():
					return nil, errNoBrowser
				}
				return fake.Spawn(ctx)
			})
			sl := &sleeps{now: newFakeClock().Now}
			m, _ := newManagerWith(t, sp, Options{Clock: sl, restartTimeLimit: tc.limit})
			s, err := m.CreateSession(ctx)
			if err != nil {
				t.Fatal(err)
			}
			navigate(t, m, s.ID, "http://127.0.0.1/kept")
			waitFor(t, "the state save", func() bool { return m.Stats().StateSaves == 1 })
			failing.Store(true)
			l := liveOf(t, m, s.ID)
			fake.all()[0].die()
			<-entered // the restart holds the session

			done := make(chan error, 1)
			go func() {
				_, err := m.Call(ctx, proxy.CallRequest{SessionID: s.ID, Tool: "browser_snapshot"})
				done <- err
			}()
			waitFor(t, "the call to queue behind the restart", l.busy)
			close(queued)
			if err := <-restartErr; !errors.Is(err, tc.wantRestartErr) {
				t.Errorf("the restart's spawn ended with %v, want %v", err, tc.wantRestartErr)
			}
			wantUnavailable(t, "call queued behind a failed restart", <-done)

			// Workers start again: the next call gets one, with the state.
			failing.Store(false)
			res, err := m.Call(ctx, proxy.CallRequest{SessionID: s.ID, Tool: "browser_snapshot"})
			if err != nil || !res.Metadata.Restored {
				t.Fatalf("call once workers start again = %+v, %v; want success with restored", res, err)
			}
			if got := lastWorker(fake).restoredFrom; got != "http://127.0.0.1/kept" {
				t.Errorf("restored URL = %q", got)
			}
			want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second}
			if diff := cmp.Diff(want, sl.got()); diff != "" {
				t.Errorf("restart delays (-want +got):\n%s", diff)
			}
			if got := m.Stats(); got.WorkerCrashes != 1 || got.WorkerRestarts != 1 {
				t.Errorf("stats = %+v; want one crash and one restart (failed attempts are not restarts)", got)
			}
		})
	}
}

var errNoBrowser = errors.New("no chromium")

// TestRestartIsLogged: a restart logs its own line (session, attempt,
// reason) and the session being active again.
func TestRestartIsLogged(t *testing.T) {
	tests := []struct {
		name       string
		pings      bool // the worker hangs (stops answering pings) rather than dies
		wantReason string
	}{
		{"crash", false, "its worker exited"},
		{"hang", true, "its worker did not answer 3 pings in a row"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			var logs logSink
			opts := Options{restartBackoff: time.Millisecond, Logger: slog.New(slog.NewJSONHandler(&logs, nil))}
			if tc.pings {
				opts.PingInterval, opts.pingTimeout = 5*time.Millisecond, 20*time.Millisecond
			}
			m, sp, _ := newManager(t, opts)
			hang := pingsHang(sp)
			s, err := m.CreateSession(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if tc.pings {
				hang.Store(true)
			} else {
				workerOf(t, m, sp, s.ID).die()
			}
			waitFor(t, "the restart", func() bool { return m.Stats().WorkerRestarts == 1 })
			hang.Store(false)
			newPID := float64(workerOf(t, m, sp, s.ID).pid)

			type line struct {
				SessionID, Reason string
				Attempt, Of, PID  float64
			}
			var got []line
			for _, r := range logs.records(t, "session worker restarted") {
				got = append(got, line{SessionID: fmt.Sprint(r["session_id"]), Reason: fmt.Sprint(r["reason"]),
					Attempt: r["attempt"].(float64), Of: r["of"].(float64), PID: r["worker_pid"].(float64)})
			}
			want := []line{{SessionID: s.ID, Reason: tc.wantReason, Attempt: 1, Of: restartLimit, PID: newPID}}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("restart log lines (-want +got):\n%s", diff)
			}
			active := logs.records(t, "session active again")
			if len(active) != 1 || active[0]["session_id"] != s.ID || active[0]["state"] != string(proxy.SessionActive) {
				t.Errorf("session active again lines = %v; want one for %s", active, s.ID)
			}
		})
	}
}

// TestCheckWorkers: the workers check of /health fails while the last
// worker start failed, naming the sessions in the error state, and passes
// again once a start works; a start the caller gave up on does not count.
func TestCheckWorkers(t *testing.T) {
	ctx := context.Background()
	m, sp, db := newManager(t, Options{Clock: nowClock(newFakeClock().Now)})
	setFail := func(err error) {
		sp.mu.Lock()
		defer sp.mu.Unlock()
		sp.fail = err
	}
	var failedID string
	steps := []struct {
		name string
		do   func(t *testing.T)
		want string // "" is healthy
	}{
		{"no start yet", func(*testing.T) {}, ""},
		{"a start works", func(t *testing.T) {
			s, err := m.CreateSession(ctx)
			if err != nil {
				t.Fatal(err)
			}
			failedID = s.ID
		}, ""},
		{"a start fails", func(t *testing.T) {
			setFail(errNoBrowser)
			if _, err := m.CreateSession(ctx); err == nil {
				t.Fatal("create with failing spawns succeeded")
			}
		}, "workers cannot be started: the last start, at 2026-01-01T00:00:00Z, failed: no chromium; 0 session(s) in the error state"},
		{"a session in the error state is named", func(t *testing.T) {
			if err := db.UpdateSessionState(ctx, failedID, proxy.SessionError); err != nil {
				t.Fatal(err)
			}
		}, "workers cannot be started: the last start, at 2026-01-01T00:00:00Z, failed: no chromium; 1 session(s) in the error state"},
		{"a start works again", func(t *testing.T) {
			setFail(nil)
			if _, err := m.CreateSession(ctx); err != nil {
				t.Fatal(err)
			}
		}, ""},
		{"a start the caller gave up on does not count", func(t *testing.T) {
			setFail(context.Canceled)
			cctx, cancel := context.WithCancel(ctx)
			cancel()
			if _, err := m.CreateSession(cctx); err == nil {
				t.Fatal("create with a cancelled context succeeded")
			}
		}, ""},
	}
	for _, st := range steps {
		st.do(t)
		got := ""
		if err := m.CheckWorkers(ctx); err != nil {
			got = err.Error()
		}
		if got != st.want {
			t.Errorf("%s: CheckWorkers = %q, want %q", st.name, got, st.want)
		}
	}
}
