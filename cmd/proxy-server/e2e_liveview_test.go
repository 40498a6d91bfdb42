//go:build unix

package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/upstream"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/wire"
)

// The sign-in site's pages are told apart in a frame by their colour, at a
// point where nothing else is drawn.
var (
	colourElsewhere = [3]int{250, 210, 0}
	colourSignIn    = [3]int{30, 80, 190}
	colourSignedIn  = [3]int{0, 150, 70}
	colourPoint     = [2]int{600, 400}
)

// signInPage has its fields where a person's clicks on the live view find
// them: the user field centred at (190, 100), the password at (190, 180).
const signInPage = `<!doctype html><meta charset="utf-8"><title>Sign in</title>
<style>body{margin:0;background:rgb(30,80,190)} input{position:absolute;left:40px;width:300px;height:40px;font-size:20px}
#user{top:80px} #pw{top:160px} button{position:absolute;left:40px;top:240px}</style>
<form method="post" action="/login"><input id="user" name="user" aria-label="User" autocomplete="off">
<input id="pw" name="password" type="password" aria-label="Password"><button>Sign in</button></form>`

// newTakeoverSite serves a sign-in that needs a password only a person
// knows: the right one leads to a green page saying who is signed in.
func newTakeoverSite(t *testing.T, password string) string {
	t.Helper()
	colour := func(c [3]int) string { return fmt.Sprintf("rgb(%d,%d,%d)", c[0], c[1], c[2]) }
	mux := http.NewServeMux()
	mux.HandleFunc("GET /elsewhere", func(w http.ResponseWriter, r *http.Request) {
		page(w, "Elsewhere", `<style>body{background:`+colour(colourElsewhere)+`}</style><p>nothing here</p>`)
	})
	mux.HandleFunc("GET /login", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, signInPage)
	})
	mux.HandleFunc("POST /login", func(w http.ResponseWriter, r *http.Request) {
		if r.FormValue("user") != "alice" || r.FormValue("password") != password {
			page(w, "Sign in", `<p>wrong password</p>`)
			return
		}
		http.SetCookie(w, &http.Cookie{Name: "sid", Value: "signed-in-alice", Path: "/", HttpOnly: true})
		http.Redirect(w, r, "/app", http.StatusSeeOther)
	})
	mux.HandleFunc("GET /app", func(w http.ResponseWriter, r *http.Request) {
		who := "nobody"
		if c, err := r.Cookie("sid"); err == nil && c.Value == "signed-in-alice" {
			who = "alice"
		}
		page(w, "App", `<style>body{background:`+colour(colourSignedIn)+`}</style><p id="who">Signed in as `+who+`</p>`)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL
}

// person is someone at the inspector's live view: testdata/live.js in
// headless Chromium, one step at a time.
type person struct {
	t   *testing.T
	in  io.WriteCloser
	out *bufio.Scanner
}

func startPerson(t *testing.T, base, token, sessionID string) *person {
	t.Helper()
	chromium, err := upstream.FindBrowser()
	if err != nil {
		t.Fatal(err)
	}
	conf, _ := json.Marshal(map[string]string{
		"base": base, "token": token, "session": sessionID, "chromium": chromium,
		"playwright": filepath.Join(projectRoot(t), "node_modules", "playwright-core"),
	})
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	cmd := exec.CommandContext(ctx, "node", filepath.Join("testdata", "live.js"))
	cmd.Env = append(os.Environ(), "LIVE_CHECK="+string(conf), "TMPDIR="+t.TempDir())
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		in.Close()
		if err := cmd.Wait(); err != nil && !t.Failed() {
			t.Errorf("the live view check: %v\n%s", err, stderr.String())
		}
		cancel()
	})
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	return &person{t: t, in: in, out: sc}
}

