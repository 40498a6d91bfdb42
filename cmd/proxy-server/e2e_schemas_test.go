//go:build unix

package main

import (
	"encoding/json"
	"net/http"
	"slices"
	"testing"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
)

// httpMCPTools is what /mcp answers to tools/list, every page, as raw JSON.
func httpMCPTools(t *testing.T, s *server) []json.RawMessage {
	t.Helper()
	m := dialMCP(t, s.URL+"/mcp")
	ctx, cancel := m.ctx()
	defer cancel()
	return rawTools(ctx, t, m.c.GetTransport())
}

// Clients that pass tool schemas on to model APIs (Anthropic's, OpenAI's)
// refuse a schema whose top level is not a plain object: every tool of the
// whole catalogue — upstream's as the real worker lists them and the
// proxy's own, every group — must do without anyOf, oneOf and allOf there,
// on GET /tools, the stdio bridge and /mcp alike. The rule those keywords
// carried is still enforced by the proxy.
func TestNoToolSchemaHasTopLevelCombinators(t *testing.T) {
	s := startServer(t, "", map[string]string{"PROXY_TOOLSETS": "all"})

	var listed struct {
		Tools []json.RawMessage `json:"tools"`
	}
	if code := do(t, "GET", s.URL+"/tools", nil, &listed); code != http.StatusOK {
		t.Fatalf("GET /tools = %d", code)
	}
	sources := map[string][]json.RawMessage{
		"GET /tools": listed.Tools,
		"bridge":     bridgeTools(t, s),
		"/mcp":       httpMCPTools(t, s),
	}
	for source, tools := range sources {
		t.Run(source, func(t *testing.T) {
			var names []string
			for _, raw := range tools {
				var tool struct {
					Name        string
					InputSchema map[string]any
				}
				if err := json.Unmarshal(raw, &tool); err != nil {
					t.Fatalf("tool %s: %v", raw, err)
				}
				names = append(names, tool.Name)
				if tool.InputSchema["type"] != "object" {
					t.Errorf("%s: top-level type = %v, want object", tool.Name, tool.InputSchema["type"])
				}
				for _, kw := range []string{"anyOf", "oneOf", "allOf"} {
					if v, ok := tool.InputSchema[kw]; ok {
						t.Errorf("%s: top-level %s %v", tool.Name, kw, v)
					}
				}
			}
			// The whole catalogue: upstream's tools and every group's.
			for _, want := range []string{"browser_click", "browser_navigate", "restore_state", "block_resource", "click", "create_new_session", "get_content"} {
				if !slices.Contains(names, want) {
					t.Errorf("%s is not listed (got %v)", want, names)
				}
			}
		})
	}

	// The proxy still refuses a call that gives none of the alternatives,
	// naming a field.
	id := s.createSession(t)
	tests := []struct {
		tool   string
		fields []string
	}{
		{"restore_state", []string{"params.state", "params.ref_id"}},
		{"block_resource", []string{"params.resource_types", "params.url_patterns"}},
	}
	for _, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
			var eb struct {
				Error   string
				Message string
				Details map[string]any
			}
			code := do(t, "POST", s.URL+"/call", map[string]any{"session_id": id, "tool": tt.tool, "params": map[string]any{}}, &eb)
			field, _ := eb.Details["field"].(string)
			if code != http.StatusBadRequest || eb.Error != proxy.EINVALID || !slices.Contains(tt.fields, field) {
				t.Errorf("%s({}) = %d %s %q (field %q), want 400 %s naming one of %v", tt.tool, code, eb.Error, eb.Message, field, proxy.EINVALID, tt.fields)
			}
		})
	}
}
