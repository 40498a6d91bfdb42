package session

// Property-based tests (pgregory.net/rapid, 100 runs each) of the proxy's
// invariants as they apply to its own browser tools (toolset):
//
//   - a session id that names no session is SESSION_NOT_FOUND, naming the
//     session, for every tool the server lists;
//   - arguments reach the tool's program byte for byte as data, the code
//     around them never changes, and the record keeps them once (the
//     program's echo is scrubbed); a successful action reports success;
//   - a successful navigate reports url, title and status;
//   - every failure has a documented code, a message, retryable, a
//     suggestion and the session; different failures have different codes;
//   - PROXY_TOOLSETS is honoured: exactly the selected groups are listed and
//     callable.
//
// The worker is the fake of manager_test.go offering browser_run_code_unsafe;
// it decodes each program's argument blob the way the program itself does.

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/uuid"
	"pgregory.net/rapid"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/catalog"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/toolset"
)

// runnerWorker offers upstream's program runner besides the fake's tools.
type runnerWorker struct{ *fakeWorker }

func (w runnerWorker) Tools() []proxy.Tool {
	return append(w.fakeWorker.Tools(), proxy.Tool{Name: toolset.RunTool, InputSchema: json.RawMessage(`{"type":"object","properties":{"code":{"type":"string"}}}`)})
}

// program is one decoded call of browser_run_code_unsafe.
type program struct {
	args     map[string]any
	skeleton string // the code with its argument blob cut out
	blob     string
}

var blobRE = regexp.MustCompile(`Buffer\.from\('([A-Za-z0-9+/=]*)', 'base64'\)`)

func decodeProgram(raw json.RawMessage) (program, error) {
	var a struct{ Code string }
	if err := json.Unmarshal(raw, &a); err != nil {
		return program{}, err
	}
	m := blobRE.FindStringSubmatch(a.Code)
	if m == nil {
		return program{}, fmt.Errorf("no argument blob in the program")
	}
	data, err := base64.StdEncoding.DecodeString(m[1])
	if err != nil {
		return program{}, err
	}
	p := program{skeleton: strings.Replace(a.Code, m[1], "", 1), blob: m[1]}
	if err := json.Unmarshal(data, &p.args); err != nil {
		return program{}, err
	}
	return p, nil
}

// runResult is upstream's answer to browser_run_code_unsafe: the program's
// JSON answer as its result, and the code it ran echoed.
func runResult(answer any, code string) json.RawMessage {
	b, _ := json.Marshal(answer)
	text := "### Result\n" + string(b) + "\n### Ran Playwright code\n```js\nawait (" + code + ")(page);\n```"
	out, _ := json.Marshal(map[string]any{"content": []map[string]string{{"type": "text", "text": text}}})
	return out
}

func isOwn(name string) bool {
	_, ok := toolset.All().Lookup(name)
	return ok
}

func newToolsetManager(tt *testing.T, groups []string, answer func(name string, args json.RawMessage) (json.RawMessage, error)) *Manager {
	tt.Helper()
	sel, err := toolset.Select(groups)
	if err != nil {
		tt.Fatal(err)
	}
	db := propDB(tt)
	m := New(db, SpawnFunc(func(context.Context) (Worker, error) {
		w := newFakeWorker(tt)
		w.answer = answer
		return runnerWorker{w}, nil
	}), Options{Toolset: sel, Logger: slog.New(slog.DiscardHandler)})
	tt.Cleanup(func() { m.Shutdown(context.Background()) })
	return m
}

// validParams draws arguments that satisfy a tool's input schema: its
// required properties (and one alternative of an anyOf), with values of the
// declared types drawn at random.
func validParams(t *rapid.T, schema json.RawMessage) map[string]any {
	var s struct {
		Properties map[string]map[string]any `json:"properties"`
		Required   []string                  `json:"required"`
		AnyOf      []struct {
			Required []string `json:"required"`
		} `json:"anyOf"`
	}
	if err := json.Unmarshal(schema, &s); err != nil {
		t.Fatal(err)
	}
	names := append([]string(nil), s.Required...)
	if len(s.AnyOf) > 0 {
		names = append(names, rapid.SampledFrom(s.AnyOf).Draw(t, "alternative").Required...)
	}
	out := map[string]any{}
	for _, n := range names {
		out[n] = drawValue(t, n, s.Properties[n])
	}
	return out
}

