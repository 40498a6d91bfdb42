//go:build unix

package main

// End-to-end tests: the same Main the binary runs (temp database, port 0),
// real @playwright/mcp workers and real headless Chromium, on pages this test
// serves on 127.0.0.1. They are skipped under -short, and skipped with a
// clear message only when Chromium or node_modules is truly absent.

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/e2etest"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/mcpserver"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/proctest"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/proxyserver"
)

// bins are proxy-server and mcp-bridge, built once for the tests that need
// real processes (stdio bridges, signals).
var bins e2etest.Binaries

func TestMain(m *testing.M) { e2etest.Main(m, bins.Remove) }

func projectRoot(t testing.TB) string { return e2etest.ProjectRoot(t) }

// requireBrowser skips only when the real parts are truly absent.
func requireBrowser(t *testing.T) { e2etest.RequireBrowser(t) }

// binaries builds both commands once per test run.
func binaries(t *testing.T) (proxyServer, bridge string) { return bins.Build(t) }

func site(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.FileServer(http.Dir("testdata/site")))
	t.Cleanup(srv.Close)
	return srv.URL
}

// server is one in-process proxy-server run.
type server struct {
	URL    string
	DBPath string
	stop   func()
	// readLog returns what the server logged so far (at debug).
	readLog func() string
}

// startServer runs `proxy-server serve` in-process on a free port with the
// database at dbPath ("" = a new temp file). env holds PROXY_* overrides.
func startServer(t *testing.T, dbPath string, env map[string]string) *server {
	t.Helper()
	requireBrowser(t)
	if dbPath == "" {
		dbPath = filepath.Join(t.TempDir(), "proxy.db")
	}
	t.Setenv("PROXY_WARM_POOL", "0")
	for k, v := range env {
		t.Setenv(k, v)
	}
	addr := make(chan string, 1)
	var stderr bytes.Buffer
	logw := &lockedWriter{w: &stderr}
	m := &Main{Stdout: io.Discard, Stderr: logw, OnListen: func(a string) { addr <- a }}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	var runErr error
	go func() {
		defer close(done)
		runErr = m.Run(ctx, []string{"serve", "-port", "0", "-db", dbPath, "-log-level", "debug"})
	}()
	s := &server{DBPath: dbPath, readLog: func() string {
		logw.mu.Lock()
		defer logw.mu.Unlock()
		return stderr.String()
	}}
	var once sync.Once
	s.stop = func() {
		once.Do(func() {
			cancel()
			select {
			case <-done:
				if runErr != nil {
					t.Errorf("serve returned %v", runErr)
				}
			case <-time.After(20 * time.Second):
				t.Errorf("serve did not return within 20s of cancel")
			}
			if t.Failed() {
				t.Logf("server log:\n%s", stderr.String())
			}
		})
	}
	t.Cleanup(s.stop)
	select {
	case a := <-addr:
		s.URL = "http://" + a
	case <-done:
		t.Fatalf("serve exited early: %v\n%s", runErr, stderr.String())
	case <-time.After(60 * time.Second):
		t.Fatalf("serve did not listen within 60s\n%s", stderr.String())
	}
	return s
}

type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// do sends a request and decodes a JSON answer into out (when non-nil).
func do(t *testing.T, method, url string, body any, out any) int {
	t.Helper()
	var r io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		r = strings.NewReader(b)
	case []byte:
		r = bytes.NewReader(b)
	default:
		data, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		r = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, url, r)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if out != nil {
		if sp, ok := out.(*string); ok {
			*sp = string(data)
		} else if err := json.Unmarshal(data, out); err != nil {
			t.Fatalf("%s %s: decoding %q: %v", method, url, data, err)
		}
	}
	return resp.StatusCode
}

func (s *server) createSession(t *testing.T) string {
	t.Helper()
	var sess proxy.Session
	if code := do(t, "POST", s.URL+"/sessions", nil, &sess); code != http.StatusCreated {
		t.Fatalf("POST /sessions = %d", code)
	}
	if sess.ID == "" || sess.State != proxy.SessionActive {
		t.Fatalf("POST /sessions = %+v", sess)
	}
	return sess.ID
}

