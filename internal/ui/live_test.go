//go:build unix

package ui

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/jpeg"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/google/go-cmp/cmp"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/e2etest"
)

// The fake page's viewport in CSS px, as frames say it; the JPEG itself is
// half that, as a screencast scaled down would send it.
const (
	liveWidth  = 1280
	liveHeight = 800
	liveLease  = "lease-for-the-test"
	// hostileTitle is a page title that runs script if written as markup.
	hostileTitle = "<img src=x onerror=alert(1)>"
)

// liveInput is one message a viewer sent on a live socket.
type liveInput struct {
	Conn int            // which connection of the session, from 1
	Msg  map[string]any // as sent
}

// fakeLive serves what the live view and the sessions list read: the
// sessions (two waiting), the control lease, saving a profile, and the
// live WebSocket in the documented protocol. It records every message the
// viewer sends and refuses input without the lease as the server does.
type fakeLive struct {
	t     *testing.T
	frame string // base64 JPEG

	mu        sync.Mutex
	now       time.Time
	control   *proxy.Control
	current   string // the current tab's target id
	conns     map[*websocket.Conn]*liveConn
	nconns    map[string]int
	inputs    []liveInput
	refused   []liveInput
	handBacks []string
	profiles  []string
	unknown   []string
}

type liveConn struct {
	n     int
	lease string
}

func newFakeLive(t *testing.T) *fakeLive {
	img := image.NewRGBA(image.Rect(0, 0, liveWidth/2, liveHeight/2))
	draw.Draw(img, img.Bounds(), &image.Uniform{color.RGBA{R: 40, G: 120, B: 200, A: 255}}, image.Point{}, draw.Src)
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, &jpeg.Options{Quality: 60}); err != nil {
		t.Fatal(err)
	}
	return &fakeLive{
		t: t, frame: base64.StdEncoding.EncodeToString(b.Bytes()),
		now: time.Now().UTC().Truncate(time.Second), current: "T1",
		conns: map[*websocket.Conn]*liveConn{}, nconns: map[string]int{},
	}
}

func (f *fakeLive) sessions() []*proxy.Session {
	wait := func(reason string) *proxy.HumanWait {
		return &proxy.HumanWait{Reason: reason, Since: f.now, Until: f.now.Add(proxy.DefaultHumanTimeout)}
	}
	return []*proxy.Session{
		{ID: "s-live", CreatedAt: f.now, LastActivity: f.now, State: proxy.SessionActive, Waiting: wait("Enter the 2FA code"), LiveURL: "/ui/sessions/s-live/live"},
		{ID: "s-cookie", CreatedAt: f.now, LastActivity: f.now, State: proxy.SessionActive, Waiting: wait(hostileTitle)},
		{ID: "s-gone", CreatedAt: f.now, LastActivity: f.now, State: proxy.SessionActive},
		{ID: "s-closed", CreatedAt: f.now, LastActivity: f.now, State: proxy.SessionClosed},
	}
}

func (f *fakeLive) tabs() map[string]any {
	tab := func(id, url, title string) map[string]any {
		return map[string]any{"target_id": id, "url": url, "title": title, "current": id == f.current}
	}
	return map[string]any{"type": "tabs", "tabs": []map[string]any{
		tab("T1", "https://login.example/2fa", "Sign in"),
		tab("T2", "https://login.example/help", hostileTitle),
	}}
}

func (f *fakeLive) state(c *liveConn) map[string]any {
	m := map[string]any{"type": "state", "control": nil, "yours": false,
		"waiting": map[string]any{"reason": "Enter the 2FA code", "since": f.now, "until": f.now.Add(proxy.DefaultHumanTimeout)}}
	if f.control != nil {
		m["control"] = f.control
		m["yours"] = c.lease == liveLease
	}
	return m
}

func (f *fakeLive) frameMsg() map[string]any {
	return map[string]any{"type": "frame", "data": f.frame, "width": liveWidth, "height": liveHeight, "at": time.Now().UnixMilli()}
}

// broadcast sends each viewer what build makes for it; f.mu is held.
func (f *fakeLive) broadcast(ctx context.Context, build func(*liveConn) map[string]any) {
	for ws, c := range f.conns {
		f.write(ctx, ws, build(c))
	}
}

func (f *fakeLive) write(ctx context.Context, ws *websocket.Conn, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		f.t.Error(err)
		return
	}
	_ = ws.Write(ctx, websocket.MessageText, b) // a viewer gone is the page's reconnect to test
}

