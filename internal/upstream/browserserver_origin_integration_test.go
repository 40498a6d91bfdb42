//go:build linux

package upstream

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"testing"
	"time"
)

// TestIntegrationBrowserServerRefusesPages: a WebSocket handshake with an
// Origin (a web page's, even a loopback one) is refused with 403 before
// Playwright sees it; the workers' handshakes, which carry none, are
// served.
func TestIntegrationBrowserServerRefusesPages(t *testing.T) {
	root := realSetup(t)
	b := launchTestBrowser(t, root)
	u, err := url.Parse(b.PlaywrightEndpoint())
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, origin string
		want         int
	}{
		{"no origin: a Playwright client", "", http.StatusSwitchingProtocols},
		{"a page on 127.0.0.1", "http://127.0.0.1:8080", http.StatusForbidden},
		{"a page on localhost", "http://localhost", http.StatusForbidden},
		{"a page on another site", "https://example.com", http.StatusForbidden},
		{"an opaque origin", "null", http.StatusForbidden},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := handshake(t, u, tc.origin); got != tc.want {
				t.Errorf("WebSocket handshake with Origin %q = %d, want %d", tc.origin, got, tc.want)
			}
		})
	}
}

// handshake opens a WebSocket to u with origin ("" = none) and returns the
// status of the answer.
func handshake(t *testing.T, u *url.URL, origin string) int {
	t.Helper()
	conn, err := net.DialTimeout("tcp", u.Host, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(30 * time.Second)); err != nil {
		t.Fatal(err)
	}
	req := fmt.Sprintf("GET %s HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n", u.RequestURI(), u.Host)
	if origin != "" {
		req += "Origin: " + origin + "\r\n"
	}
	if _, err := conn.Write([]byte(req + "\r\n")); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("reading the handshake's answer: %v", err)
	}
	resp.Body.Close()
	return resp.StatusCode
}
