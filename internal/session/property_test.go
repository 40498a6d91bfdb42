package session

// Property-based tests (pgregory.net/rapid) of the session manager's
// invariants:
//
//  1. session ids are unique, canonical UUID v4, concurrent creates included;
//  2. a closed id is gone (Get: closed; Call/Resume: SESSION_CLOSED; no slot,
//     no worker, never counted toward MaxSessions again), also when Close
//     races calls and resumes on it;
//  3. live sessions and held workers never exceed MaxSessions, for random
//     interleavings of create/call/resume/close/suspend, calls held in
//     flight and concurrent creates (a model-checked state machine);
//  4. eviction at the limit suspends exactly the least recently used session
//     among those without a call in flight;
//  5. ExpiresAt = LastActivity + IdleTimeout (zero once closed), and it is
//     the deadline the idle sweeper enforces;
//  6. a busy session is never evicted or suspended: at the limit with every
//     session busy the answer is MAX_SESSIONS_REACHED, and the held calls
//     still complete;
//  7. an id naming no session is SESSION_NOT_FOUND for Get, Call, Close and
//     Resume, and changes nothing;
//  8. a session of another MCP client is, to the caller, exactly an id
//     naming no session (the same error, word for word, and absent from
//     List), whatever its state, and nothing changes; its owner and the
//     operator still see it.
//
// Each rapid run gets its own Manager (IdleTimeout 0 unless a property needs
// it, WarmPool 0) with the fake worker/spawner of manager_test.go, over a
// real SQLite store shared by the runs of one property, and a fake clock
// that only moves when the test moves it: "least recently used" is exactly
// what the test decided, with no sleeping. Calls are held in flight by a
// gate inside the fake worker.

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"pgregory.net/rapid"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/store"
)

// propOpTimeout bounds every manager operation a property makes, so that a
// deadlock fails the run instead of hanging the suite.
const propOpTimeout = 10 * time.Second

// propClock is the time of Options.Clock: it stands still until advanced.
type propClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *propClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *propClock) advance(d time.Duration) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	return c.now
}

// gate holds one browser_click inside a fake worker until released: a
// session with a call in flight.
type gate struct {
	started chan struct{}
	release chan struct{}
	once    sync.Once
}

func (g *gate) open() { g.once.Do(func() { close(g.release) }) }

type propHarness struct {
	t     *rapid.T
	m     *Manager
	sp    *fakeSpawner
	clock *propClock

	mu       sync.Mutex
	gates    map[string]*gate
	nextGate int
	inflight sync.WaitGroup
}

// propDB is the store a whole property shares: opening one (migrations and
// all) takes most of 100 ms under -race, and every run's manager only ever
// touches the sessions it created, whose ids are random.
func propDB(tt *testing.T) *store.DB {
	tt.Helper()
	db, err := store.Open(context.Background(), filepath.Join(tt.TempDir(), "p.db"))
	if err != nil {
		tt.Fatal(err)
	}
	tt.Cleanup(func() { db.Close() })
	return db
}

// slowReads is the real store with session reads taking a while, as on a
// loaded disk: it widens the windows between a decision taken on a read and
// the write that acts on it, so that races show up in a few runs.
type slowReads struct {
	*store.DB
	delay time.Duration
}

func (s slowReads) GetSession(ctx context.Context, id string) (*proxy.Session, error) {
	time.Sleep(s.delay)
	return s.DB.GetSession(ctx, id)
}

func readDelay(t *rapid.T) time.Duration {
	return rapid.SampledFrom([]time.Duration{0, 100 * time.Microsecond, time.Millisecond}).Draw(t, "read_delay")
}

func newPropHarness(tt *testing.T, t *rapid.T, db Store, opts Options) *propHarness {
	h := &propHarness{t: t, gates: map[string]*gate{},
		clock: &propClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(rapid.Int64Range(0, int64(time.Hour)).Draw(t, "clock_start_ns")))}}
	opts.Clock = nowClock(h.clock.Now)
	opts.Logger = slog.New(slog.DiscardHandler)
	h.sp = &fakeSpawner{t: tt, prepare: func(w *fakeWorker) { w.answer = h.answer }}
	h.m = New(db, h.sp, opts)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		h.m.Shutdown(ctx)
	})
	t.Cleanup(h.releaseAll) // last in, first out: before the shutdown
	return h
}

func (h *propHarness) answer(name string, args json.RawMessage) (json.RawMessage, error) {
	if name == "browser_click" {
		var a struct {
			Gate string `json:"gate"`
		}
		_ = json.Unmarshal(args, &a)
		h.mu.Lock()
		g := h.gates[a.Gate]
		h.mu.Unlock()
		if g != nil {
			close(g.started)
			<-g.release
		}
	}
	return json.RawMessage(snapshotResult), nil
}

func (h *propHarness) releaseAll() {
	h.mu.Lock()
	for _, g := range h.gates {
		g.open()
	}
	h.mu.Unlock()
	h.inflight.Wait()
}

func opCtx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), propOpTimeout)
}

func (h *propHarness) create() (*proxy.Session, error) {
	ctx, cancel := opCtx()
	defer cancel()
	return h.m.CreateSession(ctx)
}

func (h *propHarness) call(id string) (*proxy.CallResult, error) {
	ctx, cancel := opCtx()
	defer cancel()
	return h.m.Call(ctx, proxy.CallRequest{SessionID: id, Tool: "browser_snapshot"})
}

func (h *propHarness) resume(id string) (*proxy.Session, bool, error) {
	ctx, cancel := opCtx()
	defer cancel()
	return h.m.ResumeSession(ctx, id)
}

func (h *propHarness) close(id string) error {
	ctx, cancel := opCtx()
	defer cancel()
	return h.m.CloseSession(ctx, id)
}

func (h *propHarness) get(id string) *proxy.Session {
	h.t.Helper()
	ctx, cancel := opCtx()
	defer cancel()
	s, err := h.m.GetSession(ctx, id)
	if err != nil {
		h.t.Fatalf("Get(%s): %v", id, err)
	}
	return s
}

// suspend calls trySuspend on the session's live handle, as the idle
// sweeper and eviction do; false when it has none.
func (h *propHarness) suspend(id string) bool {
	l := h.m.reg.get(id)
	if l == nil {
		return false
	}
	ctx, cancel := opCtx()
	defer cancel()
	return h.m.trySuspend(ctx, l, "property test")
}

func (h *propHarness) liveState() (ids map[string]bool, reserved int) {
	r := h.m.reg
	r.mu.Lock()
	defer r.mu.Unlock()
	ids = make(map[string]bool, len(r.live))
	for id := range r.live {
		ids[id] = true
	}
	return ids, r.reserved
}

// transitions counts the per-id transition locks held or waited for.
func (h *propHarness) transitions() int {
	h.m.reg.mu.Lock()
	defer h.m.reg.mu.Unlock()
	return len(h.m.reg.transitions)
}