func (s *server) call(t *testing.T, session, tool string, params any) proxy.CallResult {
	t.Helper()
	var res proxy.CallResult
	var raw string
	code := do(t, "POST", s.URL+"/call", map[string]any{"session_id": session, "tool": tool, "params": params}, &raw)
	if code != http.StatusOK {
		t.Fatalf("call %s = %d: %s", tool, code, raw)
	}
	if err := json.Unmarshal([]byte(raw), &res); err != nil {
		t.Fatal(err)
	}
	return res
}

func (s *server) content(t *testing.T, ref, query string) string {
	t.Helper()
	var text string
	if code := do(t, "GET", s.URL+"/content/"+ref+query, nil, &text); code != http.StatusOK {
		t.Fatalf("GET /content/%s%s = %d: %s", ref, query, code, text)
	}
	return text
}

func TestHTTPSessionsAreIsolated(t *testing.T) {
	s := startServer(t, "", nil)
	pages := site(t)
	a, b := s.createSession(t), s.createSession(t)

	if got := s.call(t, a, "browser_navigate", map[string]string{"url": pages + "/set.html?v=alpha"}); got.Metadata.PageTitle != "set alpha" {
		t.Fatalf("set in A: %+v", got)
	}
	if got := s.call(t, b, "browser_navigate", map[string]string{"url": pages + "/set.html?v=beta"}); got.Metadata.PageTitle != "set beta" {
		t.Fatalf("set in B: %+v", got)
	}
	for _, tc := range []struct{ session, want string }{
		{a, "ls=alpha;ck=who=alpha"},
		{b, "ls=beta;ck=who=beta"},
	} {
		got := s.call(t, tc.session, "browser_navigate", map[string]string{"url": pages + "/read.html"})
		if got.Metadata.PageTitle != tc.want {
			t.Errorf("session %s reads %q, want %q (state leaked between sessions)", tc.session, got.Metadata.PageTitle, tc.want)
		}
	}
	// A third, fresh session sees neither.
	c := s.createSession(t)
	if got := s.call(t, c, "browser_navigate", map[string]string{"url": pages + "/read.html"}); got.Metadata.PageTitle != "ls=null;ck=" {
		t.Errorf("fresh session reads %q, want nothing", got.Metadata.PageTitle)
	}
}

