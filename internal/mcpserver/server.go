// Package mcpserver owns the MCP surface of playwright-mcp-proxy: an mcp-go
// server that lists the tool catalogue and answers its tools through
// proxy.SessionService and proxy.ContentService, giving each MCP client its
// own default browser session, and the compact answers the model reads
// (Answer). The same server runs behind the stdio bridge (over the HTTP
// client) and behind /mcp (over the session manager in-process), where
// each client may choose its own tool groups. It never talks to workers or
// SQLite itself.
package mcpserver

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/catalog"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/clock"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/content"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/toolset"
)

// Version is reported to MCP clients.
const serverName = "playwright-mcp-proxy"

// Server answers MCP tool calls through the session and content services,
// giving each MCP client session its own default browser session. Every
// call acts for the MCP client it came from (acting): in proxy-server's own
// process that client sees its own sessions and refs, nobody else's.
type Server struct {
	sessions proxy.SessionService
	content  proxy.ContentService
	log      *slog.Logger
	// perClient: calls act for their MCP session (actForClients).
	perClient bool
	// updates, when set, says when update notifications were written
	// (Streamable HTTP): a call waits for its own.
	updates *updateWrites
	mcp     *server.MCPServer

	// visible, when set, says whether a request may list and call a tool:
	// the server holds every group's tools for clients of different
	// choices (WithClientToolsets).
	visible func(ctx context.Context, name string) bool

	// profiles answers the profile tools; nil: none are kept here.
	profiles proxy.ProfileService
	// defaultProfile is what every default session starts from, unless
	// its client named its own ("": none).
	defaultProfile string
	// human answers request_human (else sessions, when it can); clock is
	// what its progress notifications tick by.
	human proxy.HumanService
	clock clock.Clock

	mu       sync.Mutex
	defaults map[string]*defaultSession
	// subs are the resource URIs each MCP client session subscribed to.
	subs map[string]map[string]bool
}

// defaultSession is created on first use; once guards against two first
// calls racing to create two browser sessions for one conversation.
type defaultSession struct {
	mu sync.Mutex
	id string
	// gone is set when the MCP session ended: a call already in flight must
	// not create a browser session nobody would ever close.
	gone bool
	// profile is the login profile the client named for it (?profile=).
	profile string
}

// Option configures a Server.
type Option func(*config)

type config struct {
	log       *slog.Logger
	version   string
	serverOps []server.ServerOption
	// toolsets is set by WithClientToolsets: the selection of requests
	// that carry no choice of their own.
	toolsets *toolset.Selection
	// perClient is set by actForClients.
	perClient bool
	// updates is set by watchUpdates.
	updates *updateWrites
	// profiles and defaultProfile are set by WithProfiles and
	// WithDefaultProfile.
	profiles       proxy.ProfileService
	defaultProfile string
	// human and clock are set by WithHuman and withClock.
	human proxy.HumanService
	clock clock.Clock
}

// actForClients makes every call act for the MCP session it came in
// (acting). It is for the services of proxy-server's own process, which
// serve many clients; mcp-bridge is one client to proxy-server already.
func actForClients() Option { return func(c *config) { c.perClient = true } }

// watchUpdates makes a call that sends resource updates wait until u saw
// them written (notifyNavigation).
func watchUpdates(u *updateWrites) Option { return func(c *config) { c.updates = u } }

// WithLogger sets the logger.
func WithLogger(l *slog.Logger) Option { return func(c *config) { c.log = l } }

// WithVersion sets the version reported in initialize.
func WithVersion(v string) Option { return func(c *config) { c.version = v } }

// WithServerOptions passes options through to mcp-go's server.
func WithServerOptions(o ...server.ServerOption) Option {
	return func(c *config) { c.serverOps = append(c.serverOps, o...) }
}

// WithClientToolsets makes one server serve clients that each choose their
// own tool groups: it holds every group's tools, and a request lists and
// calls only those of the selection its context carries
// (toolset.WithSelection), else def (the server's). A tool the catalogue
// gives no group is always shown. Without it the server lists what the
// backend's catalogue holds, as a bridge, which is one client, does.
func WithClientToolsets(def toolset.Selection) Option {
	return func(c *config) { c.toolsets = &def }
}

