package api

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/go-chi/chi/v5"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
)

// The request defences (docs/API.md) run as router middleware,
// before every route and every mounted handler (/mcp), so that no endpoint
// can be added without them:
//
//   - Host: a browser tricked by DNS rebinding sends the attacker's name in
//     Host, so only loopback names, the address the server is bound to and
//     hosts the operator listed are served (403 HOST_NOT_ALLOWED).
//   - Origin: a cross-site page can always send simple requests; only pages
//     on loopback or listed origins may (403 ORIGIN_NOT_ALLOWED). Requests
//     without Origin (curl, mcp-bridge, MCP clients) are not from a page.
//   - Sec-Fetch-Site: a request a page of another origin started (a
//     link, a frame, a script's navigation; these carry no Origin) is
//     refused as well (403 ORIGIN_NOT_ALLOWED; see pagerequest.go).
//   - Authorization: with a token configured, every endpoint but /health
//     needs "Bearer <token>" (401 UNAUTHORIZED); /health stays open so
//     supervisors and the bridge's autostart can probe liveness, and so do
//     the inspector's static files (/ui/), which hold no data. The
//     inspector's pages cannot send a header on a download link, so they
//     carry instead a cookie POST /ui/login sets once given the token:
//     HttpOnly (no script reads it), SameSite=Strict (no other site's page
//     sends it), and a digest of the token rather than the token.
//     On /ws alone the token may come as the query parameter token
//     instead (browsers cannot set headers on a WebSocket); it is removed
//     from the request once checked, and no log line has the query.
//   - WebSocket pages: on /ws, and on any WebSocket handshake (a
//     session's live view), an Origin must also be this server's own or
//     listed; a loopback one of another port is not enough there
//     (refuseWebSocketPage says why).
//   - Role: the operator's token (PROXY_AUTH_TOKEN) opens everything. A
//     client token (PROXY_CLIENT_TOKENS_FILE) opens only the routes
//     registered as clients' (clientRoute, WithClientMount): /mcp and the
//     calls mcp-bridge makes; every other endpoint answers it 403
//     FORBIDDEN, so an endpoint added later is the operator's until it is
//     declared otherwise. Its requests carry the token's scope, from which
//     every client identity they act for is derived (clientIdentity, /mcp).

// WithAuthToken requires "Authorization: Bearer token" on every endpoint but
// /health; "" leaves the API open (PROXY_AUTH_TOKEN).
func WithAuthToken(token string) Option {
	return func(s *Server) {
		if token == "" {
			s.tokenHash = nil
			return
		}
		h := sha256.Sum256([]byte(token))
		s.tokenHash = h[:]
		mac := hmac.New(sha256.New, []byte(token))
		mac.Write([]byte("playwright-mcp-proxy inspector cookie"))
		s.uiCookie = hex.EncodeToString(mac.Sum(nil))
	}
}

// ClientToken is a token of MCP clients (PROXY_CLIENT_TOKENS_FILE); Name
// stands for it in logs.
type ClientToken struct {
	Name, Token string
}

// clientGrant is what a client token is known by once configured.
type clientGrant struct {
	name string
	// scope stands for the token in the identities its requests act for:
	// a digest, so the token itself is kept nowhere.
	scope string
}

// WithClientTokens lets these tokens use the MCP surfaces, each as a
// client of its own and never as the operator. They need WithAuthToken
// too: without an operator's token no request could be the operator's,
// and the operator's views answer only 401.
func WithClientTokens(tokens ...ClientToken) Option {
	return func(s *Server) { s.SetClientTokens(tokens...) }
}

// SetClientTokens replaces the client tokens (proxy-server's SIGHUP): the
// next request is judged by the new ones. A client keeps its identity, and
// so its sessions, as long as its token stays in the list.
func (s *Server) SetClientTokens(tokens ...ClientToken) {
	clients := map[[32]byte]clientGrant{}
	for _, t := range tokens {
		if t.Token == "" {
			continue
		}
		sum := sha256.Sum256([]byte(t.Token))
		scope := sha256.Sum256([]byte("playwright-mcp-proxy client token\x00" + t.Token))
		clients[sum] = clientGrant{name: t.Name, scope: hex.EncodeToString(scope[:])}
	}
	s.clients.Store(&clients)
}

// WithAllowedOrigins lists origins (scheme://host[:port]) allowed besides
// loopback ones (PROXY_ALLOWED_ORIGINS). Their hosts are also accepted in
// the Host header: an operator who lists a page's origin serves it under
// that name.
func WithAllowedOrigins(origins []string) Option {
	return func(s *Server) {
		for _, o := range origins {
			o = strings.TrimSpace(o)
			if o == "" {
				continue
			}
			norm, host, ok := normaliseOrigin(o)
			if !ok {
				s.log.Warn("ignoring an entry of PROXY_ALLOWED_ORIGINS that is not scheme://host[:port]", "origin", o)
				continue
			}
			s.allowedOrigins[norm] = true
			s.allowedHosts[host] = true
		}
	}
}