func TestNavigationReturnsRefAndContentHasCursor(t *testing.T) {
	s := startServer(t, "", nil)
	pages := site(t)
	id := s.createSession(t)

	var raw string
	code := do(t, "POST", s.URL+"/call", map[string]any{"session_id": id, "tool": "browser_navigate", "params": map[string]string{"url": pages + "/index.html"}}, &raw)
	if code != http.StatusOK {
		t.Fatalf("navigate = %d %s", code, raw)
	}
	if strings.Contains(raw, "[ref=") || strings.Contains(raw, "Search now") {
		t.Errorf("navigate answer carries page content; want only ref_id metadata: %s", raw)
	}
	var res proxy.CallResult
	if err := json.Unmarshal([]byte(raw), &res); err != nil {
		t.Fatal(err)
	}
	// http.FileServer answers /index.html with a redirect to /.
	wantMD := proxy.CallMetadata{Tool: "browser_navigate", PageURL: pages + "/", PageTitle: "Test Home", HasSnapshot: true, SnapshotBytes: res.Metadata.SnapshotBytes}
	if diff := cmp.Diff(wantMD, res.Metadata); diff != "" {
		t.Errorf("metadata (-want +got):\n%s", diff)
	}
	if res.Status != proxy.StatusSuccess || res.SessionID != id || res.RefID == "" || res.Metadata.SnapshotBytes < 100 {
		t.Errorf("call result = %+v", res)
	}

	full := s.content(t, res.RefID, "")
	if !strings.Contains(full, `button "Search now" [ref=`) || len(full) != res.Metadata.SnapshotBytes {
		t.Fatalf("first get_content = %d bytes, want the %d-byte snapshot with refs:\n%s", len(full), res.Metadata.SnapshotBytes, full)
	}
	if got := s.content(t, res.RefID, ""); got != "" {
		t.Errorf("second read = %q, want empty (unchanged)", got)
	}
	if got := s.content(t, res.RefID, "?reset_cursor=true"); got != full {
		t.Errorf("reset read differs from the first read")
	}
	// A search shows the button in its form, with the field beside it, and
	// nothing of the rest of the page.
	hits := s.content(t, res.RefID, "?search_for=SEARCH+NOW&reset_cursor=true")
	lines := strings.Split(strings.TrimRight(hits, "\n"), "\n")
	if len(lines) < 2 || !strings.Contains(lines[len(lines)-1], `button "Search now"`) || !strings.Contains(hits, `textbox "Search query" [ref=`) ||
		strings.Contains(hits, "Catalogue") || strings.Contains(hits, "Proxy test page") {
		t.Errorf("search_for=SEARCH NOW gave:\n%s\nwant the button in its form after its ancestors and nothing unrelated", hits)
	}
	if !strings.HasSuffix(lines[0], ":") {
		t.Errorf("the first line %q of the search does not open a block: not an ancestor", lines[0])
	}

	// The cursor survives a restart: same database, new server.
	s.stop()
	s2 := startServer(t, s.DBPath, nil)
	if got := s2.content(t, res.RefID, ""); got != "" {
		// The last read was the search view; the full view differs from it.
		if got != full {
			t.Errorf("after restart, read = %q", got)
		}
	}
	if got := s2.content(t, res.RefID, ""); got != "" {
		t.Errorf("after restart, an unchanged read = %q, want empty", got)
	}
	if got := s2.content(t, res.RefID, "?reset_cursor=true"); got != full {
		t.Errorf("after restart, reset read differs from the original snapshot")
	}
}

func TestConsoleLevels(t *testing.T) {
	s := startServer(t, "", nil)
	pages := site(t)
	id := s.createSession(t)
	res := s.call(t, id, "browser_navigate", map[string]string{"url": pages + "/console.html"})
	if !res.Metadata.HasConsoleLogs || res.Metadata.ConsoleErrorCount != 1 {
		t.Errorf("metadata = %+v, want console logs with 1 error", res.Metadata)
	}
	var all, errs string
	if code := do(t, "GET", s.URL+"/console/"+res.RefID, nil, &all); code != http.StatusOK {
		t.Fatalf("console = %d %s", code, all)
	}
	for _, want := range []string{"plain log line", "careful warning line", "broken error line"} {
		if !strings.Contains(all, want) {
			t.Errorf("console without level lacks %q:\n%s", want, all)
		}
	}
	if code := do(t, "GET", s.URL+"/console/"+res.RefID+"?level=error", nil, &errs); code != http.StatusOK {
		t.Fatalf("console?level=error = %d %s", code, errs)
	}
	if strings.TrimSpace(errs) == "" || strings.Contains(errs, "warning line") || strings.Contains(errs, "plain log") || !strings.Contains(errs, "broken error line") {
		t.Errorf("level=error gave:\n%s\nwant only the error", errs)
	}
	var warn string
	do(t, "GET", s.URL+"/console/"+res.RefID+"?level=warn", nil, &warn)
	if !strings.Contains(warn, "careful warning line") || !strings.Contains(warn, "broken error line") || strings.Contains(warn, "plain log") {
		t.Errorf("level=warn gave:\n%s", warn)
	}
	var bad proxyErr
	if code := do(t, "GET", s.URL+"/console/"+res.RefID+"?level=loud", nil, &bad); code != 400 || bad.Error != proxy.EINVALID {
		t.Errorf("level=loud = %d %+v, want 400 INVALID_PARAMETERS", code, bad)
	}
}

type proxyErr struct {
	Error      string         `json:"error"`
	Message    string         `json:"message"`
	Details    map[string]any `json:"details"`
	Retryable  bool           `json:"retryable"`
	Suggestion string         `json:"suggestion"`
}

