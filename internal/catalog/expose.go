package catalog

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/toolset"
)

// Names of the proxy's own tools.
const (
	ToolCreateSession = "create_new_session"
	ToolCloseSession  = "close_session"
	ToolResumeSession = "resume_session"
	ToolListSessions  = "list_sessions"
	ToolGetContent    = "get_content"
	ToolGetConsole    = "get_console_content"
	ToolSaveProfile   = "save_profile"
	ToolListProfiles  = "list_profiles"
	ToolRequestHuman  = "request_human"
)

// sessionIDDescription is short: every browser tool carries it.
const sessionIDDescription = "Omit for your default session"

// expose returns the exposed tool list: the session's tools (upstream's and
// the proxy's browser tools, as the session manager lists them), each with
// an optional session_id property, then the session and content tools of
// the groups selected (a zero Selection: the default groups). Upstream's
// tools are described concisely (conciseUpstream).
func expose(up []proxy.Tool, groups toolset.Selection) []proxy.Tool {
	if groups.Empty() {
		groups, _ = toolset.Select(nil) // the defaults always parse
	}
	own := toolset.All()
	out := make([]proxy.Tool, 0, len(up)+6)
	for _, t := range up {
		desc, schema := t.Description, t.InputSchema
		group := t.Group // the catalogue's, for upstream's
		if group == "" {
			group = toolset.UpstreamGroup(t.Name)
		}
		if ext, ok := own.Lookup(t.Name); ok {
			group = ext.Group
		} else {
			desc, schema = conciseUpstream(t.Name, desc, schema)
		}
		schema, rule := flattenTop(schema)
		if rule != "" {
			desc = strings.TrimSpace(desc + " " + rule)
		}
		out = append(out, proxy.Tool{Name: t.Name, Description: desc, InputSchema: withSessionID(schema), Annotations: t.Annotations, Group: group})
	}
	for _, t := range proxyTools() {
		if t.Group = proxyToolGroup(t.Name); groups.Has(t.Group) {
			out = append(out, t)
		}
	}
	return out
}

// proxyToolGroup is the PROXY_TOOLSETS group of one of proxyTools.
func proxyToolGroup(name string) string {
	if name == ToolGetContent || name == ToolGetConsole {
		return toolset.GroupContent
	}
	return toolset.GroupSession
}

// withSessionID adds the optional session_id property to an object schema,
// leaving every other byte of meaning in place.
func withSessionID(schema json.RawMessage) json.RawMessage {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(schema, &m); err != nil || m == nil {
		m = map[string]json.RawMessage{"type": json.RawMessage(`"object"`)}
	}
	props := map[string]json.RawMessage{}
	if raw, ok := m["properties"]; ok {
		_ = json.Unmarshal(raw, &props) // a non-object "properties" is replaced
	}
	if _, taken := props["session_id"]; !taken {
		props["session_id"] = mustJSON(map[string]string{"type": "string", "description": sessionIDDescription})
	}
	m["properties"] = mustJSON(props)
	return mustJSON(m)
}

// flattenTop takes anyOf, oneOf and allOf off the top level of an input
// schema, where clients that hand tool schemas to model APIs (Anthropic's,
// OpenAI's) refuse them, and makes sure the top level says "type":"object".
// The alternatives' properties join the top level (allOf's required lists
// too); which of them a call must give comes back as a sentence for the
// description. Nothing is enforced less: calls are still validated against
// the tool's full schema before they reach a browser.
func flattenTop(schema json.RawMessage) (json.RawMessage, string) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(schema, &m); err != nil || m == nil {
		return schema, ""
	}
	_, typed := m["type"]
	if typed && m["allOf"] == nil && m["anyOf"] == nil && m["oneOf"] == nil {
		return schema, ""
	}
	if !typed {
		m["type"] = json.RawMessage(`"object"`)
	}
	props := map[string]json.RawMessage{}
	if raw, ok := m["properties"]; ok {
		_ = json.Unmarshal(raw, &props)
	}
	var required []string
	if raw, ok := m["required"]; ok {
		_ = json.Unmarshal(raw, &required)
	}
	var rules []string
	for _, kw := range []string{"allOf", "anyOf", "oneOf"} {
		raw, ok := m[kw]
		if !ok {
			continue
		}
		delete(m, kw)
		var branches []struct {
			Properties map[string]json.RawMessage `json:"properties"`
			Required   []string                   `json:"required"`
		}
		_ = json.Unmarshal(raw, &branches) // a malformed one is only dropped
		var alts []string
		for _, b := range branches {
			for name, p := range b.Properties {
				if _, taken := props[name]; !taken {
					props[name] = p
				}
			}
			if kw == "allOf" {
				for _, r := range b.Required {
					if !slices.Contains(required, r) {
						required = append(required, r)
					}
				}
			} else if len(b.Required) > 0 {
				alts = append(alts, strings.Join(b.Required, "+"))
			}
		}
		switch {
		case len(alts) == 0:
		case kw == "anyOf":
			rules = append(rules, "Required: at least one of "+strings.Join(alts, ", ")+".")
		default:
			rules = append(rules, "Required: exactly one of "+strings.Join(alts, ", ")+".")
		}
	}
	if len(props) > 0 {
		m["properties"] = mustJSON(props)
	}
	if len(required) > 0 {
		m["required"] = mustJSON(required)
	}
	return mustJSON(m), strings.Join(rules, " ")
}

