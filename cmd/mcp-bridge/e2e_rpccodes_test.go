//go:build linux

package main

import (
	"path/filepath"
	"testing"

	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/e2etest"
)

// Resource reads and prompts answer the JSON-RPC codes the MCP spec names
// over the bridge's stdio.
func TestMCPErrorCodesOverStdio(t *testing.T) {
	requireBrowser(t)
	port := e2etest.FreePort(t)
	startServer(t, port, filepath.Join(t.TempDir(), "proxy.db"))
	b := startBridge(t, "MCP_PROXY_URL=http://127.0.0.1:"+port, "MCP_PROXY_AUTOSTART=0")
	b.initialize(t, "rpc-codes")
	e2etest.CheckRPCCodes(t, b.c.GetTransport())
}

// Integers above 2^53 in tool arguments keep their digits through the
// bridge.
func TestBigIntegersOverStdio(t *testing.T) {
	requireBrowser(t)
	port := e2etest.FreePort(t)
	db := filepath.Join(t.TempDir(), "proxy.db")
	startServer(t, port, db)
	b := startBridge(t, "MCP_PROXY_URL=http://127.0.0.1:"+port, "MCP_PROXY_AUTOSTART=0")
	b.initialize(t, "big-integers")
	e2etest.CheckBigIntegers(t, b.c, db)
}