func TestErrors(t *testing.T) {
	s := startServer(t, "", nil)
	pages := site(t)
	id := s.createSession(t)
	s.call(t, id, "browser_navigate", map[string]string{"url": pages + "/index.html"})

	// A tool that fails in the browser is a recorded 200 with status error.
	res := s.call(t, id, "browser_click", map[string]string{"target": "e9999", "element": "nothing"})
	if res.Status != proxy.StatusError || !strings.Contains(res.Error, "e9999") {
		t.Errorf("bad ref click = %+v, want status error naming the ref", res)
	}
	if got := s.content(t, res.RefID, ""); !strings.Contains(got, "e9999") {
		t.Errorf("stored failing call reads %q", got)
	}

	closed := s.createSession(t)
	if code := do(t, "DELETE", s.URL+"/sessions/"+closed, nil, nil); code != http.StatusOK {
		t.Fatalf("DELETE = %d", code)
	}
	huge := `{"session_id":"` + id + `","tool":"browser_evaluate","params":{"function":"` + strings.Repeat("x", 20<<20) + `"}}`
	tests := []struct {
		name, method, path string
		body               any
		code               int
		errCode            string
	}{
		{"malformed json", "POST", "/call", `{"session_id": "` + id + `", "tool": `, 400, proxy.EINVALID},
		{"wrong type", "POST", "/call", `{"session_id": 42, "tool": "browser_snapshot"}`, 400, proxy.EINVALID},
		{"unknown field", "POST", "/call", `{"session_id": "` + id + `", "tool": "browser_snapshot", "bogus": 1}`, 400, proxy.EINVALID},
		{"params not object", "POST", "/call", `{"session_id": "` + id + `", "tool": "browser_snapshot", "params": [1]}`, 400, proxy.EINVALID},
		{"missing session", "POST", "/call", `{"tool": "browser_snapshot"}`, 400, proxy.EINVALID},
		{"unknown session", "POST", "/call", map[string]any{"session_id": "6f1c1d2e-0000-4000-8000-000000000000", "tool": "browser_snapshot"}, 404, proxy.ESESSIONMISSING},
		{"garbage session", "POST", "/call", map[string]any{"session_id": "../../etc", "tool": "browser_snapshot"}, 404, proxy.ESESSIONMISSING},
		{"unknown tool", "POST", "/call", map[string]any{"session_id": id, "tool": "browser_teleport"}, 404, proxy.ETOOLMISSING},
		{"param of the wrong type", "POST", "/call", map[string]any{"session_id": id, "tool": "browser_navigate", "params": map[string]any{"url": 42}}, 400, proxy.EINVALID},
		{"required param missing", "POST", "/call", map[string]any{"session_id": id, "tool": "browser_navigate", "params": map[string]any{}}, 400, proxy.EINVALID},
		{"closed session", "POST", "/call", map[string]any{"session_id": closed, "tool": "browser_snapshot"}, 410, proxy.ESESSIONCLOSED},
		{"unknown ref", "GET", "/content/6f1c1d2e-0000-4000-8000-000000000000", nil, 404, proxy.EREFMISSING},
		{"unknown ref console", "GET", "/console/nope", nil, 404, proxy.EREFMISSING},
		{"unknown session get", "GET", "/sessions/6f1c1d2e-0000-4000-8000-000000000000", nil, 404, proxy.ESESSIONMISSING},
		{"bad reset_cursor", "GET", "/content/" + res.RefID + "?reset_cursor=maybe", nil, 400, proxy.EINVALID},
		{"20 MB body", "POST", "/call", huge, 400, proxy.EINVALID},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got proxyErr
			code := do(t, tc.method, s.URL+tc.path, tc.body, &got)
			if code != tc.code || got.Error != tc.errCode || got.Message == "" {
				t.Errorf("%s %s = %d %+v, want %d %s with a message", tc.method, tc.path, code, got, tc.code, tc.errCode)
			}
		})
	}
	// Nothing stored was lost and the server still serves.
	if got := s.content(t, res.RefID, "?reset_cursor=true"); !strings.Contains(got, "e9999") {
		t.Errorf("after bad input, stored call reads %q", got)
	}
	if code := do(t, "GET", s.URL+"/health", nil, nil); code != http.StatusOK {
		t.Errorf("health after bad input = %d", code)
	}
	if got := s.call(t, id, "browser_snapshot", nil); got.Status != proxy.StatusSuccess {
		t.Errorf("session unusable after bad input: %+v", got)
	}
}

