package proxyserver

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/session"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/upstream"
)

// spawner starts sessions' workers on the host (a process each, or a
// session in a session host), handing out first (the one Serve started
// before serving) to the first caller that asks for no shape: the warm
// pool's first fill, or with no pool the first session or tool discovery.
// A normal start thus spawns no more workers than without the check.
type spawner struct {
	host *upstream.Host
	log  *slog.Logger

	mu    sync.Mutex
	first session.Worker
}

func (s *spawner) Spawn(ctx context.Context) (session.Worker, error) {
	if upstream.ShapeFrom(ctx).IsZero() {
		if w := s.take(); w != nil {
			select {
			case <-w.Done(): // died waiting (its browser was lost): start another
				s.stop(w)
			default:
				return w, nil
			}
		}
	}
	return s.host.SpawnSession(ctx)
}

func (s *spawner) take() session.Worker {
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

func (s *spawner) stop(w session.Worker) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := w.Close(ctx); err != nil {
		s.log.Warn("stopping an unused worker", "pid", w.PID(), "err", err)
	}
}
