package mcpserver

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
)

// The rewrite works on mcp-go's own encoding of an error answer, and only
// on the answers the handlers marked.
func TestFixCodes(t *testing.T) {
	answer := func(code int, err error) []byte {
		b, mErr := json.Marshal(mcp.JSONRPCError{JSONRPC: mcp.JSONRPC_VERSION, ID: mcp.NewRequestId(7), Error: mcp.NewJSONRPCErrorDetails(code, err.Error(), nil)})
		if mErr != nil {
			t.Fatal(mErr)
		}
		return b
	}
	missing := proxy.Errorf(proxy.EREFMISSING, "ref_id %q not found", "r1")
	invalid := proxy.Errorf(proxy.EINVALID, "prompt p: missing required argument url")
	// A tool's answer that quotes such a message carries it escaped.
	quoted, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 8, "result": map[string]any{"content": []any{map[string]any{"type": "text", "text": string(answer(mcp.INTERNAL_ERROR, resourceError(missing)))}}}})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		in   []byte
		want []byte
	}{
		{"not found", answer(mcp.INTERNAL_ERROR, resourceError(missing)), answer(mcp.RESOURCE_NOT_FOUND, resourceError(missing))},
		{"invalid resource URI", answer(mcp.INTERNAL_ERROR, resourceError(invalid)), answer(mcp.INVALID_PARAMS, resourceError(invalid))},
		{"invalid prompt arguments", answer(mcp.INTERNAL_ERROR, promptError(invalid)), answer(mcp.INVALID_PARAMS, promptError(invalid))},
		{"other errors", answer(mcp.INTERNAL_ERROR, resourceError(fmt.Errorf("disk: %w", proxy.Errorf(proxy.EINTERNAL, "broken")))), answer(mcp.INTERNAL_ERROR, fmt.Errorf("disk: %w", proxy.Errorf(proxy.EINTERNAL, "broken")))},
		{"a prompt's missing session stays internal", answer(mcp.INTERNAL_ERROR, promptError(missing)), answer(mcp.INTERNAL_ERROR, missing)},
		{"unknown tool explained", answer(mcp.INVALID_REQUEST, fmt.Errorf("%w: %w", server.ErrToolNotFound, proxy.Errorf(proxy.ETOOLMISSING, "tool x is not offered"))),
			answer(mcp.INVALID_PARAMS, fmt.Errorf("%w: %w", server.ErrToolNotFound, proxy.Errorf(proxy.ETOOLMISSING, "tool x is not offered")))},
		{"other invalid requests", answer(mcp.INVALID_REQUEST, fmt.Errorf("Invalid JSON-RPC version")), answer(mcp.INVALID_REQUEST, fmt.Errorf("Invalid JSON-RPC version"))},
		{"quoted in a result", quoted, quoted},
		{"SSE event", append(append([]byte("event: message\ndata: "), answer(mcp.INTERNAL_ERROR, resourceError(missing))...), "\n\n"...),
			append(append([]byte("event: message\ndata: "), answer(mcp.RESOURCE_NOT_FOUND, resourceError(missing))...), "\n\n"...)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := string(tt.in)
			got := fixCodes(tt.in)
			if diff := cmp.Diff(string(tt.want), string(got)); diff != "" {
				t.Errorf("fixCodes (-want +got):\n%s", diff)
			}
			if string(tt.in) != in {
				t.Error("fixCodes modified its argument")
			}
		})
	}
}
