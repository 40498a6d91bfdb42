package session

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/google/uuid"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/clock"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/upstream"
)

// Budgets for the proxy's own calls around a suspend or resume.
const (
	saveStateTimeout    = 15 * time.Second
	restoreStateTimeout = 30 * time.Second
	shutdownCloseBudget = 5 * time.Second
	// evictLockWait bounds how long an eviction or idle suspension waits
	// for a session held by a state save or a restart (not by a call).
	evictLockWait = 5 * time.Second
)

// ShutdownStopReserve is the part of a shutdown's budget kept for stopping
// the workers (close stdin, SIGTERM, SIGKILL): a call in flight is waited
// for, and the state save and browser_close at shutdown run, only until
// that long before the deadline, however long they would take otherwise.
const ShutdownStopReserve = 3 * time.Second

// The lifecycle of a session, in the order this file follows it. A create
// reserves one of the MaxSessions live slots (evicting the least recently
// used idle session when they are all taken) and gets a worker. Every call
// acquires the session's live handle; a session without one (suspended, or
// left by an earlier server) is revived into a fresh worker with its saved
// state. A session idle past IdleTimeout, evicted, or live at shutdown is
// suspended: its state saved, its worker stopped, its handle retired. One
// whose worker dies too often is put in the error state by the supervisor
// until an explicit resume. A close is final; the history stays readable.

// Create starts a new isolated session, shaped by opts (at most one). Its
// options are checked, and the profile it starts from read, before
// anything is reserved or started; a session without shaping options takes
// a warm spare (a profile shapes nothing), one with some a worker started
// for it. A session from a profile gets a copy of the profile's state in
// its worker before anyone can see it, and keeps that copy as its own
// saved state at once, so that a crash right after the create restores it.
func (m *Manager) CreateSession(ctx context.Context, opts ...proxy.BrowserOptions) (*proxy.Session, error) {
	if err := m.checkOpen(); err != nil {
		return nil, err
	}
	o, err := proxy.OneOf(opts)
	if err != nil {
		return nil, err
	}
	prof, err := m.loadProfile(ctx, o)
	if err != nil {
		return nil, err
	}
	o = o.Shape()
	shape, err := m.shapeOf(ctx, o)
	if err != nil {
		return nil, err
	}
	if err := m.reserve(ctx); err != nil {
		return nil, err
	}
	w, err := m.pool.get(ctx, shape)
	if err != nil {
		m.reg.unreserve()
		return nil, err
	}
	if prof != nil {
		if err := m.applyProfile(ctx, w, prof); err != nil {
			// The worker holds part of the profile: it serves nobody else.
			m.reg.unreserve()
			closeWorker(w, m.log)
			return nil, err
		}
	}
	now := m.clock.Now().UTC()
	owner, _ := proxy.ClientFrom(ctx)
	s := &proxy.Session{ID: uuid.NewString(), CreatedAt: now, LastActivity: now, State: proxy.SessionActive, Metadata: json.RawMessage(`{}`), Owner: owner}
	if !o.IsZero() {
		s.Options = &o
	}
	l := &live{id: s.ID, owner: owner, shape: shape, sem: make(chan struct{}, 1), hadWorker: true, lastActivity: now}
	created := workerDetail(w)
	if prof != nil {
		s.Profile, s.ProfileVersion, s.ProfileWrite = prof.name, prof.version, prof.write
		l.profile, l.profileVersion, l.profileWrite = prof.name, prof.version, prof.write
		created += fmt.Sprintf("; profile %s v%d", prof.name, prof.version)
	}
	if err := m.store.CreateSession(ctx, s); err != nil {
		m.reg.unreserve()
		if prof != nil {
			closeWorker(w, m.log)
		} else {
			m.pool.put(w)
		}
		return nil, fmt.Errorf("recording new session: %w", err)
	}
	if prof != nil {
		if err := m.store.SaveSessionState(context.WithoutCancel(ctx), s.ID, prof.state, now); err != nil {
			m.log.Warn("recording the state of a session started from a profile", "session_id", s.ID, "profile", prof.name, "err", err)
		}
	}
	l.sem <- struct{}{} // nobody can see l yet; assign wants the lock held
	m.sup.assign(l, w)
	l.unlock()
	m.reg.fill(l)
	m.stats.created.Add(1)
	m.log.Info("session created", "session_id", s.ID, "worker_pid", w.PID(), "profile", s.Profile)
	recordEvent(m.store, m.log, m.clock.Now(), s.ID, proxy.EventCreated, created)
	return m.withExpiry(s), nil
}

