// Package live owns the proxy's own CDP connections to one session's page:
// screencast, input, what is at a point, screenshots. It stores nothing and
// attaches only to the target it is given.
//
// What a person types (Type, Paste) is never logged or kept here: it goes
// to the page and nowhere else.
package live

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// ErrGone means the page's target closed (or the browser's socket did):
// nothing more can be done through this Page.
var ErrGone = errors.New("live: the page is gone")

// Page is a CDP session attached to one page target. Its methods are safe
// for concurrent use; one Screencast runs at a time.
type Page struct {
	c         *conn
	targetID  string
	contextID string
	session   string

	goneOnce sync.Once
	gone     chan struct{}

	mu     sync.Mutex
	frames chan screencastFrame // the running Screencast's, or nil

	closeOnce sync.Once
}

// Tab is one page target of the attached page's browser context.
type Tab struct{ TargetID, URL, Title string }

// Options shape a screencast; zero values mean JPEG quality 60, at most
// 1280 by 1280 pixels and DefaultMaxFPS frames a second.
type Options struct{ Quality, MaxWidth, MaxHeight, MaxFPS int }

// DefaultMaxFPS bounds a screencast's frame rate. Unbounded, Chromium
// encodes a frame for every compositor frame of a busy page and one viewer
// costs most of a CPU; a person following a page needs far fewer.
const DefaultMaxFPS = 15

// Frame is one screencast image.
type Frame struct {
	Data []byte // JPEG
	// DeviceWidth and DeviceHeight are the page's viewport in CSS px: the
	// space Mouse's coordinates are in.
	DeviceWidth, DeviceHeight float64
	At                        time.Time
}

// Mouse is one mouse event at (X, Y) in viewport CSS px.
type Mouse struct {
	Type           string // "pressed", "released", "moved", "wheel"
	X, Y           float64
	DeltaX, DeltaY float64 // wheel only
	Button         string  // "left", "middle", "right", "" (none)
	ClickCount     int
	Modifiers      int // CDP's bit field: Alt=1, Ctrl=2, Meta=4, Shift=8
}

type screencastFrame struct {
	Data      string `json:"data"`
	SessionID int64  `json:"sessionId"`
	Metadata  struct {
		DeviceWidth  float64 `json:"deviceWidth"`
		DeviceHeight float64 `json:"deviceHeight"`
		Timestamp    float64 `json:"timestamp"`
	} `json:"metadata"`
}

type targetInfo struct {
	TargetID         string `json:"targetId"`
	Type             string `json:"type"`
	Title            string `json:"title"`
	URL              string `json:"url"`
	BrowserContextID string `json:"browserContextId"`
}

// Attach connects to the browser at endpoint ("http://host:port", CDP's
// HTTP address, or its ws://…/devtools/browser/… URL) and attaches to the
// page target targetID.
func Attach(ctx context.Context, endpoint, targetID string) (*Page, error) {
	if targetID == "" {
		return nil, errors.New("live: no target id")
	}
	p := &Page{targetID: targetID, gone: make(chan struct{})}
	c, err := dial(ctx, endpoint, p.event)
	if err != nil {
		return nil, err
	}
	p.c = c
	var info struct {
		TargetInfo targetInfo `json:"targetInfo"`
	}
	if err := c.call(ctx, "", "Target.getTargetInfo", map[string]any{"targetId": targetID}, &info); err != nil {
		c.close()
		return nil, fmt.Errorf("live: target %s: %w", targetID, err)
	}
	if info.TargetInfo.Type != "page" {
		c.close()
		return nil, fmt.Errorf("live: target %s is a %q, not a page", targetID, info.TargetInfo.Type)
	}
	p.contextID = info.TargetInfo.BrowserContextID
	var att struct {
		SessionID string `json:"sessionId"`
	}
	if err := c.call(ctx, "", "Target.attachToTarget", map[string]any{"targetId": targetID, "flatten": true}, &att); err != nil {
		c.close()
		return nil, fmt.Errorf("live: attach to %s: %w", targetID, err)
	}
	p.mu.Lock()
	p.session = att.SessionID
	p.mu.Unlock()
	return p, nil
}

