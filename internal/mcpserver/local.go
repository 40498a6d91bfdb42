package mcpserver

import (
	"context"
	"encoding/json"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/content"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/session"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/toolset"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/upstream"
)

// Sessions is what the in-process backend needs of the session manager
// (a subset of api.Sessions, so the same *session.Manager serves both).
type Sessions interface {
	Create(ctx context.Context) (*proxy.Session, error)
	Get(ctx context.Context, id string) (*proxy.Session, error)
	List(ctx context.Context) ([]*proxy.Session, error)
	Close(ctx context.Context, id string) error
	Resume(ctx context.Context, id string) (*proxy.Session, bool, error)
	Call(ctx context.Context, req session.CallRequest) (*proxy.CallResult, error)
	Validate(ctx context.Context, tool string, params json.RawMessage) error
	Tools(ctx context.Context) ([]upstream.Tool, error)
	AddCredential(value string) (placeholder string, err error)
}

// ContentReader reads the record (content.Service).
type ContentReader interface {
	Get(ctx context.Context, refID string, search content.Query, resetCursor bool) (*content.Content, error)
	Console(ctx context.Context, refID, level string) (string, error)
	Peek(ctx context.Context, refID string) (*content.Content, error)
}

// Local is the Backend of /mcp: the session manager and the record of the
// same process, asked directly instead of over HTTP as the bridge does. It
// goes to exactly the methods the HTTP API handlers call, so both transports
// answer the same. Every call acts for the MCP session it came in (acting):
// that client sees its own sessions and refs, nobody else's.
type Local struct {
	sessions Sessions
	content  ContentReader
	groups   toolset.Selection
}

// NewLocal returns a Backend over an in-process session manager and record,
// listing the tool groups selected (PROXY_TOOLSETS) unless a request makes
// its own choice (toolset.WithSelection).
func NewLocal(s Sessions, c ContentReader, groups toolset.Selection) *Local {
	return &Local{sessions: s, content: c, groups: groups}
}

// Tools implements Backend with the catalogue GET /tools serves.
func (l *Local) Tools(ctx context.Context) ([]Tool, error) {
	up, err := l.sessions.Tools(ctx)
	if err != nil {
		return nil, err
	}
	return Catalog(up, toolset.FromContext(ctx, l.groups)), nil
}

// CreateSession implements Backend.
func (l *Local) CreateSession(ctx context.Context) (*proxy.Session, error) {
	return l.sessions.Create(acting(ctx))
}

// CloseSession implements Backend.
func (l *Local) CloseSession(ctx context.Context, id string) error {
	return l.sessions.Close(acting(ctx), id)
}

// ResumeSession implements Backend.
func (l *Local) ResumeSession(ctx context.Context, id string) (*proxy.Session, bool, error) {
	return l.sessions.Resume(acting(ctx), id)
}

// ListSessions implements Backend.
func (l *Local) ListSessions(ctx context.Context) ([]*proxy.Session, error) {
	return l.sessions.List(acting(ctx))
}

// Call implements Backend.
func (l *Local) Call(ctx context.Context, sessionID, tool string, params json.RawMessage) (*proxy.CallResult, error) {
	return l.sessions.Call(acting(ctx), session.CallRequest{SessionID: sessionID, Tool: tool, Params: params, Changes: true})
}

// Validate implements Backend.
func (l *Local) Validate(ctx context.Context, tool string, params json.RawMessage) error {
	return l.sessions.Validate(acting(ctx), tool, params)
}

// Content implements Backend.
func (l *Local) Content(ctx context.Context, refID string, search content.Query, reset bool) (*content.Content, error) {
	return l.content.Get(acting(ctx), refID, search, reset)
}

// Console implements Backend.
func (l *Local) Console(ctx context.Context, refID, level string) (string, error) {
	return l.content.Console(acting(ctx), refID, level)
}

// GetSession implements Backend.
func (l *Local) GetSession(ctx context.Context, id string) (*proxy.Session, error) {
	return l.sessions.Get(acting(ctx), id)
}

// Peek implements Backend.
func (l *Local) Peek(ctx context.Context, refID string) (*content.Content, error) {
	return l.content.Peek(acting(ctx), refID)
}

// AddCredential implements Backend.
func (l *Local) AddCredential(_ context.Context, value string) (string, error) {
	return l.sessions.AddCredential(value)
}

// MCPClientID is the owner of the browser sessions an MCP session over
// /mcp creates. mcp-go's session ids are random UUIDs, handed only to the
// client that initialized the session.
func MCPClientID(mcpSessionID string) proxy.ClientID {
	return proxy.NewClientID("mcp", mcpSessionID)
}

// acting returns ctx acting for the MCP session of the request. A ctx that
// names its client already keeps it (the end of an MCP session acts for
// the session that ended). Without an MCP session every such call is one
// and the same client, never the operator.
func acting(ctx context.Context) context.Context {
	if _, ok := proxy.ClientFrom(ctx); ok {
		return ctx
	}
	return proxy.WithClient(ctx, MCPClientID(clientKey(ctx)))
}
