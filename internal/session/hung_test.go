package session

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"
)

// errNoAnswer is a ping that failed: a worker that answers nothing.
var errNoAnswer = errors.New("ping: no answer")

// firstHangs makes the spawner's first worker fail its pings with how; the
// ones after it answer.
func firstHangs(sp *fakeSpawner, how func(ctx context.Context) error) {
	var n atomic.Int32
	sp.prepare = func(w *fakeWorker) {
		if n.Add(1) == 1 {
			w.ping = how
		}
	}
}

// failAtOnce is a ping that fails.
func failAtOnce(context.Context) error { return errNoAnswer }

// TestHungSessionWorkerIsKilled: a session worker that failed its pings is
// killed at once (Kill), not stopped politely: Close would wait for a
// worker that reads nothing to act on stdin closing, then on SIGTERM.
func TestHungSessionWorkerIsKilled(t *testing.T) {
	ctx := context.Background()
	m, sp, _ := newManager(t, Options{PingInterval: 5 * time.Millisecond, restartBackoff: time.Millisecond})
	firstHangs(sp, failAtOnce)
	s, err := m.Create(ctx)
	if err != nil {
		t.Fatal(err)
	}
	hung := workerOf(t, m, sp, s.ID)
	waitFor(t, "the hung worker stopped", hung.closed.Load)
	if !hung.killed.Load() {
		t.Error("the hung worker was stopped with Close, not killed")
	}
	if res := navigate(t, m, s.ID, "http://127.0.0.1/q"); !res.Metadata.Restored {
		t.Error("call after the replacement: restored = false")
	}
}
