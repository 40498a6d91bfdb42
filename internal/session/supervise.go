package session

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
)

// Supervision budgets. A session may lose its worker restartLimit times in
// restartWindow; the next loss puts it in the error state.
const (
	restartLimit    = 3
	restartWindow   = 5 * time.Minute
	firstBackoff    = time.Second
	pingFailLimit   = 3
	maxPingTimeout  = 10 * time.Second
	minPingTimeout  = time.Second
	restartLockWait = time.Minute
	// restartTimeLimit bounds one background restart: its backoff, the
	// spawn and the restore, each of which ends with its context. The
	// restart holds the session's lock no longer (give or take reaping the
	// dead worker), so this also bounds how long a call that arrives
	// during the restart waits for it; then the call goes on, making its
	// own attempt if the restart failed, or gets a 503.
	restartTimeLimit = 2 * time.Minute
	// saveDelay is how long a session must be quiet before its state is
	// saved: an agent's back-to-back calls never wait behind a save; a
	// crash in that second loses at most the last call's state change.
	saveDelay = time.Second
	// evictLockWait bounds how long an eviction or idle suspension waits
	// for a session held by a state save or a restart (not by a call).
	evictLockWait = 5 * time.Second
)

// stats counts supervision events (logged as they happen, too).
type stats struct {
	crashes, restarts, failed, hung, saves atomic.Int64
	created, evicted, restored             atomic.Int64
	// spawnFailure is the last worker start that failed, nil once one
	// succeeds (the workers check of /health).
	spawnFailure atomic.Pointer[spawnFailure]
}

// spawnFailure is a worker start that failed.
type spawnFailure struct {
	at  time.Time
	err string
}

// spawnTracker remembers whether the last worker start failed. A start the
// caller gave up on (its context ended) says nothing about whether workers
// can start and is not remembered.
type spawnTracker struct {
	Spawner
	stats *stats
	now   func() time.Time
}

// Spawn implements Spawner.
func (s spawnTracker) Spawn(ctx context.Context) (Worker, error) {
	w, err := s.Spawner.Spawn(ctx)
	switch {
	case err == nil:
		s.stats.spawnFailure.Store(nil)
	case ctx.Err() == nil:
		s.stats.spawnFailure.Store(&spawnFailure{at: s.now(), err: err.Error()})
	}
	return w, err
}

// CheckWorkers is the workers check of /health: an error while workers
// cannot be started (the last start failed and none succeeded since),
// naming how many sessions are in the error state. Sessions in the error
// state alone do not make it fail: one page that keeps crashing its worker
// says nothing about the others, and the state lasts until a resume.
func (m *Manager) CheckWorkers(ctx context.Context) error {
	f := m.stats.spawnFailure.Load()
	if f == nil {
		return nil
	}
	failed := "an unknown number of"
	if ss, err := m.store.ListSessions(ctx); err == nil {
		n := 0
		for _, s := range ss {
			if s.State == proxy.SessionError {
				n++
			}
		}
		failed = fmt.Sprint(n)
	}
	return fmt.Errorf("workers cannot be started: the last start, at %s, failed: %s; %s session(s) in the error state",
		f.at.UTC().Format(time.RFC3339), f.err, failed)
}

// Stats are the supervision counters since the manager started.
type Stats struct {
	// WorkerCrashes counts workers that died under a session.
	WorkerCrashes int64 `json:"worker_crashes"`
	// WorkerRestarts counts replacements after a crash that got a worker
	// (attempts whose spawn failed are not counted here, though they use up
	// the restart budget).
	WorkerRestarts int64 `json:"worker_restarts"`
	// SessionsFailed counts sessions put in the error state.
	SessionsFailed int64 `json:"sessions_failed"`
	// WorkersHung counts workers killed for not answering pings.
	WorkersHung int64 `json:"workers_hung"`
	// StateSaves counts browser states saved.
	StateSaves int64 `json:"state_saves"`
	// SessionsCreated counts creates.
	SessionsCreated int64 `json:"sessions_created"`
	// SessionsEvicted counts idle sessions suspended to make room.
	SessionsEvicted int64 `json:"sessions_evicted"`
	// SessionsRestored counts sessions given their saved state in a new
	// worker (after a suspension, a crash or a restart).
	SessionsRestored int64 `json:"sessions_restored"`
}