func TestCloseStopsWorkerKeepsHistory(t *testing.T) {
	// A worker process per session, whose group the close must end.
	s := startServer(t, "", map[string]string{"PROXY_SESSIONS_PER_WORKER": "1"})
	pages := site(t)
	id := s.createSession(t)
	res := s.call(t, id, "browser_navigate", map[string]string{"url": pages + "/index.html"})
	// Screenshots are stored as blobs and served back, never inlined.
	shot := s.call(t, id, "browser_take_screenshot", map[string]any{})
	if !shot.Metadata.HasImage || shot.Status != proxy.StatusSuccess {
		t.Errorf("screenshot metadata = %+v", shot)
	}
	var png string
	if code := do(t, "GET", s.URL+"/content/"+shot.RefID+"?image=0", nil, &png); code != http.StatusOK || !strings.HasPrefix(png, "\x89PNG") {
		t.Errorf("screenshot image = %d, %d bytes starting %q", code, len(png), png[:min(8, len(png))])
	}

	var sess proxy.Session
	do(t, "GET", s.URL+"/sessions/"+id, nil, &sess)
	pid := sess.WorkerPID
	if pid == 0 || !proctest.Alive(pid) {
		t.Fatalf("session %+v has no live worker", sess)
	}
	if code := do(t, "DELETE", s.URL+"/sessions/"+id, nil, &sess); code != http.StatusOK || sess.State != proxy.SessionClosed {
		t.Fatalf("DELETE = %d %+v", code, sess)
	}
	var closed proxy.Session
	do(t, "GET", s.URL+"/sessions/"+id, nil, &closed)
	if closed.State != proxy.SessionClosed || closed.WorkerPID != 0 {
		t.Errorf("after close: %+v", closed)
	}
	// The worker process is gone, and so is its whole process group.
	if left := proctest.WaitGone(5*time.Second, func() []proctest.Proc { return proctest.Group(pid) }); len(left) > 0 {
		t.Errorf("worker group still running after close: %v", left)
	}
	if got := s.content(t, res.RefID, ""); !strings.Contains(got, "[ref=") {
		t.Errorf("history of closed session unreadable: %q", got)
	}
}

