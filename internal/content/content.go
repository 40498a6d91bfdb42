// Package content owns what the model reads back from the record: the text
// of a ref (page snapshot, or result text when there is no snapshot),
// snapshot search (matches with their yaml ancestors and neighbourhood),
// the per-ref diff cursor, console filtering (the get_content and
// get_console_content tools), and what a call's answer shows of the page:
// the summary of what it changed and the page's outline.
//
// It reads responses, console entries and images and must never write
// anything but diff cursors: the record itself is immutable once stored.
// It knows nothing of HTTP or MCP; callers turn Content into their format.
package content

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/clock"
)

// Store is the part of the record this package reads (and, for cursors,
// writes). *store.DB implements it.
type Store interface {
	// GetResponse returns a *proxy.Error EREFMISSING for an unknown or
	// still-running call.
	GetResponse(ctx context.Context, refID string) (*proxy.Response, error)
	ListImages(ctx context.Context, refID string) ([]proxy.Image, error)
	ListConsole(ctx context.Context, refID string) ([]proxy.ConsoleEntry, error)
	// GetCursor returns nil, nil when the ref has no cursor.
	GetCursor(ctx context.Context, refID string) (*proxy.DiffCursor, error)
	PutCursor(ctx context.Context, c *proxy.DiffCursor) error
	// RefOwner returns the owner of the session a ref belongs to,
	// EREFMISSING for an unknown ref.
	RefOwner(ctx context.Context, refID string) (proxy.ClientID, error)
	// GetSession returns ESESSIONMISSING for an unknown session.
	GetSession(ctx context.Context, id string) (*proxy.Session, error)
	// ListCalls returns a session's calls in the order they were made.
	ListCalls(ctx context.Context, sessionID string) ([]proxy.Call, error)
	ListSessionEvents(ctx context.Context, sessionID string) ([]proxy.SessionEvent, error)
	// GetDownload returns EDOWNLOADMISSING when the ref has no download
	// of that name.
	GetDownload(ctx context.Context, refID, name string) (*proxy.Download, error)
}

// Service answers get_content and get_console_content. It is safe for
// concurrent use.
type Service struct {
	store Store
	clock clock.Clock // when a diff cursor was last read
	refs  refLocks
}

// Option configures a Service.
type Option func(*Service)

// WithClock sets the clock that stamps a diff cursor's last read; the
// default is the wall clock.
func WithClock(c clock.Clock) Option {
	return func(s *Service) { s.clock = clock.Or(c) }
}

// New returns a Service reading from s.
func New(s Store, opts ...Option) *Service {
	svc := &Service{store: s, clock: clock.Real{}}
	for _, o := range opts {
		o(svc)
	}
	return svc
}

// Content returns the content of refID: its page snapshot, or the text of its
// result when it has none, or, when search.Text is not empty, what a search
// of it shows (see Search).
//
// The diff cursor of the ref makes repeated reads of the whole cheap: the
// first read (or any read with resetCursor) returns the whole view; a later
// read returns "" with Unchanged if the view is the same as last time, only
// the new tail if the view grew by appending to what was last returned, and
// the whole view otherwise. The cursor is stored, so this survives
// restarts, and every such read updates it (but for one the record cannot
// take for want of space: that read still answers, and the cursor stays).
//
// A search is not a diff: it answers its matches every time, with NoMatch
// when there are none, and neither reads nor moves the cursor (nor comes
// with the ref's images). An unknown ref is the store's EREFMISSING, an
// invalid regular expression EINVALID.
func (s *Service) Content(ctx context.Context, refID string, search proxy.Query, resetCursor bool) (*proxy.Content, error) {
	var m *matcher
	if search.Text != "" {
		var err error
		if m, err = compile(search); err != nil {
			return nil, err
		}
	}
	if err := s.visible(ctx, refID); err != nil {
		return nil, err
	}
	resp, err := s.store.GetResponse(ctx, refID)
	if err != nil {
		return nil, err // already a *proxy.Error (EREFMISSING) or wrapped by the store
	}
	text, snapshot := textOf(resp)
	if m != nil {
		hits := m.search(text)
		return &proxy.Content{Text: hits, Snapshot: snapshot, NoMatch: hits == ""}, nil
	}
	view := text
	hash := hashOf(view)

	// Read, compare and store the cursor as one step per ref: parallel tool
	// calls on the same ref would otherwise both see the old cursor and one
	// of them would get a diff against a read it never made.
	unlock := s.refs.lock(refID)
	defer unlock()

	var prev *proxy.DiffCursor
	if !resetCursor {
		if prev, err = s.store.GetCursor(ctx, refID); err != nil {
			return nil, fmt.Errorf("content: get %s: %w", refID, err)
		}
	}
	out := &proxy.Content{Snapshot: snapshot}
	switch {
	case prev == nil:
		out.Text = view
	case prev.LastSnapshotHash == hash:
		out.Unchanged = true
	case prev.CursorPosition < len(view) && hashOf(view[:prev.CursorPosition]) == prev.LastSnapshotHash:
		out.Text = view[prev.CursorPosition:]
	default:
		out.Text = view
	}
	if !out.Unchanged && len(out.Text) == len(view) {
		if out.Images, err = s.store.ListImages(ctx, refID); err != nil {
			return nil, fmt.Errorf("content: get %s: %w", refID, err)
		}
	}
	cur := &proxy.DiffCursor{RefID: refID, CursorPosition: len(view), LastSnapshotHash: hash, LastRead: s.clock.Now()}
	if err := s.store.PutCursor(ctx, cur); err != nil && proxy.ErrorCode(err) != proxy.ESTORAGEFULL {
		return nil, fmt.Errorf("content: get %s: save cursor: %w", refID, err)
	}
	// A cursor the full disk could not take stays where it was: what is
	// stored is still read, and the next read answers the same again.
	return out, nil
}