func (h *propHarness) worker(pid int) *fakeWorker {
	for _, w := range h.sp.all() {
		if w.pid == pid {
			return w
		}
	}
	return nil
}

// heldWorkers counts the open workers that are not spare ones in the pool.
func (h *propHarness) heldWorkers() int {
	open := 0
	for _, w := range h.sp.all() {
		if !w.closed.Load() {
			open++
		}
	}
	return open - len(h.m.pool.ready)
}

// pending is a call held inside its worker.
type pending struct {
	id   string
	g    *gate
	done chan pendingResult
}

type pendingResult struct {
	res *proxy.CallResult
	err error
}

// startBlocked starts a call on id that stays inside the worker until
// finished. When the call returns without reaching a worker (say
// MAX_SESSIONS_REACHED) it gives nil and that error.
func (h *propHarness) startBlocked(id string) (*pending, error) {
	h.t.Helper()
	h.mu.Lock()
	h.nextGate++
	gid := fmt.Sprintf("g%d", h.nextGate)
	g := &gate{started: make(chan struct{}), release: make(chan struct{})}
	h.gates[gid] = g
	h.mu.Unlock()
	p := &pending{id: id, g: g, done: make(chan pendingResult, 1)}
	h.inflight.Add(1)
	go func() {
		defer h.inflight.Done()
		res, err := h.m.Call(context.Background(), proxy.CallRequest{SessionID: id, Tool: "browser_click", Params: json.RawMessage(`{"gate":"` + gid + `"}`)})
		p.done <- pendingResult{res, err}
	}()
	select {
	case <-g.started:
		return p, nil
	case r := <-p.done:
		if r.err == nil {
			h.t.Fatalf("blocking call on %s returned without reaching its worker", id)
		}
		return nil, r.err
	case <-time.After(propOpTimeout):
		h.t.Fatalf("blocking call on %s neither reached its worker nor failed", id)
	}
	return nil, nil
}

// finish lets the held call return and gives its outcome.
func (p *pending) finish(t *rapid.T) (*proxy.CallResult, error) {
	t.Helper()
	p.g.open()
	select {
	case r := <-p.done:
		return r.res, r.err
	case <-time.After(propOpTimeout):
		t.Fatalf("released call on %s did not return", p.id)
	}
	return nil, nil
}

// createConcurrently runs k creates at once.
func (h *propHarness) createConcurrently(k int) (created []*proxy.Session, errs []error) {
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		start = make(chan struct{})
	)
	for range k {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			s, err := h.create()
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
			} else {
				created = append(created, s)
			}
		}()
	}
	close(start)
	wg.Wait()
	return created, errs
}

func wantCode(t *rapid.T, what string, err error, code string) {
	t.Helper()
	if got := proxy.ErrorCode(err); got != code {
		t.Fatalf("%s: got %v (code %q), want %s", what, err, got, code)
	}
}

func checkUUIDv4(t *rapid.T, id string) {
	t.Helper()
	u, err := uuid.Parse(id)
	switch {
	case err != nil:
		t.Fatalf("session id %q is not a UUID: %v", id, err)
	case u.Version() != 4 || u.Variant() != uuid.RFC4122:
		t.Fatalf("session id %s is version %d variant %s, want a v4 RFC 4122 UUID", id, u.Version(), u.Variant())
	case u.String() != id:
		t.Fatalf("session id %q is not in canonical form %q", id, u.String())
	}
}

// Property 1: ids are unique across any sequence of creates, concurrent ones
// included, and are canonical UUID v4.
func TestPropSessionIDsAreUniqueUUIDv4(tt *testing.T) {
	db := propDB(tt)
	rapid.Check(tt, func(t *rapid.T) {
		h := newPropHarness(tt, t, db, Options{MaxSessions: rapid.IntRange(1, 5).Draw(t, "max_sessions")})
		seen := map[string]bool{}
		var ids []string
		for range rapid.IntRange(1, 8).Draw(t, "steps") {
			if len(ids) > 0 && rapid.Bool().Draw(t, "close_one") {
				id := ids[rapid.IntRange(0, len(ids)-1).Draw(t, "close_index")]
				if err := h.close(id); err != nil {
					t.Fatalf("Close(%s): %v", id, err)
				}
			}
			h.clock.advance(time.Second)
			k := rapid.IntRange(1, 4).Draw(t, "concurrent_creates")
			created, errs := h.createConcurrently(k)
			for _, err := range errs {
				wantCode(t, "concurrent create", err, proxy.EMAXSESSIONS)
			}
			if len(created) == 0 {
				t.Fatalf("none of %d concurrent creates succeeded with no session busy: %v", k, errs)
			}
			for _, s := range created {
				checkUUIDv4(t, s.ID)
				if seen[s.ID] {
					t.Fatalf("session id %s handed out twice", s.ID)
				}
				seen[s.ID] = true
				ids = append(ids, s.ID)
				if got := h.get(s.ID); got.ID != s.ID || got.State != proxy.SessionActive && got.State != proxy.SessionSuspended {
					t.Fatalf("new session %s reads back as %+v", s.ID, got)
				}
			}
		}
	})
}

