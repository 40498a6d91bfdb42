package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/store"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/upstream"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/worker"
)

// fakeWorker stands in for @playwright/mcp in the manager's unit tests; the
// real one is exercised by the end-to-end tests.
type fakeWorker struct {
	pid    int
	dir    string
	done   chan struct{}
	once   sync.Once
	closed atomic.Bool
	killed atomic.Bool // stopped with Kill, not Close
	calls  atomic.Int32
	// answer returns the raw result of a call; nil answers a snapshot.
	answer func(name string, args json.RawMessage) (json.RawMessage, error)
	// ping replaces the answer to pings.
	ping func(ctx context.Context) error
	// saveGate, when set, holds SaveState until it is closed.
	saveGate chan struct{}
	// lostBrowser makes its end one of the shared browser's (LostBrowser).
	lostBrowser atomic.Bool
	// hostHung makes it a hosted session whose host was killed as hung
	// (HostHung).
	hostHung atomic.Bool

	// shares makes it a worker of the shared browser (SharesBrowser), whose
	// renderers are found by RendererPIDs: renderers, counted in lookups.
	shares    bool
	renderers []int
	lookups   atomic.Int32
	// rendererBytes is what Memory reports its renderers hold.
	rendererBytes atomic.Int64
	// shape is what it was spawned with (upstream.WithShape).
	shape upstream.Shape
	// endpoint is the CDP address it reports for the live view ("": none).
	endpoint string

	mu           sync.Mutex
	url          string // set by browser_navigate's "url" argument
	saves        int
	restoredFrom string
	// storage is the storage state it saves (none when nil); a restore
	// sets it, and restoredStorage lists every one it was given.
	storage         json.RawMessage
	restoredStorage []string
	// restoreErr fails RestoreState.
	restoreErr error
	// memoryPIDs is what Memory was last asked about.
	memoryPIDs []int
}

var nextPID atomic.Int32

func newFakeWorker(t *testing.T) *fakeWorker {
	return &fakeWorker{pid: int(nextPID.Add(1)), dir: t.TempDir(), done: make(chan struct{})}
}

func (w *fakeWorker) Tools() []proxy.Tool {
	return []proxy.Tool{{Name: "browser_snapshot", InputSchema: json.RawMessage(`{"type":"object"}`), Annotations: json.RawMessage(`{"readOnlyHint":true}`)}, {Name: "browser_click", InputSchema: json.RawMessage(`{"type":"object"}`)},
		{Name: "browser_navigate", InputSchema: json.RawMessage(`{"type":"object"}`)}}
}

const snapshotResult = `{"content":[{"type":"text","text":"### Page\n- Page URL: http://127.0.0.1/x\n- Page Title: X\n### Snapshot\n` + "```yaml\\n- button \\\"Go\\\" [ref=e1]\\n```" + `"}]}`

func (w *fakeWorker) CallTool(ctx context.Context, name string, args json.RawMessage) (json.RawMessage, error) {
	w.calls.Add(1)
	select {
	case <-w.done:
		return nil, worker.ErrWorkerExited
	default:
	}
	if name == "browser_navigate" {
		var a struct{ URL string }
		_ = json.Unmarshal(args, &a)
		w.mu.Lock()
		w.url = a.URL
		w.mu.Unlock()
	}
	if w.answer != nil {
		return w.answer(name, args)
	}
	return json.RawMessage(snapshotResult), nil
}
func (w *fakeWorker) Ping(ctx context.Context) error {
	if w.ping != nil {
		return w.ping(ctx)
	}
	select {
	case <-w.done:
		return worker.ErrWorkerExited
	default:
		return nil
	}
}
func (w *fakeWorker) RSS() int64          { return 1 << 20 }
func (w *fakeWorker) SharesBrowser() bool { return w.shares }
func (w *fakeWorker) RendererPIDs(context.Context) ([]int, error) {
	w.lookups.Add(1)
	return w.renderers, nil
}
func (w *fakeWorker) Memory(pids []int) upstream.Memory {
	w.mu.Lock()
	w.memoryPIDs = pids
	w.mu.Unlock()
	select {
	case <-w.done:
		return upstream.Memory{}
	default:
	}
	return upstream.Memory{WorkerBytes: w.RSS(), RendererBytes: w.rendererBytes.Load(), Renderers: len(pids)}
}
func (w *fakeWorker) LostBrowser() bool     { return w.lostBrowser.Load() }
func (w *fakeWorker) HostHung() bool        { return w.hostHung.Load() }
func (w *fakeWorker) DebugEndpoint() string { return w.endpoint }

