// Package nodes owns the pool of remote Playwright browser servers that
// sessions are placed on when PROXY_BROWSER_ENDPOINTS is set: what each node
// is (its endpoint, masked when shown), whether it answers (probes on an
// interval), how many sessions it holds against its capacity, and which
// node a new session goes to. It never starts or stops a worker and never
// sees a session: the session layer holds a Lease per worker and moves
// sessions when it hears a node went down or is draining.
package nodes

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/clock"
)

// unknownNode is the error for a node id the pool does not hold.
func unknownNode(id string) error {
	return &proxy.Error{Code: proxy.ENODEMISSING, Message: fmt.Sprintf("no browser node %q", id), Details: map[string]any{"node": id}}
}

// Config configures a Pool.
type Config struct {
	Prober Prober
	// Interval is the time between two probes of a node; 0 means 10 s.
	Interval time.Duration
	// QueueTimeout is how long Place waits for room when every node is
	// full or down; 0 means 30 s.
	QueueTimeout time.Duration
	// DownAfter is how many probes in a row must fail before an up node
	// is down; 0 means DefaultDownAfter. A failure that says the node is
	// not there or will not serve us (Decisive) needs only one: a probe
	// that times out on a loaded machine says nothing of the kind, and
	// taking a node down stops every worker on it.
	DownAfter int
	Logger    *slog.Logger
	// Clock times the probe interval and the wait for room; nil is the
	// real one.
	Clock clock.Clock
}

// DefaultDownAfter is Config.DownAfter's default.
const DefaultDownAfter = 3

// Decisive reports whether a probe's failure takes an up node down at
// once: the connection was refused (nothing listens: the node's process
// is gone), or the node answered that it will not serve us (another
// Playwright version, credentials refused). Anything else (a timeout, a
// reset, a 5xx) may be a passing hitch and counts toward DownAfter.
func Decisive(err error) bool {
	return errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, ErrVersionMismatch) ||
		errors.Is(err, ErrUnauthorized) || errors.Is(err, ErrEndpoint)
}

// Pool holds the configured nodes. Its methods are safe for concurrent use.
type Pool struct {
	cfg   Config
	log   *slog.Logger
	clock clock.Clock

	mu    sync.Mutex
	nodes []*node
	// room is closed (and replaced) whenever a node may have room it had
	// not: a lease released, a node up, a node undrained.
	room chan struct{}
	// down is called, outside mu, with the id of a node that went down.
	down []func(id string)
	// life is Run's context while it runs (nil otherwise): watches are
	// kept only then, and end with it.
	life    context.Context
	watches sync.WaitGroup
}

type node struct {
	ep       Endpoint
	up       bool
	draining bool
	leases   int
	failures int64
	// inARow counts the probes that failed since the last that did not.
	inARow  int
	err     error
	checked time.Time
	// watch is an idle connection to the node that its death closes
	// (see watch.go); nil when none is open.
	watch    *watch
	dialling bool
}

func (n *node) state() proxy.NodeState {
	switch {
	case n.draining:
		return proxy.NodeDraining
	case !n.up:
		return proxy.NodeDown
	}
	return proxy.NodeUp
}

// New returns a pool of eps, every node down until its first probe.
func New(eps []Endpoint, cfg Config) (*Pool, error) {
	if len(eps) == 0 {
		return nil, fmt.Errorf("%w: no endpoints", ErrEndpoint)
	}
	if cfg.Prober == nil {
		return nil, errors.New("nodes: no prober")
	}
	if cfg.Interval <= 0 {
		cfg.Interval = 10 * time.Second
	}
	if cfg.QueueTimeout <= 0 {
		cfg.QueueTimeout = 30 * time.Second
	}
	if cfg.DownAfter <= 0 {
		cfg.DownAfter = DefaultDownAfter
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	p := &Pool{cfg: cfg, log: log.With("component", "nodes"), clock: clock.Or(cfg.Clock), room: make(chan struct{})}
	ids := map[string]bool{}
	for _, ep := range eps {
		if ids[ep.ID] {
			return nil, fmt.Errorf("%w: two nodes named %q", ErrEndpoint, ep.ID)
		}
		ids[ep.ID] = true
		p.nodes = append(p.nodes, &node{ep: ep, err: errors.New("not probed yet")})
	}
	return p, nil
}

// OnDown registers f to be called with the id of every node that goes
// from up to down. Call it before Run.
func (p *Pool) OnDown(f func(id string)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = append(p.down, f)
}

// Run probes every node every Interval until ctx ends, and keeps a watch
// on every node that is up, so that a node whose process dies is noticed
// at once rather than at the next probe. The first probe is the caller's
// (ProbeAll), made before anything is placed. Run returns once its watches
// are closed.
func (p *Pool) Run(ctx context.Context) {
	p.startWatches(ctx)
	defer p.endWatches()
	for {
		if clock.Sleep(ctx, p.clock, p.cfg.Interval) != nil {
			return
		}
		p.ProbeAll(ctx)
		p.watchAll(ctx)
	}
}

// ProbeAll probes every node at once and waits for the answers.
func (p *Pool) ProbeAll(ctx context.Context) {
	p.eachNode(func(n *node) { p.probe(ctx, n) })
}

// eachNode runs f on every node at once and waits for them all.
func (p *Pool) eachNode(f func(n *node)) {
	var wg sync.WaitGroup
	for _, n := range p.snapshotNodes() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f(n)
		}()
	}
	wg.Wait()
}

