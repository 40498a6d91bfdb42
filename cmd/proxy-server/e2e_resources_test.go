//go:build unix

package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf16"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/e2etest"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/mcpserver"
)

// mcpClient is one MCP session on /mcp, with mcp-go's client.
type mcpClient struct {
	t *testing.T
	c *client.Client
}

func dialMCP(t *testing.T, url string) *mcpClient {
	t.Helper()
	tr, err := transport.NewStreamableHTTP(url)
	if err != nil {
		t.Fatal(err)
	}
	return startMCP(t, tr, "e2e-resources", nil)
}

// startMCP starts an MCP client over tr and initializes it, with onNote
// (when set) hearing its notifications from the start.
func startMCP(t *testing.T, tr transport.Interface, name string, onNote func(mcp.JSONRPCNotification)) *mcpClient {
	t.Helper()
	// Pinned: /mcp serves the protocol versions that have sessions.
	c := client.NewClient(tr, client.WithProtocolVersion(mcp.ProtocolVersion20251125))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := c.Start(context.Background()); err != nil {
		t.Fatalf("%s: start: %v", name, err)
	}
	t.Cleanup(func() { c.Close() })
	if onNote != nil {
		c.OnNotification(onNote)
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.ProtocolVersion20251125
	init.Params.ClientInfo = mcp.Implementation{Name: name, Version: "1"}
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatalf("%s: initialize: %v", name, err)
	}
	return &mcpClient{t: t, c: c}
}

func (m *mcpClient) ctx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), 2*time.Minute)
}

// callText calls a tool and returns its first text content.
func (m *mcpClient) callText(tool string, args map[string]any) string {
	m.t.Helper()
	ctx, cancel := m.ctx()
	defer cancel()
	req := mcp.CallToolRequest{}
	req.Params.Name = tool
	req.Params.Arguments = args
	res, err := m.c.CallTool(ctx, req)
	if err != nil {
		m.t.Fatalf("%s: %v", tool, err)
	}
	if res.IsError || len(res.Content) == 0 {
		m.t.Fatalf("%s failed: %+v", tool, res.Content)
	}
	text, ok := res.Content[0].(mcp.TextContent)
	if !ok {
		m.t.Fatalf("%s answered %T first", tool, res.Content[0])
	}
	return text.Text
}

// browser calls a browser tool and returns what its answer says.
func (m *mcpClient) browser(tool string, args map[string]any) mcpserver.Parsed {
	m.t.Helper()
	text := m.callText(tool, args)
	res, err := mcpserver.ParseAnswer(text)
	if err != nil || res.Error != "" {
		m.t.Fatalf("%s answered %q: %v", tool, text, err)
	}
	return res
}

// defaultSession is the id of this client's default session, the one its
// browser calls without a session_id go to.
func (m *mcpClient) defaultSession() string {
	m.t.Helper()
	id, err := e2etest.DefaultSession(m.callText("list_sessions", nil))
	if err != nil {
		m.t.Fatal(err)
	}
	return id
}

func (m *mcpClient) read(uri string) ([]mcp.ResourceContents, error) {
	ctx, cancel := m.ctx()
	defer cancel()
	req := mcp.ReadResourceRequest{}
	req.Params.URI = uri
	res, err := m.c.ReadResource(ctx, req)
	if err != nil {
		return nil, err
	}
	return res.Contents, nil
}

// readText reads a resource that must be one text.
func (m *mcpClient) readText(uri string) mcp.TextResourceContents {
	m.t.Helper()
	contents, err := m.read(uri)
	if err != nil {
		m.t.Fatalf("read %s: %v", uri, err)
	}
	if len(contents) != 1 {
		m.t.Fatalf("read %s: %d contents, want 1", uri, len(contents))
	}
	text, ok := contents[0].(mcp.TextResourceContents)
	if !ok {
		m.t.Fatalf("read %s: %T, want text", uri, contents[0])
	}
	return text
}

func (m *mcpClient) prompt(name string, args map[string]string) (string, error) {
	ctx, cancel := m.ctx()
	defer cancel()
	req := mcp.GetPromptRequest{}
	req.Params.Name = name
	req.Params.Arguments = args
	res, err := m.c.GetPrompt(ctx, req)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, msg := range res.Messages {
		if text, ok := msg.Content.(mcp.TextContent); ok {
			b.WriteString(text.Text)
		}
	}
	return b.String(), nil
}

