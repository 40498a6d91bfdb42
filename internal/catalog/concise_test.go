package catalog

import (
	"encoding/json"
	"os"
	"slices"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/toolset"
)

// upstreamFixture is tools/list of the pinned @playwright/mcp as the
// workers run it (--caps=storage).
func upstreamFixture(t *testing.T) []proxy.Tool {
	t.Helper()
	data, err := os.ReadFile("testdata/upstream_tools.json")
	if err != nil {
		t.Fatal(err)
	}
	var list struct {
		Tools []proxy.Tool `json:"tools"`
	}
	if err := json.Unmarshal(data, &list); err != nil {
		t.Fatal(err)
	}
	return list.Tools
}

// withoutWords is a schema as a validator reads it: without descriptions
// (of the schema and of every subschema), the dialect URI and session_id.
func withoutWords(t *testing.T, raw json.RawMessage) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	var strip func(v any) any
	strip = func(v any) any {
		switch n := v.(type) {
		case map[string]any:
			delete(n, "description")
			delete(n, "$schema")
			for k, c := range n {
				n[k] = strip(c)
			}
		case []any:
			for i, c := range n {
				n[i] = strip(c)
			}
		}
		return v
	}
	v = strip(v)
	if props, ok := v.(map[string]any)["properties"].(map[string]any); ok {
		delete(props, "session_id")
	}
	return v
}

// Concise descriptions change only words: every keyword a call is checked
// against (types, enums, bounds, required, additionalProperties, nested
// items) is upstream's, for every tool the workers offer.
func TestConciseCatalogAcceptsWhatUpstreamAccepts(t *testing.T) {
	up := upstreamFixture(t)
	listed := expose(up, toolset.All())
	byName := map[string]proxy.Tool{}
	for _, tl := range listed {
		byName[tl.Name] = tl
	}
	for _, u := range up {
		t.Run(u.Name, func(t *testing.T) {
			got, ok := byName[u.Name]
			if !ok {
				t.Fatal("not listed")
			}
			if diff := cmp.Diff(withoutWords(t, u.InputSchema), withoutWords(t, got.InputSchema)); diff != "" {
				t.Errorf("schema beyond its words (-upstream +listed):\n%s", diff)
			}
			if len(got.Description) > len(u.Description) {
				t.Errorf("description %q is longer than upstream's %q", got.Description, u.Description)
			}
			if len(got.InputSchema) > len(u.InputSchema)+len(`,"session_id":{"description":"`+sessionIDDescription+`","type":"string"}`) {
				t.Errorf("schema grew: %d bytes, upstream's %d", len(got.InputSchema), len(u.InputSchema))
			}
			if want := toolset.UpstreamGroup(u.Name); got.Group != want {
				t.Errorf("group %q, want %q", got.Group, want)
			}
		})
	}
}

// Every tool of the pinned upstream has a summary, and every summary still
// matches something upstream says: a new upstream version shows here what
// to write or delete.
func TestSummariesMatchUpstream(t *testing.T) {
	up := upstreamFixture(t)
	var names, storage []string
	descs := map[string]bool{}
	var walk func(raw json.RawMessage)
	walk = func(raw json.RawMessage) {
		var n struct {
			Properties map[string]json.RawMessage `json:"properties"`
			Items      json.RawMessage            `json:"items"`
		}
		_ = json.Unmarshal(raw, &n)
		for _, p := range n.Properties {
			var d struct {
				Description string `json:"description"`
			}
			_ = json.Unmarshal(p, &d)
			descs[d.Description] = true
			walk(p)
		}
		if len(n.Items) > 0 {
			walk(n.Items)
		}
	}
	for _, u := range up {
		walk(u.InputSchema)
		if toolset.UpstreamGroup(u.Name) == toolset.GroupStorage {
			storage = append(storage, u.Name)
		}
		names = append(names, u.Name)
		if _, ok := toolSummaries[u.Name]; !ok {
			t.Errorf("%s has no summary (upstream: %q)", u.Name, u.Description)
		}
	}
	for name := range toolSummaries {
		if !slices.Contains(names, name) {
			t.Errorf("summary of %s, which upstream does not list", name)
		}
	}
	for d := range propertySummaries {
		if !descs[d] {
			t.Errorf("property summary of %q, which upstream does not say", d)
		}
	}
	sort.Strings(storage)
	if len(storage) != 17 {
		t.Errorf("storage tools %v, want upstream's 15 cookie and web-storage tools and its 2 storage-state tools", storage)
	}
}

