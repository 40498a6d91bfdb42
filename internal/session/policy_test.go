package session

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/policy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/store"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/toolset"
)

// schemaWorker is a fakeWorker offering upstream-like schemas, so that the
// manager has to find URL arguments from them.
type schemaWorker struct{ *fakeWorker }

func (schemaWorker) Tools() []proxy.Tool {
	obj := func(props string) json.RawMessage {
		return json.RawMessage(`{"type":"object","properties":{` + props + `}}`)
	}
	return []proxy.Tool{
		{Name: "browser_navigate", InputSchema: obj(`"url":{"type":"string"}`)},
		{Name: "browser_tabs", InputSchema: obj(`"action":{"type":"string"},"url":{"type":"string"}`)},
		{Name: "browser_type", InputSchema: obj(`"target":{"type":"string"},"text":{"type":"string"}`)},
		{Name: "browser_take_screenshot", InputSchema: obj(`"type":{"type":"string"}`)},
		{Name: "browser_evaluate", InputSchema: obj(`"function":{"type":"string"}`)},
		{Name: "browser_run_code_unsafe", InputSchema: obj(`"code":{"type":"string"}`)},
		{Name: "browser_file_upload", InputSchema: obj(`"paths":{"type":"array"}`)},
	}
}

func newPolicyManager(t *testing.T, cfg policy.Config, answer func(string, json.RawMessage) (json.RawMessage, error)) (*Manager, *store.DB, func() []*fakeWorker) {
	t.Helper()
	pol, err := policy.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	db, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "p.db"))
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var workers []*fakeWorker
	spawn := SpawnFunc(func(context.Context) (Worker, error) {
		w := newFakeWorker(t)
		w.answer = answer
		mu.Lock()
		workers = append(workers, w)
		mu.Unlock()
		return schemaWorker{w}, nil
	})
	m := New(db, spawn, Options{Policy: pol, Logger: slog.New(slog.DiscardHandler), saveDelay: time.Millisecond})
	t.Cleanup(func() {
		m.Shutdown(context.Background())
		db.Close()
	})
	return m, db, func() []*fakeWorker {
		mu.Lock()
		defer mu.Unlock()
		return append([]*fakeWorker(nil), workers...)
	}
}

func calls(ws []*fakeWorker) int {
	n := 0
	for _, w := range ws {
		n += int(w.calls.Load())
	}
	return n
}

// A refused call reaches no worker and leaves no request row: the requests
// table records what was sent to the browser.
func TestPolicyRefusesBeforeForwarding(t *testing.T) {
	ctx := context.Background()
	m, db, workers := newPolicyManager(t, policy.Config{BlockedDomains: []string{"evil.com"}}, nil)
	s, err := m.CreateSession(ctx)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, tool, params, code string
	}{
		{"blocked host", "browser_navigate", `{"url":"https://EVIL.com./x"}`, proxy.EDOMAINBLOCKED},
		{"userinfo trick", "browser_navigate", `{"url":"https://good.com@evil.com/"}`, proxy.EDOMAINBLOCKED},
		{"file url", "browser_navigate", `{"url":"file:///etc/passwd"}`, proxy.EDOMAINBLOCKED},
		{"url found from the schema of another tool", "browser_tabs", `{"action":"new","url":"javascript:alert(1)"}`, proxy.EDOMAINBLOCKED},
		{"script evaluation off", "browser_evaluate", `{"function":"() => 1"}`, proxy.ETOOLMISSING},
		{"unsafe code off", "browser_run_code_unsafe", `{"code":"1"}`, proxy.ETOOLMISSING},
		{"upload off", "browser_file_upload", `{"paths":["/etc/passwd"]}`, proxy.ETOOLMISSING},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ref := uuid.NewString()
			_, err := m.Call(ctx, proxy.CallRequest{SessionID: s.ID, Tool: tt.tool, Params: json.RawMessage(tt.params), RequestID: ref})
			if got := proxy.ErrorCode(err); got != tt.code {
				t.Fatalf("Call = %v, want %s", err, tt.code)
			}
			if e := proxy.AsError(err); e.Suggestion == "" {
				t.Errorf("no suggestion: %+v", e)
			}
			if n := calls(workers()); n != 0 {
				t.Fatalf("the worker got %d calls", n)
			}
			if _, err := db.GetRequest(ctx, ref); proxy.ErrorCode(err) != proxy.EREFMISSING {
				t.Fatalf("refused call was recorded: %v", err)
			}
		})
	}

	tools, err := m.Tools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range tools {
		switch tool.Name {
		case "browser_evaluate", "browser_run_code_unsafe", "browser_file_upload":
			t.Errorf("%s is listed with its switch off", tool.Name)
		}
	}
	upstreamN := 0
	tools = slices.DeleteFunc(tools, func(t proxy.Tool) bool { return t.Proxy }) // the MCP surface's session and content tools
	for _, tool := range tools {
		if strings.HasPrefix(tool.Name, "browser_") {
			upstreamN++
		}
	}
	// The proxy's own tools stay: they run fixed programs, never the
	// caller's code, so the script switch is not theirs.
	if upstreamN != 4 || len(tools)-upstreamN != len(defaultSelection(t).Tools()) {
		t.Errorf("Tools = %d upstream and %d own tools, want the 4 enabled upstream ones and the default groups' %d", upstreamN, len(tools)-upstreamN, len(defaultSelection(t).Tools()))
	}

	if _, err := m.Call(ctx, proxy.CallRequest{SessionID: s.ID, Tool: "browser_navigate", Params: json.RawMessage(`{"url":"https://good.com/"}`)}); err != nil {
		t.Fatalf("allowed navigation: %v", err)
	}
	if n := calls(workers()); n != 1 {
		t.Fatalf("allowed navigation reached the worker %d times", n)
	}
}

