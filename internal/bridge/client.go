// Package bridge owns mcp-bridge's side of the HTTP API: a client of
// proxy-server that implements proxy.SessionService and
// proxy.ContentService, so the stdio bridge serves the same tools as /mcp,
// the bridge's MCP_PROXY_* configuration, and how it reads its stdin
// (PollableInput).
//
// The client rides out a proxy-server that is down or restarting: a request
// that certainly never reached the server (the connection was refused or
// failed before it was made) is sent again with backoff, for at most the
// retry timeout, after asking the optional starter (autostart) to bring a
// server up. A request that may have reached the server is never sent again
// — a click is not idempotent — and fails with UPSTREAM_UNAVAILABLE,
// retryable. It sends its version with every request and warns when
// proxy-server reports another one.
//
// It keeps no state of its own beyond the connection and the last server
// version seen (the default session lives in mcpserver, so it survives a
// server restart unchanged), and it must never write to stdout: that is
// the MCP channel.
package bridge

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/wire"
)

// DefaultRetryTimeout bounds how long a request waits for an unreachable
// proxy-server (MCP_PROXY_RETRY_TIMEOUT).
const DefaultRetryTimeout = 30 * time.Second

// Backoff between attempts to reach proxy-server.
const (
	firstRetryDelay = 100 * time.Millisecond
	maxRetryDelay   = 2 * time.Second
)

// Client talks to one proxy-server.
type Client struct {
	base         *url.URL
	token        string
	http         *http.Client
	version      string
	log          *slog.Logger
	retryTimeout time.Duration
	starter      func(context.Context) error
	// clientID is this client's secret identity, random per Client: one
	// bridge process is one MCP client.
	clientID string
	// toolsets is this client's choice of tool groups, sent with every
	// request ("": the server's).
	toolsets string

	mu         sync.Mutex
	seenServer *string // last server version compared with ours
}

// Option configures a Client.
type Option func(*Client)

// WithVersion sets the version sent in wire.BridgeVersionHeader and
// compared with the server's.
func WithVersion(v string) Option { return func(c *Client) { c.version = v } }

// WithLogger sets where warnings (unreachable server, version mismatch) go.
func WithLogger(l *slog.Logger) Option { return func(c *Client) { c.log = l } }

// WithRetryTimeout bounds the retrying of requests that never reached the
// server (DefaultRetryTimeout by default; 0 sends each request once).
func WithRetryTimeout(d time.Duration) Option { return func(c *Client) { c.retryTimeout = d } }

// WithStarter sets a function called (once per request) when proxy-server
// cannot be reached, before retrying: autostart's Ensure.
func WithStarter(f func(context.Context) error) Option { return func(c *Client) { c.starter = f } }

// WithToolsets sets the client's own choice of tool groups (a comma list,
// or all), sent with every request: the server lists, and accepts calls
// of, those groups instead of its own PROXY_TOOLSETS.
func WithToolsets(list string) Option { return func(c *Client) { c.toolsets = list } }

// WithHTTPClient sends the requests with hc instead of the bridge's own
// one-conversation transport: a caller with many requests at once (the
// benchmark) brings its own connection pool and per-request timeout.
func WithHTTPClient(hc *http.Client) Option { return func(c *Client) { c.http = hc } }

