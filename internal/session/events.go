package session

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
)

// eventWriteTimeout bounds the write of one session event.
const eventWriteTimeout = 5 * time.Second

// recordEvent writes one event of a session's life for its timeline. A
// failure is logged, never returned: the event repeats what the log line
// beside it says, and must not fail what it reports.
func recordEvent(st Store, log *slog.Logger, at time.Time, id, kind, detail string) {
	ctx, cancel := context.WithTimeout(context.Background(), eventWriteTimeout)
	defer cancel()
	if err := st.AddSessionEvent(ctx, proxy.SessionEvent{SessionID: id, At: at.UTC(), Kind: kind, Detail: detail}); err != nil {
		log.Warn("recording a session event", "session_id", id, "kind", kind, "err", err)
	}
}

// workerDetail names w, and its browser node when it has one.
func workerDetail(w Worker) string {
	if node := nodeOf(w); node != "" {
		return fmt.Sprintf("worker %d on node %s", w.PID(), node)
	}
	return fmt.Sprintf("worker %d", w.PID())
}
