package export

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/wire"
)

var update = flag.Bool("update", false, "rewrite golden files")

var t0 = time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC)

// captured is an answer @playwright/mcp gave, from upstream's test data.
func captured(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "answer", "testdata", "results", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func call(ref, tool, params string, resp *proxy.Response) proxy.Call {
	c := proxy.Call{Request: proxy.Request{RefID: ref, SessionID: "s1", ToolName: tool, Params: json.RawMessage(params), Timestamp: t0}}
	if resp != nil {
		resp.RefID = ref
		c.Response = resp
	}
	return c
}

func ok(result string) *proxy.Response {
	return &proxy.Response{Status: proxy.StatusSuccess, Result: result, Timestamp: t0}
}

// recorded is a session as the proxy records it: real answers of upstream.
func recorded(t *testing.T) (*proxy.Session, []proxy.Call) {
	s := &proxy.Session{ID: "s1", CreatedAt: t0, LastActivity: t0, State: proxy.SessionActive}
	return s, []proxy.Call{
		call("r1", "browser_navigate", `{"url":"http://127.0.0.1:8765/index.html"}`, ok(captured(t, "00_navigate.json"))),
		call("r2", "browser_snapshot", `{}`, ok(captured(t, "01_snapshot.json"))),
		call("r3", "browser_click", `{"ref":"e999","element":"Nothing"}`, &proxy.Response{Status: proxy.StatusError, ErrorMessage: "Ref e999 not found", Timestamp: t0}),
		call("r4", "browser_evaluate", `{"function":"() => document.title"}`, ok(captured(t, "08_evaluate.json"))),
		call("r5", "browser_navigate", `{"url":"http://127.0.0.1:8765/second.html"}`, ok(captured(t, "05_navigate.json"))),
		call("r6", "browser_click", `{"ref":"e2"}`, nil),
	}
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -run %s -update to create it)", err, t.Name())
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s mismatch (-want +got):\n%s", name, diff)
	}
}

func TestPlaywright(t *testing.T) {
	s, calls := recorded(t)
	golden(t, "session.spec.ts", Playwright(s, calls))
}

func TestJSON(t *testing.T) {
	s, calls := recorded(t)
	events := []proxy.SessionEvent{{SessionID: "s1", At: t0, Kind: proxy.EventCreated, Detail: "worker 7"}}
	out, err := JSON(s, calls, events, true)
	if err != nil {
		t.Fatal(err)
	}
	var rec wire.ExportRecord
	if err := json.Unmarshal(out, &rec); err != nil {
		t.Fatalf("the export is not JSON: %v", err)
	}
	if len(rec.Calls) != len(calls) || rec.Session.ID != "s1" {
		t.Fatalf("export holds %d calls of session %q, want %d of s1", len(rec.Calls), rec.Session.ID, len(calls))
	}
	first := rec.Calls[0]
	if first.PageURL != "http://127.0.0.1:8765/index.html" || first.PageTitle != "Probe Page" || !strings.Contains(first.Code, "page.goto") {
		t.Errorf("first call read as %+v", first)
	}
	if first.Response.Result != calls[0].Response.Result {
		t.Error("the stored answer is not exported whole")
	}
	if rec.Calls[5].Response != nil {
		t.Error("a call without an answer got one")
	}

	calls[1].Response.PageSnapshot = "- heading \"Zebracorn\""
	if len(rec.Events) != 1 || rec.Events[0].Kind != proxy.EventCreated {
		t.Errorf("events exported as %+v", rec.Events)
	}
	lean, err := JSON(s, calls, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(lean), "Zebracorn") || !strings.Contains(string(lean), `"snapshot_bytes": 21`) {
		t.Errorf("without snapshots: the snapshot is shown or its size is not:\n%s", lean)
	}
	if calls[1].Response.PageSnapshot == "" {
		t.Error("leaving snapshots out changed the caller's calls")
	}
}

