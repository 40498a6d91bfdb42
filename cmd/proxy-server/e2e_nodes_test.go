//go:build unix

package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/e2etest"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/wire"
)

// TestBrowserNodes runs proxy-server on two real browser nodes
// (proxy-server browser-node: Playwright browser servers on this machine's
// Chromium, each a process tree of its own) and a third endpoint that
// answers as a Playwright server of another version would; sessions share
// session hosts there as on the server's own browser.
func TestBrowserNodes(t *testing.T) {
	if testing.Short() {
		t.Skip("starts browser nodes and Chromium")
	}
	requireBrowser(t)
	bin, _ := binaries(t)
	pages := site(t)
	nodeA := e2etest.StartBrowserNode(t, bin, e2etest.FreePort(t))
	nodeB := e2etest.StartBrowserNode(t, bin, e2etest.FreePort(t))
	old := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusPreconditionRequired)
		_, _ = w.Write([]byte("Playwright version mismatch:\n  - server version: v1.40\n  - client version: v1.64\n"))
	}))
	t.Cleanup(old.Close)
	s := startServer(t, "", map[string]string{
		"PROXY_BROWSER_ENDPOINTS":   nodeA.Endpoint + "#name=a&max=2, " + nodeB.Endpoint + "#name=b&max=2, ws" + strings.TrimPrefix(old.URL, "http") + "/pw?token=s3cret#name=old",
		"PROXY_NODE_PROBE_INTERVAL": "200ms",
		"PROXY_NODE_QUEUE_TIMEOUT":  "1s",
	})
	db := openRO(t, s.DBPath)
	nodes := map[string]*e2etest.BrowserNode{"a": nodeA, "b": nodeB}

	first := s.createSession(t)
	second := s.createSession(t)
	t.Run("placement spreads sessions and says where", func(t *testing.T) {
		sa, sb := s.getSession(t, first), s.getSession(t, second)
		na, nb := sa.Node, sb.Node
		if na == nb || nodes[na] == nil || nodes[nb] == nil {
			t.Fatalf("sessions placed on %q and %q, want one on each of a and b", na, nb)
		}
		// The default PROXY_SESSIONS_PER_WORKER holds on nodes too: one
		// node process (a session host) serves sessions on both nodes.
		if sa.WorkerPID == 0 || sa.WorkerPID != sb.WorkerPID {
			t.Errorf("sessions on nodes %s and %s in node processes %d and %d, want one session host for both", na, nb, sa.WorkerPID, sb.WorkerPID)
		}
		var list struct{ Sessions []proxy.Session }
		do(t, "GET", s.URL+"/sessions", nil, &list)
		for _, sess := range list.Sessions {
			if sess.Node == "" {
				t.Errorf("GET /sessions: session %s has no node", sess.ID)
			}
		}
		got := nodeStates(t, s)
		for id, want := range map[string]proxy.Node{
			"a": {State: proxy.NodeUp, Sessions: 1, Capacity: 2},
			"b": {State: proxy.NodeUp, Sessions: 1, Capacity: 2},
		} {
			if n := got[id]; n.State != want.State || n.Sessions != want.Sessions || n.Capacity != want.Capacity {
				t.Errorf("node %s = %+v, want %+v", id, n, want)
			}
		}
	})

	t.Run("another Playwright version is refused", func(t *testing.T) {
		n := nodeStates(t, s)["old"]
		if n.State != proxy.NodeDown || !strings.Contains(n.Error, "version mismatch") || !strings.Contains(n.Error, "v1.40") {
			t.Errorf("node old = %+v, want down for its Playwright version", n)
		}
		if strings.Contains(n.Endpoint, "s3cret") || strings.Contains(n.Error, "s3cret") {
			t.Errorf("node old shows its token: %+v", n)
		}
	})

	t.Run("a full pool answers 429", func(t *testing.T) {
		third, fourth := s.createSession(t), s.createSession(t)
		var e wire.ErrorBody
		if code := do(t, "POST", s.URL+"/sessions", nil, &e); code != http.StatusTooManyRequests || e.Error != proxy.EMAXSESSIONS {
			t.Errorf("POST /sessions on a full pool = %d %+v, want 429 %s", code, e, proxy.EMAXSESSIONS)
		}
		for id, n := range nodeStates(t, s) {
			if n.Sessions > n.Capacity {
				t.Errorf("node %s holds %d sessions, capacity %d", id, n.Sessions, n.Capacity)
			}
		}
		for _, id := range []string{third, fourth} {
			if code := do(t, "DELETE", s.URL+"/sessions/"+id, nil, nil); code != http.StatusOK {
				t.Fatalf("DELETE /sessions/%s = %d", id, code)
			}
		}
	})

	t.Run("browser options reach a node's browser; an engine no node serves is refused", func(t *testing.T) {
		code, _, e := createWith(t, s, `{"browser":"webkit"}`)
		if avail, _ := e.Details["available"].([]any); code != http.StatusBadRequest || e.Error != proxy.EINVALID || e.Details["field"] != "browser" || len(avail) != 1 || avail[0] != proxy.BrowserChromium {
			t.Errorf("POST /sessions for webkit on chromium nodes = %d %+v, want 400 %s naming browser and the chromium nodes", code, e, proxy.EINVALID)
		}
		code, sess, e := createWith(t, s, proxy.BrowserOptions{Viewport: &proxy.Viewport{Width: 700, Height: 500}, Locale: "it-IT", ColorScheme: "dark"})
		if code != http.StatusCreated {
			t.Fatalf("POST /sessions with options = %d %+v", code, e)
		}
		got := s.look(t, sess.ID, probeSite(t))
		if got.Width != 700 || got.Height != 500 || got.Language != "it-IT" || got.Scheme != "dark" {
			t.Errorf("a session with options on node %q sees %+v", s.getSession(t, sess.ID).Node, got)
		}
		if code := do(t, "DELETE", s.URL+"/sessions/"+sess.ID, nil, nil); code != http.StatusOK {
			t.Fatalf("DELETE /sessions/%s = %d", sess.ID, code)
		}
	})

	t.Run("a node killed brings its sessions back elsewhere", func(t *testing.T) {
		// Both sessions on one node, the other empty: drain the second's
		// node (it moves to the first's), then undrain it.
		values := map[string]string{first: "moved", second: "moved2"}
		for id, v := range values {
			prepare(t, s, db, pages, id, v)
		}
		if from := s.getSession(t, second).Node; do(t, "POST", s.URL+"/nodes/"+from+"/drain", nil, nil) != http.StatusOK ||
			do(t, "POST", s.URL+"/nodes/"+from+"/undrain", nil, nil) != http.StatusOK {
			t.Fatalf("set-up: drain and undrain of %s failed", from)
		}
		dead := s.getSession(t, first).Node
		if got := s.getSession(t, second).Node; got != dead {
			t.Fatalf("set-up: sessions on %s and %s, want both on one node", dead, got)
		}
		s.call(t, second, "browser_snapshot", nil) // takes the move's restored=true
		// The node's whole process tree, kill -9, as a machine that dies.
		nodes[dead].Kill()

		// The first call of each session, sent after the node died, never
		// reached a browser: it runs on the session restored elsewhere.
		for _, id := range []string{first, second} {
			checkRestored(t, s, pages, id, values[id])
			if now := s.getSession(t, id).Node; now == dead || nodes[now] == nil {
				t.Errorf("session %s on %q after %s died, want the other node", id, now, dead)
			}
		}
		if n := nodeStates(t, s)[dead]; n.State != proxy.NodeDown || n.Sessions != 0 {
			t.Errorf("node %s after its death = %+v, want down and empty", dead, n)
		}
		// Back up on the same address, it takes sessions again.
		nodes[dead].Restart()
		waitNode(t, s, dead, proxy.NodeUp)
		id := s.createSession(t)
		if got := s.getSession(t, id).Node; got != dead {
			t.Errorf("a new session went to %q, want %q, the node with room", got, dead)
		}
		if code := do(t, "DELETE", s.URL+"/sessions/"+id, nil, nil); code != http.StatusOK {
			t.Fatalf("DELETE /sessions/%s = %d", id, code)
		}
	})

	t.Run("drain moves sessions with their state", func(t *testing.T) {
		prepare(t, s, db, pages, second, "drained")
		from := s.getSession(t, second).Node
		var d wire.DrainBody
		if code := do(t, "POST", s.URL+"/nodes/"+from+"/drain", nil, &d); code != http.StatusOK {
			t.Fatalf("POST /nodes/%s/drain = %d", from, code)
		}
		if d.Node == nil || d.State != proxy.NodeDraining || d.Sessions != 0 || d.Moved < 1 {
			t.Errorf("drain answered %+v (moved %d), want the node draining, empty, at least one moved", d.Node, d.Moved)
		}
		if now := s.getSession(t, second).Node; now == from {
			t.Errorf("session still on %s after its drain", from)
		}
		res := s.call(t, second, "browser_snapshot", nil)
		if want := "ls=drained;ck=who=drained"; res.Metadata.PageURL != pages+"/read.html" || res.Metadata.PageTitle != want {
			t.Errorf("after the drain the session is at %q titled %q, want read.html titled %q", res.Metadata.PageURL, res.Metadata.PageTitle, want)
		}
		// Nothing new goes to a draining node, even when the others are
		// full; undrained, it takes sessions again.
		var e wire.ErrorBody
		if code := do(t, "POST", s.URL+"/sessions", nil, &e); code != http.StatusTooManyRequests {
			t.Errorf("POST /sessions with the other node full and %s draining = %d %+v, want 429", from, code, e)
		}
		var n proxy.Node
		if code := do(t, "POST", s.URL+"/nodes/"+from+"/undrain", nil, &n); code != http.StatusOK || n.State != proxy.NodeUp {
			t.Errorf("POST /nodes/%s/undrain = %d %+v, want it up", from, code, n)
		}
		id := s.createSession(t)
		if got := s.getSession(t, id).Node; got != from {
			t.Errorf("a new session went to %q, want %q, undrained and the only node with room", got, from)
		}
	})

	t.Run("unknown node", func(t *testing.T) {
		var e wire.ErrorBody
		if code := do(t, "POST", s.URL+"/nodes/nope/drain", nil, &e); code != http.StatusNotFound || e.Error != proxy.ENODEMISSING {
			t.Errorf("POST /nodes/nope/drain = %d %+v, want 404 %s", code, e, proxy.ENODEMISSING)
		}
	})

	t.Run("health and metrics show the nodes", func(t *testing.T) {
		var h struct {
			Checks map[string]string
			Nodes  []proxy.Node
		}
		do(t, "GET", s.URL+"/health", nil, &h)
		if len(h.Nodes) != 3 {
			t.Errorf("/health nodes %+v; want three", h.Nodes)
		}
		// A node down is not the server down, nor is a full pool.
		for name, v := range h.Checks {
			if v != "ok" {
				t.Errorf("/health check %s = %q, want ok", name, v)
			}
		}
		var text string
		do(t, "GET", s.URL+"/metrics", nil, &text)
		for _, want := range []string{`pwproxy_node_up{node="a",state="up"} 1`, `pwproxy_node_up{node="old",state="down"} 0`, `pwproxy_node_capacity{node="b"} 2`} {
			if !strings.Contains(text, want) {
				t.Errorf("/metrics lacks %s", want)
			}
		}
	})
}

// nodeStates reads GET /nodes by node id.
func nodeStates(t *testing.T, s *server) map[string]proxy.Node {
	t.Helper()
	var body struct{ Nodes []proxy.Node }
	if code := do(t, "GET", s.URL+"/nodes", nil, &body); code != http.StatusOK {
		t.Fatalf("GET /nodes = %d", code)
	}
	out := map[string]proxy.Node{}
	for _, n := range body.Nodes {
		out[n.ID] = n
	}
	return out
}

// waitNode waits until GET /nodes shows the node in state.
func waitNode(t *testing.T, s *server, id string, state proxy.NodeState) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		n := nodeStates(t, s)[id]
		if n.State == state {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("node %s still %s (%s) after 30s, want %s", id, n.State, n.Error, state)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