// Stats returns the supervision counters.
func (m *Manager) Stats() Stats {
	return Stats{
		WorkerCrashes: m.stats.crashes.Load(), WorkerRestarts: m.stats.restarts.Load(), SessionsFailed: m.stats.failed.Load(),
		WorkersHung: m.stats.hung.Load(), StateSaves: m.stats.saves.Load(),
		SessionsCreated: m.stats.created.Load(), SessionsEvicted: m.stats.evicted.Load(), SessionsRestored: m.stats.restored.Load(),
	}
}

// RestartsLeft names the live sessions that have used some of their
// restart budget, with what is left of it (never nil): at 0 the next crash
// of a session's own worker puts it in the error state.
func (m *Manager) RestartsLeft() map[string]int {
	out := map[string]int{}
	now := m.opts.Now()
	for _, l := range m.reg.all() {
		if left := l.restartsLeft(now); left < restartLimit {
			out[l.id] = left
		}
	}
	return out
}

// closing reports whether Shutdown has begun.
func (m *Manager) closing() bool {
	select {
	case <-m.done:
		return true
	default:
		return false
	}
}

// assign gives l the worker w and watches it: a worker that dies while it
// is still l's is a crash, and the session gets a new one. The caller holds
// l's lock.
func (m *Manager) assign(l *live, w Worker) {
	if l.crashed {
		m.restarted(l, w)
	}
	l.setWorker(w)
	m.goTask(func() {
		select {
		case <-w.Done():
		case <-m.done:
			return
		}
		if l.currentWorker() != w {
			return // replaced, suspended or closed on purpose
		}
		m.log.Warn("session worker exited", "session_id", l.id, "worker_pid", w.PID())
		m.restartSoon(l)
	})
}

// goTask runs f in the background as one of the manager's tasks, unless
// Shutdown is already waiting for them to end: a restart or save started
// after that would outlive the shutdown (and adding to a WaitGroup at zero
// while it is waited on is a race). It reports whether f runs.
func (m *Manager) goTask(f func()) bool {
	m.mu.Lock()
	if m.tasksEnding {
		m.mu.Unlock()
		return false
	}
	m.tasks.Add(1)
	m.mu.Unlock()
	go func() {
		defer m.tasks.Done()
		f()
	}()
	return true
}

// restartSoon replaces l's dead worker in the background, so that the next
// call finds the session ready. Calls that arrive meanwhile queue on the
// session's lock and are served once the restart is done.
func (m *Manager) restartSoon(l *live) {
	m.goTask(func() {
		select {
		case l.sem <- struct{}{}:
		case <-m.done:
			return
		case <-time.After(restartLockWait):
			return // a call holds it and will restart the worker itself
		}
		defer l.unlock()
		if l.retired || m.closing() {
			return
		}
		// Bounds the backoff, the spawn and the restore: calls queued
		// behind this restart wait no longer than this.
		limit := m.opts.restartTimeLimit
		if limit <= 0 {
			limit = restartTimeLimit
		}
		ctx, cancel := context.WithTimeout(context.Background(), limit)
		defer cancel()
		if _, err := m.ensureWorker(ctx, l); err != nil {
			left := l.restartsLeft(m.opts.Now())
			m.log.Warn("restarting session worker failed", "session_id", l.id, "attempt", restartLimit-left, "of", restartLimit, "restarts_left", left, "err", err)
		}
	})
}

// workerLost records that l's worker died under it. The caller holds l's
// lock.
func (m *Manager) workerLost(l *live) {
	if w := l.worker; w != nil {
		l.excused = lostBrowser(w)
		l.setWorker(nil)
		closeWorker(w, m.log) // reaps it and removes its output dir
	}
	l.crashed = true
	l.diedAt = m.opts.Now()
	m.stats.crashes.Add(1)
}

