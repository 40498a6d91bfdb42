package mcpserver

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
)

// The resources of what a session's browser shows: its pages (tabs), an
// element of a page's latest snapshot, a page's network log, and the
// screenshots the record holds, each addressed by session and page index:
//
//	playwright:///page/{session_id}/{page}
//	playwright:///element/{session_id}/{page}/{ref}
//	playwright:///network-log/{session_id}/{page}
//	playwright:///screenshot/{session_id}/{page}/{timestamp}
//
// The screenshot template has three segments where the ref's has one; a
// URI template variable never matches a "/", so mcp-go picks the right one
// whatever order it tries them in.
const (
	resourcePage    = "page"
	resourceElement = "element"
	resourceNetwork = "network-log"
	// listTimeout bounds the page reads of one resources/list: a session
	// with a long call in flight is listed without its pages rather than
	// holding the list.
	listTimeout = 10 * time.Second
)

// screenshotTools are the tools whose calls store images.
var screenshotTools = []string{"browser_take_screenshot", "screenshot_element"}

// PageResource is the JSON of playwright:///page/{session_id}/{page}.
type PageResource struct {
	SessionID string `json:"session_id"`
	proxy.Page
}

// ElementResource is the JSON of playwright:///element/….
type ElementResource struct {
	SessionID string `json:"session_id"`
	Page      int    `json:"page"`
	proxy.Element
}

// NetworkLogResource is the JSON of playwright:///network-log/….
type NetworkLogResource struct {
	SessionID string               `json:"session_id"`
	Page      int                  `json:"page"`
	Entries   []proxy.NetworkEntry `json:"entries"`
}

func (s *Server) addPageResources() {
	s.mcp.AddResourceTemplate(mcp.NewResourceTemplate(resourceRoot+resourcePage+"/{session_id}/{page}", "page",
		mcp.WithTemplateTitle("Page (tab) of a session"),
		mcp.WithTemplateDescription("One page of a browser session, by tab index as browser_tabs numbers them: url, title, viewport {width, height}, current, live (false: the session is suspended and this is its last page from the record). Subscribe to hear when a call of this conversation navigates it."),
		mcp.WithTemplateMIMEType("application/json"),
	), codedRead(s.readPage))
	s.mcp.AddResourceTemplate(mcp.NewResourceTemplate(resourceRoot+resourceElement+"/{session_id}/{page}/{ref}", "element",
		mcp.WithTemplateTitle("Element of a page's latest snapshot"),
		mcp.WithTemplateDescription("The element with this ref (e14) in the latest snapshot of the page: tag, attributes, bounding_box {x, y, width, height} (null when not rendered)."),
		mcp.WithTemplateMIMEType("application/json"),
	), codedRead(s.readElement))
	s.mcp.AddResourceTemplate(mcp.NewResourceTemplate(resourceRoot+resourceNetwork+"/{session_id}/{page}", "network-log",
		mcp.WithTemplateTitle("Network requests of a page"),
		mcp.WithTemplateDescription("The page's recent requests, oldest first: method, url, status, resource_type, failure, timing (Playwright's resource timing: start_time in ms since the epoch, the rest in ms after it, -1 when not reached)."),
		mcp.WithTemplateMIMEType("application/json"),
	), codedRead(s.readNetworkLog))
	s.mcp.AddResourceTemplate(mcp.NewResourceTemplate(resourceRoot+resourceScreenshot+"/{session_id}/{page}/{timestamp}", "page-screenshot",
		mcp.WithTemplateTitle("Screenshot of a page"),
		mcp.WithTemplateDescription("The image(s) a screenshot call recorded on this page, base64 with their MIME type; timestamp is the call's, in ms since the epoch, as resources/list names it."),
	), codedRead(s.readPageScreenshot))
}

// pageURI is the URI of a resource of one page: kind is page or
// network-log; more are the segments after the page index.
func pageURI(kind, sessionID string, page int, more ...string) string {
	u := resourceRoot + kind + "/" + url.PathEscape(sessionID) + "/" + strconv.Itoa(page)
	for _, m := range more {
		u += "/" + url.PathEscape(m)
	}
	return u
}