// NewClient returns a client of the proxy-server at baseURL.
func NewClient(baseURL, token string, opts ...Option) (*Client, error) {
	u, err := url.Parse(strings.TrimRight(baseURL, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("MCP_PROXY_URL %q is not an http(s) URL", baseURL)
	}
	// No client-wide timeout: a browser call may legitimately take minutes;
	// the server bounds it (PROXY_CALL_TIMEOUT) and ctx bounds the wait.
	hc := &http.Client{}
	if u.Scheme == "http" {
		hc.Transport = &connTransport{}
	}
	c := &Client{base: u, token: token, http: hc, version: "dev", retryTimeout: DefaultRetryTimeout, clientID: rand.Text()}
	for _, o := range opts {
		o(c)
	}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	return c, nil
}

// Once returns a client acting as the same MCP client that sends each
// request once: no waiting for an unreachable server, no autostart. For
// leaving, when a server that is gone has nothing left to close.
func (c *Client) Once() *Client {
	return &Client{base: c.base, token: c.token, http: c.http, version: c.version, log: c.log, clientID: c.clientID, toolsets: c.toolsets}
}

// Health is proxy-server's answer to GET /health.
type Health = wire.Health

// ErrNotProxyServer is wrapped by Health's error when something answers
// at the URL, but not as proxy-server does: MCP_PROXY_URL names another
// service, and no amount of waiting changes that.
var ErrNotProxyServer = errors.New("not a proxy-server")

// ErrCannotStart, wrapped by a starter's error, says that no retry can
// help (the data directory cannot be written, say): the request fails at
// once with that error instead of waiting out the retry timeout.
var ErrCannotStart = errors.New("proxy-server cannot be started")

// Hopeless reports whether err, from Health, is one that no wait can
// change: anything but a server not reachable (yet), or a wait that ended.
func Hopeless(err error) bool {
	switch {
	case err == nil:
		return false
	case errors.Is(err, ErrNotProxyServer), errors.Is(err, ErrCannotStart):
		return true
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return false
	}
	var pe *proxy.Error
	return errors.As(err, &pe) && pe.Code != proxy.EUNAVAILABLE
}

// Health asks proxy-server for its health (retrying while it cannot be
// reached, like every request) and compares its version with ours. A
// degraded server (503 with a health body) is an answer, not an error; an
// answer that is neither a health body nor proxy-server's error body is
// ErrNotProxyServer.
func (c *Client) Health(ctx context.Context) (*Health, error) {
	status, data, err := c.roundTrip(ctx, http.MethodGet, "/health", nil)
	if err != nil {
		return nil, err
	}
	var h Health
	if (status == http.StatusOK || status == http.StatusServiceUnavailable) && json.Unmarshal(data, &h) == nil && h.Status != "" {
		c.checkVersion(h.Version)
		return &h, nil
	}
	var eb wire.ErrorBody
	if json.Unmarshal(data, &eb) == nil && eb.Error != "" {
		return nil, decodeError(status, data) // proxy-server refused: its code says why
	}
	return nil, fmt.Errorf("%w: %s answered GET /health with %d %s (%.120q); check MCP_PROXY_URL",
		ErrNotProxyServer, c.base, status, http.StatusText(status), data)
}

// checkVersion warns, once per server version, when the server runs
// another version than the bridge. It never refuses to work.
func (c *Client) checkVersion(server string) {
	c.mu.Lock()
	same := c.seenServer != nil && *c.seenServer == server
	c.seenServer = &server
	c.mu.Unlock()
	if same || server == c.version {
		return
	}
	shown := server
	if shown == "" {
		shown = "unknown (it does not report one)"
	}
	c.log.Warn("mcp-bridge and proxy-server versions differ; tools may not match: rebuild or reinstall both (make install) and restart proxy-server",
		"bridge_version", c.version, "server_version", shown, "proxy", c.base.String())
}

// Tools implements proxy.SessionService.
func (c *Client) Tools(ctx context.Context) ([]proxy.Tool, error) {
	var out wire.ToolsBody
	if err := c.do(ctx, http.MethodGet, "/tools", nil, &out); err != nil {
		return nil, err
	}
	return out.Tools, nil
}

// CreateSession implements proxy.SessionService: the options travel as
// POST /sessions' body.
func (c *Client) CreateSession(ctx context.Context, opts ...proxy.BrowserOptions) (*proxy.Session, error) {
	body, err := proxy.OneOf(opts)
	if err != nil {
		return nil, err
	}
	var s proxy.Session
	if err := c.do(ctx, http.MethodPost, "/sessions", body, &s); err != nil {
		return nil, err
	}
	return &s, nil
}

// CloseSession implements proxy.SessionService.
func (c *Client) CloseSession(ctx context.Context, id string) error {
	return c.do(ctx, http.MethodDelete, "/sessions/"+url.PathEscape(id), nil, nil)
}

// ResumeSession implements proxy.SessionService.
func (c *Client) ResumeSession(ctx context.Context, id string) (*proxy.Session, bool, error) {
	var out wire.ResumeBody
	if err := c.do(ctx, http.MethodPost, "/sessions/"+url.PathEscape(id)+"/resume", struct{}{}, &out); err != nil {
		return nil, false, err
	}
	return out.Session, out.Restored, nil
}

// ListSessions implements proxy.SessionService.
func (c *Client) ListSessions(ctx context.Context) ([]*proxy.Session, error) {
	var out wire.SessionsBody
	if err := c.do(ctx, http.MethodGet, "/sessions", nil, &out); err != nil {
		return nil, err
	}
	return out.Sessions, nil
}

// Call implements proxy.SessionService with POST /call.
func (c *Client) Call(ctx context.Context, req proxy.CallRequest) (*proxy.CallResult, error) {
	var res proxy.CallResult
	body := wire.CallBody{SessionID: req.SessionID, Tool: req.Tool, Params: req.Params, RequestID: req.RequestID, Changes: req.Changes}
	if err := c.do(ctx, http.MethodPost, "/call", body, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// Validate implements proxy.SessionService.
func (c *Client) Validate(ctx context.Context, tool string, params json.RawMessage) error {
	return c.do(ctx, http.MethodPost, "/call/validate", wire.ValidateBody{Tool: tool, Params: params}, nil)
}

// Content implements proxy.ContentService.
func (c *Client) Content(ctx context.Context, refID string, search proxy.Query, reset bool) (*proxy.Content, error) {
	q := url.Values{"format": {"json"}}
	if search.Text != "" {
		q.Set("search_for", search.Text)
		if search.Regex {
			q.Set("regex", "true")
		}
		if search.CaseSensitive {
			q.Set("case_sensitive", "true")
		}
		if search.Outline {
			q.Set("outline", "true")
		}
	}
	if reset {
		q.Set("reset_cursor", "true")
	}
	return c.content(ctx, refID, q)
}

// Peek implements proxy.ContentService: the whole content, images
// included, with the diff cursor untouched.
func (c *Client) Peek(ctx context.Context, refID string) (*proxy.Content, error) {
	return c.content(ctx, refID, url.Values{"format": {"json"}, "peek": {"true"}})
}

// Images implements proxy.ContentService: a ref's images, read as Peek
// reads them.
func (c *Client) Images(ctx context.Context, refID string) ([]proxy.Image, error) {
	ct, err := c.Peek(ctx, refID)
	if err != nil {
		return nil, err
	}
	return ct.Images, nil
}

// Download implements proxy.ContentService: GET
// /content/{ref}/downloads/{name}, in its JSON form.
func (c *Client) Download(ctx context.Context, refID, name string) (*proxy.Download, error) {
	var body wire.DownloadBody
	if err := c.do(ctx, http.MethodGet, "/content/"+url.PathEscape(refID)+"/downloads/"+url.PathEscape(name), nil, &body); err != nil {
		return nil, err
	}
	d := body.Download
	d.Data = body.Data
	if d.Data == nil {
		d.Data = []byte{}
	}
	return &d, nil
}

// Calls implements proxy.ContentService, reading the session's JSON export.
func (c *Client) Calls(ctx context.Context, sessionID string) ([]proxy.Call, error) {
	rec, err := c.record(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	calls := make([]proxy.Call, len(rec.Calls))
	for i, ec := range rec.Calls {
		calls[i] = ec.Call
	}
	return calls, nil
}

// Events implements proxy.ContentService, reading the session's JSON
// export.
func (c *Client) Events(ctx context.Context, sessionID string) ([]proxy.SessionEvent, error) {
	rec, err := c.record(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	return rec.Events, nil
}

func (c *Client) record(ctx context.Context, sessionID string) (*wire.ExportRecord, error) {
	var rec wire.ExportRecord
	if err := c.do(ctx, http.MethodGet, "/sessions/"+url.PathEscape(sessionID)+"/export?format=json", nil, &rec); err != nil {
		return nil, err
	}
	return &rec, nil
}

func (c *Client) content(ctx context.Context, refID string, q url.Values) (*proxy.Content, error) {
	var body wire.ContentBody
	if err := c.do(ctx, http.MethodGet, "/content/"+url.PathEscape(refID)+"?"+q.Encode(), nil, &body); err != nil {
		return nil, err
	}
	out := &proxy.Content{Text: body.Text, Unchanged: body.Unchanged, Snapshot: body.Snapshot, NoMatch: body.NoMatch}
	for _, im := range body.Images {
		data, err := base64.StdEncoding.DecodeString(im.Data)
		if err != nil {
			return nil, fmt.Errorf("decoding image of %s: %w", refID, err)
		}
		out.Images = append(out.Images, proxy.Image{RefID: refID, MimeType: im.MimeType, Data: data})
	}
	return out, nil
}

// GetSession implements proxy.SessionService.
func (c *Client) GetSession(ctx context.Context, id string) (*proxy.Session, error) {
	var s proxy.Session
	if err := c.do(ctx, http.MethodGet, "/sessions/"+url.PathEscape(id), nil, &s); err != nil {
		return nil, err
	}
	return &s, nil
}

// AddCredential implements proxy.SessionService.
func (c *Client) AddCredential(ctx context.Context, value string) (string, error) {
	var out wire.CredentialAnswer
	if err := c.do(ctx, http.MethodPost, "/credentials", wire.CredentialBody{Value: value}, &out); err != nil {
		return "", err
	}
	return out.Placeholder, nil
}

// Console implements proxy.ContentService.
func (c *Client) Console(ctx context.Context, refID, level string) (string, error) {
	q := url.Values{"format": {"json"}}
	if level != "" {
		q.Set("level", level)
	}
	var body wire.ConsoleBody
	if err := c.do(ctx, http.MethodGet, "/console/"+url.PathEscape(refID)+"?"+q.Encode(), nil, &body); err != nil {
		return "", err
	}
	return body.Text, nil
}

// ErrUnreachable is wrapped (in the message) by failures to reach
// proxy-server at all.
var ErrUnreachable = errors.New("proxy-server is unreachable")

// do sends one request; error bodies come back as *proxy.Error so that codes
// survive the hop unchanged.
func (c *Client) do(ctx context.Context, method, path string, in, out any) error {
	var body []byte
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("encoding request: %w", err)
		}
		body = b
	}
	status, data, err := c.roundTrip(ctx, method, path, body)
	if err != nil {
		return err
	}
	if status >= 300 {
		return decodeError(status, data)
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("decoding proxy-server's answer to %s %s: %w", method, path, err)
	}
	return nil
}

func decodeError(status int, data []byte) error {
	var eb wire.ErrorBody
	if json.Unmarshal(data, &eb) == nil && eb.Error != "" {
		return &proxy.Error{Code: eb.Error, Message: eb.Message, Details: eb.Details, Retryable: eb.Retryable, Suggestion: eb.Suggestion}
	}
	return &proxy.Error{Code: proxy.EINTERNAL, Message: fmt.Sprintf("proxy-server answered %d %s: %.200s", status, http.StatusText(status), data)}
}

// roundTrip sends a request and returns the answer's status and body. While
// the request certainly did not reach proxy-server it asks the starter once,
// then sends it again with backoff until the retry timeout; ctx ends the
// wait at any point. A request that may have reached the server is never
// sent again.
func (c *Client) roundTrip(ctx context.Context, method, path string, body []byte) (int, []byte, error) {
	var (
		deadline time.Time
		delay    = firstRetryDelay
		asked    bool
	)
	for attempt := 1; ; attempt++ {
		status, data, connected, err := c.send(ctx, method, path, body)
		if err == nil {
			if attempt > 1 {
				c.log.Info("proxy-server is reachable again", "proxy", c.base.String(), "attempts", attempt)
				if path != "/health" {
					c.refreshVersion(ctx)
				}
			}
			return status, data, nil
		}
		if ctx.Err() != nil {
			return 0, nil, fmt.Errorf("%s %s: %w", method, path, ctx.Err())
		}
		if !retrySafe(err, connected) {
			return 0, nil, &proxy.Error{Code: proxy.EUNAVAILABLE, Retryable: true,
				Message:    fmt.Sprintf("lost the connection to proxy-server at %s during %s %s: %v; the request may have run, so it was not sent again", c.base, method, path, err),
				Suggestion: "Check the result (list_sessions, browser_snapshot) before repeating an action; proxy-server may have restarted."}
		}
		now := time.Now()
		if deadline.IsZero() {
			deadline = now.Add(c.retryTimeout)
			// With a starter, nothing running is the usual start of a
			// conversation: only the starter's failure is worth a warning.
			if c.retryTimeout > 0 && c.starter == nil {
				c.log.Warn("proxy-server unreachable; retrying", "proxy", c.base.String(), "err", err, "for", c.retryTimeout)
			}
		}
		if c.starter != nil && !asked {
			asked = true
			c.log.Debug("proxy-server unreachable; starting one", "proxy", c.base.String(), "err", err)
			sctx, cancel := context.WithDeadline(ctx, deadline)
			serr := c.starter(sctx)
			cancel()
			if serr == nil {
				continue // something answers now: send at once
			}
			if errors.Is(serr, ErrCannotStart) {
				return 0, nil, serr
			}
			if ctx.Err() != nil {
				return 0, nil, fmt.Errorf("%s %s: %w", method, path, ctx.Err())
			}
			c.log.Warn("could not start proxy-server; retrying", "proxy", c.base.String(), "err", serr, "for", time.Until(deadline).Round(time.Second))
		}
		wait := min(delay, time.Until(deadline))
		if wait <= 0 {
			return 0, nil, &proxy.Error{Code: proxy.EUNAVAILABLE, Retryable: true,
				Message:    fmt.Sprintf("%v at %s (tried for %s): %v", ErrUnreachable, c.base, c.retryTimeout, err),
				Suggestion: "Start it with `proxy-server serve` (or `make run`), or set MCP_PROXY_AUTOSTART=1, and retry."}
		}
		select {
		case <-ctx.Done():
			return 0, nil, fmt.Errorf("%s %s: %w", method, path, ctx.Err())
		case <-time.After(wait):
		}
		delay = min(delay*2, maxRetryDelay)
	}
}

// refreshVersion re-reads the server's version after a reconnection (the
// server may have been replaced by another build); best effort, no retry.
func (c *Client) refreshVersion(ctx context.Context) {
	status, data, _, err := c.send(ctx, http.MethodGet, "/health", nil)
	var h Health
	if err == nil && (status == http.StatusOK || status == http.StatusServiceUnavailable) && json.Unmarshal(data, &h) == nil && h.Status != "" {
		c.checkVersion(h.Version)
	}
}

// send makes one attempt. connected reports whether a connection to the
// server was obtained: from then on bytes may have reached it.
func (c *Client) send(ctx context.Context, method, path string, body []byte) (status int, data []byte, connected bool, err error) {
	var got atomic.Bool
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		GotConn: func(httptrace.GotConnInfo) { got.Store(true) },
	})
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base.String()+path, rd)
	if err != nil {
		return 0, nil, false, fmt.Errorf("building request: %w", err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set(wire.BridgeVersionHeader, c.version)
	req.Header.Set(wire.ClientIDHeader, c.clientID)
	if c.toolsets != "" {
		req.Header.Set(wire.ToolsetsHeader, c.toolsets)
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, nil, got.Load(), err
	}
	defer resp.Body.Close()
	data, err = io.ReadAll(io.LimitReader(resp.Body, 256<<20))
	if err != nil {
		return 0, nil, true, fmt.Errorf("reading proxy-server's answer: %w", err)
	}
	return resp.StatusCode, data, true, nil
}

// retrySafe reports whether err proves that a request never reached the
// server, so that sending it again cannot run anything twice:
//   - a refused connection (ECONNREFUSED comes only from connect(2), even
//     when the transport dialled again after a stale keep-alive connection);
//   - any failure to dial, or a connection reset or aborted, before a
//     connection was obtained (connected false).
//
// Everything else — EOF or a reset while waiting for the answer, a failed
// write, a timeout once connected — may follow a request the server
// received and acted on. A cancelled request is never retried; the caller's
// own deadline is checked before this is asked.
func retrySafe(err error, connected bool) bool {
	switch {
	case err == nil, errors.Is(err, context.Canceled):
		return false
	case errors.Is(err, syscall.ECONNREFUSED):
		return true
	case connected:
		return false
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return true
	}
	return errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNABORTED)
}

var (
	_ proxy.SessionService = (*Client)(nil)
	_ proxy.ContentService = (*Client)(nil)
)

// Pages implements proxy.PageService.
func (c *Client) Pages(ctx context.Context, sessionID string) ([]proxy.Page, error) {
	var out wire.PagesBody
	if err := c.do(ctx, http.MethodGet, "/sessions/"+url.PathEscape(sessionID)+"/pages", nil, &out); err != nil {
		return nil, err
	}
	return out.Pages, nil
}

// Element implements proxy.PageService.
func (c *Client) Element(ctx context.Context, sessionID string, page int, ref string) (*proxy.Element, error) {
	var out proxy.Element
	path := fmt.Sprintf("/sessions/%s/pages/%d/elements/%s", url.PathEscape(sessionID), page, url.PathEscape(ref))
	if err := c.do(ctx, http.MethodGet, path, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// NetworkLog implements proxy.PageService.
func (c *Client) NetworkLog(ctx context.Context, sessionID string, page int) ([]proxy.NetworkEntry, error) {
	var out wire.NetworkLogBody
	if err := c.do(ctx, http.MethodGet, fmt.Sprintf("/sessions/%s/pages/%d/network", url.PathEscape(sessionID), page), nil, &out); err != nil {
		return nil, err
	}
	return out.Entries, nil
}

var _ proxy.ProfileService = (*Client)(nil)

// SaveProfile implements proxy.ProfileService with POST
// /sessions/{id}/profile.
func (c *Client) SaveProfile(ctx context.Context, name, sessionID string) (*proxy.Profile, error) {
	var p proxy.Profile
	if err := c.do(ctx, http.MethodPost, "/sessions/"+url.PathEscape(sessionID)+"/profile", wire.SaveProfileBody{Name: name}, &p); err != nil {
		return nil, err
	}
	return &p, nil
}

// ListProfiles implements proxy.ProfileService.
func (c *Client) ListProfiles(ctx context.Context) ([]*proxy.Profile, error) {
	var out wire.ProfilesBody
	if err := c.do(ctx, http.MethodGet, "/profiles", nil, &out); err != nil {
		return nil, err
	}
	return out.Profiles, nil
}

// GetProfile implements proxy.ProfileService.
func (c *Client) GetProfile(ctx context.Context, name string) (*proxy.Profile, error) {
	var p proxy.Profile
	if err := c.do(ctx, http.MethodGet, "/profiles/"+url.PathEscape(name), nil, &p); err != nil {
		return nil, err
	}
	return &p, nil
}

// PutProfile implements proxy.ProfileService with PUT /profiles/{name},
// the operator's: proxy-server refuses it to a bridge (FORBIDDEN).
func (c *Client) PutProfile(ctx context.Context, name string, state json.RawMessage) (*proxy.Profile, error) {
	var p proxy.Profile
	if err := c.do(ctx, http.MethodPut, "/profiles/"+url.PathEscape(name), state, &p); err != nil {
		return nil, err
	}
	return &p, nil
}

// ProfileState implements proxy.ProfileService with GET
// /profiles/{name}/state, the operator's: proxy-server refuses it to a
// bridge (FORBIDDEN).
func (c *Client) ProfileState(ctx context.Context, name string) (json.RawMessage, error) {
	var state json.RawMessage
	if err := c.do(ctx, http.MethodGet, "/profiles/"+url.PathEscape(name)+"/state", nil, &state); err != nil {
		return nil, err
	}
	return state, nil
}

// DeleteProfile implements proxy.ProfileService with DELETE
// /profiles/{name}, the operator's: proxy-server refuses it to a bridge
// (FORBIDDEN).
func (c *Client) DeleteProfile(ctx context.Context, name string) error {
	return c.do(ctx, http.MethodDelete, "/profiles/"+url.PathEscape(name), nil, nil)
}

var _ proxy.HumanService = (*Client)(nil)

// TakeControl implements proxy.HumanService with POST
// /sessions/{id}/control, the operator's: proxy-server refuses it to a
// client token (FORBIDDEN).
func (c *Client) TakeControl(ctx context.Context, id string) (*proxy.ControlLease, error) {
	var l proxy.ControlLease
	if err := c.do(ctx, http.MethodPost, "/sessions/"+url.PathEscape(id)+"/control", nil, &l); err != nil {
		return nil, err
	}
	return &l, nil
}

// HandBack implements proxy.HumanService with DELETE
// /sessions/{id}/control, the operator's.
func (c *Client) HandBack(ctx context.Context, id, lease string) error {
	return c.do(ctx, http.MethodDelete, "/sessions/"+url.PathEscape(id)+"/control", wire.HandBackBody{Lease: lease}, nil)
}

// RequestHuman implements proxy.HumanService with POST
// /sessions/{id}/human. The wait may last up to proxy.MaxHumanTimeout:
// the client sets no timeout of its own, ctx bounds it.
func (c *Client) RequestHuman(ctx context.Context, id, reason string, timeout time.Duration) (*proxy.HumanResult, error) {
	var res proxy.HumanResult
	body := wire.HumanBody{Reason: reason, TimeoutMS: timeout.Milliseconds()}
	if err := c.do(ctx, http.MethodPost, "/sessions/"+url.PathEscape(id)+"/human", body, &res); err != nil {
		return nil, err
	}
	return &res, nil
}