// allowRestart applies the restart budget before l gets a new worker after
// a crash: it waits out the backoff (1 s, 2 s, 4 s) and, past the budget,
// puts the session in the error state. The caller holds l's lock; calls
// queued behind it wait, bounded by the restart's time limit (restartSoon)
// or their own deadlines.
//
// An attempt uses up the budget before its spawn: a spawn that fails is a
// failed restart. So a session whose workers cannot start goes to the error
// state after restartLimit attempts instead of retrying forever, each call
// waiting out a longer backoff; the browser host's circuit breaker covers
// the case where no worker at all can start.
//
// A worker lost with the shared browser (LostBrowser) is excused: a browser
// crash takes every session's worker down at once, through no fault of
// theirs, and the host relaunches the browser itself; such a restart waits
// for no backoff and uses none of the budget.
func (m *Manager) allowRestart(ctx context.Context, l *live) error {
	if l.excused {
		return nil
	}
	now := m.opts.Now()
	used := restartLimit - l.restartsLeft(now)
	if used >= restartLimit {
		m.fail(ctx, l, fmt.Sprintf("its worker died %d times within %s", used+1, restartWindow))
		return failedErr(l.id)
	}
	if wait := l.diedAt.Add(m.opts.restartBackoff << used).Sub(now); wait > 0 {
		if err := m.sleep(ctx, wait); err != nil {
			return &proxy.Error{Code: proxy.EUNAVAILABLE, Message: "the session's browser worker is restarting after a crash", Retryable: true,
				Suggestion: "Retry in a few seconds.", Details: map[string]any{"session_id": l.id}}
		}
	}
	l.mu.Lock()
	l.restarts = append(l.restarts, m.opts.Now())
	l.mu.Unlock()
	return nil
}

// browserLoss is implemented by workers that tell whether they were
// stopped because the shared browser died (upstream.Worker).
type browserLoss interface{ LostBrowser() bool }

func lostBrowser(w Worker) bool {
	b, ok := w.(browserLoss)
	return ok && b.LostBrowser()
}

// sleep waits d or until ctx ends (Options.sleep in tests, which record the
// delays asked for instead of waiting).
func (m *Manager) sleep(ctx context.Context, d time.Duration) error {
	if m.opts.sleep != nil {
		return m.opts.sleep(ctx, d)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// restarted counts and logs that l, whose worker was lost, got w. The
// caller holds l's lock and assigns w next; the session is active again.
func (m *Manager) restarted(l *live, w Worker) {
	m.stats.restarts.Add(1)
	// The ping failures are cleared only once w is assigned.
	reason := "its worker exited"
	l.mu.Lock()
	switch {
	case l.excused:
		reason = "the shared browser exited"
	case l.pingFailures >= pingFailLimit:
		reason = fmt.Sprintf("its worker did not answer %d pings in a row", pingFailLimit)
	}
	l.mu.Unlock()
	left := l.restartsLeft(m.opts.Now())
	m.log.Info("session worker restarted", "session_id", l.id, "attempt", restartLimit-left, "of", restartLimit, "restarts_left", left,
		"reason", reason, "worker_pid", w.PID(), "down_for", m.opts.Now().Sub(l.diedAt).Round(time.Millisecond))
	// The stored state stayed active during the restart; the session is
	// usable again from here.
	m.log.Info("session active again", "session_id", l.id, "state", proxy.SessionActive, "after", "worker restart", "worker_pid", w.PID())
}

// fail puts l in the error state: no more restarts until someone resumes
// it explicitly. The caller holds l's lock.
func (m *Manager) fail(ctx context.Context, l *live, why string) {
	l.retired = true
	if err := m.store.UpdateSessionState(context.WithoutCancel(ctx), l.id, proxy.SessionError); err != nil {
		m.log.Warn("marking session failed", "session_id", l.id, "err", err)
	}
	m.reg.remove(l)
	m.stats.failed.Add(1)
	m.log.Error("session failed", "session_id", l.id, "reason", why)
}

// failedErr answers calls on a session in the error state.
func failedErr(id string) error {
	return &proxy.Error{Code: proxy.EUNAVAILABLE, Message: fmt.Sprintf("session %s lost its browser worker too often and is in the error state", id),
		Retryable:  true,
		Suggestion: "Resume it with resume_session (POST /sessions/{id}/resume) to try again, or create a new session.",
		Details:    map[string]any{"session_id": id}}
}

// pingLoop pings every idle session's worker, and every spare in the warm
// pool, each interval. Three consecutive failures mean the worker hangs (a
// busy worker is not pinged: busy is not dead); it is killed, and the
// crash path replaces it (the pool filler, a spare).
func (m *Manager) pingLoop(interval time.Duration) {
	defer m.tasks.Done()
	timeout := min(max(interval, minPingTimeout), maxPingTimeout)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-m.done:
			return
		case <-t.C:
		}
		for _, l := range m.reg.all() {
			w := l.currentWorker()
			if w == nil || !l.startPing() {
				continue
			}
			m.tasks.Add(1)
			go func() {
				defer m.tasks.Done()
				defer l.endPing()
				m.ping(l, w, timeout)
			}()
		}
		for _, w := range m.pool.toPing() {
			m.tasks.Add(1)
			go func() {
				defer m.tasks.Done()
				m.pool.pingSpare(w, timeout)
			}()
		}
	}
}

