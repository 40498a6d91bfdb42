package session

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"strings"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/answer"
)

// leaveReserved keeps a session's page off the proxy's own addresses. The
// navigation policy refuses a tool call that names one, but a call can
// still leave the page there without naming it: a redirect the browser
// follows, a history step back. A page there shows this session what
// belongs to every session (the API's lists, another session's record), so
// nothing of the answer is kept or returned: the files it links are
// removed unread, the page is taken to about:blank, and the call is
// recorded as a DOMAIN_BLOCKED failure, which is what raw becomes.
func (m *Manager) leaveReserved(ctx context.Context, l *live, raw json.RawMessage) json.RawMessage {
	rc := m.opts.Policy
	// Most answers are on ordinary pages: judge the page line in the bytes
	// before parsing the whole answer a second time.
	if u := pageLine(raw); u == "" || !rc.IsReserved(u) {
		return raw
	}
	parsed, err := answer.Parse(raw)
	if err != nil || parsed.PageURL == "" || !rc.IsReserved(parsed.PageURL) {
		return raw
	}
	m.log.WarnContext(ctx, "a call left the session's page on one of the proxy's own addresses; taking it away", "session_id", l.id, "page", origin(parsed.PageURL))
	m.discard(ctx, l, parsed)
	blank, _ := json.Marshal(map[string]string{"url": "about:blank"})
	if out, err := m.forward(ctx, l, "browser_navigate", blank); err != nil {
		m.log.WarnContext(ctx, "taking the page to about:blank", "session_id", l.id, "err", err)
	} else if p, err := answer.Parse(out); err == nil {
		m.discard(ctx, l, p)
	}
	msg := fmt.Sprintf("%s: the page went to %s, an address of this proxy's own services, which no session may open (a redirect or a link took it there). Nothing of that page was kept; the page is now about:blank.",
		proxy.EDOMAINBLOCKED, origin(parsed.PageURL))
	out, _ := json.Marshal(map[string]any{
		"content": []map[string]string{{"type": "text", "text": "### Error\n" + msg}},
		"isError": true,
	})
	return out
}

// discard removes the files an answer links, unread.
func (m *Manager) discard(ctx context.Context, l *live, p *answer.Parsed) {
	if _, err := answer.Ingest(p, l.worker.OutputDir(), m.clock.Now()); err != nil {
		m.log.WarnContext(ctx, "removing the files of a discarded answer", "session_id", l.id, "err", err)
	}
}

// origin is u's scheme and host, for messages: its path can name a record
// (/content/{ref}), which an answer has no business repeating.
func origin(u string) string {
	p, err := url.Parse(u)
	if err != nil || p.Host == "" {
		return "(an unreadable URL)"
	}
	return p.Scheme + "://" + p.Host
}

// pageLine is the start of the page URL an answer reports, read from its
// JSON bytes: up to the first escape or quote, which in a URL can only come
// after its host and port. "" when the answer names no page.
func pageLine(raw []byte) string {
	const mark = "- Page URL: "
	i := bytes.Index(raw, []byte(mark))
	if i < 0 {
		return ""
	}
	rest := raw[i+len(mark):]
	if j := bytes.IndexAny(rest, "\\\""); j >= 0 {
		rest = rest[:j]
	}
	return string(rest)
}

// SkipDocument implements redact.Skipper: a document without a WebSocket
// URL holds no endpoint.
func (e endpointMask) SkipDocument(raw []byte) bool {
	return !bytes.Contains(raw, []byte("ws://")) && !bytes.Contains(raw, []byte("wss://"))
}

// endpointURL finds WebSocket URLs in text: the form in which a browser's
// endpoint can surface in an answer (a connect error's call log, after the
// shared browser died).
var endpointURL = regexp.MustCompile(`wss?://[^\s"'<>\x60]+`)

// playwrightPath is the secret path of a Playwright browser server's
// endpoint: whoever knows the endpoint can connect to the shared browser
// (a page can too, from a script) and reach every session's context.
var playwrightPath = regexp.MustCompile(`/[0-9a-f]{32}\b`)

// endpointMask masks browser endpoints in everything recorded or returned:
// a Playwright server's (its secret path) and any WebSocket URL on one of
// the proxy's own addresses (the nodes').
type endpointMask struct{ reserved func(url string) bool }

const endpointMark = "<browser endpoint>"

func (e endpointMask) Replace(s string) string {
	if !strings.Contains(s, "ws://") && !strings.Contains(s, "wss://") {
		return s
	}
	return endpointURL.ReplaceAllStringFunc(s, func(u string) string {
		if playwrightPath.MatchString(u) || (e.reserved != nil && e.reserved(u)) {
			return endpointMark
		}
		return u
	})
}
