package api

import (
	"net/http"
	"strings"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/wire"
)

// Bounds of a client identity: long enough that it cannot be guessed.
const (
	minClientID = 26 // crypto/rand.Text: 130 random bits
	maxClientID = 128
)

// clientIdentity puts the client a request acts for into its context.
func (s *Server) clientIdentity(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ids := r.Header.Values(wire.ClientIDHeader)
		scope, scoped := proxy.TokenScopeFrom(r.Context())
		if len(ids) == 0 {
			if scoped {
				// A client token without an identity of its own is one
				// client: the token's.
				r = r.WithContext(proxy.WithClient(r.Context(), proxy.NewClientID("token", scope)))
			}
			next.ServeHTTP(w, r)
			return
		}
		if len(ids) != 1 || !validClientID(ids[0]) {
			e := proxy.Errorf(proxy.EINVALID, "%s must be one value of %d to %d characters A-Z, a-z, 0-9, - or _", wire.ClientIDHeader, minClientID, maxClientID)
			e.Details = map[string]any{"field": wire.ClientIDHeader}
			s.writeErr(w, r, e)
			return
		}
		kind := "bridge"
		if scoped {
			// Bound to the token: the same identity sent with another
			// token (or the operator's) is another client.
			kind = "bridge@" + scope
		}
		id := proxy.NewClientID(kind, ids[0])
		next.ServeHTTP(w, r.WithContext(proxy.WithClient(r.Context(), id)))
	})
}

func validClientID(v string) bool {
	return len(v) >= minClientID && len(v) <= maxClientID && !strings.ContainsFunc(v, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_')
	})
}