// TestBridgesAreIsolated runs two real mcp-bridge processes over stdio, as
// two Claude Code conversations would, against one server.
func TestBridgesAreIsolated(t *testing.T) {
	s := startServer(t, "", nil)
	pages := site(t)
	_, bridgeBin := binaries(t)

	connect := func(name string) *client.Client {
		tr := transport.NewStdio(bridgeBin, []string{"MCP_PROXY_URL=" + s.URL})
		c := client.NewClient(tr, client.WithProtocolVersion(mcp.ProtocolVersion20251125))
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		if err := c.Start(context.Background()); err != nil {
			t.Fatalf("%s: start: %v", name, err)
		}
		t.Cleanup(func() { c.Close() })
		init := mcp.InitializeRequest{}
		init.Params.ProtocolVersion = mcp.ProtocolVersion20251125
		init.Params.ClientInfo = mcp.Implementation{Name: name, Version: "1"}
		if _, err := c.Initialize(ctx, init); err != nil {
			t.Fatalf("%s: initialize: %v", name, err)
		}
		return c
	}
	callText := func(c *client.Client, tool string, args map[string]any) (string, bool) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		req := mcp.CallToolRequest{}
		req.Params.Name = tool
		req.Params.Arguments = args
		res, err := c.CallTool(ctx, req)
		if err != nil {
			t.Fatalf("%s: %v", tool, err)
		}
		var sb strings.Builder
		for _, part := range res.Content {
			if tc, ok := part.(mcp.TextContent); ok {
				sb.WriteString(tc.Text)
			}
		}
		return sb.String(), res.IsError
	}
	title := func(c *client.Client, url string) mcpserver.Parsed {
		t.Helper()
		text, isErr := callText(c, "browser_navigate", map[string]any{"url": url})
		res, err := mcpserver.ParseAnswer(text)
		if err != nil || isErr {
			t.Fatalf("navigate answered %q (isError=%v): %v", text, isErr, err)
		}
		return res
	}
	type listing struct {
		Sessions []struct {
			ID      string `json:"session_id"`
			Default bool   `json:"default"`
		} `json:"sessions"`
	}
	// defaultSession is the session list_sessions marks as the client's
	// default: the answers of browser tools do not repeat it.
	defaultSession := func(c *client.Client) string {
		t.Helper()
		text, _ := callText(c, "list_sessions", nil)
		id, err := e2etest.DefaultSession(text)
		if err != nil {
			t.Fatal(err)
		}
		return id
	}

	one, two := connect("conversation-1"), connect("conversation-2")

	// The tool list is upstream's plus the proxy's, with session_id added.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tools, err := one.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]mcp.Tool{}
	for _, tl := range tools.Tools {
		names[tl.Name] = tl
	}
	for _, want := range []string{"browser_navigate", "browser_snapshot", "browser_click", "create_new_session", "close_session", "list_sessions", "get_content", "get_console_content"} {
		if _, ok := names[want]; !ok {
			t.Errorf("bridge does not expose %s", want)
		}
	}
	if _, ok := names["browser_navigate"].InputSchema.Properties["session_id"]; !ok {
		if !strings.Contains(string(names["browser_navigate"].RawInputSchema), "session_id") {
			t.Errorf("browser_navigate schema lacks session_id")
		}
	}

	r1 := title(one, pages+"/set.html?v=one")
	title(two, pages+"/set.html?v=two")
	if got := title(one, pages+"/read.html"); got.PageTitle != "ls=one;ck=who=one" {
		t.Errorf("bridge one reads %q", got.PageTitle)
	}
	r2 := title(two, pages+"/read.html")
	if r2.PageTitle != "ls=two;ck=who=two" {
		t.Errorf("bridge two reads %q", r2.PageTitle)
	}
	s1, s2 := defaultSession(one), defaultSession(two)
	if s1 == s2 {
		t.Errorf("both bridges used session %s", s1)
	}

	// get_content through the bridge: first full, then empty.
	text, isErr := callText(one, "get_content", map[string]any{"ref_id": r1.RefID})
	if isErr || !strings.Contains(text, "[ref=") && strings.HasPrefix(r1.Body, "snapshot") {
		t.Errorf("get_content = %q (isError=%v)", text, isErr)
	}
	if text, _ := callText(one, "get_content", map[string]any{"ref_id": r1.RefID}); text != "" {
		t.Errorf("second get_content = %q, want empty", text)
	}
	// Errors are MCP tool errors with the documented code.
	text, isErr = callText(one, "get_content", map[string]any{"ref_id": "6f1c1d2e-0000-4000-8000-000000000000"})
	if !isErr || !strings.Contains(text, proxy.EREFMISSING) {
		t.Errorf("unknown ref via bridge = %q (isError=%v)", text, isErr)
	}
	text, isErr = callText(one, "browser_snapshot", map[string]any{"session_id": "6f1c1d2e-0000-4000-8000-000000000000"})
	if !isErr || !strings.Contains(text, proxy.ESESSIONMISSING) {
		t.Errorf("unknown session via bridge = %q (isError=%v)", text, isErr)
	}
	// list_sessions shows this conversation's own session, marked default,
	// and not the other's.
	text, _ = callText(one, "list_sessions", nil)
	var listed listing
	if err := json.Unmarshal([]byte(text), &listed); err != nil {
		t.Fatalf("list_sessions = %q: %v", text, err)
	}
	defaults := map[string]bool{}
	for _, x := range listed.Sessions {
		defaults[x.ID] = x.Default
	}
	if len(defaults) != 1 || !defaults[s1] {
		t.Errorf("list_sessions from bridge one: want only its own session %s, marked default (not %s): %s", s1, s2, text)
	}
}

