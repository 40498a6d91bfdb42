package mcpserver

import (
	"context"
	"testing"

	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/clock/clocktest"
)

// TestUpdateWritesAwait: a call waits for its updates to be written, and
// for no longer than updateWriteWait when they never are.
func TestUpdateWritesAwait(t *testing.T) {
	note := []byte(`data: {"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"playwright:///page/s/0"}}` + "\n\n")
	tests := []struct {
		name string
		// written are the writes to the session before the wait ends.
		written [][]byte
		advance bool // the clock passes updateWriteWait
	}{
		{"both written in one write", [][]byte{append(append([]byte{}, note...), note...)}, false},
		{"written one by one", [][]byte{note, []byte(`data: {"result":{}}`), note}, false},
		{"never written", nil, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			clk := clocktest.New()
			u := newUpdateWrites(clk)
			u.wrote("s", note) // an earlier update, written before the call sent its own
			u.drain("s")
			done := make(chan struct{})
			go func() {
				defer close(done)
				u.await(context.Background(), "s", 2)
			}()
			clk.WaitForTimer(t, updateWriteWait)
			for i, w := range tc.written {
				select {
				case <-done:
					t.Fatalf("await returned after %d of the writes, before both updates were written", i)
				default:
				}
				u.wrote("s", w)
			}
			if tc.advance {
				select {
				case <-done:
					t.Fatal("await returned with nothing written, before updateWriteWait passed")
				default:
				}
				clk.Advance(updateWriteWait)
			}
			<-done
		})
	}
}
