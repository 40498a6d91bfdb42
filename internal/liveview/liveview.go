// Package liveview owns one viewer's WebSocket of a session's live view
// (GET /sessions/{id}/live): the page's frames out, the holder's input in,
// the session's tabs and control state. It stores nothing: frames are
// dropped once sent, and what a person types is counted, never kept or
// logged. The person's actions reach the record through
// proxy.LiveViewService.HumanAction, as what they did, never what they typed.
package liveview

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/coder/websocket"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/clock"
)

// Page is the proxy's own CDP connection to one page target, as
// internal/live attaches it.
type Page interface {
	ContextID() string
	TargetID() string
	// Tabs are the page targets of the same browser context only.
	Tabs(ctx context.Context) ([]Tab, error)
	// Screencast blocks, calling frame for each frame, until ctx ends or
	// the target goes (ErrGone).
	Screencast(ctx context.Context, o Options, frame func(Frame)) error
	Mouse(ctx context.Context, m Mouse) error
	// Key presses a named key (Enter, Tab, Backspace, arrows…); any other
	// is an error.
	Key(ctx context.Context, key string, modifiers int) error
	Type(ctx context.Context, text string) error
	Paste(ctx context.Context, text string) error
	// Describe is the role and accessible name of what is at a point
	// ("button 'Sign in'"), "" when unknown.
	Describe(ctx context.Context, x, y float64) string
	Close() error
}

// Tab is one page target of a session's browser context.
type Tab struct{ TargetID, URL, Title string }

// Options shape a screencast; zero values are the attacher's defaults.
type Options struct{ Quality, MaxWidth, MaxHeight, MaxFPS int }

// Frame is one screencast image (JPEG) with the viewport it shows, in CSS
// px: the space of Mouse's coordinates.
type Frame struct {
	Data                      []byte
	DeviceWidth, DeviceHeight float64
	At                        time.Time
}

// Mouse is one mouse event at (X, Y) in viewport CSS px.
type Mouse struct {
	Type           string // "pressed", "released", "moved", "wheel"
	X, Y           float64
	DeltaX, DeltaY float64
	Button         string // "left", "middle", "right", ""
	ClickCount     int
	Modifiers      int
}

// Attacher attaches to page targetID of the browser at endpoint.
type Attacher func(ctx context.Context, endpoint, targetID string) (Page, error)

// ErrGone is what Screencast returns when its target closed; the viewer
// then follows the session to its current page.
var ErrGone = errors.New("liveview: the page is gone")

// Sessions is what a viewer needs of sessions: the live view's service,
// and the session itself for its control and waiting state.
type Sessions interface {
	proxy.LiveViewService
	GetSession(ctx context.Context, id string) (*proxy.Session, error)
}

// Config is a Handler's.
type Config struct {
	Sessions Sessions
	Attach   Attacher
	Log      *slog.Logger
	// Poll is how often a viewer looks at the session's control state
	// and tabs (500 ms when zero); Clock ticks it (the real one when nil).
	Poll  time.Duration
	Clock clock.Clock
	// Screencast shapes the frames.
	Screencast Options
}

// Handler serves live view WebSockets.
type Handler struct {
	cfg Config

	mu      sync.Mutex
	closed  bool
	viewers map[*viewer]struct{}
	wg      sync.WaitGroup
}

// defaultPoll is how often a viewer looks at its session when Config sets
// nothing: a hand-back shows within about that.
const defaultPoll = 500 * time.Millisecond

// readLimit bounds one viewer message: a paste is the largest.
const readLimit = 256 << 10

// New returns a Handler.
func New(cfg Config) *Handler {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.Poll <= 0 {
		cfg.Poll = defaultPoll
	}
	cfg.Clock = clock.Or(cfg.Clock)
	return &Handler{cfg: cfg, viewers: map[*viewer]struct{}{}}
}

// ServeLive serves one viewer of session id. The router has judged the
// caller (the operator's token or the inspector's cookie) and the page's
// Origin; the socket is bound to this session alone.
func (h *Handler) ServeLive(w http.ResponseWriter, r *http.Request, id string) {
	conn, err := websocket.Accept(w, r, &websocket.AcceptOptions{
		// Origin was judged by the router (this server's own origin or
		// one of PROXY_ALLOWED_ORIGINS); the library's own check (same
		// host only) would refuse the listed ones.
		InsecureSkipVerify: true,
	})
	if err != nil {
		// Accept has answered the client already.
		h.cfg.Log.Info("live view handshake refused", "session_id", id, "err", err)
		return
	}
	conn.SetReadLimit(readLimit)
	ctx, cancel := context.WithCancel(context.WithoutCancel(r.Context()))
	v := newViewer(h.cfg, conn, id, cancel)
	if !h.add(v) {
		cancel()
		_ = conn.Close(websocket.StatusGoingAway, "proxy-server is shutting down")
		return
	}
	defer h.drop(v)
	v.run(ctx)
}

func (h *Handler) add(v *viewer) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return false
	}
	h.viewers[v] = struct{}{}
	h.wg.Add(1)
	return true
}

func (h *Handler) drop(v *viewer) {
	h.mu.Lock()
	delete(h.viewers, v)
	h.mu.Unlock()
	h.wg.Done()
}

// Close ends every viewer (proxy-server's shutdown: http.Server.Shutdown
// neither waits for nor closes hijacked connections) and waits for them.
func (h *Handler) Close() {
	h.mu.Lock()
	h.closed = true
	for v := range h.viewers {
		v.stop()
	}
	h.mu.Unlock()
	h.wg.Wait()
}

// HandingBack records what the viewers holding session id's control with
// lease have pending (typed characters), while the lease still holds:
// the hand-back that follows ends it.
func (h *Handler) HandingBack(ctx context.Context, id, lease string) {
	h.mu.Lock()
	var holders []*viewer
	for v := range h.viewers {
		if v.id == id && v.currentLease() == lease {
			holders = append(holders, v)
		}
	}
	h.mu.Unlock()
	for _, v := range holders {
		v.rec.flushTyped(ctx)
	}
}
