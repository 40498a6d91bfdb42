package session

import (
	"encoding/json"

	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/catalog"
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
