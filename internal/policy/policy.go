// Package policy owns what the proxy itself enforces on tool calls, whatever
// upstream does: which URLs a tool may open (PROXY_ALLOWED_DOMAINS,
// PROXY_BLOCKED_DOMAINS, no file:// unless PROXY_ENABLE_FILE_URLS), which
// tools are switched off (PROXY_ENABLE_SCRIPT_EVALUATION,
// PROXY_ENABLE_FILE_UPLOAD), how large a stored screenshot may be
// (PROXY_MAX_SCREENSHOT_BYTES), and the masking of secrets
// (PROXY_SECRETS_FILE) in what is recorded and returned.
//
// It only decides and rewrites values handed to it: it never calls a worker,
// touches the store, does I/O beyond reading the secrets file, or logs
// secret values. It must never mask the session's saved browser state
// (cookies, storage) — restoring a session needs those bytes intact — so it
// offers nothing that callers could apply to it by accident.
//
// Upstream's --allowed-origins/--blocked-origins (see UpstreamArgs) are a
// second line for sub-resources and link clicks, not the boundary: every
// URL a tool call carries is checked here before anything is forwarded.
package policy

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/config"
)

// Config is the part of proxy-server's configuration that policy enforces.
type Config struct {
	// AllowedDomains, when not empty, is the only set of hosts a tool may
	// open. Entries: "example.com" (that host), "*.example.com" (any
	// subdomain, not the apex), an IP address or a CIDR prefix.
	AllowedDomains []string
	// BlockedDomains are refused even when allowed; same entry forms.
	BlockedDomains []string
	// EnableFileURLs lets tools open file:// URLs (default off).
	EnableFileURLs bool
	// EnableScriptEvaluation false hides browser_evaluate and
	// browser_run_code_unsafe.
	EnableScriptEvaluation bool
	// EnableFileUpload false hides browser_file_upload and refuses
	// browser_drop with local paths.
	EnableFileUpload bool
	// MaxScreenshotBytes is the largest image kept (0: no limit).
	MaxScreenshotBytes int64
	// Secrets maps names to values that are masked as <secret>NAME</secret>.
	Secrets map[string]string
	// Reserved are host:port addresses of the proxy's own services (its
	// HTTP API, the browsers it drives) that no tool may open, whatever the
	// lists allow. A loopback or unspecified host stands for every loopback
	// name of the machine (localhost, 127.0.0.0/8, ::1, 0.0.0.0).
	Reserved []string
}

// Policy is a compiled Config, immutable but for the addresses reserved
// while the server runs (Reserve); safe for concurrent use.
type Policy struct {
	allowed   []matcher
	blocked   []matcher
	fileURLs  bool
	disabled  map[string]string // tool name → the switch that hides it
	noUpload  bool
	maxImage  int64
	secrets   []secret // longest value first, so no secret is half-masked
	upArgs    []string
	allowSpec []string // normalised entries, for messages
	reserved  []reservedAddr
	dynamic   dynamicReserved
}

// Tools hidden by the switches. Only these names: upstream may add tools, and
// a new one is visible until someone decides it belongs behind a switch.
var (
	scriptTools = []string{"browser_evaluate", "browser_run_code_unsafe"}
	uploadTools = []string{"browser_file_upload", "upload_file"}
)

// MinSecretLen is the shortest secret value accepted: a shorter one would be
// masked inside ordinary words all over every page.
const MinSecretLen = 4

// New compiles cfg; an entry it cannot interpret is an error, not a silent
// hole in the policy.
func New(cfg Config) (*Policy, error) {
	p := &Policy{
		fileURLs: cfg.EnableFileURLs,
		noUpload: !cfg.EnableFileUpload,
		maxImage: max(cfg.MaxScreenshotBytes, 0),
		disabled: map[string]string{},
	}
	var err error
	if p.allowed, err = compile("PROXY_ALLOWED_DOMAINS", cfg.AllowedDomains); err != nil {
		return nil, err
	}
	if p.blocked, err = compile("PROXY_BLOCKED_DOMAINS", cfg.BlockedDomains); err != nil {
		return nil, err
	}
	for _, m := range p.allowed {
		p.allowSpec = append(p.allowSpec, m.spec)
	}
	if !cfg.EnableScriptEvaluation {
		for _, t := range scriptTools {
			p.disabled[t] = "PROXY_ENABLE_SCRIPT_EVALUATION=false"
		}
	}
	if !cfg.EnableFileUpload {
		for _, t := range uploadTools {
			p.disabled[t] = "PROXY_ENABLE_FILE_UPLOAD=false"
		}
	}
	if p.reserved, err = compileReserved(cfg.Reserved); err != nil {
		return nil, err
	}
	if p.secrets, err = compileSecrets(cfg.Secrets); err != nil {
		return nil, err
	}
	p.upArgs = upstreamArgs(p.allowed, p.blocked, cfg.EnableFileURLs)
	return p, nil
}

