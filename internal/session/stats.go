package session

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/upstream"
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
// caller gave up on (its context ended), or that placement refused (every
// browser node full), says nothing about whether workers can start and is
// not remembered.
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
	case ctx.Err() == nil && !placementRefused(err):
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
	// WorkersHung counts workers killed for not answering pings, a session
	// whose session host was killed for that as one.
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
	now := m.clock.Now()
	for _, l := range m.reg.all() {
		if left := l.restartsLeft(now); left < restartLimit {
			out[l.id] = left
		}
	}
	return out
}

// placementRefused reports whether err is placement's refusal.
func placementRefused(err error) bool {
	_, ok := upstream.PlacementRefusal(err)
	return ok
}
