// Package catalog owns the tool catalogue: upstream's tools as a worker
// lists them, the proxy's own (programs upstream runs, and the session and
// content tools), which of them a request's tool groups select, which the
// policy switched off (hidden from lists), and the checks a call's
// arguments pass here (a JSON object, the tool's schema) before any session
// is touched; the session manager asks the policy itself next. The HTTP API
// and the MCP server list tools here, and the session manager resolves
// every call here. It never starts a worker itself: upstream's
// list comes from the function it is given.
package catalog

import (
	"context"
	"encoding/json"
	"slices"
	"sync/atomic"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/toolset"
)

// Upstream returns every tool upstream offers, switched off or not.
type Upstream func(ctx context.Context) ([]proxy.Tool, error)

// Catalog is the tool catalogue of one server.
type Catalog struct {
	upstream Upstream
	enabled  func(name string) bool
	def      toolset.Selection
	// ownBrowsers: every session's worker has a browser process of its
	// own, so upstream's tools that reach outside the page reach only it.
	ownBrowsers bool
	// profiles is PROXY_PROFILES: which profile tools are listed.
	profiles string
	schemas  schemas
	// seen is upstream's list once it has been learned, for Known, which
	// must not wait for it.
	seen atomic.Pointer[[]proxy.Tool]
}

// Options are a catalogue's settings beyond upstream's tools.
type Options struct {
	// ToolEnabled is false for a tool the operator's policy switched off:
	// it is not listed. A call of it still resolves, and the policy
	// refuses it with its own message. Nil enables every tool.
	ToolEnabled func(name string) bool
	// Default is the tool groups selected for requests that make no choice
	// of their own (toolset.WithSelection); zero means the default groups.
	Default toolset.Selection
	// OwnBrowsers says every session's worker launches a browser process
	// of its own (PROXY_BROWSER_MODE=per-session, no shared endpoint).
	// Without it, upstream's tools that reach outside the page are never
	// offered, whatever the groups: sessions share a browser process.
	OwnBrowsers bool
	// Profiles is what MCP clients may do with login profiles
	// (PROXY_PROFILES: proxy.ProfilesOff, ProfilesUse, ProfilesSave; ""
	// is ProfilesSave): list_profiles is listed unless off, save_profile
	// only with save.
	Profiles string
}

// New returns the catalogue over upstream's tools.
func New(up Upstream, opts Options) *Catalog {
	enabled, def := opts.ToolEnabled, opts.Default
	if enabled == nil {
		enabled = func(string) bool { return true }
	}
	if def.Empty() {
		def, _ = toolset.Select(nil) // the defaults always parse
	}
	return &Catalog{upstream: up, enabled: enabled, def: def, ownBrowsers: opts.OwnBrowsers, profiles: opts.Profiles}
}

// Resolved is the tool a call names.
type Resolved struct {
	// Tool is the tool with its whole input schema: upstream's as it
	// announced it, or the proxy's own.
	Tool proxy.Tool
	// Own is set for the proxy's own tools: the program upstream runs.
	Own *toolset.Own
	// ReadOnly: the tool changes nothing in the browser (its annotations
	// say so), so no state needs saving after it.
	ReadOnly bool
}

// Selection is the tool groups a request lists and calls: its client's own
// choice, else the server's.
func (c *Catalog) Selection(ctx context.Context) toolset.Selection {
	return toolset.FromContext(ctx, c.def)
}

// List is the tool list for the groups ctx selects, as clients see it.
func (c *Catalog) List(ctx context.Context) ([]proxy.Tool, error) {
	up, err := c.upstreamTools(ctx)
	if err != nil {
		return nil, err
	}
	sel := c.Selection(ctx)
	return c.withoutProfileTools(expose(c.listed(sel, up), sel)), nil
}

// withoutProfileTools drops the profile tools PROXY_PROFILES keeps from
// MCP clients: list_profiles when off, save_profile unless save.
func (c *Catalog) withoutProfileTools(tools []proxy.Tool) []proxy.Tool {
	return slices.DeleteFunc(tools, func(t proxy.Tool) bool {
		switch t.Name {
		case ToolListProfiles:
			return c.profiles == proxy.ProfilesOff
		case ToolSaveProfile:
			return c.profiles != "" && c.profiles != proxy.ProfilesSave
		}
		return false
	})
}

// group is the tool group one of upstream's tools is offered in, noGroup
// for one this server never offers.
func (c *Catalog) group(name string) string { return upstreamGroup(name, c.ownBrowsers) }

func (c *Catalog) upstreamTools(ctx context.Context) ([]proxy.Tool, error) {
	up, err := c.upstream(ctx)
	if err != nil {
		return nil, err
	}
	c.seen.Store(&up)
	return up, nil
}

// listed is upstream's tools of the selected groups (without those the
// policy switched off, and those this server never offers), then the
// proxy's own browser tools of the selected groups — only if upstream can
// run their programs. The programs run through upstream's RunTool whether
// or not clients are offered it: their code is the proxy's, fixed.
func (c *Catalog) listed(sel toolset.Selection, up []proxy.Tool) []proxy.Tool {
	var out []proxy.Tool
	for _, t := range up {
		if g := c.group(t.Name); c.enabled(t.Name) && sel.Has(g) {
			t.Group = g
			out = append(out, t)
		}
	}
	if !hasTool(up, toolset.RunTool) {
		return out
	}
	for _, t := range sel.Tools() {
		if c.enabled(t.Name) {
			out = append(out, proxy.Tool{Name: t.Name, Description: t.Description, InputSchema: t.InputSchema, Annotations: t.Annotations()})
		}
	}
	return out
}

