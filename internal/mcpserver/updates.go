package mcpserver

import (
	"bytes"
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/clock"
)

// Streamable HTTP: mcp-go writes a notification a handler sends on the
// answer of its request (or on the client's GET stream) from a goroutine
// of its own, and drops it when that goroutine takes it just as the
// handler returns: an update sent at the end of a tool call is often
// lost. So /mcp watches what it writes to each client, and a call that
// sent updates returns only once they have been written (or after
// updateWriteWait, when nothing will write them: the client went away).

// updateWriteWait bounds the wait for an update to be written.
const updateWriteWait = 5 * time.Second

// updateMark is how an update notification starts on the wire.
var updateMark = []byte(`"method":"notifications/resources/updated"`)

// updateWrites counts the update notifications written to each MCP
// session, on any of its streams.
type updateWrites struct {
	clock clock.Clock
	mu    sync.Mutex
	chans map[string]chan struct{}
}

func newUpdateWrites(c clock.Clock) *updateWrites {
	return &updateWrites{clock: clock.Or(c), chans: map[string]chan struct{}{}}
}

func (u *updateWrites) of(mcpSessionID string) chan struct{} {
	u.mu.Lock()
	defer u.mu.Unlock()
	ch := u.chans[mcpSessionID]
	if ch == nil {
		// Buffered beyond what one call sends: a write never waits.
		ch = make(chan struct{}, 256)
		u.chans[mcpSessionID] = ch
	}
	return ch
}

// forget drops an ended MCP session.
func (u *updateWrites) forget(mcpSessionID string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	delete(u.chans, mcpSessionID)
}

// wrote counts the updates in p, one write of mcp-go's.
func (u *updateWrites) wrote(mcpSessionID string, p []byte) {
	n := bytes.Count(p, updateMark)
	if n == 0 || mcpSessionID == "" {
		return
	}
	ch := u.of(mcpSessionID)
	for range n {
		select {
		case ch <- struct{}{}:
		default: // nobody is waiting for that many
		}
	}
}

// drain forgets updates written before the ones about to be sent.
func (u *updateWrites) drain(mcpSessionID string) {
	ch := u.of(mcpSessionID)
	for {
		select {
		case <-ch:
		default:
			return
		}
	}
}

// await waits until n updates were written to the MCP session, ctx ends
// or updateWriteWait passes.
func (u *updateWrites) await(ctx context.Context, mcpSessionID string, n int) {
	ch := u.of(mcpSessionID)
	t := u.clock.NewTimer(updateWriteWait)
	defer t.Stop()
	for range n {
		select {
		case <-ch:
		case <-ctx.Done():
			return
		case <-t.C():
			return
		}
	}
}

// watchingResponse counts the updates written to one MCP session.
type watchingResponse struct {
	http.ResponseWriter
	writes *updateWrites
	id     string
}

func (w watchingResponse) Write(p []byte) (int, error) {
	n, err := w.ResponseWriter.Write(p)
	w.writes.wrote(w.id, p)
	return n, err
}

// Flush keeps SSE streaming, which mcp-go detects with http.Flusher.
func (w watchingResponse) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection.
func (w watchingResponse) Unwrap() http.ResponseWriter { return w.ResponseWriter }
