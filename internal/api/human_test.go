package api

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/wire"
)

// fakeHuman keeps one session's control lease as the session manager
// does, and answers a wait at once.
type fakeHuman struct {
	mu     sync.Mutex
	holder string // the lease, "" when nobody holds the browser
	// waits are the (reason, timeout) of each RequestHuman.
	waits []string
}

const fakeLease = "lease-7d1f"

var controlSince = time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)

func (f *fakeHuman) TakeControl(_ context.Context, id string) (*proxy.ControlLease, error) {
	if id != knownID {
		return nil, proxy.Errorf(proxy.ESESSIONMISSING, "no session %s", id)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.holder != "" {
		return nil, proxy.Errorf(proxy.ECONTROLHELD, "a person holds session %s", id)
	}
	f.holder = fakeLease
	return &proxy.ControlLease{Control: proxy.Control{Holder: proxy.HolderPerson, Since: controlSince}, Lease: fakeLease}, nil
}

func (f *fakeHuman) HandBack(_ context.Context, _, lease string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case f.holder == "":
		return proxy.Errorf(proxy.EINVALID, "nobody holds the browser")
	case f.holder != lease:
		return proxy.Errorf(proxy.ECONTROLHELD, "that lease is not the holder's")
	}
	f.holder = ""
	return nil
}

func (f *fakeHuman) RequestHuman(_ context.Context, id, reason string, timeout time.Duration) (*proxy.HumanResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.holder != "" && reason == "busy" {
		return nil, proxy.Errorf(proxy.EHUMANINCONTROL, "a person holds session %s", id)
	}
	f.waits = append(f.waits, reason+" "+timeout.String())
	return &proxy.HumanResult{SessionID: id, HandedBack: true, Actions: []string{"typed 6 characters"}, LiveURL: "/ui/sessions/" + id + "/live"}, nil
}

// fakeViewer answers 204 naming the session its path addressed, and
// keeps the hand-backs it was told of.
type fakeViewer struct {
	mu         sync.Mutex
	handedBack []string
}

func (v *fakeViewer) HandingBack(_ context.Context, id, lease string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.handedBack = append(v.handedBack, id+" "+lease)
}

func (*fakeViewer) ServeLive(w http.ResponseWriter, _ *http.Request, sessionID string) {
	w.Header().Set("X-Session", sessionID)
	w.WriteHeader(http.StatusNoContent)
}

func humanServer(h *fakeHuman) *Server {
	return humanServerWith(h, &fakeViewer{})
}

func humanServerWith(h *fakeHuman, v *fakeViewer) *Server {
	return New(&fakeSessions{}, fakeContent{},
		WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))),
		WithAuthToken(operatorToken),
		WithClientTokens(ClientToken{Name: "alice", Token: aliceToken}),
		WithHuman(h), WithLiveView(v))
}

// TestHumanRoutesRoles: taking and handing back control and the live view
// are the operator's; waiting for a person is a client's call too.
func TestHumanRoutesRoles(t *testing.T) {
	ok := func(status int) answer { return answer{status, ""} }
	forbidden := answer{http.StatusForbidden, proxy.EFORBIDDEN}
	unauthorized := answer{http.StatusUnauthorized, proxy.EUNAUTHORIZED}
	control := "/sessions/" + knownID + "/control"
	tests := []struct {
		method, path, body       string
		operator, client, nobody answer
	}{
		{"POST", control, "", ok(200), forbidden, unauthorized},
		{"DELETE", control, `{"lease":"` + fakeLease + `"}`, ok(204), forbidden, unauthorized},
		{"POST", "/sessions/" + knownID + "/human", `{"reason":"2FA code"}`, ok(200), ok(200), unauthorized},
		// Not a WebSocket handshake: the operator is told what it is.
		{"GET", "/sessions/" + knownID + "/live", "", answer{http.StatusUpgradeRequired, proxy.EINVALID}, forbidden, unauthorized},
	}
	roles := []struct {
		name string
		hdr  map[string]string
		pick func(tc answer, c answer, n answer) answer
	}{
		{"operator", map[string]string{"Authorization": "Bearer " + operatorToken}, func(o, _, _ answer) answer { return o }},
		{"client", map[string]string{"Authorization": "Bearer " + aliceToken}, func(_, c, _ answer) answer { return c }},
		{"nobody", nil, func(_, _, n answer) answer { return n }},
	}
	for _, role := range roles {
		// Each role starts with nobody holding the browser, so that the
		// operator's hand-back follows its own take.
		srv := humanServer(&fakeHuman{})
		for _, tc := range tests {
			t.Run(tc.method+" "+tc.path+" as "+role.name, func(t *testing.T) {
				want := role.pick(tc.operator, tc.client, tc.nobody)
				if diff := cmp.Diff(want, send(t, srv, tc.method, tc.path, tc.body, role.hdr)); diff != "" {
					t.Errorf("(-want +got):\n%s", diff)
				}
			})
		}
	}
}

