package proxyserver

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"time"

	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/session"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/upstream"
)

// worker adapts *upstream.Worker to session.Worker: the session manager
// keeps browser state as opaque JSON, upstream knows its shape.
type worker struct{ *upstream.Worker }

func (w worker) SaveState(ctx context.Context) (json.RawMessage, error) {
	return upstream.SaveStateJSON(ctx, w.Worker)
}

func (w worker) RestoreState(ctx context.Context, state json.RawMessage) error {
	return upstream.RestoreStateJSON(ctx, w.Worker, state)
}

// spawner starts workers on the host, handing out first (the worker Serve
// started before serving) to the first caller that asks for no shape: the
// warm pool's first fill, or with no pool the first session or tool
// discovery. A normal start thus spawns no more workers than without the
// check.
type spawner struct {
	host *upstream.Host
	log  *slog.Logger

	mu    sync.Mutex
	first *upstream.Worker
}

func (s *spawner) Spawn(ctx context.Context) (session.Worker, error) {
	if !upstream.ShapeFrom(ctx).IsZero() {
		w, err := s.host.Spawn(ctx)
		if err != nil {
			return nil, err
		}
		return worker{w}, nil
	}
	if w := s.take(); w != nil {
		select {
		case <-w.Done(): // died waiting (its browser was lost): start another
			s.stop(w)
		default:
			return worker{w}, nil
		}
	}
	w, err := s.host.Spawn(ctx)
	if err != nil {
		return nil, err
	}
	return worker{w}, nil
}

func (s *spawner) take() *upstream.Worker {
	s.mu.Lock()
	defer s.mu.Unlock()
	w := s.first
	s.first = nil
	return w
}

// close stops the first worker if nobody took it.
func (s *spawner) close() {
	if w := s.take(); w != nil {
		s.stop(w)
	}
}

func (s *spawner) stop(w *upstream.Worker) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := w.Close(ctx); err != nil {
		s.log.Warn("stopping an unused worker", "pid", w.PID(), "err", err)
	}
}