// SaveState reports the URL this fake "visited" so tests can see it come back.
func (w *fakeWorker) SaveState(context.Context) (json.RawMessage, error) {
	if w.saveGate != nil {
		<-w.saveGate
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.saves++
	return json.Marshal(fakeState{URL: w.url, Storage: w.storage})
}

// fakeState is what the fake saves: upstream.SavedState's fields it plays.
type fakeState struct {
	URL     string          `json:"url"`
	Storage json.RawMessage `json:"storage_state,omitempty"`
}

func (w *fakeWorker) RestoreState(_ context.Context, state json.RawMessage) error {
	var s fakeState
	if err := json.Unmarshal(state, &s); err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.restoreErr != nil {
		return w.restoreErr
	}
	w.url, w.restoredFrom = s.URL, s.URL
	if len(s.Storage) > 0 {
		w.storage = s.Storage
		w.restoredStorage = append(w.restoredStorage, string(s.Storage))
	}
	return nil
}

// setStorage changes what the fake's browser holds, as a page would.
func (w *fakeWorker) setStorage(s string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.storage = json.RawMessage(s)
}

func (w *fakeWorker) restoredStorages() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.restoredStorage...)
}
func (w *fakeWorker) PID() int              { return w.pid }
func (w *fakeWorker) OutputDir() string     { return w.dir }
func (w *fakeWorker) Done() <-chan struct{} { return w.done }
func (w *fakeWorker) die()                  { w.once.Do(func() { close(w.done) }) }
func (w *fakeWorker) Close(context.Context) error {
	w.closed.Store(true)
	w.die()
	return nil
}
func (w *fakeWorker) Kill(context.Context) error {
	w.killed.Store(true)
	w.closed.Store(true)
	w.die()
	return nil
}

// fakeSpawner hands out fake workers and remembers them.
type fakeSpawner struct {
	t       *testing.T
	mu      sync.Mutex
	workers []*fakeWorker
	fail    error
	prepare func(*fakeWorker)
}

func (s *fakeSpawner) Spawn(ctx context.Context) (Worker, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail != nil {
		return nil, s.fail
	}
	w := newFakeWorker(s.t)
	w.shape = upstream.ShapeFrom(ctx)
	if s.prepare != nil {
		s.prepare(w)
	}
	s.workers = append(s.workers, w)
	return w, nil
}

func (s *fakeSpawner) all() []*fakeWorker {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*fakeWorker(nil), s.workers...)
}

func newManager(t *testing.T, opts Options) (*Manager, *fakeSpawner, *store.DB) {
	t.Helper()
	return newManagerOn(t, opts, func(db *store.DB) Store { return db })
}

// newManagerOn is newManager over the Store on returns for the test's
// database.
func newManagerOn(t *testing.T, opts Options, on func(*store.DB) Store) (*Manager, *fakeSpawner, *store.DB) {
	t.Helper()
	db, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "p.db"))
	if err != nil {
		t.Fatal(err)
	}
	sp := &fakeSpawner{t: t}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.saveDelay == 0 {
		opts.saveDelay = testSaveDelay
	}
	m := New(on(db), sp, opts)
	t.Cleanup(func() {
		m.Shutdown(context.Background())
		db.Close()
	})
	return m, sp, db
}