// Peek returns the whole content of refID — its page snapshot, or its result
// text — with all its images, without reading or moving its diff cursor: a
// look at a ref from elsewhere (an MCP resource read) must not turn the
// model's next get_content into an incremental or empty read. An unknown ref
// is EREFMISSING.
func (s *Service) Peek(ctx context.Context, refID string) (*proxy.Content, error) {
	if err := s.visible(ctx, refID); err != nil {
		return nil, err
	}
	resp, err := s.store.GetResponse(ctx, refID)
	if err != nil {
		return nil, err
	}
	text, snapshot := textOf(resp)
	images, err := s.store.ListImages(ctx, refID)
	if err != nil {
		return nil, fmt.Errorf("content: peek %s: %w", refID, err)
	}
	return &proxy.Content{Text: text, Images: images, Snapshot: snapshot}, nil
}

// textOf is what get_content shows of a response: the page snapshot, or the
// result text when there is none (snapshot false).
func textOf(resp *proxy.Response) (text string, snapshot bool) {
	if resp.PageSnapshot != "" {
		return resp.PageSnapshot, true
	}
	return ResultText(resp.Result), false
}

// Images returns the stored images of refID without reading or moving its
// diff cursor: images are not diffed, and fetching one must not turn the
// next get_content into an incremental read. An unknown ref is EREFMISSING.
func (s *Service) Images(ctx context.Context, refID string) ([]proxy.Image, error) {
	if err := s.visible(ctx, refID); err != nil {
		return nil, err
	}
	if _, err := s.store.GetResponse(ctx, refID); err != nil {
		return nil, err
	}
	images, err := s.store.ListImages(ctx, refID)
	if err != nil {
		return nil, fmt.Errorf("content: images of %s: %w", refID, err)
	}
	return images, nil
}

// Calls returns every call of a session, as recorded, in the order they
// were made; another client's session is refused as an unknown one.
func (s *Service) Calls(ctx context.Context, sessionID string) ([]proxy.Call, error) {
	if err := s.sessionVisible(ctx, sessionID); err != nil {
		return nil, err
	}
	return s.store.ListCalls(ctx, sessionID)
}

// Events returns a session's events in order, under the same rule as
// Calls.
func (s *Service) Events(ctx context.Context, sessionID string) ([]proxy.SessionEvent, error) {
	if err := s.sessionVisible(ctx, sessionID); err != nil {
		return nil, err
	}
	return s.store.ListSessionEvents(ctx, sessionID)
}

// sessionVisible refuses a session the caller of ctx may not see exactly as
// an unknown one.
func (s *Service) sessionVisible(ctx context.Context, sessionID string) error {
	sess, err := s.store.GetSession(ctx, sessionID)
	if err != nil {
		return err
	}
	if !proxy.CanSee(ctx, sess.Owner) {
		return proxy.SessionNotFound(sessionID)
	}
	return nil
}

// visible refuses a ref of a session the caller of ctx may not see
// (proxy.CanSee) exactly as an unknown ref. The operator's reads skip the
// look-up.
func (s *Service) visible(ctx context.Context, refID string) error {
	if _, ok := proxy.ClientFrom(ctx); !ok {
		return nil
	}
	owner, err := s.store.RefOwner(ctx, refID)
	if err != nil {
		return err
	}
	if !proxy.CanSee(ctx, owner) {
		return proxy.RefNotFound(refID)
	}
	return nil
}

// hashOf is the hex sha256 of s. It feeds the hash through a small buffer
// because []byte(s) would copy a whole (up to many MB) snapshot per read.
func hashOf(s string) string {
	h := sha256.New()
	buf := make([]byte, min(len(s), 64<<10))
	for len(s) > 0 {
		n := copy(buf, s)
		h.Write(buf[:n])
		s = s[n:]
	}
	return hex.EncodeToString(h.Sum(nil))
}

// callToolResult is the part of an MCP CallToolResult that carries text.
type callToolResult struct {
	Content *[]struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
}

// ResultText is the text a stored result shows the model: the text parts of
// an MCP CallToolResult joined by newlines. A result that is not a
// CallToolResult is returned as is, so nothing stored is ever hidden.
func ResultText(result string) string {
	var r callToolResult
	if err := json.Unmarshal([]byte(result), &r); err != nil || r.Content == nil {
		return result
	}
	var parts []string
	for _, c := range *r.Content {
		if c.Type == "text" {
			parts = append(parts, c.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// refLocks is a mutex per ref, created on demand and dropped when unused,
// so memory stays proportional to the reads in flight, not to the record.
type refLocks struct {
	mu    sync.Mutex
	locks map[string]*refLock
}

type refLock struct {
	mu      sync.Mutex
	waiters int
}

func (l *refLocks) lock(ref string) (unlock func()) {
	l.mu.Lock()
	if l.locks == nil {
		l.locks = make(map[string]*refLock)
	}
	rl := l.locks[ref]
	if rl == nil {
		rl = &refLock{}
		l.locks[ref] = rl
	}
	rl.waiters++
	l.mu.Unlock()

	rl.mu.Lock()
	return func() {
		rl.mu.Unlock()
		l.mu.Lock()
		if rl.waiters--; rl.waiters == 0 {
			delete(l.locks, ref)
		}
		l.mu.Unlock()
	}
}

var _ proxy.ContentService = (*Service)(nil)
