package api

import (
	"net/http"
	"strings"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/toolset"
)

// ToolsetsHeader carries a client's own choice of tool groups (a comma list,
// or all): GET /tools lists those groups and /call, /call/validate accept
// their tools, instead of the server's PROXY_TOOLSETS. mcp-bridge sends its
// --toolsets (MCP_PROXY_TOOLSETS) with every request.
const ToolsetsHeader = "X-Mcp-Toolsets"

// toolsets puts the request's choice of groups in its context; an unknown
// group is refused, naming every group.
func (s *Server) toolsets(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		values := r.Header.Values(ToolsetsHeader)
		if len(values) == 0 {
			next.ServeHTTP(w, r)
			return
		}
		ctx, err := toolset.WithChoice(r.Context(), strings.Join(values, ","))
		if err != nil {
			e := proxy.Errorf(proxy.EINVALID, "%s: %v", ToolsetsHeader, err)
			e.Details = map[string]any{"field": ToolsetsHeader, "groups": toolset.Groups()}
			s.writeErr(w, r, e)
			return
		}
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}
