package session

import (
	"encoding/json"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/catalog"
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
	// The catalogue consults it: ToolEnabled false hides a tool, CheckCall
	// refuses a call, Redact masks secrets in text.
	catalog.Policy
	// RedactJSON masks secrets in a JSON document (and drops inline images
	// over MaxImageBytes), returning it unchanged when there is nothing to do.
	RedactJSON(raw json.RawMessage) json.RawMessage
	// MaxImageBytes is the largest image kept; 0 is no limit.
	MaxImageBytes() int64
	// ImageOmitted is the message that stands in for an image over the limit.
	ImageOmitted(size int) string
}

// openPolicy allows everything and masks nothing (no Options.Policy).
type openPolicy struct{ catalog.Open }

func (openPolicy) RedactJSON(raw json.RawMessage) json.RawMessage { return raw }
func (openPolicy) MaxImageBytes() int64                           { return 0 }
func (openPolicy) ImageOmitted(int) string                        { return "" }

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
