package main

import (
	"context"
	"net/http"
	"testing"
	"time"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/api"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/bridge"
)

// TestPersonTakesOverOverHTTP: an agent's request_human over HTTP (as
// mcp-bridge sends it) waits while a person takes the session's browser
// through the control routes; meanwhile the agent's calls are refused
// HUMAN_IN_CONTROL and a second take CONTROL_HELD; the hand-back ends the
// wait with a snapshot, and the agent goes on in the same session.
func TestPersonTakesOverOverHTTP(t *testing.T) {
	s := startServer(t, "", nil)
	base := site(t)
	// The agent is a bridge: its session is its own client's.
	c, err := bridge.NewClient(s.URL, "", bridge.WithRetryTimeout(0))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	sess, err := c.CreateSession(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sid := sess.ID
	nav, err := c.Call(ctx, proxy.CallRequest{SessionID: sid, Tool: "browser_navigate", Params: []byte(`{"url":"` + base + `/index.html"}`)})
	if err != nil || nav.Status != proxy.StatusSuccess {
		t.Fatalf("navigate: %+v, %v", nav, err)
	}
	type outcome struct {
		res *proxy.HumanResult
		err error
	}
	waited := make(chan outcome, 1)
	go func() {
		res, err := c.RequestHuman(ctx, sid, "enter the 2FA code", 2*time.Minute)
		waited <- outcome{res, err}
	}()
	sessionNow := func() proxy.Session {
		var sess proxy.Session
		if code := do(t, "GET", s.URL+"/sessions/"+sid, nil, &sess); code != http.StatusOK {
			t.Fatalf("GET session = %d", code)
		}
		return sess
	}
	// The wait shows on the session once it began; nothing here is timed.
	for sessionNow().Waiting == nil {
		select {
		case o := <-waited:
			t.Fatalf("request_human ended before anyone took control: %+v, %v", o.res, o.err)
		case <-ctx.Done():
			t.Fatal("the session never showed the wait")
		case <-time.After(20 * time.Millisecond):
		}
	}
	if w := sessionNow().Waiting; w.Reason != "enter the 2FA code" {
		t.Errorf("waiting = %+v", w)
	}

	var lease proxy.ControlLease
	if code := do(t, "POST", s.URL+"/sessions/"+sid+"/control", nil, &lease); code != http.StatusOK || lease.Lease == "" || lease.Holder != proxy.HolderPerson {
		t.Fatalf("POST control = %d %+v", code, lease)
	}
	_, err = c.Call(ctx, proxy.CallRequest{SessionID: sid, Tool: "browser_snapshot", Params: []byte(`{}`)})
	if e := proxy.AsError(err); e.Code != proxy.EHUMANINCONTROL || !e.Retryable {
		t.Errorf("the agent's call under control = %v, want HUMAN_IN_CONTROL, retryable", err)
	}
	var refused api.ErrorBody
	if code := do(t, "POST", s.URL+"/sessions/"+sid+"/control", nil, &refused); code != http.StatusConflict || refused.Error != proxy.ECONTROLHELD {
		t.Errorf("a second take = %d %+v, want 409 CONTROL_HELD", code, refused)
	}
	if ctl := sessionNow().Control; ctl == nil || ctl.Holder != proxy.HolderPerson {
		t.Errorf("control on the session = %+v", ctl)
	}
	if code := do(t, "DELETE", s.URL+"/sessions/"+sid+"/control", map[string]string{"lease": "not-the-lease"}, &refused); code != http.StatusConflict || refused.Error != proxy.ECONTROLHELD {
		t.Errorf("a hand-back with another lease = %d %+v, want 409 CONTROL_HELD", code, refused)
	}
	if code := do(t, "DELETE", s.URL+"/sessions/"+sid+"/control", map[string]string{"lease": lease.Lease}, nil); code != http.StatusNoContent {
		t.Fatalf("hand back = %d", code)
	}

	o := <-waited
	if o.err != nil {
		t.Fatal(o.err)
	}
	if !o.res.HandedBack || o.res.Result == nil || o.res.Result.RefID == "" || o.res.LiveURL == "" {
		t.Errorf("request_human = %+v, want handed back with a snapshot and the live URL", o.res)
	}
	if sess := sessionNow(); sess.Control != nil || sess.Waiting != nil {
		t.Errorf("after the hand-back: control %+v, waiting %+v", sess.Control, sess.Waiting)
	}
	if res, err := c.Call(ctx, proxy.CallRequest{SessionID: sid, Tool: "browser_snapshot", Params: []byte(`{}`)}); err != nil || res.Status != proxy.StatusSuccess {
		t.Errorf("the agent's call after the hand-back: %+v, %v", res, err)
	}
}