// reserve takes one of the MaxSessions live slots, suspending the least
// recently used idle session when they are all taken.
func (m *Manager) reserve(ctx context.Context) error {
	return m.reg.reserve(func(l *live) bool {
		if !m.trySuspend(ctx, l, "evicted to make room") {
			return false
		}
		m.stats.evicted.Add(1)
		return true
	})
}

// Get returns one session the caller may see (proxy.CanSee).
func (m *Manager) GetSession(ctx context.Context, id string) (*proxy.Session, error) {
	if err := validID(id); err != nil {
		return nil, err
	}
	s, err := m.session(ctx, id)
	if err != nil {
		return nil, err
	}
	return forCaller(ctx, m.withExpiry(s)), nil
}

// forCaller leaves out of a session what only the operator needs. An
// unnamed browser node's id is its address, and a page that learnt a
// node's address could try its endpoint: an MCP client has no use for it.
func forCaller(ctx context.Context, s *proxy.Session) *proxy.Session {
	if _, client := proxy.ClientFrom(ctx); client {
		s.Node = ""
	}
	return s
}

// session reads a session from the store for the caller of ctx: one that
// belongs to another client is SESSION_NOT_FOUND, word for word as an
// unknown id, so no answer tells the two apart.
func (m *Manager) session(ctx context.Context, id string) (*proxy.Session, error) {
	s, err := m.store.GetSession(ctx, id)
	if err != nil {
		return nil, err
	}
	if !proxy.CanSee(ctx, s.Owner) {
		return nil, proxy.SessionNotFound(id)
	}
	return s, nil
}

// List returns every session the caller may see, newest first.
func (m *Manager) ListSessions(ctx context.Context) ([]*proxy.Session, error) {
	all, err := m.store.ListSessions(ctx)
	if err != nil {
		return nil, err
	}
	ss := all[:0]
	for _, s := range all {
		if proxy.CanSee(ctx, s.Owner) {
			ss = append(ss, forCaller(ctx, m.withExpiry(s)))
		}
	}
	sort.SliceStable(ss, func(i, j int) bool { return ss[i].CreatedAt.After(ss[j].CreatedAt) })
	return ss, nil
}

// withExpiry fills the derived fields of s. For a live session the
// in-memory activity time is the truth (the idle sweeper goes by it; the
// stored one is written when a call ends).
func (m *Manager) withExpiry(s *proxy.Session) *proxy.Session {
	if l := m.reg.get(s.ID); l != nil {
		l.mu.Lock()
		s.LastActivity = l.lastActivity.UTC()
		w := l.current
		l.mu.Unlock()
		if w != nil {
			s.WorkerPID, s.RSSBytes, s.Node = w.PID(), w.RSS(), nodeOf(w)
			s.Memory = sessionMemory(l, w)
		}
		left := l.restartsLeft(m.clock.Now())
		s.RestartsLeft = &left
	}
	s.Control, s.Waiting = m.human.state(s.ID)
	if s.State == proxy.SessionActive || s.State == proxy.SessionSuspended {
		s.LiveURL = m.liveURL(s.ID)
	}
	if m.opts.IdleTimeout > 0 && (s.State == proxy.SessionActive || s.State == proxy.SessionSuspended) {
		s.ExpiresAt = s.LastActivity.Add(m.opts.IdleTimeout)
	}
	return s
}

// acquire returns the session's live handle with its lock held.
func (m *Manager) acquire(ctx context.Context, id string) (*live, error) {
	if err := validID(id); err != nil {
		return nil, err
	}
	for {
		l := m.reg.get(id)
		if l == nil {
			var err error
			if l, err = m.revive(ctx, id); err != nil {
				return nil, withSessionID(err, id)
			}
		}
		if !proxy.CanSee(ctx, l.owner) {
			return nil, withSessionID(proxy.SessionNotFound(id), id)
		}
		// Counted before waiting: a session with a call queued is busy, so
		// neither eviction nor a background save takes it from under the call.
		l.enter()
		if err := l.lock(ctx); err != nil {
			l.leave(m.clock.Now())
			return nil, err
		}
		if l.retired {
			l.unlock()
			l.leave(m.clock.Now())
			continue // closed, suspended or failed meanwhile: re-read its state
		}
		return l, nil
	}
}

