package liveview

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"sync"
)

// clickSlop is how far (CSS px) a press and its release may be apart and
// still be a click rather than a drag.
const clickSlop = 5

// recorder turns a holder's input into the actions the session's events
// say: "click on button 'Sign in'", "typed 13 characters", "pressed
// Enter", "scrolled". It counts typed characters and never keeps them.
type recorder struct {
	action func(ctx context.Context, lease, detail string)

	mu sync.Mutex
	// typedN characters typed under typedLease, not recorded yet;
	// typedSinceTick says some came since the last tick.
	typedN         int
	typedLease     string
	typedSinceTick bool
	// pressed is the last press, until its release.
	pressed *press
	// scrolling: the last action was a scroll (a burst is recorded once).
	scrolling bool
}

type press struct {
	x, y float64
	desc string
}

// typed counts n characters typed; they are recorded as one action when
// another action comes, typing pauses for a tick, control ends, or the
// viewer leaves.
func (r *recorder) typed(ctx context.Context, lease string, n int) {
	r.mu.Lock()
	if r.typedN > 0 && r.typedLease != lease {
		r.flushLocked(ctx)
	}
	r.typedN += n
	r.typedLease = lease
	r.typedSinceTick = true
	r.scrolling = false
	r.mu.Unlock()
}

// done records one action, after the typing before it.
func (r *recorder) done(ctx context.Context, lease, detail string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.flushLocked(ctx)
	r.scrolling = false
	r.action(ctx, lease, detail)
}

// mouse records a click (a press and a release near it) on what was at
// the press, a drag, or the first scroll of a burst.
func (r *recorder) mouse(ctx context.Context, lease, event string, x, y float64, desc string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch event {
	case "pressed":
		r.flushLocked(ctx)
		r.scrolling = false
		r.pressed = &press{x: x, y: y, desc: desc}
	case "released":
		p := r.pressed
		r.pressed = nil
		if p == nil {
			return
		}
		switch {
		case math.Hypot(x-p.x, y-p.y) > clickSlop:
			r.action(ctx, lease, fmt.Sprintf("dragged from %s to %s", point(p.x, p.y), point(x, y)))
		case p.desc != "":
			r.action(ctx, lease, "click on "+p.desc)
		default:
			r.action(ctx, lease, "click at "+point(p.x, p.y))
		}
	case "wheel":
		if r.scrolling {
			return
		}
		r.flushLocked(ctx)
		r.scrolling = true
		r.action(ctx, lease, "scrolled")
	}
}

// tick ends a run of typing that had no new character since the last tick.
func (r *recorder) tick(ctx context.Context) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.typedSinceTick {
		r.flushLocked(ctx)
	}
	r.typedSinceTick = false
}

// flushTyped records the typing not recorded yet.
func (r *recorder) flushTyped(ctx context.Context) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.flushLocked(ctx)
}

func (r *recorder) flushLocked(ctx context.Context) {
	if r.typedN == 0 {
		return
	}
	n, lease := r.typedN, r.typedLease
	r.typedN, r.typedLease = 0, ""
	r.action(ctx, lease, "typed "+characters(n))
}

func characters(n int) string {
	if n == 1 {
		return "1 character"
	}
	return strconv.Itoa(n) + " characters"
}

func point(x, y float64) string {
	return fmt.Sprintf("(%d, %d)", int(math.Round(x)), int(math.Round(y)))
}
