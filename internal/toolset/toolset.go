// Package toolset owns the proxy's own browser tools — the selector-based
// navigation, interaction, extraction, state, network and element tools —
// the tool groups every listed tool belongs to, and the
// choice of groups: the server's (PROXY_TOOLSETS) and a client's own, which
// travels with its requests in their context.
//
// Each tool is a fixed Playwright program that the session manager runs in
// the caller's own worker through upstream's browser_run_code_unsafe, so it
// acts on that session's BrowserContext and is recorded like every other
// call. The caller's arguments reach the program only as base64-encoded JSON
// that the program decodes: they are data and can never become code. The
// program answers with an envelope (value, or an error with one of the
// documented codes) that Interpret turns back into Go.
//
// It never talks to a worker, the store or the network itself.
package toolset

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Tool groups. Upstream, storage, session and content are the tools that
// exist without this package (upstream's browser_* tools, its cookie and
// web-storage tools, the session tools, get_content and
// get_console_content); the rest are defined here.
const (
	GroupUpstream    = "upstream"
	GroupStorage     = "storage"
	GroupSession     = "session"
	GroupContent     = "content"
	GroupNavigation  = "navigation"
	GroupInteraction = "interaction"
	GroupExtraction  = "extraction"
	GroupState       = "state"
	GroupNetwork     = "network"
	GroupElements    = "elements"
	// GroupUnsafe holds upstream's tools that run code outside the page
	// (browser_run_code_unsafe) or show how to reach the browser process
	// (browser_get_config); the catalogue decides which tools those are and
	// offers them only while every session has a browser process of its
	// own. It is chosen only by name: "all" leaves it out, and a client may
	// choose it only when the server's own selection holds it.
	GroupUnsafe = "unsafe"
)

// allGroups in listing order.
var allGroups = []string{GroupUpstream, GroupStorage, GroupSession, GroupContent, GroupNavigation, GroupInteraction, GroupExtraction, GroupState, GroupNetwork, GroupElements, GroupUnsafe}

// byNameOnly are the groups "all" does not select.
var byNameOnly = []string{GroupUnsafe}

// DefaultGroups is the selection when PROXY_TOOLSETS is empty: short, since
// every listed tool costs the model tokens on every turn. The proxy's own
// groups mostly do what upstream's tools already do, with selectors.
var DefaultGroups = []string{GroupUpstream, GroupSession, GroupContent}

// Groups lists every group name, for help texts and validation.
func Groups() []string { return slices.Clone(allGroups) }

// storageTools are upstream's tools of its storage capability (--caps=
// storage, which every worker gets): few tasks need them, and together they
// would weigh as much as the rest of upstream's list.
var storageTools = []string{"browser_storage_state", "browser_set_storage_state"}

// storagePrefixes name the families of upstream's storage capability, so a
// tool upstream adds to one of them joins its group.
var storagePrefixes = []string{"browser_cookie_", "browser_localstorage_", "browser_sessionstorage_"}

// UpstreamGroup is the group of one of upstream's tools: GroupStorage for
// its cookie and web-storage tools, GroupUpstream for every other.
func UpstreamGroup(name string) string {
	if slices.Contains(storageTools, name) {
		return GroupStorage
	}
	for _, p := range storagePrefixes {
		if strings.HasPrefix(name, p) {
			return GroupStorage
		}
	}
	return GroupUpstream
}

// All selects every group "all" names: every one but GroupUnsafe.
func All() Selection {
	s, _ := Select([]string{"all"}) // always parses
	return s
}

// RunTool is the upstream tool every program runs through.
const RunTool = "browser_run_code_unsafe"

// Own is one of the proxy's own browser tools: a program upstream runs
// through RunTool, described as a tool.
type Own struct {
	Name        string
	Group       string
	Description string
	InputSchema json.RawMessage
	// ReadOnly tools change nothing in the browser: no state save after them.
	ReadOnly bool
	body     string // JS: the body of async (page, args, H) => { ... }
}

// Annotations are the MCP tool annotations of t.
func (t *Own) Annotations() json.RawMessage {
	a := map[string]any{"readOnlyHint": t.ReadOnly, "openWorldHint": true}
	if !t.ReadOnly {
		a["destructiveHint"] = false
	}
	b, _ := json.Marshal(a)
	return b
}

// Selection is the set of tool groups a server lists. The zero value
// selects nothing; use Select.
type Selection struct {
	groups map[string]bool
	tools  []*Own // the selected ones, in catalogue order
}