func (m *Manager) ping(l *live, w Worker, timeout time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	err := w.Ping(ctx)
	cancel()
	if l.currentWorker() != w {
		return
	}
	failures, ok := l.pingResult(err)
	if ok {
		return
	}
	m.log.Warn("worker ping failed", "session_id", l.id, "worker_pid", w.PID(), "failures", failures, "err", err)
	if failures < pingFailLimit {
		return
	}
	m.log.Error("worker does not answer pings; killing it", "session_id", l.id, "worker_pid", w.PID())
	m.stats.hung.Add(1)
	// Kill reaps the whole group; the watcher in assign then sees the exit
	// while w is still the session's worker and restarts it.
	killWorker(w, m.log)
}

// killWorker stops a worker that answers nothing at once: the polite steps
// of a stop (stdin closed, SIGTERM, each waited for) would only delay its
// replacement.
func killWorker(w Worker, log *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Second)
	defer cancel()
	if err := w.Kill(ctx); err != nil {
		log.Warn("killing worker", "worker_pid", w.PID(), "err", err)
	}
}

// markDirty notes that a call may have changed browser state worth saving
// (URL, cookies, storage): any call but one of a read-only tool.
func (m *Manager) markDirty(l *live) {
	l.mu.Lock()
	l.dirty = true
	l.mu.Unlock()
}

// saveSoon saves l's browser state in the background once no call wants the
// session, so a worker or server that dies later can be replaced without
// losing it. One save per session at a time; calls go first.
func (m *Manager) saveSoon(l *live) {
	l.mu.Lock()
	if l.saving || !l.dirty || m.closing() {
		l.mu.Unlock()
		return
	}
	l.saving = true
	l.mu.Unlock()
	m.goTask(func() {
		if m.saveNow(l) {
			m.saveSoon(l)
		}
	})
}

// saveNow runs one background save once the session has been quiet for
// the save delay; it reports whether another is due.
func (m *Manager) saveNow(l *live) (again bool) {
	for {
		l.mu.Lock()
		wait := time.Until(l.quietSince.Add(m.opts.saveDelay))
		busy := l.calls > 0
		if busy {
			// The call's end schedules the next save.
			l.saving = false
		}
		l.mu.Unlock()
		if busy {
			return false
		}
		if wait <= 0 {
			break
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-m.done:
			t.Stop()
			l.doneSaving()
			return false
		}
	}
	select {
	case l.sem <- struct{}{}:
	case <-m.done:
		l.doneSaving()
		return false
	}
	defer l.unlock()
	l.mu.Lock()
	if l.calls > 0 || !l.dirty || l.retired {
		// A queued call goes first; its end schedules the next save.
		l.saving = false
		l.mu.Unlock()
		return false
	}
	l.dirty = false
	l.mu.Unlock()
	if w := l.worker; w != nil {
		ctx, cancel := context.WithTimeout(context.Background(), saveStateTimeout)
		m.saveState(ctx, l, w)
		cancel()
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.saving = false
	return l.dirty && l.calls == 0
}

// saveState captures w's browser state into the store.
func (m *Manager) saveState(ctx context.Context, l *live, w Worker) {
	select {
	case <-w.Done():
		return
	default:
	}
	start := time.Now()
	state, err := w.SaveState(ctx)
	if err != nil {
		m.log.Warn("saving session state", "session_id", l.id, "err", err)
		return
	}
	if err := m.store.SaveSessionState(context.WithoutCancel(ctx), l.id, state, m.opts.Now().UTC()); err != nil {
		m.log.Warn("recording session state", "session_id", l.id, "err", err)
		return
	}
	m.stats.saves.Add(1)
	m.log.Debug("session state saved", "session_id", l.id, "bytes", len(state), "took", time.Since(start).Round(time.Millisecond))
}
