package session

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"time"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/clock"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/upstream"
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
)

// supervisor keeps the workers under live sessions alive: it gives a
// session a worker (restoring its saved state into a new one), watches
// each worker and replaces one that dies, within a restart budget and with
// backoff, pings idle workers and kills those that hang, and saves a
// session's browser state once it is quiet, so that a lost worker or
// server costs the session as little as possible. Everything it starts in
// the background is one of its tasks, which Shutdown waits for.
type supervisor struct {
	opts  Options
	store Store
	log   *slog.Logger
	stats *stats
	reg   *registry       // a session put in the error state leaves it
	pool  *pool           // where new workers come from
	done  <-chan struct{} // closed by Shutdown: background work ends
	// tracing is held by the one renderer lookup under way: Chromium runs
	// one trace at a time, so lookups of several sessions at once fail
	// each other and only add load.
	tracing chan struct{}
	// engaged reports a session a person holds or an agent waits for one
	// on: no memory restart takes its browser from under them.
	engaged func(id string) bool

	mu     sync.Mutex
	ending bool // Shutdown waits for the tasks; no more start
	tasks  sync.WaitGroup
}

// goTask runs f in the background as one of the supervisor's tasks, unless
// Shutdown is already waiting for them to end: a restart or save started
// after that would outlive the shutdown (and adding to a WaitGroup at zero
// while it is waited on is a race). It reports whether f runs.
func (s *supervisor) goTask(f func()) bool {
	s.mu.Lock()
	if s.ending {
		s.mu.Unlock()
		return false
	}
	s.tasks.Add(1)
	s.mu.Unlock()
	go func() {
		defer s.tasks.Done()
		f()
	}()
	return true
}

// endTasks lets no more tasks start and waits for those running: watchers,
// pings and saves end on done; a restart in progress ends once its spawn
// does.
func (s *supervisor) endTasks() {
	s.mu.Lock()
	s.ending = true
	s.mu.Unlock()
	s.tasks.Wait()
}

// closing reports whether Shutdown has begun.
func (s *supervisor) closing() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

// ensureWorker gives l a live worker; it reports whether the session's
// browser state had to start afresh (old element refs are stale).
func (s *supervisor) ensureWorker(ctx context.Context, l *live) (restored bool, err error) {
	if l.worker != nil {
		select {
		case <-l.worker.Done():
			s.log.WarnContext(ctx, "session worker had exited; replacing it", "session_id", l.id, "worker_pid", l.worker.PID())
			s.workerLost(l)
		default:
			return false, nil
		}
	}
	if l.crashed {
		if err := s.allowRestart(ctx, l); err != nil {
			return false, err
		}
	}
	w, err := s.pool.get(ctx, l.shape)
	if err != nil {
		return false, err
	}
	s.assign(l, w)
	l.crashed, l.excused = false, false
	l.clearPings()
	if err := s.store.UpdateSessionState(ctx, l.id, proxy.SessionActive); err != nil {
		s.log.WarnContext(ctx, "marking session active", "session_id", l.id, "err", err)
	}
	restored = l.hadWorker
	l.hadWorker = true
	if restored {
		s.restore(ctx, l, w)
		l.mu.Lock()
		l.renderersDue = true // the restore opened its page in the new browser
		l.mu.Unlock()
		l.restored = true
		s.stats.restored.Add(1)
	}
	return restored, nil
}

// assign gives l the worker w and watches it: a worker that dies while it
// is still l's is a crash, and the session gets a new one. The caller holds
// l's lock.
func (s *supervisor) assign(l *live, w Worker) {
	if l.crashed {
		s.restarted(l, w)
	}
	l.setWorker(w)
	// Several sessions may share a worker process: the output directory is
	// what names this session's worker.
	s.log.Debug("session worker assigned", "session_id", l.id, "worker_pid", w.PID(), "output_dir", w.OutputDir())
	s.goTask(func() {
		select {
		case <-w.Done():
		case <-s.done:
			return
		}
		if l.currentWorker() != w {
			return // replaced, suspended or closed on purpose; or lost, and noted by the call that found it gone
		}
		s.noteLost(l, w)
		s.restartSoon(l)
	})
}

