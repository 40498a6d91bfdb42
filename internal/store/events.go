package store

import (
	"context"
	"fmt"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
)

// AddSessionEvent records one event of a session's life.
func (db *DB) AddSessionEvent(ctx context.Context, e proxy.SessionEvent) error {
	if e.SessionID == "" || e.Kind == "" {
		return proxy.Errorf(proxy.EINVALID, "a session event needs a session and a kind")
	}
	_, err := db.exec(ctx, WriteEvent, `INSERT INTO session_events (session_id, at, kind, detail) VALUES (?, ?, ?, ?)`,
		e.SessionID, formatTime(e.At), e.Kind, e.Detail)
	if err != nil {
		return fmt.Errorf("store: session event %s of %s: %w", e.Kind, e.SessionID, err)
	}
	return nil
}

// ListSessionEvents returns a session's events in the order they happened;
// empty, never nil, for a session without any (or an unknown one).
func (db *DB) ListSessionEvents(ctx context.Context, sessionID string) ([]proxy.SessionEvent, error) {
	rows, err := db.r.QueryContext(ctx,
		`SELECT at, kind, detail FROM session_events WHERE session_id = ? ORDER BY at, id`, sessionID)
	if err != nil {
		return nil, fmt.Errorf("store: events of %s: %w", sessionID, err)
	}
	defer rows.Close()
	out := []proxy.SessionEvent{}
	for rows.Next() {
		e := proxy.SessionEvent{SessionID: sessionID}
		var at string
		if err := rows.Scan(&at, &e.Kind, &e.Detail); err != nil {
			return nil, fmt.Errorf("store: events of %s: %w", sessionID, err)
		}
		if e.At, err = parseTime(at); err != nil {
			return nil, fmt.Errorf("store: events of %s: %w", sessionID, err)
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: events of %s: %w", sessionID, err)
	}
	return out, nil
}
