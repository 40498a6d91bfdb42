package mcpserver

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
)

// Resource URIs (playwright:///{type}/{id}). Sessions are
// listed; refs are reached through the templates, from the ref_id a tool
// call returned.
const (
	resourceSession    = "session"
	resourceRef        = "ref"
	resourceScreenshot = "screenshot"
	resourceConsole    = "console"
	resourceRoot       = "playwright:///"
	// maxResourceID bounds an id taken from a URI; session and ref ids
	// are UUIDs.
	maxResourceID = 128
)

// resourceURI is the URI of one resource: kind is session, ref, screenshot
// or console.
func resourceURI(kind, id string) string { return resourceRoot + kind + "/" + url.PathEscape(id) }

// MIME types of the ref resource.
const (
	mimeSnapshot = "application/yaml" // RFC 9512
	mimeResult   = "text/markdown"    // upstream answers are markdown sections
)

// addResources registers the resource templates, and the hook that lists
// the current sessions: mcp-go v1.2.1 lists only statically registered
// resources, so the list is filled in after it ran, from the backend, at
// every resources/list.
func (s *Server) addResources() {
	s.mcp.AddResourceTemplate(mcp.NewResourceTemplate(resourceRoot+resourceSession+"/{session_id}", "session",
		mcp.WithTemplateTitle("Browser session"),
		mcp.WithTemplateDescription("A browser session: state, last page URL and title, created_at, last_activity, expires_at (when idleness suspends it)."),
		mcp.WithTemplateMIMEType("application/json"),
	), codedRead(s.readSession))
	s.mcp.AddResourceTemplate(mcp.NewResourceTemplate(resourceRoot+resourceRef+"/{ref_id}", "ref",
		mcp.WithTemplateTitle("Recorded tool call"),
		mcp.WithTemplateDescription("What a browser tool call recorded, whole: its page snapshot (yaml with element refs) or, when it has none, its result text. Reading it does not move get_content's diff cursor."),
	), codedRead(s.readRef))
	s.mcp.AddResourceTemplate(mcp.NewResourceTemplate(resourceRoot+resourceScreenshot+"/{ref_id}", "screenshot",
		mcp.WithTemplateTitle("Screenshot of a tool call"),
		mcp.WithTemplateDescription("The image(s) a screenshot call (browser_take_screenshot, screenshot_element) recorded, base64 with their MIME type."),
	), codedRead(s.readScreenshot))
	s.mcp.AddResourceTemplate(mcp.NewResourceTemplate(resourceRoot+resourceConsole+"/{ref_id}", "console",
		mcp.WithTemplateTitle("Console messages of a tool call"),
		mcp.WithTemplateDescription("The browser console messages a tool call recorded, one per line: [LEVEL] message @ url:line."),
		mcp.WithTemplateMIMEType("text/plain"),
	), codedRead(s.readConsole))
	s.addPageResources()

	hooks := s.mcp.GetHooks()
	if hooks == nil {
		hooks = &server.Hooks{}
		server.WithHooks(hooks)(s.mcp)
	}
	hooks.AddAfterListResources(s.listSessionResources)
	s.addSubscriptions(hooks)
}

// listSessionResources puts one resource per session that is not closed
// into a resources/list answer. A hook cannot fail the request: when the
// backend cannot list sessions the list stays as it was, and the failure
// is logged.
func (s *Server) listSessionResources(ctx context.Context, _ any, _ *mcp.ListResourcesRequest, result *mcp.ListResourcesResult) {
	if result == nil {
		return
	}
	ss, err := s.sessions.ListSessions(s.acting(ctx))
	if err != nil {
		s.log.Warn("resources/list: listing sessions failed", "err", err)
		return
	}
	for _, sess := range ss {
		if sess.State == proxy.SessionClosed {
			continue
		}
		md := sess.PageMetadata()
		title := md.LastTitle
		if title == "" {
			title = md.LastURL
		}
		desc := fmt.Sprintf("Browser session, %s.", sess.State)
		if md.LastURL != "" {
			desc = fmt.Sprintf("Browser session, %s, last page %s.", sess.State, md.LastURL)
		}
		opts := []mcp.ResourceOption{mcp.WithMIMEType("application/json"), mcp.WithResourceDescription(desc)}
		if title != "" {
			opts = append(opts, mcp.WithResourceTitle(title))
		}
		result.Resources = append(result.Resources, mcp.NewResource(resourceURI(resourceSession, sess.ID), "session "+sess.ID, opts...))
		s.listPageResources(s.acting(ctx), sess, result)
	}
}

