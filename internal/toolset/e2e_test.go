package toolset_test

// End-to-end tests of the proxy's own browser tools: the real proxy-server
// (internal/proxyserver, in-process) with real @playwright/mcp workers and
// headless Chromium, on pages this test serves on 127.0.0.1.

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/config"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/e2etest"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/proxyserver"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/toolset"
)

func TestMain(m *testing.M) { e2etest.Main(m) }

const indexHTML = `<!doctype html><html lang="en"><head><title>Home</title>
<meta name="description" content="A test page"><link rel="canonical" href="/index.html"></head>
<body><h1>Hello</h1>
<form id="f" onsubmit="event.preventDefault(); document.querySelector('#out').innerText = 'Hi ' + document.querySelector('#name').value;">
<input id="name" name="name"><select id="s"><option value="a">Alpha</option><option value="b">Beta</option></select>
<input type="checkbox" id="c"><input type="file" id="file" onchange="document.title = 'file:' + this.files[0].name">
<button type="submit" id="go">Go</button><button type="button" id="dis" disabled>No</button></form>
<input id="k" onkeydown="if (event.key === 'Enter') document.querySelector('#out').innerText = 'enter'">
<div id="out"></div><div id="hid" style="display:none">hidden</div>
<div id="src" draggable="true" ondragstart="event.dataTransfer.setData('text', 'x')" style="width:40px;height:40px">S</div>
<div id="dst" style="width:80px;height:80px" ondragover="event.preventDefault()" ondrop="event.preventDefault(); document.querySelector('#out').innerText = 'dropped'">D</div>
<div id="hov" onmouseover="this.innerText = 'hovered'">hover me</div>
<table id="t"><thead><tr><th>Name</th><th>Qty</th></tr></thead>
<tbody><tr><td>apple</td><td>1</td></tr><tr><td>pear</td><td>2</td></tr><tr><td>fig</td><td>3</td></tr></tbody></table>
<a href="/second.html">Second page</a> <a href="https://example.com/x">External</a>
<img id="img" src="/pixel.png">
<div style="height:3000px"></div><p id="bottom">bottom</p>
<script>
fetch('/api/data').then(r => r.text()).then(t => { document.body.dataset.api = t; }).catch(() => { document.body.dataset.api = 'failed'; });
</script></body></html>`

// pixel is a 1×1 PNG.
var pixel, _ = base64.StdEncoding.DecodeString("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==")

