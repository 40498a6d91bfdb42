//go:build linux

package main

// Who sees which session, end to end: two real bridges and one client of
// /mcp on one real proxy-server, each trying every tool, resource and
// endpoint with the others' session ids and refs; and what a bridge takes
// with it when its client leaves.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"golang.org/x/sys/unix"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/e2etest"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/mcpserver"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/proctest"
)

// mcpClient is one MCP client of the proxy: a bridge over stdio (cmd set)
// or a client of /mcp.
type mcpClient struct {
	name string
	c    *client.Client
	cmd  *exec.Cmd // the bridge process; nil for /mcp
	logs *logWatch
	exit chan struct{}
}

// ownershipToolsets are the tool groups the clients of these tests choose:
// the defaults and the state tools, whose save_state refs restore_state
// takes from any session of the client.
const ownershipToolsets = "upstream,session,content,state"

// startClientBridge starts mcp-bridge on the server at port and
// initializes it, keeping its process at hand for signals.
func startClientBridge(t *testing.T, name, port string) *mcpClient {
	t.Helper()
	return startBridgeWith(t, name, port, "--toolsets="+ownershipToolsets)
}

// startBridgeWith is startClientBridge with the bridge's own arguments.
func startBridgeWith(t *testing.T, name, port string, args ...string) *mcpClient {
	t.Helper()
	return startBridgeEnv(t, name, port, nil, args...)
}