// ToolEnabled reports whether a tool is listed and callable.
func (p *Policy) ToolEnabled(name string) bool {
	_, off := p.disabled[name]
	return !off
}

// CheckCall refuses a call before it is recorded or forwarded. inputSchema is
// the tool's JSON schema from upstream's tools/list: every top-level property
// named url (or ending in "url", case-insensitive) is checked, so a new
// upstream tool that opens URLs is covered without a code change. The
// literal "url" argument is checked even if the schema does not declare it.
// The error is a *proxy.Error: TOOL_NOT_FOUND for a tool switched off,
// DOMAIN_BLOCKED for a refused URL, INVALID_PARAMETERS for a refused upload.
func (p *Policy) CheckCall(tool string, inputSchema json.RawMessage, args map[string]any) error {
	if sw, off := p.disabled[tool]; off {
		e := proxy.Errorf(proxy.ETOOLMISSING, "tool %q is disabled on this server (%s)", tool, sw)
		e.Details = map[string]any{"tool": tool}
		e.Suggestion = "Use the tools listed by GET /tools (or tools/list); the operator switched this one off."
		return e
	}
	for _, key := range urlKeys(inputSchema, args) {
		for _, u := range stringValues(args[key]) {
			if e := p.checkURL(u); e != nil {
				e.Details["tool"], e.Details["param"] = tool, key
				return e
			}
		}
	}
	if p.noUpload && tool == "browser_drop" && len(stringValues(args["paths"])) > 0 {
		e := proxy.Errorf(proxy.EINVALID, "browser_drop with local file paths uploads files, which is disabled on this server (PROXY_ENABLE_FILE_UPLOAD=false)")
		e.Details = map[string]any{"tool": tool, "param": "paths"}
		e.Suggestion = "Drop data (the data argument) instead of files."
		return e
	}
	return nil
}

// MaxImageBytes is the largest image that may be stored or returned; 0 is no limit.
func (p *Policy) MaxImageBytes() int64 { return p.maxImage }

// UpstreamArgs are @playwright/mcp flags that make upstream refuse the same
// hosts for what the page itself requests (sub-resources, link clicks,
// script navigations). Upstream documents them as advisory (redirects are
// not covered), which is why tool-call URLs are checked here. CIDR and IPv6
// entries have no upstream form and are enforced by the proxy only.
func (p *Policy) UpstreamArgs() []string { return append([]string(nil), p.upArgs...) }

// urlKeys lists the argument names that carry URLs for this tool.
func urlKeys(schema json.RawMessage, args map[string]any) []string {
	keys := map[string]bool{}
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	// A schema that does not decode leaves only the literal "url" check.
	if len(schema) > 0 && json.Unmarshal(schema, &s) == nil {
		for k := range s.Properties {
			if strings.HasSuffix(strings.ToLower(k), "url") {
				keys[k] = true
			}
		}
	}
	for k := range args {
		if strings.EqualFold(k, "url") {
			keys[k] = true
		}
	}
	out := make([]string, 0, len(keys))
	for k := range keys {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// stringValues returns a string argument, or the strings of an array one;
// other types carry no URL upstream could open (its schema validation
// rejects them).
func stringValues(v any) []string {
	switch v := v.(type) {
	case string:
		if v == "" {
			return nil
		}
		return []string{v}
	case []any:
		var out []string
		for _, e := range v {
			if s, ok := e.(string); ok && s != "" {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

func blocked(format string, args ...any) *proxy.Error {
	e := proxy.Errorf(proxy.EDOMAINBLOCKED, format, args...)
	e.Details = map[string]any{}
	return e
}

// FromConfig builds the policy proxy-server enforces, reading the secrets
// file. The secrets are deliberately not given to upstream (@playwright/mcp
// --secrets): upstream masks them in every file it writes, the storage-state
// file included, and a masked saved state would break session restore.
//
// reserved are the addresses of the proxy's own services (see
// Config.Reserved): proxy-server passes the address it listens on and the
// browser endpoints it uses.
func FromConfig(cfg config.Config, reserved ...string) (*Policy, error) {
	pc := Config{
		AllowedDomains:         cfg.AllowedDomains,
		BlockedDomains:         cfg.BlockedDomains,
		EnableFileURLs:         cfg.EnableFileURLs,
		EnableScriptEvaluation: cfg.EnableScriptEvaluation,
		EnableFileUpload:       cfg.EnableFileUpload,
		MaxScreenshotBytes:     cfg.MaxScreenshotBytes,
		Reserved:               reserved,
	}
	if cfg.SecretsFile != "" {
		secrets, err := LoadSecrets(cfg.SecretsFile)
		if err != nil {
			return nil, fmt.Errorf("PROXY_SECRETS_FILE: %w", err)
		}
		pc.Secrets = secrets
	}
	p, err := New(pc)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", config.ErrInvalid, err)
	}
	return p, nil
}
