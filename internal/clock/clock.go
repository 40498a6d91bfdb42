// Package clock is the time source of the proxy's own waits (stop grace
// periods, relaunch and retry backoffs, poll intervals), so that tests can
// move it forward instead of sleeping through it. A real process's own
// start-up or exit is never timed by it.
package clock

import (
	"context"
	"time"
)

// Clock tells the time and makes timers. Real is the production one;
// clocktest.Clock is one a test advances by hand.
type Clock interface {
	Now() time.Time
	NewTimer(d time.Duration) Timer
}

// Timer is a one-shot timer of a Clock, as time.Timer is of the real one.
type Timer interface {
	// C delivers the time once the timer fires.
	C() <-chan time.Time
	// Stop prevents the timer from firing; false if it already fired or
	// was stopped.
	Stop() bool
}

// Real is the wall clock.
type Real struct{}

// Now is time.Now.
func (Real) Now() time.Time { return time.Now() }

// NewTimer is time.NewTimer.
func (Real) NewTimer(d time.Duration) Timer { return realTimer{time.NewTimer(d)} }

type realTimer struct{ t *time.Timer }

func (r realTimer) C() <-chan time.Time { return r.t.C }
func (r realTimer) Stop() bool          { return r.t.Stop() }

// Or is c, or Real when c is nil: what a config's zero Clock means.
func Or(c Clock) Clock {
	if c == nil {
		return Real{}
	}
	return c
}

// Sleep waits d on c, or until ctx ends, whichever is first; it returns
// ctx.Err() in the latter case.
func Sleep(ctx context.Context, c Clock, d time.Duration) error {
	t := c.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C():
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