// New builds the MCP server with the current tool catalogue of sessions:
// the session manager and the record in proxy-server's own process, or
// mcp-bridge's HTTP client of them.
func New(ctx context.Context, sessions proxy.SessionService, content proxy.ContentService, opts ...Option) (*Server, error) {
	cfg := config{log: slog.Default(), version: "dev"}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.toolsets != nil {
		// Every tool some client may choose; each client's list is filtered.
		ctx = toolset.WithSelection(ctx, toolset.AllowedBy(*cfg.toolsets))
	}
	tools, err := sessions.Tools(ctx)
	if err != nil {
		return nil, fmt.Errorf("fetching the tool catalogue: %w", err)
	}
	s := &Server{sessions: sessions, content: content, log: cfg.log, perClient: cfg.perClient, updates: cfg.updates, defaults: map[string]*defaultSession{}, subs: map[string]map[string]bool{},
		profiles: cfg.profiles, defaultProfile: cfg.defaultProfile, human: cfg.human, clock: clock.Or(cfg.clock)}
	if cfg.toolsets != nil {
		s.visible = visibleTo(tools, *cfg.toolsets)
		cfg.serverOps = append(cfg.serverOps, server.WithToolFilter(func(ctx context.Context, tools []mcp.Tool) []mcp.Tool {
			out := make([]mcp.Tool, 0, len(tools))
			for _, t := range tools {
				if s.visible(ctx, t.Name) {
					out = append(out, t)
				}
			}
			return out
		}))
	}
	sopts := append([]server.ServerOption{
		server.WithToolCapabilities(false),
		server.WithResourceCapabilities(true, false),
		server.WithPromptCapabilities(false),
		server.WithRecovery(),
		// No server.WithInputSchemaValidation: the session manager checks
		// every browser call against the tool's schema (zod's defaulted
		// properties optional, as upstream treats them) and answers
		// INVALID_PARAMETERS naming the field; mcp-go's check would refuse
		// calls upstream accepts (browser_take_screenshot without scale).
		server.WithInstructions("Browser tools run in an isolated browser session of this conversation. Tool calls return a ref_id and metadata, not page content: read the page with get_content(ref_id, search_for?) and console messages with get_console_content(ref_id, level?)."),
	}, cfg.serverOps...)
	s.mcp = server.NewMCPServer(serverName, cfg.version, sopts...)
	for _, t := range tools {
		mt := mcp.NewToolWithRawSchema(t.Name, t.Description, t.InputSchema)
		if len(t.Annotations) > 0 {
			_ = json.Unmarshal(t.Annotations, &mt.Annotations) // hints only; a bad one is dropped
		}
		s.mcp.AddTool(mt, s.handler(t))
	}
	s.addResources()
	s.addPrompts(tools)
	s.explainUnknownTools()
	return s, nil
}

// visibleTo says whether a request's selection (else def) holds a tool of
// tools.
func visibleTo(tools []proxy.Tool, def toolset.Selection) func(ctx context.Context, name string) bool {
	if def.Empty() {
		def, _ = toolset.Select(nil) // the defaults always parse
	}
	groups := make(map[string]string, len(tools))
	for _, t := range tools {
		groups[t.Name] = t.Group
	}
	return func(ctx context.Context, name string) bool {
		g := groups[name]
		return g == "" || toolset.FromContext(ctx, def).Has(g)
	}
}

// MCPServer is the underlying mcp-go server, for a transport to serve.
func (s *Server) MCPServer() *server.MCPServer { return s.mcp }

func (s *Server) handler(t proxy.Tool) server.ToolHandlerFunc {
	switch t.Name {
	case catalog.ToolCreateSession:
		return s.createSession
	case catalog.ToolCloseSession:
		return s.closeSession
	case catalog.ToolResumeSession:
		return s.resumeSession
	case catalog.ToolListSessions:
		return s.listSessions
	case catalog.ToolGetContent:
		return s.getContent
	case catalog.ToolGetConsole:
		return s.getConsole
	case catalog.ToolSaveProfile:
		return s.saveProfile
	case catalog.ToolListProfiles:
		return s.listProfiles
	case catalog.ToolRequestHuman:
		return s.requestHuman
	}
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return s.callUpstream(ctx, t.Name, req)
	}
}

