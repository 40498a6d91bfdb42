package liveview

import (
	"context"
	"encoding/json"
	"unicode/utf8"

	"github.com/coder/websocket"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
)

// The live view's messages (docs/API.md has the protocol).

type frameMessage struct {
	Type   string  `json:"type"`
	Data   string  `json:"data"`
	Width  float64 `json:"width"`
	Height float64 `json:"height"`
	At     int64   `json:"at"`
}

type tabsMessage struct {
	Type string     `json:"type"`
	Tabs []tabEntry `json:"tabs"`
}

type tabEntry struct {
	TargetID string `json:"target_id"`
	URL      string `json:"url"`
	Title    string `json:"title"`
	Current  bool   `json:"current"`
}

type stateMessage struct {
	Type    string           `json:"type"`
	Control *proxy.Control   `json:"control"`
	Waiting *proxy.HumanWait `json:"waiting"`
	Yours   bool             `json:"yours"`
}

type errorMessage struct {
	Type    string `json:"type"`
	Code    string `json:"code"`
	Message string `json:"message"`
}

// inMessage is any message of a viewer; Type says which fields count.
type inMessage struct {
	Type      string  `json:"type"`
	Lease     string  `json:"lease"`
	Event     string  `json:"event"`
	X         float64 `json:"x"`
	Y         float64 `json:"y"`
	Button    string  `json:"button"`
	Clicks    int     `json:"clicks"`
	DX        float64 `json:"dx"`
	DY        float64 `json:"dy"`
	Modifiers int     `json:"modifiers"`
	Key       string  `json:"key"`
	Text      string  `json:"text"`
	TargetID  string  `json:"target_id"`
}

var (
	mouseEvents  = map[string]bool{"pressed": true, "released": true, "moved": true, "wheel": true}
	mouseButtons = map[string]bool{"": true, "left": true, "middle": true, "right": true}
)

// read takes the viewer's messages until its socket closes. A message's
// text is never logged nor echoed: it may be what a person typed.
func (v *viewer) read(ctx context.Context) {
	for {
		typ, data, err := v.conn.Read(ctx)
		if err != nil {
			return
		}
		var m inMessage
		if typ != websocket.MessageText || json.Unmarshal(data, &m) != nil {
			v.sendError(proxy.Errorf(proxy.EINVALID, "a live view message is a JSON object in a text frame"))
			continue
		}
		v.handle(ctx, m)
	}
}

func (v *viewer) handle(ctx context.Context, m inMessage) {
	switch m.Type {
	case "lease":
		v.mu.Lock()
		v.lease = m.Lease
		v.mu.Unlock()
		v.sendState(ctx, true)
	case "tab":
		v.switchTab(ctx, m.TargetID)
	case "mouse", "key", "text", "paste":
		if !v.holds() {
			e := proxy.Errorf(proxy.ECONTROLHELD, "this viewer does not hold session %s's control: take control, then send its lease; others may watch, only the holder acts", v.id)
			v.sendError(e)
			return
		}
		if err := v.input(ctx, m); err != nil {
			v.sendError(err)
		}
	default:
		v.sendError(proxy.Errorf(proxy.EINVALID, "unknown live view message type %q (lease, mouse, key, text, paste, tab)", m.Type))
	}
}

// input passes the holder's input to the watched page and records what
// the person did.
func (v *viewer) input(ctx context.Context, m inMessage) error {
	page := v.currentPage()
	lease := v.currentLease()
	switch m.Type {
	case "mouse":
		if !mouseEvents[m.Event] || !mouseButtons[m.Button] {
			return proxy.Errorf(proxy.EINVALID, "a mouse event is pressed, released, moved or wheel, with button left, middle, right or none")
		}
		desc := ""
		if m.Event == "pressed" {
			// Asked before the press reaches the page: the click may
			// change what is there.
			desc = page.Describe(ctx, m.X, m.Y)
		}
		err := page.Mouse(ctx, Mouse{Type: m.Event, X: m.X, Y: m.Y, DeltaX: m.DX, DeltaY: m.DY, Button: m.Button, ClickCount: m.Clicks, Modifiers: m.Modifiers})
		if err != nil {
			v.cfg.Log.InfoContext(ctx, "live view mouse event failed", "session_id", v.id, "err", err)
			return proxy.Errorf(proxy.EBROWSER, "the page did not take the mouse event")
		}
		v.rec.mouse(ctx, lease, m.Event, m.X, m.Y, desc)
	case "key":
		if err := page.Key(ctx, m.Key, m.Modifiers); err != nil {
			// The key is not named back: it may be a character typed.
			return proxy.Errorf(proxy.EINVALID, "not a named key (Enter, Tab, Backspace, Delete, Escape, arrows, Home, End, PageUp, PageDown); characters go as text")
		}
		v.rec.done(ctx, lease, "pressed "+m.Key)
	case "text":
		if err := page.Type(ctx, m.Text); err != nil {
			// Neither the text nor an error that could quote it.
			v.cfg.Log.InfoContext(ctx, "live view typing failed", "session_id", v.id)
			return proxy.Errorf(proxy.EBROWSER, "the page did not take the typed text")
		}
		v.rec.typed(ctx, lease, utf8.RuneCountInString(m.Text))
	case "paste":
		if err := page.Paste(ctx, m.Text); err != nil {
			v.cfg.Log.InfoContext(ctx, "live view paste failed", "session_id", v.id)
			return proxy.Errorf(proxy.EBROWSER, "the page did not take the pasted text")
		}
		v.rec.done(ctx, lease, "pasted "+characters(utf8.RuneCountInString(m.Text)))
	}
	return nil
}

// switchTab moves the view to another tab of the session's browser
// context; any other target is refused.
func (v *viewer) switchTab(ctx context.Context, targetID string) {
	page := v.currentPage()
	if targetID == page.TargetID() {
		return
	}
	tabs, err := page.Tabs(ctx)
	if err != nil {
		v.sendError(proxy.Errorf(proxy.EUNAVAILABLE, "the session's tabs cannot be read now"))
		return
	}
	found := false
	for _, t := range tabs {
		found = found || t.TargetID == targetID
	}
	if !found {
		e := proxy.Errorf(proxy.EINVALID, "%q is not a tab of session %s", targetID, v.id)
		e.Details = map[string]any{"field": "target_id"}
		v.sendError(e)
		return
	}
	select {
	case v.switchTo <- targetID:
	default:
		v.sendError(proxy.Errorf(proxy.EUNAVAILABLE, "a tab switch is in progress"))
	}
}