// release ends what acquire began and saves the session's browser state in
// the background if the call may have changed it.
func (m *Manager) release(l *live) {
	l.unlock()
	// The activity time is when the call ends.
	l.leave(m.clock.Now())
	m.sup.saveSoon(l)
}

// revive makes a live handle for a known session that has none (suspended,
// or left by an earlier server): it resumes in a fresh worker, in a slot of
// its own.
func (m *Manager) revive(ctx context.Context, id string) (*live, error) {
	unlock := m.reg.transition(id)
	defer unlock()
	if l := m.reg.get(id); l != nil {
		return l, nil // revived meanwhile
	}
	s, err := m.session(ctx, id)
	if err != nil {
		return nil, err
	}
	if err := stateErr(s); err != nil {
		return nil, err
	}
	var shape upstream.Shape
	if s.Options != nil {
		// Checked again: what was valid when the session was made may not
		// be on this server (a device gone from its catalogue).
		if shape, err = m.shapeOf(ctx, *s.Options); err != nil {
			return nil, err
		}
	}
	if err := m.reserve(ctx); err != nil {
		return nil, err
	}
	l := &live{id: id, owner: s.Owner, shape: shape, sem: make(chan struct{}, 1), hadWorker: true, lastActivity: m.clock.Now(),
		profile: s.Profile, profileVersion: s.ProfileVersion, profileWrite: s.ProfileWrite}
	if md := s.PageMetadata(); md.LastURL != "" {
		l.lastPage.URL = md.LastURL
	}
	m.reg.fill(l)
	return l, nil
}

func stateErr(s *proxy.Session) error {
	switch s.State {
	case proxy.SessionClosed:
		e := proxy.Errorf(proxy.ESESSIONCLOSED, "session %s is closed", s.ID)
		e.Details = map[string]any{"session_id": s.ID}
		return e
	case proxy.SessionError:
		return failedErr(s.ID)
	}
	return nil
}

// trySuspend suspends l unless a call holds or awaits it; it reports
// whether it did. It waits briefly for a background save or restart.
func (m *Manager) trySuspend(ctx context.Context, l *live, reason string) bool {
	// A person's browser (or one an agent waits for a person in) is not
	// idle, however long since the agent's last call.
	if m.human.engaged(l.id) || l.busy() || !l.lockWithin(m.clock, evictLockWait, nil) {
		return false
	}
	defer l.unlock()
	if l.retired || l.busy() || m.human.engaged(l.id) {
		return false
	}
	m.suspendLocked(ctx, l, reason)
	return true
}

// suspendLocked saves l's browser state, stops its worker and retires the
// handle; the session stays resumable. The caller holds l's lock.
func (m *Manager) suspendLocked(ctx context.Context, l *live, reason string) {
	// The save and browser_close get a budget: at shutdown what is left of
	// the shutdown's (ctx's deadline, less the time to stop the worker),
	// cancelled with it; else their own limits, since a suspend, once
	// begun, finishes.
	budget, cancelBudget := context.WithoutCancel(ctx), func() {}
	if reason == reasonShutdown {
		budget, cancelBudget = shutdownBudget(ctx)
	}
	defer cancelBudget()
	orig := ctx
	ctx = context.WithoutCancel(ctx) // the record of the suspend is always written
	var saved json.RawMessage
	if w := l.worker; w != nil {
		sctx, cancel := context.WithTimeout(budget, saveStateTimeout)
		if l.profile != "" && l.profileWrite {
			sctx = upstream.WithIndexedDB(sctx) // it becomes the profile's
		}
		saved = m.sup.saveState(sctx, l, w)
		cancel()
		if reason == reasonShutdown {
			m.closeBrowser(budget, w)
		}
		// Off the session first, so the watcher does not take the exit
		// for a crash. At shutdown the stop ends with its budget.
		l.setWorker(nil)
		stop := context.Background()
		if reason == reasonShutdown {
			stop = orig
		}
		stopWorker(stop, w, m.log)
	}
	l.retired = true
	// The stored state changes before the handle leaves the registry, so
	// whoever finds the handle gone reads "suspended" and revives it
	// properly.
	if err := m.store.UpdateSessionState(ctx, l.id, proxy.SessionSuspended); err != nil {
		m.log.Warn("marking session suspended", "session_id", l.id, "err", err)
	}
	m.reg.remove(l)
	m.log.Info("session suspended", "session_id", l.id, "reason", reason)
	recordEvent(m.store, m.log, m.clock.Now(), l.id, proxy.EventSuspended, reason)
	m.writeBack(ctx, l, saved)
}