func (s *Server) callUpstream(ctx context.Context, tool string, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	explicit, raw, err := upstreamArguments(req)
	if err != nil {
		return s.errorResult(ctx, err), nil
	}
	id := explicit
	// started is the profile the default session was just made from.
	var started string
	if id == "" {
		if id = s.DefaultSessionOf(clientKey(ctx)); id == "" {
			// The conversation's first call: one that is refused anyway
			// must not cost it a browser session.
			if err := s.sessions.Validate(s.acting(ctx), tool, raw); err != nil {
				return s.errorResult(ctx, err), nil
			}
		}
		if id, started, err = s.defaultSession(ctx, ""); err != nil {
			return s.errorResult(ctx, err), nil
		}
	}
	res, err := s.sessions.Call(s.acting(ctx), proxy.CallRequest{SessionID: id, Tool: tool, Params: raw, Changes: true})
	if explicit == "" && staleDefault(err) {
		// The default session was closed or lost; the call never reached a
		// browser, so it is safe to make a new default and send it there.
		if id, started, err = s.defaultSession(ctx, id); err == nil {
			res, err = s.sessions.Call(s.acting(ctx), proxy.CallRequest{SessionID: id, Tool: tool, Params: raw, Changes: true})
		}
	}
	if err != nil {
		return s.errorResult(ctx, err), nil
	}
	if len(res.Upstream) > 0 {
		// PROXY_RESPONSE_MODE=full: the upstream answer, unchanged.
		if out, perr := mcp.ParseCallToolResult(&res.Upstream); perr == nil {
			if res.Warning != "" {
				out.Content = append(out.Content, mcp.NewTextContent("warning: "+res.Warning))
			}
			return out, nil
		}
	}
	s.notifyNavigation(ctx, res)
	text := Answer(res)
	if started != "" {
		// Once, so that the model knows the session is signed in already.
		first, rest, more := strings.Cut(text, "\n")
		text = first + "\nprofile: " + started
		if more {
			text += "\n" + rest
		}
	}
	out := mcp.NewToolResultText(text)
	out.IsError = res.Status == proxy.StatusError
	return out, nil
}

// upstreamArguments splits a call's arguments into the session_id they
// name, if any, and the params for the tool. Arguments without session_id
// go on byte for byte as they came over the wire; with it, the rest is
// re-encoded from raw values, never from map[string]any, where an integer
// above 2^53 would reach the browser and the record with other digits. Arguments of
// the wrong shape are refused: read as absent, they would send the call to
// the default session (creating it).
func upstreamArguments(req mcp.CallToolRequest) (sessionID string, params json.RawMessage, err error) {
	raw := req.Params.RawArguments
	if len(raw) == 0 && req.Params.Arguments != nil { // built in-process, not decoded
		if raw, err = json.Marshal(req.Params.Arguments); err != nil {
			return "", nil, proxy.Errorf(proxy.EINVALID, "arguments do not encode as JSON: %v", err)
		}
	}
	args := map[string]json.RawMessage{}
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &args); err != nil {
			return "", nil, proxy.Errorf(proxy.EINVALID, "arguments must be a JSON object")
		}
		if args == nil { // null
			args = map[string]json.RawMessage{}
		}
	}
	v, ok := args["session_id"]
	if !ok {
		if len(args) == 0 && (len(raw) == 0 || string(raw) == "null") {
			return "", json.RawMessage(`{}`), nil
		}
		return "", raw, nil
	}
	if err := json.Unmarshal(v, &sessionID); err != nil {
		return "", nil, proxy.Errorf(proxy.EINVALID, "session_id must be a string")
	}
	delete(args, "session_id")
	if params, err = json.Marshal(args); err != nil {
		return "", nil, proxy.Errorf(proxy.EINVALID, "arguments do not encode as JSON: %v", err)
	}
	return sessionID, params, nil
}

func staleDefault(err error) bool {
	code := proxy.ErrorCode(err)
	return code == proxy.ESESSIONCLOSED || code == proxy.ESESSIONMISSING
}

// defaultSession returns the caller's default browser session, creating it
// on first use, and the profile it started from when this call made it.
// stale, when set, is an id known to be unusable.
func (s *Server) defaultSession(ctx context.Context, stale string) (id, started string, err error) {
	key := clientKey(ctx)
	d := s.defaultOf(key)
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.gone {
		return "", "", proxy.Errorf(proxy.ESESSIONCLOSED, "this MCP session has ended")
	}
	if d.id != "" && d.id != stale {
		return d.id, "", nil
	}
	var opts []proxy.BrowserOptions
	if p := s.profileOf(d); p != "" {
		opts = append(opts, proxy.BrowserOptions{Profile: p})
	}
	sess, err := s.sessions.CreateSession(s.acting(ctx), opts...)
	if err != nil {
		return "", "", err
	}
	d.id = sess.ID
	s.log.Debug("default session created", "mcp_session", key, "session_id", sess.ID, "profile", sess.Profile)
	return d.id, sess.Profile, nil
}

