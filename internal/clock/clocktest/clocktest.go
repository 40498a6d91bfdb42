// Package clocktest is a clock.Clock that stands still until the test
// advances it, so a test of a grace period or a backoff takes no real time.
package clocktest

import (
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/clock"
)

// Clock is a fake clock.Clock. Its timers fire only in Advance. Safe for
// concurrent use.
type Clock struct {
	mu       sync.Mutex
	now      time.Time
	advanced time.Duration
	timers   []*timer // pending, in creation order
	// changed is closed, and replaced, whenever timers changes: how
	// WaitForTimers learns that the code under test reached a wait.
	changed chan struct{}
}

// New returns a Clock standing at a fixed instant.
func New() *Clock {
	return &Clock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), changed: make(chan struct{})}
}

var _ clock.Clock = (*Clock)(nil)

// Now is the clock's current time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advanced is how far Advance has moved the clock in all.
func (c *Clock) Advanced() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.advanced
}

// NewTimer returns a timer that fires once the clock reaches Now()+d; one
// with d ≤ 0 has fired already.
func (c *Clock) NewTimer(d time.Duration) clock.Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &timer{c: c, at: c.now.Add(d), d: d, ch: make(chan time.Time, 1)}
	if d <= 0 {
		t.ch <- c.now
		return t
	}
	c.timers = append(c.timers, t)
	c.changedLocked()
	return t
}

// Advance moves the clock d forward, firing every timer that comes due,
// earliest first.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	c.advanced += d
	due := slices.DeleteFunc(slices.Clone(c.timers), func(t *timer) bool { return t.at.After(c.now) })
	if len(due) == 0 {
		return
	}
	slices.SortStableFunc(due, func(a, b *timer) int { return a.at.Compare(b.at) })
	c.timers = slices.DeleteFunc(c.timers, func(t *timer) bool { return !t.at.After(c.now) })
	for _, t := range due {
		t.ch <- c.now
	}
	c.changedLocked()
}

// Timers are the durations of the pending timers, in the order they were
// made.
func (c *Clock) Timers() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.pendingLocked()
}

func (c *Clock) pendingLocked() []time.Duration {
	out := make([]time.Duration, len(c.timers))
	for i, t := range c.timers {
		out[i] = t.d
	}
	return out
}

// WaitForTimers waits until exactly n timers are pending, i.e. the code
// under test is blocked on the clock, and fails t after 10 s of real time.
func (c *Clock) WaitForTimers(t testing.TB, n int) {
	t.Helper()
	c.waitFor(t, func(ds []time.Duration) bool { return len(ds) == n }, "%d pending timers", n)
}

// WaitForTimer waits until a timer of duration d is pending, and fails t
// after 10 s of real time.
func (c *Clock) WaitForTimer(t testing.TB, d time.Duration) {
	t.Helper()
	c.waitFor(t, func(ds []time.Duration) bool { return slices.Contains(ds, d) }, "a pending %v timer", d)
}

func (c *Clock) waitFor(t testing.TB, ok func([]time.Duration) bool, format string, args ...any) {
	t.Helper()
	giveUp := time.NewTimer(10 * time.Second)
	defer giveUp.Stop()
	for {
		c.mu.Lock()
		ds, changed := c.pendingLocked(), c.changed
		c.mu.Unlock()
		if ok(ds) {
			return
		}
		select {
		case <-changed:
		case <-giveUp.C:
			t.Fatalf("clocktest: no "+format+" after 10s; pending: %v", append(args, ds)...)
		}
	}
}

func (c *Clock) changedLocked() {
	close(c.changed)
	c.changed = make(chan struct{})
}

type timer struct {
	c  *Clock
	at time.Time
	d  time.Duration
	ch chan time.Time
}

func (t *timer) C() <-chan time.Time { return t.ch }

func (t *timer) Stop() bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	i := slices.Index(t.c.timers, t)
	if i < 0 {
		return false
	}
	t.c.timers = slices.Delete(t.c.timers, i, i+1)
	t.c.changedLocked()
	return true
}