// Property 2: a closed id is gone: Get says closed, Call and Resume say
// SESSION_CLOSED, Close again is a no-op, it holds no slot and no worker, and
// it never counts toward MaxSessions again.
func TestPropClosedSessionIsGone(tt *testing.T) {
	db := propDB(tt)
	rapid.Check(tt, func(t *rapid.T) {
		maxSessions := rapid.IntRange(1, 4).Draw(t, "max_sessions")
		h := newPropHarness(tt, t, db, Options{MaxSessions: maxSessions})
		pids := map[string]map[int]bool{} // every worker each session had
		var ids []string
		observe := func() {
			for _, id := range ids {
				if pid := h.get(id).WorkerPID; pid != 0 {
					pids[id][pid] = true
				}
			}
		}
		for range rapid.IntRange(1, maxSessions+3).Draw(t, "sessions") {
			h.clock.advance(time.Second)
			s, err := h.create()
			if err != nil {
				t.Fatalf("create: %v", err)
			}
			ids = append(ids, s.ID)
			pids[s.ID] = map[int]bool{}
			observe()
		}
		for range rapid.IntRange(0, 10).Draw(t, "activity") {
			h.clock.advance(time.Second)
			i := rapid.IntRange(0, len(ids)-1).Draw(t, "activity_session")
			switch rapid.SampledFrom([]string{"call", "suspend"}).Draw(t, "activity_op") {
			case "call":
				if _, err := h.call(ids[i]); err != nil {
					t.Fatalf("call on session %d: %v", i, err)
				}
			case "suspend":
				h.suspend(ids[i])
			}
			observe()
		}

		toClose := rapid.SliceOfNDistinct(rapid.IntRange(0, len(ids)-1), 1, len(ids), rapid.ID).Draw(t, "close")
		closed := map[string]bool{}
		checkGone := func(id string) {
			t.Helper()
			spawned := len(h.sp.all())
			g := h.get(id)
			if g.State != proxy.SessionClosed || g.WorkerPID != 0 || !g.ExpiresAt.IsZero() {
				t.Fatalf("closed session %s reads back as state=%s worker=%d expires=%v", id, g.State, g.WorkerPID, g.ExpiresAt)
			}
			_, err := h.call(id)
			wantCode(t, "Call on a closed session", err, proxy.ESESSIONCLOSED)
			_, _, err = h.resume(id)
			wantCode(t, "Resume on a closed session", err, proxy.ESESSIONCLOSED)
			if err := h.close(id); err != nil {
				t.Fatalf("closing a closed session again: %v", err)
			}
			if live, _ := h.liveState(); live[id] {
				t.Fatalf("closed session %s still holds a live slot", id)
			}
			for pid := range pids[id] {
				if !h.worker(pid).closed.Load() {
					t.Fatalf("closed session %s: its worker %d is still open", id, pid)
				}
			}
			if got := h.get(id).State; got != proxy.SessionClosed {
				t.Fatalf("closed session %s became %s after Call/Resume/Close", id, got)
			}
			if n := len(h.sp.all()); n != spawned {
				t.Fatalf("calls on closed session %s started %d workers", id, n-spawned)
			}
		}
		for _, i := range toClose {
			observe()
			h.clock.advance(time.Second)
			if err := h.close(ids[i]); err != nil {
				t.Fatalf("Close(session %d): %v", i, err)
			}
			closed[ids[i]] = true
			for id := range closed {
				checkGone(id)
			}
		}

		// Closed sessions free their slots: exactly MaxSessions-active creates
		// fit without suspending anybody.
		states := func() map[string]proxy.SessionState {
			out := map[string]proxy.SessionState{}
			for _, id := range ids {
				out[id] = h.get(id).State
			}
			return out
		}
		before := states()
		active := 0
		for _, s := range before {
			if s == proxy.SessionActive {
				active++
			}
		}
		for range maxSessions - active {
			h.clock.advance(time.Second)
			s, err := h.create()
			if err != nil {
				t.Fatalf("create with %d of %d slots taken: %v", active, maxSessions, err)
			}
			if after := states(); fmt.Sprint(after) != fmt.Sprint(before) {
				t.Fatalf("create into a slot freed by close changed other sessions:\nbefore %v\nafter  %v", before, after)
			}
			ids = append(ids, s.ID)
			pids[s.ID] = map[int]bool{}
			before = states()
		}
		if live, _ := h.liveState(); len(live) != maxSessions {
			t.Fatalf("%d live sessions after filling every free slot, want %d", len(live), maxSessions)
		}
		// One more evicts somebody, never a closed session.
		h.clock.advance(time.Second)
		if _, err := h.create(); err != nil {
			t.Fatalf("create at the limit with idle sessions: %v", err)
		}
		for id := range closed {
			checkGone(id)
		}
	})
}

// Property 2, under concurrency: a Close racing Calls and Resumes on the same
// session still leaves it closed, with no worker and no live slot.
func TestPropCloseRacingCallsLeavesSessionClosed(tt *testing.T) {
	db := propDB(tt)
	rapid.Check(tt, func(t *rapid.T) {
		maxSessions := rapid.IntRange(1, 3).Draw(t, "max_sessions")
		h := newPropHarness(tt, t, slowReads{db, readDelay(t)}, Options{MaxSessions: maxSessions})
		var ids []string
		for range rapid.IntRange(1, maxSessions+1).Draw(t, "sessions") {
			h.clock.advance(time.Second)
			s, err := h.create()
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, s.ID)
		}
		target := ids[rapid.IntRange(0, len(ids)-1).Draw(t, "target")]
		if rapid.Bool().Draw(t, "suspend_target_first") {
			h.suspend(target)
		}
		h.clock.advance(time.Second)
		ops := rapid.SliceOfN(rapid.SampledFrom([]string{"call", "resume"}), 1, 3).Draw(t, "racing_ops")

		var (
			wg       sync.WaitGroup
			start    = make(chan struct{})
			closeErr error
			opErrs   = make([]error, len(ops))
		)
		wg.Add(1 + len(ops))
		go func() {
			defer wg.Done()
			<-start
			closeErr = h.close(target)
		}()
		for i, op := range ops {
			go func() {
				defer wg.Done()
				<-start
				if op == "call" {
					_, opErrs[i] = h.call(target)
				} else {
					_, _, opErrs[i] = h.resume(target)
				}
			}()
		}
		close(start)
		wg.Wait()

		if closeErr != nil {
			t.Fatalf("Close: %v", closeErr)
		}
		for i, err := range opErrs {
			if err != nil && proxy.ErrorCode(err) != proxy.ESESSIONCLOSED {
				t.Fatalf("racing %s: %v, want success or SESSION_CLOSED", ops[i], err)
			}
		}
		g := h.get(target)
		live, reserved := h.liveState()
		if g.State != proxy.SessionClosed || live[target] || g.WorkerPID != 0 {
			t.Fatalf("after Close raced %v: state=%s worker=%d live=%v, want closed, no worker, no live slot",
				ops, g.State, g.WorkerPID, live[target])
		}
		if reserved != 0 {
			t.Fatalf("%d slots still reserved", reserved)
		}
		active := 0
		for _, id := range ids {
			if h.get(id).State == proxy.SessionActive {
				active++
			}
		}
		if held := h.heldWorkers(); held != active || len(live) != active {
			t.Fatalf("%d workers held and %d live handles for %d active sessions", held, len(live), active)
		}
		_, err := h.call(target)
		wantCode(t, "Call after the race", err, proxy.ESESSIONCLOSED)
	})
}

