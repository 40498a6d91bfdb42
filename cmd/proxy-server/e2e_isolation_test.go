//go:build unix

package main

// The adversarial isolation suite (docs/SECURITY.md cites its subtests).
// Client A, the victim, browses a page the test serves, sets a cookie and
// localStorage, downloads a file, saves its storage state to a file, takes
// a screenshot and opens a second tab. Client B, hostile, then tries every
// path to A that the tools it is offered give it (tools/list decides what
// it tries, not a list of names), over both MCP transports (real mcp-bridge
// processes over stdio, and /mcp), with the default tool groups and with
// all of them, on the local shared browser and on a browser node. Each
// attempt must be refused with its documented code or see nothing of A,
// and A's state and record must be intact afterwards, read through A's own
// tools.

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/e2etest"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/mcpserver"
)

// isoToken marks everything of one run, so that nothing another test left
// on the machine can pass for a leak, or hide one.
func isoToken() string { return strings.ToLower(rand.Text()[:12]) }

// isoSite is the test's web server: A's pages, B's hostile pages, and
// redirects to wherever B wants to send its browser.
func isoSite(t *testing.T) string {
	t.Helper()
	page := func(w http.ResponseWriter, title, body string) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, "<!doctype html><html><head><title>%s</title></head><body>%s</body></html>", title, body)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/victim", func(w http.ResponseWriter, r *http.Request) {
		tok := r.URL.Query().Get("tok")
		page(w, "Victim "+tok, `<h1>Account of A</h1><a id="dl" href="/download?tok=`+tok+`">statement</a>`)
	})
	mux.HandleFunc("/victim-tab", func(w http.ResponseWriter, r *http.Request) {
		page(w, "Victim tab "+r.URL.Query().Get("tok"), `<p>A's second tab</p>`)
	})
	mux.HandleFunc("/download", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Content-Disposition", `attachment; filename="statement.txt"`)
		fmt.Fprintf(w, "download of A %s", r.URL.Query().Get("tok"))
	})
	// B's page: file inputs, a drop zone that counts what it receives, and
	// a link anywhere.
	mux.HandleFunc("/hostile", func(w http.ResponseWriter, r *http.Request) {
		page(w, "Hostile", `<input type="file" id="f" multiple><input type="file" id="d" webkitdirectory>
<div id="drop" style="width:200px;height:100px">drop here</div>
<script>
window.dropped = 0;
const z = document.getElementById('drop');
z.addEventListener('dragover', e => e.preventDefault());
z.addEventListener('drop', e => { e.preventDefault(); window.dropped += e.dataTransfer.files.length; });
</script>`)
	})
	mux.HandleFunc("/redirect", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, r.URL.Query().Get("to"), http.StatusFound)
	})
	mux.HandleFunc("/jsredirect", func(w http.ResponseWriter, r *http.Request) {
		to, _ := json.Marshal(r.URL.Query().Get("to"))
		page(w, "Moving", `<script>location.href = `+string(to)+`;</script>`)
	})
	mux.HandleFunc("/link", func(w http.ResponseWriter, r *http.Request) {
		page(w, "Link", `<a id="go" href="`+r.URL.Query().Get("to")+`">go</a>`)
	})
	mux.HandleFunc("/pwned", func(w http.ResponseWriter, r *http.Request) { page(w, "Pwned", "<p>pwned</p>") })
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL
}

// isoClient is one MCP client: a real mcp-bridge over stdio, or a client
// of /mcp.
type isoClient struct {
	name  string
	c     *client.Client
	tr    transport.Interface
	tools map[string]isoTool
}

// isoTool is what a client learns of a tool from tools/list.
type isoTool struct {
	props    map[string]bool
	required []string
}

// isoAnswer is a tool call's answer, and the record of its call as
// get_content reads it back, when it has a ref.
type isoAnswer struct {
	text   string
	isErr  bool
	ref    string
	record string
}

// all is everything the caller could read of the call.
func (a isoAnswer) all() string { return a.text + "\n" + a.record }

// failed reports a call refused by the proxy or failed in the browser.
func (a isoAnswer) failed() bool {
	return a.isErr || strings.HasPrefix(a.text, "error:") || strings.Contains(a.record, "### Error")
}

// isoServer is the proxy-server of one mode, as the operator reaches it.
type isoServer struct {
	*server
	token string
}