// noteLost records in l's timeline that its worker w died, once, whoever
// notices first: the worker's watcher, or a call that found it gone.
func (s *supervisor) noteLost(l *live, w Worker) {
	l.mu.Lock()
	first := l.lostNoted != w
	l.lostNoted = w
	l.mu.Unlock()
	if !first {
		return
	}
	s.log.Warn("session worker exited", "session_id", l.id, "worker_pid", w.PID())
	recordEvent(s.store, s.log, s.opts.Clock.Now(), l.id, proxy.EventWorkerLost, fmt.Sprintf("worker %d exited", w.PID()))
}

// restore gives a fresh worker the session's last saved state. A failure
// is logged, not returned: the session still works, with a fresh browser
// context, and the caller already reports restored=true.
func (s *supervisor) restore(ctx context.Context, l *live, w Worker) {
	state, savedAt, err := s.store.LoadSessionState(ctx, l.id)
	if err != nil {
		s.log.Warn("loading session state", "session_id", l.id, "err", err)
		return
	}
	if state == nil {
		s.log.Info("session resumed without saved state", "session_id", l.id, "state", proxy.SessionActive, "worker_pid", w.PID())
		recordEvent(s.store, s.log, s.opts.Clock.Now(), l.id, proxy.EventResumed, "no saved state; "+workerDetail(w))
		return
	}
	rctx, cancel := context.WithTimeout(ctx, restoreStateTimeout)
	defer cancel()
	if err := w.RestoreState(rctx, state); err != nil {
		s.log.Warn("restoring session state", "session_id", l.id, "err", err)
		return
	}
	s.log.Info("session state restored", "session_id", l.id, "state", proxy.SessionActive, "worker_pid", w.PID(), "saved_at", savedAt)
	recordEvent(s.store, s.log, s.opts.Clock.Now(), l.id, proxy.EventStateRestore, "state saved at "+savedAt.UTC().Format(time.RFC3339)+" restored into "+workerDetail(w))
}

// restartSoon replaces l's dead worker in the background, so that the next
// call finds the session ready. Calls that arrive meanwhile queue on the
// session's lock and are served once the restart is done.
func (s *supervisor) restartSoon(l *live) {
	s.goTask(func() {
		if !l.lockWithin(s.opts.Clock, restartLockWait, s.done) {
			return // a call holds it and will restart the worker itself, or the server is closing
		}
		defer l.unlock()
		if l.retired || s.closing() {
			return
		}
		ctx, cancel := s.restartContext()
		defer cancel()
		if _, err := s.ensureWorker(ctx, l); err != nil {
			left := l.restartsLeft(s.opts.Clock.Now())
			s.log.Warn("restarting session worker failed", "session_id", l.id, "attempt", restartLimit-left, "of", restartLimit, "restarts_left", left, "err", err)
		}
	})
}

// restartContext bounds one background restart: the backoff, the spawn and
// the restore. Calls queued behind it wait no longer than this.
func (s *supervisor) restartContext() (context.Context, context.CancelFunc) {
	limit := s.opts.restartTimeLimit
	if limit <= 0 {
		limit = restartTimeLimit
	}
	return context.WithTimeout(context.Background(), limit)
}