// Secrets are masked in every row written and in what is returned, while
// the worker gets the real value; nothing in the database file holds it.
func TestSecretsNeverStored(t *testing.T) {
	ctx := context.Background()
	const secret = "hunter2-Sup3r"
	answer := func(name string, args json.RawMessage) (json.RawMessage, error) {
		text := "### Ran Playwright code\nawait page.fill('" + secret + "');\n### Page\n- Page URL: http://127.0.0.1/?q=" + secret + "\n- Page Title: Submitted " + secret +
			"\n### Snapshot\n```yaml\n- textbox \"Password\" [ref=e1]: " + secret + "\n```"
		return json.Marshal(map[string]any{"content": []any{map[string]any{"type": "text", "text": text}}})
	}
	m, db, workers := newPolicyManager(t, policy.Config{Secrets: map[string]string{"PASSWORD": secret}, EnableScriptEvaluation: true, EnableFileUpload: true}, answer)
	s, err := m.CreateSession(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var got json.RawMessage
	w := workers()[0]
	prev := w.answer
	w.answer = func(name string, args json.RawMessage) (json.RawMessage, error) {
		got = args
		return prev(name, args)
	}
	res, err := m.Call(ctx, proxy.CallRequest{SessionID: s.ID, Tool: "browser_type", Params: json.RawMessage(`{"target":"e1","text":"` + secret + `"}`)})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(got), secret) {
		t.Fatalf("the worker did not get the real value: %s", got)
	}
	mask := policy.Mask("PASSWORD")
	returned, _ := json.Marshal(res)
	if strings.Contains(string(returned), secret) || !strings.Contains(res.Metadata.PageTitle, mask) {
		t.Errorf("returned result holds the secret or no mask: %s", returned)
	}
	req, err := db.GetRequest(ctx, res.RefID)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := db.GetResponse(ctx, res.RefID)
	if err != nil {
		t.Fatal(err)
	}
	for what, v := range map[string]string{"params": string(req.Params), "result": resp.Result, "snapshot": resp.PageSnapshot} {
		if strings.Contains(v, secret) || !strings.Contains(v, mask) {
			t.Errorf("stored %s not masked: %s", what, v)
		}
	}
	m.Shutdown(ctx) // flush: background state saves end, the WAL is written
	db.Close()
	for _, suffix := range []string{"", "-wal"} {
		data, err := os.ReadFile(db.Path() + suffix)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		if bytes.Contains(data, []byte(secret)) {
			t.Errorf("the secret is in %s%s", filepath.Base(db.Path()), suffix)
		}
	}
}

// A screenshot over PROXY_MAX_SCREENSHOT_BYTES is neither stored nor
// returned: the call reports an error that says why.
func TestOversizeScreenshotIsNotKept(t *testing.T) {
	ctx := context.Background()
	img := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{0x89}, 300))
	answer := func(string, json.RawMessage) (json.RawMessage, error) {
		return json.RawMessage(`{"content":[{"type":"text","text":"### Result\nTook the screenshot"},{"type":"image","mimeType":"image/png","data":"` + img + `"}]}`), nil
	}
	m, db, _ := newPolicyManager(t, policy.Config{MaxScreenshotBytes: 100, EnableScriptEvaluation: true, EnableFileUpload: true}, answer)
	s, err := m.CreateSession(ctx)
	if err != nil {
		t.Fatal(err)
	}
	res, err := m.Call(ctx, proxy.CallRequest{SessionID: s.ID, Tool: "browser_take_screenshot"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != proxy.StatusError || !strings.Contains(res.Error, "PROXY_MAX_SCREENSHOT_BYTES") || res.Metadata.HasImage {
		t.Fatalf("result = %+v, want an error naming the limit and no image", res)
	}
	images, err := db.ListImages(ctx, res.RefID)
	if err != nil || len(images) != 0 {
		t.Fatalf("images stored: %d, %v", len(images), err)
	}
	resp, err := db.GetResponse(ctx, res.RefID)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(resp.Result, img) {
		t.Error("the image's base64 is still in the stored result")
	}
}

func defaultSelection(t *testing.T) toolset.Selection {
	t.Helper()
	sel, err := toolset.Select(nil)
	if err != nil {
		t.Fatal(err)
	}
	return sel
}
