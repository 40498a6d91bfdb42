package session

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/clock/clocktest"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/store"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/toolset"
)

// humanPage is the fake browser's page as the human tests change it: the
// snapshot browser_snapshot answers, and a screenshot for the control
// program.
type humanPage struct {
	mu       sync.Mutex
	snapshot string
}

func (p *humanPage) set(snapshot string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.snapshot = snapshot
}

func (p *humanPage) answer(t *testing.T) func(string, json.RawMessage) (json.RawMessage, error) {
	png := base64.StdEncoding.EncodeToString([]byte("\x89PNG fake"))
	return func(name string, args json.RawMessage) (json.RawMessage, error) {
		if name == toolset.RunTool {
			switch {
			case strings.Contains(string(args), "page.screenshot("):
				return programAnswer(t, `{"pwproxy":1,"ok":true,"value":{"url":"http://127.0.0.1/x","title":"X","image":{"mime_type":"image/png","data":"`+png+`"}}}`, "async (page) => {}"), nil
			case strings.Contains(string(args), "viewportSize"):
				return programAnswer(t, `{"pwproxy":1,"ok":true,"value":{"pages":[{"index":0,"url":"http://127.0.0.1/x","title":"X","current":true,"live":true}]}}`, "async (page) => {}"), nil
			case strings.Contains(string(args), "Target.getTargetInfo"):
				return programAnswer(t, `{"pwproxy":1,"ok":true,"value":{"pages":[{"index":0,"url":"http://127.0.0.1/x","title":"X","current":true,"target_id":"T1"}]}}`, "async (page) => {}"), nil
			}
		}
		p.mu.Lock()
		snap := p.snapshot
		p.mu.Unlock()
		text := "### Page\n- Page URL: http://127.0.0.1/x\n- Page Title: X\n### Snapshot\n```yaml\n" + snap + "\n```"
		return json.Marshal(map[string]any{"content": []map[string]string{{"type": "text", "text": text}}})
	}
}

// refusals counts what the manager reports refused.
type refusals struct {
	mu    sync.Mutex
	codes []string
}

func (r *refusals) ObserveCall(string, string, time.Duration, int, int) {}
func (r *refusals) ObserveRefused(tool, code string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.codes = append(r.codes, tool+" "+code)
}

type humanHarness struct {
	m     *Manager
	sp    *fakeSpawner
	db    *store.DB
	clk   *clocktest.Clock
	page  *humanPage
	seen  *refusals
	owner context.Context // the agent, an MCP client
	op    context.Context // the operator
}

func newHumanHarness(t *testing.T, opts Options) *humanHarness {
	t.Helper()
	h := &humanHarness{clk: clocktest.New(), page: &humanPage{snapshot: `- button "Sign in" [ref=e1]`}, seen: &refusals{},
		owner: proxy.WithClient(context.Background(), proxy.NewClientID("mcp", "agent")), op: context.Background()}
	opts.Clock, opts.Observer = h.clk, h.seen
	opts.LiveURL = func(id string) string { return "http://127.0.0.1:34501/ui/sessions/" + id + "/live" }
	h.m, h.sp, h.db = newManager(t, opts)
	h.sp.prepare = func(w *fakeWorker) { w.answer = h.page.answer(t) }
	return h
}

// session creates the agent's session and takes its first snapshot, the
// baseline of the changes a hand-back reports.
func (h *humanHarness) session(t *testing.T) string {
	t.Helper()
	s, err := h.m.CreateSession(h.owner)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.m.Call(h.owner, proxy.CallRequest{SessionID: s.ID, Tool: "browser_snapshot"}); err != nil {
		t.Fatal(err)
	}
	return s.ID
}