// TestControlLease: the lease comes back as documented, a second take is
// CONTROL_HELD (409), a hand-back needs the holder's lease.
func TestControlLease(t *testing.T) {
	h := &fakeHuman{}
	viewer := &fakeViewer{}
	srv := humanServerWith(h, viewer)
	op := map[string]string{"Authorization": "Bearer " + operatorToken}
	control := "/sessions/" + knownID + "/control"

	rec := serve(srv, "POST", control, "", op)
	if rec.Code != http.StatusOK {
		t.Fatalf("POST control = %d %s, want 200", rec.Code, rec.Body)
	}
	var got map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"holder": "person", "since": "2026-11-27T10:00:00Z", "lease": fakeLease}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("lease (-want +got):\n%s", diff)
	}

	steps := []struct {
		name, method, body string
		want               answer
	}{
		{"second take", "POST", "", answer{http.StatusConflict, proxy.ECONTROLHELD}},
		{"hand back with another lease", "DELETE", `{"lease":"not-it"}`, answer{http.StatusConflict, proxy.ECONTROLHELD}},
		{"hand back without a lease", "DELETE", `{}`, answer{http.StatusBadRequest, proxy.EINVALID}},
		{"hand back without a body", "DELETE", ``, answer{http.StatusBadRequest, proxy.EINVALID}},
		{"hand back with an unknown field", "DELETE", `{"lease":"` + fakeLease + `","x":1}`, answer{http.StatusBadRequest, proxy.EINVALID}},
		{"take with a malformed body", "POST", `{`, answer{http.StatusBadRequest, proxy.EINVALID}},
		{"hand back", "DELETE", `{"lease":"` + fakeLease + `"}`, answer{http.StatusNoContent, ""}},
		{"hand back again", "DELETE", `{"lease":"` + fakeLease + `"}`, answer{http.StatusBadRequest, proxy.EINVALID}},
		{"take after the hand-back", "POST", "{}", answer{http.StatusOK, ""}},
	}
	for _, st := range steps {
		if diff := cmp.Diff(st.want, send(t, srv, st.method, control, st.body, op)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", st.name, diff)
		}
	}
	if diff := cmp.Diff(answer{http.StatusNotFound, proxy.ESESSIONMISSING}, send(t, srv, "POST", "/sessions/nope/control", "", op)); diff != "" {
		t.Errorf("unknown session (-want +got):\n%s", diff)
	}
	// The viewers hear of every hand-back with a lease, before it.
	wantTold := []string{knownID + " not-it", knownID + " " + fakeLease, knownID + " " + fakeLease}
	if diff := cmp.Diff(wantTold, viewer.handedBack); diff != "" {
		t.Errorf("hand-backs the live view was told of (-want +got):\n%s", diff)
	}
}

