package e2etest

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// CheckRPCCodes asserts the JSON-RPC error codes the MCP spec names for
// resource reads and prompts, on an initialised transport of any kind: an
// unknown session or ref is -32002 (resource not found), a malformed
// resource URI or prompt arguments are -32602 (invalid params). The
// message still names the proxy's own code.
func CheckRPCCodes(t *testing.T, tr transport.Interface) {
	t.Helper()
	const unknown = "5f0c6a8e-3c1d-4e8b-9a57-2b7d4c9e1f03"
	read := func(uri string) (string, map[string]any) {
		return string(mcp.MethodResourcesRead), map[string]any{"uri": uri}
	}
	prompt := func(name string, args map[string]string) (string, map[string]any) {
		return string(mcp.MethodPromptsGet), map[string]any{"name": name, "arguments": args}
	}
	tests := []struct {
		name     string
		call     func() (string, map[string]any)
		code     int
		mentions string
	}{
		{"unknown session", func() (string, map[string]any) { return read("playwright:///session/" + unknown) }, mcp.RESOURCE_NOT_FOUND, "SESSION_NOT_FOUND"},
		{"unknown ref", func() (string, map[string]any) { return read("playwright:///ref/" + unknown) }, mcp.RESOURCE_NOT_FOUND, "REF_NOT_FOUND"},
		{"unknown screenshot", func() (string, map[string]any) { return read("playwright:///screenshot/" + unknown) }, mcp.RESOURCE_NOT_FOUND, "REF_NOT_FOUND"},
		{"unknown console", func() (string, map[string]any) { return read("playwright:///console/" + unknown) }, mcp.RESOURCE_NOT_FOUND, "REF_NOT_FOUND"},
		{"malformed ref id", func() (string, map[string]any) { return read("playwright:///ref/a%20b") }, mcp.INVALID_PARAMS, "INVALID_PARAMETERS"},
		{"prompt without required arguments", func() (string, map[string]any) { return prompt("scrape_website", map[string]string{}) }, mcp.INVALID_PARAMS, "INVALID_PARAMETERS"},
		{"prompt with an unknown argument", func() (string, map[string]any) {
			return prompt("scrape_website", map[string]string{"url": "http://127.0.0.1/", "selectors": `{"t":"h1"}`, "selector": "h1"})
		}, mcp.INVALID_PARAMS, "INVALID_PARAMETERS"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			method, params := tt.call()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			req := transport.JSONRPCRequest{JSONRPC: mcp.JSONRPC_VERSION, ID: mcp.NewRequestId("rpc-codes-" + strconv.Itoa(i)), Method: method, Params: params}
			resp, err := tr.SendRequest(ctx, req)
			if err != nil {
				t.Fatalf("%s %v: %v", method, params, err)
			}
			if resp.Error == nil {
				t.Fatalf("%s %v answered %s, want error %d", method, params, resp.Result, tt.code)
			}
			if resp.Error.Code != tt.code || !strings.Contains(resp.Error.Message, tt.mentions) {
				t.Errorf("%s %v: error %d %q, want %d naming %s", method, params, resp.Error.Code, resp.Error.Message, tt.code, tt.mentions)
			}
		})
	}
}