// defaultOf returns the default-session entry of an MCP session, made on
// first use.
func (s *Server) defaultOf(mcpSessionID string) *defaultSession {
	s.mu.Lock()
	defer s.mu.Unlock()
	d := s.defaults[mcpSessionID]
	if d == nil {
		d = &defaultSession{}
		s.defaults[mcpSessionID] = d
	}
	return d
}

// DefaultSessionOf returns the default browser session of an MCP client
// session, if it has one.
func (s *Server) DefaultSessionOf(mcpSessionID string) string {
	s.mu.Lock()
	d := s.defaults[mcpSessionID]
	s.mu.Unlock()
	if d == nil {
		return ""
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.id
}

// ForgetClient drops an MCP client session's default and returns its
// browser session id ("" when it never made one).
func (s *Server) ForgetClient(mcpSessionID string) string {
	s.mu.Lock()
	d := s.defaults[mcpSessionID]
	delete(s.defaults, mcpSessionID)
	delete(s.subs, mcpSessionID)
	s.mu.Unlock()
	if d == nil {
		return ""
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.gone = true
	return d.id
}

func clientKey(ctx context.Context) string {
	if cs := server.ClientSessionFromContext(ctx); cs != nil {
		return cs.SessionID()
	}
	return ""
}

func (s *Server) createSession(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	raw, err := json.Marshal(req.GetArguments())
	if err != nil {
		return s.errorResult(ctx, proxy.Errorf(proxy.EINVALID, "arguments: %v", err)), nil
	}
	opts, err := proxy.DecodeBrowserOptions(raw)
	if err != nil {
		return s.errorResult(ctx, err), nil
	}
	sess, err := s.sessions.CreateSession(s.acting(ctx), opts)
	if err != nil {
		return s.errorResult(ctx, err), nil
	}
	out := map[string]any{"session_id": sess.ID, "state": sess.State, "created_at": sess.CreatedAt, "expires_at": sess.ExpiresAt}
	if sess.Options != nil {
		out["options"] = sess.Options
	}
	if sess.Profile != "" {
		out["profile"] = sess.Profile
	}
	return jsonResult(out), nil
}

func (s *Server) closeSession(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	id, err := req.RequireString("session_id")
	if err != nil {
		return s.errorResult(ctx, proxy.Errorf(proxy.EINVALID, "%v", err)), nil
	}
	if err := s.sessions.CloseSession(s.acting(ctx), id); err != nil {
		return s.errorResult(ctx, err), nil
	}
	return jsonResult(map[string]any{"session_id": id, "state": proxy.SessionClosed}), nil
}

func (s *Server) resumeSession(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	id, err := req.RequireString("session_id")
	if err != nil {
		return s.errorResult(ctx, proxy.Errorf(proxy.EINVALID, "%v", err)), nil
	}
	sess, restored, err := s.sessions.ResumeSession(s.acting(ctx), id)
	if err != nil {
		return s.errorResult(ctx, err), nil
	}
	return jsonResult(map[string]any{"session_id": sess.ID, "state": sess.State, "restored": restored}), nil
}

func (s *Server) listSessions(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	ss, err := s.sessions.ListSessions(s.acting(ctx))
	if err != nil {
		return s.errorResult(ctx, err), nil
	}
	if ss == nil {
		ss = []*proxy.Session{}
	}
	def := s.DefaultSessionOf(clientKey(ctx))
	type item struct {
		*proxy.Session
		Default bool `json:"default,omitempty"`
	}
	items := make([]item, len(ss))
	for i, x := range ss {
		items[i] = item{Session: x, Default: x.ID == def}
	}
	return jsonResult(map[string]any{"sessions": items}), nil
}

func (s *Server) getContent(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	ref, err := req.RequireString("ref_id")
	if err != nil {
		return s.errorResult(ctx, proxy.Errorf(proxy.EINVALID, "%v", err)), nil
	}
	if name, ok := req.GetArguments()["download"]; ok && name != nil {
		return s.downloadText(ctx, req, ref, name)
	}
	// The model reads matches as it reads pages in answers: an outline.
	search := proxy.Query{Text: req.GetString("search_for", ""), Outline: true}
	if search.Regex, err = optionalBool(req, "regex"); err != nil {
		return s.errorResult(ctx, err), nil
	}
	if search.CaseSensitive, err = optionalBool(req, "case_sensitive"); err != nil {
		return s.errorResult(ctx, err), nil
	}
	c, err := s.content.Content(s.acting(ctx), ref, search, req.GetBool("reset_cursor", false))
	if err != nil {
		return s.errorResult(ctx, err), nil
	}
	if c.NoMatch {
		// Said in words: an empty answer reads as "unchanged".
		what := "result text"
		if c.Snapshot {
			what = "page snapshot"
		}
		return mcp.NewToolResultText(fmt.Sprintf("no match for %q in the %s of ref %s", search.Text, what, ref)), nil
	}
	out := &mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent(c.Text)}}
	for _, im := range c.Images {
		out.Content = append(out.Content, mcp.NewImageContent(base64.StdEncoding.EncodeToString(im.Data), im.MimeType))
	}
	return out, nil
}