// do runs one step and returns its answer.
func (p *person) do(step string, args map[string]any) map[string]any {
	p.t.Helper()
	if args == nil {
		args = map[string]any{}
	}
	args["step"] = step
	line, _ := json.Marshal(args)
	if _, err := p.in.Write(append(line, '\n')); err != nil {
		p.t.Fatalf("%s: %v", step, err)
	}
	if !p.out.Scan() {
		p.t.Fatalf("%s: the live view check ended: %v", step, p.out.Err())
	}
	var res map[string]any
	if err := json.Unmarshal(p.out.Bytes(), &res); err != nil {
		p.t.Fatalf("%s: %q: %v", step, p.out.Text(), err)
	}
	if res["ok"] != true {
		p.t.Fatalf("%s: %v", step, res["error"])
	}
	return res
}

// sees waits until the live view shows colour c, and says after how long.
func (p *person) sees(c [3]int) time.Duration {
	p.t.Helper()
	res := p.do("colour", map[string]any{"x": colourPoint[0], "y": colourPoint[1], "rgb": c, "within": 30000})
	return time.Duration(res["ms"].(float64)) * time.Millisecond
}

// TestLiveViewInBrowser is a person at the inspector, in headless Chromium,
// and an agent in mcp-bridge, on one session of a real browser: the view
// follows the agent's navigation; the agent asks for a person; the person
// takes control, signs in by clicking and typing in the view and hands
// back; request_human returns with the signed-in page and what the person
// did; meanwhile the agent's actions are refused while its reads work, and
// a second viewer can watch but not act. The password is in no database
// file and no log.
func TestLiveViewInBrowser(t *testing.T) {
	const token = "t0k-live-view-5b7e"
	password := "pw-" + secret(t)
	logPath := filepath.Join(t.TempDir(), "server.log")
	s := startServer(t, "", map[string]string{"PROXY_AUTH_TOKEN": token, "PROXY_LOG_FILE": logPath})
	siteURL := newTakeoverSite(t, password)
	authed := func(method, path string, body, out any) int {
		t.Helper()
		data, _ := json.Marshal(body)
		req, _ := http.NewRequest(method, s.URL+path, bytes.NewReader(data))
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if out != nil {
			if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
				t.Fatalf("%s %s: %v", method, path, err)
			}
		}
		return resp.StatusCode
	}
	_, bridgeBin := binaries(t)
	tr := transport.NewStdioWithOptions(bridgeBin, []string{"MCP_PROXY_URL=" + s.URL, "MCP_PROXY_AUTOSTART=0", "MCP_PROXY_TOKEN=" + token}, nil)
	agent := startMCP(t, tr, "agent", nil)
	elsewhere := agent.browser("browser_navigate", map[string]any{"url": siteURL + "/elsewhere"})
	sid := agent.defaultSession()

	who := startPerson(t, s.URL, token, sid)
	who.do("open", nil)
	who.sees(colourElsewhere)
	agent.browser("browser_navigate", map[string]any{"url": siteURL + "/login"})
	t.Logf("the live view showed the agent's navigation %v after its answer", who.sees(colourSignIn))

	// The agent asks for a person and waits.
	const reason = "Sign in as alice: the password is the user's"
	answered := make(chan *mcp.CallToolResult, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		req := mcp.CallToolRequest{}
		req.Params.Name = "request_human"
		req.Params.Arguments = map[string]any{"reason": reason, "timeout": 300}
		req.Params.Meta = &mcp.Meta{ProgressToken: "wait-1"}
		res, err := agent.c.CallTool(ctx, req)
		if err != nil {
			t.Errorf("request_human: %v", err)
		}
		answered <- res
	}()
	var sess proxy.Session
	for sess.Waiting == nil {
		select {
		case res := <-answered:
			t.Fatalf("request_human answered before anyone acted: %+v", res)
		case <-time.After(20 * time.Millisecond):
		}
		authed("GET", "/sessions/"+sid, nil, &sess)
	}
	if sess.Waiting.Reason != reason || sess.LiveURL != s.URL+"/ui/sessions/"+sid+"/live" {
		t.Errorf("the waiting session: waiting %+v, live_url %q", sess.Waiting, sess.LiveURL)
	}
	list := who.do("list", nil)
	if title, _ := list["title"].(string); !strings.HasPrefix(title, "(1 waiting) ") || list["waiting"] != "waiting: "+reason || list["live"] != "sessions/"+sid+"/live" {
		t.Errorf("the sessions list: %v", list)
	}

	took := who.do("take", nil)
	if st, _ := took["state"].(string); !strings.HasPrefix(st, "You hold control") {
		t.Errorf("after Take control the view says %q", st)
	}
	sess = proxy.Session{}
	authed("GET", "/sessions/"+sid, nil, &sess)
	if sess.Control == nil || sess.Control.Holder != proxy.HolderPerson {
		t.Errorf("GET /sessions/%s: control %+v", sid, sess.Control)
	}

	t.Run("the agent's actions wait; its reads do not", func(t *testing.T) {
		for _, call := range []struct {
			tool string
			args map[string]any
		}{
			{"browser_snapshot", nil},
			{"browser_navigate", map[string]any{"url": siteURL + "/elsewhere"}},
		} {
			ctx, cancel := agent.ctx()
			req := mcp.CallToolRequest{}
			req.Params.Name, req.Params.Arguments = call.tool, call.args
			res, err := agent.c.CallTool(ctx, req)
			cancel()
			if err != nil || !res.IsError || len(res.Content) == 0 || !strings.HasPrefix(res.Content[0].(mcp.TextContent).Text, "error: HUMAN_IN_CONTROL (retryable)") {
				t.Errorf("%s under a person's control: %+v, %v", call.tool, res, err)
			}
		}
		if got := agent.callText("get_content", map[string]any{"ref_id": elsewhere.RefID}); !strings.Contains(got, "nothing here") {
			t.Errorf("get_content under control: %q", got)
		}
		if got := agent.callText("list_sessions", nil); !strings.Contains(got, sid) {
			t.Errorf("list_sessions under control: %q", got)
		}
	})

	t.Run("a second viewer watches but cannot act", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(s.URL, "http")+"/sessions/"+sid+"/live",
			&websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer " + token}}})
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
					t.Fatalf("waiting for %s: %v", typ, err)
				}
				var m map[string]any
				if err := json.Unmarshal(b, &m); err != nil {
					t.Fatal(err)
				}
				if m["type"] == typ {
					return m
				}
			}
		}
		if st := next("state"); st["yours"] != false || st["control"] == nil {
			t.Errorf("the second viewer's state: %v", st)
		}
		next("frame")
		for _, m := range []map[string]any{
			{"type": "lease", "lease": "a-guess"},
			{"type": "mouse", "event": "pressed", "x": 190, "y": 100, "button": "left", "clicks": 1},
			{"type": "text", "text": "intruder"},
		} {
			b, _ := json.Marshal(m)
			if err := ws.Write(ctx, websocket.MessageText, b); err != nil {
				t.Fatal(err)
			}
			if m["type"] == "lease" {
				continue
			}
			if e := next("error"); e["code"] != proxy.ECONTROLHELD {
				t.Errorf("%v from a viewer without the lease: %v", m["type"], e)
			}
		}
		var refused wire.ErrorBody
		if code := authed("POST", "/sessions/"+sid+"/control", nil, &refused); code != http.StatusConflict || refused.Error != proxy.ECONTROLHELD {
			t.Errorf("a second take = %d %+v", code, refused)
		}
		if code := authed("DELETE", "/sessions/"+sid+"/control", map[string]string{"lease": "a-guess"}, &refused); code != http.StatusConflict || refused.Error != proxy.ECONTROLHELD {
			t.Errorf("a hand-back without the lease = %d %+v", code, refused)
		}
	})

	// The person signs in through the view.
	who.do("click", map[string]any{"x": 190, "y": 100})
	who.do("type", map[string]any{"text": "alice"})
	who.do("click", map[string]any{"x": 190, "y": 180})
	who.do("type", map[string]any{"text": password})
	who.do("press", map[string]any{"key": "Enter"})
	who.sees(colourSignedIn)
	who.do("handBack", nil)

	var res *mcp.CallToolResult
	select {
	case res = <-answered:
	case <-time.After(2 * time.Minute):
		t.Fatal("request_human did not return after the hand-back")
	}
	if res == nil || res.IsError || len(res.Content) == 0 {
		t.Fatalf("request_human = %+v", res)
	}
	answer := res.Content[0].(mcp.TextContent).Text
	for _, want := range []string{
		"handed_back: yes",
		"person: click on textbox 'User'; typed 5 characters; click on textbox 'Password'; typed " + fmt.Sprint(len(password)) + " characters; pressed Enter",
		"Signed in as alice",
		"live_url: " + s.URL + "/ui/sessions/" + sid + "/live",
	} {
		if !strings.Contains(answer, want) {
			t.Errorf("request_human's answer lacks %q:\n%s", want, answer)
		}
	}
	if strings.Contains(answer, password) {
		t.Errorf("request_human's answer holds the password:\n%s", answer)
	}
	// The agent goes on in the same browser context: the cookie the person
	// got is there.
	if got := agent.browser("browser_navigate", map[string]any{"url": siteURL + "/app"}); !strings.Contains(agent.callText("get_content", map[string]any{"ref_id": got.RefID}), "Signed in as alice") {
		t.Errorf("after the hand-back the agent's page does not say alice is signed in")
	}
	sess = proxy.Session{}
	authed("GET", "/sessions/"+sid, nil, &sess)
	if sess.Control != nil || sess.Waiting != nil {
		t.Errorf("after the hand-back: control %+v, waiting %+v", sess.Control, sess.Waiting)
	}

	// The record: the request, the take and the hand-back with a screenshot
	// each, what the person did, never what they typed.
	var exp struct {
		Events []proxy.SessionEvent `json:"events"`
	}
	if code := authed("GET", "/sessions/"+sid+"/export?format=json", nil, &exp); code != http.StatusOK {
		t.Fatalf("export = %d", code)
	}
	var kinds, actions []string
	for _, e := range exp.Events {
		switch e.Kind {
		case proxy.EventHumanRequested, proxy.EventControlTaken, proxy.EventControlReturned:
			kinds = append(kinds, e.Kind)
			if e.Kind != proxy.EventHumanRequested {
				ref, ok := strings.CutPrefix(e.Detail, "screenshot: ")
				if !ok || authed("GET", "/content/"+ref+"?reset_cursor=true", nil, nil) != http.StatusOK {
					t.Errorf("%s: detail %q names no stored screenshot", e.Kind, e.Detail)
				}
			}
		case proxy.EventHumanAction:
			actions = append(actions, e.Detail)
		}
		if strings.Contains(e.Detail, password) {
			t.Errorf("event %s holds the password: %q", e.Kind, e.Detail)
		}
	}
	if want := []string{proxy.EventHumanRequested, proxy.EventControlTaken, proxy.EventControlReturned}; strings.Join(kinds, ",") != strings.Join(want, ",") {
		t.Errorf("events %v, want %v", kinds, want)
	}
	if len(actions) != 5 {
		t.Errorf("human_action events %q, want the five the answer listed", actions)
	}
	who.do("close", nil)

	// After the server stops: the password is in no database file and no
	// log line.
	s.stop()
	for _, f := range []string{s.DBPath, s.DBPath + "-wal", s.DBPath + "-shm", logPath} {
		data, err := os.ReadFile(f)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		if bytes.Contains(data, []byte(password)) {
			t.Errorf("%s holds the password the person typed", filepath.Base(f))
		}
	}
}