// TestCallRecordsAndReportsMetadata: a call's rows and result, and the
// result's one encoding, which the observer counts.
func TestCallRecordsAndReportsMetadata(t *testing.T) {
	ctx := context.Background()
	seen := &answerSizes{}
	m, _, db := newManager(t, Options{Observer: seen})
	s, err := m.CreateSession(ctx)
	if err != nil {
		t.Fatal(err)
	}
	res, err := m.Call(ctx, proxy.CallRequest{SessionID: s.ID, Tool: "browser_snapshot"})
	if err != nil {
		t.Fatal(err)
	}
	want := proxy.CallMetadata{Tool: "browser_snapshot", PageURL: "http://127.0.0.1/x", PageTitle: "X", HasSnapshot: true, SnapshotBytes: len(`- button "Go" [ref=e1]`)}
	if diff := cmp.Diff(want, res.Metadata); diff != "" {
		t.Errorf("metadata (-want +got):\n%s", diff)
	}
	resp, err := db.GetResponse(ctx, res.RefID)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Result != snapshotResult {
		t.Errorf("stored result is not the upstream bytes:\n%s", resp.Result)
	}
	if resp.PageSnapshot != `- button "Go" [ref=e1]` {
		t.Errorf("stored snapshot = %q", resp.PageSnapshot)
	}
	req, err := db.GetRequest(ctx, res.RefID)
	if err != nil || req.SessionID != s.ID || string(req.Params) != "{}" {
		t.Errorf("stored request = %+v, %v", req, err)
	}

	encoded := res.Encoded
	res.Encoded = nil
	wantJSON, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(wantJSON), string(encoded)); diff != "" {
		t.Errorf("Encoded (-want +got):\n%s", diff)
	}
	seen.mu.Lock()
	defer seen.mu.Unlock()
	if diff := cmp.Diff([]int{len(wantJSON)}, seen.returned); diff != "" {
		t.Errorf("bytes returned (-want +got):\n%s", diff)
	}
}

func TestCallErrors(t *testing.T) {
	ctx := context.Background()
	m, _, _ := newManager(t, Options{})
	s, err := m.CreateSession(ctx)
	if err != nil {
		t.Fatal(err)
	}
	closed, _ := m.CreateSession(ctx)
	if err := m.CloseSession(ctx, closed.ID); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		req  proxy.CallRequest
		code string
	}{
		{"no session", proxy.CallRequest{Tool: "browser_snapshot"}, proxy.EINVALID},
		{"unknown session", proxy.CallRequest{SessionID: "6f1c1d2e-0000-4000-8000-000000000000", Tool: "browser_snapshot"}, proxy.ESESSIONMISSING},
		{"not a uuid", proxy.CallRequest{SessionID: "x'; drop table", Tool: "browser_snapshot"}, proxy.ESESSIONMISSING},
		{"closed", proxy.CallRequest{SessionID: closed.ID, Tool: "browser_snapshot"}, proxy.ESESSIONCLOSED},
		{"unknown tool", proxy.CallRequest{SessionID: s.ID, Tool: "browser_fly"}, proxy.ETOOLMISSING},
		{"no tool", proxy.CallRequest{SessionID: s.ID}, proxy.EINVALID},
		{"params array", proxy.CallRequest{SessionID: s.ID, Tool: "browser_snapshot", Params: json.RawMessage(`[1]`)}, proxy.EINVALID},
		{"bad request id", proxy.CallRequest{SessionID: s.ID, Tool: "browser_snapshot", RequestID: "nope"}, proxy.EINVALID},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := m.Call(ctx, tc.req)
			if got := proxy.ErrorCode(err); got != tc.code {
				t.Errorf("Call(%+v) code = %s (%v), want %s", tc.req, got, err, tc.code)
			}
		})
	}
}