func (f *fakeLive) routes() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/ui/", Handler("/ui/"))
	mux.HandleFunc("GET /sessions", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"sessions": f.sessions()})
	})
	mux.HandleFunc("POST /sessions/{id}/control", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		if f.control != nil {
			writeErr(w, http.StatusConflict, proxy.Errorf(proxy.ECONTROLHELD, "a person holds control of this session"))
			return
		}
		f.control = &proxy.Control{Holder: proxy.HolderPerson, Since: time.Now().UTC()}
		writeJSON(w, http.StatusOK, proxy.ControlLease{Control: *f.control, Lease: liveLease})
		f.broadcast(r.Context(), f.state)
	})
	mux.HandleFunc("DELETE /sessions/{id}/control", func(w http.ResponseWriter, r *http.Request) {
		var body struct{ Lease string }
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			writeErr(w, http.StatusBadRequest, proxy.Errorf(proxy.EINVALID, "body: %v", err))
			return
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		f.handBacks = append(f.handBacks, body.Lease)
		if f.control == nil || body.Lease != liveLease {
			writeErr(w, http.StatusConflict, proxy.Errorf(proxy.ECONTROLHELD, "not the holder's lease"))
			return
		}
		f.control = nil
		w.WriteHeader(http.StatusNoContent)
		f.broadcast(r.Context(), f.state)
	})
	mux.HandleFunc("POST /sessions/{id}/profile", func(w http.ResponseWriter, r *http.Request) {
		var body struct{ Name string }
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			writeErr(w, http.StatusBadRequest, proxy.Errorf(proxy.EINVALID, "body: %v", err))
			return
		}
		f.mu.Lock()
		f.profiles = append(f.profiles, body.Name)
		f.mu.Unlock()
		if err := proxy.ValidProfileName("name", body.Name); err != nil {
			writeErr(w, http.StatusBadRequest, err)
			return
		}
		writeJSON(w, http.StatusOK, proxy.Profile{Name: body.Name, Version: 2, Sessions: []string{r.PathValue("id")}})
	})
	mux.HandleFunc("GET /sessions/{id}/live", f.serveLive)
	mux.HandleFunc("POST /test/drop", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		for ws := range f.conns {
			_ = ws.CloseNow() // as a network drop: no close handshake
		}
		w.WriteHeader(http.StatusNoContent)
	})
	// A failure the server reports after the view began (a tab switch
	// that could not read the tabs) ends nothing.
	mux.HandleFunc("POST /test/fail", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.broadcast(r.Context(), func(*liveConn) map[string]any {
			return map[string]any{"type": "error", "code": proxy.EUNAVAILABLE, "message": "the session's tabs cannot be read now"}
		})
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("GET /test/inputs", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		writeJSON(w, http.StatusOK, append([]liveInput{}, f.inputs...))
	})
	notServed(mux, &f.mu, &f.unknown)
	return mux
}

// serveLive speaks the live view's protocol: tabs, state and a frame on
// connect; input recorded, and refused without the lease.
func (f *fakeLive) serveLive(w http.ResponseWriter, r *http.Request) {
	ws, err := websocket.Accept(w, r, nil) // the same-origin check of the real one
	if err != nil {
		return
	}
	defer ws.CloseNow()
	ctx := r.Context()
	id := r.PathValue("id")
	if id != "s-live" {
		f.write(ctx, ws, map[string]any{"type": "error", "code": proxy.EUNAVAILABLE, "message": "this session's browser has no CDP (a Playwright browser node)"})
		_ = ws.Close(websocket.StatusPolicyViolation, "no live view")
		return
	}
	f.mu.Lock()
	f.nconns[id]++
	c := &liveConn{n: f.nconns[id]}
	f.conns[ws] = c
	f.write(ctx, ws, f.tabs())
	f.write(ctx, ws, f.state(c))
	f.write(ctx, ws, f.frameMsg())
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		delete(f.conns, ws)
		f.mu.Unlock()
	}()
	for {
		_, b, err := ws.Read(ctx)
		if err != nil {
			return
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			f.t.Errorf("the page sent what is not JSON: %q", b)
			return
		}
		f.mu.Lock()
		in := liveInput{Conn: c.n, Msg: m}
		switch {
		case m["type"] == "lease":
			c.lease, _ = m["lease"].(string)
			f.inputs = append(f.inputs, in)
			f.write(ctx, ws, f.state(c))
		case c.lease != liveLease || f.control == nil:
			f.refused = append(f.refused, in)
			f.write(ctx, ws, map[string]any{"type": "error", "code": proxy.ECONTROLHELD, "message": "you do not hold control"})
		default:
			f.inputs = append(f.inputs, in)
			if m["type"] == "tab" {
				f.current, _ = m["target_id"].(string)
				f.broadcast(ctx, func(*liveConn) map[string]any { return f.tabs() })
				f.write(ctx, ws, f.frameMsg())
			}
		}
		f.mu.Unlock()
	}
}