// pageArgs splits playwright:///{kind}/{session_id}/{page}[/{more}] into
// its parts; want is the number of segments after the page index.
func pageArgs(uri, kind string, want int) (sessionID string, page int, more []string, err error) {
	shape := resourceRoot + kind + "/{session_id}/{page}" + strings.Repeat("/{…}", want)
	raw, ok := strings.CutPrefix(uri, resourceRoot+kind+"/")
	parts := strings.Split(raw, "/")
	if !ok || len(parts) != 2+want {
		return "", 0, nil, proxy.Errorf(proxy.EINVALID, "resource URI %q is not %s", uri, shape)
	}
	if sessionID, err = resourceID(resourceRoot+kind+"/"+parts[0], kind); err != nil {
		return "", 0, nil, err
	}
	page, err = strconv.Atoi(parts[1])
	if err != nil || page < 0 || parts[1] != strconv.Itoa(page) {
		return "", 0, nil, proxy.Errorf(proxy.EINVALID, "resource URI %q: page %q is not a page index (0, 1, … as browser_tabs numbers them)", uri, parts[1])
	}
	for _, p := range parts[2:] {
		v, uerr := url.PathUnescape(p)
		if uerr != nil || v == "" {
			return "", 0, nil, proxy.Errorf(proxy.EINVALID, "resource URI %q is not %s", uri, shape)
		}
		more = append(more, v)
	}
	return sessionID, page, more, nil
}

// pageService is the backend's page reads.
func (s *Server) pageService() (proxy.PageService, error) {
	ps, ok := s.sessions.(proxy.PageService)
	if !ok {
		return nil, proxy.Errorf(proxy.EINTERNAL, "this server cannot read pages")
	}
	return ps, nil
}

func jsonContents(uri string, v any) ([]mcp.ResourceContents, error) {
	body, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encoding %s: %w", uri, err)
	}
	return []mcp.ResourceContents{mcp.TextResourceContents{URI: uri, MIMEType: "application/json", Text: string(body)}}, nil
}

func pageNotFound(sessionID string, page, have int) error {
	e := proxy.Errorf(proxy.EPAGEMISSING, "session %s has no page %d (it has %d, numbered from 0)", sessionID, page, have)
	e.Details = map[string]any{"session_id": sessionID, "page": page}
	return e
}

func (s *Server) readPage(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
	id, page, _, err := pageArgs(req.Params.URI, resourcePage, 0)
	if err != nil {
		return nil, err
	}
	ps, err := s.pageService()
	if err != nil {
		return nil, err
	}
	pages, err := ps.Pages(s.acting(ctx), id)
	if err != nil {
		return nil, err
	}
	if page >= len(pages) {
		return nil, pageNotFound(id, page, len(pages))
	}
	return jsonContents(req.Params.URI, PageResource{SessionID: id, Page: pages[page]})
}

func (s *Server) readElement(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
	id, page, more, err := pageArgs(req.Params.URI, resourceElement, 1)
	if err != nil {
		return nil, err
	}
	ps, err := s.pageService()
	if err != nil {
		return nil, err
	}
	el, err := ps.Element(s.acting(ctx), id, page, more[0])
	if err != nil {
		return nil, err
	}
	return jsonContents(req.Params.URI, ElementResource{SessionID: id, Page: page, Element: *el})
}

func (s *Server) readNetworkLog(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
	id, page, _, err := pageArgs(req.Params.URI, resourceNetwork, 0)
	if err != nil {
		return nil, err
	}
	ps, err := s.pageService()
	if err != nil {
		return nil, err
	}
	entries, err := ps.NetworkLog(s.acting(ctx), id, page)
	if err != nil {
		return nil, err
	}
	return jsonContents(req.Params.URI, NetworkLogResource{SessionID: id, Page: page, Entries: entries})
}

// shot is one screenshot call of the record.
type shot struct {
	ref  string
	page int
	at   int64 // ms since the epoch
}

