package upstream

import (
	"errors"
	"fmt"
	"sync"
	"time"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
)

const (
	// defaultBreakerThreshold is how many Spawns in a row must fail (each
	// after its retries) before the breaker opens.
	defaultBreakerThreshold = 3
	// defaultBreakerCooldown is how long an open breaker fails spawns fast
	// before it lets one trial through.
	defaultBreakerCooldown = 30 * time.Second
)

// ErrCircuitOpen is matched (errors.Is) by Spawn's error while the circuit
// breaker is open: worker starts kept failing, so Spawn fails fast instead
// of stacking up more doomed node processes.
var ErrCircuitOpen = errors.New("upstream circuit breaker is open")

// CircuitOpenError is Spawn's error while the breaker is open. It matches
// ErrCircuitOpen, and proxy.ErrorCode gives UPSTREAM_UNAVAILABLE.
type CircuitOpenError struct {
	// Failures is how many Spawns failed in a row.
	Failures int
	// Last is the failure that opened the breaker.
	Last error
	// RetryAt is when a trial Spawn is let through; zero while a trial is
	// in flight.
	RetryAt time.Time
	// now is when the error was made, for the "in 12s" of the message.
	now time.Time
}

func (e *CircuitOpenError) Error() string {
	when := "a trial worker start is in progress; retry shortly"
	if !e.RetryAt.IsZero() {
		if wait := e.RetryAt.Sub(e.now); wait > 0 {
			when = fmt.Sprintf("the next start is tried at %s (in %s)", e.RetryAt.Format(time.TimeOnly), wait.Round(time.Second))
		} else {
			when = "the next start is tried now"
		}
	}
	// The last error goes last: it may end with a worker's stderr.
	return fmt.Sprintf("%v: %d worker starts failed in a row; %s; last error: %v", ErrCircuitOpen, e.Failures, when, e.Last)
}

// Unwrap does not include Last: a caller testing the open breaker's error
// for, say, ErrWorkerExited must not mistake it for a worker that died now.
func (e *CircuitOpenError) Unwrap() []error {
	return []error{ErrCircuitOpen, &proxy.Error{Code: proxy.EUNAVAILABLE, Message: "upstream circuit breaker open", Retryable: true}}
}

// breaker is the Host's circuit breaker over Spawn: closed (spawns go
// ahead), open after threshold counted failures in a row (spawns fail fast
// until the cooldown ends), then half-open (one trial spawn goes ahead; its
// success closes the breaker, its failure opens it for another cooldown).
type breaker struct {
	threshold int
	cooldown  time.Duration
	now       func() time.Time // tests replace it

	mu        sync.Mutex
	failures  int       // counted failures in a row
	lastErr   error     // the latest counted failure
	openUntil time.Time // zero while closed
	trial     bool      // the half-open trial is in flight
}

func newBreaker(threshold int, cooldown time.Duration) *breaker {
	if threshold <= 0 {
		threshold = defaultBreakerThreshold
	}
	if cooldown <= 0 {
		cooldown = defaultBreakerCooldown
	}
	return &breaker{threshold: threshold, cooldown: cooldown, now: time.Now}
}

// allow says whether a spawn may go ahead. trial is true for the one
// half-open attempt; its outcome must be reported with done or abandon.
func (b *breaker) allow() (trial bool, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.openUntil.IsZero() {
		return false, nil
	}
	now := b.now()
	if now.Before(b.openUntil) || b.trial {
		return false, b.openErr(now)
	}
	b.trial = true
	return true, nil
}

// done records the outcome of a spawn that allow let through: err nil is a
// success. It reports whether the breaker changed state, for the log.
func (b *breaker) done(trial bool, err error) (opened, closed bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if trial {
		b.trial = false
	}
	wasOpen := !b.openUntil.IsZero()
	if err == nil {
		// Any success proves workers can start again, even one let through
		// before the breaker opened.
		b.failures, b.lastErr, b.openUntil = 0, nil, time.Time{}
		return false, wasOpen
	}
	b.failures++
	b.lastErr = err
	// A failure that was not the trial, finishing while the breaker is
	// already open, must not push the trial further out.
	if trial || (!wasOpen && b.failures >= b.threshold) {
		b.openUntil = b.now().Add(b.cooldown)
		return true, false
	}
	return false, false
}

// abandon ends a spawn that failed for reasons that say nothing about the
// upstream (the caller gave up, the host is closing): it is not counted,
// and a trial's slot is freed for the next caller.
func (b *breaker) abandon(trial bool) {
	if !trial {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.trial = false
}

// check is nil while the breaker is closed, else why it is open and until
// when. Half-open counts as open: the last thing known is a failure.
func (b *breaker) check() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.openUntil.IsZero() {
		return nil
	}
	return b.openErr(b.now())
}

// openErr must be called with mu held.
func (b *breaker) openErr(now time.Time) *CircuitOpenError {
	e := &CircuitOpenError{Failures: b.failures, Last: b.lastErr, RetryAt: b.openUntil, now: now}
	if b.trial {
		e.RetryAt = time.Time{}
	}
	return e
}
