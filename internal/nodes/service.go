package nodes

import (
	"context"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
)

// Mover moves every session off a node, each with its saved state, onto
// the nodes placement picks: the session layer.
type Mover interface {
	MoveOff(ctx context.Context, node string) (moved int, err error)
}

// Service is the pool as the HTTP API serves it.
type Service struct {
	Pool  *Pool
	Mover Mover
}

var _ proxy.NodeService = Service{}

// ListNodes implements proxy.NodeService.
func (s Service) ListNodes(context.Context) ([]proxy.Node, error) { return s.Pool.List(), nil }

// GetNode implements proxy.NodeService.
func (s Service) GetNode(_ context.Context, id string) (*proxy.Node, error) {
	n, err := s.Pool.Get(id)
	if err != nil {
		return nil, err
	}
	return &n, nil
}

// DrainNode implements proxy.NodeService: the node leaves placement first,
// so that no session moved off it can be placed back on it.
func (s Service) DrainNode(ctx context.Context, id string) (*proxy.Node, int, error) {
	if _, err := s.Pool.SetDraining(id, true); err != nil {
		return nil, 0, err
	}
	moved, err := s.Mover.MoveOff(ctx, id)
	n, gerr := s.Pool.Get(id)
	if err != nil {
		return &n, moved, err
	}
	return &n, moved, gerr
}

// UndrainNode implements proxy.NodeService.
func (s Service) UndrainNode(_ context.Context, id string) (*proxy.Node, error) {
	n, err := s.Pool.SetDraining(id, false)
	if err != nil {
		return nil, err
	}
	return &n, nil
}