// Property 3, one session: calls and resumes racing on the same suspended
// session need one slot between them. With no session busy they all
// succeed, exactly one of them restores the session, into exactly one new
// worker.
func TestPropConcurrentCallsOnSuspendedSession(tt *testing.T) {
	db := propDB(tt)
	rapid.Check(tt, func(t *rapid.T) {
		maxSessions := rapid.IntRange(1, 3).Draw(t, "max_sessions")
		h := newPropHarness(tt, t, slowReads{db, readDelay(t)}, Options{MaxSessions: maxSessions})
		var ids []string
		for range rapid.IntRange(1, maxSessions+2).Draw(t, "sessions") {
			h.clock.advance(time.Second)
			s, err := h.create()
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, s.ID)
		}
		target := ids[rapid.IntRange(0, len(ids)-1).Draw(t, "target")]
		h.suspend(target) // false when already evicted
		if st := h.get(target).State; st != proxy.SessionSuspended {
			t.Fatalf("target is %s, want suspended", st)
		}
		h.clock.advance(time.Second)
		ops := rapid.SliceOfN(rapid.SampledFrom([]string{"call", "resume"}), 2, 6).Draw(t, "racing_ops")
		spawned := len(h.sp.all())

		var (
			wg       sync.WaitGroup
			start    = make(chan struct{})
			errs     = make([]error, len(ops))
			restored = make([]bool, len(ops))
		)
		wg.Add(len(ops))
		for i, op := range ops {
			go func() {
				defer wg.Done()
				<-start
				if op == "call" {
					var res *proxy.CallResult
					if res, errs[i] = h.call(target); errs[i] == nil {
						restored[i] = res.Metadata.Restored
					}
				} else {
					_, restored[i], errs[i] = h.resume(target)
				}
			}()
		}
		close(start)
		wg.Wait()

		n := 0
		for i, err := range errs {
			if err != nil {
				t.Fatalf("racing %s #%d of %v on a suspended session, nothing busy: %v", ops[i], i, ops, err)
			}
			if restored[i] {
				n++
			}
		}
		if n != 1 {
			t.Fatalf("%d of %v reported restored=true, want exactly 1", n, ops)
		}
		if got := len(h.sp.all()) - spawned; got != 1 {
			t.Fatalf("%v started %d workers, want 1", ops, got)
		}
		if st := h.get(target).State; st != proxy.SessionActive {
			t.Fatalf("target is %s after %v", st, ops)
		}
		live, reserved := h.liveState()
		if len(live) > maxSessions || reserved != 0 || !live[target] {
			t.Fatalf("live=%d (target in it: %v) reserved=%d, MaxSessions %d", len(live), live[target], reserved, maxSessions)
		}
	})
}

// smSession is the model of one session in the state machine.
type smSession struct {
	n     int // creation order, for readable failures
	id    string
	state proxy.SessionState
	la    time.Time // last activity as the manager should see it
	busy  *pending
	pids  map[int]bool
}

func (x *smSession) String() string {
	busy := ""
	if x.busy != nil {
		busy = ",busy"
	}
	return fmt.Sprintf("#%d(%s%s,la=%s)", x.n, x.state, busy, x.la.Format("15:04:05.000"))
}

type sessionMachine struct {
	h    *propHarness
	max  int
	all  []*smSession
	byID map[string]*smSession
	now  time.Time
}

func (s *sessionMachine) tick(t *rapid.T) {
	d := rapid.SampledFrom([]time.Duration{0, time.Millisecond, time.Second, time.Minute}).Draw(t, "tick")
	s.now = s.h.clock.advance(d)
}

func (s *sessionMachine) add(t *rapid.T, id string) *smSession {
	t.Helper()
	checkUUIDv4(t, id)
	if s.byID[id] != nil {
		t.Fatalf("create returned the id of session %v again", s.byID[id])
	}
	x := &smSession{n: len(s.all), id: id, state: proxy.SessionActive, la: s.now, pids: map[int]bool{}}
	s.all = append(s.all, x)
	s.byID[id] = x
	return x
}

func (s *sessionMachine) counts() (active, idle int) {
	for _, x := range s.all {
		if x.state == proxy.SessionActive {
			active++
			if x.busy == nil {
				idle++
			}
		}
	}
	return active, idle
}

// slot predicts what taking one more live slot does: nothing (ok, no
// victims), suspend one of victims (the idle sessions with the oldest last
// activity, ties included), or fail (!ok: every live session is busy).
func (s *sessionMachine) slot() (victims []*smSession, ok bool) {
	var idle []*smSession
	active := 0
	for _, x := range s.all {
		if x.state == proxy.SessionActive {
			active++
			if x.busy == nil {
				idle = append(idle, x)
			}
		}
	}
	if active < s.max {
		return nil, true
	}
	if len(idle) == 0 {
		return nil, false
	}
	oldest := idle[0].la
	for _, x := range idle {
		if x.la.Before(oldest) {
			oldest = x.la
		}
	}
	for _, x := range idle {
		if x.la.Equal(oldest) {
			victims = append(victims, x)
		}
	}
	return victims, true
}

// evicted checks that exactly one of victims was suspended.
func (s *sessionMachine) evicted(t *rapid.T, victims []*smSession, what string) {
	t.Helper()
	if victims == nil {
		return
	}
	var got []*smSession
	for _, v := range victims {
		if s.h.get(v.id).State == proxy.SessionSuspended {
			got = append(got, v)
		}
	}
	if len(got) != 1 {
		t.Fatalf("%s at the limit: want exactly one of the least recently used idle sessions %v suspended, got %v (all: %v)", what, victims, got, s.all)
	}
	got[0].state = proxy.SessionSuspended
}

func (s *sessionMachine) pick(t *rapid.T, label string, ok func(*smSession) bool) *smSession {
	var c []*smSession
	for _, x := range s.all {
		if ok(x) {
			c = append(c, x)
		}
	}
	if len(c) == 0 {
		t.Skip("no session to " + label)
	}
	x := c[rapid.IntRange(0, len(c)-1).Draw(t, label)]
	t.Logf("%s %v", label, x)
	return x
}

func notBusy(x *smSession) bool { return x.busy == nil }

// reach runs op (a call or resume, reporting whether the session had to be
// restored into a new worker) on x and checks the outcome against the model.
func (s *sessionMachine) reach(t *rapid.T, x *smSession, what string, op func() (restored bool, err error)) {
	t.Helper()
	switch x.state {
	case proxy.SessionClosed:
		_, err := op()
		wantCode(t, what+" on a closed session", err, proxy.ESESSIONCLOSED)
	case proxy.SessionActive:
		restored, err := op()
		if err != nil || restored {
			t.Fatalf("%s on active %v: restored=%v err=%v", what, x, restored, err)
		}
		x.la = s.now
	case proxy.SessionSuspended:
		victims, ok := s.slot()
		restored, err := op()
		if !ok {
			wantCode(t, what+" on a suspended session with every live session busy", err, proxy.EMAXSESSIONS)
			return
		}
		if err != nil || !restored {
			t.Fatalf("%s on suspended %v: restored=%v err=%v", what, x, restored, err)
		}
		x.state, x.la = proxy.SessionActive, s.now
		s.evicted(t, victims, what)
	}
}