func (s *isoServer) get(t *testing.T, path string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, s.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.token != "" {
		req.Header.Set("Authorization", "Bearer "+s.token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// workerPID is the pid GET /sessions/{id} names: the session's worker, or
// the session host it runs in.
func (s *isoServer) workerPID(t *testing.T, id string) int {
	t.Helper()
	code, body := s.get(t, "/sessions/"+id)
	var sess proxy.Session
	if err := json.Unmarshal([]byte(body), &sess); err != nil || code != http.StatusOK || sess.WorkerPID == 0 {
		t.Fatalf("GET /sessions/%s = %d %s (%v): want a live worker", id, code, body, err)
	}
	return sess.WorkerPID
}

// workerArg is the value of flag (--output-dir or --endpoint) for the
// worker serving session id, as the operator can learn it: the worker's pid
// from the API, then its arguments from the process table. A session in a
// session host has no argv of its own (sessionHostArg).
func (s *isoServer) workerArg(t *testing.T, id, flag string) string {
	t.Helper()
	pid := s.workerPID(t, id)
	args := procArgs(t, pid)
	if isSessionHost(args) {
		return s.sessionHostArg(t, id, pid, flag)
	}
	if i := slices.Index(args, flag); i >= 0 && i+1 < len(args) {
		return args[i+1]
	}
	t.Fatalf("worker %d has no %s in %q", pid, flag, args)
	return ""
}

// procArgs is the command line of process pid.
func procArgs(t *testing.T, pid int) []string {
	t.Helper()
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		t.Fatalf("the arguments of process %d: %v", pid, err)
	}
	return strings.Split(strings.TrimRight(string(raw), "\x00"), "\x00")
}

// isSessionHost reports a node process running the proxy's session host
// (many sessions in one process) rather than a worker of one session.
func isSessionHost(args []string) bool {
	return slices.ContainsFunc(args, func(a string) bool { return filepath.Base(a) == "worker-host.js" })
}

// sessionHostArg is workerArg for a session in a session host, learnt as
// an operator can: the browser endpoint from the server's log line of the
// host's start when the host runs its own browser, else from the host's
// environment (its configuration; a session opened with an endpoint of its
// own sends it on stdin, and then the test knows it already), the output
// directory from the server's log line assigning the session its worker.
func (s *isoServer) sessionHostArg(t *testing.T, id string, pid int, flag string) string {
	t.Helper()
	switch flag {
	case "--endpoint":
		raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
		if err != nil {
			t.Fatalf("the session host's environment: %v", err)
		}
		for _, kv := range strings.Split(string(raw), "\x00") {
			conf, ok := strings.CutPrefix(kv, "PWPROXY_WORKER_HOST=")
			if !ok {
				continue
			}
			var c struct {
				Endpoint string          `json:"endpoint"`
				Browser  json.RawMessage `json:"browser"`
			}
			if err := json.Unmarshal([]byte(conf), &c); err == nil && c.Browser != nil {
				re := regexp.MustCompile(fmt.Sprintf(`msg="session host started" .*\bpid=%d .*\bendpoint=(ws://\S+)`, pid))
				m := re.FindStringSubmatch(s.readLog())
				if m == nil {
					t.Fatalf("the server's log names no browser endpoint of session host %d, which runs its own", pid)
				}
				return m[1]
			}
			if err := json.Unmarshal([]byte(conf), &c); err != nil || c.Endpoint == "" {
				t.Fatalf("session host %d's configuration %s names no endpoint (%v)", pid, conf, err)
			}
			return c.Endpoint
		}
		t.Fatalf("session host %d has no PWPROXY_WORKER_HOST in its environment", pid)
	case "--output-dir":
		re := regexp.MustCompile(fmt.Sprintf(`msg="session worker assigned" session_id=%s worker_pid=%d output_dir=(\S+)`, regexp.QuoteMeta(id), pid))
		m := re.FindAllStringSubmatch(s.readLog(), -1)
		if len(m) == 0 {
			t.Fatalf("the server's log names no output directory of session %s in session host %d", id, pid)
		}
		dir := m[len(m)-1][1]
		if info, err := os.Stat(dir); err != nil || !info.IsDir() {
			t.Fatalf("session %s's output directory %s: %v", id, dir, err)
		}
		return dir
	}
	t.Fatalf("no way is known to learn %s of a session in a session host", flag)
	return ""
}

// connectIso starts an MCP client of s over transportName with the tool
// groups sets ("" = the server's default) and reads its tool list.
func connectIso(t *testing.T, s *isoServer, transportName, name, sets string) *isoClient {
	t.Helper()
	m := &isoClient{name: name}
	switch transportName {
	case "stdio":
		_, bridgeBin := binaries(t)
		env := []string{"MCP_PROXY_URL=" + s.URL, "MCP_PROXY_AUTOSTART=0", "MCP_PROXY_TOKEN=" + s.token}
		var args []string
		if sets != "" {
			args = append(args, "--toolsets="+sets)
		}
		m.tr = transport.NewStdioWithOptions(bridgeBin, env, args)
		m.c = client.NewClient(m.tr, client.WithProtocolVersion(mcp.ProtocolVersion20251125))
	case "http":
		u := s.URL + "/mcp"
		if sets != "" {
			u += "?toolsets=" + sets
		}
		var opts []transport.StreamableHTTPCOption
		if s.token != "" {
			opts = append(opts, transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + s.token}))
		}
		c, err := client.NewStreamableHttpClient(u, opts...)
		if err != nil {
			t.Fatal(err)
		}
		m.c, m.tr = c, c.GetTransport()
	}
	if err := m.c.Start(context.Background()); err != nil {
		t.Fatalf("%s: start: %v", name, err)
	}
	t.Cleanup(func() { _ = m.c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.ProtocolVersion20251125
	init.Params.ClientInfo = mcp.Implementation{Name: name, Version: "1"}
	if _, err := m.c.Initialize(ctx, init); err != nil {
		t.Fatalf("%s: initialize: %v", name, err)
	}
	m.tools = map[string]isoTool{}
	for _, raw := range rawTools(ctx, t, m.tr) {
		var def struct {
			Name        string `json:"name"`
			InputSchema struct {
				Properties map[string]json.RawMessage `json:"properties"`
				Required   []string                   `json:"required"`
			} `json:"inputSchema"`
		}
		if err := json.Unmarshal(raw, &def); err != nil {
			t.Fatalf("%s: tool %s: %v", name, raw, err)
		}
		tool := isoTool{props: map[string]bool{}, required: def.InputSchema.Required}
		for p := range def.InputSchema.Properties {
			tool.props[p] = true
		}
		m.tools[def.Name] = tool
	}
	return m
}

// call runs a tool and reads back its record (what get_content(ref_id)
// gives the caller) through the operator's API.
func (m *isoClient) call(t *testing.T, s *isoServer, tool string, args map[string]any) isoAnswer {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	req := mcp.CallToolRequest{}
	req.Params.Name = tool
	req.Params.Arguments = args
	res, err := m.c.CallTool(ctx, req)
	if err != nil {
		return isoAnswer{text: "transport error: " + err.Error(), isErr: true}
	}
	var a isoAnswer
	for _, part := range res.Content {
		if tc, ok := part.(mcp.TextContent); ok {
			a.text += tc.Text
		}
	}
	a.isErr = res.IsError
	if p, err := mcpserver.ParseAnswer(a.text); err == nil && p.RefID != "" {
		a.ref = p.RefID
		if code, body := s.get(t, "/content/"+p.RefID+"?reset_cursor=true"); code == http.StatusOK {
			a.record = body
		}
	}
	return a
}

// must runs a tool that must succeed.
func (m *isoClient) must(t *testing.T, s *isoServer, tool string, args map[string]any) isoAnswer {
	t.Helper()
	a := m.call(t, s, tool, args)
	if a.failed() {
		t.Fatalf("%s: %s %v failed: %s", m.name, tool, args, a.all())
	}
	return a
}

func (m *isoClient) read(uri string) string {
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

// victim is A and what it holds.
type victim struct {
	c                  *isoClient
	session            string
	refs               []string
	navRef, navRecord  string
	url, tabURL, title string
	cookie, storage    string // the values of secret_of_A
	download           string // the downloaded file's content
	outDir             string
	files              []string // A's files in its output directory
}

// secrets are what B must never read: none of them is ever in what B
// sends.
func (v *victim) secrets() map[string]string {
	return map[string]string{"A's cookie": v.cookie, "A's localStorage": v.storage, "A's download": v.download,
		"A's page title": v.title, "A's URL": v.url, "A's second tab": v.tabURL}
}

// ids are A's session id and refs: B sends them in its attacks, so only
// answers to calls that do not name them may be searched for them.
func (v *victim) ids() map[string]string {
	out := map[string]string{"A's session id": v.session}
	for i, r := range v.refs {
		out["A's ref "+strconv.Itoa(i)] = r
	}
	return out
}

func setUpVictim(t *testing.T, s *isoServer, a *isoClient, site string) *victim {
	t.Helper()
	tok := isoToken()
	v := &victim{c: a, url: site + "/victim?tok=" + tok, tabURL: site + "/victim-tab?tok=" + tok, title: "Victim " + tok,
		cookie: "c" + isoToken(), storage: "l" + isoToken(), download: "download of A " + tok}
	nav := a.must(t, s, "browser_navigate", map[string]any{"url": v.url})
	v.navRef = nav.ref
	set := a.must(t, s, "browser_evaluate", map[string]any{"function": fmt.Sprintf(
		"() => { document.cookie = 'secret_of_A=%s; path=/'; localStorage.setItem('secret_of_A', '%s'); return document.cookie }", v.cookie, v.storage)})
	text, _, err := listSessions(a)
	if err != nil {
		t.Fatal(err)
	}
	if v.session, err = e2etest.DefaultSession(text); err != nil {
		t.Fatal(err)
	}
	v.outDir = s.workerArg(t, v.session, "--output-dir")
	dl := a.must(t, s, "browser_click", map[string]any{"target": "#dl", "element": "statement link"})
	// The worker saves the download after the click has answered; the
	// bound is on a hang, not a measure.
	for deadline := time.Now().Add(30 * time.Second); len(v.files) == 0; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("A's download did not arrive in %s; the click answered %s", v.outDir, dl.all())
		}
		entries, _ := os.ReadDir(v.outDir)
		for _, e := range entries {
			if b, err := os.ReadFile(filepath.Join(v.outDir, e.Name())); err == nil && string(b) == v.download {
				v.files = append(v.files, filepath.Join(v.outDir, e.Name()))
			}
		}
	}
	shot := a.must(t, s, "browser_take_screenshot", map[string]any{"type": "png"})
	state := a.must(t, s, "browser_storage_state", map[string]any{"filename": "a-state.json"})
	if st := filepath.Join(v.outDir, "a-state.json"); fileExists(st) {
		v.files = append(v.files, st)
	}
	// The proxy's own saved state, whose ref restore_state takes.
	saved := a.must(t, s, "save_state", nil)
	tab := a.must(t, s, "browser_tabs", map[string]any{"action": "new", "url": v.tabURL})
	a.must(t, s, "browser_tabs", map[string]any{"action": "select", "index": 0})
	v.refs = []string{nav.ref, set.ref, dl.ref, shot.ref, state.ref, saved.ref, tab.ref}
	v.navRecord = a.must(t, s, "get_content", map[string]any{"ref_id": v.navRef, "reset_cursor": true}).text
	if !strings.Contains(v.navRecord, "Account of A") {
		t.Fatalf("A's page record: %s", v.navRecord)
	}
	return v
}

// listSessions asks a client for list_sessions.
func listSessions(m *isoClient) (string, bool, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	req := mcp.CallToolRequest{}
	req.Params.Name = "list_sessions"
	res, err := m.c.CallTool(ctx, req)
	if err != nil {
		return "", false, err
	}
	var text string
	for _, part := range res.Content {
		if tc, ok := part.(mcp.TextContent); ok {
			text += tc.Text
		}
	}
	return text, res.IsError, nil
}

// checkIntact reads A's state through A's own tools.
func (v *victim) checkIntact(t *testing.T, s *isoServer) {
	t.Helper()
	got := v.c.must(t, s, "browser_evaluate", map[string]any{"function": "() => [document.cookie, localStorage.getItem('secret_of_A'), location.href, document.title].join('|')"})
	want := fmt.Sprintf("secret_of_A=%s|%s|%s|%s", v.cookie, v.storage, v.url, v.title)
	if !strings.Contains(got.all(), want) {
		t.Errorf("A's cookie, storage, URL and title after B's attacks: %s\nwant %s", got.all(), want)
	}
	tabs := v.c.must(t, s, "browser_tabs", map[string]any{"action": "list"})
	if !strings.Contains(tabs.all(), v.url) || !strings.Contains(tabs.all(), v.tabURL) {
		t.Errorf("A's tabs after B's attacks: %s\nwant %s and %s", tabs.all(), v.url, v.tabURL)
	}
	if rec := v.c.must(t, s, "get_content", map[string]any{"ref_id": v.navRef, "reset_cursor": true}).text; rec != v.navRecord {
		t.Errorf("A's record of its first page changed:\n got %s\nwant %s", rec, v.navRecord)
	}
	for _, f := range v.files {
		if !fileExists(f) {
			t.Errorf("A's file %s is gone", f)
		}
	}
}

// attacker is B, what it has read so far of calls that named nothing of
// A's, and what it needs to aim.
type attacker struct {
	b        *isoClient
	s        *isoServer
	v        *victim
	site     string
	endpoint string // the browser's Playwright endpoint
	outDir   string
	seen     strings.Builder
}

// try runs a call that names nothing of A's: everything it answers is
// searched for A's secrets and ids.
func (k *attacker) try(t *testing.T, tool string, args map[string]any) isoAnswer {
	t.Helper()
	a := k.b.call(t, k.s, tool, args)
	k.seen.WriteString(a.all())
	k.noLeak(t, tool, a.all(), true)
	return a
}

// probe runs a call that names A's ids or paths: its answer may echo them,
// so only A's secrets are searched for.
func (k *attacker) probe(t *testing.T, tool string, args map[string]any) isoAnswer {
	t.Helper()
	a := k.b.call(t, k.s, tool, args)
	k.noLeak(t, tool, a.all(), false)
	return a
}

func (k *attacker) noLeak(t *testing.T, what, text string, ids bool) {
	t.Helper()
	check := k.v.secrets()
	if ids {
		for k, v := range k.v.ids() {
			check[k] = v
		}
	}
	for name, secret := range check {
		if secret != "" && strings.Contains(text, secret) {
			i := strings.Index(text, secret)
			t.Errorf("B read %s (%q) through %s: …%s…", name, secret, what, text[max(0, i-200):min(len(text), i+len(secret)+200)])
		}
	}
}

func (k *attacker) has(tool string) bool { _, ok := k.b.tools[tool]; return ok }

// toolsWith lists B's tools that take prop, sorted.
func (k *attacker) toolsWith(prop string) []string {
	var out []string
	for name, tool := range k.b.tools {
		if tool.props[prop] {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// argsFor completes args with what gets tool past its schema to the
// session: the attack must reach the code that could leak, not stop at a
// missing argument.
func (k *attacker) argsFor(tool string, args map[string]any) map[string]any {
	base := map[string]map[string]any{
		"browser_evaluate":        {"function": "() => document.cookie"},
		"browser_navigate":        {"url": k.site + "/hostile"},
		"browser_find":            {"text": "drop"},
		"browser_network_request": {"index": 1},
		"browser_take_screenshot": {"type": "png"},
		"browser_run_code_unsafe": {"code": "async (page) => page.url()"},
		"get_content":             {"search_for": "A"},
	}
	out := map[string]any{}
	for k, v := range base[tool] {
		out[k] = v
	}
	for k, v := range args {
		out[k] = v
	}
	return out
}

// isoAttack is one row of the table: the subtest's name says the attack
// and what must happen.
type isoAttack struct {
	name string
	run  func(t *testing.T, k *attacker)
}

var isoAttacks = []isoAttack{
	{"code outside the page: browser_run_code_unsafe and browser_get_config are not listed and answer TOOL_NOT_FOUND", func(t *testing.T, k *attacker) {
		calls := map[string]map[string]any{
			"browser_run_code_unsafe": {"code": "async (page) => { const s = await page.context().browser().newBrowserCDPSession(); return await s.send('Target.getTargets'); }"},
			"browser_get_config":      nil,
		}
		for tool, args := range calls {
			if k.has(tool) {
				t.Errorf("B is offered %s", tool)
			}
			// try also searches the answer for A's pages, which
			// Target.getTargets would list.
			if a := k.try(t, tool, args); !notOffered(a) || !strings.Contains(a.text, proxy.ETOOLMISSING) {
				t.Errorf("%s answered %s\nwant it refused with %s", tool, a.all(), proxy.ETOOLMISSING)
			}
		}
	}},
	{"tabs: browser_tabs lists only B's own tabs", func(t *testing.T, k *attacker) {
		if !k.has("browser_tabs") {
			t.Skip("B is not offered browser_tabs")
		}
		k.try(t, "browser_navigate", map[string]any{"url": k.site + "/hostile"})
		a := k.try(t, "browser_tabs", map[string]any{"action": "list"})
		if !strings.Contains(a.all(), k.site+"/hostile") {
			t.Errorf("B's tab list does not show B's own tab: %s", a.all())
		}
	}},
	{"tabs: selecting or closing a tab past B's own is an error and leaves A's tabs", func(t *testing.T, k *attacker) {
		if !k.has("browser_tabs") {
			t.Skip("B is not offered browser_tabs")
		}
		for _, args := range []map[string]any{{"action": "select", "index": 1}, {"action": "select", "index": 2}, {"action": "close", "index": 1}, {"action": "close", "index": 3}} {
			if a := k.try(t, "browser_tabs", args); !a.failed() {
				t.Errorf("browser_tabs %v with one tab of B's own succeeded: %s", args, a.all())
			}
		}
	}},
	{"files: filename arguments outside B's output directory are refused and write nothing", func(t *testing.T, k *attacker) {
		k.try(t, "browser_navigate", map[string]any{"url": k.site + "/hostile"})
		tools := k.toolsWith("filename")
		if len(tools) == 0 {
			t.Fatal("B is offered no tool that takes a filename: the catalogue is not what this test expects")
		}
		for _, tool := range tools {
			if tool == "browser_set_storage_state" || tool == "browser_run_code_unsafe" {
				continue // they read the file: the next row
			}
			name := "pwiso-" + isoToken() + ".out"
			for _, target := range []struct{ arg, lands string }{
				{filepath.Join(os.TempDir(), name), filepath.Join(os.TempDir(), name)},
				{filepath.Join(k.v.outDir, name), filepath.Join(k.v.outDir, name)},
				{"../../" + name, filepath.Join(k.outDir, "../..", name)},
				{"../" + filepath.Base(k.v.outDir) + "/" + name, filepath.Join(k.v.outDir, name)},
			} {
				a := k.probe(t, tool, k.argsFor(tool, map[string]any{"filename": target.arg}))
				if !a.failed() || !refusedFile(a) {
					t.Errorf("%s with filename %s: %s; want File access denied, or a refusal by the proxy", tool, target.arg, a.all())
				}
				if fileExists(target.lands) {
					t.Errorf("%s with filename %s wrote %s", tool, target.arg, target.lands)
					_ = os.Remove(target.lands)
				}
			}
		}
	}},
	{"files: B's tools that read a file refuse A's files", func(t *testing.T, k *attacker) {
		for _, tool := range []string{"browser_set_storage_state", "browser_run_code_unsafe"} {
			// /proc/self is the process serving B: with sessions hosted, the
			// host of A's session too, whose environment names the browser.
			for _, f := range append(slices.Clone(k.v.files), "/etc/passwd", k.s.DBPath, "/proc/self/environ", "/proc/self/cmdline") {
				a := k.probe(t, tool, k.argsFor(tool, map[string]any{"filename": f}))
				if !a.failed() || !refusedFile(a) {
					t.Errorf("%s with filename %s: %s; want File access denied or TOOL_NOT_FOUND", tool, f, a.all())
				}
			}
		}
		// Whatever those did, B's browser holds nothing of A's.
		k.try(t, "browser_navigate", map[string]any{"url": k.site + "/hostile"})
		k.try(t, "browser_evaluate", map[string]any{"function": "() => document.cookie + '|' + localStorage.getItem('secret_of_A')"})
	}},
	{"files: uploads of the server's files are refused and the page receives nothing", func(t *testing.T, k *attacker) {
		paths := append(slices.Clone(k.v.files), k.s.DBPath, k.s.DBPath+"-wal", "/etc/passwd", "/proc/self/environ")
		dirs := []string{k.v.outDir, filepath.Dir(k.v.outDir)}
		k.try(t, "browser_navigate", map[string]any{"url": k.site + "/hostile"})
		tried := 0
		for _, p := range paths {
			if k.has("browser_file_upload") {
				tried++
				k.try(t, "browser_click", map[string]any{"target": "#f", "element": "file input"})
				if a := k.probe(t, "browser_file_upload", map[string]any{"paths": []string{p}}); !a.failed() || !refusedFile(a) {
					t.Errorf("browser_file_upload of %s: %s; want File access denied", p, a.all())
				}
				k.try(t, "browser_file_upload", map[string]any{}) // closes the chooser
			}
			if k.has("browser_drop") {
				tried++
				if a := k.probe(t, "browser_drop", map[string]any{"target": "#drop", "element": "drop zone", "paths": []string{p}}); !a.failed() || !refusedFile(a) {
					t.Errorf("browser_drop of %s: %s; want File access denied", p, a.all())
				}
			}
			if k.has("upload_file") {
				tried++
				if a := k.probe(t, "upload_file", map[string]any{"selector": "#f", "paths": []string{p}}); !a.failed() {
					t.Errorf("upload_file of %s succeeded: %s", p, a.all())
				}
			}
		}
		if k.has("upload_file") {
			for _, d := range dirs {
				if a := k.probe(t, "upload_file", map[string]any{"selector": "#d", "paths": []string{d}}); !a.failed() {
					t.Errorf("upload_file of the directory %s succeeded: %s", d, a.all())
				}
			}
		}
		if tried == 0 {
			t.Skip("B is offered no upload tool")
		}
		a := k.try(t, "browser_evaluate", map[string]any{"function": "() => 'received ' + (document.getElementById('f').files.length + document.getElementById('d').files.length + window.dropped) + ' files'"})
		if !strings.Contains(a.all(), "received 0 files") {
			t.Errorf("B's page received files of the server: %s", a.all())
		}
	}},
	{"downloads: A's download cannot be opened by B", func(t *testing.T, k *attacker) {
		for _, f := range k.v.files {
			a := k.probe(t, "browser_navigate", map[string]any{"url": "file://" + f})
			if !strings.Contains(a.text, proxy.EDOMAINBLOCKED) {
				t.Errorf("navigating to A's download file://%s: %s; want %s", f, a.all(), proxy.EDOMAINBLOCKED)
			}
		}
		// The record keeps A's download with one of A's calls (the click,
		// or the next call when it arrived after the click answered): A
		// reads it back, B gets every one of A's refs refused, whatever
		// name it asks for.
		found := false
		for _, ref := range k.v.refs {
			own := k.v.c.call(t, k.s, "get_content", map[string]any{"ref_id": ref, "download": "statement.txt"})
			found = found || own.text == k.v.download
			for name, code := range map[string]string{"statement.txt": proxy.EREFMISSING, "../statement.txt": proxy.EINVALID} {
				if a := k.probe(t, "get_content", map[string]any{"ref_id": ref, "download": name}); !a.isErr || !strings.Contains(a.text, code) {
					t.Errorf("B's get_content(%s, download: %s) = %s; want %s", ref, name, a.all(), code)
				}
			}
		}
		if !found {
			t.Errorf("A cannot read its own download %q from any of its refs", k.v.download)
		}
	}},
	{"storage: B's storage tools show B's own cookie and storage and nothing of A's", func(t *testing.T, k *attacker) {
		mine := "b" + isoToken()
		k.try(t, "browser_navigate", map[string]any{"url": k.site + "/hostile"})
		k.try(t, "browser_evaluate", map[string]any{"function": fmt.Sprintf("() => { document.cookie = 'mine_B=%s; path=/'; localStorage.setItem('mine_B', '%[1]s'); return 1 }", mine)})
		reads := []struct {
			tool string
			args map[string]any
		}{
			{"browser_storage_state", nil}, {"browser_cookie_list", nil}, {"browser_cookie_get", map[string]any{"name": "secret_of_A"}},
			{"browser_localstorage_list", nil}, {"browser_localstorage_get", map[string]any{"key": "secret_of_A"}},
			{"get_cookies", nil}, {"save_state", nil},
			{"browser_evaluate", map[string]any{"function": "() => document.cookie + '|' + localStorage.getItem('secret_of_A')"}},
		}
		for _, r := range reads {
			if !k.has(r.tool) {
				continue
			}
			a := k.try(t, r.tool, r.args)
			// browser_storage_state without a filename writes the state to a
			// file in B's output directory and only links it.
			if !slices.Contains([]string{"browser_cookie_get", "browser_localstorage_get", "browser_storage_state"}, r.tool) && !strings.Contains(a.all(), mine) {
				t.Errorf("%s does not show B's own state %s: %s", r.tool, mine, a.all())
			}
		}
	}},
	{"ids: A's session id answers as an unknown id in every tool B is offered", func(t *testing.T, k *attacker) {
		tools := k.toolsWith("session_id")
		if len(tools) < 20 {
			t.Fatalf("B is offered %d tools taking session_id: the catalogue is not what this test expects", len(tools))
		}
		for _, tool := range tools {
			unknown := uuid.NewString()
			want := strings.ReplaceAll(k.probe(t, tool, k.argsFor(tool, map[string]any{"session_id": unknown})).text, unknown, k.v.session)
			if got := k.probe(t, tool, k.argsFor(tool, map[string]any{"session_id": k.v.session})).text; got != want {
				t.Errorf("%s with A's session:\n got %s\nwant %s (as for an unknown id)", tool, got, want)
			}
		}
		for _, tool := range []string{"close_session", "resume_session", "browser_evaluate"} {
			if a := k.probe(t, tool, k.argsFor(tool, map[string]any{"session_id": k.v.session})); !strings.Contains(a.text, proxy.ESESSIONMISSING) {
				t.Errorf("%s on A's session: %s; want %s", tool, a.text, proxy.ESESSIONMISSING)
			}
		}
		unknown := uuid.NewString()
		want := strings.ReplaceAll(k.b.read("playwright:///session/"+unknown), unknown, k.v.session)
		if got := k.b.read("playwright:///session/" + k.v.session); got != want || !strings.Contains(got, proxy.ESESSIONMISSING) {
			t.Errorf("reading A's session resource:\n got %s\nwant %s, naming %s", got, want, proxy.ESESSIONMISSING)
		}
	}},
	{"refs: A's refs answer as unknown refs in every tool and resource", func(t *testing.T, k *attacker) {
		tools := k.toolsWith("ref_id")
		if !slices.Contains(tools, "get_content") || !slices.Contains(tools, "get_console_content") {
			t.Fatalf("B's tools taking ref_id: %v; want get_content and get_console_content", tools)
		}
		for _, ref := range k.v.refs {
			unknown := isoToken() + "abcd"
			for _, tool := range tools {
				want := strings.ReplaceAll(k.probe(t, tool, k.argsFor(tool, map[string]any{"ref_id": unknown})).text, unknown, ref)
				got := k.probe(t, tool, k.argsFor(tool, map[string]any{"ref_id": ref})).text
				if got != want || !strings.Contains(got, proxy.EREFMISSING) {
					t.Errorf("%s with A's ref %s:\n got %s\nwant %s (as for an unknown ref, naming %s)", tool, ref, got, want, proxy.EREFMISSING)
				}
			}
			for _, kind := range []string{"ref", "screenshot", "console"} {
				want := strings.ReplaceAll(k.b.read("playwright:///"+kind+"/"+unknown), unknown, ref)
				if got := k.b.read("playwright:///" + kind + "/" + ref); got != want || !strings.Contains(got, proxy.EREFMISSING) {
					t.Errorf("reading A's ref %s as a %s resource:\n got %s\nwant %s", ref, kind, got, want)
				}
			}
		}
	}},
	{"lists: A's session is absent from list_sessions and resources/list", func(t *testing.T, k *attacker) {
		k.try(t, "list_sessions", nil)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		res, err := k.b.c.ListResources(ctx, mcp.ListResourcesRequest{})
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(res)
		k.seen.Write(b)
		k.noLeak(t, "resources/list", string(b), true)
	}},
	{"proxy API: a tool navigating to the proxy's own address answers DOMAIN_BLOCKED", func(t *testing.T, k *attacker) {
		u, err := url.Parse(k.s.URL)
		if err != nil {
			t.Fatal(err)
		}
		port := u.Port()
		for _, target := range []struct {
			url    string
			served bool // the server listens on 127.0.0.1 only
		}{
			{"http://127.0.0.1:" + port + "/sessions", true},
			{"http://localhost:" + port + "/sessions", true},
			{"http://[::1]:" + port + "/sessions", false},
			{"http://127.0.0.2:" + port + "/sessions", false},
			{"http://127.0.0.1:" + port + "/content/" + k.v.navRef + "?reset_cursor=true", true},
			{"http://127.0.0.1:" + port + "/sessions/" + k.v.session + "/export?format=json", true},
			{"http://127.0.0.1:" + port + "/ui/", true},
		} {
			a := k.probe(t, "browser_navigate", map[string]any{"url": target.url})
			if !strings.Contains(a.text, proxy.EDOMAINBLOCKED) && (target.served || !strings.Contains(a.text, "ERR_CONNECTION_REFUSED")) {
				t.Errorf("browser_navigate to the proxy's %s: %s; want %s", target.url, a.all(), proxy.EDOMAINBLOCKED)
			}
		}
	}},
	{"proxy API: requests B's page makes to the proxy are refused and show nothing of A", func(t *testing.T, k *attacker) {
		list := k.s.URL + "/sessions"
		esc := url.QueryEscape(list)
		var shown strings.Builder
		for _, step := range []struct {
			tool string
			args map[string]any
		}{
			{"browser_navigate", map[string]any{"url": k.site + "/redirect?to=" + esc}},
			{"browser_snapshot", nil},
			{"browser_navigate", map[string]any{"url": k.site + "/jsredirect?to=" + esc}},
			{"browser_snapshot", nil},
			{"browser_navigate", map[string]any{"url": k.site + "/link?to=" + esc}},
			{"browser_click", map[string]any{"target": "#go", "element": "link"}},
			{"browser_snapshot", nil},
			{"browser_navigate", map[string]any{"url": k.site + "/hostile"}},
			{"browser_evaluate", map[string]any{"function": fmt.Sprintf(
				"async () => { try { const r = await fetch(%q); return 'status ' + r.status + ' ' + await r.text(); } catch (e) { return 'refused ' + e; } }", list)}},
		} {
			shown.WriteString(k.try(t, step.tool, step.args).all())
		}
		if strings.Contains(shown.String(), `"session_id"`) || strings.Contains(shown.String(), "status 200") {
			t.Errorf("B's page read the proxy's session list:\n%s", shown.String())
		}
		// A request with an effect: B's page asks the proxy to run a call in
		// A's session (as if it had learnt its id). A must not move.
		body, _ := json.Marshal(map[string]any{"session_id": k.v.session, "tool": "browser_navigate", "params": map[string]string{"url": k.site + "/pwned"}})
		k.probe(t, "browser_evaluate", map[string]any{"function": fmt.Sprintf(
			"async () => { try { const r = await fetch(%q, {method: 'POST', mode: 'no-cors', headers: {'Content-Type': 'text/plain'}, body: %q}); await r.text(); return 'sent ' + r.type; } catch (e) { return 'refused ' + e; } }", k.s.URL+"/call", body)})
		if a := k.v.c.must(t, k.s, "browser_evaluate", map[string]any{"function": "() => location.href"}); strings.Contains(a.all(), "/pwned") {
			t.Errorf("B's page made A's browser navigate: A is at %s", a.all())
		}
	}},
	{"browser endpoint: no answer to B names the browser's endpoint", func(t *testing.T, k *attacker) {
		u, err := url.Parse(k.endpoint)
		if err != nil || u.Port() == "" {
			t.Fatalf("the browser's endpoint %q: %v", k.endpoint, err)
		}
		secrets := []string{u.Host, "localhost:" + u.Port()}
		if len(u.Path) > 8 {
			secrets = append(secrets, strings.Trim(u.Path, "/")) // a random path, not /pw
		}
		seen := k.seen.String()
		for _, secret := range secrets {
			if i := strings.Index(seen, secret); i >= 0 {
				t.Errorf("B's answers name the browser's endpoint (%s): …%s…", secret, seen[max(0, i-300):min(len(seen), i+len(secret)+100)])
			}
		}
	}},
	{"browser endpoint: B's page cannot open a Playwright connection to the browser", func(t *testing.T, k *attacker) {
		k.try(t, "browser_navigate", map[string]any{"url": k.site + "/hostile"})
		// Called directly: the answer echoes the endpoint B sends.
		a := k.b.call(t, k.s, "browser_evaluate", map[string]any{"function": fmt.Sprintf(`() => new Promise((resolve) => {
  const ws = new WebSocket(%q);
  let id = 0; const pending = {}; const objects = {};
  const send = (guid, method, params) => new Promise((res) => { const i = ++id; pending[i] = res; ws.send(JSON.stringify({id: i, guid, method, params, metadata: {}})); });
  ws.onerror = () => resolve('connection refused');
  ws.onclose = (e) => resolve('connection closed ' + e.code);
  ws.onmessage = (m) => { const msg = JSON.parse(m.data); if (msg.method === '__create__') objects[msg.params.guid] = msg.params; if (msg.id && pending[msg.id]) pending[msg.id](msg); };
  ws.onopen = async () => {
    try {
      const init = await send('', 'initialize', {sdkLanguage: 'javascript'});
      const browser = objects[init.result.playwright.guid].initializer.preLaunchedBrowser.guid;
      const cdp = await send(browser, 'newBrowserCDPSession', {});
      const targets = await send(cdp.result.session.guid, 'send', {method: 'Target.getTargets', params: {}});
      resolve(['OPEN', 'ED: '].join('') + JSON.stringify(targets.result));
    } catch (e) { resolve(['OPEN', 'ED, then '].join('') + e); }
  };
  setTimeout(() => resolve('no answer'), 20000);
})`, k.endpoint)})
		// Spelt apart in the script, so that its echo in the record does
		// not match.
		if strings.Contains(a.all(), "OPENED") {
			t.Errorf("B's page opened a Playwright connection to the browser at %s: %s", k.endpoint, a.all())
		}
		for name, secret := range k.v.secrets() {
			if strings.Contains(a.all(), secret) {
				t.Errorf("B's page read %s through the browser's endpoint", name)
			}
		}
	}},
	{"process: B's page code finds no process, require or module of the process serving it", func(t *testing.T, k *attacker) {
		k.try(t, "browser_navigate", map[string]any{"url": k.site + "/hostile"})
		a := k.try(t, "browser_evaluate", map[string]any{"function": `() => ['process', 'require', 'module', 'Buffer', 'global', '__filename']
  .map(n => { try { return n + ':' + typeof Function('return this')()[n] + '/' + (new Function('try { return typeof ' + n + ' } catch (e) { return "threw" }'))(); } catch (e) { return n + ':threw'; } })
  .join(',')`})
		want := "process:undefined/undefined,require:undefined/undefined,module:undefined/undefined,Buffer:undefined/undefined,global:undefined/undefined,__filename:undefined/undefined"
		if !strings.Contains(a.all(), want) {
			t.Errorf("what B's page code sees of node: %s\nwant %s", a.all(), want)
		}
	}},
	{"errors: B's page errors and unhandled rejections never reach A's answers", func(t *testing.T, k *attacker) {
		mark := "b-error-" + isoToken()
		k.try(t, "browser_navigate", map[string]any{"url": k.site + "/hostile"})
		ev := k.try(t, "browser_evaluate", map[string]any{"function": fmt.Sprintf(
			"() => { setTimeout(() => { throw new Error('%[1]s-throw'); }, 0); Promise.reject(new Error('%[1]s-reject')); console.error('%[1]s-console'); return 'scheduled'; }", mark)})
		snap := k.try(t, "browser_snapshot", nil)
		// Control: the errors happened, and B is told of them.
		var own strings.Builder
		for _, ref := range []string{ev.ref, snap.ref} {
			if ref != "" {
				_, console := k.s.get(t, "/console/"+ref)
				own.WriteString(console)
			}
		}
		if !strings.Contains(own.String()+ev.all()+snap.all(), mark) {
			t.Fatalf("B's own answers and console name none of its errors %s: the attack did not happen\n%s%s%s", mark, own.String(), ev.all(), snap.all())
		}
		for _, tool := range []string{"browser_snapshot", "browser_tabs"} {
			args := map[string]any{}
			if tool == "browser_tabs" {
				args["action"] = "list"
			}
			a := k.v.c.call(t, k.s, tool, args)
			seen := a.all()
			if a.ref != "" {
				_, console := k.s.get(t, "/console/"+a.ref)
				seen += console
			}
			if strings.Contains(seen, mark) {
				i := strings.Index(seen, mark)
				t.Errorf("A's %s shows B's error: …%s…", tool, seen[max(0, i-200):min(len(seen), i+len(mark)+100)])
			}
		}
	}},
	{"network: B's mocked responses and offline switch act on B's session only", func(t *testing.T, k *attacker) {
		if !k.has("mock_response") || !k.has("set_offline") {
			t.Skip("B is not offered the network tools")
		}
		fetch := func(u string) map[string]any {
			return map[string]any{"function": fmt.Sprintf(
				"async () => { try { const r = await fetch(%q); return 'status ' + r.status + ' ' + (await r.text()).slice(0, 300); } catch (e) { return 'failed ' + e; } }", u)}
		}
		mark := "mocked-" + isoToken()
		k.try(t, "browser_navigate", map[string]any{"url": k.site + "/hostile"})
		k.try(t, "mock_response", map[string]any{"url_pattern": "**/victim*", "body": "<title>" + mark + "</title>", "content_type": "text/html"})
		if own := k.try(t, "browser_evaluate", fetch(k.site+"/victim?tok=b")); !strings.Contains(own.all(), mark) {
			t.Fatalf("B's mock does not answer B's own request: %s", own.all())
		}
		k.try(t, "set_offline", map[string]any{"offline": true})
		defer k.try(t, "set_offline", map[string]any{"offline": false})
		if own := k.try(t, "browser_evaluate", fetch(k.site+"/hostile")); !strings.Contains(own.all(), "failed") {
			t.Fatalf("B's own request while B is offline: %s", own.all())
		}
		a := k.v.c.must(t, k.s, "browser_evaluate", fetch(k.v.url))
		if !strings.Contains(a.all(), "status 200") || !strings.Contains(a.all(), "Account of A") || strings.Contains(a.all(), mark) {
			t.Errorf("A's request while B mocks its URL and is offline: %s", a.all())
		}
	}},
	{"at the end: nothing B read holds A's secrets or ids", func(t *testing.T, k *attacker) {
		k.try(t, "browser_navigate", map[string]any{"url": k.site + "/victim?tok=b"})
		k.try(t, "browser_evaluate", map[string]any{"function": "() => document.cookie + '|' + localStorage.getItem('secret_of_A')"})
		k.noLeak(t, "all of B's answers", k.seen.String(), true)
	}},
}

// refusedFile reports an answer that refused a file path: upstream's File
// access denied, or the proxy's own refusal.
func refusedFile(a isoAnswer) bool {
	return strings.Contains(a.all(), "File access denied") || strings.Contains(a.text, proxy.EINVALID) || notOffered(a)
}

// notOffered reports the answer to a tool the client is not offered: the
// MCP server's own "tool not found" for a name it does not list, or the
// proxy's TOOL_NOT_FOUND.
func notOffered(a isoAnswer) bool {
	return a.failed() && (strings.Contains(a.text, "tool not found") || strings.Contains(a.text, proxy.ETOOLMISSING))
}

// TestIsolationAdversarial: see the top of this file. One server per
// browser mode; in each, per transport, a victim and two attackers (the
// default tool groups, and all of them).
func TestIsolationAdversarial(t *testing.T) {
	requireBrowser(t)
	bin, _ := binaries(t)
	// The local shared browser runs twice: with a worker process per
	// session, and with sessions hosted many to a node process (the
	// default), where they share a process as well as a browser. A browser
	// node runs with the default only: hosted, each session with its own
	// connection to the node from the shared process.
	modes := []struct {
		name  string
		node  bool
		token string
		// perWorker is PROXY_SESSIONS_PER_WORKER ("" the default); hosted
		// says whether the sessions must be found in a session host.
		perWorker string
		hosted    bool
	}{
		{"local browser, a worker per session", false, "", "1", false},
		{"local browser, sessions hosted", false, "", "", true},
		{"browser node, with a token", true, "iso-" + isoToken(), "", true},
	}
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			// Each server is a process of its own with its own environment,
			// so the modes, and the transports in each, run side by side.
			t.Parallel()
			env := map[string]string{}
			var endpoint string
			if mode.node {
				n := e2etest.StartBrowserNode(t, bin, e2etest.FreePort(t))
				env["PROXY_BROWSER_ENDPOINTS"] = n.Endpoint
				endpoint = n.Endpoint
			}
			if mode.token != "" {
				env["PROXY_AUTH_TOKEN"] = mode.token
			}
			if mode.perWorker != "" {
				env["PROXY_SESSIONS_PER_WORKER"] = mode.perWorker
			}
			// Upstream's wait after each action is switched off: it would
			// be most of the run.
			env["PROXY_PLAYWRIGHT_ARGS"] = "--timeout-settle=0"
			s := &isoServer{server: runBinary(t, filepath.Join(t.TempDir(), "proxy.db"), env).server, token: mode.token}
			site := isoSite(t)
			for _, tr := range []string{"stdio", "http"} {
				t.Run(tr, func(t *testing.T) {
					t.Parallel()
					a := connectIso(t, s, tr, "victim-A", "all")
					v := setUpVictim(t, s, a, site)
					if hosted := isSessionHost(procArgs(t, s.workerPID(t, v.session))); mode.hosted && !hosted || mode.perWorker == "1" && hosted {
						t.Fatalf("A's session is in a session host: %t; this mode wants %t", hosted, mode.hosted)
					}
					ep := endpoint
					if ep == "" {
						ep = s.workerArg(t, v.session, "--endpoint")
					}
					for _, sets := range []string{"", "all"} {
						label := "B with the default tools"
						if sets != "" {
							label = "B with all tools"
						}
						t.Run(label, func(t *testing.T) {
							b := connectIso(t, s, tr, "attacker-B", sets)
							k := &attacker{b: b, s: s, v: v, site: site, endpoint: ep}
							k.try(t, "browser_navigate", map[string]any{"url": site + "/hostile"})
							text, _, err := listSessions(b)
							if err != nil {
								t.Fatal(err)
							}
							bs, err := e2etest.DefaultSession(text)
							if err != nil {
								t.Fatal(err)
							}
							k.outDir = s.workerArg(t, bs, "--output-dir")
							for _, at := range isoAttacks {
								t.Run(at.name, func(t *testing.T) { at.run(t, k) })
							}
						})
					}
					t.Run("A's cookie, storage, URL, tabs and record are intact", func(t *testing.T) { v.checkIntact(t, s) })
				})
			}
		})
	}
}
