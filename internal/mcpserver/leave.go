package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"sync"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
)

// CloseSessions closes every session the client of ctx owns that is not
// closed yet, at once, and returns how many it closed: what a client that
// leaves takes with it. Their history stays readable over the HTTP API. A
// session that is gone already (closed meanwhile) is not an error.
func CloseSessions(ctx context.Context, b proxy.SessionService) (int, error) {
	ss, err := b.ListSessions(ctx)
	if err != nil {
		return 0, fmt.Errorf("listing the client's sessions: %w", err)
	}
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		closed int
		errs   []error
	)
	for _, s := range ss {
		if s.State == proxy.SessionClosed {
			continue
		}
		wg.Go(func() {
			err := b.CloseSession(ctx, s.ID)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				closed++
			case proxy.ErrorCode(err) != proxy.ESESSIONMISSING:
				errs = append(errs, fmt.Errorf("closing session %s: %w", s.ID, err))
			}
		})
	}
	wg.Wait()
	return closed, errors.Join(errs...)
}
