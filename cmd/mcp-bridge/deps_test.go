//go:build linux

package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestLinksNoServer keeps the bridge small: it relays MCP over HTTP and links
// nothing of the server's HTTP handlers, store, session manager, metrics or
// browser processes. What it shares with the server is internal/wire.
func TestLinksNoServer(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go is not on PATH")
	}
	out, err := exec.Command(goBin, "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	const module = "github.com/playwright-mcp-proxy/playwright-mcp-proxy/"
	forbidden := []string{
		"modernc.org/sqlite",
		"github.com/pressly/goose/",
		"github.com/prometheus/",
		module + "internal/api",
		module + "internal/upstream",
		module + "internal/session",
		module + "internal/store",
		module + "internal/metrics",
		module + "internal/proxyserver",
	}
	// The configuration checks PROXY_STATE_KEY with the store's key code,
	// which is the standard library's AES alone: no database comes with it.
	allowed := map[string]bool{module + "internal/store/seal": true}
	for _, dep := range strings.Fields(string(out)) {
		if allowed[dep] {
			continue
		}
		for _, f := range forbidden {
			if dep == f || strings.HasPrefix(dep, strings.TrimSuffix(f, "/")+"/") {
				t.Errorf("mcp-bridge links %s (via %s)", dep, f)
			}
		}
	}
}