func proxyTools() []proxy.Tool {
	str := func(desc string) map[string]string { return map[string]string{"type": "string", "description": desc} }
	obj := func(props map[string]any, required ...string) json.RawMessage {
		s := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
		if len(required) > 0 {
			s["required"] = required
		}
		return mustJSON(s)
	}
	return []proxy.Tool{
		{Name: ToolCreateSession, Proxy: true,
			Description: "New isolated browser session (own cookies, storage, tabs); pass its session_id to browser tools. Rarely needed: you have a default one. Options apply to it alone.",
			InputSchema: obj(map[string]any{
				"viewport": map[string]any{"type": "object", "description": "Page size in CSS pixels.", "additionalProperties": false, "required": []string{"width", "height"},
					"properties": map[string]any{"width": map[string]any{"type": "integer", "minimum": 1, "maximum": 10000}, "height": map[string]any{"type": "integer", "minimum": 1, "maximum": 10000}}},
				"user_agent":    str("User-Agent the pages see."),
				"device":        str("Playwright device, e.g. iPhone 15, Pixel 7 (viewport, user agent, touch)."),
				"locale":        str("Language tag, e.g. fr-FR (navigator.language, Accept-Language)."),
				"timezone":      str("IANA time zone, e.g. Europe/Paris."),
				"color_scheme":  map[string]any{"type": "string", "enum": []string{"light", "dark", "no-preference"}, "description": "prefers-color-scheme the pages see."},
				"browser":       map[string]any{"type": "string", "enum": []string{"chromium", "firefox", "webkit"}, "description": "Engine; firefox and webkit need a browser node."},
				"profile":       str("Login profile to start from (a copy)."),
				"profile_write": map[string]string{"type": "boolean", "description": "false: keep the profile unchanged."},
			})},
		{Name: ToolCloseSession, Proxy: true,
			Description: "Close a browser session; its history stays readable.",
			InputSchema: obj(map[string]any{"session_id": str("The session to close.")}, "session_id")},
		{Name: ToolResumeSession, Proxy: true,
			Description: "Bring a suspended or failed session back now (any call does too) with its URL, cookies, localStorage. restored=true: old element refs are stale.",
			InputSchema: obj(map[string]any{"session_id": str("The session to resume.")}, "session_id")},
		{Name: ToolListSessions, Proxy: true,
			Description: "List browser sessions: state, creation, last activity.",
			InputSchema: obj(map[string]any{})},
		{Name: ToolSaveProfile, Proxy: true,
			Description: "Save the session's logins (cookies, storage) as profile name.",
			InputSchema: obj(map[string]any{
				"name":       str("a-z 0-9 . _ -"),
				"session_id": str(sessionIDDescription),
			}, "name")},
		{Name: ToolListProfiles, Proxy: true,
			Description: "List saved login profiles.",
			InputSchema: obj(map[string]any{})},
		{Name: ToolRequestHuman, Proxy: true,
			Description: "Wait for a person to act in the browser (2FA, CAPTCHA, sign-in); answers what changed.",
			InputSchema: obj(map[string]any{
				"reason":     str("What they should do."),
				"timeout":    map[string]string{"type": "number", "description": "Seconds (default 600, max 1800)."},
				"session_id": str(sessionIDDescription),
			}, "reason")},
		{Name: ToolGetContent, Proxy: true,
			Description: "Read what a browser call recorded for ref_id: its page snapshot (yaml with element refs), result text or screenshot. The first read returns all; later reads of the ref only what changed (empty if nothing did). search_for returns each matching line with its ancestors and neighbourhood (its list item or table row), at most 20, or says none matched, leaving the next plain read as it was.",
			InputSchema: obj(map[string]any{
				"ref_id":         str("From a browser tool call."),
				"search_for":     str("Text to find (case-insensitive by default)."),
				"regex":          map[string]string{"type": "boolean", "description": "search_for is an RE2 regex, matched per line."},
				"case_sensitive": map[string]string{"type": "boolean", "description": "Match case exactly."},
				"reset_cursor":   map[string]string{"type": "boolean", "description": "Return everything again, not only changes."},
				"download":       str("A file the call downloaded (its download: line): returns its text."),
			}, "ref_id")},
		{Name: ToolGetConsole, Proxy: true,
			Description: "Console messages recorded for ref_id, at level or more severe.",
			InputSchema: obj(map[string]any{
				"ref_id": str("From a browser tool call."),
				"level":  map[string]any{"type": "string", "enum": []string{"debug", "info", "warn", "error"}, "description": "Minimum severity."},
			}, "ref_id")},
	}
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("catalog: static schema does not marshal: %v", err))
	}
	return b
}