// TestLivePageInBrowser drives the live view and the sessions list in
// headless Chromium (testdata/livecheck.js) against a fake of the API and of the
// live WebSocket: the title counts waiting sessions and the list links each
// active one to its live view; the live page shows the frame, the tabs (a
// hostile title as text) and the agent's reason; nothing is sent before
// Take control; with control, a click maps to the page's CSS px, typing is
// text, Enter and Tab are keys (Tab keeps the focus), a paste, a wheel and a
// tab switch reach the socket; after the socket drops, the page reconnects
// and binds its lease again; Save as profile reports the answer and a
// refusal's code; Hand back sends the lease; a session without CDP says so.
func TestLivePageInBrowser(t *testing.T) {
	e2etest.RequireBrowser(t)
	f := newFakeLive(t)
	srv := httptest.NewServer(f.routes())
	t.Cleanup(srv.Close)
	runBrowserCheck(t, "livecheck.js", "LIVE_CHECK", "inspector-live.png", map[string]any{
		"base": srv.URL, "hostileTitle": hostileTitle,
	})

	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.refused) != 0 {
		t.Errorf("the page sent input without holding control: %v", f.refused)
	}
	if len(f.unknown) != 0 {
		t.Errorf("the page asked for what the API does not serve: %v", f.unknown)
	}
	if diff := cmp.Diff([]string{liveLease}, f.handBacks); diff != "" {
		t.Errorf("hand-backs' leases (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"github", "Not A Name"}, f.profiles); diff != "" {
		t.Errorf("profiles asked for (-want +got):\n%s", diff)
	}
	want := []string{
		"1 lease " + liveLease,
		"1 mouse pressed left 1 (320, 400)",
		"1 mouse released left 1 (320, 400)",
		"1 mouse pressed left 1 (320, 400)",
		"1 mouse released left 1 (right edge)",
		"1 mouse wheel dy=300",
		"1 text hello",
		"1 key Enter",
		"1 key Tab",
		"1 paste pasted text",
		"1 tab T2",
		"2 lease " + liveLease,
		"2 text after",
	}
	if diff := cmp.Diff(want, describeInputs(t, f.inputs)); diff != "" {
		t.Errorf("what the page sent on the live socket (-want +got):\n%s", diff)
	}
}

// describeInputs writes the page's messages as lines, leaving out mouse
// moves (as many as the pointer's path makes) and joining typed text the
// page may have batched differently. A click's point is written as the
// expected one when within a screen pixel of it at the frame's scale
// (livecheck.js checks it exactly, knowing where it clicked).
func describeInputs(t *testing.T, inputs []liveInput) []string {
	t.Helper()
	var out []string
	near := func(m map[string]any, x, y float64) string {
		gx, _ := m["x"].(float64)
		gy, _ := m["y"].(float64)
		switch {
		case gx == liveWidth && math.Abs(gy-y) <= 2.5:
			return "(right edge)"
		case math.Abs(gx-x) > 2.5 || math.Abs(gy-y) > 2.5:
			return fmt.Sprintf("(%.1f, %.1f)", gx, gy)
		}
		return fmt.Sprintf("(%.0f, %.0f)", x, y)
	}
	for _, in := range inputs {
		m := in.Msg
		var line string
		switch m["type"] {
		case "lease":
			line = fmt.Sprint("lease ", m["lease"])
		case "mouse":
			switch m["event"] {
			case "moved":
				continue
			case "wheel":
				line = fmt.Sprintf("mouse wheel dy=%v", m["dy"])
			default:
				line = fmt.Sprintf("mouse %v %v %v %s", m["event"], m["button"], m["clicks"], near(m, liveWidth*0.25, liveHeight*0.5))
			}
		case "text":
			if n := len(out); n > 0 && strings.HasPrefix(out[n-1], fmt.Sprintf("%d text ", in.Conn)) {
				out[n-1] += fmt.Sprint(m["text"])
				continue
			}
			line = fmt.Sprint("text ", m["text"])
		case "key":
			line = fmt.Sprint("key ", m["key"])
		case "paste":
			line = fmt.Sprint("paste ", m["text"])
		case "tab":
			line = fmt.Sprint("tab ", m["target_id"])
		default:
			line = fmt.Sprint("unknown ", m)
		}
		out = append(out, fmt.Sprintf("%d %s", in.Conn, line))
	}
	return out
}
