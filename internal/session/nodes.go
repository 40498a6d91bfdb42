package session

import (
	"context"
	"errors"
	"fmt"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
)

// placed is a worker that runs on a browser node.
type placed interface{ Node() string }

// nodeOf is the browser node w runs on; "" for the server's own browser.
func nodeOf(w Worker) string {
	if p, ok := w.(placed); ok {
		return p.Node()
	}
	return ""
}

// MoveOff moves every live session whose worker is on the browser node to
// another node: a suspend (its state saved, its worker stopped) then a
// resume (a worker placed elsewhere, given the state). Calls in flight
// finish first; a session that cannot be moved stays suspended, with its
// state, and comes back on its next call. Spare workers on the node go.
func (m *Manager) MoveOff(ctx context.Context, node string) (int, error) {
	if err := m.checkOpen(); err != nil {
		return 0, err
	}
	if m.pool.drop(func(w Worker) bool { return nodeOf(w) == node }) > 0 {
		m.pool.wake() // the filler replaces them where placement now puts workers
	}
	var on []*live
	for _, l := range m.reg.all() {
		if nodeOf(l.currentWorker()) == node {
			on = append(on, l)
		}
	}
	moved := 0
	var errs []error
	for _, l := range on {
		if err := l.lock(ctx); err != nil {
			errs = append(errs, fmt.Errorf("session %s: %w", l.id, err))
			continue
		}
		if l.retired || nodeOf(l.worker) != node {
			l.unlock()
			continue
		}
		m.suspendLocked(ctx, l, "node draining")
		l.unlock()
		if _, _, err := m.ResumeSession(ctx, l.id); err != nil {
			errs = append(errs, fmt.Errorf("session %s stays suspended: %w", l.id, err))
			continue
		}
		recordEvent(m.store, m.log, m.clock.Now(), l.id, proxy.EventMoved, "off browser node "+node)
		moved++
	}
	m.log.Info("sessions moved off a browser node", "node", node, "moved", moved, "failed", len(errs))
	return moved, errors.Join(errs...)
}