// screenshots are the successful screenshot calls of a session, with the
// page each was taken of as the record shows it: the tab marked current in
// the latest tab list an answer showed at or before the call; an answer
// with a ### Page section and no tab list means one tab, page 0.
func (s *Server) screenshots(ctx context.Context, sessionID string) ([]shot, error) {
	calls, err := s.content.Calls(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	var out []shot
	current := 0
	for _, c := range calls {
		if c.Response == nil {
			continue
		}
		if n, ok := currentTab(c.Response.Result); ok {
			current = n
		}
		if c.Response.Status == proxy.StatusSuccess && slices.Contains(screenshotTools, c.Request.ToolName) {
			out = append(out, shot{ref: c.Request.RefID, page: current, at: c.Request.Timestamp.UnixMilli()})
		}
	}
	return out, nil
}

// tabLine is a tab of upstream's tab list marked current.
var tabLine = regexp.MustCompile(`(?m)^- ([0-9]+): \(current\) \[`)

// currentTab reads the current tab's index from a recorded upstream
// answer, if it tells.
func currentTab(result string) (int, bool) {
	var r struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	}
	if json.Unmarshal([]byte(result), &r) != nil {
		return 0, false
	}
	for _, c := range r.Content {
		if m := tabLine.FindStringSubmatch(c.Text); m != nil {
			n, err := strconv.Atoi(m[1])
			return n, err == nil
		}
		if strings.Contains(c.Text, "### Page\n") && !strings.Contains(c.Text, "### Open tabs\n") {
			return 0, true
		}
	}
	return 0, false
}

func (s *Server) readPageScreenshot(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
	id, page, more, err := pageArgs(req.Params.URI, resourceScreenshot, 1)
	if err != nil {
		return nil, err
	}
	at, err := strconv.ParseInt(more[0], 10, 64)
	if err != nil || at < 0 {
		return nil, proxy.Errorf(proxy.EINVALID, "resource URI %q: timestamp %q is not ms since the epoch, as resources/list names it", req.Params.URI, more[0])
	}
	actx := s.acting(ctx)
	shots, err := s.screenshots(actx, id)
	if err != nil {
		return nil, err
	}
	var out []mcp.ResourceContents
	for _, sh := range shots {
		if sh.page != page || sh.at != at {
			continue
		}
		images, err := s.content.Images(actx, sh.ref)
		if err != nil {
			return nil, err
		}
		for _, im := range images {
			out = append(out, mcp.BlobResourceContents{URI: req.Params.URI, MIMEType: im.MimeType, Blob: base64.StdEncoding.EncodeToString(im.Data)})
		}
	}
	if len(out) == 0 {
		e := proxy.Errorf(proxy.EREFMISSING, "session %s recorded no screenshot of page %d at %d; resources/list names the screenshots there are", id, page, at)
		e.Details = map[string]any{"session_id": id, "page": page, "timestamp": at}
		return nil, e
	}
	return out, nil
}

// listPageResources adds to a resources/list answer the pages and the
// recorded screenshots of a session.
func (s *Server) listPageResources(ctx context.Context, sess *proxy.Session, result *mcp.ListResourcesResult) {
	if ps, err := s.pageService(); err == nil {
		lctx, cancel := context.WithTimeout(ctx, listTimeout)
		pages, err := ps.Pages(lctx, sess.ID)
		cancel()
		if err != nil {
			s.log.Warn("resources/list: reading a session's pages failed", "session_id", sess.ID, "err", err)
		}
		for _, p := range pages {
			name := fmt.Sprintf("page %d of session %s", p.Index, sess.ID)
			opts := []mcp.ResourceOption{mcp.WithMIMEType("application/json"), mcp.WithResourceDescription("Page " + p.URL)}
			if p.Title != "" {
				opts = append(opts, mcp.WithResourceTitle(p.Title))
			}
			result.Resources = append(result.Resources, mcp.NewResource(pageURI(resourcePage, sess.ID, p.Index), name, opts...))
		}
	}
	shots, err := s.screenshots(ctx, sess.ID)
	if err != nil {
		s.log.Warn("resources/list: reading a session's screenshots failed", "session_id", sess.ID, "err", err)
	}
	for _, sh := range shots {
		at := time.UnixMilli(sh.at).UTC().Format(time.RFC3339Nano)
		result.Resources = append(result.Resources, mcp.NewResource(pageURI(resourceScreenshot, sess.ID, sh.page, strconv.FormatInt(sh.at, 10)),
			fmt.Sprintf("screenshot of page %d of session %s at %s", sh.page, sess.ID, at),
			mcp.WithResourceDescription("Screenshot taken by call "+sh.ref+" at "+at+".")))
	}
}