func (h *humanHarness) events(t *testing.T, id string, kinds ...string) []string {
	t.Helper()
	evs, err := h.db.ListSessionEvents(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range evs {
		for _, k := range kinds {
			if e.Kind == k {
				out = append(out, e.Kind+": "+e.Detail)
			}
		}
	}
	return out
}

func (h *humanHarness) calls(t *testing.T, id string) []string {
	t.Helper()
	calls, err := h.db.ListCalls(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, c := range calls {
		out = append(out, c.Request.ToolName)
	}
	return out
}

func wantErrCode(t *testing.T, err error, code string) *proxy.Error {
	t.Helper()
	var e *proxy.Error
	if !errors.As(err, &e) || e.Code != code {
		t.Fatalf("err = %v, want %s", err, code)
	}
	return e
}

func TestControlTakeAndHandBack(t *testing.T) {
	h := newHumanHarness(t, Options{})
	id := h.session(t)

	h.clk.Advance(time.Second) // the calls' order in the record is their time's
	lease, err := h.m.TakeControl(h.op, id)
	if err != nil {
		t.Fatal(err)
	}
	if lease.Holder != proxy.HolderPerson || lease.Lease == "" || !lease.Since.Equal(h.clk.Now()) {
		t.Errorf("lease = %+v, want a person's since now with a lease", lease)
	}
	if _, err := h.m.TakeControl(h.op, id); err == nil {
		t.Fatal("a second take succeeded")
	} else if e := wantErrCode(t, err, proxy.ECONTROLHELD); e.Details["session_id"] != id {
		t.Errorf("details = %v, want the session's id", e.Details)
	}
	s, err := h.m.GetSession(h.op, id)
	if err != nil {
		t.Fatal(err)
	}
	want := &proxy.Control{Holder: proxy.HolderPerson, Since: lease.Since}
	if diff := cmp.Diff(want, s.Control); diff != "" {
		t.Errorf("session's control (-want +got):\n%s", diff)
	}
	if s.LiveURL != "http://127.0.0.1:34501/ui/sessions/"+id+"/live" {
		t.Errorf("live_url = %q", s.LiveURL)
	}
	if !h.m.HoldsControl(id, lease.Lease) || h.m.HoldsControl(id, "not-the-lease") {
		t.Error("HoldsControl does not tell the lease from another")
	}

	wantErrCode(t, h.m.HandBack(h.op, id, "not-the-lease"), proxy.ECONTROLHELD)
	h.clk.Advance(time.Second)
	if err := h.m.HandBack(h.op, id, lease.Lease); err != nil {
		t.Fatal(err)
	}
	wantErrCode(t, h.m.HandBack(h.op, id, lease.Lease), proxy.EINVALID)
	if s, _ := h.m.GetSession(h.op, id); s.Control != nil {
		t.Errorf("control after hand-back = %+v, want none", s.Control)
	}

	// Two screenshots, each a recorded call with its image, each named by
	// its event.
	if diff := cmp.Diff([]string{"browser_snapshot", "human_control", "human_control"}, h.calls(t, id)); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	calls, _ := h.db.ListCalls(context.Background(), id)
	var wantEvents []string
	for i, kind := range []string{proxy.EventControlTaken, proxy.EventControlReturned} {
		ref := calls[1+i].Request.RefID
		wantEvents = append(wantEvents, kind+": screenshot: "+ref)
		imgs, err := h.db.ListImages(context.Background(), ref)
		if err != nil || len(imgs) != 1 || imgs[0].MimeType != "image/png" {
			t.Errorf("images of %s = %v, %v; want one PNG", ref, imgs, err)
		}
	}
	if diff := cmp.Diff(wantEvents, h.events(t, id, proxy.EventControlTaken, proxy.EventControlReturned)); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}

	// The screenshots did not move the agent's baseline: the next snapshot
	// with changes compares with the agent's own.
	h.page.set(`- button "Sign in" [ref=e1]` + "\n" + `- text "Welcome" [ref=e2]`)
	res, err := h.m.Call(h.owner, proxy.CallRequest{SessionID: id, Tool: "browser_snapshot", Changes: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Changes == nil || !strings.Contains(res.Changes.Text, "Welcome") {
		t.Errorf("changes = %+v, want Welcome added against the agent's snapshot", res.Changes)
	}
}

func TestControlRefusals(t *testing.T) {
	h := newHumanHarness(t, Options{})
	id := h.session(t)
	other := proxy.WithClient(context.Background(), proxy.NewClientID("mcp", "other"))
	tests := []struct {
		name string
		run  func() error
		code string
	}{
		{"hand back when nobody holds it", func() error { return h.m.HandBack(h.op, id, "x") }, proxy.EINVALID},
		{"action without a control", func() error { return h.m.HumanAction(h.op, id, "x", "pressed Enter") }, proxy.ECONTROLHELD},
		{"another client's session", func() error { _, err := h.m.TakeControl(other, id); return err }, proxy.ESESSIONMISSING},
		{"bad id", func() error { _, err := h.m.TakeControl(h.op, "nope"); return err }, proxy.ESESSIONMISSING},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { wantErrCode(t, tt.run(), tt.code) })
	}
}

func TestControlGatesTheAgent(t *testing.T) {
	h := newHumanHarness(t, Options{})
	id := h.session(t)
	lease, err := h.m.TakeControl(h.op, id)
	if err != nil {
		t.Fatal(err)
	}
	before := h.calls(t, id)

	for _, tool := range []string{"browser_click", "browser_snapshot"} {
		t.Run(tool, func(t *testing.T) {
			_, err := h.m.Call(h.owner, proxy.CallRequest{SessionID: id, Tool: tool})
			e := wantErrCode(t, err, proxy.EHUMANINCONTROL)
			want := map[string]any{"session_id": id, "live_url": "http://127.0.0.1:34501/ui/sessions/" + id + "/live"}
			if diff := cmp.Diff(want, e.Details); diff != "" || !e.Retryable {
				t.Errorf("retryable %v; details (-want +got):\n%s", e.Retryable, diff)
			}
		})
	}
	if diff := cmp.Diff(before, h.calls(t, id)); diff != "" {
		t.Errorf("refused calls were recorded (-want +got):\n%s", diff)
	}
	h.seen.mu.Lock()
	if diff := cmp.Diff([]string{"browser_click HUMAN_IN_CONTROL", "browser_snapshot HUMAN_IN_CONTROL"}, h.seen.codes); diff != "" {
		t.Errorf("refusals observed (-want +got):\n%s", diff)
	}
	h.seen.mu.Unlock()
	// Reads still work, for the agent too.
	if pages, err := h.m.Pages(h.owner, id); err != nil || len(pages) != 1 {
		t.Errorf("Pages = %v, %v", pages, err)
	}
	if _, err := h.m.GetSession(h.owner, id); err != nil {
		t.Errorf("GetSession: %v", err)
	}
	// Another client learns nothing of the control.
	other := proxy.WithClient(context.Background(), proxy.NewClientID("mcp", "other"))
	_, err = h.m.Call(other, proxy.CallRequest{SessionID: id, Tool: "browser_click"})
	wantErrCode(t, err, proxy.ESESSIONMISSING)

	// The agent cannot close the browser a person is using; the operator
	// can, and that ends the control.
	wantErrCode(t, h.m.CloseSession(h.owner, id), proxy.EHUMANINCONTROL)
	if err := h.m.CloseSession(h.op, id); err != nil {
		t.Fatal(err)
	}
	h.wantEnded(t, id, lease.Lease, "ended: the session was closed")
}

// wantEnded checks that lease no longer holds session id's browser and
// that its one control_returned event says why.
func (h *humanHarness) wantEnded(t *testing.T, id, lease, why string) {
	t.Helper()
	if h.m.HoldsControl(id, lease) {
		t.Error("the lease still holds the browser")
	}
	// The event is written as the control ends, which may be just after
	// the waiter woke.
	want := []string{proxy.EventControlReturned + ": " + why}
	got := h.events(t, id, proxy.EventControlReturned)
	for deadline := time.Now().Add(5 * time.Second); len(got) == 0 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
		got = h.events(t, id, proxy.EventControlReturned)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

func TestRequestHumanRefusesBadArguments(t *testing.T) {
	h := newHumanHarness(t, Options{})
	id := h.session(t)
	tests := []struct {
		name    string
		reason  string
		timeout time.Duration
		field   string
	}{
		{"no reason", "  ", 0, "reason"},
		{"long reason", strings.Repeat("é", 501), 0, "reason"},
		{"negative timeout", "2FA", -time.Second, "timeout"},
		{"timeout over the maximum", "2FA", proxy.MaxHumanTimeout + time.Second, "timeout"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := h.m.RequestHuman(h.owner, id, tt.reason, tt.timeout)
			if e := wantErrCode(t, err, proxy.EINVALID); e.Details["field"] != tt.field {
				t.Errorf("details = %v, want field %s", e.Details, tt.field)
			}
		})
	}
	if got := h.events(t, id, proxy.EventHumanRequested); len(got) != 0 {
		t.Errorf("refused requests left events: %v", got)
	}
}

// requestHuman runs RequestHuman in the background.
func (h *humanHarness) requestHuman(id, reason string, timeout time.Duration) <-chan humanAnswer {
	ch := make(chan humanAnswer, 1)
	go func() {
		res, err := h.m.RequestHuman(h.owner, id, reason, timeout)
		ch <- humanAnswer{res, err}
	}()
	return ch
}

type humanAnswer struct {
	res *proxy.HumanResult
	err error
}

func TestRequestHumanReturnsOnHandBack(t *testing.T) {
	h := newHumanHarness(t, Options{})
	id := h.session(t)
	// Two agents' waits on one session; both end with the hand-back.
	first := h.requestHuman(id, "Enter the 2FA code", 0)
	second := h.requestHuman(id, "Solve the CAPTCHA", 20*time.Minute)
	h.clk.WaitForTimer(t, proxy.DefaultHumanTimeout)
	h.clk.WaitForTimer(t, 20*time.Minute)

	s, err := h.m.GetSession(h.op, id)
	if err != nil {
		t.Fatal(err)
	}
	if s.Waiting == nil || !s.Waiting.Until.After(s.Waiting.Since) {
		t.Errorf("waiting = %+v, want a wait", s.Waiting)
	}
	lease, err := h.m.TakeControl(h.op, id)
	if err != nil {
		t.Fatal(err)
	}
	h.clk.Advance(time.Minute)
	for _, a := range []string{"click on button 'Sign in'", "typed 6 characters", "pressed Enter"} {
		if err := h.m.HumanAction(h.op, id, lease.Lease, a); err != nil {
			t.Fatal(err)
		}
	}
	h.page.set(`- text "Welcome back" [ref=e5]`)
	if err := h.m.HandBack(h.op, id, lease.Lease); err != nil {
		t.Fatal(err)
	}
	wantActions := []string{"click on button 'Sign in'", "typed 6 characters", "pressed Enter"}
	for _, ch := range []<-chan humanAnswer{first, second} {
		a := <-ch
		if a.err != nil {
			t.Fatal(a.err)
		}
		r := a.res
		if !r.HandedBack || r.Control != nil || r.Waited != time.Minute || r.LiveURL == "" {
			t.Errorf("result = %+v, want handed back after a minute with the live URL", r)
		}
		if diff := cmp.Diff(wantActions, r.Actions); diff != "" {
			t.Errorf("actions (-want +got):\n%s", diff)
		}
		if r.Result == nil || r.Result.Changes == nil || !strings.Contains(r.Result.Changes.Text, "Welcome back") {
			t.Errorf("result's snapshot = %+v, want Welcome back among the changes", r.Result.Changes)
		}
	}
	if s, _ := h.m.GetSession(h.op, id); s.Waiting != nil || s.Control != nil {
		t.Errorf("after the waits: waiting %+v, control %+v", s.Waiting, s.Control)
	}
	wantEvents := []string{
		proxy.EventHumanRequested + ": Enter the 2FA code", proxy.EventHumanRequested + ": Solve the CAPTCHA",
		proxy.EventHumanAction + ": click on button 'Sign in'", proxy.EventHumanAction + ": typed 6 characters", proxy.EventHumanAction + ": pressed Enter",
	}
	got := h.events(t, id, proxy.EventHumanRequested, proxy.EventHumanAction)
	if diff := cmp.Diff(wantEvents, got, cmpSorted); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

// cmpSorted compares string lists as sets: concurrent waits record their
// events in either order.
var cmpSorted = cmp.Transformer("sorted", func(in []string) []string {
	out := append([]string(nil), in...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
})

func TestRequestHumanTimesOut(t *testing.T) {
	h := newHumanHarness(t, Options{})
	id := h.session(t)
	ch := h.requestHuman(id, "Accept the cookie wall", 5*time.Minute)
	h.clk.WaitForTimer(t, 5*time.Minute)
	lease, err := h.m.TakeControl(h.op, id)
	if err != nil {
		t.Fatal(err)
	}
	before := h.calls(t, id)
	h.clk.Advance(5 * time.Minute)
	a := <-ch
	if a.err != nil {
		t.Fatal(a.err)
	}
	want := &proxy.HumanResult{SessionID: id, Waited: 5 * time.Minute, Control: &proxy.Control{Holder: proxy.HolderPerson, Since: lease.Since},
		LiveURL: "http://127.0.0.1:34501/ui/sessions/" + id + "/live"}
	if diff := cmp.Diff(want, a.res); diff != "" {
		t.Errorf("result (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(before, h.calls(t, id)); diff != "" {
		t.Errorf("a timed-out wait recorded a call (-want +got):\n%s", diff)
	}
}

func TestIdleSuspendAndEvictionSkipAPersonsSession(t *testing.T) {
	// The holder's own idle timeout is longer than the hour that makes the
	// session idle: the control still holds when the sweep looks.
	h := newHumanHarness(t, Options{MaxSessions: 1, ControlIdleTimeout: 2 * time.Hour})
	id := h.session(t)
	if _, err := h.m.TakeControl(h.op, id); err != nil {
		t.Fatal(err)
	}
	h.clk.Advance(time.Hour)
	if l := h.m.reg.get(id); l == nil || h.m.trySuspend(context.Background(), l, "idle") {
		t.Error("a session a person holds was suspended as idle")
	}
	// The only slot is the held session's: it is not evicted for another.
	_, err := h.m.CreateSession(h.owner)
	wantErrCode(t, err, proxy.EMAXSESSIONS)
}

func TestControlEndsWhenThePersonLeaves(t *testing.T) {
	h := newHumanHarness(t, Options{ControlIdleTimeout: 10 * time.Minute})
	id := h.session(t)
	wait := h.requestHuman(id, "Sign in", proxy.MaxHumanTimeout)
	h.clk.WaitForTimer(t, proxy.MaxHumanTimeout)
	lease, err := h.m.TakeControl(h.op, id)
	if err != nil {
		t.Fatal(err)
	}
	h.clk.WaitForTimer(t, 10*time.Minute)
	h.clk.Advance(4 * time.Minute)
	if err := h.m.HumanAction(h.op, id, lease.Lease, "scrolled"); err != nil {
		t.Fatal(err)
	}
	// The idle watch wakes at 10 minutes, sees input 6 minutes ago, and
	// waits out the 4 left.
	h.clk.Advance(6 * time.Minute)
	h.clk.WaitForTimer(t, 4*time.Minute)
	if !h.m.HoldsControl(id, lease.Lease) {
		t.Fatal("the control ended while its holder was active")
	}
	// HoldsControl was a sign of the holder too: it reset the watch.
	h.clk.Advance(4 * time.Minute)
	h.clk.WaitForTimer(t, 6*time.Minute)
	h.clk.Advance(6 * time.Minute)
	a := <-wait
	if a.err != nil {
		t.Fatal(a.err)
	}
	if !a.res.HandedBack || a.res.Control != nil || !cmp.Equal(a.res.Actions, []string{"scrolled"}) {
		t.Errorf("result = %+v, want handed back with the person's action", a.res)
	}
	h.wantEnded(t, id, lease.Lease, "released: the person left")
}

func TestLiveTarget(t *testing.T) {
	h := newHumanHarness(t, Options{})
	page := h.page.answer(t)
	h.sp.prepare = func(w *fakeWorker) { w.answer, w.endpoint = page, "http://127.0.0.1:9" }
	id := h.session(t)
	got, err := h.m.LiveTarget(h.op, id)
	if err != nil {
		t.Fatal(err)
	}
	want := &proxy.LiveTarget{Endpoint: "http://127.0.0.1:9", Pages: []proxy.LivePage{{Index: 0, URL: "http://127.0.0.1/x", Title: "X", Current: true, TargetID: "T1"}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("LiveTarget (-want +got):\n%s", diff)
	}
	if b, _ := json.Marshal(got); strings.Contains(string(b), "127.0.0.1:9") {
		t.Errorf("the browser's address shows in %s", b)
	}
	// A suspended session comes back for its live view.
	if !h.m.trySuspend(context.Background(), h.m.reg.get(id), "idle") {
		t.Fatal("the session was not suspended")
	}
	if got, err := h.m.LiveTarget(h.op, id); err != nil || len(got.Pages) != 1 {
		t.Errorf("LiveTarget of a suspended session = %+v, %v", got, err)
	}
}

func TestLiveTargetNeedsADebugEndpoint(t *testing.T) {
	h := newHumanHarness(t, Options{})
	id := h.session(t)
	_, err := h.m.LiveTarget(h.op, id)
	if e := wantErrCode(t, err, proxy.EUNAVAILABLE); e.Retryable || !strings.Contains(e.Message, "no live view") {
		t.Errorf("err = %+v, want a lasting refusal saying there is no live view", e)
	}
}

func TestRequestHumanEndsAtShutdown(t *testing.T) {
	h := newHumanHarness(t, Options{})
	id := h.session(t)
	wait := h.requestHuman(id, "Sign in", 0)
	h.clk.WaitForTimer(t, proxy.DefaultHumanTimeout)
	if err := h.m.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	a := <-wait
	wantErrCode(t, a.err, proxy.EUNAVAILABLE)
}

func TestHandBackOfAFailedSession(t *testing.T) {
	h := newHumanHarness(t, Options{})
	id := h.session(t)
	lease, err := h.m.TakeControl(h.op, id)
	if err != nil {
		t.Fatal(err)
	}
	l := h.m.reg.get(id)
	if err := l.lock(context.Background()); err != nil {
		t.Fatal(err)
	}
	h.m.sup.fail(context.Background(), l, "test: the browser kept crashing")
	l.unlock()
	if err := h.m.HandBack(h.op, id, lease.Lease); err != nil {
		t.Fatal(err)
	}
	h.wantEnded(t, id, lease.Lease, "screenshot: none")
}