// Known reports whether name is a tool of this server, upstream's (once
// its list is known) or the proxy's own, without waiting: metrics label
// calls by tool only when the name is one of a fixed set.
func (c *Catalog) Known(name string) bool {
	if _, own := toolset.All().Lookup(name); own {
		return true
	}
	up := c.seen.Load()
	return up != nil && hasTool(*up, name)
}

// Resolve finds the tool a call names: one of the proxy's own or
// upstream's. A tool of a group ctx's selection does not hold is not
// found, like any unknown name. A tool the policy switched off resolves:
// the policy refuses it with its own message.
func (c *Catalog) Resolve(ctx context.Context, name string) (*Resolved, error) {
	notFound := func(why string) (*Resolved, error) {
		e := proxy.Errorf(proxy.ETOOLMISSING, "%s", why)
		e.Details = map[string]any{"tool": name}
		return nil, e
	}
	if name == "" {
		return nil, proxy.Errorf(proxy.EINVALID, "tool is required")
	}
	sel := c.Selection(ctx)
	unselected := func(group string) (*Resolved, error) {
		return notFound("tool " + name + " is in tool group " + group + ", which is not selected (" + sel.String() +
			"); the server selects groups with PROXY_TOOLSETS, a client its own (mcp-bridge --toolsets, /mcp?toolsets=)")
	}
	up, err := c.upstreamTools(ctx)
	if err != nil {
		return nil, err
	}
	if own, ok := sel.Lookup(name); ok {
		if !hasTool(up, toolset.RunTool) {
			return notFound("tool " + name + " needs upstream's " + toolset.RunTool + ", which this @playwright/mcp does not offer")
		}
		return &Resolved{Tool: proxy.Tool{Name: own.Name, Description: own.Description, InputSchema: own.InputSchema}, Own: own, ReadOnly: own.ReadOnly}, nil
	}
	for _, t := range up {
		if t.Name != name {
			continue
		}
		g := c.group(name)
		switch {
		case g == noGroup:
			return notFound(c.hiddenWhy(name))
		case g == toolset.GroupUnsafe && !c.def.Has(g):
			return notFound("tool " + name + " " + reviewWhy(name) + "; it is in tool group " + g +
				", which this server does not enable: PROXY_TOOLSETS must name " + g + " (all does not include it)")
		case !sel.Has(g):
			return unselected(g)
		}
		return &Resolved{Tool: t, ReadOnly: readOnly(t)}, nil
	}
	if own, ok := toolset.All().Lookup(name); ok {
		return unselected(own.Group)
	}
	if hidden := c.withoutProfileTools([]proxy.Tool{{Name: name}}); len(hidden) == 0 {
		return notFound("tool " + name + " is not offered: this server's PROXY_PROFILES is " + c.profiles)
	}
	return notFound("no tool named " + quote(name))
}

// Params are a call's arguments as the session manager decodes them: Raw
// as sent (absent or null is {}), Args what the schema and the policy read.
// The policy's URL check decodes only the tool's schema, not the arguments
// again; mcp-bridge and the MCP server read them on their side to take
// session_id out.
type Params struct {
	Raw  json.RawMessage
	Args map[string]any
}

// Decode decodes a call's arguments: a JSON object, with absent or null
// meaning {}; anything else is INVALID_PARAMETERS naming the field.
func Decode(raw json.RawMessage) (Params, error) {
	raw, args, err := decodeParams(raw)
	return Params{Raw: raw, Args: args}, err
}

// Check refuses arguments that do not fit the tool's schema.
func (c *Catalog) Check(r *Resolved, p Params) error {
	return c.schemas.check(r.Tool, p.Args)
}

// readOnly says whether t's annotations promise not to change the page
// (readOnlyHint).
func readOnly(t proxy.Tool) bool {
	var a struct {
		ReadOnlyHint bool `json:"readOnlyHint"`
	}
	return len(t.Annotations) > 0 && json.Unmarshal(t.Annotations, &a) == nil && a.ReadOnlyHint
}

// hiddenWhy says why this server never offers one of upstream's tools, and
// what would.
func (c *Catalog) hiddenWhy(name string) string {
	why := "tool " + name + " is not offered: it " + reviewWhy(name)
	if r, _ := ReviewOf(name); r.Reach == Never {
		return why + "; no configuration of this proxy offers it"
	}
	return why + ". This server's sessions share one browser process, so code run there would reach every session's pages and cookies. " +
		"Use browser_evaluate to run JavaScript inside the page; to offer " + name + ", run proxy-server with PROXY_BROWSER_MODE=per-session " +
		"(a browser process per session) and name " + toolset.GroupUnsafe + " in PROXY_TOOLSETS"
}

func reviewWhy(name string) string {
	r, _ := ReviewOf(name)
	return r.Why
}

func hasTool(tools []proxy.Tool, name string) bool {
	for _, t := range tools {
		if t.Name == name {
			return true
		}
	}
	return false
}

func quote(s string) string { b, _ := json.Marshal(s); return string(b) }
