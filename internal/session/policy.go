package session

import (
	"context"
	"encoding/json"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/catalog"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/redact"
)

// Policy is what the proxy enforces on calls whatever upstream does (real:
// *policy.Policy). The manager consults it before a call is recorded or
// forwarded, and runs everything it records or returns through it.
//
// It is deliberately never applied to the session's saved browser state
// (SaveState/SaveSessionState/RestoreState): cookies and storage must come
// back byte for byte or a restored session is logged out.
type Policy interface {
	// ToolEnabled is false for a tool the operator switched off: the
	// catalogue does not list it.
	ToolEnabled(name string) bool
	// CheckCall refuses a call the policy does not allow (a tool switched
	// off, a URL of a blocked host, an upload), given its decoded
	// arguments.
	CheckCall(tool string, inputSchema json.RawMessage, args map[string]any) error
	// Redact masks the configured secrets in s.
	Redact(s string) string
	// Masker masks the secrets in text and JSON documents, and in a document
	// replaces inline images over MaxImageBytes; the manager chains the
	// credential vault's values onto it (redact.Then), so that one walk
	// masks both.
	Masker() redact.Redactor
	// MaxImageBytes is the largest image kept; 0 is no limit.
	MaxImageBytes() int64
	// ImageOmitted is the message that stands in for an image over the limit.
	ImageOmitted(size int) string
	// IsReserved reports whether url is one of the proxy's own addresses,
	// where no session's page may stay (leaveReserved).
	IsReserved(url string) bool
}

// openPolicy allows everything and masks nothing (no Options.Policy).
type openPolicy struct{}

func (openPolicy) ToolEnabled(string) bool                                 { return true }
func (openPolicy) CheckCall(string, json.RawMessage, map[string]any) error { return nil }
func (openPolicy) Redact(s string) string                                  { return s }
func (openPolicy) Masker() redact.Redactor                                 { return redact.Redactor{} }
func (openPolicy) MaxImageBytes() int64                                    { return 0 }
func (openPolicy) ImageOmitted(int) string                                 { return "" }
func (openPolicy) IsReserved(string) bool                                  { return false }

// checkPolicy refuses a call the policy does not allow. A refusal names the
// session (the model must know which one an error is about), has the
// configured secrets masked and is logged, without the arguments.
func (m *Manager) checkPolicy(ctx context.Context, sessionID string, r *catalog.Resolved, p catalog.Params) error {
	err := m.opts.Policy.CheckCall(r.Tool.Name, r.Tool.InputSchema, p.Args)
	if err == nil {
		return nil
	}
	e := proxy.AsError(err)
	if e.Details == nil {
		e.Details = map[string]any{}
	}
	if sessionID != "" {
		e.Details["session_id"] = sessionID
	}
	// The URL in the details is the caller's own input; it may still carry
	// a secret, so mask it like everything returned.
	if u, ok := e.Details["url"].(string); ok {
		e.Details["url"] = m.opts.Policy.Redact(u)
	}
	e.Message = m.opts.Policy.Redact(e.Message)
	m.log.WarnContext(ctx, "tool call refused by policy", "session_id", sessionID, "tool", r.Tool.Name, "code", e.Code, "reason", e.Message)
	return e
}
