package session

import (
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
	// The catalogue consults it: ToolEnabled false hides a tool, CheckCall
	// refuses a call, Redact masks secrets in text.
	catalog.Policy
	// Masker masks the secrets in text and JSON documents, and in a document
	// replaces inline images over MaxImageBytes; the manager chains the
	// credential vault's values onto it (redact.Then), so that one walk
	// masks both.
	Masker() redact.Redactor
	// MaxImageBytes is the largest image kept; 0 is no limit.
	MaxImageBytes() int64
	// ImageOmitted is the message that stands in for an image over the limit.
	ImageOmitted(size int) string
}

// openPolicy allows everything and masks nothing (no Options.Policy).
type openPolicy struct{ catalog.Open }

func (openPolicy) Masker() redact.Redactor { return redact.Redactor{} }
func (openPolicy) MaxImageBytes() int64    { return 0 }
func (openPolicy) ImageOmitted(int) string { return "" }