// WithAllowedHosts accepts these host names or addresses (no port) in the
// Host header besides loopback ones; proxy-server passes PROXY_HOST.
// Unspecified addresses (0.0.0.0, ::) name no host and are ignored.
func WithAllowedHosts(hosts ...string) Option {
	return func(s *Server) {
		for _, h := range hosts {
			h = strings.ToLower(strings.Trim(strings.TrimSpace(h), "[]"))
			if h == "" {
				continue
			}
			if ip := net.ParseIP(h); ip != nil && ip.IsUnspecified() {
				continue
			}
			s.allowedHosts[h] = true
		}
	}
}

// guard is the middleware enforcing Host, Origin and the bearer token, in
// that order: a rebinding page learns nothing, not even whether a token is set.
func (s *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !s.hostAllowed(r.Host) {
			e := proxy.Errorf(proxy.EHOST, "Host %q is not served here; use 127.0.0.1, localhost or [::1]", r.Host)
			e.Details = map[string]any{"host": r.Host}
			s.writeErr(w, r, e)
			return
		}
		// Origin is read from the header map directly: several Origin
		// headers are refused as a whole, not judged by the first one.
		if origins := r.Header.Values("Origin"); len(origins) > 0 && !(len(origins) == 1 && s.originAllowed(origins[0])) {
			e := proxy.Errorf(proxy.EORIGIN, "Origin %q may not use this server", strings.Join(origins, ", "))
			e.Details = map[string]any{"origin": strings.Join(origins, ", ")}
			s.writeErr(w, r, e)
			return
		}
		if fromOtherPage(r) {
			s.writeErr(w, r, refuseOtherPage(r))
			return
		}
		if e := s.refuseWebSocketPage(r); e != nil {
			s.writeErr(w, r, e)
			return
		}
		// Once client tokens were given, even an empty list of them keeps
		// the server closed.
		if r.URL.Path == "/health" || (s.tokenHash == nil && s.clients.Load() == nil) {
			next.ServeHTTP(w, withoutQueryToken(r))
			return
		}
		operator, client := s.authenticate(r)
		switch {
		case operator:
		case client != nil:
			if !s.clientMay(r) {
				s.log.Info("a client token was refused an endpoint of the operator's", "client_token", client.name, "method", r.Method, "path", r.URL.Path)
				s.writeErr(w, r, proxy.Errorf(proxy.EFORBIDDEN, "%s %s is the operator's; a client token opens only /mcp, /ws and the calls of an MCP client", r.Method, r.URL.Path))
				return
			}
			r = r.WithContext(proxy.WithTokenScope(r.Context(), client.scope))
		case !openPath(r):
			w.Header().Set("WWW-Authenticate", `Bearer realm="playwright-mcp-proxy"`)
			s.writeErr(w, r, proxy.Errorf(proxy.EUNAUTHORIZED, "a valid Authorization: Bearer token is required"))
			return
		}
		next.ServeHTTP(w, withoutQueryToken(r))
	})
}

// tokenParam is the query parameter that carries the token on /ws, where
// a browser's WebSocket cannot send an Authorization header. It is taken
// there only: elsewhere a token in a URL would be one more place (history,
// proxies' logs, Referer) where it leaks, for no need.
const tokenParam = "token"

// queryTokens returns the tokens of a /ws request's query: nil when it
// has none, or for any other path.
func queryTokens(r *http.Request) []string {
	if r.URL.Path != wsPath {
		return nil
	}
	return r.URL.Query()[tokenParam]
}

// withoutQueryToken returns r without the token of its query, so that
// nothing past the defences (a handler, a log line) can see it.
func withoutQueryToken(r *http.Request) *http.Request {
	if r.URL.Path != wsPath {
		return r
	}
	// Parsed, not searched: the name may be percent-encoded.
	q := r.URL.Query()
	if !q.Has(tokenParam) {
		return r
	}
	q.Del(tokenParam)
	r2 := r.Clone(r.Context())
	r2.URL.RawQuery = q.Encode()
	r2.RequestURI = r2.URL.RequestURI()
	return r2
}

// refuseWebSocketPage refuses a page's WebSocket to /ws from an origin
// that is neither this server's own nor listed in PROXY_ALLOWED_ORIGINS.
// Browsers send no Sec-Fetch-Site on a WebSocket handshake, and a
// WebSocket is not held back by CORS as a page's fetch of /mcp is: without
// this, any page on a loopback origin (a local dev server, a page a
// session's browser opened, all on this machine) could become an MCP
// client. Clients that are not pages send no Origin.
func (s *Server) refuseWebSocketPage(r *http.Request) *proxy.Error {
	origin := r.Header.Get("Origin")
	if (r.URL.Path != wsPath && !isWebSocket(r)) || origin == "" {
		return nil
	}
	norm, _, ok := normaliseOrigin(origin)
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	own, _, _ := normaliseOrigin(scheme + "://" + r.Host)
	if ok && (norm == own || s.allowedOrigins[norm]) {
		return nil
	}
	e := proxy.Errorf(proxy.EORIGIN, "a WebSocket from a page of %q may not use %s: only pages of this server's own origin or of one listed in PROXY_ALLOWED_ORIGINS may", origin, r.URL.Path)
	e.Details = map[string]any{"origin": origin}
	return e
}

