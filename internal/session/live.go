package session

import (
	"context"
	"sync"
	"time"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/clock"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/content"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/upstream"
)

// live is a session that may have a worker. sem serialises everything that
// touches the worker: calls on one page must not interleave, and a close must
// wait for the call in flight.
type live struct {
	id    string
	owner proxy.ClientID // never changes
	// shape is what every worker of the session is started with (its
	// browser options); never changes.
	shape upstream.Shape
	sem   chan struct{}

	// Guarded by sem.
	worker    Worker
	hadWorker bool
	retired   bool // closed, suspended or failed: this handle is out of the registry
	// lastPage is the session's page as its last call saw it: its URL is
	// the session's last_url, its snapshot what the next call's changes are
	// measured against (none when its refs no longer hold: a new worker).
	lastPage content.Page
	// pendingDownloads are the downloads a call started that had not
	// finished when it answered: the page's name → that call's ref, where
	// the download is stored once a later answer sees it finish.
	pendingDownloads map[string]string
	crashed          bool // the worker died under the session
	// restored: a new worker got the saved state and no call has said so
	// yet (a background restart cannot tell anyone itself).
	restored bool
	diedAt   time.Time // when it was noticed
	// excused: the worker was lost with a browser it shares (the proxy's,
	// or its session host's), through no fault of its own or its page's;
	// its restart uses none of the budget.
	excused bool
	// profile is the login profile the session started from ("" for none),
	// profileVersion the version it started from or last wrote back, and
	// profileWrite whether it writes its state back when it closes or is
	// suspended; a revived session reads them from the record.
	profile        string
	profileVersion int64
	profileWrite   bool

	// Guarded by mu, readable without waiting for a call in flight.
	mu           sync.Mutex
	lastActivity time.Time
	quietSince   time.Time // the last call's end: the state save waits for a quiet spell after it
	calls        int       // calls in flight or waiting for sem: the session is busy
	current      Worker
	lostNoted    Worker // the last worker whose death the timeline records
	dirty        bool   // browser state may have changed since the last save
	saving       bool   // a background save is scheduled or running
	pinging      bool
	pingFailures int
	restarts     []time.Time // replacements after crashes of its own, for the budget
	// renderers are the shared browser's renderer processes of the current
	// worker's pages, found at renderersAt; renderersDue says a call
	// reached the worker (or a restore) since, so they may have changed.
	renderers    []int
	renderersAt  time.Time
	renderersDue bool
	// replacedWhy is why the worker is being replaced when that is more
	// than its exit: the session went over its memory limit, or its session
	// host hung.
	replacedWhy string
}

func (l *live) lock(ctx context.Context) error {
	select {
	case l.sem <- struct{}{}:
		return nil
	case <-ctx.Done():
		return &proxy.Error{Code: proxy.ETIMEOUT, Message: "timed out waiting for the session's previous call to finish", Retryable: true,
			Details: map[string]any{"session_id": l.id}}
	}
}

func (l *live) unlock() { <-l.sem }

// currentWorker reads the worker without waiting for a call in flight.
func (l *live) currentWorker() Worker {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.current
}

// setWorker replaces the worker; the caller holds sem. The renderers
// found for the last one are not the new one's.
func (l *live) setWorker(w Worker) {
	l.worker = w
	l.mu.Lock()
	defer l.mu.Unlock()
	l.current = w
	l.renderers, l.renderersAt, l.renderersDue = nil, time.Time{}, false
}

// takeRestored reports, once, that the session's worker was replaced and
// given the saved state. The caller holds sem.
func (l *live) takeRestored() bool {
	r := l.restored
	l.restored = false
	return r
}

// enter counts a call that wants the session.
func (l *live) enter() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls++
}

// leave ends what enter began.
func (l *live) leave(now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls--
	l.lastActivity = now
	l.quietSince = now
}

// workerCalled notes that a call reached the worker: its browser exists
// now, and the call may have moved its pages to other renderers. Calls
// the proxy answers itself leave the worker's browser unlaunched, and a
// renderer lookup must not launch it.
func (l *live) workerCalled() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.renderersDue = true
}

// busy reports whether a call is in flight or queued.
func (l *live) busy() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.calls > 0
}

// lockWithin takes sem, waiting at most d, or until stop closes (nil never
// does): eviction waits for a state save or a restart, never for a call (it
// checks busy first and again after), and a background restart does not
// wait long for a call that will restart the worker itself.
func (l *live) lockWithin(c clock.Clock, d time.Duration, stop <-chan struct{}) bool {
	select {
	case l.sem <- struct{}{}:
		return true
	default:
	}
	t := c.NewTimer(d)
	defer t.Stop()
	select {
	case l.sem <- struct{}{}:
		return true
	case <-t.C():
		return false
	case <-stop:
		return false
	}
}

func (l *live) doneSaving() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.saving = false
}

// startPing reports whether a ping may start now: not while a call is in
// flight (busy is not dead) nor while the last ping is outstanding.
func (l *live) startPing() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.calls > 0 || l.pinging {
		return false
	}
	l.pinging = true
	return true
}

func (l *live) endPing() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.pinging = false
}

// pingResult counts a ping's outcome; a failure while a call started
// meanwhile does not count. It returns the consecutive failures and
// whether the worker is fine.
func (l *live) pingResult(err error) (int, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err == nil || l.calls > 0 {
		l.pingFailures = 0
		return 0, true
	}
	l.pingFailures++
	return l.pingFailures, false
}

func (l *live) clearPings() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.pingFailures = 0
}

// restartsLeft is how many more times l's worker may die of its own
// within the restart window before the session goes to the error state.
// It forgets restarts older than the window.
func (l *live) restartsLeft(now time.Time) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	recent := l.restarts[:0]
	for _, t := range l.restarts {
		if now.Sub(t) < restartWindow {
			recent = append(recent, t)
		}
	}
	l.restarts = recent
	return restartLimit - len(recent)
}
