//go:build unix

package main

import (
	"testing"

	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/e2etest"
)

// Resource reads and prompts answer the JSON-RPC codes the MCP spec names
// over /mcp (Streamable HTTP).
func TestMCPErrorCodesOverHTTP(t *testing.T) {
	s := startServer(t, "", nil)
	m := dialMCP(t, s.URL+"/mcp")
	e2etest.CheckRPCCodes(t, m.c.GetTransport())
}

// Integers above 2^53 in tool arguments keep their digits over /mcp.
func TestBigIntegersOverHTTP(t *testing.T) {
	s := startServer(t, "", nil)
	m := dialMCP(t, s.URL+"/mcp")
	e2etest.CheckBigIntegers(t, m.c, s.DBPath)
}