func (s *sessionMachine) check(t *rapid.T) {
	t.Helper()
	live, reserved := s.h.liveState()
	if len(live) > s.max {
		t.Fatalf("%d live sessions, MaxSessions is %d", len(live), s.max)
	}
	if reserved != 0 {
		t.Fatalf("%d slots reserved with nothing in progress", reserved)
	}
	if n := s.h.transitions(); n != 0 {
		t.Fatalf("%d transition locks left with nothing in progress", n)
	}
	active := 0
	for _, x := range s.all {
		g := s.h.get(x.id)
		if g.State != x.state {
			t.Fatalf("session %v reads back as %s (all: %v)", x, g.State, s.all)
		}
		if x.state == proxy.SessionActive {
			active++
			if !live[x.id] {
				t.Fatalf("active session %v has no live handle", x)
			}
			w := s.h.worker(g.WorkerPID)
			if w == nil || w.closed.Load() {
				t.Fatalf("active session %v reports worker %d, which is not an open worker", x, g.WorkerPID)
			}
			x.pids[g.WorkerPID] = true
			for pid := range x.pids {
				if pid != g.WorkerPID && !s.h.worker(pid).closed.Load() {
					t.Fatalf("session %v: its earlier worker %d is still open", x, pid)
				}
			}
			continue
		}
		if live[x.id] {
			t.Fatalf("%v still holds a live slot", x)
		}
		if g.WorkerPID != 0 {
			t.Fatalf("%v reports worker %d", x, g.WorkerPID)
		}
		for pid := range x.pids {
			if !s.h.worker(pid).closed.Load() {
				t.Fatalf("%v: its worker %d is still open", x, pid)
			}
		}
	}
	if len(live) != active {
		t.Fatalf("%d live handles for %d active sessions", len(live), active)
	}
	if held := s.h.heldWorkers(); held != active || held > s.max {
		t.Fatalf("%d workers held for %d active sessions (MaxSessions %d)", held, active, s.max)
	}
}

// Property 3: for any interleaving of create, call, resume, close, suspend,
// calls held in flight and concurrent creates, no more than MaxSessions
// sessions are live or hold a worker; the model (which sessions are active,
// suspended, closed; eviction of the least recently used idle one; refusal
// when all are busy) matches the manager at every step.
func TestPropLiveSessionsNeverExceedMax(tt *testing.T) {
	db := propDB(tt)
	rapid.Check(tt, func(t *rapid.T) {
		maxSessions := rapid.IntRange(1, 4).Draw(t, "max_sessions")
		s := &sessionMachine{h: newPropHarness(tt, t, db, Options{MaxSessions: maxSessions}), max: maxSessions, byID: map[string]*smSession{}}
		s.now = s.h.clock.Now()
		t.Repeat(map[string]func(*rapid.T){
			"": s.check,
			"create": func(t *rapid.T) {
				s.tick(t)
				victims, ok := s.slot()
				sess, err := s.h.create()
				if !ok {
					wantCode(t, "create with every live session busy", err, proxy.EMAXSESSIONS)
					return
				}
				if err != nil {
					t.Fatalf("create: %v", err)
				}
				t.Logf("created %v", s.add(t, sess.ID))
				s.evicted(t, victims, "create")
			},
			"create_concurrently": func(t *rapid.T) {
				s.tick(t)
				k := rapid.IntRange(2, 4).Draw(t, "concurrent_creates")
				active, idle := s.counts()
				free := s.max - active
				created, errs := s.h.createConcurrently(k)
				for _, err := range errs {
					wantCode(t, "concurrent create", err, proxy.EMAXSESSIONS)
				}
				if free+idle > 0 && len(created) == 0 {
					t.Fatalf("none of %d concurrent creates succeeded with %d free slots and %d idle sessions: %v", k, free, idle, errs)
				}
				// No upper bound from free+idle: a session one of these
				// creates just made is idle too, and another of them may
				// evict it.
				for _, c := range created {
					t.Logf("created %v", s.add(t, c.ID))
				}
				var evicted, kept []*smSession
				for _, x := range s.all {
					if x.state != proxy.SessionActive {
						continue
					}
					switch st := s.h.get(x.id).State; {
					case st == proxy.SessionSuspended && x.busy == nil:
						x.state = proxy.SessionSuspended
						evicted = append(evicted, x)
					case st != proxy.SessionActive:
						t.Fatalf("concurrent creates left %v %s", x, st)
					case x.busy == nil:
						kept = append(kept, x)
					}
				}
				for _, e := range evicted {
					for _, k := range kept {
						if e.la.After(k.la) {
							t.Fatalf("concurrent creates suspended %v but kept the less recently used idle %v", e, k)
						}
					}
				}
				if live, _ := s.h.liveState(); len(errs) > 0 && len(live) < s.max {
					t.Fatalf("a concurrent create got MAX_SESSIONS_REACHED yet only %d of %d slots are taken (suspended %v)", len(live), s.max, evicted)
				}
			},
			"call": func(t *rapid.T) {
				s.tick(t)
				x := s.pick(t, "call", notBusy)
				s.reach(t, x, "Call", func() (bool, error) {
					res, err := s.h.call(x.id)
					if err != nil {
						return false, err
					}
					return res.Metadata.Restored, nil
				})
			},
			"resume": func(t *rapid.T) {
				s.tick(t)
				x := s.pick(t, "resume", notBusy)
				s.reach(t, x, "Resume", func() (bool, error) {
					g, restored, err := s.h.resume(x.id)
					if err == nil && (g.State != proxy.SessionActive || g.WorkerPID == 0) {
						t.Fatalf("Resume(%v) returned state=%s worker=%d", x, g.State, g.WorkerPID)
					}
					return restored, err
				})
			},
			"close": func(t *rapid.T) {
				s.tick(t)
				x := s.pick(t, "close", notBusy)
				if err := s.h.close(x.id); err != nil {
					t.Fatalf("Close(%v): %v", x, err)
				}
				x.state = proxy.SessionClosed
			},
			"suspend": func(t *rapid.T) {
				s.tick(t)
				x := s.pick(t, "suspend", func(x *smSession) bool { return x.state == proxy.SessionActive })
				got := s.h.suspend(x.id)
				if want := x.busy == nil; got != want {
					t.Fatalf("trySuspend(%v) = %v, want %v", x, got, want)
				}
				if got {
					x.state = proxy.SessionSuspended
				}
			},
			"block": func(t *rapid.T) {
				s.tick(t)
				x := s.pick(t, "block", func(x *smSession) bool { return x.busy == nil && x.state != proxy.SessionClosed })
				victims, ok := s.slot()
				if x.state == proxy.SessionActive {
					victims, ok = nil, true
				}
				p, err := s.h.startBlocked(x.id)
				if !ok {
					wantCode(t, "call on a suspended session with every live session busy", err, proxy.EMAXSESSIONS)
					return
				}
				if err != nil {
					t.Fatalf("blocking call on %v: %v", x, err)
				}
				x.busy, x.state, x.la = p, proxy.SessionActive, s.now
				s.evicted(t, victims, "Call")
			},
			"release": func(t *rapid.T) {
				s.tick(t)
				x := s.pick(t, "release", func(x *smSession) bool { return x.busy != nil })
				res, err := x.busy.finish(t)
				if err != nil || res.Status != proxy.StatusSuccess {
					t.Fatalf("held call on %v: %+v, %v", x, res, err)
				}
				x.busy, x.la = nil, s.now
			},
		})
	})
}