// isWebSocket reports whether r opens a WebSocket: every one (/ws, a
// session's live view) is held to refuseWebSocketPage.
func isWebSocket(r *http.Request) bool {
	return strings.EqualFold(r.Header.Get("Upgrade"), "websocket")
}

// clientMay reports whether a client token may make request r: whether it
// matches a route registered as clients', the way the router matches it.
func (s *Server) clientMay(r *http.Request) bool {
	path := r.URL.RawPath
	if path == "" {
		path = r.URL.Path
	}
	return s.clientRoutes.Match(chi.NewRouteContext(), r.Method, path)
}

// openPath reports whether r needs no token: /health, and the inspector's
// static files and its login.
func openPath(r *http.Request) bool {
	p := r.URL.Path
	return p == "/health" || p == "/ui" || strings.HasPrefix(p, "/ui/")
}

// uiCookieName is the inspector's cookie.
const uiCookieName = "pwproxy_ui"

// authenticate tells whose request r is: the operator's (their token, or
// the inspector's cookie standing for it), a client token's, or nobody's.
// Tokens are compared as SHA-256 digests, the operator's in constant time,
// so that neither a token's bytes nor its length can be learned from
// timing; a client token is looked up by its digest, which tells nothing
// of the token either.
func (s *Server) authenticate(r *http.Request) (operator bool, client *clientGrant) {
	auths := r.Header.Values("Authorization")
	if len(auths) == 0 {
		if tokens := queryTokens(r); tokens != nil {
			if len(tokens) != 1 {
				return false, nil
			}
			return s.tokenRole(strings.TrimSpace(tokens[0]))
		}
		c, err := r.Cookie(uiCookieName)
		return err == nil && s.uiCookie != "" && subtle.ConstantTimeCompare([]byte(c.Value), []byte(s.uiCookie)) == 1, nil
	}
	if len(auths) != 1 {
		return false, nil
	}
	scheme, token, ok := strings.Cut(auths[0], " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return false, nil
	}
	return s.tokenRole(strings.TrimSpace(token))
}

// tokenRole is authenticate for one token.
func (s *Server) tokenRole(token string) (operator bool, client *clientGrant) {
	got := sha256.Sum256([]byte(token))
	if s.tokenHash != nil && subtle.ConstantTimeCompare(got[:], s.tokenHash) == 1 {
		return true, nil
	}
	if clients := s.clients.Load(); clients != nil {
		if g, ok := (*clients)[got]; ok {
			return false, &g
		}
	}
	return false, nil
}

func (s *Server) hostAllowed(hostport string) bool {
	// HTTP/1.0 requests may omit Host; they cannot come from a browser.
	if hostport == "" {
		return true
	}
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.ToLower(strings.Trim(host, "[]"))
	return isLoopbackHost(host) || s.allowedHosts[host]
}

func (s *Server) originAllowed(origin string) bool {
	norm, host, ok := normaliseOrigin(origin)
	if !ok {
		return false // "null" (sandboxed frames, file://) and garbage
	}
	if isLoopbackHost(host) {
		return true
	}
	return s.allowedOrigins[norm]
}

// normaliseOrigin returns scheme://host[:port] in lower case with default
// ports dropped, and the bare host, or ok=false when o is not an http(s)
// origin.
func normaliseOrigin(o string) (norm, host string, ok bool) {
	u, err := url.Parse(strings.TrimSpace(o))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil ||
		(u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		return "", "", false
	}
	scheme := strings.ToLower(u.Scheme)
	host = strings.ToLower(u.Hostname())
	port := u.Port()
	if (scheme == "http" && port == "80") || (scheme == "https" && port == "443") {
		port = ""
	}
	hp := host
	if strings.Contains(host, ":") {
		hp = "[" + host + "]"
	}
	if port != "" {
		hp += ":" + port
	}
	return scheme + "://" + hp, host, true
}

// isLoopbackHost is true for localhost and loopback addresses (127.0.0.0/8,
// ::1). Other names are not resolved: resolving is what rebinding abuses.
func isLoopbackHost(host string) bool {
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// handleUILogin takes {"token"} and, when it is the server's, sets the
// inspector's cookie (204); another token is 401. Without a token set there
// is nothing to log in to (204).
func (s *Server) handleUILogin(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Token string `json:"token"`
	}
	if err := decodeBody(r, &body, false); err != nil {
		s.writeErr(w, r, err)
		return
	}
	if s.tokenHash != nil {
		operator, client := s.tokenRole(strings.TrimSpace(body.Token))
		switch {
		case client != nil:
			s.writeErr(w, r, proxy.Errorf(proxy.EFORBIDDEN, "that is a client token; the inspector is the operator's"))
			return
		case !operator:
			s.writeErr(w, r, proxy.Errorf(proxy.EUNAUTHORIZED, "that is not the server's token"))
			return
		}
		http.SetCookie(w, &http.Cookie{Name: uiCookieName, Value: s.uiCookie, Path: "/", HttpOnly: true,
			SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
	}
	w.WriteHeader(http.StatusNoContent)
}