func TestDuplicateRequestIDIsRefused(t *testing.T) {
	ctx := context.Background()
	m, _, _ := newManager(t, Options{})
	s, _ := m.CreateSession(ctx)
	id := "0b5d5a62-8d3e-4a51-9a57-2d4f3b1c0a11"
	if _, err := m.Call(ctx, proxy.CallRequest{SessionID: s.ID, Tool: "browser_snapshot", RequestID: id}); err != nil {
		t.Fatal(err)
	}
	_, err := m.Call(ctx, proxy.CallRequest{SessionID: s.ID, Tool: "browser_snapshot", RequestID: id})
	if proxy.ErrorCode(err) != proxy.EINVALID {
		t.Errorf("reused request_id: %v, want INVALID_PARAMETERS", err)
	}
}

func TestWorkerDeathMidCallIsReportedNotReplayed(t *testing.T) {
	tests := []struct {
		name    string
		err     error  // what the worker's call returns as it goes
		mention string // in the answer's message
	}{
		{"the worker died", worker.ErrWorkerExited, "browser worker died"},
		{"its browser node died", fmt.Errorf("tools/call browser_click: %w", worker.ErrNodeDown), "browser node went down"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			m, sp, db := newManager(t, Options{restartBackoff: time.Millisecond})
			sp.prepare = func(w *fakeWorker) {
				w.answer = func(name string, _ json.RawMessage) (json.RawMessage, error) {
					if name == "browser_click" {
						w.die()
						return nil, tt.err
					}
					return json.RawMessage(snapshotResult), nil
				}
			}
			s, _ := m.CreateSession(ctx)
			_, err := m.Call(ctx, proxy.CallRequest{SessionID: s.ID, Tool: "browser_click", RequestID: "0b5d5a62-8d3e-4a51-9a57-2d4f3b1c0a12"})
			var pe *proxy.Error
			if !errors.As(err, &pe) || pe.Code != proxy.EUNAVAILABLE || !pe.Retryable || !strings.Contains(pe.Message, tt.mention) {
				t.Fatalf("call on dying worker: %v, want retryable UPSTREAM_UNAVAILABLE saying %q", err, tt.mention)
			}
			first := sp.all()[0]
			if got := first.calls.Load(); got != 1 {
				t.Errorf("the click reached the worker %d times, want exactly 1 (never replayed)", got)
			}
			resp, err := db.GetResponse(ctx, "0b5d5a62-8d3e-4a51-9a57-2d4f3b1c0a12")
			if err != nil || resp.Status != proxy.StatusError || resp.ErrorMessage == "" || resp.ErrorCode != proxy.EUNAVAILABLE {
				t.Errorf("failed call record = %+v, %v", resp, err)
			}
			// The next call gets a fresh worker and says the state was reset.
			res, err := m.Call(ctx, proxy.CallRequest{SessionID: s.ID, Tool: "browser_snapshot"})
			if err != nil {
				t.Fatal(err)
			}
			if !res.Metadata.Restored {
				t.Errorf("call after a worker replacement: restored = false, want true")
			}
			if n := len(sp.all()); n != 2 {
				t.Errorf("spawned %d workers, want 2", n)
			}
		})
	}
}

func TestShutdownStopsEveryWorker(t *testing.T) {
	ctx := context.Background()
	m, sp, db := newManager(t, Options{WarmPool: 2})
	s, _ := m.CreateSession(ctx)
	if _, err := m.Call(ctx, proxy.CallRequest{SessionID: s.ID, Tool: "browser_snapshot"}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for len(sp.all()) < 3 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond) // the pool refills in the background
	}
	if err := m.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	for _, w := range sp.all() {
		if !w.closed.Load() {
			t.Errorf("worker %d still open after Shutdown", w.pid)
		}
	}
	got, err := db.GetSession(ctx, s.ID)
	if err != nil || got.State != proxy.SessionSuspended {
		t.Errorf("after shutdown session = %+v, %v; want suspended", got, err)
	}
	if _, err := m.CreateSession(ctx); proxy.ErrorCode(err) != proxy.EUNAVAILABLE {
		t.Errorf("create after shutdown: %v, want UPSTREAM_UNAVAILABLE", err)
	}
}