// TestPlaywrightHostile: what a page or a model controls (titles, URLs,
// error texts, parameters) cannot break out of a comment or a string.
func TestPlaywrightHostile(t *testing.T) {
	s := &proxy.Session{ID: "s1", CreatedAt: t0}
	hostileTitle := "x'); require('child_process').exec('rm -rf /'); ('\u2028"
	result := `{"content":[{"type":"text","text":"### Ran Playwright code\n` + "```js\\nawait page.goto('http://127.0.0.1/a');\\n```" +
		`\n### Page\n- Page URL: http://127.0.0.1/a\n- Page Title: ` + strings.ReplaceAll(hostileTitle, "'", "\\u0027") + `"}]}`
	calls := []proxy.Call{
		call("r1", "browser_navigate", `{"url":"http://127.0.0.1/a\u2028alert(1)"}`, ok(result)),
		call("r2", "browser_click", `{}`, &proxy.Response{Status: proxy.StatusError, ErrorMessage: "boom\u2028alert(2)\r\nalert(3)", Timestamp: t0}),
	}
	out := string(Playwright(s, calls))
	for i, line := range strings.Split(out, "\n") {
		if strings.ContainsAny(line, "\u2028\u2029\r") {
			t.Errorf("line %d holds a line terminator: %q", i+1, line)
		}
		if strings.Contains(line, "alert(") && !strings.HasPrefix(strings.TrimSpace(line), "//") {
			t.Errorf("line %d runs what a page wrote: %q", i+1, line)
		}
	}
	if want := `await expect(page).toHaveTitle("x'); require('child_process').exec('rm -rf /'); ('\u2028");`; !strings.Contains(out, want) {
		t.Errorf("the title assertion is not one escaped string:\n%s", out)
	}
}

// TestPlaywrightProfile: a session started from a login profile starts its
// test from a storage-state file the operator exports, never from the
// state itself, which the export is not given.
func TestPlaywrightProfile(t *testing.T) {
	s, calls := recorded(t)
	s.Profile, s.ProfileVersion, s.ProfileWrite = "github", 3, true
	golden(t, "session-profile.spec.ts", Playwright(s, calls[:1]))
}

func TestJSONProfile(t *testing.T) {
	s, calls := recorded(t)
	s.Profile, s.ProfileVersion, s.ProfileWrite = "github", 3, true
	out, err := JSON(s, calls, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	var rec struct {
		Session map[string]any `json:"session"`
	}
	if err := json.Unmarshal(out, &rec); err != nil {
		t.Fatalf("the export is not JSON: %v", err)
	}
	got := map[string]any{"profile": rec.Session["profile"], "profile_version": rec.Session["profile_version"], "profile_write": rec.Session["profile_write"]}
	want := map[string]any{"profile": "github", "profile_version": 3.0, "profile_write": true}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the session's profile in the JSON export (-want +got):\n%s", diff)
	}
	if strings.Contains(string(out), "storageState") || strings.Contains(string(out), "cookies") {
		t.Errorf("the JSON export speaks of a storage state:\n%s", out)
	}
}

// TestPlaywrightProfileHostile: a profile name is checked before it is
// stored, but the export does not rely on it: whatever the name, it stays
// in its comments and its one string.
func TestPlaywrightProfileHostile(t *testing.T) {
	s := &proxy.Session{ID: "s1", CreatedAt: t0, Profile: "x\u2028alert(1)\r\nalert(2)\"); alert(3); (\""}
	out := string(Playwright(s, nil))
	uses := 0
	for i, line := range strings.Split(out, "\n") {
		if strings.ContainsAny(line, "\u2028\u2029\r") {
			t.Errorf("line %d holds a line terminator: %q", i+1, line)
		}
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "test.use(") {
			uses++
			continue
		}
		if strings.Contains(line, "alert(") && !strings.HasPrefix(trimmed, "//") {
			t.Errorf("line %d runs what a name wrote: %q", i+1, line)
		}
	}
	if want := `test.use({ storageState: "<path to x alert(1) alert(2)\"); alert(3); (\".json>" });`; !strings.Contains(out, want) || uses != 1 {
		t.Errorf("want one test.use with the name escaped in its string, %s:\n%s", want, out)
	}
}