// workerLost records that l's worker died under it. The caller holds l's
// lock.
func (s *supervisor) workerLost(l *live) {
	if w := l.worker; w != nil {
		s.noteLost(l, w)
		l.excused = lostBrowser(w)
		if hostHung(w) {
			l.mu.Lock()
			// A session whose own pings already killed it was counted then.
			if l.pingFailures < pingFailLimit {
				s.stats.hung.Add(1)
			}
			l.replacedWhy = "its session host did not answer its pings and was killed"
			l.mu.Unlock()
		}
		l.setWorker(nil)
		closeWorker(w, s.log) // reaps it and removes its output dir
	}
	l.crashed = true
	l.diedAt = s.opts.Clock.Now()
	s.stats.crashes.Add(1)
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
// A worker lost with a browser it shares (LostBrowser; the proxy's, or its
// session host's) is excused: a browser crash takes every sharing worker
// down at once, through no fault of theirs, and the browser comes back
// without them (relaunched by the browser host, or with a new session
// host); such a restart waits for no backoff and uses none of the budget.
func (s *supervisor) allowRestart(ctx context.Context, l *live) error {
	if l.excused {
		return nil
	}
	now := s.opts.Clock.Now()
	used := restartLimit - l.restartsLeft(now)
	if used >= restartLimit {
		s.fail(ctx, l, fmt.Sprintf("its worker died %d times within %s", used+1, restartWindow))
		return failedErr(l.id)
	}
	if wait := l.diedAt.Add(s.opts.restartBackoff << used).Sub(now); wait > 0 {
		if err := clock.Sleep(ctx, s.opts.Clock, wait); err != nil {
			return &proxy.Error{Code: proxy.EUNAVAILABLE, Message: "the session's browser worker is restarting after a crash", Retryable: true,
				Suggestion: "Retry in a few seconds.", Details: map[string]any{"session_id": l.id}}
		}
	}
	l.mu.Lock()
	l.restarts = append(l.restarts, s.opts.Clock.Now())
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

// hostHang is implemented by workers that share a process, a session host,
// which the host's supervision kills when it stops answering pings
// (upstream.HostedSession).
type hostHang interface{ HostHung() bool }

func hostHung(w Worker) bool {
	h, ok := w.(hostHang)
	return ok && h.HostHung()
}

// restarted counts and logs that l, whose worker was lost, got w. The
// caller holds l's lock and assigns w next; the session is active again.
func (s *supervisor) restarted(l *live, w Worker) {
	s.stats.restarts.Add(1)
	// The ping failures are cleared only once w is assigned.
	reason := "its worker exited"
	l.mu.Lock()
	switch {
	case l.excused:
		reason = "the browser it shares exited"
	case l.replacedWhy != "":
		reason = l.replacedWhy
	case l.pingFailures >= pingFailLimit:
		reason = fmt.Sprintf("its worker did not answer %d pings in a row", pingFailLimit)
	}
	l.replacedWhy = ""
	l.mu.Unlock()
	left := l.restartsLeft(s.opts.Clock.Now())
	s.log.Info("session worker restarted", "session_id", l.id, "attempt", restartLimit-left, "of", restartLimit, "restarts_left", left,
		"reason", reason, "worker_pid", w.PID(), "down_for", s.opts.Clock.Now().Sub(l.diedAt).Round(time.Millisecond))
	// The stored state stayed active during the restart; the session is
	// usable again from here.
	s.log.Info("session active again", "session_id", l.id, "state", proxy.SessionActive, "after", "worker restart", "worker_pid", w.PID())
	recordEvent(s.store, s.log, s.opts.Clock.Now(), l.id, proxy.EventRestarted, fmt.Sprintf("%s; restart %d of %d", reason, restartLimit-left, restartLimit))
}

// fail puts l in the error state: no more restarts until someone resumes
// it explicitly. The caller holds l's lock.
func (s *supervisor) fail(ctx context.Context, l *live, why string) {
	l.retired = true
	if err := s.store.UpdateSessionState(context.WithoutCancel(ctx), l.id, proxy.SessionError); err != nil {
		s.log.Warn("marking session failed", "session_id", l.id, "err", err)
	}
	s.reg.remove(l)
	s.stats.failed.Add(1)
	s.log.Error("session failed", "session_id", l.id, "reason", why)
	recordEvent(s.store, s.log, s.opts.Clock.Now(), l.id, proxy.EventFailed, why)
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
func (s *supervisor) pingLoop(interval time.Duration) {
	timeout := s.opts.pingTimeout
	if timeout <= 0 {
		timeout = min(max(interval, minPingTimeout), maxPingTimeout)
	}
	for {
		t := s.opts.Clock.NewTimer(interval)
		select {
		case <-s.done:
			t.Stop()
			return
		case <-t.C():
		}
		for _, l := range s.reg.all() {
			w := l.currentWorker()
			if w == nil || !l.startPing() {
				continue
			}
			s.tasks.Add(1)
			go func() {
				defer s.tasks.Done()
				defer l.endPing()
				s.ping(l, w, timeout)
			}()
		}
		for _, w := range s.pool.toPing() {
			s.tasks.Add(1)
			go func() {
				defer s.tasks.Done()
				s.pool.pingSpare(w, timeout)
			}()
		}
	}
}

func (s *supervisor) ping(l *live, w Worker, timeout time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	err := w.Ping(ctx)
	cancel()
	if l.currentWorker() != w {
		return
	}
	failures, ok := l.pingResult(err)
	if ok {
		s.checkMemory(l, w)
		return
	}
	s.log.Warn("worker ping failed", "session_id", l.id, "worker_pid", w.PID(), "failures", failures, "err", err)
	if failures < pingFailLimit {
		return
	}
	s.log.Error("worker does not answer pings; killing it", "session_id", l.id, "worker_pid", w.PID())
	s.stats.hung.Add(1)
	// Kill reaps the whole group; the watcher in assign then sees the exit
	// while w is still the session's worker and restarts it.
	killWorker(w, s.log)
}

// markDirty notes that a call may have changed browser state worth saving
// (URL, cookies, storage): any call but one of a read-only tool.
func (s *supervisor) markDirty(l *live) {
	l.mu.Lock()
	l.dirty = true
	l.mu.Unlock()
}

// saveSoon saves l's browser state in the background once no call wants the
// session, so a worker or server that dies later can be replaced without
// losing it. One save per session at a time; calls go first.
func (s *supervisor) saveSoon(l *live) {
	l.mu.Lock()
	if l.saving || !l.dirty || s.closing() {
		l.mu.Unlock()
		return
	}
	l.saving = true
	l.mu.Unlock()
	s.goTask(func() {
		if s.saveNow(l) {
			s.saveSoon(l)
		}
	})
}

// saveNow runs one background save once the session has been quiet for
// the save delay; it reports whether another is due.
func (s *supervisor) saveNow(l *live) (again bool) {
	for {
		l.mu.Lock()
		quiet := l.quietSince
		busy := l.calls > 0
		if busy {
			// The call's end schedules the next save.
			l.saving = false
		}
		l.mu.Unlock()
		if busy {
			return false
		}
		if wait := quiet.Add(s.opts.saveDelay).Sub(s.opts.Clock.Now()); wait > 0 {
			t := s.opts.Clock.NewTimer(wait)
			select {
			case <-t.C():
			case <-s.done:
				t.Stop()
				l.doneSaving()
				return false
			}
		}
		// Done once no call ended during the wait; a test clock that
		// stands still must not make this loop wait forever.
		l.mu.Lock()
		again := !l.quietSince.Equal(quiet) || l.calls > 0
		l.mu.Unlock()
		if !again {
			break
		}
	}
	select {
	case l.sem <- struct{}{}:
	case <-s.done:
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
		if l.profile != "" {
			// A login's IndexedDB must come back after a crash too, and
			// reach the profile at the write-back that follows. It costs
			// this session a half-second save (upstream's settle), after
			// a quiet second: an agent's next call rarely waits for it.
			ctx = upstream.WithIndexedDB(ctx)
		}
		s.saveState(ctx, l, w)
		cancel()
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.saving = false
	return l.dirty && l.calls == 0
}

// saveState captures w's browser state into the store. It returns the
// state it read (nil when it read none), stored or not.
func (s *supervisor) saveState(ctx context.Context, l *live, w Worker) json.RawMessage {
	select {
	case <-w.Done():
		return nil
	default:
	}
	start := s.opts.Clock.Now()
	state, err := w.SaveState(ctx)
	if err != nil {
		s.log.Warn("saving session state", "session_id", l.id, "err", err)
		return nil
	}
	if err := s.store.SaveSessionState(context.WithoutCancel(ctx), l.id, state, s.opts.Clock.Now().UTC()); err != nil {
		s.log.Warn("recording session state", "session_id", l.id, "err", err)
		return state
	}
	s.stats.saves.Add(1)
	s.log.Debug("session state saved", "session_id", l.id, "bytes", len(state), "took", s.opts.Clock.Now().Sub(start).Round(time.Millisecond))
	return state
}