// TestRequestHumanBody: the wait's body is checked before the service is
// asked; HUMAN_IN_CONTROL is 409 and retryable in the body.
func TestRequestHumanBody(t *testing.T) {
	h := &fakeHuman{}
	srv := humanServer(h)
	op := map[string]string{"Authorization": "Bearer " + aliceToken}
	path := "/sessions/" + knownID + "/human"
	tests := []struct {
		name, body string
		want       answer
	}{
		{"default timeout", `{"reason":"CAPTCHA"}`, answer{200, ""}},
		{"a timeout", `{"reason":"sign in","timeout_ms":60000}`, answer{200, ""}},
		{"the longest timeout", `{"reason":"sign in","timeout_ms":1800000}`, answer{200, ""}},
		{"too long", `{"reason":"sign in","timeout_ms":1800001}`, answer{400, proxy.EINVALID}},
		{"negative", `{"reason":"sign in","timeout_ms":-1}`, answer{400, proxy.EINVALID}},
		{"no reason", `{"timeout_ms":1000}`, answer{400, proxy.EINVALID}},
		{"timeout not a number", `{"reason":"x","timeout_ms":"1s"}`, answer{400, proxy.EINVALID}},
		{"unknown field", `{"reason":"x","timeout":5}`, answer{400, proxy.EINVALID}},
		{"no body", ``, answer{400, proxy.EINVALID}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, send(t, srv, "POST", path, tc.body, op)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	if diff := cmp.Diff([]string{"CAPTCHA 0s", "sign in 1m0s", "sign in 30m0s"}, h.waits); diff != "" {
		t.Errorf("waits the service saw (-want +got):\n%s", diff)
	}

	rec := serve(srv, "POST", path, `{"reason":"CAPTCHA"}`, op)
	var res proxy.HumanResult
	if err := json.Unmarshal(rec.Body.Bytes(), &res); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(proxy.HumanResult{SessionID: knownID, HandedBack: true, Actions: []string{"typed 6 characters"}, LiveURL: "/ui/sessions/" + knownID + "/live"}, res); diff != "" {
		t.Errorf("answer (-want +got):\n%s", diff)
	}

	h.holder = fakeLease
	rec = serve(srv, "POST", path, `{"reason":"busy"}`, op)
	var eb wire.ErrorBody
	if err := json.Unmarshal(rec.Body.Bytes(), &eb); err != nil {
		t.Fatal(err)
	}
	if rec.Code != http.StatusConflict || eb.Error != proxy.EHUMANINCONTROL || !eb.Retryable || eb.Suggestion == "" {
		t.Errorf("HUMAN_IN_CONTROL answered %d %+v; want 409, retryable, with a suggestion", rec.Code, eb)
	}
}

// TestLiveViewOrigin: the live view's WebSocket is refused to a page of
// another origin, loopback or not, as /ws is; the server's own page and
// clients that are not pages reach it, bound to the session of the path.
func TestLiveViewOrigin(t *testing.T) {
	srv := humanServer(&fakeHuman{})
	path := "/sessions/" + knownID + "/live"
	upgrade := func(origin string) map[string]string {
		h := map[string]string{"Authorization": "Bearer " + operatorToken, "Upgrade": "websocket", "Connection": "Upgrade"}
		if origin != "" {
			h["Origin"] = origin
		}
		return h
	}
	tests := []struct {
		name, origin string
		want         answer
	}{
		{"no origin", "", answer{204, ""}},
		{"own origin", "http://127.0.0.1:34501", answer{204, ""}},
		{"loopback of another port", "http://127.0.0.1:5173", answer{403, proxy.EORIGIN}},
		{"another site", "https://evil.example", answer{403, proxy.EORIGIN}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, send(t, srv, "GET", path, "", upgrade(tc.origin))); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	client := upgrade("")
	client["Authorization"] = "Bearer " + aliceToken
	if diff := cmp.Diff(answer{http.StatusForbidden, proxy.EFORBIDDEN}, send(t, srv, "GET", path, "", client)); diff != "" {
		t.Errorf("a client token's handshake (-want +got):\n%s", diff)
	}
	if got := serve(srv, "GET", path, "", upgrade("")).Header().Get("X-Session"); got != knownID {
		t.Errorf("the viewer was given session %q, want %q", got, knownID)
	}
}

func serve(h http.Handler, method, target, body string, hdr map[string]string) *httptest.ResponseRecorder {
	req := newRequest(method, target, strings.NewReader(body))
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}
