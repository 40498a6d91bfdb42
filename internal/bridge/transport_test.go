package bridge

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// echoServer answers every request with its path and counts the TCP
// connections it accepted.
func echoServer(t *testing.T, idleTimeout time.Duration, handler http.HandlerFunc) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var conns atomic.Int32
	if handler == nil {
		handler = func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			fmt.Fprint(w, r.URL.Path)
		}
	}
	srv := httptest.NewUnstartedServer(handler)
	srv.Config.IdleTimeout = idleTimeout
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, &conns
}

func newTestClient(t *testing.T, url string) *Client {
	t.Helper()
	c, err := NewClient(url, "", WithRetryTimeout(0))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := c.http.Transport.(*connTransport); !ok {
		t.Fatalf("an http:// client uses %T, want *connTransport", c.http.Transport)
	}
	return c
}

func mustEcho(t *testing.T, c *Client, ctx context.Context, path string) {
	t.Helper()
	status, data, connected, err := c.send(ctx, http.MethodPost, path, []byte(`{"x":1}`))
	if err != nil || status != http.StatusOK || string(data) != path || !connected {
		t.Fatalf("POST %s = %d %q connected=%v, %v", path, status, data, connected, err)
	}
}

// TestConnTransportKeepsOneConnection: sequential requests share one
// kept-alive connection.
func TestConnTransportKeepsOneConnection(t *testing.T) {
	t.Parallel()
	srv, conns := echoServer(t, 0, nil)
	c := newTestClient(t, srv.URL)
	for i := range 20 {
		mustEcho(t, c, t.Context(), fmt.Sprintf("/r%d", i))
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("20 sequential requests opened %d connections, want 1", n)
	}
}

// TestConnTransportServerClosedIdle: a kept connection the server has
// closed since (idle timeout, restart) costs a dial, never a failed
// request, and the request reaches the server once.
func TestConnTransportServerClosedIdle(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		close func(*httptest.Server)
	}{
		{"closed by the server", func(s *httptest.Server) { s.CloseClientConnections() }},
		{"idle timeout", func(*httptest.Server) { time.Sleep(300 * time.Millisecond) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var hits atomic.Int32
			srv, conns := echoServer(t, 50*time.Millisecond, func(w http.ResponseWriter, r *http.Request) {
				hits.Add(1)
				fmt.Fprint(w, r.URL.Path)
			})
			c := newTestClient(t, srv.URL)
			mustEcho(t, c, t.Context(), "/first")
			tc.close(srv)
			// The close must have reached the client's side of the socket.
			time.Sleep(50 * time.Millisecond)
			mustEcho(t, c, t.Context(), "/second")
			if n := hits.Load(); n != 2 {
				t.Errorf("server handled %d requests, want 2", n)
			}
			if n := conns.Load(); n != 2 {
				t.Errorf("%d connections, want 2 (the closed one replaced)", n)
			}
		})
	}
}

// TestConnTransportCancel: cancelling a request that waits for its answer
// returns at once with the context's error, and the next request works.
func TestConnTransportCancel(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	srv, _ := echoServer(t, 0, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			select {
			case <-release:
			case <-r.Context().Done():
			}
		}
		fmt.Fprint(w, r.URL.Path)
	})
	defer close(release)
	c := newTestClient(t, srv.URL)
	mustEcho(t, c, t.Context(), "/warm")
	ctx, cancel := context.WithCancel(t.Context())
	time.AfterFunc(100*time.Millisecond, cancel)
	start := time.Now()
	_, _, connected, err := c.send(ctx, http.MethodPost, "/slow", []byte(`{}`))
	if !errors.Is(err, context.Canceled) || !connected {
		t.Fatalf("cancelled request: connected=%v err=%v, want context.Canceled once connected", connected, err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("cancelled request returned after %v", d)
	}
	if retrySafe(err, connected) {
		t.Error("a cancelled request is retry-safe; it must not be sent again")
	}
	mustEcho(t, c, t.Context(), "/after")
}

// TestConnTransportConcurrent: requests in flight at once each get their
// own answer.
func TestConnTransportConcurrent(t *testing.T) {
	t.Parallel()
	srv, conns := echoServer(t, 0, func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(time.Millisecond)
		fmt.Fprint(w, r.URL.Path)
	})
	c := newTestClient(t, srv.URL)
	var wg sync.WaitGroup
	errs := make(chan error, 8*25)
	for g := range 8 {
		wg.Go(func() {
			for i := range 25 {
				path := fmt.Sprintf("/g%d/r%d", g, i)
				_, data, _, err := c.send(t.Context(), http.MethodPost, path, []byte(`{}`))
				if err != nil || string(data) != path {
					errs <- fmt.Errorf("%s: got %q, %v", path, data, err)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n := conns.Load(); n > 8+maxIdleConns {
		t.Errorf("%d connections for 8 concurrent clients", n)
	}
}

// TestConnTransportUnreadBody: an answer closed before it was read does
// not leave its bytes to be taken for the next answer.
func TestConnTransportUnreadBody(t *testing.T) {
	t.Parallel()
	srv, _ := echoServer(t, 0, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/big" {
			fmt.Fprint(w, strings.Repeat("x", 1<<20))
			return
		}
		fmt.Fprint(w, r.URL.Path)
	})
	c := newTestClient(t, srv.URL)
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL+"/big", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 10)
	if _, err := io.ReadFull(resp.Body, buf); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	mustEcho(t, c, t.Context(), "/next")
}
