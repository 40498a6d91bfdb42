package session

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
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

// trySuspend suspends l unless a call holds or awaits it; it reports
// whether it did. It waits briefly for a background save or restart.
func (m *Manager) trySuspend(ctx context.Context, l *live, reason string) bool {
	if l.busy() || !l.lockWithin(evictLockWait) {
		return false
	}
	defer l.unlock()
	if l.retired || l.busy() {
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
	if w := l.worker; w != nil {
		sctx, cancel := context.WithTimeout(budget, saveStateTimeout)
		m.sup.saveState(sctx, l, w)
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
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		cutoff := m.opts.Now().Add(-m.opts.IdleTimeout)
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
	if err := validID(id); err != nil {
		return err
	}
	unlock := m.reg.transition(id)
	defer unlock()
	s, err := m.session(ctx, id)
	if err != nil {
		return err
	}
	if s.State != proxy.SessionError {
		return nil
	}
	if err := m.store.UpdateSessionState(ctx, id, proxy.SessionSuspended); err != nil {
		return fmt.Errorf("resuming failed session: %w", err)
	}
	m.log.Info("failed session resumed explicitly", "session_id", id)
	return nil
}