func site(t *testing.T) string {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/index.html", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, indexHTML)
	})
	mux.HandleFunc("/second.html", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, `<!doctype html><title>Second</title><p id="p">second page</p>`)
	})
	mux.HandleFunc("/pixel.png", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/png")
		w.Write(pixel)
	})
	mux.HandleFunc("/api/data", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"real":true}`)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL
}

type server struct {
	URL, DBPath string
	// log is what the server logged so far (at debug).
	log func() string
}

// startServer runs proxy-server in-process with every tool group, as
// `PROXY_TOOLSETS=all proxy-server serve` does.
func startServer(t *testing.T, tweak func(*config.Config)) *server {
	t.Helper()
	e2etest.RequireBrowser(t)
	cfg := config.DefaultConfig(os.Getenv)
	cfg.Port = 0
	cfg.DatabasePath = filepath.Join(t.TempDir(), "proxy.db")
	cfg.WarmPool = 0
	cfg.Toolsets = []string{"all"}
	if tweak != nil {
		tweak(&cfg)
	}
	var logs bytes.Buffer
	var mu sync.Mutex
	log := slog.New(slog.NewTextHandler(writerFunc(func(p []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return logs.Write(p)
	}), &slog.HandlerOptions{Level: slog.LevelDebug}))
	ctx, cancel := context.WithCancel(context.Background())
	addr := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- proxyserver.Serve(ctx, cfg, proxyserver.Options{Logger: log, Root: e2etest.ProjectRoot(t), OnListen: func(a string) { addr <- a }})
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("serve: %v", err)
			}
		case <-time.After(20 * time.Second):
			t.Error("serve did not return within 20 s of cancel")
		}
		if t.Failed() {
			mu.Lock()
			t.Logf("server log:\n%s", logs.String())
			mu.Unlock()
		}
	})
	select {
	case a := <-addr:
		return &server{URL: "http://" + a, DBPath: cfg.DatabasePath, log: func() string {
			mu.Lock()
			defer mu.Unlock()
			return logs.String()
		}}
	case err := <-done:
		t.Fatalf("serve exited early: %v", err)
	case <-time.After(60 * time.Second):
		t.Fatal("serve did not listen within 60 s")
	}
	return nil
}

// quick switches off upstream's settle wait after each action (500 ms by
// default), for tests that make many calls and never rely on it.
func quick(c *config.Config) { c.PlaywrightArgs = "--timeout-settle=0" }

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

func do(t *testing.T, method, url string, body any, out any) int {
	t.Helper()
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, url, r)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatalf("%s %s: %d %s: %v", method, url, resp.StatusCode, raw, err)
		}
	}
	return resp.StatusCode
}

func (s *server) createSession(t *testing.T) string {
	t.Helper()
	var out struct {
		SessionID string `json:"session_id"`
	}
	if code := do(t, "POST", s.URL+"/sessions", nil, &out); code != http.StatusCreated && code != http.StatusOK {
		t.Fatalf("create session: %d", code)
	}
	return out.SessionID
}

// call makes one tool call; it fails the test unless the proxy answered 200.
func (s *server) call(t *testing.T, session, tool string, params any) proxy.CallResult {
	t.Helper()
	var raw json.RawMessage
	code := do(t, "POST", s.URL+"/call", map[string]any{"session_id": session, "tool": tool, "params": params}, &raw)
	if code != http.StatusOK {
		t.Fatalf("%s: HTTP %d %s", tool, code, raw)
	}
	var res proxy.CallResult
	if err := json.Unmarshal(raw, &res); err != nil {
		t.Fatal(err)
	}
	return res
}

// ok makes a call that must succeed and decodes its value into out.
func (s *server) ok(t *testing.T, session, tool string, params any, out any) proxy.CallResult {
	t.Helper()
	res := s.call(t, session, tool, params)
	if res.Status != proxy.StatusSuccess {
		t.Fatalf("%s(%v): %s %s", tool, params, res.ErrorCode, res.Error)
	}
	if out != nil {
		if err := json.Unmarshal(res.Value, out); err != nil {
			t.Fatalf("%s: value %s: %v", tool, res.Value, err)
		}
	}
	return res
}

// Acceptance 1: with PROXY_TOOLSETS=all every tool is listed and works.
func TestEveryToolWorks(t *testing.T) {
	pages := site(t)
	s := startServer(t, nil)

	var list struct {
		Tools []struct{ Name string } `json:"tools"`
	}
	do(t, "GET", s.URL+"/tools", nil, &list)
	var names []string
	for _, tl := range list.Tools {
		names = append(names, tl.Name)
	}
	for _, n := range toolset.Names() {
		if !slices.Contains(names, n) {
			t.Errorf("tool %s is not listed with PROXY_TOOLSETS=all", n)
		}
	}
	for _, n := range []string{"browser_navigate", "create_new_session", "get_content"} {
		if !slices.Contains(names, n) {
			t.Errorf("tool %s is not listed with PROXY_TOOLSETS=all", n)
		}
	}

	id := s.createSession(t)
	tested := map[string]bool{}
	run := func(tool string, params any, out any) proxy.CallResult {
		t.Helper()
		tested[tool] = true
		return s.ok(t, id, tool, params, out)
	}

	var nav struct {
		URL, Title string
		Status     int
		OK         bool
	}
	run("navigate", map[string]any{"url": pages + "/index.html"}, &nav)
	if nav.Status != 200 || nav.Title != "Home" || nav.URL != pages+"/index.html" || !nav.OK {
		t.Errorf("navigate = %+v, want status 200 titled Home", nav)
	}
	var load struct{ State, Title string }
	run("wait_for_load", map[string]any{"state": "domcontentloaded"}, &load)
	if load.State != "domcontentloaded" || load.Title != "Home" {
		t.Errorf("wait_for_load = %+v", load)
	}

	var table struct {
		Headers   []string
		Rows      []map[string]string
		TotalRows int `json:"total_rows"`
	}
	run("extract_table", map[string]any{"selector": "#t"}, &table)
	wantRows := []map[string]string{{"Name": "apple", "Qty": "1"}, {"Name": "pear", "Qty": "2"}, {"Name": "fig", "Qty": "3"}}
	if fmt.Sprint(table.Rows) != fmt.Sprint(wantRows) || table.TotalRows != 3 {
		t.Errorf("extract_table = %+v, want rows %v", table, wantRows)
	}

	var success struct {
		Success bool
		Matches int
	}
	run("fill", map[string]any{"selector": "#name", "value": "Bob"}, &success)
	run("click", map[string]any{"selector": "#go"}, &success)
	var text struct{ Text string }
	run("get_text", map[string]any{"selector": "#out"}, &text)
	if text.Text != "Hi Bob" {
		t.Errorf("after fill + click, #out reads %q, want %q", text.Text, "Hi Bob")
	}
	var value struct{ Value *string }
	run("get_value", map[string]any{"selector": "#name"}, &value)
	if value.Value == nil || *value.Value != "Bob" {
		t.Errorf("get_value = %v", value.Value)
	}
	run("type", map[string]any{"selector": "#name", "text": "ert", "clear": false}, &success)
	run("get_value", map[string]any{"selector": "#name"}, &value)
	if value.Value == nil || *value.Value != "Bobert" {
		t.Errorf("after type, value = %q, want Bobert", deref(value.Value))
	}
	var exists struct {
		Exists bool
		Count  int
	}
	run("element_exists", map[string]any{"selector": "#hid"}, &exists)
	if !exists.Exists || exists.Count != 1 {
		t.Errorf("element_exists(#hid) = %+v", exists)
	}
	run("element_exists", map[string]any{"selector": "#nothing-here"}, &exists)
	if exists.Exists {
		t.Errorf("element_exists(#nothing-here) = %+v", exists)
	}
	var visible struct{ Visible bool }
	run("is_visible", map[string]any{"selector": "#hid"}, &visible)
	if visible.Visible {
		t.Error("is_visible(#hid) = true for display:none")
	}
	var enabled struct{ Enabled bool }
	run("is_enabled", map[string]any{"selector": "#dis"}, &enabled)
	if enabled.Enabled {
		t.Error("is_enabled(#dis) = true for a disabled button")
	}
	var sel struct{ Selected []string }
	run("select", map[string]any{"selector": "#s", "values": []string{"Beta"}}, &sel)
	if fmt.Sprint(sel.Selected) != "[b]" {
		t.Errorf("select = %v, want [b]", sel.Selected)
	}
	var checked struct{ Checked bool }
	run("check", map[string]any{"selector": "#c"}, &checked)
	if !checked.Checked {
		t.Error("check left it unchecked")
	}
	run("uncheck", map[string]any{"selector": "#c"}, &checked)
	if checked.Checked {
		t.Error("uncheck left it checked")
	}
	run("hover", map[string]any{"selector": "#hov"}, &success)
	run("get_text", map[string]any{"selector": "#hov"}, &text)
	if text.Text != "hovered" {
		t.Errorf("after hover, #hov reads %q", text.Text)
	}
	run("press", map[string]any{"selector": "#k", "key": "Enter"}, &success)
	run("get_text", map[string]any{"selector": "#out"}, &text)
	if text.Text != "enter" {
		t.Errorf("after press Enter, #out reads %q", text.Text)
	}
	run("drag_and_drop", map[string]any{"source": "#src", "target": "#dst"}, &success)
	run("get_text", map[string]any{"selector": "#out"}, &text)
	if text.Text != "dropped" {
		t.Errorf("after drag_and_drop, #out reads %q", text.Text)
	}
	// A file of the session's own: upload_file takes nothing else.
	upload := filepath.Join(outputDir(t, s, id), "upload.txt")
	if err := writeFile(upload, "hello"); err != nil {
		t.Fatal(err)
	}
	run("upload_file", map[string]any{"selector": "#file", "paths": []string{upload}}, &success)
	var meta struct {
		Title, Description, Lang string
		H1                       []string
		Forms                    int
	}
	run("get_page_metadata", map[string]any{}, &meta)
	if meta.Title != "file:upload.txt" || meta.Description != "A test page" || meta.Lang != "en" || fmt.Sprint(meta.H1) != "[Hello]" || meta.Forms != 1 {
		t.Errorf("get_page_metadata after upload = %+v", meta)
	}
	var scroll struct {
		ScrollY int `json:"scroll_y"`
	}
	run("scroll", map[string]any{"y": 400}, &scroll)
	if scroll.ScrollY != 400 {
		t.Errorf("scroll y=400 → scroll_y %d", scroll.ScrollY)
	}
	run("scroll", map[string]any{"selector": "#bottom"}, &scroll)
	if scroll.ScrollY < 2000 {
		t.Errorf("scroll to #bottom → scroll_y %d", scroll.ScrollY)
	}
	var attr struct{ Value *string }
	run("get_attribute", map[string]any{"selector": "a", "name": "href"}, &attr)
	if attr.Value == nil || *attr.Value != "/second.html" {
		t.Errorf("get_attribute(a, href) = %v", attr.Value)
	}
	run("get_attribute", map[string]any{"selector": "a", "name": "nope"}, &attr)
	if attr.Value != nil {
		t.Errorf("absent attribute = %q, want null", *attr.Value)
	}
	var all struct {
		Texts []string
		Count int
	}
	run("get_all_text", map[string]any{"selector": "td"}, &all)
	if all.Count != 6 || strings.Join(all.Texts, ",") != "apple,1,pear,2,fig,3" {
		t.Errorf("get_all_text(td) = %+v", all)
	}
	var links struct {
		Links []struct{ Text, Href string }
		Total int
	}
	run("extract_links", map[string]any{"filter": "second"}, &links)
	if links.Total != 1 || links.Links[0].Href != pages+"/second.html" || links.Links[0].Text != "Second page" {
		t.Errorf("extract_links(filter second) = %+v", links)
	}
	var found struct {
		Matches    int
		Tag, Text  string
		Attributes map[string]string
		Visible    bool
	}
	run("find_element", map[string]any{"selector": "//button[@id='go']"}, &found)
	if found.Tag != "button" || found.Text != "Go" || found.Attributes["type"] != "submit" || !found.Visible {
		t.Errorf("find_element(xpath) = %+v", found)
	}
	var many struct {
		Count    int
		Elements []struct{ Tag string }
	}
	run("find_elements", map[string]any{"selector": "button"}, &many)
	if many.Count != 2 || len(many.Elements) != 2 {
		t.Errorf("find_elements(button) = %+v", many)
	}
	run("wait_for_selector", map[string]any{"selector": "#out", "state": "visible", "timeout": 2000}, &success)
	shot := run("screenshot_element", map[string]any{"selector": "#t"}, nil)
	if !shot.Metadata.HasImage {
		t.Errorf("screenshot_element: has_image false: %+v", shot)
	}
	var png struct {
		Images []struct {
			MimeType string `json:"mime_type"`
			Data     string
		}
	}
	getJSON(t, s.URL+"/content/"+shot.RefID+"?reset_cursor=true", &png)
	if len(png.Images) != 1 || png.Images[0].MimeType != "image/png" {
		t.Errorf("content of the screenshot ref: %d images", len(png.Images))
	} else if b, _ := base64.StdEncoding.DecodeString(png.Images[0].Data); !bytes.HasPrefix(b, []byte("\x89PNG")) {
		t.Errorf("stored image is not a PNG")
	}

	// History.
	run("navigate", map[string]any{"url": pages + "/second.html", "waitUntil": "domcontentloaded"}, &nav)
	var hist struct {
		Moved      bool
		URL, Title string
		Status     *int
	}
	run("go_back", map[string]any{}, &hist)
	if !hist.Moved || hist.Title != "Home" {
		t.Errorf("go_back = %+v", hist)
	}
	run("go_forward", map[string]any{}, &hist)
	if !hist.Moved || hist.Title != "Second" {
		t.Errorf("go_forward = %+v", hist)
	}
	var reload struct {
		Title  string
		Status int
	}
	run("reload", map[string]any{}, &reload)
	if reload.Title != "Second" || reload.Status != 200 {
		t.Errorf("reload = %+v", reload)
	}

	// State and network tools have tests of their own below; here they
	// must at least answer.
	var cookies struct{ Count int }
	run("set_cookies", map[string]any{"cookies": []map[string]any{{"name": "a", "value": "1", "url": pages}}}, nil)
	run("get_cookies", map[string]any{}, &cookies)
	if cookies.Count != 1 {
		t.Errorf("get_cookies after set_cookies: %d cookies", cookies.Count)
	}
	run("save_state", map[string]any{}, nil)
	run("restore_state", map[string]any{"state": map[string]any{"cookies": []any{}, "origins": []any{}}}, nil)
	run("get_cookies", map[string]any{}, &cookies)
	if cookies.Count != 0 {
		t.Errorf("restore_state of an empty state left %d cookies", cookies.Count)
	}
	run("set_throttling", map[string]any{"latency_ms": 50, "download_kbps": 10000}, nil)
	run("reload", map[string]any{}, nil)
	run("set_throttling", map[string]any{"disable": true}, nil)
	run("set_offline", map[string]any{"offline": false}, nil)
	run("block_resource", map[string]any{"url_patterns": []string{"**/never-requested"}}, nil)
	run("mock_response", map[string]any{"url_pattern": "**/never-requested-either", "body": "x"}, nil)
	var log struct {
		Requests []struct {
			URL    string
			Status *int
		}
	}
	run("get_request_log", map[string]any{"filter": "second"}, &log)
	if len(log.Requests) == 0 || log.Requests[len(log.Requests)-1].Status == nil || *log.Requests[len(log.Requests)-1].Status != 200 {
		t.Errorf("get_request_log(second) = %+v", log)
	}

	for _, n := range toolset.Names() {
		if !tested[n] {
			t.Errorf("tool %s was not exercised", n)
		}
	}
}

// outputDir is the output directory of the worker serving session id, read
// from the worker's command line.
func outputDir(t *testing.T, s *server, id string) string {
	t.Helper()
	var sess proxy.Session
	getJSON(t, s.URL+"/sessions/"+id, &sess)
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", sess.WorkerPID))
	if err != nil {
		t.Fatalf("session %s: the worker's command line: %v", id, err)
	}
	args := strings.Split(string(raw), "\x00")
	if i := slices.Index(args, "--output-dir"); i >= 0 && i+1 < len(args) {
		return args[i+1]
	}
	// A session in a session host has no command line of its own: the
	// server logs the directory it gave the session.
	re := regexp.MustCompile(fmt.Sprintf(`msg="session worker assigned" session_id=%s worker_pid=%d output_dir=(\S+)`, regexp.QuoteMeta(id), sess.WorkerPID))
	if m := re.FindAllStringSubmatch(s.log(), -1); len(m) > 0 {
		return m[len(m)-1][1]
	}
	t.Fatalf("session %s: worker %d has no --output-dir (%q) and no assignment was logged", id, sess.WorkerPID, args)
	return ""
}

func writeFile(path, s string) error { return os.WriteFile(path, []byte(s), 0o600) }

func getJSON(t *testing.T, url string, out any) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("Accept", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
}

func openRO(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro&_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}
