package proxyserver

import (
	"net"
	"net/http"
	"sync"
)

// silentConns closes, when the HTTP server shuts down, the connections that
// have been accepted but have not sent a byte. http.Server.Shutdown closes
// idle keep-alive connections at once but waits until such a connection is
// 5 s old (golang/go#22682), although a request read from it once shutdown
// has begun is dropped unanswered anyway. net/http's Transport leaves
// exactly such connections behind: when requests race for a connection, a
// dial that finishes after its request went out on another one is pooled
// unused. One of them could hold proxy-server's shutdown for seconds,
// before any session had saved its state.
type silentConns struct {
	mu      sync.Mutex
	closing bool
	m       map[net.Conn]struct{}
}

func newSilentConns() *silentConns {
	return &silentConns{m: map[net.Conn]struct{}{}}
}

// track is the server's ConnState hook. A connection accepted after
// closeAll has run is closed here: Shutdown starts its hooks only after
// the listener is closed, but the last accepted connection may report
// StateNew just after.
func (s *silentConns) track(c net.Conn, state http.ConnState) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case state != http.StateNew:
		delete(s.m, c)
	case s.closing:
		_ = c.Close()
	default:
		s.m[c] = struct{}{}
	}
}

// closeAll is registered with http.Server.RegisterOnShutdown. Closing the
// connection makes the server's goroutine for it end, and Shutdown stops
// counting it.
func (s *silentConns) closeAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closing = true
	for c := range s.m {
		_ = c.Close()
	}
	clear(s.m)
}