// SessionResource is the JSON of playwright:///session/{id}.
type SessionResource struct {
	SessionID    string             `json:"session_id"`
	State        proxy.SessionState `json:"state"`
	LastURL      string             `json:"last_url,omitempty"`
	LastTitle    string             `json:"last_title,omitempty"`
	CreatedAt    time.Time          `json:"created_at"`
	LastActivity time.Time          `json:"last_activity"`
	ExpiresAt    time.Time          `json:"expires_at,omitzero"`
	// Default marks the reading conversation's own default session.
	Default bool `json:"default,omitempty"`
}

func (s *Server) readSession(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
	id, err := resourceID(req.Params.URI, resourceSession)
	if err != nil {
		return nil, err
	}
	sess, err := s.sessions.GetSession(s.acting(ctx), id)
	if err != nil {
		return nil, err
	}
	md := sess.PageMetadata()
	body, err := json.Marshal(SessionResource{
		SessionID: sess.ID, State: sess.State, LastURL: md.LastURL, LastTitle: md.LastTitle,
		CreatedAt: sess.CreatedAt, LastActivity: sess.LastActivity, ExpiresAt: sess.ExpiresAt,
		Default: sess.ID == s.DefaultSessionOf(clientKey(ctx)),
	})
	if err != nil {
		return nil, fmt.Errorf("encoding session %s: %w", id, err)
	}
	return []mcp.ResourceContents{mcp.TextResourceContents{URI: req.Params.URI, MIMEType: "application/json", Text: string(body)}}, nil
}

func (s *Server) readRef(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
	ref, err := resourceID(req.Params.URI, resourceRef)
	if err != nil {
		return nil, err
	}
	c, err := s.content.Peek(s.acting(ctx), ref)
	if err != nil {
		return nil, err
	}
	mime := mimeResult
	if c.Snapshot {
		mime = mimeSnapshot
	}
	return []mcp.ResourceContents{mcp.TextResourceContents{URI: req.Params.URI, MIMEType: mime, Text: c.Text}}, nil
}

func (s *Server) readScreenshot(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
	ref, err := resourceID(req.Params.URI, resourceScreenshot)
	if err != nil {
		return nil, err
	}
	c, err := s.content.Peek(s.acting(ctx), ref)
	if err != nil {
		return nil, err
	}
	if len(c.Images) == 0 {
		e := proxy.Errorf(proxy.EREFMISSING, "ref %s recorded no image: only screenshot calls (browser_take_screenshot, screenshot_element) do; read what it recorded at %s", ref, resourceURI(resourceRef, ref))
		e.Details = map[string]any{"ref_id": ref}
		return nil, e
	}
	out := make([]mcp.ResourceContents, 0, len(c.Images))
	for _, im := range c.Images {
		out = append(out, mcp.BlobResourceContents{URI: req.Params.URI, MIMEType: im.MimeType, Blob: base64.StdEncoding.EncodeToString(im.Data)})
	}
	return out, nil
}

func (s *Server) readConsole(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
	ref, err := resourceID(req.Params.URI, resourceConsole)
	if err != nil {
		return nil, err
	}
	text, err := s.content.Console(s.acting(ctx), ref, "")
	if err != nil {
		return nil, err
	}
	return []mcp.ResourceContents{mcp.TextResourceContents{URI: req.Params.URI, MIMEType: "text/plain", Text: text}}, nil
}

// resourceID takes the id out of playwright:///{kind}/{id}. The template
// only matched the URI's shape; an id that cannot be a session or ref id
// (empty, an escaped slash, control characters) is INVALID_PARAMETERS
// rather than a look-up that would only say "not found".
func resourceID(uri, kind string) (string, error) {
	raw, ok := strings.CutPrefix(uri, resourceRoot+kind+"/")
	if !ok {
		return "", proxy.Errorf(proxy.EINVALID, "resource URI %q is not %s{id}", uri, resourceRoot+kind+"/")
	}
	id, err := url.PathUnescape(raw)
	if err != nil {
		return "", proxy.Errorf(proxy.EINVALID, "resource URI %q: the %s id is not a valid URI path segment: %v", uri, kind, err)
	}
	if id == "" || len(id) > maxResourceID || strings.ContainsFunc(id, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.')
	}) {
		return "", proxy.Errorf(proxy.EINVALID, "resource URI %q: want %s{id} with the id a tool call or create_new_session returned (letters, digits, -, _ or .)", uri, resourceRoot+kind+"/")
	}
	return id, nil
}
