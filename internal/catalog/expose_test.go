package catalog

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/toolset"
)

// Clients that hand tool schemas to model APIs refuse anyOf, oneOf and
// allOf at the top level: the catalogue takes them off and says the rule in
// the description.
func TestCatalogFlattensTopLevelCombinators(t *testing.T) {
	sessionID := map[string]any{"type": "string", "description": sessionIDDescription}
	tests := []struct {
		name     string
		schema   string
		want     map[string]any
		wantDesc string
	}{
		{
			name:   "anyOf of required lists",
			schema: `{"type":"object","properties":{"state":{"type":"object"},"ref_id":{"type":"string"}},"additionalProperties":false,"anyOf":[{"required":["state"]},{"required":["ref_id"]}]}`,
			want: map[string]any{"type": "object", "additionalProperties": false, "properties": map[string]any{
				"state": map[string]any{"type": "object"}, "ref_id": map[string]any{"type": "string"}, "session_id": sessionID}},
			wantDesc: "Restore. Required: at least one of state, ref_id.",
		},
		{
			name:   "oneOf with its own properties",
			schema: `{"type":"object","oneOf":[{"properties":{"a":{"type":"string"}},"required":["a"]},{"properties":{"b":{"type":"integer"},"c":{"type":"integer"}},"required":["b","c"]}]}`,
			want: map[string]any{"type": "object", "properties": map[string]any{
				"a": map[string]any{"type": "string"}, "b": map[string]any{"type": "integer"}, "c": map[string]any{"type": "integer"}, "session_id": sessionID}},
			wantDesc: "Restore. Required: exactly one of a, b+c.",
		},
		{
			name:   "allOf joins the required lists, no type",
			schema: `{"required":["a"],"properties":{"a":{"type":"string"}},"allOf":[{"properties":{"b":{"type":"string"}},"required":["b"]}]}`,
			want: map[string]any{"type": "object", "required": []any{"a", "b"}, "properties": map[string]any{
				"a": map[string]any{"type": "string"}, "b": map[string]any{"type": "string"}, "session_id": sessionID}},
			wantDesc: "Restore.",
		},
		{
			name:   "nested combinators stay",
			schema: `{"type":"object","properties":{"v":{"anyOf":[{"type":"string"},{"type":"number"}]}}}`,
			want: map[string]any{"type": "object", "properties": map[string]any{
				"v": map[string]any{"anyOf": []any{map[string]any{"type": "string"}, map[string]any{"type": "number"}}}, "session_id": sessionID}},
			wantDesc: "Restore.",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tools := expose([]proxy.Tool{{Name: "x", Description: "Restore.", InputSchema: json.RawMessage(tt.schema)}}, toolset.Selection{})
			var got map[string]any
			if err := json.Unmarshal(tools[0].InputSchema, &got); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("schema (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantDesc, tools[0].Description); diff != "" {
				t.Errorf("description (-want +got):\n%s", diff)
			}
		})
	}
}

var navigateSchema = json.RawMessage(`{"type":"object","properties":{"url":{"type":"string","description":"The URL"}},"required":["url"],"$schema":"http://json-schema.org/draft-07/schema#"}`)

// What a call may give stays as upstream declared it; the dialect URI goes
// and the optional session_id joins.
func TestCatalogKeepsUpstreamSchema(t *testing.T) {
	tools := expose([]proxy.Tool{{Name: "browser_navigate", InputSchema: navigateSchema}}, toolset.Selection{})
	var got map[string]any
	if err := json.Unmarshal(tools[0].InputSchema, &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"type":     "object",
		"required": []any{"url"},
		"properties": map[string]any{
			"url":        map[string]any{"type": "string", "description": "The URL"},
			"session_id": map[string]any{"type": "string", "description": sessionIDDescription},
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("schema (-want +got):\n%s", diff)
	}
	var names []string
	for _, tl := range tools {
		names = append(names, tl.Name)
	}
	if diff := cmp.Diff([]string{"browser_navigate", ToolCreateSession, ToolCloseSession, ToolResumeSession, ToolListSessions, ToolSaveProfile, ToolListProfiles, ToolRequestHuman, ToolGetContent, ToolGetConsole}, names); diff != "" {
		t.Errorf("tool names (-want +got):\n%s", diff)
	}
}