// Property 4: a create at the limit suspends exactly the session with the
// oldest last activity among those without a call in flight. Activity is a
// create, a Resume, or a call, as of when the call finished (which is also
// the last_activity the store records); Get is not activity.
func TestPropEvictionPicksLeastRecentlyUsedIdle(tt *testing.T) {
	db := propDB(tt)
	rapid.Check(tt, func(t *rapid.T) {
		maxSessions := rapid.IntRange(2, 6).Draw(t, "max_sessions")
		s := &sessionMachine{h: newPropHarness(tt, t, db, Options{MaxSessions: maxSessions}), max: maxSessions, byID: map[string]*smSession{}}
		tick := func() {
			// Never 0: no ties, so exactly one session is the least
			// recently used (the state machine covers ties).
			d := rapid.SampledFrom([]time.Duration{time.Second, 2 * time.Second}).Draw(t, "tick")
			s.now = s.h.clock.advance(d)
		}
		for range maxSessions {
			tick()
			sess, err := s.h.create()
			if err != nil {
				t.Fatal(err)
			}
			s.add(t, sess.ID)
		}
		// Random activity, interleaved with calls that stay in flight for a
		// while (never on every session at once) and finish later. Get is
		// not activity.
		busy := 0
		for range rapid.IntRange(0, 4*maxSessions).Draw(t, "activity") {
			tick()
			ops := []string{"call", "resume", "get"}
			if busy < maxSessions-1 {
				ops = append(ops, "start_long_call")
			}
			if busy > 0 {
				ops = append(ops, "finish_long_call")
			}
			op := rapid.SampledFrom(ops).Draw(t, "activity_op")
			if op == "finish_long_call" {
				x := s.pick(t, "finish", func(x *smSession) bool { return x.busy != nil })
				if res, err := x.busy.finish(t); err != nil || res.Status != proxy.StatusSuccess {
					t.Fatalf("held call on %v: %+v, %v", x, res, err)
				}
				x.busy, x.la = nil, s.now
				busy--
				continue
			}
			x := s.pick(t, op, notBusy)
			switch op {
			case "call":
				if _, err := s.h.call(x.id); err != nil {
					t.Fatalf("call %v: %v", x, err)
				}
				x.la = s.now
			case "resume":
				if _, _, err := s.h.resume(x.id); err != nil {
					t.Fatalf("resume %v: %v", x, err)
				}
				x.la = s.now
			case "get":
				s.h.get(x.id)
			case "start_long_call":
				p, err := s.h.startBlocked(x.id)
				if err != nil {
					t.Fatalf("blocking call on %v: %v", x, err)
				}
				x.busy, x.la = p, s.now
				busy++
			}
		}
		for range rapid.IntRange(1, maxSessions).Draw(t, "creates") {
			tick()
			victims, ok := s.slot()
			if !ok {
				t.Fatalf("model: no idle session")
			}
			sess, err := s.h.create()
			if err != nil {
				t.Fatalf("create at the limit with idle sessions: %v (sessions %v)", err, s.all)
			}
			s.evicted(t, victims, "create")
			s.add(t, sess.ID)
			for _, x := range s.all {
				if got := s.h.get(x.id).State; got != x.state {
					t.Fatalf("after create, %v is %s; want only one of %v suspended", x, got, victims)
				}
			}
		}
		for _, x := range s.all {
			if x.busy != nil {
				if res, err := x.busy.finish(t); err != nil || res.Status != proxy.StatusSuccess {
					t.Fatalf("held call on %v: %+v, %v", x, res, err)
				}
			}
		}
	})
}

