//go:build unix

package upstream

import (
	"errors"
	"strings"
	"testing"
	"time"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
)

// brStep is one thing that happens to the breaker: a spawn (named, so that
// spawns can overlap) begins or ends, or the clock moves.
type brStep struct {
	op   string // begin, ok, fail, abandon, wait
	id   string
	wait time.Duration
	// For begin: what allow must say.
	blocked, trial bool
	// After the step: whether check reports the breaker open.
	open bool
}

func brBegin(id string, open bool) brStep { return brStep{op: "begin", id: id, open: open} }
func brBlocked(id string) brStep          { return brStep{op: "begin", id: id, blocked: true, open: true} }
func brTrial(id string) brStep            { return brStep{op: "begin", id: id, trial: true, open: true} }
func brOk(id string) brStep               { return brStep{op: "ok", id: id} }
func brFail(id string, open bool) brStep  { return brStep{op: "fail", id: id, open: open} }
func brAbandon(id string, open bool) brStep {
	return brStep{op: "abandon", id: id, open: open}
}
func brWait(d time.Duration, open bool) brStep { return brStep{op: "wait", wait: d, open: open} }

// failN is n spawns that begin and fail one after the other, the last of
// which leaves the breaker open or not.
func brFailN(n int, open bool) []brStep {
	var out []brStep
	for i := range n {
		id := string(rune('a' + i))
		out = append(out, brBegin(id, false), brFail(id, open && i == n-1))
	}
	return out
}

func brSteps(parts ...any) []brStep {
	var out []brStep
	for _, p := range parts {
		switch p := p.(type) {
		case brStep:
			out = append(out, p)
		case []brStep:
			out = append(out, p...)
		}
	}
	return out
}

func TestBreaker(t *testing.T) {
	const cooldown = 30 * time.Second
	tests := []struct {
		name  string
		steps []brStep
	}{
		{"opens after three failures in a row", brSteps(
			brFailN(3, true), brBlocked("d"))},
		{"a success resets the count", brSteps(
			brFailN(2, false), brBegin("s", false), brOk("s"),
			brFailN(2, false), brBegin("x", false), brFail("x", true))},
		{"fails fast for the whole cooldown", brSteps(
			brFailN(3, true), brWait(cooldown-time.Second, true), brBlocked("d"))},
		{"half-open trial success closes", brSteps(
			brFailN(3, true), brWait(cooldown, true), brTrial("t"), brOk("t"),
			brBegin("n", false), brFail("n", false))},
		{"half-open trial failure reopens for a full cooldown", brSteps(
			brFailN(3, true), brWait(cooldown, true), brTrial("t"), brFail("t", true),
			brWait(cooldown-time.Second, true), brBlocked("d"),
			brWait(time.Second, true), brTrial("t2"))},
		{"one trial at a time", brSteps(
			brFailN(3, true), brWait(cooldown, true), brTrial("t"), brBlocked("u"),
			brAbandon("t", true), brTrial("t2"), brOk("t2"))},
		{"abandoned spawns are not counted", brSteps(
			brBegin("a", false), brAbandon("a", false), brBegin("b", false), brAbandon("b", false),
			brBegin("c", false), brAbandon("c", false), brBegin("d", false), brAbandon("d", false))},
		{"a late failure does not push the trial out", brSteps(
			brBegin("late", false), brFailN(3, true), brWait(cooldown-time.Second, true),
			brFail("late", true), brWait(time.Second, true), brTrial("t"))},
		{"a late success closes it", brSteps(
			brBegin("late", false), brFailN(3, true), brOk("late"), brBegin("n", false))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
			b := newBreaker(0, 0)
			b.now = func() time.Time { return now }
			trials := map[string]bool{}
			for i, s := range tt.steps {
				switch s.op {
				case "begin":
					isTrial, err := b.allow()
					if (err != nil) != s.blocked || isTrial != s.trial {
						t.Fatalf("step %d: allow(%s) = trial %v, %v; want blocked %v, trial %v", i, s.id, isTrial, err, s.blocked, s.trial)
					}
					trials[s.id] = isTrial
				case "ok":
					b.done(trials[s.id], nil)
				case "fail":
					b.done(trials[s.id], errors.New("boom "+s.id))
				case "abandon":
					b.abandon(trials[s.id])
				case "wait":
					now = now.Add(s.wait)
				}
				if err := b.check(); (err != nil) != s.open {
					t.Fatalf("step %d (%s %s): check = %v, want open %v", i, s.op, s.id, err, s.open)
				}
			}
		})
	}
}

func TestCircuitOpenError(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	b := newBreaker(2, 10*time.Second)
	b.now = func() time.Time { return now }
	b.done(false, errors.New("first"))
	b.done(false, errors.New("node: not found"))
	now = now.Add(4 * time.Second)
	_, err := b.allow()
	if !errors.Is(err, ErrCircuitOpen) {
		t.Fatalf("allow = %v, want ErrCircuitOpen", err)
	}
	if code := proxy.ErrorCode(err); code != proxy.EUNAVAILABLE {
		t.Errorf("ErrorCode = %s, want %s", code, proxy.EUNAVAILABLE)
	}
	var e *CircuitOpenError
	if !errors.As(err, &e) || e.Failures != 2 || e.Last.Error() != "node: not found" || !e.RetryAt.Equal(now.Add(6*time.Second)) {
		t.Errorf("error = %#v", e)
	}
	for _, want := range []string{"circuit breaker is open", "2 worker starts failed in a row", "last error: node: not found", "03:04:15 (in 6s)"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message %q lacks %q", err, want)
		}
	}
	if err := b.check(); err == nil || err.Error() != e.Error() {
		t.Errorf("check = %v, want the same reason as Spawn", err)
	}
	now = now.Add(6 * time.Second)
	if isTrial, err := b.allow(); !isTrial || err != nil {
		t.Fatalf("after the cooldown allow = %v, %v; want the trial", isTrial, err)
	}
	if err := b.check(); err == nil || !strings.Contains(err.Error(), "trial worker start is in progress") {
		t.Errorf("check during the trial = %v", err)
	}
}
