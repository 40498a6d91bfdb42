package proxyserver

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/upstream"
)

// worker adapts *upstream.Worker to session.Worker: the session manager
// keeps browser state as opaque JSON, upstream knows its shape.
type worker struct{ *upstream.Worker }

func (w worker) SaveState(ctx context.Context) (json.RawMessage, error) {
	s, err := upstream.SaveState(ctx, w.Worker)
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("encoding saved state: %w", err)
	}
	return b, nil
}

func (w worker) RestoreState(ctx context.Context, state json.RawMessage) error {
	var s upstream.SavedState
	if err := json.Unmarshal(state, &s); err != nil {
		return fmt.Errorf("decoding saved state: %w", err)
	}
	return upstream.RestoreState(ctx, w.Worker, &s)
}
