package session

import (
	"context"
	"encoding/json"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/upstream"
)

// Policy is what the proxy enforces on calls whatever upstream does (real:
// *policy.Policy). The manager consults it before a call is recorded or
// forwarded, and runs everything it records or returns through it.
//
// It is deliberately never applied to the session's saved browser state
// (SaveState/SaveSessionState/RestoreState): cookies and storage must come
// back byte for byte or a restored session is logged out.
type Policy interface {
	// ToolEnabled false hides a tool from Tools.
	ToolEnabled(name string) bool
	// CheckCall refuses a call (a *proxy.Error) from the tool's name, its
	// upstream input schema and the call's arguments.
	CheckCall(tool string, inputSchema, params json.RawMessage) error
	// Redact masks secrets in text.
	Redact(s string) string
	// RedactJSON masks secrets in a JSON document (and drops inline images
	// over MaxImageBytes), returning it unchanged when there is nothing to do.
	RedactJSON(raw json.RawMessage) json.RawMessage
	// MaxImageBytes is the largest image kept; 0 is no limit.
	MaxImageBytes() int64
	// ImageOmitted is the message that stands in for an image over the limit.
	ImageOmitted(size int) string
}

// openPolicy allows everything and masks nothing (no Options.Policy).
type openPolicy struct{}

func (openPolicy) ToolEnabled(string) bool                                  { return true }
func (openPolicy) CheckCall(string, json.RawMessage, json.RawMessage) error { return nil }
func (openPolicy) Redact(s string) string                                   { return s }
func (openPolicy) RedactJSON(raw json.RawMessage) json.RawMessage           { return raw }
func (openPolicy) MaxImageBytes() int64                                     { return 0 }
func (openPolicy) ImageOmitted(int) string                                  { return "" }

// visibleTools is tools without the ones the policy switched off.
func visibleTools(p Policy, tools []upstream.Tool) []upstream.Tool {
	out := make([]upstream.Tool, 0, len(tools))
	for _, t := range tools {
		if p.ToolEnabled(t.Name) {
			out = append(out, t)
		}
	}
	return out
}

// checkPolicy refuses a call before anything is recorded or forwarded.
// Refused calls are not written to the requests table: that table is the
// record of what was sent to the browser, and a refused call never was. They
// are logged (without arguments, which may hold secrets) instead.
func (m *Manager) checkPolicy(ctx context.Context, req CallRequest, tool upstream.Tool, params json.RawMessage) error {
	err := m.opts.Policy.CheckCall(req.Tool, tool.InputSchema, params)
	if err == nil {
		return nil
	}
	e := proxy.AsError(err)
	if e.Details == nil {
		e.Details = map[string]any{}
	}
	if req.SessionID != "" {
		e.Details["session_id"] = req.SessionID
	}
	// The URL in the details is the caller's own input; it may still carry
	// a secret, so mask it like everything returned.
	if u, ok := e.Details["url"].(string); ok {
		e.Details["url"] = m.opts.Policy.Redact(u)
	}
	e.Message = m.opts.Policy.Redact(e.Message)
	m.log.WarnContext(ctx, "tool call refused by policy", "session_id", req.SessionID, "tool", req.Tool, "code", e.Code, "reason", e.Message)
	return e
}

// redactRecord masks secrets in everything a response row and its console
// rows hold, and drops images over the size limit. It reports the size of
// the largest image dropped (0: none).
func (m *Manager) redactRecord(resp *proxy.Response, parsed *upstream.Parsed, ing *upstream.Ingested) int {
	p := m.opts.Policy
	// Secrets of the policy (PROXY_SECRETS_FILE), then credentials of the
	// vault (typed through placeholders).
	text := func(s string) string { return m.maskCredentials(p.Redact(s)) }
	doc := func(raw json.RawMessage) json.RawMessage { return m.maskCredentialsJSON(p.RedactJSON(raw)) }
	resp.Result = string(doc(json.RawMessage(resp.Result)))
	resp.ErrorMessage = text(resp.ErrorMessage)
	ing.Snapshot = text(ing.Snapshot)
	ing.ConsoleRaw = text(ing.ConsoleRaw)
	for i := range ing.Console {
		ing.Console[i].Message = text(ing.Console[i].Message)
		if len(ing.Console[i].Location) > 0 {
			ing.Console[i].Location = doc(ing.Console[i].Location)
		}
	}
	parsed.PageURL = text(parsed.PageURL)
	parsed.PageTitle = text(parsed.PageTitle)
	parsed.ErrorText = text(parsed.ErrorText)
	parsed.ResultText = text(parsed.ResultText)

	limit, dropped := p.MaxImageBytes(), 0
	if limit <= 0 {
		return 0
	}
	kept := ing.Images[:0]
	for _, im := range ing.Images {
		if int64(len(im.Data)) > limit {
			dropped = max(dropped, len(im.Data))
			continue
		}
		kept = append(kept, im)
	}
	ing.Images = kept
	return dropped
}
