package session

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/clock"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/upstream"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/worker"
)

// pool is the warm pool: spare workers started ahead, so that a create does
// not wait for a process start, each pinged while it waits so that none
// that hangs is handed out. Every worker a session gets comes through get,
// which also learns upstream's tool list from the first one.
type pool struct {
	size        int           // spares kept ready, Options.WarmPool
	handOutPing time.Duration // Options.handOutPing
	spawner     Spawner
	log         *slog.Logger
	stats       *stats
	clock       clock.Clock // times the respawn backoff

	ready  chan Worker
	refill chan struct{} // wakes the filler

	mu     sync.Mutex
	closed bool         // Shutdown began: returned workers are stopped
	tools  []proxy.Tool // upstream's, from the first worker started
	// spares are the workers in ready, with their pings. A worker is in
	// spares before it enters ready and leaves it when taken out: whoever
	// removes it owns it.
	spares map[Worker]*spare
	// spareLost: the ping loop dropped a spare that is still in ready.
	spareLost atomic.Bool
}

func newPool(size int, handOutPing time.Duration, spawner Spawner, stats *stats, clk clock.Clock, log *slog.Logger) *pool {
	return &pool{size: size, handOutPing: handOutPing, spawner: spawner, log: log, stats: stats, clock: clk,
		ready: make(chan Worker, max(size, 1)), refill: make(chan struct{}, 1), spares: make(map[Worker]*spare)}
}

// close makes put stop the workers it is given instead of keeping them.
func (p *pool) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
}

// drain takes every spare out of ready, for the caller to stop.
func (p *pool) drain() []Worker {
	var ws []Worker
	for {
		select {
		case w := <-p.ready:
			ws = append(ws, w)
		default:
			return ws
		}
	}
}

// knownTools is upstream's tool list, nil until a worker has started.
func (p *pool) knownTools() []proxy.Tool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.tools
}

// fill keeps size initialised workers ready so that a create does not
// wait for a process start.
func (p *pool) fill(ctx context.Context) {
	backoff := time.Second
	for {
		p.dropDead()
		if len(p.ready) < p.size {
			w, err := p.spawner.Spawn(ctx)
			if err != nil {
				if ctx.Err() != nil {
					return
				}
				p.log.Warn("warm pool spawn failed", "err", err, "retry_in", backoff)
				if clock.Sleep(ctx, p.clock, backoff) != nil {
					return
				}
				backoff = min(backoff*2, 30*time.Second)
				continue
			}
			backoff = time.Second
			p.noteTools(w)
			p.add(w)
			select {
			case p.ready <- w:
				p.log.Debug("spare worker ready", "worker_pid", w.PID())
				continue
			default:
				p.take(w)
				closeWorker(w, p.log)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-p.refill:
		}
	}
}

// get returns a ready worker of the shape: for the zero shape a warm one
// that answers a ping if any, else a fresh spawn. Spares have the server's
// defaults, so a shaped worker is always started for its session.
func (p *pool) get(ctx context.Context, shape upstream.Shape) (Worker, error) {
	if !shape.IsZero() {
		return p.spawn(upstream.WithShape(ctx, shape))
	}
	for {
		select {
		case w := <-p.ready:
			p.wake()
			if !p.take(w) {
				continue // its pings failed: the ping loop is killing it
			}
			select {
			case <-w.Done():
				continue // died while waiting in the pool
			default:
			}
			if p.answers(ctx, w) {
				return w, nil
			}
			if err := ctx.Err(); err != nil {
				p.put(w) // the caller gave up; the worker may be fine
				return nil, fmt.Errorf("waiting for a warm browser worker: %w", err)
			}
			continue
		default:
		}
		p.wake()
		return p.spawn(ctx)
	}
}

// spawn starts a worker for a session now.
func (p *pool) spawn(ctx context.Context) (Worker, error) {
	w, err := p.spawner.Spawn(ctx)
	if refused, ok := upstream.PlacementRefusal(err); ok {
		return nil, refused // every browser node full, none up, or none of the engine
	}
	if err != nil {
		return nil, &proxy.Error{Code: proxy.EUNAVAILABLE, Message: "starting a browser worker failed: " + err.Error(), Retryable: true,
			Suggestion: "Retry in a few seconds; if it persists check GET /health."}
	}
	p.noteTools(w)
	return w, nil
}

func (p *pool) wake() {
	select {
	case p.refill <- struct{}{}:
	default:
	}
}

func (p *pool) noteTools(w Worker) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.tools == nil {
		p.tools = w.Tools()
	}
}