// TestSIGTERMWithCallInFlight: a call that does not end, on a worker that
// answers nothing (stopped), does not hold the shutdown past its budget:
// the call gets the budget less what stopping the worker needs, and the
// worker is then stopped (killed) within what is left.
func TestSIGTERMWithCallInFlight(t *testing.T) {
	pages := site(t)
	b := runBinary(t, filepath.Join(t.TempDir(), "p.db"), nil)
	id := b.createSession(t)
	b.call(t, id, "browser_navigate", map[string]string{"url": pages + "/index.html"})
	worker := b.getSession(t, id).WorkerPID
	descendants := proctest.Descendants(b.cmd.Process.Pid)
	go func() {
		// Answered (or cut) only at shutdown; its outcome is not the point.
		body := map[string]any{"session_id": id, "tool": "browser_evaluate", "params": map[string]string{"function": "() => new Promise(() => {})"}}
		raw, _ := json.Marshal(body)
		resp, err := http.Post(b.URL+"/call", "application/json", bytes.NewReader(raw))
		if err == nil {
			resp.Body.Close()
		}
	}()
	time.Sleep(500 * time.Millisecond) // the call is in the worker
	// A stopped worker ignores its stdin closing and SIGTERM alike.
	if err := syscall.Kill(-worker, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	defer syscall.Kill(-worker, syscall.SIGCONT)

	start := time.Now()
	if err := b.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	// The budget, and a margin for reaping and closing the database: a
	// bound on the contract, not a measure of speed.
	bound := proxyserver.ShutdownBudget + 2*time.Second
	select {
	case <-b.exited:
		t.Logf("SIGTERM → exit in %s", time.Since(start).Round(time.Millisecond))
	case <-time.After(bound):
		t.Errorf("proxy-server did not stop within %s of SIGTERM with a call in flight on a stopped worker\nlog:\n%s", bound, b.log())
		<-b.exited
	}
	left := proctest.WaitGone(3*time.Second, func() []proctest.Proc { return proctest.StillAlive(descendants) })
	if len(left) > 0 {
		t.Errorf("left behind after SIGTERM: %v", left)
		proctest.KillAll(left)
	}
}

// waitHealthy polls /health until it answers 200 or d passes, and returns
// the last status. Right after start-up the upstream check waits for the
// first worker (it needs the tool list); on a loaded machine that can take
// longer than the check's own budget, which makes /health 503 for a while.
func waitHealthy(t *testing.T, base string, d time.Duration) int {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		code := do(t, "GET", base+"/health", nil, nil)
		if code == http.StatusOK || time.Now().After(deadline) {
			return code
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// TestSIGTERMLeavesNothing runs the real binary, gives it a live session, and
// checks that SIGTERM stops it within 10 s with no node or Chromium left.
func TestSIGTERMLeavesNothing(t *testing.T) {
	pages := site(t)
	b := runBinary(t, filepath.Join(t.TempDir(), "p.db"), map[string]string{"PROXY_WARM_POOL": "1"})
	if code := waitHealthy(t, b.URL, 60*time.Second); code != http.StatusOK {
		t.Fatalf("/health = %d", code)
	}
	id := b.createSession(t)
	b.call(t, id, "browser_navigate", map[string]string{"url": pages + "/index.html"})
	descendants := proctest.Descendants(b.cmd.Process.Pid)
	if len(descendants) < 3 {
		t.Fatalf("expected a browser and workers under proxy-server, found %v", descendants)
	}

	start := time.Now()
	if err := b.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-b.exited:
		if err := b.proc.Err(); err != nil {
			t.Errorf("proxy-server exited with %v", err)
		}
		t.Logf("SIGTERM → exit in %s", time.Since(start).Round(time.Millisecond))
	case <-time.After(15 * time.Second):
		t.Fatal("proxy-server did not stop within 15s of SIGTERM")
	}
	left := proctest.WaitGone(3*time.Second, func() []proctest.Proc { return proctest.StillAlive(descendants) })
	if len(left) > 0 {
		t.Errorf("left behind after SIGTERM: %v\nlog:\n%s", left, b.log())
		proctest.KillAll(left)
	}
}