// event handles what Chromium sends unasked, on the reader's goroutine.
func (p *Page) event(m cdpMessage) {
	p.mu.Lock()
	session, frames := p.session, p.frames
	p.mu.Unlock()
	switch m.Method {
	case "Page.screencastFrame":
		if m.SessionID != session {
			return
		}
		var f screencastFrame
		if json.Unmarshal(m.Params, &f) != nil {
			return
		}
		select {
		case frames <- f:
		default:
			// Nobody is taking frames fast enough (or at all): this one is
			// dropped but acked, so the stream goes on with newer ones.
			p.ack(f.SessionID)
		}
	case "Target.detachedFromTarget":
		var d struct {
			SessionID string `json:"sessionId"`
			TargetID  string `json:"targetId"`
		}
		if json.Unmarshal(m.Params, &d) == nil && session != "" && (d.SessionID == session || d.TargetID == p.targetID) {
			p.markGone()
		}
	case "Target.targetDestroyed", "Target.targetCrashed":
		var d struct {
			TargetID string `json:"targetId"`
		}
		if json.Unmarshal(m.Params, &d) == nil && d.TargetID == p.targetID {
			p.markGone()
		}
	case "Inspector.detached":
		if m.SessionID == session {
			p.markGone()
		}
	}
}

func (p *Page) markGone() { p.goneOnce.Do(func() { close(p.gone) }) }

// ack lets Chromium send the next frame; best effort, with its own short
// deadline since the reader's goroutine may be the one asking.
func (p *Page) ack(frameSession int64) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = p.c.send(ctx, p.session, "Page.screencastFrameAck", map[string]any{"sessionId": frameSession})
}

// ContextID is the browserContextId of the attached target.
func (p *Page) ContextID() string { return p.contextID }

// TargetID is the attached target's id.
func (p *Page) TargetID() string { return p.targetID }

// call runs a command on the attached page, failing with ErrGone once the
// target or the socket is gone.
func (p *Page) call(ctx context.Context, method string, params, out any) error {
	select {
	case <-p.gone:
		return fmt.Errorf("live: %s: %w", method, ErrGone)
	default:
	}
	err := p.c.call(ctx, p.session, method, params, out)
	if err != nil && p.isGone() {
		return fmt.Errorf("live: %s: %w", method, ErrGone)
	}
	return err
}

func (p *Page) isGone() bool {
	select {
	case <-p.gone:
		return true
	case <-p.c.done:
		return true
	default:
		return false
	}
}

// Tabs lists the page targets of the attached page's browser context: the
// session's tabs, never another context's.
func (p *Page) Tabs(ctx context.Context) ([]Tab, error) {
	var r struct {
		TargetInfos []targetInfo `json:"targetInfos"`
	}
	if err := p.c.call(ctx, "", "Target.getTargets", nil, &r); err != nil {
		if p.isGone() {
			return nil, fmt.Errorf("live: Target.getTargets: %w", ErrGone)
		}
		return nil, err
	}
	var tabs []Tab
	for _, t := range r.TargetInfos {
		if t.Type == "page" && t.BrowserContextID == p.contextID {
			tabs = append(tabs, Tab{TargetID: t.TargetID, URL: t.URL, Title: t.Title})
		}
	}
	return tabs, nil
}

// Screencast streams the page's frames to frame until ctx ends (its error
// is returned) or the page goes (ErrGone). Chromium sends a frame only
// when the page changes and after the last one was acked; a frame is acked
// once frame returns, so a slow consumer slows the stream rather than
// piling frames up.
func (p *Page) Screencast(ctx context.Context, o Options, frame func(Frame)) error {
	if o.Quality <= 0 {
		o.Quality = 60
	}
	if o.MaxWidth <= 0 {
		o.MaxWidth = 1280
	}
	if o.MaxHeight <= 0 {
		o.MaxHeight = 1280
	}
	if o.MaxFPS <= 0 {
		o.MaxFPS = DefaultMaxFPS
	}
	// Chromium captures the next frame only once the last one is acked, so
	// holding the ack until a frame's time is up paces the capture itself,
	// not only what is sent on.
	interval := time.Second / time.Duration(o.MaxFPS)
	frames := make(chan screencastFrame, 4)
	p.mu.Lock()
	if p.frames != nil {
		p.mu.Unlock()
		return errors.New("live: a screencast is already running on this page")
	}
	p.frames = frames
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		p.frames = nil
		p.mu.Unlock()
	}()
	err := p.call(ctx, "Page.startScreencast", map[string]any{
		"format": "jpeg", "quality": o.Quality, "maxWidth": o.MaxWidth, "maxHeight": o.MaxHeight, "everyNthFrame": 1,
	}, nil)
	if err != nil {
		return err
	}
	defer func() {
		if p.isGone() {
			return
		}
		stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		defer cancel()
		_ = p.c.call(stopCtx, p.session, "Page.stopScreencast", nil, nil)
	}()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-p.gone:
			return ErrGone
		case <-p.c.done:
			return ErrGone
		case f := <-frames:
			arrived := time.Now()
			data, err := base64.StdEncoding.DecodeString(f.Data)
			if err == nil {
				at := time.Now()
				if f.Metadata.Timestamp > 0 {
					sec := int64(f.Metadata.Timestamp)
					at = time.Unix(sec, int64((f.Metadata.Timestamp-float64(sec))*1e9))
				}
				frame(Frame{Data: data, DeviceWidth: f.Metadata.DeviceWidth, DeviceHeight: f.Metadata.DeviceHeight, At: at})
			}
			if wait := interval - time.Since(arrived); wait > 0 {
				t := time.NewTimer(wait)
				select {
				case <-ctx.Done():
					t.Stop()
					return ctx.Err()
				case <-p.gone:
					t.Stop()
					return ErrGone
				case <-t.C:
				}
			}
			p.ack(f.SessionID)
		}
	}
}

