package liveview

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/google/go-cmp/cmp"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/clock/clocktest"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/e2etest"
)

// rig is a live view handler over fake sessions and pages, served on
// 127.0.0.1, with its log at debug level kept.
type rig struct {
	sessions *fakeSessions
	browser  *fakeBrowser
	clock    *clocktest.Clock
	handler  *Handler
	url      string
	logs     *e2etest.SyncBuffer
}

const poll = 500 * time.Millisecond

func newRig(t *testing.T) *rig {
	t.Helper()
	r := &rig{sessions: &fakeSessions{current: "T-login"}, browser: newFakeBrowser("T-other", "T-login"), clock: clocktest.New(), logs: &e2etest.SyncBuffer{}}
	r.handler = New(Config{Sessions: r.sessions, Attach: r.browser.attach, Clock: r.clock, Poll: poll,
		Log: slog.New(slog.NewTextHandler(r.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.handler.ServeLive(w, req, strings.TrimPrefix(req.URL.Path, "/live/"))
	}))
	t.Cleanup(func() {
		r.handler.Close()
		srv.Close()
	})
	r.url = "ws" + strings.TrimPrefix(srv.URL, "http") + "/live/"
	return r
}

// viewerConn is the test's side of one live view socket.
type viewerConn struct {
	t    *testing.T
	conn *websocket.Conn
}

func (r *rig) dial(t *testing.T, id string) *viewerConn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, r.url+id, nil)
	if err != nil {
		t.Fatal(err)
	}
	c.SetReadLimit(16 << 20)
	t.Cleanup(func() { c.CloseNow() })
	return &viewerConn{t: t, conn: c}
}

func (v *viewerConn) send(msg map[string]any) {
	v.t.Helper()
	b, _ := json.Marshal(msg)
	if err := v.conn.Write(context.Background(), websocket.MessageText, b); err != nil {
		v.t.Fatal(err)
	}
}

