//go:build linux

package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/nodes"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/worker"
)

// TestIntegrationHostOnNodes places sessions on a real browser node, in
// workers of their own and in a session host: the command line of the
// process names no endpoint or credential (a worker gets them in a file gone
// once it started, a session host on its stdin); when the node dies, a call
// in flight answers ErrNodeDown (it may have run: not to be replayed), a
// call made after the node is known gone answers ErrNotDelivered too (it
// never reached a browser), every session on the node is stopped and the
// leases go back.
func TestIntegrationHostOnNodes(t *testing.T) {
	root := realSetup(t)
	site := testSite(t)
	from, err := PlaywrightFrom(DefaultCommand(root))
	if err != nil {
		t.Fatal(err)
	}
	version, err := PlaywrightVersion(from)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name              string
		sessionsPerWorker int
	}{
		{"a worker per session", 1},
		{"sessions in a session host", 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// /hold answers only once the test is over: a navigation to it
			// is a call in flight in the browser for as long as the test
			// wants.
			var holds atomic.Int32
			arrived := make(chan struct{}, 1)
			hold := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path != "/hold" {
					http.NotFound(w, r)
					return
				}
				holds.Add(1)
				arrived <- struct{}{}
				<-r.Context().Done()
			}))
			t.Cleanup(hold.Close)
			node := launchTestBrowser(t, root)
			// Probes run when the test says: what notices the dead node
			// below is the call in flight itself.
			pool, err := nodes.New([]nodes.Endpoint{{ID: "n1", URL: node.PlaywrightEndpoint() + "?token=s3cret", Capacity: 2}},
				nodes.Config{Prober: nodes.HTTPProber{Version: version}, Interval: time.Hour, QueueTimeout: 100 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			pool.ProbeAll(t.Context())
			h := startHost(t, HostConfig{
				Nodes:             pool,
				SessionsPerWorker: tc.sessionsPerWorker,
				Worker:            WorkerConfig{Command: DefaultCommand(root), Logger: testLogger(t)},
				TempDir:           shortTempDir(t),
				Logger:            testLogger(t),
			})
			inFlight, after := spawnPlaced(t, h), spawnPlaced(t, h)
			for _, w := range []placedWorker{inFlight, after} {
				if w.Node() != "n1" {
					t.Errorf("session placed on %q, want n1", w.Node())
				}
				if got := cmdline(w.PID()); strings.Contains(got, "s3cret") || strings.Contains(got, "--endpoint") {
					t.Errorf("command line %q shows the node's endpoint", got)
				}
				call(t, w, "browser_navigate", map[string]string{"url": site.URL + "/blank"})
			}
			if _, hosted := inFlight.(*HostedSession); hosted != (tc.sessionsPerWorker > 1) || (inFlight.PID() == after.PID()) != hosted {
				t.Errorf("sessions in %T, pids %d and %d: want hosted %v, one process for both when hosted", inFlight, inFlight.PID(), after.PID(), tc.sessionsPerWorker > 1)
			}
			if n, _ := pool.Get("n1"); n.Sessions != 2 {
				t.Errorf("node holds %d sessions, want 2", n.Sessions)
			}

			ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
			defer cancel()
			held := make(chan error, 1)
			go func() {
				_, err := inFlight.CallTool(ctx, "browser_navigate", json.RawMessage(`{"url":"`+hold.URL+`/hold"}`))
				held <- err
			}()
			select {
			case <-arrived: // the call is in the browser
			case err := <-held:
				t.Fatalf("navigation to /hold ended before the node died: %v", err)
			}
			node.proc.signalGroup(syscall.SIGKILL)
			<-node.Done()
			err = <-held
			if !errors.Is(err, worker.ErrNodeDown) || errors.Is(err, worker.ErrNotDelivered) {
				t.Errorf("call in flight when the node died: %v, want worker.ErrNodeDown, not worker.ErrNotDelivered", err)
			}
			_, err = after.CallTool(ctx, "browser_snapshot", nil)
			if !errors.Is(err, worker.ErrNodeDown) || !errors.Is(err, worker.ErrNotDelivered) || !errors.Is(err, worker.ErrWorkerExited) {
				t.Errorf("call after the node died: %v, want worker.ErrNodeDown and worker.ErrNotDelivered", err)
			}
			if !after.LostBrowser() {
				t.Error("the session whose node was gone does not say it lost its browser")
			}
			if got := holds.Load(); got != 1 {
				t.Errorf("/hold was asked %d times, want 1: nothing is replayed", got)
			}
			for _, w := range []placedWorker{inFlight, after} {
				select {
				case <-w.Done():
				case <-time.After(10 * time.Second):
					t.Fatalf("session %T of %d on the dead node was not stopped", w, w.PID())
				}
			}
			deadline := time.Now().Add(5 * time.Second)
			for {
				n, _ := pool.Get("n1")
				if n.State == proxy.NodeDown && n.Sessions == 0 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("node after its death: %+v, want down with no sessions", n)
				}
				time.Sleep(20 * time.Millisecond)
			}
			if _, err := h.SpawnSession(t.Context()); proxy.ErrorCode(err) != proxy.EUNAVAILABLE {
				t.Errorf("SpawnSession with no node up: %v, want %s", err, proxy.EUNAVAILABLE)
			}
			if err := h.Check(t.Context()); err == nil || !strings.Contains(err.Error(), "no browser node is up") {
				t.Errorf("Check with no node up: %v", err)
			}
		})
	}
}