var mouseTypes = map[string]string{
	"pressed":  "mousePressed",
	"released": "mouseReleased",
	"moved":    "mouseMoved",
	"wheel":    "mouseWheel",
}

// Mouse dispatches one mouse event to the page.
func (p *Page) Mouse(ctx context.Context, m Mouse) error {
	typ, ok := mouseTypes[m.Type]
	if !ok {
		return fmt.Errorf("live: unknown mouse event %q", m.Type)
	}
	button := m.Button
	switch button {
	case "left", "middle", "right":
	case "":
		button = "none"
	default:
		return fmt.Errorf("live: unknown mouse button %q", m.Button)
	}
	if button == "none" && (m.Type == "pressed" || m.Type == "released") {
		button = "left"
	}
	params := map[string]any{"type": typ, "x": m.X, "y": m.Y, "button": button, "modifiers": m.Modifiers}
	switch m.Type {
	case "pressed", "released":
		params["clickCount"] = max(m.ClickCount, 1)
	case "wheel":
		params["deltaX"], params["deltaY"] = m.DeltaX, m.DeltaY
	}
	return p.call(ctx, "Input.dispatchMouseEvent", params, nil)
}

// namedKey is what Chromium needs to act on a key as if it were pressed.
type namedKey struct {
	code string
	vk   int
	text string
}

var namedKeys = map[string]namedKey{
	"Enter":      {"Enter", 13, "\r"},
	"Tab":        {"Tab", 9, ""},
	"Backspace":  {"Backspace", 8, ""},
	"Delete":     {"Delete", 46, ""},
	"Escape":     {"Escape", 27, ""},
	"ArrowUp":    {"ArrowUp", 38, ""},
	"ArrowDown":  {"ArrowDown", 40, ""},
	"ArrowLeft":  {"ArrowLeft", 37, ""},
	"ArrowRight": {"ArrowRight", 39, ""},
	"Home":       {"Home", 36, ""},
	"End":        {"End", 35, ""},
	"PageUp":     {"PageUp", 33, ""},
	"PageDown":   {"PageDown", 34, ""},
}

// CDP's modifier bits.
const (
	modAlt  = 1
	modCtrl = 2
	modMeta = 4
)

// Key presses and releases a named key (Enter, Tab, Backspace, Delete,
// Escape, the arrows, Home, End, PageUp, PageDown) with modifiers held.
func (p *Page) Key(ctx context.Context, key string, modifiers int) error {
	k, ok := namedKeys[key]
	if !ok {
		return fmt.Errorf("live: unknown key %q", key)
	}
	down := map[string]any{"type": "rawKeyDown", "key": key, "code": k.code, "windowsVirtualKeyCode": k.vk, "modifiers": modifiers}
	if k.text != "" && modifiers&(modAlt|modCtrl|modMeta) == 0 {
		// Like Playwright: a key with text is a keyDown, so the page also
		// gets its keypress (a form submits on Enter's); with Ctrl, Alt or
		// Meta held it is a shortcut, which types nothing.
		down["type"], down["text"], down["unmodifiedText"] = "keyDown", k.text, k.text
	}
	if err := p.call(ctx, "Input.dispatchKeyEvent", down, nil); err != nil {
		return err
	}
	return p.call(ctx, "Input.dispatchKeyEvent", map[string]any{"type": "keyUp", "key": key, "code": k.code, "windowsVirtualKeyCode": k.vk, "modifiers": modifiers}, nil)
}

