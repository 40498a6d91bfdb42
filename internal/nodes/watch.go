package nodes

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"strings"
	"sync"
	"time"
)

// A watch is an idle TCP connection to a node, on which nothing is ever
// sent. A node's process that dies (crash, kill -9, OOM) has its sockets
// closed by its kernel, and so this one: the pool hears of the death at
// once instead of at the next probe, and a call can tell, before it is
// sent, that its node is gone (Gone). A machine that vanishes without
// closing anything is left to the probes.
type watch struct {
	conn net.Conn
	// ended is closed once a read returned: the node closed the
	// connection, or sent something (Node's HTTP server answers an idle
	// connection 408 before it closes it).
	ended chan struct{}
	once  sync.Once
}

// watchDialTimeout bounds opening a watch; a node that slow to accept is
// left to the probes.
const watchDialTimeout = 5 * time.Second

// Addr is the host:port a service URL (ws://, wss://, http://, https://)
// is served on, with the scheme's default port when it names none; "" when
// raw is not such a URL. proxy-server also reserves these addresses from
// the sessions' browsers.
func Addr(raw string) string {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || u.Hostname() == "" {
		return ""
	}
	port := u.Port()
	if port == "" {
		switch strings.ToLower(u.Scheme) {
		case "http", "ws":
			port = "80"
		case "https", "wss":
			port = "443"
		default:
			return ""
		}
	}
	return net.JoinHostPort(u.Hostname(), port)
}

// closed reports whether the node closed the watch: its goroutine saw the
// read end, or a look at the socket without waiting (peekClosed) finds its
// end already there, so that a close the kernel has delivered counts even
// before the goroutine has run.
func (w *watch) closed() bool {
	select {
	case <-w.ended:
		return true
	default:
	}
	return peekClosed(w.conn)
}

func (w *watch) close() {
	w.once.Do(func() { _ = w.conn.Close() })
}

// watchAll opens a watch on every up node that has none. Run calls it
// after each round of probes.
func (p *Pool) watchAll(ctx context.Context) {
	p.eachNode(func(n *node) { p.watchNode(ctx, n) })
}

// minWatchLife is how long a watch must have lived for its node to be
// watched again as soon as a probe finds it up after closing it. Servers
// close idle connections (Node's HTTP server after its headers timeout, a
// minute): such a node is watched again at once, leaving next to no time
// in which its death would go unheard until the next probe. A server that
// closes them at once waits for the next round of probes, so that it
// costs a probe per interval rather than a loop.
const minWatchLife = time.Second

// watchNode opens a watch on n unless it is not up, has one, or Run is not
// running with ctx.
func (p *Pool) watchNode(ctx context.Context, n *node) {
	p.mu.Lock()
	if p.life != ctx || !n.up || n.watch != nil || n.dialling {
		p.mu.Unlock()
		return
	}
	n.dialling = true
	p.mu.Unlock()
	var conn net.Conn
	err := fmt.Errorf("endpoint %s names no host and port", n.ep.Masked())
	if addr := Addr(n.ep.URL); addr != "" {
		d := net.Dialer{Timeout: watchDialTimeout}
		conn, err = d.DialContext(ctx, "tcp", addr)
	}
	p.mu.Lock()
	n.dialling = false
	if err != nil || ctx.Err() != nil || p.life != ctx || !n.up {
		p.mu.Unlock()
		if conn != nil {
			_ = conn.Close()
		}
		if err != nil && ctx.Err() == nil {
			p.log.Debug("browser node watch not opened; probes only", "node", n.ep.ID, "err", err)
		}
		return
	}
	w := &watch{conn: conn, ended: make(chan struct{})}
	n.watch = w
	p.watches.Add(1)
	p.mu.Unlock()
	p.log.Debug("browser node watched", "node", n.ep.ID, "local", conn.LocalAddr().String())
	opened := p.clock.Now()
	go func() {
		defer p.watches.Done()
		var b [1]byte
		_, _ = conn.Read(b[:])
		close(w.ended)
		if ctx.Err() != nil {
			return
		}
		p.log.Debug("browser node closed its watch", "node", n.ep.ID, "local", conn.LocalAddr().String())
		p.mu.Lock()
		current := n.watch == w
		p.mu.Unlock()
		if current {
			// Closed by the node, not by us: find out now whether it is
			// still there. (A call that found the watch closed first has
			// probed already.)
			p.probe(ctx, n)
		}
		if p.clock.Now().Sub(opened) >= minWatchLife {
			p.watchNode(ctx, n)
		}
	}()
}

// startWatches keeps watches until ctx ends (or endWatches), opening one
// on every up node now.
func (p *Pool) startWatches(ctx context.Context) {
	p.mu.Lock()
	p.life = ctx
	p.mu.Unlock()
	p.watchAll(ctx)
}

// endWatches closes every watch and waits for their goroutines.
func (p *Pool) endWatches() {
	p.mu.Lock()
	p.life = nil
	for _, n := range p.nodes {
		if n.watch != nil {
			n.watch.close()
			n.watch = nil
		}
	}
	p.mu.Unlock()
	p.watches.Wait()
}

// Gone reports whether the node id is known to be gone now: down, or its
// watch closed by the node and a probe made now that does not find it up.
// The session layer asks before it sends a call to a worker on the node: a
// call that finds its node gone never reached a browser, so it can be run
// on a worker placed elsewhere. A node merely suspect (a probe timed out,
// fewer than DownAfter in a row) is not gone.
func (p *Pool) Gone(ctx context.Context, id string) bool {
	n := p.find(id)
	if n == nil {
		return false
	}
	p.mu.Lock()
	up, w := n.up, n.watch
	p.mu.Unlock()
	if !up {
		return true
	}
	if w == nil || !w.closed() {
		return false
	}
	p.probe(ctx, n)
	p.mu.Lock()
	defer p.mu.Unlock()
	return !n.up
}