// Select parses a choice of groups (PROXY_TOOLSETS, or a client's): group
// names, "all" (every group but GroupUnsafe), or none for DefaultGroups. An
// unknown name is an error naming it and every group.
func Select(names []string) (Selection, error) {
	s := Selection{groups: map[string]bool{}}
	named := false
	for _, n := range names {
		n = strings.ToLower(strings.TrimSpace(n))
		if n == "" {
			continue
		}
		named = true
		if n == "all" {
			for _, g := range allGroups {
				if !slices.Contains(byNameOnly, g) {
					s.groups[g] = true
				}
			}
			continue
		}
		if !slices.Contains(allGroups, n) {
			return Selection{}, fmt.Errorf("unknown tool group %q (groups: %s, or all)", n, strings.Join(allGroups, ", "))
		}
		s.groups[n] = true
	}
	if !named {
		for _, g := range DefaultGroups {
			s.groups[g] = true
		}
	}
	for _, t := range catalogue() {
		if s.groups[t.Group] {
			s.tools = append(s.tools, t)
		}
	}
	return s, nil
}

// Choice parses a client's own choice, a comma list of groups or "all". A
// list that names no group is no choice (ok false): the server's selection
// applies, not DefaultGroups.
func Choice(list string) (s Selection, ok bool, err error) {
	names := strings.Split(list, ",")
	if !slices.ContainsFunc(names, func(n string) bool { return strings.TrimSpace(n) != "" }) {
		return Selection{}, false, nil
	}
	s, err = Select(names)
	return s, err == nil, err
}

// WithChoice returns ctx carrying the client's own choice that list (a
// comma list of groups, or all) makes; a list naming no group leaves ctx as
// it is, and an unknown group is Choice's error.
func WithChoice(ctx context.Context, list string) (context.Context, error) {
	s, ok, err := Choice(list)
	if err != nil || !ok {
		return ctx, err
	}
	return WithSelection(ctx, s), nil
}

type selectionKey struct{}

// WithSelection returns ctx carrying a client's own choice of groups, which
// replaces the server's for whatever that request lists or calls.
func WithSelection(ctx context.Context, s Selection) context.Context {
	return context.WithValue(ctx, selectionKey{}, s)
}

// FromContext is the selection a request acts under: its client's own
// choice, else def (the server's). A client chooses GroupUnsafe only when
// def holds it: naming it on a server that did not enable it gives the
// client nothing more (the catalogue's answer to a call of one of its tools
// says what the server would have to set).
func FromContext(ctx context.Context, def Selection) Selection {
	s, ok := ctx.Value(selectionKey{}).(Selection)
	if !ok || s.Empty() {
		return def
	}
	if s.Has(GroupUnsafe) && !def.Has(GroupUnsafe) {
		return s.without(GroupUnsafe)
	}
	return s
}

// without is s less group.
func (s Selection) without(group string) Selection {
	out := Selection{groups: make(map[string]bool, len(s.groups))}
	for g, on := range s.groups {
		if on && g != group {
			out.groups[g] = true
		}
	}
	for _, t := range s.tools {
		if t.Group != group {
			out.tools = append(out.tools, t)
		}
	}
	return out
}

// AllowedBy is every group a client may choose on a server whose own
// selection is def: all of them, GroupUnsafe only when def holds it. A
// surface that serves many clients lists what each may choose from it.
func AllowedBy(def Selection) Selection {
	if !def.Has(GroupUnsafe) {
		return All()
	}
	s, _ := Select([]string{"all", GroupUnsafe}) // always parses
	return s
}

// Has reports whether group is selected.
func (s Selection) Has(group string) bool { return s.groups[group] }

// String lists the selected groups in listing order.
func (s Selection) String() string {
	var out []string
	for _, g := range allGroups {
		if s.groups[g] {
			out = append(out, g)
		}
	}
	return strings.Join(out, ",")
}

// Tools lists this package's tools in the selected groups, in a stable order.
func (s Selection) Tools() []*Own { return slices.Clone(s.tools) }

// Lookup finds a selected tool by name.
func (s Selection) Lookup(name string) (*Own, bool) {
	for _, t := range s.tools {
		if t.Name == name {
			return t, true
		}
	}
	return nil, false
}

// Names lists every tool this package defines, selected or not.
func Names() []string {
	var out []string
	for _, t := range catalogue() {
		out = append(out, t.Name)
	}
	sort.Strings(out)
	return out
}

// Empty reports whether s is the zero Selection (not made by Select).
func (s Selection) Empty() bool { return s.groups == nil }