// inOutputDir puts upload_file's paths in the session's output directory:
// any other is refused before a program is built. The file's name, with
// quotes and backslashes, stays inside it.
func inOutputDir(t *rapid.T, m *Manager, id, tool string, params map[string]any) {
	if tool == "upload_file" {
		params["paths"] = []any{filepath.Join(m.reg.get(id).worker.OutputDir(), rapid.StringMatching("[A-Za-z0-9'\"`${} \\\\]{1,20}").Draw(t, "file"))}
	}
}

func drawValue(t *rapid.T, name string, p map[string]any) any {
	if enum, ok := p["enum"].([]any); ok {
		return rapid.SampledFrom(enum).Draw(t, name)
	}
	switch p["type"] {
	case "string":
		if strings.Contains(name, "url") && !strings.Contains(name, "pattern") {
			return "http://127.0.0.1:8080/" + rapid.StringMatching(`[a-z0-9/]{0,12}`).Draw(t, name)
		}
		return rapid.StringN(1, 40, -1).Draw(t, name)
	case "boolean":
		return rapid.Bool().Draw(t, name)
	case "integer":
		return 1
	case "object":
		return map[string]any{}
	case "array":
		items, _ := p["items"].(map[string]any)
		if items["type"] == "object" {
			return []any{map[string]any{"name": "n", "value": "v", "url": "http://127.0.0.1/"}}
		}
		return []any{drawValue(t, name+"[0]", items)}
	}
	return rapid.StringN(1, 20, -1).Draw(t, name)
}

func TestPropertyUnknownSessionForEveryTool(tt *testing.T) {
	m := newToolsetManager(tt, []string{"all"}, nil)
	ctx := context.Background()
	if _, err := m.Tools(ctx); err != nil {
		tt.Fatal(err)
	}
	// Every tool with its whole schema (a listed one has its top-level
	// alternatives flattened into its description), so that the drawn
	// arguments are valid.
	tools := (runnerWorker{newFakeWorker(tt)}).Tools()
	for _, own := range toolset.All().Tools() {
		tools = append(tools, proxy.Tool{Name: own.Name, InputSchema: own.InputSchema})
	}
	rapid.Check(tt, func(t *rapid.T) {
		tool := rapid.SampledFrom(tools).Draw(t, "tool")
		id := uuid.NewString()
		params, _ := json.Marshal(validParams(t, tool.InputSchema))
		_, err := m.Call(ctx, proxy.CallRequest{SessionID: id, Tool: tool.Name, Params: params})
		e := proxy.AsError(err)
		if r, _ := catalog.ReviewOf(tool.Name); !tool.Proxy && !isOwn(tool.Name) && r.Reach != catalog.InPage {
			// Hidden while sessions share a browser: refused before any
			// session is looked at.
			if e.Code != proxy.ETOOLMISSING {
				t.Fatalf("%s(%s) = %+v, want TOOL_NOT_FOUND", tool.Name, params, e)
			}
			return
		}
		if e.Code != proxy.ESESSIONMISSING || e.Details["session_id"] != id || e.Message == "" || e.Suggestion == "" {
			t.Fatalf("%s(%s) in unknown session %s = %+v, want SESSION_NOT_FOUND naming it", tool.Name, params, id, e)
		}
	})
}

// The interaction tools: each answers {success: true} when it worked.
var actions = []string{"click", "type", "fill", "select", "check", "uncheck", "hover", "scroll", "drag_and_drop", "upload_file", "press"}