// Check probes the node id now: the session layer calls it when a worker
// on that node lost its connection, so a dead node is noticed before the
// next interval.
func (p *Pool) Check(ctx context.Context, id string) error {
	n := p.find(id)
	if n == nil {
		return unknownNode(id)
	}
	p.probe(ctx, n)
	return nil
}

func (p *Pool) snapshotNodes() []*node {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]*node(nil), p.nodes...)
}

func (p *Pool) find(id string) *node {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, n := range p.nodes {
		if n.ep.ID == id {
			return n
		}
	}
	return nil
}

func (p *Pool) probe(ctx context.Context, n *node) {
	// Whether the watch was closed before the probe began: only then does
	// an answer say that the node merely closed an idle connection (an
	// answer sent just before the node died proves nothing of the kind).
	p.mu.Lock()
	w0 := n.watch
	p.mu.Unlock()
	closedBefore := w0 != nil && w0.closed()
	err := p.cfg.Prober.Probe(ctx, n.ep)
	if ctx.Err() != nil {
		return // shutting down: says nothing about the node
	}
	p.mu.Lock()
	wasUp := n.up
	n.err, n.checked = err, p.clock.Now()
	if err == nil {
		n.up, n.inARow = true, 0
	} else {
		n.failures++
		n.inARow++
		if Decisive(err) || n.inARow >= p.cfg.DownAfter {
			n.up = false
		}
	}
	if w := n.watch; w != nil && (!n.up || err == nil && w == w0 && closedBefore) {
		// Its news is in (the node is down, or answers and merely closed
		// an idle connection): a later call need not probe for it again.
		// A closed watch on a node whose probe failed but that is not
		// down yet stays, so that each call probes until one is sure: a
		// probe under way when the node died is reset, which proves
		// nothing alone.
		n.watch = nil
		w.close()
	}
	up, inARow, failures := n.up, n.inARow, n.failures
	var notify []func(string)
	if wasUp && !up {
		notify = append(notify, p.down...)
	}
	if !wasUp && up {
		p.wakeLocked()
	}
	p.mu.Unlock()

	switch {
	case wasUp && !up:
		p.log.Warn("browser node down", "node", n.ep.ID, "failures_in_a_row", inARow, "err", err)
	case up && err != nil:
		p.log.Warn("browser node probe failed; still in placement", "node", n.ep.ID, "failures_in_a_row", inARow, "down_after", p.cfg.DownAfter, "err", err)
	case !wasUp && up:
		p.log.Info("browser node up", "node", n.ep.ID, "endpoint", n.ep.Masked())
	case !wasUp && errors.Is(err, ErrVersionMismatch) && failures == 1:
		p.log.Error("browser node refused", "node", n.ep.ID, "err", err)
	}
	for _, f := range notify {
		f(n.ep.ID)
	}
}

// wakeLocked tells every waiting Place to look again. Callers hold mu.
func (p *Pool) wakeLocked() {
	close(p.room)
	p.room = make(chan struct{})
}

// List returns every node, in configuration order.
func (p *Pool) List() []proxy.Node {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]proxy.Node, 0, len(p.nodes))
	for _, n := range p.nodes {
		out = append(out, n.infoLocked())
	}
	return out
}

