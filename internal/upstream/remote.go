package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/answer"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/nodes"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/worker"
)

// RemoteBrowser is a Playwright browser server a worker connects to.
type RemoteBrowser struct {
	URL    string
	Header http.Header
}

// placeOnNode leases room on a browser node for one worker and points cfg at
// it. The lease goes back when the worker ends (trackNode).
func (h *Host) placeOnNode(ctx context.Context, cfg WorkerConfig) (WorkerConfig, *nodes.Lease, error) {
	lease, err := h.cfg.Nodes.Place(ctx, cfg.Browser)
	if err != nil {
		return cfg, nil, placementError{err}
	}
	ep := lease.Endpoint()
	cfg.Remote = &RemoteBrowser{URL: ep.URL, Header: ep.Header}
	cfg.PlaywrightEndpoint, cfg.CDPEndpoint = "", ""
	return cfg, lease, nil
}

// trackNode holds w's lease until w ends, and stops w when its node goes
// down: like a worker whose shared browser died, it cannot serve a call
// without it, and its exit is what the session layer restores elsewhere.
// false means the host is closed.
func (h *Host) trackNode(w *Worker, lease *nodes.Lease) bool {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		lease.Release()
		return false
	}
	w.nodePlace = h.placedOn(lease.Node())
	lost := h.nodeLostLocked(w.node)
	h.bg.Add(1)
	h.mu.Unlock()
	go func() {
		defer h.bg.Done()
		defer lease.Release()
		select {
		case <-w.Done():
			return
		case <-lost:
		}
		h.log.Warn("browser node down; stopping a worker placed on it", "node", w.node, "worker_pid", w.PID())
		w.lostBrowser.Store(true)
		ctx, cancel := context.WithTimeout(context.Background(), watchStopTimeout)
		defer cancel()
		_ = w.Close(ctx)
	}()
	return true
}

// placedOn is the place of a session on node, with its checks: gone
// reports whether the node is known gone (a probe only when there is no
// recent word), down probes it now and reports whether it is down.
func (h *Host) placedOn(node string) nodePlace {
	pool := h.cfg.Nodes
	return nodePlace{
		node:     node,
		nodeGone: func(ctx context.Context) bool { return pool.Gone(ctx, node) },
		nodeDown: func(ctx context.Context) bool {
			if err := pool.Check(ctx, node); err != nil {
				return false
			}
			n, err := pool.Get(node)
			return err == nil && n.State == proxy.NodeDown
		},
	}
}

// nodeLostChan is closed once node goes down (nodeDown); nil once the host
// is closed.
func (h *Host) nodeLostChan(node string) <-chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil
	}
	return h.nodeLostLocked(node)
}

// nodeLostLocked is nodeLostChan with h.mu held and the host open.
func (h *Host) nodeLostLocked(node string) chan struct{} {
	lost := h.nodeLost[node]
	if lost == nil {
		lost = make(chan struct{})
		h.nodeLost[node] = lost
	}
	return lost
}

// nodeDown stops every worker on the node id (the pool calls it when the
// node stops answering).
func (h *Host) nodeDown(id string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if lost := h.nodeLost[id]; lost != nil {
		close(lost)
		delete(h.nodeLost, id)
	}
}

// placementError is placement's refusal (every node full or down, or the
// wait for room cut short): trying again at once cannot help, and it says
// nothing about whether workers start. It unwraps to the pool's own error,
// a *proxy.Error the session layer answers with as it is.
type placementError struct{ err error }

func (e placementError) Error() string { return e.err.Error() }
func (e placementError) Unwrap() error { return e.err }

func isPlacement(err error) bool {
	var pe placementError
	return errors.As(err, &pe)
}

// PlacementRefusal returns the pool's answer when err is a placement's
// refusal: MAX_SESSIONS_REACHED with every node full, UPSTREAM_UNAVAILABLE
// with none up. Any other error, a worker's exit included, is not one.
func PlacementRefusal(err error) (*proxy.Error, bool) {
	var pe placementError
	if !errors.As(err, &pe) {
		return nil, false
	}
	var refused *proxy.Error
	if errors.As(pe.err, &refused) {
		return refused, true
	}
	return nil, false
}

// checkNodes is nil while a browser node is up; else it says why none is.
func (h *Host) checkNodes() error {
	var why []string
	for _, n := range h.cfg.Nodes.List() {
		if n.State == proxy.NodeUp || n.State == proxy.NodeDraining {
			return nil
		}
		why = append(why, n.ID+": "+n.Error)
	}
	return fmt.Errorf("no browser node is up (%s)", strings.Join(why, "; "))
}

// nodePlace is the browser node a session's browser is on, a worker's or a
// hosted session's alike: the node and its checks (Host.placedOn), all set
// before the session is handed out, never changed after. The zero value is
// the local browser, where every check passes.
type nodePlace struct {
	node               string
	nodeGone, nodeDown func(context.Context) bool
}

// Node is the id of the browser node; "" for the local browser.
func (p *nodePlace) Node() string { return p.node }

// goneErr is what a request gets instead of being sent when the node is
// known gone; lost is set, so that the session's end counts as no crash of
// its own.
func (p *nodePlace) goneErr(ctx context.Context, lost *atomic.Bool) error {
	if p.nodeGone == nil || !p.nodeGone(ctx) {
		return nil
	}
	lost.Store(true)
	return &workerExitedError{cause: fmt.Errorf("%w: %w", worker.ErrNotDelivered, worker.ErrNodeDown), code: proxy.Errorf(proxy.EUNAVAILABLE, "the worker's browser node is gone")}
}

// callErr is a call's error, said to be the node's when the session was
// stopped because its node went down, during the call.
func (p *nodePlace) callErr(err error, lost *atomic.Bool) error {
	if p.node != "" && lost.Load() && errors.Is(err, worker.ErrWorkerExited) && !errors.Is(err, worker.ErrNodeDown) {
		return fmt.Errorf("%w: %w", worker.ErrNodeDown, err)
	}
	return err
}

// downUnder reports whether a call's answer says its browser connection
// went with the node, the node probed now: a node that dies under a call
// leaves an answer, not an error. lost is set then.
func (p *nodePlace) downUnder(ctx context.Context, res json.RawMessage, lost *atomic.Bool) bool {
	if p.nodeDown == nil || !lostRemote(res) || !p.nodeDown(ctx) {
		return false
	}
	lost.Store(true)
	return true
}

// remoteLost are what Playwright answers when the connection to a remote
// browser is gone, or cannot be opened.
var remoteLost = []string{
	"WebSocket error",
	"Target page, context or browser has been closed",
	"Browser has been closed",
	"browser has disconnected",
	"Connection closed",
}

// lostRemote reports whether a tool's answer says its browser connection is
// gone: the one failure a worker on a browser node shows when the node dies,
// since the worker itself lives on.
func lostRemote(raw []byte) bool {
	p, err := answer.Parse(raw)
	if err != nil || !p.IsError {
		return false
	}
	for _, s := range remoteLost {
		if strings.Contains(p.ErrorText, s) {
			return true
		}
	}
	return false
}
