package proxy

import (
	"context"
	"time"
)

// NodeState is a browser node's state.
type NodeState string

// Browser node states: up takes new sessions; down does not answer its
// probes (its sessions move elsewhere); draining answers but takes nothing
// new while its sessions move off.
const (
	NodeUp       NodeState = "up"
	NodeDown     NodeState = "down"
	NodeDraining NodeState = "draining"
)

// Node is one remote Playwright browser server that sessions are placed on
// (PROXY_BROWSER_ENDPOINTS).
type Node struct {
	ID string `json:"id"`
	// Endpoint is the node's address with its credentials masked.
	Endpoint string    `json:"endpoint"`
	State    NodeState `json:"state"`
	Sessions int       `json:"sessions"`
	Capacity int       `json:"capacity"`
	// Failures counts the node's failed probes since the server started.
	Failures int64 `json:"failures"`
	// Error says why the node is down.
	Error     string    `json:"error,omitempty"`
	CheckedAt time.Time `json:"checked_at,omitzero"`
	// Browser is the engine the node serves: chromium, firefox or webkit.
	Browser string `json:"browser,omitempty"`
}

// NodeService lists the browser nodes and takes them out of placement and
// back. Without PROXY_BROWSER_ENDPOINTS there are none: sessions run on the
// server's own browser.
type NodeService interface {
	ListNodes(ctx context.Context) ([]Node, error)
	// GetNode returns one node (NODE_NOT_FOUND when unknown).
	GetNode(ctx context.Context, id string) (*Node, error)
	// DrainNode places nothing new on the node and moves its sessions to
	// other nodes with their state; it returns how many moved.
	DrainNode(ctx context.Context, id string) (n *Node, moved int, err error)
	// UndrainNode puts the node back in placement.
	UndrainNode(ctx context.Context, id string) (*Node, error)
}
