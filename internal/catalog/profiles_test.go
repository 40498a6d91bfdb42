package catalog

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
)

// PROXY_PROFILES decides which profile tools MCP clients are offered:
// list_profiles unless off, save_profile only with save (the default). A
// call of one kept from them says why.
func TestProfileToolsByMode(t *testing.T) {
	up := []proxy.Tool{{Name: "browser_navigate", InputSchema: navigateSchema}}
	tests := []struct {
		mode string
		want []string
	}{
		{"", []string{ToolSaveProfile, ToolListProfiles}},
		{proxy.ProfilesSave, []string{ToolSaveProfile, ToolListProfiles}},
		{proxy.ProfilesUse, []string{ToolListProfiles}},
		{proxy.ProfilesOff, nil},
	}
	for _, tt := range tests {
		t.Run("mode "+tt.mode, func(t *testing.T) {
			c := New(func(context.Context) ([]proxy.Tool, error) { return up, nil }, Options{Profiles: tt.mode})
			tools, err := c.List(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, tl := range tools {
				if tl.Name == ToolSaveProfile || tl.Name == ToolListProfiles {
					got = append(got, tl.Name)
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("profile tools (-want +got):\n%s", diff)
			}
			for _, name := range []string{ToolSaveProfile, ToolListProfiles} {
				if slices.Contains(tt.want, name) {
					continue
				}
				_, err := c.Resolve(context.Background(), name)
				if proxy.ErrorCode(err) != proxy.ETOOLMISSING || !strings.Contains(err.Error(), "PROXY_PROFILES is "+tt.mode) {
					t.Errorf("Resolve(%s) = %v, want TOOL_NOT_FOUND naming PROXY_PROFILES", name, err)
				}
			}
		})
	}
}

// create_new_session takes a profile and whether to write back to it; the
// descriptions stay short (they are paid on every turn).
func TestCreateSessionProfileProperties(t *testing.T) {
	var create proxy.Tool
	for _, tl := range proxyTools() {
		if tl.Name == ToolCreateSession {
			create = tl
		}
	}
	var schema struct {
		Properties map[string]struct {
			Type        string `json:"type"`
			Description string `json:"description"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(create.InputSchema, &schema); err != nil {
		t.Fatal(err)
	}
	for name, typ := range map[string]string{"profile": "string", "profile_write": "boolean"} {
		p, ok := schema.Properties[name]
		if !ok || p.Type != typ {
			t.Errorf("create_new_session property %s = %+v, want type %s", name, p, typ)
		}
		if len(p.Description) > 60 {
			t.Errorf("description of %s is %d bytes, want at most 60: %q", name, len(p.Description), p.Description)
		}
	}
}