// placedWorker is a session on a browser node, in a worker of its own or
// in a session host.
type placedWorker interface {
	worker.Worker
	stateWorker
	Node() string
	LostBrowser() bool
}

// spawnPlaced is spawn through SpawnSession: a worker or a hosted session.
func spawnPlaced(t *testing.T, h *Host) placedWorker {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	w, err := h.SpawnSession(ctx)
	if err != nil {
		t.Fatalf("SpawnSession: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = w.Close(ctx)
	})
	p, ok := w.(placedWorker)
	if !ok {
		t.Fatalf("SpawnSession gave a %T, which says no node", w)
	}
	return p
}

func TestLostRemote(t *testing.T) {
	tests := []struct {
		text string
		want bool
	}{
		{"Error: async initializeServer: WebSocket error: connect ECONNREFUSED 127.0.0.1:39311", true},
		{"Error: page.goto: Target page, context or browser has been closed", true},
		{"Error: browserContext.newPage: Browser has been closed", true},
		{"Error: locator.click: Timeout 5000ms exceeded.", false},
	}
	for _, tt := range tests {
		raw := []byte(`{"content":[{"type":"text","text":"### Error\n` + tt.text + `"}],"isError":true}`)
		if got := lostRemote(raw); got != tt.want {
			t.Errorf("lostRemote(%q) = %v, want %v", tt.text, got, tt.want)
		}
	}
	if lostRemote([]byte(`{"content":[{"type":"text","text":"### Result\nWebSocket error in page text"}]}`)) {
		t.Error("a successful answer that mentions a WebSocket error is not a lost node")
	}
}

func TestPlacementRefusal(t *testing.T) {
	full := proxy.Errorf(proxy.EMAXSESSIONS, "every browser node is full")
	exited := &workerExitedError{cause: errors.New("broken pipe"), code: proxy.Errorf(proxy.EUNAVAILABLE, "upstream worker exited")}
	tests := []struct {
		name string
		err  error
		want string // the refusal's code; "" when err is not one
	}{
		{"every node full", placementError{full}, proxy.EMAXSESSIONS},
		{"wrapped by a spawn", fmt.Errorf("3 attempts failed, last: %w", placementError{full}), proxy.EMAXSESSIONS},
		{"a worker that exited", exited, ""},
		{"waiting cut short", placementError{context.Canceled}, ""},
		{"nil", nil, ""},
	}
	for _, tt := range tests {
		got, ok := PlacementRefusal(tt.err)
		if ok != (tt.want != "") || ok && got.Code != tt.want {
			t.Errorf("%s: PlacementRefusal = %v, %v; want code %q", tt.name, got, ok, tt.want)
		}
	}
}
