package e2etest

import (
	"bytes"
	"context"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/proctest"
)

// BrowserNode is a browser node (proctest.Node) a test started; the test's
// cleanup kills it.
type BrowserNode struct {
	*proctest.Node
	t   *testing.T
	bin string
	// addr is where it listens, kept for Restart.
	addr string
	// tmp is its TMPDIR, removed at cleanup with whatever a kill left.
	tmp string
}

// StartBrowserNode starts a browser node of bin (a built proxy-server) on
// 127.0.0.1:port and waits until it listens.
func StartBrowserNode(t *testing.T, bin, port string) *BrowserNode {
	t.Helper()
	// Short: Chromium's sockets go below it.
	tmp, err := os.MkdirTemp("", "pwn")
	if err != nil {
		t.Fatal(err)
	}
	n := &BrowserNode{t: t, bin: bin, addr: "127.0.0.1:" + port, tmp: tmp}
	t.Cleanup(func() {
		if n.Node != nil {
			n.Kill()
		}
		_ = os.RemoveAll(tmp)
	})
	n.start()
	return n
}

func (n *BrowserNode) start() {
	n.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var log SyncBuffer
	node, err := proctest.StartNode(ctx, n.bin, ProjectRoot(n.t), n.addr, n.tmp, &log)
	if err != nil {
		n.t.Fatalf("%v:\n%s", err, log.String())
	}
	n.Node = node
}

// Restart starts the node again on the same address, after a Kill.
func (n *BrowserNode) Restart() {
	n.t.Helper()
	n.Kill()
	n.start()
}

// SyncBuffer is a bytes.Buffer safe for a writer and a reader at once (a
// log a test reads while the code under test writes it).
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