// reasonShutdown is the suspend reason at shutdown, when the browser
// context is also closed politely.
const reasonShutdown = "shutdown"

// shutdownBudget is ctx ending ShutdownStopReserve before its deadline
// (as ctx when it has none).
func shutdownBudget(ctx context.Context) (context.Context, context.CancelFunc) {
	if dl, ok := ctx.Deadline(); ok {
		return context.WithDeadline(ctx, dl.Add(-ShutdownStopReserve))
	}
	return context.WithCancel(ctx)
}

// closeBrowser asks the worker to close its browser context (browser_close)
// before it is stopped, within shutdownCloseBudget and ctx; not at all once
// ctx has ended (the worker is stopped anyway).
func (m *Manager) closeBrowser(ctx context.Context, w Worker) {
	if ctx.Err() != nil {
		m.log.Debug("no time left for browser_close at shutdown", "worker_pid", w.PID())
		return
	}
	for _, t := range w.Tools() {
		if t.Name != "browser_close" {
			continue
		}
		cctx, cancel := context.WithTimeout(ctx, shutdownCloseBudget)
		defer cancel()
		if _, err := w.CallTool(cctx, "browser_close", json.RawMessage(`{}`)); err != nil {
			m.log.Debug("browser_close at shutdown", "worker_pid", w.PID(), "err", err)
		}
		return
	}
}

// suspendIdle suspends sessions idle for longer than IdleTimeout.
func (m *Manager) suspendIdle(ctx context.Context) {
	defer m.bg.Done()
	every := min(max(m.opts.IdleTimeout/4, 50*time.Millisecond), 30*time.Second)
	for {
		if clock.Sleep(ctx, m.clock, every) != nil {
			return
		}
		cutoff := m.clock.Now().Add(-m.opts.IdleTimeout)
		for _, l := range m.reg.idleSince(cutoff) {
			m.trySuspend(ctx, l, "idle")
		}
	}
}

// ResumeSession brings a suspended session back into a worker now, rather than on
// its next call. It reports whether the browser state was restored into a
// new worker (false when the session was already live).
func (m *Manager) ResumeSession(ctx context.Context, id string) (*proxy.Session, bool, error) {
	if err := m.checkOpen(); err != nil {
		return nil, false, err
	}
	if err := m.unfail(ctx, id); err != nil {
		return nil, false, err
	}
	l, err := m.acquire(ctx, id)
	if err != nil {
		return nil, false, err
	}
	_, err = m.sup.ensureWorker(ctx, l)
	restored := l.takeRestored()
	m.release(l)
	if err != nil {
		return nil, false, err
	}
	s, err := m.GetSession(ctx, id)
	return s, restored, err
}

// unfail makes a session in the error state resumable again: an explicit
// resume is the user asking to try once more.
func (m *Manager) unfail(ctx context.Context, id string) error {
	s, unlock, err := m.transition(ctx, id)
	if err != nil {
		return err
	}
	defer unlock()
	if s.State != proxy.SessionError {
		return nil
	}
	if err := m.store.UpdateSessionState(ctx, id, proxy.SessionSuspended); err != nil {
		return fmt.Errorf("resuming failed session: %w", err)
	}
	m.log.Info("failed session resumed explicitly", "session_id", id)
	return nil
}

// transition takes the transition lock of id (registry.transition) and
// reads the session for the caller of ctx; once err is nil the caller
// holds the lock and calls unlock.
func (m *Manager) transition(ctx context.Context, id string) (s *proxy.Session, unlock func(), err error) {
	if err := validID(id); err != nil {
		return nil, nil, err
	}
	unlock = m.reg.transition(id)
	if s, err = m.session(ctx, id); err != nil {
		unlock()
		return nil, nil, err
	}
	return s, unlock, nil
}