func TestWarmPoolServesCreate(t *testing.T) {
	ctx := context.Background()
	m, sp, _ := newManager(t, Options{WarmPool: 1})
	deadline := time.Now().Add(5 * time.Second)
	for len(sp.all()) < 1 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	warm := sp.all()[0]
	s, err := m.CreateSession(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := m.GetSession(ctx, s.ID); got.WorkerPID != warm.pid {
		t.Errorf("create used worker %d, want the warm one %d", got.WorkerPID, warm.pid)
	}
}

func TestWarmPoolRefillsAfterCreate(t *testing.T) {
	ctx := context.Background()
	m, sp, _ := newManager(t, Options{WarmPool: 1})
	// pooled waits until a worker waits in the pool and checks that
	// exactly want workers were ever spawned; the pooled one is the last.
	pooled := func(what string, want int) *fakeWorker {
		t.Helper()
		waitFor(t, what, func() bool { return len(m.pool.ready) == 1 })
		spawned := sp.all()
		if len(spawned) != want {
			t.Fatalf("%s: %d workers spawned, want %d", what, len(spawned), want)
		}
		return spawned[want-1]
	}
	// createsWith checks that a create takes warm, spawning nothing itself.
	createsWith := func(what string, warm *fakeWorker) {
		t.Helper()
		s, err := m.CreateSession(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := m.GetSession(ctx, s.ID); got.WorkerPID != warm.pid {
			t.Errorf("%s used worker %d, want the pooled one %d", what, got.WorkerPID, warm.pid)
		}
	}

	createsWith("the first create", pooled("the first warm worker", 1))
	// The create emptied the pool; it refills in the background, and the
	// next create is served from it too.
	createsWith("the second create", pooled("the pool to refill after the first create", 2))
	pooled("the pool to refill after the second create", 3)
}

func TestSpawnFailureIsUnavailable(t *testing.T) {
	m, sp, _ := newManager(t, Options{})
	sp.fail = errors.New("no chromium")
	_, err := m.CreateSession(context.Background())
	var pe *proxy.Error
	if !errors.As(err, &pe) || pe.Code != proxy.EUNAVAILABLE || !pe.Retryable {
		t.Errorf("create with failing spawn: %v", err)
	}
}

func TestConcurrentCallsOnOneSessionAreSerialised(t *testing.T) {
	ctx := context.Background()
	m, sp, _ := newManager(t, Options{})
	var inFlight, maxInFlight atomic.Int32
	sp.prepare = func(w *fakeWorker) {
		w.answer = func(string, json.RawMessage) (json.RawMessage, error) {
			n := inFlight.Add(1)
			for {
				old := maxInFlight.Load()
				if n <= old || maxInFlight.CompareAndSwap(old, n) {
					break
				}
			}
			time.Sleep(2 * time.Millisecond)
			inFlight.Add(-1)
			return json.RawMessage(snapshotResult), nil
		}
	}
	s, _ := m.CreateSession(ctx)
	var wg sync.WaitGroup
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := m.Call(ctx, proxy.CallRequest{SessionID: s.ID, Tool: "browser_snapshot"}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if got := maxInFlight.Load(); got != 1 {
		t.Errorf("%d calls ran at once on one session, want 1", got)
	}
}

// answerSizes records the bytes the manager reports returned.
type answerSizes struct {
	mu       sync.Mutex
	returned []int
}

func (a *answerSizes) ObserveCall(_, _ string, _ time.Duration, _, returned int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.returned = append(a.returned, returned)
}

func (*answerSizes) ObserveRefused(string, string) {}