func TestPropertyArgumentsAreDataAndActionsReportSuccess(tt *testing.T) {
	skeletons := map[string]string{}
	var last program
	m := newToolsetManager(tt, []string{"all"}, func(name string, args json.RawMessage) (json.RawMessage, error) {
		p, err := decodeProgram(args)
		if err != nil {
			return nil, err
		}
		last = p
		var a struct{ Code string }
		_ = json.Unmarshal(args, &a)
		return runResult(map[string]any{"pwproxy": 1, "ok": true, "value": map[string]any{"success": true, "matches": 1}}, a.Code), nil
	})
	ctx := context.Background()
	s, err := m.CreateSession(ctx)
	if err != nil {
		tt.Fatal(err)
	}
	all, _ := toolset.Select([]string{"all"})
	db := m.store.(interface {
		GetResponse(context.Context, string) (*proxy.Response, error)
	})
	rapid.Check(tt, func(t *rapid.T) {
		name := rapid.SampledFrom(actions).Draw(t, "tool")
		tool, _ := all.Lookup(name)
		params := validParams(t, tool.InputSchema)
		// Strings that would break out of a quoted literal if pasted.
		for k, v := range params {
			if str, ok := v.(string); ok && k != "key" {
				params[k] = str + rapid.SampledFrom([]string{"'", `"`, "`", "${1}", `\`, "\u2028", "</script>"}).Draw(t, "breaker")
			}
		}
		inOutputDir(t, m, s.ID, name, params)
		raw, _ := json.Marshal(params)
		res, err := m.Call(ctx, proxy.CallRequest{SessionID: s.ID, Tool: name, Params: raw})
		if err != nil {
			t.Fatalf("%s(%s): %v", name, raw, err)
		}
		var want map[string]any
		_ = json.Unmarshal(raw, &want)
		if got, _ := json.Marshal(last.args); string(got) != mustMarshal(want) {
			t.Fatalf("the program got %s, the caller sent %s", got, raw)
		}
		if sk, ok := skeletons[name]; ok && sk != last.skeleton {
			t.Fatalf("the code of %s changed with its arguments", name)
		}
		skeletons[name] = last.skeleton
		var v struct{ Success bool }
		if res.Status != proxy.StatusSuccess || json.Unmarshal(res.Value, &v) != nil || !v.Success || res.SessionID != s.ID {
			t.Fatalf("%s = %+v, want success with success=true", name, res)
		}
		resp, err := db.GetResponse(ctx, res.RefID)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(resp.Result, last.blob) || !strings.Contains(resp.Result, blobMark) {
			t.Fatalf("the record keeps the encoded arguments: %.200s", resp.Result)
		}
	})
}

func mustMarshal(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func TestPropertyNavigationResponseIsComplete(tt *testing.T) {
	type page struct {
		URL, Title string
		Status     int
	}
	var next page
	m := newToolsetManager(tt, []string{"navigation"}, func(name string, args json.RawMessage) (json.RawMessage, error) {
		return runResult(map[string]any{"pwproxy": 1, "ok": true, "value": map[string]any{"url": next.URL, "title": next.Title, "status": next.Status, "ok": next.Status < 400}}, ""), nil
	})
	ctx := context.Background()
	s, err := m.CreateSession(ctx)
	if err != nil {
		tt.Fatal(err)
	}
	rapid.Check(tt, func(t *rapid.T) {
		next = page{
			URL:    "http://127.0.0.1:" + fmt.Sprint(rapid.IntRange(1024, 65535).Draw(t, "port")) + "/" + rapid.StringMatching(`[a-z0-9._~/-]{0,30}`).Draw(t, "path"),
			Title:  rapid.String().Draw(t, "title"),
			Status: rapid.IntRange(100, 599).Draw(t, "status"),
		}
		raw, _ := json.Marshal(map[string]string{"url": next.URL})
		res, err := m.Call(ctx, proxy.CallRequest{SessionID: s.ID, Tool: "navigate", Params: raw})
		if err != nil {
			t.Fatal(err)
		}
		var got struct {
			URL    *string
			Title  *string
			Status *int
		}
		if err := json.Unmarshal(res.Value, &got); err != nil || got.URL == nil || got.Title == nil || got.Status == nil {
			t.Fatalf("navigate answered %s: url, title and status are required", res.Value)
		}
		if *got.URL != next.URL || *got.Title != next.Title || *got.Status != next.Status {
			t.Fatalf("navigate = %s, the browser said %+v", res.Value, next)
		}
	})
}

func TestPropertyErrorStructure(tt *testing.T) {
	type failure struct {
		code, message string
		thrown        bool // upstream's own ### Error instead of our envelope
	}
	var next failure
	m := newToolsetManager(tt, []string{"all"}, func(name string, args json.RawMessage) (json.RawMessage, error) {
		if next.thrown {
			b, _ := json.Marshal(map[string]any{"isError": true, "content": []map[string]string{{"type": "text", "text": "### Error\n" + next.message}}})
			return b, nil
		}
		return runResult(map[string]any{"pwproxy": 1, "ok": false, "error": map[string]string{"code": next.code, "message": next.message}}, ""), nil
	})
	ctx := context.Background()
	s, err := m.CreateSession(ctx)
	if err != nil {
		tt.Fatal(err)
	}
	known := []string{proxy.EELEMENTMISSING, proxy.ENOTINTERACTIVE, proxy.EINVALIDSELECTOR, proxy.ENAVIGATION, proxy.ETIMEOUT, proxy.EBROWSER}
	thrown := map[string]string{
		"page.goto: net::ERR_CONNECTION_REFUSED at http://127.0.0.1:1/":   proxy.ENAVIGATION,
		"locator.click: Timeout 5000ms exceeded.":                         proxy.ETIMEOUT,
		"Ref e7 not found in the current page snapshot.":                  proxy.EELEMENTMISSING,
		"Failed to parse selector: div[":                                  proxy.EINVALIDSELECTOR,
		"Error: page.evaluate: TypeError: cannot read properties of null": proxy.EBROWSER,
	}
	var thrownTexts []string
	for k := range thrown {
		thrownTexts = append(thrownTexts, k)
	}
	sort.Strings(thrownTexts)
	all, _ := toolset.Select([]string{"all"})
	seen := map[string]string{} // code → suggestion
	rapid.Check(tt, func(t *rapid.T) {
		tool := rapid.SampledFrom(all.Tools()).Draw(t, "tool")
		want := ""
		if rapid.Bool().Draw(t, "thrown") {
			next = failure{thrown: true, message: rapid.SampledFrom(thrownTexts).Draw(t, "text")}
			want = thrown[next.message]
		} else {
			next = failure{code: rapid.OneOf(rapid.SampledFrom(known), rapid.StringMatching(`[A-Z_]{1,20}`)).Draw(t, "code"), message: rapid.StringN(1, 100, -1).Draw(t, "message")}
			want = next.code
			if !slices.Contains(known, want) {
				want = proxy.EBROWSER
			}
		}
		drawn := validParams(t, tool.InputSchema)
		inOutputDir(t, m, s.ID, tool.Name, drawn)
		params, _ := json.Marshal(drawn)
		if tool.Name == "restore_state" {
			params = json.RawMessage(`{"state":{}}`)
		}
		res, err := m.Call(ctx, proxy.CallRequest{SessionID: s.ID, Tool: tool.Name, Params: params})
		if err != nil {
			t.Fatalf("%s: %v", tool.Name, err)
		}
		if res.Status != proxy.StatusError || res.ErrorCode != want || res.Error == "" || res.Retryable == nil || res.Suggestion == "" || res.SessionID != s.ID || res.RefID == "" {
			t.Fatalf("%s failing with %+v = %+v, want error %s with message, retryable, suggestion and session", tool.Name, next, res, want)
		}
		if *res.Retryable != proxy.Errorf(want, "").Retryable {
			t.Fatalf("%s: retryable %v", want, *res.Retryable)
		}
		if sug, ok := seen[res.ErrorCode]; ok && sug != res.Suggestion {
			t.Fatalf("%s has two suggestions", res.ErrorCode)
		}
		seen[res.ErrorCode] = res.Suggestion
	})
	// Different failures, different codes — and each code its own advice.
	suggestions := map[string]bool{}
	for _, code := range known {
		sug := proxy.Errorf(code, "").Suggestion
		if sug == "" || suggestions[sug] {
			tt.Errorf("code %s has no suggestion of its own", code)
		}
		suggestions[sug] = true
	}
}

func TestPropertyToolsetsAreHonoured(tt *testing.T) {
	groups := toolset.Groups()
	rapid.Check(tt, func(t *rapid.T) {
		chosen := rapid.SliceOfDistinct(rapid.SampledFrom(groups), func(g string) string { return g }).Draw(t, "groups")
		if len(chosen) == 0 {
			chosen = []string{toolset.GroupSession} // empty means the defaults
		}
		m := newToolsetManager(tt, chosen, nil)
		sel, _ := toolset.Select(chosen)
		ctx := context.Background()
		tools, err := m.Tools(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var got, want []string
		for _, tl := range tools {
			if !tl.Proxy { // the session and content tools are the MCP surface's
				got = append(got, tl.Name)
			}
		}
		if slices.Contains(chosen, toolset.GroupUpstream) {
			for _, tl := range (runnerWorker{newFakeWorker(tt)}).Tools() {
				// Whatever the groups, a shared browser's sessions are
				// never offered upstream's tools that reach outside the page.
				if r, _ := catalog.ReviewOf(tl.Name); r.Reach == catalog.InPage {
					want = append(want, tl.Name)
				}
			}
		}
		for _, tl := range sel.Tools() {
			want = append(want, tl.Name)
		}
		sort.Strings(got)
		sort.Strings(want)
		if !slices.Equal(got, want) {
			t.Fatalf("groups %v list %v, want %v", chosen, got, want)
		}
		// A tool outside the selection is not callable.
		for _, name := range toolset.Names() {
			if _, ok := sel.Lookup(name); ok {
				continue
			}
			_, err := m.Call(ctx, proxy.CallRequest{SessionID: uuid.NewString(), Tool: name, Params: json.RawMessage(`{"selector":"#x"}`)})
			if proxy.ErrorCode(err) != proxy.ETOOLMISSING {
				t.Fatalf("%s outside groups %v: %v, want TOOL_NOT_FOUND", name, chosen, err)
			}
			break
		}
	})
}