// Close stops a session's worker; its history stays readable.
func (m *Manager) CloseSession(ctx context.Context, id string) error {
	// The transition lock keeps a concurrent resume from bringing the
	// session back between our look-up and the state change.
	s, unlock, err := m.transition(ctx, id)
	if err != nil {
		return err
	}
	defer unlock()
	if s.State == proxy.SessionClosed {
		return nil
	}
	// An agent does not close the browser a person is using; the
	// operator's close ends the person's control.
	if _, client := proxy.ClientFrom(ctx); client {
		if err := m.gate(ctx, id); err != nil {
			return err
		}
	}
	l := m.reg.get(id)
	var saved json.RawMessage // what a session from a profile writes back
	if l != nil {
		if err := l.lock(ctx); err != nil {
			return err
		}
		defer l.unlock()
		saved = m.stateToWriteBack(ctx, l)
	}
	// The stored state changes before the handle leaves the registry, so
	// whoever finds the handle gone reads "closed"; and before the handle
	// is retired, so that a close the record cannot take (a full disk)
	// leaves the session as it was rather than a retired handle that calls
	// would find again and again.
	if err := m.store.UpdateSessionState(context.WithoutCancel(ctx), id, proxy.SessionClosed); err != nil {
		return fmt.Errorf("recording session close: %w", err)
	}
	var w Worker
	if l != nil {
		w = l.worker
		l.setWorker(nil)
		l.retired = true
		m.reg.remove(l)
	}
	if w != nil {
		closeWorker(w, m.log)
	}
	m.log.Info("session closed", "session_id", id)
	m.endHuman(id)
	recordEvent(m.store, m.log, m.clock.Now(), id, proxy.EventClosed, "")
	if l != nil {
		m.writeBack(ctx, l, saved)
	}
	return nil
}

// stateToWriteBack reads the browser state of a closing session that
// writes back to its profile, within saveStateTimeout; nil for any other
// session, or when it cannot be read (logged: the close goes on). The
// caller holds l's lock.
func (m *Manager) stateToWriteBack(ctx context.Context, l *live) json.RawMessage {
	w := l.worker
	if l.profile == "" || !l.profileWrite || m.profiles == nil || w == nil {
		return nil
	}
	select {
	case <-w.Done():
		return nil // crashed: its last saved state is its own, not the profile's
	default:
	}
	sctx, cancel := context.WithTimeout(upstream.WithIndexedDB(context.WithoutCancel(ctx)), saveStateTimeout)
	defer cancel()
	saved, err := w.SaveState(sctx)
	if err != nil {
		m.log.Warn("reading a closing session's state for its profile", "session_id", l.id, "profile", l.profile, "err", err)
		return nil
	}
	return saved
}

// Shutdown stops every worker and the pool. Sessions that were live are left
// suspended: their history stays and a later call resumes them.
func (m *Manager) Shutdown(ctx context.Context) error {
	m.mu.Lock()
	if m.shutdown {
		m.mu.Unlock()
		return nil
	}
	m.shutdown = true
	m.pool.close()
	m.mu.Unlock()
	lives := m.reg.all()
	m.stop()
	m.bg.Wait()

	var wg sync.WaitGroup
	for _, l := range lives {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Wait for the call in flight, but not into the part of the
			// budget kept for stopping the worker; then save the state so
			// the session resumes after a restart.
			lctx, cancel := shutdownBudget(ctx)
			err := l.lock(lctx)
			cancel()
			if err == nil {
				if !l.retired {
					m.suspendLocked(ctx, l, reasonShutdown)
				}
				l.unlock()
				return
			}
			if w := l.currentWorker(); w != nil {
				stopWorker(ctx, w, m.log)
			}
			if err := m.store.UpdateSessionState(context.WithoutCancel(ctx), l.id, proxy.SessionSuspended); err != nil {
				m.log.Warn("suspending session at shutdown", "session_id", l.id, "err", err)
			}
		}()
	}
	for _, w := range m.pool.drain() {
		wg.Add(1)
		go func() { defer wg.Done(); stopWorker(ctx, w, m.log) }()
	}
	wg.Wait()
	m.sup.endTasks()
	return nil
}
