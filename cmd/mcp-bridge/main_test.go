//go:build linux

package main

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/bridge"
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

// --toolsets chooses this client's tool groups (over MCP_PROXY_TOOLSETS),
// --profile the login profile of its default session (over
// MCP_PROXY_PROFILE); anything else, an unknown group or a name that could
// not be a profile's ends Run at once, naming where it came from, before
// any request.
func TestFlags(t *testing.T) {
	tests := []struct {
		name         string
		args         []string
		env          map[string]string
		wantToolsets string
		wantProfile  string
		wantErr      string
	}{
		{name: "none"},
		{name: "toolsets env", env: map[string]string{"MCP_PROXY_TOOLSETS": "storage"}, wantToolsets: "storage"},
		{name: "toolsets flag with =", args: []string{"--toolsets=storage,extraction"}, wantToolsets: "storage,extraction"},
		{name: "toolsets flag then value", args: []string{"--toolsets", "all"}, wantToolsets: "all"},
		{name: "toolsets single dash", args: []string{"-toolsets=storage"}, wantToolsets: "storage"},
		{name: "toolsets flag wins over env", args: []string{"--toolsets=extraction"}, env: map[string]string{"MCP_PROXY_TOOLSETS": "storage"}, wantToolsets: "extraction"},
		{name: "unknown group", args: []string{"--toolsets=storage,cookies"}, wantErr: `--toolsets: unknown tool group "cookies" (groups: upstream, storage,`},
		{name: "unknown group in env", env: map[string]string{"MCP_PROXY_TOOLSETS": "cookies"}, wantErr: `MCP_PROXY_TOOLSETS: unknown tool group "cookies"`},
		{name: "toolsets without a value", args: []string{"--toolsets"}, wantErr: "--toolsets needs a value"},
		{name: "other argument", args: []string{"--url=x"}, wantErr: `unexpected arguments ["--url=x"]`},
		{name: "profile env", env: map[string]string{"MCP_PROXY_PROFILE": "github"}, wantProfile: "github"},
		{name: "profile flag then value", args: []string{"--profile", "github"}, wantProfile: "github"},
		{name: "profile flag with =", args: []string{"--profile=work.example"}, wantProfile: "work.example"},
		{name: "profile single dash", args: []string{"-profile=github"}, wantProfile: "github"},
		{name: "profile flag wins over env", args: []string{"--profile=work"}, env: map[string]string{"MCP_PROXY_PROFILE": "github"}, wantProfile: "work"},
		{name: "empty profile flag clears env", args: []string{"--profile="}, env: map[string]string{"MCP_PROXY_PROFILE": "github"}},
		{name: "both flags", args: []string{"--toolsets=all", "--profile", "github"}, wantToolsets: "all", wantProfile: "github"},
		{name: "bad profile name", args: []string{"--profile=GitHub"}, wantErr: `--profile "GitHub" is not a profile name`},
		{name: "bad profile name in env", env: map[string]string{"MCP_PROXY_PROFILE": "my profile"}, wantErr: `MCP_PROXY_PROFILE "my profile" is not a profile name`},
		{name: "profile without a value", args: []string{"--profile"}, wantErr: "--profile needs a value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := map[string]string{"MCP_PROXY_URL": "http://192.0.2.1:9", "MCP_PROXY_AUTOSTART": "0"}
			maps.Copy(env, tt.env)
			cfg, err := bridge.ConfigFromEnv(func(k string) string { return env[k] })
			if err == nil {
				err = parseArgs(tt.args, &cfg)
			}
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				// Run refuses it the same way, without reaching anything.
				var stdout, stderr bytes.Buffer
				m := &Main{Getenv: func(k string) string { return env[k] }}
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				if err := m.Run(ctx, tt.args, strings.NewReader(""), &stdout, &stderr); err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("Run = %v, want %q", err, tt.wantErr)
				}
				if ctx.Err() != nil || stdout.Len() > 0 {
					t.Errorf("Run waited (%v) or wrote %q to stdout", ctx.Err(), stdout.String())
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Toolsets != tt.wantToolsets || cfg.Profile != tt.wantProfile {
				t.Errorf("toolsets %q, profile %q; want %q, %q", cfg.Toolsets, cfg.Profile, tt.wantToolsets, tt.wantProfile)
			}
		})
	}
}