func indices(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// expiryOps drives a random sequence of creates, calls, resumes, suspends
// and closes with the clock moving a random bit (far less than the idle
// timeout in total) before each, calling check after each step.
func expiryOps(t *rapid.T, h *propHarness, timeout time.Duration, check func(ids []string, op string)) {
	var ids []string
	for range rapid.IntRange(1, 25).Draw(t, "steps") {
		now := h.clock.advance(time.Duration(rapid.Int64Range(0, int64(timeout/100)).Draw(t, "advance_ns")))
		op := "create"
		if len(ids) > 0 {
			op = rapid.SampledFrom([]string{"create", "call", "resume", "suspend", "close"}).Draw(t, "op")
		}
		var id string
		var state proxy.SessionState
		if op != "create" {
			id = ids[rapid.IntRange(0, len(ids)-1).Draw(t, "session")]
			state = h.get(id).State
		}
		switch op {
		case "create":
			s, err := h.create()
			if err != nil {
				t.Fatalf("create: %v", err)
			}
			if !s.LastActivity.Equal(now) || !s.ExpiresAt.Equal(now.Add(timeout)) {
				t.Fatalf("create at %v: last_activity=%v expires_at=%v, want %v and %v", now, s.LastActivity, s.ExpiresAt, now, now.Add(timeout))
			}
			if g := h.get(s.ID); !g.ExpiresAt.Equal(s.ExpiresAt) {
				t.Fatalf("Create said expires_at=%v, Get says %v", s.ExpiresAt, g.ExpiresAt)
			}
			ids = append(ids, s.ID)
		case "call":
			_, err := h.call(id)
			if state == proxy.SessionClosed {
				wantCode(t, "call on a closed session", err, proxy.ESESSIONCLOSED)
				break
			}
			if err != nil {
				t.Fatalf("call on %s session: %v", state, err)
			}
			if g := h.get(id); !g.LastActivity.Equal(now) {
				t.Fatalf("call at %v: last_activity=%v", now, g.LastActivity)
			}
		case "resume":
			_, _, err := h.resume(id)
			if state == proxy.SessionClosed {
				wantCode(t, "resume of a closed session", err, proxy.ESESSIONCLOSED)
			} else if err != nil {
				t.Fatalf("resume of %s session: %v", state, err)
			}
		case "suspend":
			h.suspend(id)
		case "close":
			if err := h.close(id); err != nil {
				t.Fatalf("close: %v", err)
			}
		}
		t.Logf("%s %s (was %s) at %v", op, id, state, now)
		check(ids, op)
	}
}

// Property 5: ExpiresAt = LastActivity + IdleTimeout for active and
// suspended sessions, zero for closed ones.
func TestPropExpiresAtIsLastActivityPlusIdleTimeout(tt *testing.T) {
	db := propDB(tt)
	rapid.Check(tt, func(t *rapid.T) {
		// Hours: the sweeper (ticking every 30 s) never fires during a run,
		// and the fake clock never gets near the timeout anyway.
		timeout := time.Duration(rapid.Int64Range(int64(time.Hour), int64(72*time.Hour)).Draw(t, "idle_timeout_ns"))
		h := newPropHarness(tt, t, db, Options{MaxSessions: rapid.IntRange(1, 4).Draw(t, "max_sessions"), IdleTimeout: timeout})
		expiryOps(t, h, timeout, func(ids []string, op string) {
			for _, id := range ids {
				g := h.get(id)
				switch g.State {
				case proxy.SessionActive, proxy.SessionSuspended:
					if g.ExpiresAt.IsZero() || !g.ExpiresAt.Equal(g.LastActivity.Add(timeout)) {
						t.Fatalf("after %s: %s session %s: expires_at=%v, last_activity=%v + %v = %v",
							op, g.State, id, g.ExpiresAt, g.LastActivity, timeout, g.LastActivity.Add(timeout))
					}
				case proxy.SessionClosed:
					if !g.ExpiresAt.IsZero() {
						t.Fatalf("after %s: closed session %s has expires_at=%v", op, id, g.ExpiresAt)
					}
				default:
					t.Fatalf("after %s: session %s is %s", op, id, g.State)
				}
			}
		})
	})
}

// Property 5, continued: the expiry reported for an active session is the
// one the idle sweeper enforces (it suspends once Now() passes the live
// handle's lastActivity + IdleTimeout).
func TestPropExpiresAtIsWhenIdleSweeperSuspends(tt *testing.T) {
	db := propDB(tt)
	rapid.Check(tt, func(t *rapid.T) {
		timeout := time.Duration(rapid.Int64Range(int64(time.Hour), int64(72*time.Hour)).Draw(t, "idle_timeout_ns"))
		h := newPropHarness(tt, t, db, Options{MaxSessions: rapid.IntRange(1, 4).Draw(t, "max_sessions"), IdleTimeout: timeout})
		expiryOps(t, h, timeout, func(ids []string, op string) {
			for _, id := range ids {
				g := h.get(id)
				if g.State != proxy.SessionActive {
					continue
				}
				l := h.m.reg.get(id)
				if l == nil {
					t.Fatalf("after %s: active session %s has no live handle", op, id)
				}
				l.mu.Lock()
				sweepAt := l.lastActivity.Add(timeout)
				l.mu.Unlock()
				if !g.ExpiresAt.Equal(sweepAt) {
					t.Fatalf("after %s: active session %s reports expires_at=%v (last_activity %v) but the idle sweeper suspends it at %v",
						op, id, g.ExpiresAt, g.LastActivity, sweepAt)
				}
			}
		})
	})
}

// Property 6: a session with a call in flight is never evicted or
// suspended; with every live session busy, creates (and resumes of
// suspended sessions) get MAX_SESSIONS_REACHED, and the held calls then
// complete successfully.
func TestPropBusySessionIsNeverEvicted(tt *testing.T) {
	db := propDB(tt)
	rapid.Check(tt, func(t *rapid.T) {
		maxSessions := rapid.IntRange(1, 4).Draw(t, "max_sessions")
		h := newPropHarness(tt, t, db, Options{MaxSessions: maxSessions})
		var ids []string
		for range maxSessions + rapid.IntRange(0, 3).Draw(t, "extra_sessions") {
			h.clock.advance(time.Second)
			s, err := h.create()
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, s.ID)
		}
		var busy []*pending
		var suspended []string
		pid := map[string]int{}
		for _, id := range ids {
			g := h.get(id)
			switch g.State {
			case proxy.SessionActive:
				h.clock.advance(time.Second)
				p, err := h.startBlocked(id)
				if err != nil {
					t.Fatalf("blocking call: %v", err)
				}
				busy = append(busy, p)
				pid[id] = g.WorkerPID
			case proxy.SessionSuspended:
				suspended = append(suspended, id)
			default:
				t.Fatalf("fresh session %s is %s", id, g.State)
			}
		}
		if len(busy) != maxSessions {
			t.Fatalf("%d sessions active after %d creates, want MaxSessions=%d", len(busy), len(ids), maxSessions)
		}
		// The busy sessions are now the least recently used by far.
		h.clock.advance(time.Duration(rapid.Int64Range(int64(time.Hour), int64(100*time.Hour)).Draw(t, "age_ns")))
		spawned := len(h.sp.all())
		for range rapid.IntRange(1, 6).Draw(t, "attempts") {
			ops := []string{"create", "suspend_busy"}
			if len(suspended) > 0 {
				ops = append(ops, "call_suspended", "resume_suspended")
			}
			switch op := rapid.SampledFrom(ops).Draw(t, "attempt"); op {
			case "create":
				_, err := h.create()
				wantCode(t, "create with every session busy", err, proxy.EMAXSESSIONS)
			case "suspend_busy":
				p := busy[rapid.IntRange(0, len(busy)-1).Draw(t, "busy_session")]
				if h.suspend(p.id) {
					t.Fatalf("trySuspend suspended busy session %s", p.id)
				}
			case "call_suspended":
				_, err := h.call(suspended[rapid.IntRange(0, len(suspended)-1).Draw(t, "suspended_session")])
				wantCode(t, "call on a suspended session with every live session busy", err, proxy.EMAXSESSIONS)
			case "resume_suspended":
				_, _, err := h.resume(suspended[rapid.IntRange(0, len(suspended)-1).Draw(t, "suspended_session")])
				wantCode(t, "resume with every live session busy", err, proxy.EMAXSESSIONS)
			}
		}
		if n := len(h.sp.all()); n != spawned {
			t.Fatalf("refused operations started %d workers", n-spawned)
		}
		for _, p := range busy {
			g := h.get(p.id)
			if g.State != proxy.SessionActive || g.WorkerPID != pid[p.id] || h.worker(pid[p.id]).closed.Load() {
				t.Fatalf("busy session %s: state=%s worker=%d (was %d, closed=%v)", p.id, g.State, g.WorkerPID, pid[p.id], h.worker(pid[p.id]).closed.Load())
			}
		}
		for _, id := range suspended {
			if got := h.get(id).State; got != proxy.SessionSuspended {
				t.Fatalf("suspended session %s became %s though nothing could be evicted", id, got)
			}
		}
		if live, reserved := h.liveState(); len(live) != maxSessions || reserved != 0 {
			t.Fatalf("%d live, %d reserved, want %d and 0", len(live), reserved, maxSessions)
		}
		for _, p := range rapid.Permutation(busy).Draw(t, "release_order") {
			res, err := p.finish(t)
			if err != nil || res.Status != proxy.StatusSuccess || res.SessionID != p.id {
				t.Fatalf("held call on %s: %+v, %v", p.id, res, err)
			}
		}
		if _, err := h.create(); err != nil {
			t.Fatalf("create once the calls finished: %v", err)
		}
	})
}

