package nodes

import (
	"context"
	"net"
	"testing"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/clock"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/clock/clocktest"
)

// watchedPool makes a one-node pool whose node is a real listener on
// 127.0.0.1, probed by a fake prober, and opens its watches as Run does
// first; it returns the node's end of the watch.
func watchedPool(t *testing.T) (*Pool, *fakeProber, net.Conn, chan string) {
	t.Helper()
	p, fp, conn, downs, _ := watchedPoolOn(t, nil)
	return p, fp, conn, downs
}

// watchedPoolOn is watchedPool on the clock c (nil: the real one); it
// returns the node's listener too.
func watchedPoolOn(t *testing.T, c clock.Clock) (*Pool, *fakeProber, net.Conn, chan string, net.Listener) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	fp := &fakeProber{errs: map[string]error{}}
	p, err := New([]Endpoint{{ID: "n1", URL: "ws://" + ln.Addr().String() + "/pw", Capacity: 2}}, Config{Prober: fp, Clock: c})
	if err != nil {
		t.Fatal(err)
	}
	downs := make(chan string, 4)
	p.OnDown(func(id string) { downs <- id })
	p.ProbeAll(context.Background())
	ctx, cancel := context.WithCancel(context.Background())
	p.startWatches(ctx) // the watch is open once this returns
	t.Cleanup(func() { cancel(); p.endWatches() })
	conn, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return p, fp, conn, downs, ln
}

// TestWatchReopensAfterAnIdleClose: a node that closes a watch that had
// lived a while (as servers close idle connections) and still answers is
// watched again at once, and its death is heard on the new watch.
func TestWatchReopensAfterAnIdleClose(t *testing.T) {
	c := clocktest.New()
	p, fp, conn, downs, ln := watchedPoolOn(t, c)
	c.Advance(minWatchLife)
	conn.Close() // the server's idle timeout; the node still answers
	again, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if n, _ := p.Get("n1"); n.State != proxy.NodeUp {
		t.Fatalf("node after an idle close = %+v, want up", n)
	}
	fp.set("n1", errRefused)
	again.Close()
	if id := <-downs; id != "n1" {
		t.Fatalf("OnDown(%q), want n1", id)
	}
}

func TestWatchNoticesANodeThatDies(t *testing.T) {
	p, fp, conn, downs := watchedPool(t)
	fp.set("n1", errRefused)
	conn.Close() // what the node's kernel does when its process dies
	if id := <-downs; id != "n1" {
		t.Fatalf("OnDown(%q), want n1", id)
	}
	if n, _ := p.Get("n1"); n.State != proxy.NodeDown {
		t.Errorf("node after its watch closed and its port refused = %+v, want down", n)
	}
	if !p.Gone(context.Background(), "n1") {
		t.Error("Gone = false for a node that is down")
	}
}

func TestGone(t *testing.T) {
	tests := []struct {
		name     string
		closed   bool  // the node closes its watch
		probe    error // what a probe then finds
		wantGone bool
		want     proxy.NodeState
	}{
		{"watch open: not gone, whatever a probe would say", false, errRefused, false, proxy.NodeUp},
		{"watch closed, port refused", true, errRefused, true, proxy.NodeDown},
		{"watch closed, node still answers", true, nil, false, proxy.NodeUp},
		{"watch closed, probe times out: suspect, not gone", true, errTimeout, false, proxy.NodeUp},
		{"watch closed, probe reset by the dying node: suspect, not gone", true, errReset, false, proxy.NodeUp},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, fp, conn, _ := watchedPool(t)
			fp.set("n1", tt.probe)
			if tt.closed {
				conn.Close()
			}
			if got := p.Gone(context.Background(), "n1"); got != tt.wantGone {
				t.Errorf("Gone = %v, want %v", got, tt.wantGone)
			}
			if n, _ := p.Get("n1"); n.State != tt.want {
				t.Errorf("node = %+v, want %s", n, tt.want)
			}
			if tt.closed && tt.probe != nil && !Decisive(tt.probe) {
				// Not sure yet: the next call probes again, and a
				// refusal then is sure.
				fp.set("n1", errRefused)
				if !p.Gone(context.Background(), "n1") {
					t.Error("Gone = false once the closed watch's node refuses")
				}
			}
		})
	}
	p, _ := newTestPool(t, 0, 1)
	if p.Gone(context.Background(), "nope") {
		t.Error("Gone = true for a node the pool does not hold")
	}
}

// TestPeekClosed: a close the kernel has delivered is seen at once, with
// no goroutine reading the socket.
func TestPeekClosed(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	client, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	server, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	if peekClosed(client) {
		t.Fatal("peekClosed = true on an open connection")
	}
	server.Close()
	if !peekClosed(client) {
		t.Error("peekClosed = false once the other end closed")
	}
}
