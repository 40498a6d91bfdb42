package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
)

// explainUnknownTools answers a tools/call of a tool this client is not
// offered with the catalogue's own refusal (TOOL_NOT_FOUND, why, and what
// would offer it) instead of mcp-go's bare "tool not found": a client
// calling a tool kept from it because sessions share a browser must learn
// that, and what the server would have to set. The answer stays the
// JSON-RPC error of an unknown tool (-32602).
func (s *Server) explainUnknownTools() {
	hooks := s.mcp.GetHooks()
	if hooks == nil {
		hooks = &server.Hooks{}
		server.WithHooks(hooks)(s.mcp)
	}
	hooks.AddOnRequestInitialization(func(ctx context.Context, _ any, message any) error {
		raw, ok := message.(json.RawMessage)
		if !ok {
			return nil
		}
		var call struct {
			Method mcp.MCPMethod `json:"method"`
			Params struct {
				Name string `json:"name"`
			} `json:"params"`
		}
		if json.Unmarshal(raw, &call) != nil || call.Method != mcp.MethodToolsCall || call.Params.Name == "" {
			return nil
		}
		if s.mcp.GetTool(call.Params.Name) != nil && (s.visible == nil || s.visible(ctx, call.Params.Name)) {
			return nil
		}
		err := s.sessions.Validate(s.acting(ctx), call.Params.Name, nil)
		if proxy.ErrorCode(err) != proxy.ETOOLMISSING {
			return nil // mcp-go answers as it does for any unknown tool
		}
		return fmt.Errorf("%w: %w", server.ErrToolNotFound, err)
	})
}
