package clocktest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/clock"
)

func TestAdvanceFiresDueTimers(t *testing.T) {
	tests := []struct {
		name     string
		timers   []time.Duration
		advance  []time.Duration
		fired    []bool
		stopped  int // index of a timer stopped before advancing; -1 for none
		pending  []time.Duration
		advanced time.Duration
	}{
		{"none due", []time.Duration{time.Second}, []time.Duration{time.Second - 1}, []bool{false}, -1, []time.Duration{time.Second}, time.Second - 1},
		{"due exactly", []time.Duration{time.Second}, []time.Duration{time.Second}, []bool{true}, -1, []time.Duration{}, time.Second},
		{"some due", []time.Duration{3 * time.Second, time.Second, 2 * time.Second}, []time.Duration{time.Second, time.Second}, []bool{false, true, true}, -1, []time.Duration{3 * time.Second}, 2 * time.Second},
		{"stopped never fires", []time.Duration{time.Second, time.Second}, []time.Duration{time.Hour}, []bool{false, true}, 0, []time.Duration{}, time.Hour},
		{"zero fires at once", []time.Duration{0}, nil, []bool{true}, -1, []time.Duration{}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := New()
			start := c.Now()
			var timers []clock.Timer
			for _, d := range tt.timers {
				timers = append(timers, c.NewTimer(d))
			}
			if tt.stopped >= 0 && !timers[tt.stopped].Stop() {
				t.Error("Stop of a pending timer = false")
			}
			for _, d := range tt.advance {
				c.Advance(d)
			}
			for i, tm := range timers {
				select {
				case at := <-tm.C():
					if !tt.fired[i] {
						t.Errorf("timer %d fired", i)
					}
					if want := start.Add(tt.timers[i]); at.Before(want) {
						t.Errorf("timer %d fired at %v, before its deadline %v", i, at, want)
					}
				default:
					if tt.fired[i] {
						t.Errorf("timer %d did not fire", i)
					}
				}
			}
			if diff := cmp.Diff(tt.pending, c.Timers()); diff != "" {
				t.Errorf("pending timers (-want +got):\n%s", diff)
			}
			if got := c.Advanced(); got != tt.advanced {
				t.Errorf("Advanced = %v, want %v", got, tt.advanced)
			}
			if got := c.Now().Sub(start); got != tt.advanced {
				t.Errorf("Now moved %v, want %v", got, tt.advanced)
			}
		})
	}
}

func TestWaitForTimersSeesABlockedSleep(t *testing.T) {
	c := New()
	done := make(chan error, 1)
	go func() { done <- clock.Sleep(context.Background(), c, time.Minute) }()
	c.WaitForTimer(t, time.Minute)
	c.WaitForTimers(t, 1)
	c.Advance(time.Minute)
	if err := <-done; err != nil {
		t.Fatalf("Sleep = %v", err)
	}
	c.WaitForTimers(t, 0)
}

func TestSleepEndsWithContext(t *testing.T) {
	c := New()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- clock.Sleep(ctx, c, time.Minute) }()
	c.WaitForTimers(t, 1)
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Sleep = %v, want context.Canceled", err)
	}
	c.WaitForTimers(t, 0)
}