// TestResourcesOverMCP reads sessions, refs, screenshots and console
// messages as MCP resources on /mcp, against real workers and Chromium, and
// checks that a resource read leaves get_content's diff cursor alone.
func TestResourcesOverMCP(t *testing.T) {
	s := startServer(t, "", nil)
	pages := site(t)
	m := dialMCP(t, s.URL+"/mcp")

	nav := m.browser("browser_navigate", map[string]any{"url": pages + "/index.html"})
	// No scale: zod lists its defaulted scale as required, and /mcp must
	// still accept the call as upstream does.
	shot := m.browser("browser_take_screenshot", map[string]any{})
	if !shot.Image {
		t.Fatalf("screenshot = %+v, want an image", shot)
	}
	sessionID := m.defaultSession()

	ctx, cancel := m.ctx()
	defer cancel()
	list, err := m.c.ListResources(ctx, mcp.ListResourcesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	sessionURI := "playwright:///session/" + sessionID
	var listed *mcp.Resource
	for i, r := range list.Resources {
		if r.URI == sessionURI {
			listed = &list.Resources[i]
		}
	}
	if listed == nil || listed.MIMEType != "application/json" || listed.Title != "Test Home" {
		t.Fatalf("resources/list = %+v, want %s (application/json, titled Test Home)", list.Resources, sessionURI)
	}
	tpls, err := m.c.ListResourceTemplates(ctx, mcp.ListResourceTemplatesRequest{})
	if err != nil || len(tpls.ResourceTemplates) != 8 {
		t.Fatalf("resources/templates/list = %+v, %v; want 8 templates", tpls, err)
	}

	var sess map[string]any
	if text := m.readText(sessionURI); text.MIMEType != "application/json" || json.Unmarshal([]byte(text.Text), &sess) != nil {
		t.Fatalf("session resource %q is not JSON", text.Text)
	}
	if sess["session_id"] != sessionID || sess["state"] != "active" || sess["last_url"] != pages+"/" || sess["last_title"] != "Test Home" ||
		sess["created_at"] == nil || sess["last_activity"] == nil || sess["expires_at"] == nil || sess["default"] != true {
		t.Errorf("session resource = %v", sess)
	}

	// The ref, whole, as many times as wanted: get_content still starts
	// from the beginning afterwards.
	var snap string
	for range 2 {
		ref := m.readText("playwright:///ref/" + nav.RefID)
		if ref.MIMEType != "application/yaml" || !strings.Contains(ref.Text, `button "Search now" [ref=`) {
			t.Fatalf("ref resource = %s, %d bytes; want the yaml snapshot:\n%s", ref.MIMEType, len(ref.Text), ref.Text)
		}
		snap = ref.Text
	}
	if got := m.callText("get_content", map[string]any{"ref_id": nav.RefID}); got != snap {
		t.Errorf("get_content after reading the resource = %d bytes, want the whole %d-byte snapshot", len(got), len(snap))
	}
	if got := m.callText("get_content", map[string]any{"ref_id": nav.RefID}); got != "" {
		t.Errorf("second get_content = %q, want empty (unchanged)", got)
	}
	if ref := m.readText("playwright:///ref/" + nav.RefID); ref.Text != snap {
		t.Errorf("the resource after get_content is not the whole snapshot")
	}
	if got := m.callText("get_content", map[string]any{"ref_id": nav.RefID}); got != "" {
		t.Errorf("get_content after another resource read = %q, want still empty", got)
	}

	contents, err := m.read("playwright:///screenshot/" + shot.RefID)
	if err != nil || len(contents) != 1 {
		t.Fatalf("screenshot resource = %d contents, %v", len(contents), err)
	}
	blob, ok := contents[0].(mcp.BlobResourceContents)
	if !ok || blob.MIMEType != "image/png" {
		t.Fatalf("screenshot resource = %T %+v, want an image/png blob", contents[0], contents[0])
	}
	png, err := base64.StdEncoding.DecodeString(blob.Blob)
	if err != nil || !bytes.HasPrefix(png, []byte("\x89PNG\r\n\x1a\n")) {
		t.Errorf("screenshot blob is not a PNG (%d bytes, %v)", len(png), err)
	}
	if _, err := m.read("playwright:///screenshot/" + nav.RefID); err == nil || !strings.Contains(err.Error(), proxy.EREFMISSING) {
		t.Errorf("screenshot of a navigation = %v, want %s", err, proxy.EREFMISSING)
	}

	cons := m.browser("browser_navigate", map[string]any{"url": pages + "/console.html"})
	text := m.readText("playwright:///console/" + cons.RefID)
	for _, want := range []string{"[INFO] plain log line", "[WARN] careful warning line", "[ERROR] broken error line"} {
		if !strings.Contains(text.Text, want) {
			t.Errorf("console resource lacks %q:\n%s", want, text.Text)
		}
	}

	for _, tc := range []struct{ uri, code string }{
		{"playwright:///ref/00000000-0000-4000-8000-000000000000", proxy.EREFMISSING},
		{"playwright:///session/00000000-0000-4000-8000-000000000000", proxy.ESESSIONMISSING},
		{"playwright:///ref/", proxy.EINVALID},
	} {
		if _, err := m.read(tc.uri); err == nil || !strings.Contains(err.Error(), tc.code) {
			t.Errorf("read %s = %v, want an error naming %s", tc.uri, err, tc.code)
		}
	}
}

// TestResourcesPromptsAndCredentialVault renders prompts on /mcp and
// follows authenticate's placeholder to the browser: the page gets the
// real password, while the answers and the record only ever hold the
// placeholder.
func TestResourcesPromptsAndCredentialVault(t *testing.T) {
	// Quotes and a non-ASCII letter: the placeholder is revealed inside
	// JSON strings and a JavaScript literal.
	const password = `S3cret "pa55" ✓ zq81`
	s := startServer(t, "", nil)
	pages := site(t)
	m := dialMCP(t, s.URL+"/mcp")

	text, err := m.prompt("fill_form", map[string]string{"url": pages + "/index.html", "form_data": `{"q":"books"}`})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text, "button[type='submit']") || !strings.Contains(text, `"books"`) || !strings.Contains(text, pages+"/index.html") {
		t.Errorf("fill_form without submit_button does not show the default:\n%s", text)
	}
	if _, err := m.prompt("authenticate", map[string]string{"url": pages + "/index.html", "username": "alice"}); err == nil || !strings.Contains(err.Error(), "missing required argument password") {
		t.Errorf("authenticate without a password = %v, want an error naming it", err)
	}

	text, err = m.prompt("authenticate", map[string]string{"url": pages + "/index.html", "username": "alice", "password": password, "password_selector": "#q", "submit_selector": "button"})
	if err != nil {
		t.Fatal(err)
	}
	placeholder := regexp.MustCompile(`<secret>cred_[0-9a-f]{16}</secret>`).FindString(text)
	if placeholder == "" || strings.Contains(text, password) {
		t.Fatalf("authenticate rendered (want a placeholder, never the password):\n%s", text)
	}

	m.browser("browser_navigate", map[string]any{"url": pages + "/index.html"})
	// Typed into the field and submitted: the page sets its title from
	// the field's value.
	typed := m.browser("browser_type", map[string]any{"element": "Search query", "target": "#q", "text": placeholder, "submit": true})
	if want := "Submitted " + placeholder; typed.PageTitle != want {
		t.Errorf("title after submitting the placeholder = %q, want %q (the page got the password, the answer shows the placeholder)", typed.PageTitle, want)
	}
	// Inside code: the browser runs it with the password.
	set := m.browser("browser_evaluate", map[string]any{"function": "() => { document.title = '" + placeholder + "'; return 'ok'; }"})
	if set.PageTitle != placeholder {
		t.Errorf("title after browser_evaluate = %q, want the placeholder", set.PageTitle)
	}
	// The page holds the real password: its length and code units match,
	// and neither call carries the password itself.
	units := utf16.Encode([]rune(password))
	sum := 0
	for _, u := range units {
		sum += int(u)
	}
	probe := m.browser("browser_evaluate", map[string]any{"function": "() => [document.title.length, [...document.title].reduce((s, c) => s + c.charCodeAt(0), 0)].join(',')"})
	got := m.callText("get_content", map[string]any{"ref_id": probe.RefID})
	if want := strconv.Itoa(len(units)) + "," + strconv.Itoa(sum); !strings.Contains(got, want) {
		t.Errorf("the page's title is not the password (did the placeholder reach the browser unrevealed?): probe answered\n%s\nwant %s in it", got, want)
	}
	snap := m.browser("browser_snapshot", map[string]any{})
	if got := m.callText("get_content", map[string]any{"ref_id": snap.RefID}); strings.Contains(got, password) {
		t.Errorf("the snapshot shows the password:\n%s", got)
	}

	// The record holds the placeholder, never the password.
	db := openRO(t, s.DBPath)
	spellings := []string{password, strings.Trim(mustJSONString(t, password), `"`)}
	for _, q := range []string{
		"SELECT COALESCE(params, '') FROM requests",
		"SELECT COALESCE(result, '') || COALESCE(page_snapshot, '') || COALESCE(console_logs, '') || COALESCE(error_message, '') FROM responses",
		"SELECT COALESCE(message, '') FROM console_logs",
		"SELECT COALESCE(metadata, '') FROM sessions",
	} {
		rows, err := db.Query(q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		for rows.Next() {
			var v string
			if err := rows.Scan(&v); err != nil {
				t.Fatal(err)
			}
			for _, sp := range spellings {
				if strings.Contains(v, sp) {
					t.Errorf("%s: the password is recorded in %q", q, v)
				}
			}
		}
		if err := rows.Close(); err != nil {
			t.Fatal(err)
		}
	}
	var params string
	if err := db.QueryRow("SELECT params FROM requests WHERE tool_name = 'browser_type'").Scan(&params); err != nil || !strings.Contains(params, strings.Trim(mustJSONString(t, placeholder), `"`)) && !strings.Contains(params, placeholder) {
		t.Errorf("recorded browser_type params = %q, %v; want the placeholder", params, err)
	}

	// Nor is it anywhere in the database files.
	m.c.Close()
	s.stop()
	for _, suffix := range []string{"", "-wal"} {
		data, err := os.ReadFile(s.DBPath + suffix)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		for _, sp := range spellings {
			if bytes.Contains(data, []byte(sp)) {
				t.Errorf("the password is in %s%s", filepath.Base(s.DBPath), suffix)
			}
		}
	}
}

func mustJSONString(t *testing.T, s string) string {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
