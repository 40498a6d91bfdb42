package proxy

import (
	"context"
	"encoding/json"
)

// SessionService is what the HTTP API and the MCP server need of browser
// sessions. The session manager implements it in the server's process;
// mcp-bridge's client implements it over the HTTP API, so the MCP surface
// is the same code on either side.
type SessionService interface {
	// CreateSession starts a session, shaped by opts when given (at most
	// one; bad options are INVALID_PARAMETERS naming the field, and nothing
	// is created).
	CreateSession(ctx context.Context, opts ...BrowserOptions) (*Session, error)
	// GetSession returns one session (SESSION_NOT_FOUND when unknown, or
	// another client's).
	GetSession(ctx context.Context, id string) (*Session, error)
	ListSessions(ctx context.Context) ([]*Session, error)
	CloseSession(ctx context.Context, id string) error
	// ResumeSession brings a suspended session back now; restored reports
	// whether it came back in a new worker with its saved state.
	ResumeSession(ctx context.Context, id string) (s *Session, restored bool, err error)
	// Call forwards one tool call to a session and records it. A tool that
	// ran and failed in the browser is a CallResult with status error; an
	// error is a call refused or lost before it had an outcome.
	Call(ctx context.Context, req CallRequest) (*CallResult, error)
	// Validate refuses a call as Call would before it reaches a session,
	// without naming one.
	Validate(ctx context.Context, tool string, params json.RawMessage) error
	// Tools is the tool list for the tool groups the caller's context
	// selects: upstream's and the proxy's own.
	Tools(ctx context.Context) ([]Tool, error)
	// AddCredential puts a value in the credential vault and returns the
	// placeholder that stands for it in tool calls.
	AddCredential(ctx context.Context, value string) (placeholder string, err error)
}

// ContentService reads the record of calls: what get_content and
// get_console_content answer.
type ContentService interface {
	// Content returns a ref's snapshot (or result text) through its diff
	// cursor, or what a search of it shows.
	Content(ctx context.Context, refID string, q Query, resetCursor bool) (*Content, error)
	// Console returns a ref's console messages at level or above.
	Console(ctx context.Context, refID, level string) (string, error)
	// Peek returns a ref's whole content and images without touching its
	// diff cursor.
	Peek(ctx context.Context, refID string) (*Content, error)
	// Images returns a ref's stored images without touching its diff
	// cursor.
	Images(ctx context.Context, refID string) ([]Image, error)
	// Calls returns every call of a session, as recorded (secrets masked),
	// in the order they were made.
	Calls(ctx context.Context, sessionID string) ([]Call, error)
	// Events returns what happened to a session besides its calls
	// (suspends, crashes, restarts, moves), in order.
	Events(ctx context.Context, sessionID string) ([]SessionEvent, error)
	// Download returns one stored download of a ref, with its bytes:
	// EREFMISSING for an unknown ref (or another client's), EINVALID for a
	// name that could not be one, EDOWNLOADMISSING when the ref has no
	// stored download of that name.
	Download(ctx context.Context, refID, name string) (*Download, error)
}

// Tool is one tool as clients see it. Its schema stays raw JSON so that no
// keyword a call is checked against (nested anyOf, enums, bounds) is lost
// on the way.
type Tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"inputSchema"`
	Annotations json.RawMessage `json:"annotations,omitempty"`
	// Proxy marks the proxy's session and content tools, which take no
	// default session.
	Proxy bool `json:"x-proxy,omitempty"`
	// Group is the tool group the tool belongs to. It is not sent: a
	// client chooses groups by name on its server.
	Group string `json:"-"`
}

// CallRequest is one tool call addressed to a session.
type CallRequest struct {
	SessionID string
	Tool      string
	Params    json.RawMessage
	// RequestID is the caller's own id for the call, optional; it becomes
	// the ref_id.
	RequestID string
	// Changes asks for the summary of what the call did to the page
	// (CallResult.Changes): what MCP answers show.
	Changes bool
}

// Query is a search of a ref's content.
type Query struct {
	// Text is a substring to find, or with Regex an RE2 regular expression
	// matched against each line (without its line break).
	Text  string
	Regex bool
	// CaseSensitive turns off the default case-insensitivity (both sides
	// lower-cased for text, (?i) for a regular expression).
	CaseSensitive bool
	// Outline shows the answer as answers show pages, the matching lines
	// as they are: what the model reads through MCP.
	Outline bool
}

// Content is what a read of a ref returns.
type Content struct {
	// Text is the view (whole, or only its new tail), "" when Unchanged.
	Text string
	// Images are the ref's stored images. They come with every read that
	// returns the whole view and are left out of incremental and unchanged
	// reads, since the caller already has them; a reset brings them back.
	Images []Image
	// Unchanged is true when the view is exactly what the previous read of
	// this ref returned; Text is then "".
	Unchanged bool
	// Snapshot is true when the ref has a page snapshot (yaml) and Text is
	// (a view of) it; false when Text comes from the result text.
	Snapshot bool
	// NoMatch is true when a search found nothing (Text is then ""): an
	// answer of its own, never to be taken for an unchanged read.
	NoMatch bool
}
