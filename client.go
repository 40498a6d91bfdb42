package proxy

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
)

// ClientID names the MCP client a session belongs to: one mcp-bridge
// process or one MCP session of /mcp. It is a digest of the client's secret
// identity, so neither the record nor a log line can be used to act as that
// client. The zero value is no client: the operator using the HTTP API
// directly, who sees every session.
type ClientID string

// NewClientID derives the ClientID of a client of the given kind ("bridge",
// "mcp") from its secret identity. The kind keeps one kind of client from
// claiming another's identity.
func NewClientID(kind, secret string) ClientID {
	sum := sha256.Sum256([]byte(kind + "\x00" + secret))
	return ClientID(hex.EncodeToString(sum[:]))
}

type clientKey struct{}

// WithClient returns ctx acting for client id.
func WithClient(ctx context.Context, id ClientID) context.Context {
	return context.WithValue(ctx, clientKey{}, id)
}

// ClientFrom returns the client ctx acts for; ok is false for the operator.
func ClientFrom(ctx context.Context) (id ClientID, ok bool) {
	id, ok = ctx.Value(clientKey{}).(ClientID)
	return id, ok
}

// CanSee reports whether the caller of ctx may see a session owned by owner:
// the operator sees every session, an MCP client only its own. To anyone
// else a session and its refs do not exist (SessionNotFound, RefNotFound).
func CanSee(ctx context.Context, owner ClientID) bool {
	id, ok := ClientFrom(ctx)
	return !ok || id == owner
}

// SessionNotFound is the error for a session id that does not exist for the
// caller. A session of another client gets exactly this error too, so an
// answer never tells whether an id exists.
func SessionNotFound(id string) *Error {
	return Errorf(ESESSIONMISSING, "session %q not found", id)
}

// RefNotFound is the error for a ref_id that does not exist for the caller,
// whether it is unknown or another client's.
func RefNotFound(ref string) *Error {
	return Errorf(EREFMISSING, "ref_id %q not found", ref)
}

type tokenScopeKey struct{}

// WithTokenScope returns ctx of a request made with a client token
// (PROXY_CLIENT_TOKENS_FILE). scope is a digest standing for that token,
// never the token. Every client identity such a request acts for is
// derived from scope, so a holder of one token can never act as a client
// of another token, nor as the operator.
func WithTokenScope(ctx context.Context, scope string) context.Context {
	return context.WithValue(ctx, tokenScopeKey{}, scope)
}

// TokenScopeFrom returns the client token scope of ctx; ok is false for a
// request made with the operator's token or none.
func TokenScopeFrom(ctx context.Context) (scope string, ok bool) {
	scope, ok = ctx.Value(tokenScopeKey{}).(string)
	return scope, ok
}