// downloadText answers get_content(ref_id, download): the text of a file
// the call downloaded. A download is read whole, never diffed nor searched,
// so the options of a page read are refused rather than ignored.
func (s *Server) downloadText(ctx context.Context, req mcp.CallToolRequest, ref string, arg any) (*mcp.CallToolResult, error) {
	name, ok := arg.(string)
	if !ok {
		return s.errorResult(ctx, proxy.Errorf(proxy.EINVALID, "download must be a file name, got %v", arg)), nil
	}
	for _, k := range []string{"search_for", "regex", "case_sensitive", "reset_cursor"} {
		if _, set := req.GetArguments()[k]; set {
			return s.errorResult(ctx, proxy.Errorf(proxy.EINVALID, "download returns the whole file; it takes no %s", k)), nil
		}
	}
	d, err := s.content.Download(s.acting(ctx), ref, name)
	if err != nil {
		return s.errorResult(ctx, err), nil
	}
	text, err := content.DownloadText(d)
	if err != nil {
		return s.errorResult(ctx, err), nil
	}
	return mcp.NewToolResultText(text), nil
}

func (s *Server) getConsole(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	ref, err := req.RequireString("ref_id")
	if err != nil {
		return s.errorResult(ctx, proxy.Errorf(proxy.EINVALID, "%v", err)), nil
	}
	level := req.GetString("level", "")
	text, err := s.content.Console(s.acting(ctx), ref, level)
	if err != nil {
		return s.errorResult(ctx, err), nil
	}
	if text == "" {
		// Said in words, as a search with no match is.
		what := "console messages"
		if level != "" {
			what = "console messages at level " + level + " or above"
		}
		text = fmt.Sprintf("no %s for ref %s", what, ref)
	}
	return mcp.NewToolResultText(text), nil
}

// optionalBool is the boolean argument key, false when absent. Unlike
// GetBool it refuses a value that is not one, so that a mistyped option
// is not read as false without a word.
func optionalBool(req mcp.CallToolRequest, key string) (bool, error) {
	v, ok := req.GetArguments()[key]
	if !ok || v == nil {
		return false, nil
	}
	if b, ok := v.(bool); ok {
		return b, nil
	}
	return false, proxy.Errorf(proxy.EINVALID, "%s must be true or false, got %v", key, v)
}

// errorResult is the tool result of a refused or failed call, in the
// answer's own compact form (ErrorAnswer), so the model sees the code,
// whether to retry, what to do and the ref_id of a recorded call alike
// from every layer and over both transports. A foreign error's own text
// goes to the log only. JSON-RPC errors stay for the protocol's own
// failures (an unknown method or tool, a malformed request).
func (s *Server) errorResult(ctx context.Context, err error) *mcp.CallToolResult {
	if proxy.IsForeign(err) {
		s.log.ErrorContext(ctx, "internal error", "err", err)
	}
	out := mcp.NewToolResultText(ErrorAnswer(proxy.AsError(err)))
	out.IsError = true
	return out
}

func jsonResult(v any) *mcp.CallToolResult {
	b, err := json.Marshal(v)
	if err != nil {
		return mcp.NewToolResultError("internal error: " + err.Error())
	}
	return mcp.NewToolResultText(string(b))
}

// MCPClientID is the owner of the browser sessions an MCP session over
// /mcp creates. mcp-go's session ids are random UUIDs, handed only to the
// client that initialized the session.
func MCPClientID(mcpSessionID string) proxy.ClientID {
	return proxy.NewClientID("mcp", mcpSessionID)
}

// acting returns ctx acting for the MCP session of the request, when the
// server acts for its clients (actForClients). A ctx that names its client
// already keeps it (the end of an MCP session acts for the session that
// ended). Without an MCP session every such call is one and the same
// client, never the operator.
func (s *Server) acting(ctx context.Context) context.Context {
	if !s.perClient {
		return ctx
	}
	if _, ok := proxy.ClientFrom(ctx); ok {
		return ctx
	}
	return proxy.WithClient(ctx, MCPClientID(clientKey(ctx)))
}
