package nodes

import (
	"context"
	"errors"
	"testing"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
)

// fakeMover releases the leases of the sessions it "moves" and places them
// again, as the session layer does.
type fakeMover struct {
	pool   *Pool
	leases map[string][]*Lease
	// seen is the node's state while the sessions moved.
	seen proxy.NodeState
	err  error
}

func (f *fakeMover) MoveOff(ctx context.Context, node string) (int, error) {
	n, _ := f.pool.Get(node)
	f.seen = n.State
	moved := 0
	for _, l := range f.leases[node] {
		l.Release()
		nl, err := f.pool.Place(ctx, "")
		if err != nil {
			return moved, err
		}
		f.leases[nl.Node()] = append(f.leases[nl.Node()], nl)
		moved++
	}
	f.leases[node] = nil
	return moved, f.err
}

func TestServiceDrain(t *testing.T) {
	p, _ := newTestPool(t, 0, 3, 3)
	mv := &fakeMover{pool: p, leases: map[string][]*Lease{}}
	for range 2 {
		l, err := p.Place(context.Background(), "")
		if err != nil {
			t.Fatal(err)
		}
		mv.leases[l.Node()] = append(mv.leases[l.Node()], l)
	}
	svc := Service{Pool: p, Mover: mv}
	n, moved, err := svc.DrainNode(context.Background(), "n1")
	if err != nil {
		t.Fatal(err)
	}
	if mv.seen != proxy.NodeDraining {
		t.Errorf("sessions moved while the node was %s: they could be placed back on it", mv.seen)
	}
	if moved != 1 || n.State != proxy.NodeDraining || n.Sessions != 0 {
		t.Errorf("drain: node %+v, moved %d; want draining, empty, one moved", n, moved)
	}
	if other, _ := p.Get("n2"); other.Sessions != 2 {
		t.Errorf("n2 holds %d, want 2", other.Sessions)
	}
	n, err = svc.UndrainNode(context.Background(), "n1")
	if err != nil || n.State != proxy.NodeUp {
		t.Errorf("undrain: %+v, %v", n, err)
	}

	// A move that fails says so, with the node still draining.
	mv.err = errors.New("session x stays suspended")
	if _, _, err := svc.DrainNode(context.Background(), "n2"); err == nil {
		t.Error("a failed move reported no error")
	}
	if got, _ := svc.GetNode(context.Background(), "n2"); got.State != proxy.NodeDraining {
		t.Errorf("after a failed move n2 is %s, want draining", got.State)
	}
	if _, _, err := svc.DrainNode(context.Background(), "nope"); proxy.ErrorCode(err) != proxy.ENODEMISSING {
		t.Errorf("drain of an unknown node: %v", err)
	}
}