// Type types text one character at a time (keyDown with the character's
// text, then keyUp), as Playwright's keyboard.type does; a newline is
// Enter. The text is never logged or returned in an error.
func (p *Page) Type(ctx context.Context, text string) error {
	for _, r := range text {
		if r == '\n' || r == '\r' {
			if err := p.Key(ctx, "Enter", 0); err != nil {
				return err
			}
			continue
		}
		ch := string(r)
		if err := p.call(ctx, "Input.dispatchKeyEvent", map[string]any{"type": "keyDown", "key": ch, "text": ch, "unmodifiedText": ch}, nil); err != nil {
			return err
		}
		if err := p.call(ctx, "Input.dispatchKeyEvent", map[string]any{"type": "keyUp", "key": ch}, nil); err != nil {
			return err
		}
	}
	return nil
}

// Paste inserts text where the focus is, as a paste or an IME does. The
// text is never logged or returned in an error.
func (p *Page) Paste(ctx context.Context, text string) error {
	return p.call(ctx, "Input.insertText", map[string]any{"text": text}, nil)
}

// describeNameMax bounds the accessible name Describe gives.
const describeNameMax = 60

// describeSkip are roles that say nothing about what was hit: the text
// inside a button is the button's, a plain container is its parent's.
var describeSkip = map[string]bool{
	"": true, "generic": true, "none": true, "presentation": true, "StaticText": true,
	"InlineTextBox": true, "LineBreak": true, "RootWebArea": true, "WebArea": true, "Ignored": true,
}

type axNode struct {
	NodeID           string   `json:"nodeId"`
	ParentID         string   `json:"parentId"`
	Ignored          bool     `json:"ignored"`
	BackendDOMNodeID int64    `json:"backendDOMNodeId"`
	Role             *axValue `json:"role"`
	Name             *axValue `json:"name"`
}

type axValue struct {
	Value any `json:"value"`
}

func (v *axValue) str() string {
	if v == nil {
		return ""
	}
	s, _ := v.Value.(string)
	return strings.TrimSpace(s)
}

// Describe names what is at (x, y) in viewport CSS px: the role and
// accessible name of the nearest element there or above it that has both
// ("button 'Sign in'"), or "" when there is none or the page cannot say.
func (p *Page) Describe(ctx context.Context, x, y float64) string {
	var hit struct {
		BackendNodeID int64 `json:"backendNodeId"`
	}
	if err := p.call(ctx, "DOM.getNodeForLocation", map[string]any{"x": int(x), "y": int(y), "ignorePointerEventsNone": true}, &hit); err != nil || hit.BackendNodeID == 0 {
		return ""
	}
	var tree struct {
		Nodes []axNode `json:"nodes"`
	}
	if err := p.call(ctx, "Accessibility.getPartialAXTree", map[string]any{"backendNodeId": hit.BackendNodeID, "fetchRelatives": true}, &tree); err != nil {
		return ""
	}
	return describeAX(tree.Nodes, hit.BackendNodeID)
}

// describeAX walks from the node of backend id up through its ancestors to
// the first with a telling role and a name.
func describeAX(nodes []axNode, backend int64) string {
	byID := make(map[string]*axNode, len(nodes))
	var start *axNode
	for i := range nodes {
		n := &nodes[i]
		byID[n.NodeID] = n
		if start == nil && n.BackendDOMNodeID == backend {
			start = n
		}
	}
	for n, hops := start, 0; n != nil && hops < len(nodes); n, hops = byID[n.ParentID], hops+1 {
		role, name := n.Role.str(), n.Name.str()
		if n.Ignored || describeSkip[role] || name == "" {
			continue
		}
		if utf8.RuneCountInString(name) > describeNameMax {
			name = string([]rune(name)[:describeNameMax-1]) + "…"
		}
		return fmt.Sprintf("%s '%s'", role, name)
	}
	return ""
}

// Screenshot is a PNG of the page's viewport.
func (p *Page) Screenshot(ctx context.Context) ([]byte, error) {
	var r struct {
		Data string `json:"data"`
	}
	if err := p.call(ctx, "Page.captureScreenshot", map[string]any{"format": "png"}, &r); err != nil {
		return nil, err
	}
	data, err := base64.StdEncoding.DecodeString(r.Data)
	if err != nil {
		return nil, fmt.Errorf("live: screenshot: %w", err)
	}
	return data, nil
}

// Close detaches from the page (which stays open) and closes the socket.
// Safe to call more than once.
func (p *Page) Close() error {
	p.closeOnce.Do(func() {
		if !p.isGone() {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			_ = p.c.call(ctx, "", "Target.detachFromTarget", map[string]any{"sessionId": p.session}, nil)
			cancel()
		}
		p.c.close()
		p.markGone()
	})
	return nil
}