func TestConciseUpstream(t *testing.T) {
	tests := []struct {
		name, desc, schema string
		wantDesc           string
		wantSchema         string
	}{
		{
			name:       "browser_click",
			desc:       "Perform click on a web page",
			schema:     `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"target":{"type":"string","description":"Exact target element reference from the page snapshot, or a unique element selector"},"button":{"type":"string","enum":["left","right"],"description":"Button to click, defaults to left"}},"required":["target"],"additionalProperties":false}`,
			wantDesc:   "Click an element",
			wantSchema: `{"additionalProperties":false,"properties":{"button":{"description":"Button to click, defaults to left","enum":["left","right"],"type":"string"},"target":{"description":"Ref from the snapshot, or a unique selector","type":"string"}},"required":["target"],"type":"object"}`,
		},
		{
			name:       "nested items",
			desc:       "Fill. More.",
			schema:     `{"type":"object","properties":{"fields":{"type":"array","description":"Fields","items":{"type":"object","properties":{"element":{"type":"string","description":"Human-readable element description used to obtain permission to interact with the element"}}}}}}`,
			wantDesc:   "Fill.",
			wantSchema: `{"properties":{"fields":{"description":"Fields","items":{"properties":{"element":{"description":"Element description","type":"string"}},"type":"object"},"type":"array"}},"type":"object"}`,
		},
		{
			name:       "browser_future_tool",
			desc:       "Does a new thing, e.g. this. It also explains at length what it does.",
			schema:     `{"type":"object","properties":{"a":{"type":"integer","minimum":1,"maximum":9007199254740991,"description":"A long description of what this property is for, which goes on. And on, past the limit."},"b":{"type":"string","description":"Short. Kept whole."}}}`,
			wantDesc:   "Does a new thing, e.g. this.",
			wantSchema: `{"properties":{"a":{"description":"A long description of what this property is for, which goes on.","maximum":9007199254740991,"minimum":1,"type":"integer"},"b":{"description":"Short. Kept whole.","type":"string"}},"type":"object"}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			desc, schema := conciseUpstream(tt.name, tt.desc, json.RawMessage(tt.schema))
			if desc != tt.wantDesc {
				t.Errorf("description %q, want %q", desc, tt.wantDesc)
			}
			if string(schema) != tt.wantSchema {
				t.Errorf("schema\n got %s\nwant %s", schema, tt.wantSchema)
			}
		})
	}
}

// The proxy's own tools keep their words: their descriptions say what
// comes back.
func TestCatalogKeepsOwnToolsWords(t *testing.T) {
	all := toolset.All()
	own, _ := all.Lookup("get_text")
	tools := expose([]proxy.Tool{{Name: own.Name, Description: own.Description, InputSchema: own.InputSchema}}, all)
	if tools[0].Description != own.Description {
		t.Errorf("description %q, want the tool's own %q", tools[0].Description, own.Description)
	}
	if tools[0].Group != toolset.GroupExtraction {
		t.Errorf("group %q, want %q", tools[0].Group, toolset.GroupExtraction)
	}
}

func TestFirstSentence(t *testing.T) {
	tests := map[string]string{
		"One. Two.":                      "One.",
		"No period at all":               "No period at all",
		"Ends here.":                     "Ends here.",
		"Like this, e.g. that. Then":     "Like this, e.g. that.",
		"That is, i.e. this one. Rest":   "That is, i.e. this one.",
		"Version 1.2 is out. Next":       "Version 1.2 is out.",
		"  Padded. Rest  ":               "Padded.",
		"Trailing e.g. never ends there": "Trailing e.g. never ends there",
	}
	for in, want := range tests {
		if got := firstSentence(in); got != want {
			t.Errorf("firstSentence(%q) = %q, want %q", in, got, want)
		}
	}
}