// put returns an unused worker to the pool, or stops it when full.
func (p *pool) put(w Worker) {
	p.mu.Lock()
	down := p.closed
	p.mu.Unlock()
	if !down {
		p.add(w)
		select {
		case p.ready <- w:
			return
		default:
			p.take(w)
		}
	}
	closeWorker(w, p.log)
}

// spare is the ping record of a worker in the warm pool.
type spare struct {
	pinging  bool
	failures int
}

// add records w as a spare; call it before w enters the pool.
func (p *pool) add(w Worker) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.spares[w] = &spare{}
}

// take claims w, a spare: false means another owner (the ping loop
// killing it) claimed it first.
func (p *pool) take(w Worker) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	_, ok := p.spares[w]
	delete(p.spares, w)
	return ok
}

// toPing marks the spares whose last ping is over as pinging.
func (p *pool) toPing() []Worker {
	p.mu.Lock()
	defer p.mu.Unlock()
	var ws []Worker
	for w, s := range p.spares {
		if !s.pinging {
			s.pinging = true
			ws = append(ws, w)
		}
	}
	return ws
}

// pingSpare pings a spare in the pool. One that exited, or failed
// pingFailLimit pings in a row, is taken out of the spares, killed and
// replaced: a create must never get it. A spare handed out meanwhile is
// its session's now, and the result is dropped.
func (p *pool) pingSpare(w Worker, timeout time.Duration) {
	var err error
	select {
	case <-w.Done():
		err = worker.ErrWorkerExited
	default:
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		err = w.Ping(ctx)
		cancel()
	}
	exited := false
	select {
	case <-w.Done():
		exited = true
	default:
	}
	p.mu.Lock()
	s, ok := p.spares[w]
	if !ok {
		p.mu.Unlock()
		return
	}
	s.pinging = false
	if err == nil {
		s.failures = 0
		p.mu.Unlock()
		return
	}
	s.failures++
	failures := s.failures
	drop := exited || failures >= pingFailLimit
	if drop {
		delete(p.spares, w)
	}
	p.mu.Unlock()
	switch {
	case exited:
		p.log.Warn("spare worker exited; replacing it", "worker_pid", w.PID())
		closeWorker(w, p.log) // reaps it and removes its output dir
	case drop:
		p.log.Error("spare worker does not answer pings; killing it", "worker_pid", w.PID(), "failures", failures, "err", err)
		p.stats.hung.Add(1)
		killWorker(w, p.log)
	default:
		p.log.Warn("spare worker ping failed", "worker_pid", w.PID(), "failures", failures, "err", err)
		return
	}
	p.spareLost.Store(true)
	p.wake() // the filler drops it from the pool and starts another
}

// dropDead takes the spares that have exited (killed by the ping
// loop, or crashed) out of the pool, so that the filler replaces them
// instead of counting them as ready. Live ones go back. It runs only once
// the ping loop lost a spare: while the live ones are out, a create would
// find the pool empty.
func (p *pool) dropDead() {
	if !p.spareLost.Swap(false) {
		return
	}
	p.drop(func(w Worker) bool {
		select {
		case <-w.Done():
			return true
		default:
			return false
		}
	})
}

// drop stops the spares match picks (closeWorker reaps a dead one and
// removes its output dir) and puts the others back; it returns how many it
// stopped.
func (p *pool) drop(match func(Worker) bool) int {
	n := 0
	for range len(p.ready) {
		var w Worker
		select {
		case w = <-p.ready:
		default:
			return n
		}
		if match(w) {
			if p.take(w) {
				closeWorker(w, p.log)
				n++
			}
			continue
		}
		select {
		case p.ready <- w:
		default: // refilled meanwhile by put: one spare too many
			if p.take(w) {
				closeWorker(w, p.log)
			}
		}
	}
	return n
}

// handOutPingTimeout bounds the ping a warm worker must answer before a
// session gets it: an idle worker answers at once, and a create should
// rather spawn a new one than hand out one that hangs.
const handOutPingTimeout = time.Second

// answers reports whether w, a spare about to be handed out, answers a
// ping within handOutPingTimeout; one that does not is killed. A failure
// because ctx ended says nothing about w, which is left alone.
func (p *pool) answers(ctx context.Context, w Worker) bool {
	timeout := p.handOutPing
	if timeout <= 0 {
		timeout = handOutPingTimeout
	}
	pctx, cancel := context.WithTimeout(ctx, timeout)
	err := w.Ping(pctx)
	cancel()
	if err == nil {
		return true
	}
	if ctx.Err() != nil {
		return false
	}
	p.log.Warn("warm worker did not answer its ping when handed out; killing it", "worker_pid", w.PID(), "err", err)
	p.stats.hung.Add(1)
	killWorker(w, p.log)
	return false
}