// idGen draws a session id that may or may not look like a UUID.
var idGen = rapid.OneOf(
	rapid.String(),
	rapid.StringMatching(`[0-9a-fA-F-]{1,40}`),
	rapid.StringMatching(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`),
	rapid.Custom(func(t *rapid.T) string {
		var u uuid.UUID
		copy(u[:], rapid.SliceOfN(rapid.Byte(), 16, 16).Draw(t, "uuid_bytes"))
		u[6] = u[6]&0x0f | 0x40 // version 4
		u[8] = u[8]&0x3f | 0x80 // RFC 4122 variant
		switch rapid.IntRange(0, 4).Draw(t, "uuid_form") {
		case 1:
			return "urn:uuid:" + u.String()
		case 2:
			return "{" + u.String() + "}"
		case 3:
			return fmt.Sprintf("%x", u[:])
		case 4:
			return fmt.Sprintf("%X", u[:])
		}
		return u.String()
	}),
)

// Property 7: an id that names no session gives SESSION_NOT_FOUND from Get,
// Call, Close and Resume, and changes nothing.
func TestPropUnknownIDIsNotFound(tt *testing.T) {
	db := propDB(tt)
	rapid.Check(tt, func(t *rapid.T) {
		h := newPropHarness(tt, t, db, Options{MaxSessions: 3})
		known := map[uuid.UUID]bool{}
		var ids []string
		for range rapid.IntRange(0, 4).Draw(t, "sessions") {
			s, err := h.create()
			if err != nil {
				t.Fatal(err)
			}
			known[uuid.MustParse(s.ID)] = true
			ids = append(ids, s.ID)
		}
		if len(ids) > 0 && rapid.Bool().Draw(t, "close_one") {
			if err := h.close(ids[0]); err != nil {
				t.Fatal(err)
			}
		}
		id := idGen.Filter(func(s string) bool { return s != "" }).Draw(t, "id")
		if u, err := uuid.Parse(id); err == nil && known[u] {
			t.Skip("drew a spelling of an existing session's id")
		}
		states := func() string {
			out := ""
			for _, id := range ids {
				out += fmt.Sprintf("%s=%s ", id, h.get(id).State)
			}
			live, reserved := h.liveState()
			return fmt.Sprintf("%slive=%d reserved=%d workers=%d transitions=%d", out, len(live), reserved, len(h.sp.all()), h.transitions())
		}
		ctx, cancel := opCtx()
		defer cancel()
		if _, err := h.m.Tools(ctx); err != nil { // may start the one spare worker
			t.Fatal(err)
		}
		before := states()

		_, err := h.m.GetSession(ctx, id)
		wantCode(t, fmt.Sprintf("Get(%q)", id), err, proxy.ESESSIONMISSING)
		_, err = h.call(id)
		wantCode(t, fmt.Sprintf("Call(%q)", id), err, proxy.ESESSIONMISSING)
		err = h.close(id)
		wantCode(t, fmt.Sprintf("Close(%q)", id), err, proxy.ESESSIONMISSING)
		_, _, err = h.resume(id)
		wantCode(t, fmt.Sprintf("Resume(%q)", id), err, proxy.ESESSIONMISSING)
		if after := states(); after != before {
			t.Fatalf("operations on unknown id %q changed the manager:\nbefore %s\nafter  %s", id, before, after)
		}
		_, err = h.m.GetSession(ctx, id)
		wantCode(t, fmt.Sprintf("Get(%q) after the other operations", id), err, proxy.ESESSIONMISSING)
	})
}

// Property 8: ownership. Sessions are created by random clients (two MCP
// clients and the operator) and left active, suspended or closed; every
// client then tries every operation on every session.
func TestPropOtherClientsSessionIsNotFound(tt *testing.T) {
	db := propDB(tt)
	clients := []proxy.ClientID{"", proxy.NewClientID("bridge", "a"), proxy.NewClientID("mcp", "b")}
	as := func(ctx context.Context, c proxy.ClientID) context.Context {
		if c == "" {
			return ctx // the operator
		}
		return proxy.WithClient(ctx, c)
	}
	rapid.Check(tt, func(t *rapid.T) {
		h := newPropHarness(tt, t, db, Options{MaxSessions: 4})
		ctx, cancel := opCtx()
		defer cancel()
		owner := map[string]proxy.ClientID{}
		var ids []string
		for i := range rapid.IntRange(1, 4).Draw(t, "sessions") {
			c := rapid.SampledFrom(clients).Draw(t, fmt.Sprintf("owner_%d", i))
			s, err := h.m.CreateSession(as(ctx, c))
			if err != nil {
				t.Fatal(err)
			}
			owner[s.ID], ids = c, append(ids, s.ID)
			switch rapid.SampledFrom([]string{"active", "suspended", "closed"}).Draw(t, fmt.Sprintf("state_%d", i)) {
			case "suspended":
				h.suspend(s.ID)
			case "closed":
				if err := h.m.CloseSession(as(ctx, c), s.ID); err != nil {
					t.Fatal(err)
				}
			}
		}
		states := func() string {
			out := ""
			for _, id := range ids {
				out += fmt.Sprintf("%s=%s ", id, h.get(id).State) // the operator's view
			}
			live, reserved := h.liveState()
			return fmt.Sprintf("%slive=%d reserved=%d workers=%d", out, len(live), reserved, len(h.sp.all()))
		}
		before := states()

		// What every operation answers about an id, as one comparable text.
		answers := func(ctx context.Context, id string) string {
			show := func(err error) string {
				e := proxy.AsError(err)
				return fmt.Sprintf("%s %q %v %v %q", e.Code, e.Message, e.Details, e.Retryable, e.Suggestion)
			}
			_, gerr := h.m.GetSession(ctx, id)
			_, cerr := h.m.Call(ctx, proxy.CallRequest{SessionID: id, Tool: "browser_snapshot"})
			_, _, rerr := h.m.ResumeSession(ctx, id)
			xerr := h.m.CloseSession(ctx, id)
			return fmt.Sprintf("get: %s\ncall: %s\nresume: %s\nclose: %s", show(gerr), show(cerr), show(rerr), show(xerr))
		}
		for _, viewer := range clients {
			vctx := as(ctx, viewer)
			list, err := h.m.ListSessions(vctx)
			if err != nil {
				t.Fatal(err)
			}
			listed := map[string]bool{}
			for _, s := range list {
				listed[s.ID] = true
			}
			for _, id := range ids {
				visible := viewer == "" || owner[id] == viewer
				if listed[id] != visible {
					t.Fatalf("client %.8q lists session %s (owner %.8q): %v, want %v", viewer, id, owner[id], listed[id], visible)
				}
				if visible {
					continue
				}
				unknown := uuid.NewString()
				want := strings.ReplaceAll(answers(vctx, unknown), unknown, id)
				if got := answers(vctx, id); got != want {
					t.Fatalf("client %.8q on another client's session %s:\n%s\nwant, as for an unknown id:\n%s", viewer, id, got, want)
				}
			}
		}
		if after := states(); after != before {
			t.Fatalf("other clients' operations changed the manager:\nbefore %s\nafter  %s", before, after)
		}
	})
}
