package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestRunFailures: configuration errors, an unreachable server and a URL
// where something else answers end Run with an error naming the cause
// (those no wait can change at once, well before ctx ends), and nothing but
// MCP ever reaches stdout.
func TestRunFailures(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + ln.Addr().String()
	ln.Close()
	notFound := httptest.NewServer(http.NotFoundHandler())
	defer notFound.Close()
	webApp := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "<!doctype html><title>a dev server</title>")
	}))
	defer webApp.Close()
	home := t.TempDir() // autostart is on, and finds something answering: it writes nothing
	tests := []struct {
		name    string
		env     map[string]string
		wantErr string
		wantLog string
	}{
		{"bad autostart", map[string]string{"MCP_PROXY_AUTOSTART": "sometimes"}, "MCP_PROXY_AUTOSTART", ""},
		{"bad retry timeout", map[string]string{"MCP_PROXY_RETRY_TIMEOUT": "a while"}, "MCP_PROXY_RETRY_TIMEOUT", ""},
		{"bad url", map[string]string{"MCP_PROXY_URL": "ftp://x", "MCP_PROXY_AUTOSTART": "0"}, "MCP_PROXY_URL", ""},
		{"nothing answers, no autostart, no waiting", map[string]string{"MCP_PROXY_URL": dead, "MCP_PROXY_AUTOSTART": "0", "MCP_PROXY_RETRY_TIMEOUT": "0"}, "UPSTREAM_UNAVAILABLE", ""},
		// 192.0.2.1 is TEST-NET-1: the dial may hang until ctx ends.
		{"404 at the url", map[string]string{"MCP_PROXY_URL": notFound.URL, "HOME": home}, "not a proxy-server", ""},
		{"a web page at the url", map[string]string{"MCP_PROXY_URL": webApp.URL, "HOME": home}, "not a proxy-server", ""},
		{"remote url is never autostarted", map[string]string{"MCP_PROXY_URL": "http://192.0.2.1:9", "MCP_PROXY_RETRY_TIMEOUT": "0", "MCP_PROXY_LOG_LEVEL": "info"}, "", "autostart is off"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			m := &Main{Getenv: func(k string) string { return tc.env[k] }}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			began := time.Now()
			err := m.Run(ctx, nil, strings.NewReader(""), &stdout, &stderr)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("Run = %v, want an error naming %q\nstderr:\n%s", err, tc.wantErr, &stderr)
			}
			if took := time.Since(began); tc.wantErr != "" && took > 3*time.Second {
				t.Errorf("Run took %s to fail, want at once", took.Round(time.Millisecond))
			}
			if !strings.Contains(stderr.String(), tc.wantLog) {
				t.Errorf("stderr lacks %q:\n%s", tc.wantLog, &stderr)
			}
			if stdout.Len() > 0 {
				t.Errorf("Run wrote %q to stdout, the MCP channel", stdout.String())
			}
		})
	}
}