// startBridgeEnv is startBridgeWith with more MCP_PROXY_* variables.
func startBridgeEnv(t *testing.T, name, port string, env []string, args ...string) *mcpClient {
	t.Helper()
	_, bridgeBin := binaries(t)
	m := &mcpClient{name: name, logs: &logWatch{}, exit: make(chan struct{})}
	started := make(chan struct{})
	env = append([]string{"MCP_PROXY_URL=http://127.0.0.1:" + port, "MCP_PROXY_AUTOSTART=0", "MCP_PROXY_LOG_LEVEL=debug"}, env...)
	tr := transport.NewStdioWithOptions(bridgeBin, env, args,
		transport.WithCommandFunc(func(ctx context.Context, command string, env, args []string) (*exec.Cmd, error) {
			m.cmd = exec.CommandContext(ctx, command, args...)
			m.cmd.Env = append(os.Environ(), env...)
			// Kept by os/exec until the process exits, so its last lines
			// are read too (the transport closes a stderr pipe of its own
			// as it closes stdin).
			m.cmd.Stderr = m.logs
			close(started)
			return m.cmd, nil
		}))
	m.c = client.NewClient(tr, client.WithProtocolVersion(mcp.ProtocolVersion20251125))
	if err := m.c.Start(context.Background()); err != nil {
		t.Fatalf("starting mcp-bridge: %v", err)
	}
	<-started
	go func() {
		// The transport reaps the process in Close; this only learns that
		// it exited (WNOWAIT leaves it to be reaped).
		var info unix.Siginfo
		_ = unix.Waitid(unix.P_PID, m.cmd.Process.Pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		close(m.exit)
	}()
	t.Cleanup(func() {
		_ = m.c.Close()
		if t.Failed() {
			t.Logf("%s log:\n%s", name, m.logs)
		}
	})
	m.initialize(t)
	return m
}

// startHTTPClient connects an MCP client to the server's /mcp endpoint.
func startHTTPClient(t *testing.T, name, port string) *mcpClient {
	t.Helper()
	return startHTTPClientAt(t, name, "http://127.0.0.1:"+port+"/mcp?toolsets="+ownershipToolsets)
}

// startHTTPClientAt connects an MCP client to the MCP endpoint at url.
func startHTTPClientAt(t *testing.T, name, url string, opts ...transport.StreamableHTTPCOption) *mcpClient {
	t.Helper()
	c, err := client.NewStreamableHttpClient(url, opts...)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	m := &mcpClient{name: name, c: c, logs: &logWatch{}}
	t.Cleanup(func() { _ = c.Close() })
	m.initialize(t)
	return m
}

func (m *mcpClient) initialize(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.ProtocolVersion20251125
	init.Params.ClientInfo = mcp.Implementation{Name: m.name, Version: "1"}
	if _, err := m.c.Initialize(ctx, init); err != nil {
		t.Fatalf("%s: initialize: %v\nlog:\n%s", m.name, err, m.logs)
	}
}

// call runs a tool and returns its text, whether it is a tool error, and
// a transport error.
func (m *mcpClient) call(name string, args map[string]any) (string, bool, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	req := mcp.CallToolRequest{}
	req.Params.Name = name
	req.Params.Arguments = args
	res, err := m.c.CallTool(ctx, req)
	if err != nil {
		return "", false, err
	}
	var text strings.Builder
	for _, part := range res.Content {
		if tc, ok := part.(mcp.TextContent); ok {
			text.WriteString(tc.Text)
		}
	}
	return text.String(), res.IsError, nil
}

// browser runs a browser tool that must succeed and reads its answer.
func (m *mcpClient) browser(t *testing.T, name string, args map[string]any) mcpserver.Parsed {
	t.Helper()
	text, isErr, err := m.call(name, args)
	if err != nil || isErr {
		t.Fatalf("%s: %s %v = %s (%v)\nlog:\n%s", m.name, name, args, text, err, m.logs)
	}
	res, err := mcpserver.ParseAnswer(text)
	if err != nil {
		t.Fatalf("%s: %s: %v", m.name, name, err)
	}
	return res
}

// defaultSession is the session list_sessions marks as this client's
// default: the one its calls without a session_id go to.
func (m *mcpClient) defaultSession(t *testing.T) string {
	t.Helper()
	text, _, err := m.call("list_sessions", nil)
	if err != nil {
		t.Fatalf("%s: list_sessions: %v", m.name, err)
	}
	id, err := e2etest.DefaultSession(text)
	if err != nil {
		t.Fatalf("%s: %v", m.name, err)
	}
	return id
}

// mustCall runs a tool that must succeed and decodes its JSON answer.
// listedSessions is the ids list_sessions gives m.
func (m *mcpClient) listedSessions(t *testing.T) []string {
	t.Helper()
	var listed struct {
		Sessions []struct {
			ID string `json:"session_id"`
		} `json:"sessions"`
	}
	m.mustCall(t, "list_sessions", nil, &listed)
	var ids []string
	for _, s := range listed.Sessions {
		ids = append(ids, s.ID)
	}
	return ids
}

func (m *mcpClient) mustCall(t *testing.T, name string, args map[string]any, out any) {
	t.Helper()
	text, isErr, err := m.call(name, args)
	if err != nil || isErr {
		t.Fatalf("%s: %s %v = %s (%v)\nlog:\n%s", m.name, name, args, text, err, m.logs)
	}
	if out != nil {
		if err := json.Unmarshal([]byte(text), out); err != nil {
			t.Fatalf("%s: %s answered %q: %v", m.name, name, text, err)
		}
	}
}

// answer is what a tool call or resource read returned, as one text.
func (m *mcpClient) answer(name string, args map[string]any) string {
	text, isErr, err := m.call(name, args)
	if err != nil {
		return "transport error: " + err.Error()
	}
	return fmt.Sprintf("isError=%v %s", isErr, text)
}

func (m *mcpClient) read(uri string) string {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	req := mcp.ReadResourceRequest{}
	req.Params.URI = uri
	res, err := m.c.ReadResource(ctx, req)
	if err != nil {
		return "error: " + err.Error()
	}
	b, _ := json.Marshal(res.Contents)
	return "contents: " + string(b)
}

// ownershipServer starts a proxy-server for these tests and returns the
// test's pages, the server's port and its API's base URL.
func ownershipServer(t *testing.T) (pages, port, api string) {
	t.Helper()
	requireBrowser(t)
	pages, port = site(t), e2etest.FreePort(t)
	startServer(t, port, filepath.Join(t.TempDir(), "proxy.db"))
	return pages, port, "http://127.0.0.1:" + port
}

// holdings are one client's session ids and refs.
type holdings struct {
	sessions, refs []string
}

// TestSessionsBelongToTheirClient: two bridges and one /mcp client each get
// sessions and refs; every one of them, naming another's session or ref in
// any tool, resource or endpoint, gets exactly what an id that does not
// exist gets, and the HTTP API used directly (the operator) sees them all.
func TestSessionsBelongToTheirClient(t *testing.T) {
	pages, port, api := ownershipServer(t)

	clients := []*mcpClient{startClientBridge(t, "bridge-a", port), startClientBridge(t, "bridge-b", port), startHTTPClient(t, "mcp-c", port)}
	held := map[*mcpClient]*holdings{}
	for i, c := range clients {
		h := &holdings{}
		held[c] = h
		// A first call that is refused costs no session.
		if text, isErr, err := c.call("browser_navigate", map[string]any{"url": 5}); err != nil || !isErr || answerCode(text) != proxy.EINVALID {
			t.Errorf("%s: a first browser_navigate with a number for url = %s, %v; want INVALID_PARAMETERS", c.name, text, err)
		}
		if got := listIDs(t, api, nil); len(got) != 2*i {
			t.Errorf("%s: after a refused first call the server has sessions %v, want the %d of the clients before", c.name, got, 2*i)
		}
		// A default session with a page and a cookie of its own, and a
		// second session made explicitly.
		nav := c.browser(t, "browser_navigate", map[string]any{"url": pages + "/"})
		ev := c.browser(t, "browser_evaluate", map[string]any{"function": "() => { document.cookie = 'owner=" + c.name + "'; return document.cookie }"})
		saved := c.browser(t, "save_state", map[string]any{})
		defaultID := c.defaultSession(t)
		var created struct {
			SessionID string `json:"session_id"`
		}
		c.mustCall(t, "create_new_session", nil, &created)
		h.sessions = []string{defaultID, created.SessionID}
		h.refs = []string{nav.RefID, ev.RefID, saved.RefID}
	}

	tools, err := clients[0].c.ListTools(context.Background(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	takes := func(prop string) []string {
		var names []string
		for _, tool := range tools.Tools {
			raw, _ := json.Marshal(tool.InputSchema)
			if tool.RawInputSchema != nil {
				raw = tool.RawInputSchema
			}
			var s struct {
				Properties map[string]json.RawMessage `json:"properties"`
			}
			if json.Unmarshal(raw, &s) == nil && s.Properties[prop] != nil {
				names = append(names, tool.Name)
			}
		}
		return names
	}
	bySession, byRef := takes("session_id"), takes("ref_id")
	if len(bySession) < 20 || !slices.Contains(bySession, "browser_evaluate") || !slices.Contains(byRef, "restore_state") || !slices.Contains(byRef, "get_content") {
		t.Fatalf("tools taking session_id %v, ref_id %v: the catalogue is not what this test expects", bySession, byRef)
	}
	// Arguments that get past the schema to the session, for the tools
	// most worth stealing with; every other tool gets only the id.
	valid := map[string]map[string]any{
		"browser_evaluate": {"function": "() => document.cookie"},
		"browser_navigate": {"url": pages + "/two"},
		"get_content":      {"search_for": "page"},
	}
	argsFor := func(tool, prop, id string) map[string]any {
		args := map[string]any{prop: id}
		for k, v := range valid[tool] {
			args[k] = v
		}
		return args
	}

	for _, viewer := range clients {
		for _, owner := range clients {
			if owner == viewer {
				continue
			}
			t.Run(viewer.name+" on "+owner.name, func(t *testing.T) {
				for _, id := range held[owner].sessions {
					unknown := uuid.NewString()
					for _, tool := range bySession {
						want := strings.ReplaceAll(viewer.answer(tool, argsFor(tool, "session_id", unknown)), unknown, id)
						if got := viewer.answer(tool, argsFor(tool, "session_id", id)); got != want {
							t.Errorf("%s with another client's session:\n got %s\nwant %s (as for an unknown id)", tool, got, want)
						}
					}
					want := strings.ReplaceAll(viewer.read("playwright:///session/"+unknown), unknown, id)
					if got := viewer.read("playwright:///session/" + id); got != want {
						t.Errorf("reading another client's session resource:\n got %s\nwant %s", got, want)
					}
				}
				for _, ref := range held[owner].refs {
					unknown := uuid.NewString()
					for _, tool := range byRef {
						want := strings.ReplaceAll(viewer.answer(tool, argsFor(tool, "ref_id", unknown)), unknown, ref)
						if got := viewer.answer(tool, argsFor(tool, "ref_id", ref)); got != want {
							t.Errorf("%s with another client's ref:\n got %s\nwant %s (as for an unknown ref)", tool, got, want)
						}
					}
					for _, kind := range []string{"ref", "screenshot", "console"} {
						want := strings.ReplaceAll(viewer.read("playwright:///"+kind+"/"+unknown), unknown, ref)
						if got := viewer.read("playwright:///" + kind + "/" + ref); got != want {
							t.Errorf("reading another client's %s resource:\n got %s\nwant %s", kind, got, want)
						}
					}
				}
			})
		}
		// The tools that would leak most answer SESSION_NOT_FOUND itself.
		other := held[clients[(slices.Index(clients, viewer)+1)%len(clients)]]
		for _, tool := range []string{"browser_evaluate", "browser_navigate", "close_session", "resume_session"} {
			text, _, _ := viewer.call(tool, argsFor(tool, "session_id", other.sessions[0]))
			if answerCode(text) != proxy.ESESSIONMISSING {
				t.Errorf("%s: %s on another client's session = %s, want SESSION_NOT_FOUND", viewer.name, tool, text)
			}
		}
		text, _, _ := viewer.call("restore_state", map[string]any{"ref_id": other.refs[2]})
		if answerCode(text) != proxy.EREFMISSING {
			t.Errorf("%s: restore_state from another client's save_state = %s, want REF_NOT_FOUND", viewer.name, text)
		}

		// Lists show the viewer's own sessions and nobody else's.
		if ids := viewer.listedSessions(t); !sameSet(ids, held[viewer].sessions) {
			t.Errorf("%s: list_sessions = %v, want its own %v", viewer.name, ids, held[viewer].sessions)
		}
		res, err := viewer.c.ListResources(context.Background(), mcp.ListResourcesRequest{})
		if err != nil {
			t.Fatal(err)
		}
		var uris []string
		for _, r := range res.Resources {
			// Each session's pages and screenshots are listed beside it.
			if id, ok := strings.CutPrefix(r.URI, "playwright:///session/"); ok {
				uris = append(uris, id)
			} else if !slices.ContainsFunc(held[viewer].sessions, func(own string) bool { return strings.Contains(r.URI, "/"+own+"/") }) {
				t.Errorf("%s: resources/list shows %s, of none of its sessions", viewer.name, r.URI)
			}
		}
		if !sameSet(uris, held[viewer].sessions) {
			t.Errorf("%s: resources/list = %v, want its own sessions %v", viewer.name, uris, held[viewer].sessions)
		}
		// Its own things are all there.
		viewer.mustCall(t, "get_content", map[string]any{"ref_id": held[viewer].refs[0], "search_for": "First"}, nil)
		viewer.browser(t, "browser_evaluate", map[string]any{"session_id": held[viewer].sessions[0], "function": "() => document.cookie"})
	}

	// The HTTP API: a client identity with no sessions sees none of
	// theirs, exactly as unknown ids; the operator sees them all.
	stranger := map[string]string{"X-Mcp-Client-Id": strings.Repeat("s", 40)}
	var all []string
	for _, c := range clients {
		all = append(all, held[c].sessions...)
	}
	if got := listIDs(t, api, nil); !sameSet(got, all) {
		t.Errorf("the operator's GET /sessions = %v, want every client's %v", got, all)
	}
	if got := listIDs(t, api, stranger); len(got) != 0 {
		t.Errorf("a stranger's GET /sessions = %v, want none", got)
	}
	someSession, someRef := held[clients[0]].sessions[0], held[clients[0]].refs[0]
	endpoints := []struct{ method, path, body string }{
		{"GET", "/sessions/%s", ""},
		{"POST", "/sessions/%s/resume", ""},
		{"POST", "/call", `{"session_id":"%s","tool":"browser_evaluate","params":{"function":"() => document.cookie"}}`},
		{"DELETE", "/sessions/%s", ""},
	}
	for _, ep := range endpoints {
		unknown := uuid.NewString()
		want := strings.ReplaceAll(do(t, api, ep.method, ep.path, ep.body, unknown, stranger), unknown, someSession)
		if got := do(t, api, ep.method, ep.path, ep.body, someSession, stranger); got != want || !strings.HasPrefix(got, "404") {
			t.Errorf("%s %s as a stranger:\n got %s\nwant %s (404, as for an unknown id)", ep.method, ep.path, got, want)
		}
	}
	for _, path := range []string{"/content/%s?search_for=First", "/console/%s", "/content/%s?image=0", "/content/%s?peek=true"} {
		unknown := uuid.NewString()
		want := strings.ReplaceAll(do(t, api, "GET", path, "", unknown, stranger), unknown, someRef)
		if got := do(t, api, "GET", path, "", someRef, stranger); got != want || !strings.HasPrefix(got, "404") {
			t.Errorf("GET %s as a stranger:\n got %s\nwant %s (404, as for an unknown ref)", path, got, want)
		}
	}
	if got := do(t, api, "GET", "/content/%s?search_for=First", "", someRef, nil); !strings.HasPrefix(got, "200") {
		t.Errorf("the operator's GET /content of a bridge's ref = %s", got)
	}
	bad := map[string]string{"X-Mcp-Client-Id": "short"}
	if got := do(t, api, "GET", "/sessions/%s", "", someSession, bad); !strings.HasPrefix(got, "400") || !strings.Contains(got, "INVALID_PARAMETERS") {
		t.Errorf("a malformed client identity = %s, want 400 INVALID_PARAMETERS", got)
	}
	// Nothing the others tried changed anyone's session.
	for _, c := range clients {
		for _, id := range held[c].sessions {
			if got := do(t, api, "GET", "/sessions/%s", "", id, nil); !strings.Contains(got, `"state":"active"`) {
				t.Errorf("%s's session %s after the others' attempts: %s", c.name, id, got)
			}
		}
	}
}

// TestBridgeClosesItsSessionsWhenItsClientLeaves: stdin closed, SIGTERM and
// SIGINT each make the bridge close every session it made (workers gone,
// history kept); a SIGKILLed bridge leaves its session to the idle timeout.
func TestBridgeClosesItsSessionsWhenItsClientLeaves(t *testing.T) {
	pages, port, api := ownershipServer(t)

	leaves := []struct {
		name   string
		leave  func(m *mcpClient)
		closed bool
	}{
		{"stdin closed", func(m *mcpClient) { go m.c.Close() }, true}, // stdin first, SIGTERM 2 s later
		{"SIGTERM", func(m *mcpClient) { _ = m.cmd.Process.Signal(syscall.SIGTERM) }, true},
		{"SIGINT", func(m *mcpClient) { _ = m.cmd.Process.Signal(syscall.SIGINT) }, true},
		{"SIGKILL", func(m *mcpClient) { _ = m.cmd.Process.Kill() }, false},
	}
	for _, tc := range leaves {
		t.Run(tc.name, func(t *testing.T) {
			m := startClientBridge(t, "bridge", port)
			nav := m.browser(t, "browser_navigate", map[string]any{"url": pages + "/"})
			defaultID := m.defaultSession(t)
			var created struct {
				SessionID string `json:"session_id"`
			}
			m.mustCall(t, "create_new_session", nil, &created)
			ids := []string{defaultID, created.SessionID}
			var pids []int
			for _, id := range ids {
				var s proxy.Session
				if err := json.Unmarshal([]byte(strings.SplitN(do(t, api, "GET", "/sessions/%s", "", id, nil), " ", 2)[1]), &s); err != nil || s.WorkerPID == 0 {
					t.Fatalf("session %s: %+v, %v", id, s, err)
				}
				pids = append(pids, s.WorkerPID)
			}

			tc.leave(m)
			select {
			case <-m.exit:
			case <-time.After(30 * time.Second):
				t.Fatalf("the bridge did not exit within 30s of its client leaving (%s)", tc.name)
			}
			_ = m.c.Close() // reaps it; its stderr is all read
			said := `sessions are closed" reason=signal closed=2`
			if tc.name == "stdin closed" {
				said = `sessions are closed" reason="stdin closed" closed=2`
			}
			if tc.closed && !strings.Contains(m.logs.String(), said) {
				t.Errorf("the bridge did not say it closed its 2 sessions on leaving by %s", tc.name)
			}
			want := `"state":"active"`
			if tc.closed {
				want = `"state":"closed"`
			}
			// Both sessions in one session host (PROXY_SESSIONS_PER_WORKER
			// above 1): the host outlives them, and closed sessions let go of it.
			hosted := pids[0] == pids[1]
			for i, id := range ids {
				got := do(t, api, "GET", "/sessions/%s", "", id, nil)
				if !strings.Contains(got, want) {
					t.Errorf("session %s after the bridge left by %s: %s, want %s", id, tc.name, got, want)
				}
				if hosted && tc.closed {
					if strings.Contains(got, `"worker_pid"`) {
						t.Errorf("closed session %s still names a worker: %s", id, got)
					}
					continue
				}
				_, alive := proctest.Stat(pids[i])
				if alive == tc.closed {
					t.Errorf("worker %d of session %s alive=%v after the bridge left by %s", pids[i], id, alive, tc.name)
				}
			}
			// History stays readable.
			if got := do(t, api, "GET", "/content/%s?search_for=First", "", nav.RefID, nil); !strings.HasPrefix(got, "200") || !strings.Contains(got, "First page") {
				t.Errorf("the left bridge's history: %s", got)
			}
			if !tc.closed {
				for _, id := range ids {
					do(t, api, "DELETE", "/sessions/%s", "", id, nil)
				}
			}
		})
	}
}

// do sends one API request with id put into path and body, and returns
// "STATUS BODY".
func do(t *testing.T, base, method, path, body, id string, hdr map[string]string) string {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(fmt.Sprintf(body, id))
	}
	if strings.Contains(path, "%s") {
		path = fmt.Sprintf(path, id)
	}
	req, err := http.NewRequest(method, base+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "application/json")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return fmt.Sprintf("%d %s", resp.StatusCode, strings.TrimSpace(string(b)))
}

func listIDs(t *testing.T, base string, hdr map[string]string) []string {
	t.Helper()
	got := do(t, base, "GET", "/sessions%s", "", "", hdr)
	var out struct {
		Sessions []proxy.Session `json:"sessions"`
	}
	if err := json.Unmarshal([]byte(strings.SplitN(got, " ", 2)[1]), &out); err != nil {
		t.Fatalf("GET /sessions = %s: %v", got, err)
	}
	var ids []string
	for _, s := range out.Sessions {
		ids = append(ids, s.ID)
	}
	return ids
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// answerCode is the error code of a tool's answer ("" for none).
func answerCode(text string) string {
	p, _ := mcpserver.ParseAnswer(text)
	return p.ErrorCode
}
