package catalog

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
)

// realTools are the tools @playwright/mcp 0.0.83 announced (recorded).
func realTools(t *testing.T) map[string]proxy.Tool {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "upstream", "testdata", "tools.json"))
	if err != nil {
		t.Fatal(err)
	}
	var list struct{ Tools []proxy.Tool }
	if err := json.Unmarshal(b, &list); err != nil {
		t.Fatal(err)
	}
	out := map[string]proxy.Tool{}
	for _, tool := range list.Tools {
		out[tool.Name] = tool
	}
	return out
}

func TestParamsAreCheckedAgainstTheToolSchema(t *testing.T) {
	tools := realTools(t)
	tests := []struct {
		name, tool, params string
		field              string // "" = valid
	}{
		{"valid", "browser_navigate", `{"url":"http://127.0.0.1/"}`, ""},
		{"missing required", "browser_navigate", `{}`, "params.url"},
		{"wrong type", "browser_navigate", `{"url":42}`, "params.url"},
		{"unknown property", "browser_navigate", `{"url":"http://x/","bogus":true}`, "params.bogus"},
		{"valid optional", "browser_click", `{"target":"e1","doubleClick":true}`, ""},
		{"wrong optional type", "browser_click", `{"target":"e1","doubleClick":"yes"}`, "params.doubleClick"},
		{"unusable schema is not enforced", "broken", `{"anything":1}`, ""},
		// zod lists scale as required; it has a default, upstream fills it in.
		{"required with a default", "browser_take_screenshot", `{}`, ""},
		{"defaulted property still typed", "browser_take_screenshot", `{"scale":"huge"}`, "params.scale"},
	}
	tools["broken"] = proxy.Tool{Name: "broken", InputSchema: json.RawMessage(`{"type": 12}`)}
	var s schemas
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tool, ok := tools[tt.tool]
			if !ok {
				t.Fatalf("no tool %s in the recording", tt.tool)
			}
			_, args, err := decodeParams(json.RawMessage(tt.params))
			if err != nil {
				t.Fatal(err)
			}
			err = s.check(tool, args)
			if tt.field == "" {
				if err != nil {
					t.Fatalf("check = %v, want nil", err)
				}
				return
			}
			var perr *proxy.Error
			if !errors.As(err, &perr) || perr.Code != proxy.EINVALID {
				t.Fatalf("check = %v, want %s", err, proxy.EINVALID)
			}
			if diff := cmp.Diff(tt.field, perr.Details["field"]); diff != "" {
				t.Errorf("field (-want +got):\n%s\nmessage: %s", diff, perr.Message)
			}
		})
	}
}

func TestDecodeParams(t *testing.T) {
	tests := []struct {
		raw, want string // want "" means refused
	}{
		{"", "{}"},
		{"null", "{}"},
		{` {} `, ` {} `},
		{`{"url":"x"}`, `{"url":"x"}`},
		{`""`, ""},
		{`"x"`, ""},
		{`[1]`, ""},
		{`1`, ""},
		{`true`, ""},
	}
	for _, tt := range tests {
		got, _, err := decodeParams(json.RawMessage(tt.raw))
		if tt.want == "" {
			var pe *proxy.Error
			if !errors.As(err, &pe) || pe.Code != proxy.EINVALID || pe.Details["field"] != "params" {
				t.Errorf("decodeParams(%q) = %s, %v; want INVALID_PARAMETERS naming params", tt.raw, got, err)
			}
			continue
		}
		if err != nil || string(got) != tt.want {
			t.Errorf("decodeParams(%q) = %s, %v; want %s", tt.raw, got, err, tt.want)
		}
	}
}