// next reads messages until one of type typ, skipping the others; it
// fails the test if none comes within 10 s.
func (v *viewerConn) next(typ string) map[string]any {
	v.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for {
		_, b, err := v.conn.Read(ctx)
		if err != nil {
			v.t.Fatalf("waiting for a %s message: %v", typ, err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			v.t.Fatal(err)
		}
		if m["type"] == typ {
			return m
		}
	}
}

// sync returns once every message sent before it was handled: a lease
// message is answered with the state.
func (v *viewerConn) sync(lease string) map[string]any {
	v.t.Helper()
	v.send(map[string]any{"type": "lease", "lease": lease})
	return v.next("state")
}

// open connects a viewer and reads what it gets first: the tabs and the
// state.
func (r *rig) open(t *testing.T) (*viewerConn, map[string]any, map[string]any) {
	v := r.dial(t, sessionID)
	tabs := v.next("tabs")
	state := v.next("state")
	<-r.browser.page("T-login").casting
	return v, tabs, state
}

func TestConnectSendsTabsAndState(t *testing.T) {
	r := newRig(t)
	r.sessions.waiting = &proxy.HumanWait{Reason: "2FA code", Since: time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC), Until: time.Date(2026, 11, 27, 10, 10, 0, 0, time.UTC)}
	_, tabs, state := r.open(t)
	wantTabs := map[string]any{"type": "tabs", "tabs": []any{
		map[string]any{"target_id": "T-other", "url": "https://example.com/T-other", "title": "T-other", "current": false},
		map[string]any{"target_id": "T-login", "url": "https://example.com/T-login", "title": "T-login", "current": true},
	}}
	if diff := cmp.Diff(wantTabs, tabs); diff != "" {
		t.Errorf("tabs (-want +got):\n%s", diff)
	}
	wantState := map[string]any{"type": "state", "control": nil, "yours": false,
		"waiting": map[string]any{"reason": "2FA code", "since": "2026-11-27T10:00:00Z", "until": "2026-11-27T10:10:00Z"}}
	if diff := cmp.Diff(wantState, state); diff != "" {
		t.Errorf("state (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{endpoint + " T-login"}, r.browser.attaches()); diff != "" {
		t.Errorf("attached (-want +got):\n%s", diff)
	}
}

// TestUnknownSessionIsRefused: a viewer of a session that is not there
// gets the error and a closed socket, nothing attached.
func TestUnknownSessionIsRefused(t *testing.T) {
	r := newRig(t)
	v := r.dial(t, "nope")
	if got := v.next("error")["code"]; got != proxy.ESESSIONMISSING {
		t.Errorf("error code %v, want %s", got, proxy.ESESSIONMISSING)
	}
	if _, _, err := v.conn.Read(context.Background()); websocket.CloseStatus(err) != websocket.StatusPolicyViolation {
		t.Errorf("after the error: %v, want the socket closed", err)
	}
	if n := len(r.browser.attaches()); n != 0 {
		t.Errorf("%d attaches for an unknown session", n)
	}
}

// TestInputNeedsTheLease: without a lease, or with another than the
// holder's, input is refused and nothing reaches the page; with it, input
// reaches the page.
func TestInputNeedsTheLease(t *testing.T) {
	r := newRig(t)
	v, _, _ := r.open(t)
	page := r.browser.page("T-login")
	inputs := []map[string]any{
		{"type": "mouse", "event": "pressed", "x": 10, "y": 10, "button": "left", "clicks": 1},
		{"type": "key", "key": "Enter"},
		{"type": "text", "text": "abc"},
		{"type": "paste", "text": "abc"},
	}
	refused := func(when string) {
		for _, in := range inputs {
			v.send(in)
			if got := v.next("error")["code"]; got != proxy.ECONTROLHELD {
				t.Errorf("%s: %v answered %v, want CONTROL_HELD", when, in["type"], got)
			}
		}
		if got := page.got(); len(got) != 0 {
			t.Errorf("%s: the page got %v", when, got)
		}
	}
	refused("no lease")
	r.sessions.take(goodLease)
	refused("nobody's lease, another holds control")
	v.sync("lease-of-someone-else")
	refused("another lease")
	if st := v.sync(goodLease); st["yours"] != true {
		t.Errorf("state after the holder's lease: %v, want yours", st)
	}
	v.send(map[string]any{"type": "mouse", "event": "pressed", "x": 10, "y": 20, "button": "left", "clicks": 1})
	v.send(map[string]any{"type": "mouse", "event": "released", "x": 10, "y": 20, "button": "left", "clicks": 1})
	v.send(map[string]any{"type": "text", "text": "ok"})
	v.sync(goodLease)
	if diff := cmp.Diff([]string{"mouse pressed 10,20 left 1", "mouse released 10,20 left 1", "type ok"}, page.got()); diff != "" {
		t.Errorf("input the page got (-want +got):\n%s", diff)
	}
}

// TestActionsRecorded: what the holder does becomes the session's
// actions, in order: clicks on what was there, drags, one scroll per
// burst, keys, pastes, typing counted.
func TestActionsRecorded(t *testing.T) {
	r := newRig(t)
	r.sessions.take(goodLease)
	v, _, _ := r.open(t)
	v.sync(goodLease)
	mouse := func(event string, x, y float64) {
		v.send(map[string]any{"type": "mouse", "event": event, "x": x, "y": y, "button": "left", "clicks": 1})
	}
	mouse("moved", 40, 40)
	mouse("pressed", 40, 40)
	mouse("released", 42, 41)
	mouse("pressed", 300, 200)
	mouse("released", 301, 200)
	mouse("pressed", 300, 200)
	mouse("released", 400, 260)
	for range 5 {
		v.send(map[string]any{"type": "mouse", "event": "wheel", "x": 300, "y": 200, "dy": 120})
	}
	v.send(map[string]any{"type": "text", "text": "héllo"})
	v.send(map[string]any{"type": "text", "text": " world"})
	v.send(map[string]any{"type": "key", "key": "Tab"})
	v.send(map[string]any{"type": "paste", "text": "123456"})
	v.send(map[string]any{"type": "mouse", "event": "wheel", "x": 300, "y": 200, "dy": -120})
	v.sync(goodLease)
	want := []string{"click on button 'Sign in'", "click at (300, 200)", "dragged from (300, 200) to (400, 260)", "scrolled",
		"typed 11 characters", "pressed Tab", "pasted 6 characters", "scrolled"}
	if diff := cmp.Diff(want, r.sessions.recorded()); diff != "" {
		t.Errorf("actions (-want +got):\n%s", diff)
	}
}

// TestTypedTextNeverKept: what a person types reaches the page, and is
// nowhere else: not in the actions recorded, not in the log at debug
// level, not in an error, even when typing fails. Typing pending at a
// hand-back or a pause is recorded as its count.
func TestTypedTextNeverKept(t *testing.T) {
	const secret = "Tr0ub4dor&3-SECRET"
	r := newRig(t)
	r.sessions.take(goodLease)
	v, _, _ := r.open(t)
	v.sync(goodLease)
	page := r.browser.page("T-login")

	v.send(map[string]any{"type": "text", "text": secret[:6]})
	v.send(map[string]any{"type": "text", "text": secret[6:]})
	v.sync(goodLease)
	// A pause: the tick after the one that saw typing records it.
	for range 2 {
		r.clock.WaitForTimer(t, poll)
		r.clock.Advance(poll)
	}
	r.clock.WaitForTimer(t, poll)

	v.send(map[string]any{"type": "text", "text": secret})
	v.sync(goodLease)
	r.handler.HandingBack(context.Background(), sessionID, goodLease)
	r.sessions.handBack()

	page.mu.Lock()
	page.failType = true
	page.mu.Unlock()
	r.sessions.take(goodLease)
	v.send(map[string]any{"type": "text", "text": secret})
	failed := v.next("error")
	v.send(map[string]any{"type": "key", "key": secret})
	unknownKey := v.next("error")
	v.send(map[string]any{"type": "tab", "target_id": "T-gone"})
	v.next("error")

	want := []string{"typed 18 characters", "typed 18 characters"}
	if diff := cmp.Diff(want, r.sessions.recorded()); diff != "" {
		t.Errorf("actions (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"type " + secret[:6], "type " + secret[6:], "type " + secret}, page.got()); diff != "" {
		t.Errorf("what the page got (-want +got):\n%s", diff)
	}
	for what, s := range map[string]string{"log": r.logs.String(), "actions": strings.Join(r.sessions.recorded(), "\n"),
		"typing error": failed["message"].(string), "key error": unknownKey["message"].(string)} {
		for _, part := range []string{secret, secret[:6], secret[6:]} {
			if strings.Contains(s, part) {
				t.Errorf("the %s holds typed text %q:\n%s", what, part, s)
			}
		}
	}
	if !strings.Contains(r.logs.String(), "typing failed") {
		t.Errorf("the failed typing was not logged at all:\n%s", r.logs.String())
	}
}

// TestTabSwitch: a tab of the session's context is watched on request;
// any other target is refused and nothing is attached to it.
func TestTabSwitch(t *testing.T) {
	r := newRig(t)
	v, _, _ := r.open(t)
	v.send(map[string]any{"type": "tab", "target_id": "T-of-another-context"})
	if e := v.next("error"); e["code"] != proxy.EINVALID {
		t.Errorf("a foreign target answered %v, want INVALID_PARAMETERS", e)
	}
	v.send(map[string]any{"type": "tab", "target_id": "T-other"})
	tabs := v.next("tabs")
	var current []string
	for _, tab := range tabs["tabs"].([]any) {
		if m := tab.(map[string]any); m["current"] == true {
			current = append(current, m["target_id"].(string))
		}
	}
	if diff := cmp.Diff([]string{"T-other"}, current); diff != "" {
		t.Errorf("current tab after the switch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{endpoint + " T-login", endpoint + " T-other"}, r.browser.attaches()); diff != "" {
		t.Errorf("attached (-want +got):\n%s", diff)
	}
	<-r.browser.page("T-other").casting
	r.browser.page("T-other").frames <- Frame{Data: []byte("other"), DeviceWidth: 800, DeviceHeight: 600}
	if f := v.next("frame"); f["data"] != base64.StdEncoding.EncodeToString([]byte("other")) {
		t.Errorf("frame after the switch: %v", f)
	}
	// Every page attached is let go once, by the switch or by the end.
	v.conn.CloseNow()
	r.handler.Close()
	for _, target := range []string{"T-login", "T-other"} {
		p := r.browser.page(target)
		p.mu.Lock()
		n := p.closedCnt
		p.mu.Unlock()
		if n != 1 {
			t.Errorf("page %s closed %d times, want once", target, n)
		}
	}
}

// TestFramesForwarded: each frame reaches the viewer with its viewport
// size and time.
func TestFramesForwarded(t *testing.T) {
	r := newRig(t)
	v, _, _ := r.open(t)
	at := time.Date(2026, 11, 27, 10, 0, 1, 500e6, time.UTC)
	r.browser.page("T-login").frames <- Frame{Data: []byte{0xff, 0xd8, 0xff, 0xe0}, DeviceWidth: 1280, DeviceHeight: 720, At: at}
	want := map[string]any{"type": "frame", "data": "/9j/4A==", "width": float64(1280), "height": float64(720), "at": float64(at.UnixMilli())}
	if diff := cmp.Diff(want, v.next("frame")); diff != "" {
		t.Errorf("frame (-want +got):\n%s", diff)
	}
}

// TestSlowViewerDoesNotBlock: a viewer that does not read never holds
// the screencast up; when it reads again it gets the newest frame, not
// every frame in between.
func TestSlowViewerDoesNotBlock(t *testing.T) {
	r := newRig(t)
	v, _, _ := r.open(t)
	frames := r.browser.page("T-login").frames
	const n = 400
	big := bytes.Repeat([]byte{0xAB}, 256<<10)
	for i := range n {
		data := append([]byte(nil), big...)
		data[0] = byte(i)
		data[1] = byte(i >> 8)
		// Each send returns once the handler took the frame: a handler
		// that waited for the viewer would stop this loop.
		frames <- Frame{Data: data, DeviceWidth: 800, DeviceHeight: 600}
	}
	last := make([]byte, len(big))
	copy(last, big)
	lastIndex := n - 1
	last[0], last[1] = byte(lastIndex), byte(lastIndex>>8)
	wantLast := base64.StdEncoding.EncodeToString(last)
	got := 0
	for {
		f := v.next("frame")
		got++
		if f["data"] == wantLast {
			break
		}
	}
	if got >= n {
		t.Errorf("the viewer got %d frames of %d: none was dropped", got, n)
	}
	t.Logf("a viewer that did not read got %d of %d frames", got, n)
}

// TestFollowsThePage: when the watched page goes, the viewer follows the
// session to its current page; when the session is gone, it is told and
// closed.
func TestFollowsThePage(t *testing.T) {
	r := newRig(t)
	v, _, _ := r.open(t)
	r.sessions.mu.Lock()
	r.sessions.current = "T-new"
	r.sessions.mu.Unlock()
	r.browser.mu.Lock()
	r.browser.tabs = []Tab{{TargetID: "T-new", URL: "https://example.com/next", Title: "Next"}}
	r.browser.mu.Unlock()
	close(r.browser.page("T-login").gone)
	tabs := v.next("tabs")
	want := []any{map[string]any{"target_id": "T-new", "url": "https://example.com/next", "title": "Next", "current": true}}
	if diff := cmp.Diff(want, tabs["tabs"]); diff != "" {
		t.Errorf("tabs after the page went (-want +got):\n%s", diff)
	}
	<-r.browser.page("T-new").casting
	r.sessions.mu.Lock()
	r.sessions.closed = true
	r.sessions.mu.Unlock()
	close(r.browser.page("T-new").gone)
	if e := v.next("error"); e["code"] != proxy.ESESSIONCLOSED {
		t.Errorf("after the session closed: %v, want SESSION_CLOSED", e)
	}
}

// TestAttachFailureHidesTheEndpoint: a browser the live view cannot reach
// is UPSTREAM_UNAVAILABLE to the viewer, without the browser's address,
// which only the server's log has.
func TestAttachFailureHidesTheEndpoint(t *testing.T) {
	r := newRig(t)
	r.sessions.current = "T-broken"
	v := r.dial(t, sessionID)
	e := v.next("error")
	if e["code"] != proxy.EUNAVAILABLE || strings.Contains(e["message"].(string), "9222") {
		t.Errorf("error %v, want UPSTREAM_UNAVAILABLE without the endpoint", e)
	}
	if !strings.Contains(r.logs.String(), endpoint) {
		t.Errorf("the log does not say which browser failed:\n%s", r.logs.String())
	}
}

// TestStateFollowsControl: the viewer hears of control taken and handed
// back at the next poll.
func TestStateFollowsControl(t *testing.T) {
	r := newRig(t)
	v, _, _ := r.open(t)
	v.sync(goodLease)
	r.sessions.take(goodLease)
	r.clock.WaitForTimer(t, poll)
	r.clock.Advance(poll)
	st := v.next("state")
	wantTaken := map[string]any{"type": "state", "control": map[string]any{"holder": "person", "since": "2026-11-27T10:00:00Z"}, "waiting": nil, "yours": true}
	if diff := cmp.Diff(wantTaken, st); diff != "" {
		t.Errorf("state once taken (-want +got):\n%s", diff)
	}
	r.sessions.handBack()
	r.clock.WaitForTimer(t, poll)
	r.clock.Advance(poll)
	wantBack := map[string]any{"type": "state", "control": nil, "waiting": nil, "yours": false}
	if diff := cmp.Diff(wantBack, v.next("state")); diff != "" {
		t.Errorf("state once handed back (-want +got):\n%s", diff)
	}
}

// TestMalformedMessages: what is not a message of the protocol is
// refused, and the socket stays usable.
func TestMalformedMessages(t *testing.T) {
	r := newRig(t)
	r.sessions.take(goodLease)
	v, _, _ := r.open(t)
	v.sync(goodLease)
	for _, raw := range []string{`{`, `[]`, `{"type":"launch"}`, `{"type":"mouse","event":"teleport","x":1,"y":1}`, `{"type":"mouse","event":"pressed","button":"fourth"}`, `{"type":"key","key":"a"}`} {
		if err := v.conn.Write(context.Background(), websocket.MessageText, []byte(raw)); err != nil {
			t.Fatal(err)
		}
		if e := v.next("error"); e["code"] != proxy.EINVALID {
			t.Errorf("%s answered %v, want INVALID_PARAMETERS", raw, e)
		}
	}
	if err := v.conn.Write(context.Background(), websocket.MessageBinary, []byte{1, 2}); err != nil {
		t.Fatal(err)
	}
	if e := v.next("error"); e["code"] != proxy.EINVALID {
		t.Errorf("a binary frame answered %v, want INVALID_PARAMETERS", e)
	}
	if got := r.browser.page("T-login").got(); len(got) != 0 {
		t.Errorf("the page got %v", got)
	}
	if st := v.sync(goodLease); st["yours"] != true {
		t.Errorf("the socket is not usable after bad messages: %v", st)
	}
}