// Get returns the node id.
func (p *Pool) Get(id string) (proxy.Node, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, n := range p.nodes {
		if n.ep.ID == id {
			return n.infoLocked(), nil
		}
	}
	return proxy.Node{}, unknownNode(id)
}

func (n *node) infoLocked() proxy.Node {
	in := proxy.Node{ID: n.ep.ID, Endpoint: n.ep.Masked(), State: n.state(), Sessions: n.leases, Capacity: n.ep.Capacity, Failures: n.failures, CheckedAt: n.checked, Browser: n.ep.Engine()}
	if n.err != nil {
		// On an up node: its last probe failed, not yet DownAfter in a row.
		in.Error = n.err.Error()
	}
	return in
}

// SetDraining marks the node id draining (nothing new is placed on it) or
// returns it to placement.
func (p *Pool) SetDraining(id string, draining bool) (proxy.Node, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, n := range p.nodes {
		if n.ep.ID == id {
			if n.draining != draining {
				n.draining = draining
				p.log.Info("browser node placement", "node", id, "draining", draining)
				if !draining {
					p.wakeLocked()
				}
			}
			return n.infoLocked(), nil
		}
	}
	return proxy.Node{}, unknownNode(id)
}

// Lease is one worker's place on a node. Release it when the worker ends.
type Lease struct {
	pool *Pool
	node *node
	once sync.Once
}

// Node is the id of the node the lease is on.
func (l *Lease) Node() string { return l.node.ep.ID }

// Endpoint is the node's endpoint, credentials included, for the worker.
func (l *Lease) Endpoint() Endpoint { return l.node.ep }

// Release gives the place back; later calls do nothing.
func (l *Lease) Release() {
	l.once.Do(func() {
		l.pool.mu.Lock()
		l.node.leases--
		l.pool.wakeLocked()
		l.pool.mu.Unlock()
	})
}

// Place leases room for one session on the up, undrained node of the
// browser engine (chromium when "") with the most free capacity (the first
// configured among equals). When there is none it waits up to QueueTimeout
// for room, then fails with MAX_SESSIONS_REACHED when nodes are up but
// full, UPSTREAM_UNAVAILABLE when none is up. No node of that engine at all
// is INVALID_PARAMETERS at once: waiting cannot make one.
func (p *Pool) Place(ctx context.Context, browser string) (*Lease, error) {
	if browser == "" {
		browser = proxy.BrowserChromium
	}
	if err := p.serves(browser); err != nil {
		return nil, err
	}
	timer := p.clock.NewTimer(p.cfg.QueueTimeout)
	defer timer.Stop()
	for {
		p.mu.Lock()
		var best *node
		anyUp := false
		for _, n := range p.nodes {
			if n.state() != proxy.NodeUp || n.ep.Engine() != browser {
				continue
			}
			anyUp = true
			free := n.ep.Capacity - n.leases
			if free > 0 && (best == nil || free > best.ep.Capacity-best.leases) {
				best = n
			}
		}
		if best != nil {
			best.leases++
			p.mu.Unlock()
			return &Lease{pool: p, node: best}, nil
		}
		room := p.room
		p.mu.Unlock()
		select {
		case <-room:
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for room on a browser node: %w", ctx.Err())
		case <-timer.C():
			if !anyUp {
				return nil, p.unavailable(browser)
			}
			return nil, proxy.Errorf(proxy.EMAXSESSIONS, "every %s browser node is full (waited %s for room)", browser, p.cfg.QueueTimeout)
		}
	}
}

// serves refuses an engine no configured node runs, naming the ones that
// are.
func (p *Pool) serves(browser string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	var have []string
	for _, n := range p.nodes {
		if n.ep.Engine() == browser {
			return nil
		}
		if !slices.Contains(have, n.ep.Engine()) {
			have = append(have, n.ep.Engine())
		}
	}
	e := proxy.Errorf(proxy.EINVALID, "no browser node serves %s (the nodes serve %s); add one with #browser=%s in PROXY_BROWSER_ENDPOINTS", browser, strings.Join(have, ", "), browser)
	e.Details = map[string]any{"field": "browser", "browser": browser, "available": have}
	return e
}

func (p *Pool) unavailable(browser string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	why := "no node has answered yet"
	for _, n := range p.nodes {
		if n.err != nil && n.ep.Engine() == browser {
			why = n.ep.ID + ": " + n.err.Error()
			break
		}
	}
	return proxy.Errorf(proxy.EUNAVAILABLE, "no %s browser node is up (%s)", browser, why)
}
