package api

import (
	"net/http"
	"strings"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/toolset"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/wire"
)

// toolsets puts the request's choice of groups in its context; an unknown
// group is refused, naming every group.
func (s *Server) toolsets(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		values := r.Header.Values(wire.ToolsetsHeader)
		if len(values) == 0 {
			next.ServeHTTP(w, r)
			return
		}
		ctx, err := toolset.WithChoice(r.Context(), strings.Join(values, ","))
		if err != nil {
			e := proxy.Errorf(proxy.EINVALID, "%s: %v", wire.ToolsetsHeader, err)
			e.Details = map[string]any{"field": wire.ToolsetsHeader, "groups": toolset.Groups()}
			s.writeErr(w, r, e)
			return
		}
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}
