package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/bridge"
)

const codePage = `<!doctype html><meta charset="utf-8"><title>Verify</title>
<style>body{margin:0} #code{position:absolute;left:40px;top:40px;width:200px;height:30px}</style>
<form action="/done" method="get"><input id="code" name="code" aria-label="Code" autocomplete="off"><button type="submit">Verify</button></form>`

// TestLiveViewTakeOver: while the agent waits in request_human, a person
// watches the session's page in its live view, takes control, clicks the
// code field, types the code and presses Enter in the real browser; the
// hand-back ends the wait with what the person did (never what they
// typed) and a snapshot of the page the form led to.
func TestLiveViewTakeOver(t *testing.T) {
	s := startServer(t, "", nil)
	submitted := make(chan string, 1)
	pages := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		if r.URL.Path == "/done" {
			submitted <- r.URL.Query().Get("code")
			fmt.Fprint(w, "<title>Verified</title><h1>Verified</h1>")
			return
		}
		fmt.Fprint(w, codePage)
	}))
	t.Cleanup(pages.Close)
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
	if res, err := c.Call(ctx, proxy.CallRequest{SessionID: sid, Tool: "browser_navigate", Params: []byte(`{"url":"` + pages.URL + `/"}`)}); err != nil || res.Status != proxy.StatusSuccess {
		t.Fatalf("navigate: %+v, %v", res, err)
	}
	type outcome struct {
		res *proxy.HumanResult
		err error
	}
	waited := make(chan outcome, 1)
	go func() {
		res, err := c.RequestHuman(ctx, sid, "enter the code", 2*time.Minute)
		waited <- outcome{res, err}
	}()

	ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(s.URL, "http")+"/sessions/"+sid+"/live", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.CloseNow()
	ws.SetReadLimit(16 << 20)
	next := func(typ string) map[string]any {
		t.Helper()
		for {
			_, b, err := ws.Read(ctx)
			if err != nil {
				t.Fatalf("waiting for a %s message: %v", typ, err)
			}
			var m map[string]any
			if err := json.Unmarshal(b, &m); err != nil {
				t.Fatal(err)
			}
			if m["type"] == "error" && typ != "error" {
				t.Fatalf("live view error: %v", m)
			}
			if m["type"] == typ {
				return m
			}
		}
	}
	send := func(m map[string]any) {
		t.Helper()
		b, _ := json.Marshal(m)
		if err := ws.Write(ctx, websocket.MessageText, b); err != nil {
			t.Fatal(err)
		}
	}
	tabs := next("tabs")["tabs"].([]any)
	if len(tabs) != 1 || !strings.HasPrefix(tabs[0].(map[string]any)["url"].(string), pages.URL) {
		t.Errorf("tabs = %v, want the session's one page", tabs)
	}
	if f := next("frame"); f["width"].(float64) <= 0 {
		t.Errorf("frame = %v", f["width"])
	}
	// Input before control is refused and reaches nothing.
	send(map[string]any{"type": "text", "text": "x"})
	if e := next("error"); e["code"] != proxy.ECONTROLHELD {
		t.Errorf("input without a lease = %v", e)
	}

	var lease proxy.ControlLease
	if code := do(t, "POST", s.URL+"/sessions/"+sid+"/control", nil, &lease); code != http.StatusOK {
		t.Fatalf("POST control = %d", code)
	}
	send(map[string]any{"type": "lease", "lease": lease.Lease})
	for st := next("state"); st["yours"] != true; st = next("state") {
	}
	const code = "493817"
	send(map[string]any{"type": "mouse", "event": "pressed", "x": 140, "y": 55, "button": "left", "clicks": 1})
	send(map[string]any{"type": "mouse", "event": "released", "x": 140, "y": 55, "button": "left", "clicks": 1})
	send(map[string]any{"type": "text", "text": code})
	send(map[string]any{"type": "key", "key": "Enter"})
	select {
	case got := <-submitted:
		if got != code {
			t.Errorf("the page got %q, want what the person typed", got)
		}
	case <-ctx.Done():
		t.Fatal("the person's input never submitted the form")
	}
	if code := do(t, "DELETE", s.URL+"/sessions/"+sid+"/control", map[string]string{"lease": lease.Lease}, nil); code != http.StatusNoContent {
		t.Fatalf("hand back = %d", code)
	}
	o := <-waited
	if o.err != nil {
		t.Fatal(o.err)
	}
	want := []string{"click on textbox 'Code'", "typed 6 characters", "pressed Enter"}
	if strings.Join(o.res.Actions, "\n") != strings.Join(want, "\n") || !o.res.HandedBack {
		t.Errorf("request_human: handed back %v, actions %q; want %q", o.res.HandedBack, o.res.Actions, want)
	}
	if o.res.Result == nil || !strings.Contains(o.res.Result.Metadata.PageTitle, "Verified") {
		t.Errorf("the snapshot after the hand-back = %+v, want the page the form led to", o.res.Result)
	}
	for _, a := range o.res.Actions {
		if strings.Contains(a, code) {
			t.Errorf("an action holds what was typed: %q", a)
		}
	}
}
