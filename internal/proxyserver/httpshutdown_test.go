package proxyserver

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"testing"
	"time"
)

// TestSilentConnsShutdown checks that a connection that never sends a
// request no longer holds shutdown (http.Server.Shutdown alone waits until
// it is 5 s old), while a request in flight is still answered.
func TestSilentConnsShutdown(t *testing.T) {
	tests := []struct {
		name string
		// open runs once the server is up; it returns the connection and
		// whether it is silent (then the test waits until it is accepted:
		// closing the listener would drop it unseen).
		open func(t *testing.T, addr string, entered chan struct{}) (net.Conn, bool)
		// want is the status of the answer read during shutdown, 0 for none.
		want int
	}{
		{
			name: "a silent connection is closed",
			open: func(t *testing.T, addr string, _ chan struct{}) (net.Conn, bool) {
				return dial(t, addr), true
			},
		},
		{
			name: "a request in flight is answered",
			open: func(t *testing.T, addr string, entered chan struct{}) (net.Conn, bool) {
				c := dial(t, addr)
				if _, err := io.WriteString(c, "GET /slow HTTP/1.1\r\nHost: test\r\n\r\n"); err != nil {
					t.Fatal(err)
				}
				<-entered
				return c, false
			},
			want: http.StatusOK,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			entered := make(chan struct{})
			mux := http.NewServeMux()
			mux.HandleFunc("/slow", func(http.ResponseWriter, *http.Request) {
				close(entered)
				time.Sleep(300 * time.Millisecond)
			})
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			silent := newSilentConns()
			srv := &http.Server{Handler: mux, ConnState: silent.track}
			srv.RegisterOnShutdown(silent.closeAll)
			served := make(chan error, 1)
			go func() { served <- srv.Serve(ln) }()

			c, isSilent := tt.open(t, ln.Addr().String(), entered)
			if isSilent {
				waitTracked(t, silent, 1)
			}
			// Well short of the 5 s net/http waits for a silent
			// connection: reaching it means the connection held shutdown.
			ctx, cancel := context.WithTimeout(t.Context(), 3*time.Second)
			defer cancel()
			shut := make(chan error, 1)
			go func() { shut <- srv.Shutdown(ctx) }()
			if tt.want != 0 {
				if got := status(t, c); got != tt.want {
					t.Errorf("status during shutdown = %d, want %d", got, tt.want)
				}
			}
			if err := <-shut; err != nil {
				t.Errorf("Shutdown = %v, want nil (a connection held it)", err)
			}
			if err := <-served; !errors.Is(err, http.ErrServerClosed) {
				t.Errorf("Serve = %v, want %v", err, http.ErrServerClosed)
			}
			// The server has let go of the connection either way.
			_ = c.SetReadDeadline(time.Now().Add(2 * time.Second))
			if _, err := io.Copy(io.Discard, c); err != nil {
				t.Errorf("reading to the end of the connection: %v, want EOF", err)
			}
		})
	}
}

// TestSilentConnsAcceptedAfterClose covers the last connection accepted as
// shutdown begins: it reports StateNew after closeAll has run.
func TestSilentConnsAcceptedAfterClose(t *testing.T) {
	s := newSilentConns()
	early, earlyPeer := net.Pipe()
	defer earlyPeer.Close()
	s.track(early, http.StateNew)
	s.closeAll()
	late, latePeer := net.Pipe()
	defer latePeer.Close()
	s.track(late, http.StateNew)
	for name, peer := range map[string]net.Conn{"tracked before closeAll": earlyPeer, "accepted after closeAll": latePeer} {
		_ = peer.SetReadDeadline(time.Now().Add(2 * time.Second))
		if _, err := peer.Read(make([]byte, 1)); !errors.Is(err, io.EOF) {
			t.Errorf("%s: read from the peer = %v, want EOF (closed)", name, err)
		}
	}
	if len(s.m) != 0 {
		t.Errorf("%d connections still tracked after closeAll", len(s.m))
	}
}

func waitTracked(t *testing.T, s *silentConns, n int) {
	t.Helper()
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		s.mu.Lock()
		got := len(s.m)
		s.mu.Unlock()
		if got == n {
			return
		}
	}
	t.Fatalf("the server did not accept %d connection(s)", n)
}

func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func status(t *testing.T, c net.Conn) int {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(2 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Errorf("reading the answer: %v", err)
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}
