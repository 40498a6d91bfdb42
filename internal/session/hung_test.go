package session

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
)

// errNoAnswer is a ping that failed: a worker that answers nothing.
var errNoAnswer = errors.New("ping: no answer")

// pingsHang makes every worker sp spawns fail its pings, never answering,
// while the switch it returns is on.
func pingsHang(sp *fakeSpawner) *atomic.Bool {
	var hang atomic.Bool
	sp.prepare = func(w *fakeWorker) {
		w.ping = func(ctx context.Context) error {
			if hang.Load() {
				<-ctx.Done() // a stopped process never answers
				return ctx.Err()
			}
			return nil
		}
	}
	return &hang
}

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

// failAtOnce and hang are the two ways a worker fails a ping.
func failAtOnce(context.Context) error { return errNoAnswer }

func hang(ctx context.Context) error {
	<-ctx.Done() // a stopped process never answers
	return ctx.Err()
}

// TestHungSpareIsKilledAndReplaced: a spare in the warm pool is pinged
// like a session's idle worker; once it has failed its pings it is killed
// (not stopped politely) and another spare takes its place, which the next
// create gets.
func TestHungSpareIsKilledAndReplaced(t *testing.T) {
	ctx := context.Background()
	sp := &fakeSpawner{t: t}
	firstHangs(sp, failAtOnce) // before the pool's first spawn
	m, _ := newManagerWith(t, sp, Options{WarmPool: 1, PingInterval: 5 * time.Millisecond})
	waitFor(t, "the first spare", func() bool { return len(sp.all()) == 1 })
	hung := sp.all()[0]
	waitFor(t, "the hung spare killed", hung.killed.Load)
	waitFor(t, "a second spare in the pool", func() bool { return len(sp.all()) == 2 && len(m.pool.ready) == 1 })
	s, err := m.CreateSession(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := workerOf(t, m, sp, s.ID).pid, sp.all()[1].pid; got != want {
		t.Errorf("create got worker %d, want the new spare %d", got, want)
	}
	if got := m.Stats().WorkersHung; got != 1 {
		t.Errorf("workers hung = %d, want 1", got)
	}
}

// TestHandOutCheckSkipsHungSpare: a spare that does not answer a ping
// when it is handed out (between two rounds of the ping loop, or with the
// loop off) is killed, and the create gets a worker that answers.
func TestHandOutCheckSkipsHungSpare(t *testing.T) {
	tests := []struct {
		name string
		ping func(ctx context.Context) error
	}{
		{"ping fails", failAtOnce},
		{"ping hangs past the hand-out timeout", hang},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			sp := &fakeSpawner{t: t}
			firstHangs(sp, tc.ping) // before the pool's first spawn
			m, _ := newManagerWith(t, sp, Options{WarmPool: 1, handOutPing: 10 * time.Millisecond})
			waitFor(t, "the spare in the pool", func() bool { return len(m.pool.ready) == 1 })
			hung := sp.all()[0]
			s, err := m.CreateSession(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if got := workerOf(t, m, sp, s.ID); got == hung {
				t.Fatalf("create got the spare %d that did not answer its ping", hung.pid)
			}
			if !hung.killed.Load() {
				t.Errorf("the spare that did not answer was not killed (closed: %v)", hung.closed.Load())
			}
			if got := m.Stats().WorkersHung; got != 1 {
				t.Errorf("workers hung = %d, want 1", got)
			}
		})
	}
}

// TestHandOutCheckGivenUpSparesWorker: a create whose caller gives up
// during the hand-out ping says nothing about the spare: it is not killed
// nor counted as hung.
func TestHandOutCheckGivenUpSparesWorker(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	pinged := make(chan struct{})
	var once atomic.Bool
	sp := &fakeSpawner{t: t}
	sp.prepare = func(w *fakeWorker) {
		w.ping = func(pctx context.Context) error {
			if once.CompareAndSwap(false, true) {
				close(pinged)
				<-pctx.Done()
				return pctx.Err()
			}
			return nil
		}
	}
	m, _ := newManagerWith(t, sp, Options{WarmPool: 1}) // after prepare: the pool spawns at once
	waitFor(t, "the spare in the pool", func() bool { return len(m.pool.ready) == 1 })
	spare := sp.all()[0]
	go func() {
		<-pinged
		cancel()
	}()
	if _, err := m.CreateSession(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("create whose caller gave up = %v, want context.Canceled", err)
	}
	if spare.killed.Load() {
		t.Error("the spare was killed because its caller gave up")
	}
	if got := m.Stats().WorkersHung; got != 0 {
		t.Errorf("workers hung = %d, want 0", got)
	}
}

// TestHungSessionWorkerIsKilled: a session worker that failed its pings is
// killed at once (Kill), not stopped politely: Close would wait for a
// worker that reads nothing to act on stdin closing, then on SIGTERM.
func TestHungSessionWorkerIsKilled(t *testing.T) {
	ctx := context.Background()
	sp := &fakeSpawner{t: t}
	firstHangs(sp, failAtOnce) // before the pool's first spawn
	m, _ := newManagerWith(t, sp, Options{PingInterval: 5 * time.Millisecond, restartBackoff: time.Millisecond})
	s, err := m.CreateSession(ctx)
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

// TestHostHangCountsOnce: a session that ends because its session host was
// killed as hung counts one hung worker, and its restart says why; one
// whose own pings killed it first is not counted again when its host is
// found hung too; a host that merely crashed is a crash, not a hang.
func TestHostHangCountsOnce(t *testing.T) {
	tests := []struct {
		name string
		// ownPings: the session's own pings fail until they kill it.
		ownPings, hostHung bool
		wantHung           int64
		wantReason         string
	}{
		{"its host was killed as hung", false, true, 1, "its session host did not answer its pings"},
		{"its own pings killed it, its host hung too", true, true, 1, "its session host did not answer its pings"},
		{"its host crashed", false, false, 0, "its worker exited"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			m, sp, db := newManager(t, Options{PingInterval: 10 * time.Millisecond, pingTimeout: 20 * time.Millisecond, restartBackoff: time.Millisecond})
			hang := pingsHang(sp)
			s, err := m.CreateSession(ctx)
			if err != nil {
				t.Fatal(err)
			}
			navigate(t, m, s.ID, "http://127.0.0.1/p")
			w := workerOf(t, m, sp, s.ID)
			w.hostHung.Store(tt.hostHung)
			if tt.ownPings {
				hang.Store(true)
				waitFor(t, "the session's own pings killing it", func() bool { return w.closed.Load() })
				hang.Store(false)
			} else {
				w.die()
			}
			waitFor(t, "the restart", func() bool { return m.Stats().WorkerRestarts == 1 })
			if got := m.Stats(); got.WorkersHung != tt.wantHung || got.WorkerCrashes != 1 {
				t.Errorf("stats = %+v, want %d hung, 1 crash", got, tt.wantHung)
			}
			// The restart is counted before its event is written.
			var got []string
			waitFor(t, "the restart's event", func() bool {
				evs, err := db.ListSessionEvents(ctx, s.ID)
				if err != nil {
					t.Fatal(err)
				}
				got = eventDetails(evs, proxy.EventRestarted)
				return len(got) > 0
			})
			if len(got) != 1 || !strings.Contains(got[0], tt.wantReason) {
				t.Errorf("restart events %q, want one saying %q", got, tt.wantReason)
			}
		})
	}
}