// Subscriptions: a client subscribes to page resources of its own
// sessions; a call of that client whose answer shows its page at another
// URL or with another title sends notifications/resources/updated for the
// page the session is on now. Calls made elsewhere (another connection,
// the HTTP API) notify nobody here.

// subscribable checks a resources/subscribe before mcp-go acknowledges it:
// only page resources send updates, and only of the caller's own sessions
// (another client's is SESSION_NOT_FOUND, as an unknown id).
func (s *Server) subscribable(ctx context.Context, uri string) error {
	id, _, _, err := pageArgs(uri, resourcePage, 0)
	if err != nil {
		return fmt.Errorf("%w: only page resources (%s{session_id}/{page}) send updates: %w", mcp.ErrInvalidParams, resourceRoot+resourcePage+"/", err)
	}
	if _, err := s.sessions.GetSession(s.acting(ctx), id); err != nil {
		return resourceError(err)
	}
	return nil
}

// checkSubscribe runs before every request: a resources/subscribe that
// subscribable refuses is answered with its error (mcp-go's own handler
// cannot fail one).
func (s *Server) checkSubscribe(ctx context.Context, _ any, message any) error {
	raw, ok := message.(json.RawMessage)
	if !ok {
		return nil
	}
	var sub struct {
		Method mcp.MCPMethod `json:"method"`
		Params struct {
			URI string `json:"uri"`
		} `json:"params"`
	}
	if json.Unmarshal(raw, &sub) != nil || sub.Method != mcp.MethodResourcesSubscribe {
		return nil
	}
	return s.subscribable(ctx, sub.Params.URI)
}

func (s *Server) subscribed(ctx context.Context, _ any, req *mcp.SubscribeRequest, _ *mcp.EmptyResult) {
	key := clientKey(ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.subs[key] == nil {
		s.subs[key] = map[string]bool{}
	}
	s.subs[key][req.Params.URI] = true
}

func (s *Server) unsubscribed(ctx context.Context, _ any, req *mcp.UnsubscribeRequest, _ *mcp.EmptyResult) {
	key := clientKey(ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.subs[key], req.Params.URI)
}

// subscribedPages are the page URIs of a session the caller subscribed to.
func (s *Server) subscribedPages(ctx context.Context, sessionID string) []string {
	prefix := resourceRoot + resourcePage + "/" + url.PathEscape(sessionID) + "/"
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for uri := range s.subs[clientKey(ctx)] {
		if strings.HasPrefix(uri, prefix) {
			out = append(out, uri)
		}
	}
	slices.Sort(out)
	return out
}

// notifyNavigation tells the caller that a page it subscribed to changed,
// when its call's answer shows the session's page at another URL or with
// another title. The page is the one the session is on now; when that
// cannot be read, every subscribed page of the session is named, since a
// notification only asks the client to read again.
func (s *Server) notifyNavigation(ctx context.Context, res *proxy.CallResult) {
	if res == nil || res.Changes == nil || !res.Changes.NewPage && !res.Changes.TitleChanged {
		return
	}
	uris := s.subscribedPages(ctx, res.SessionID)
	if len(uris) == 0 {
		return
	}
	if ps, err := s.pageService(); err == nil {
		if pages, err := ps.Pages(s.acting(ctx), res.SessionID); err == nil {
			for _, p := range pages {
				if p.Current {
					uris = slices.DeleteFunc(uris, func(u string) bool { return u != pageURI(resourcePage, res.SessionID, p.Index) })
				}
			}
		}
	}
	if s.updates != nil {
		s.updates.drain(clientKey(ctx))
	}
	sent := 0
	for _, uri := range uris {
		if err := s.mcp.SendNotificationToClient(ctx, mcp.MethodNotificationResourceUpdated, map[string]any{"uri": uri}); err != nil {
			s.log.Warn("sending notifications/resources/updated failed", "uri", uri, "err", err)
			continue
		}
		sent++
	}
	if s.updates != nil {
		s.updates.await(ctx, clientKey(ctx), sent)
	}
}

// addSubscriptions wires the subscription checks and bookkeeping.
func (s *Server) addSubscriptions(hooks *server.Hooks) {
	hooks.AddOnRequestInitialization(s.checkSubscribe)
	hooks.AddAfterSubscribe(s.subscribed)
	hooks.AddAfterUnsubscribe(s.unsubscribed)
}
