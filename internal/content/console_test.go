package content_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/content"
)

func consoleFixture() []proxy.ConsoleEntry {
	loc := func(s string) json.RawMessage { return json.RawMessage(s) }
	return []proxy.ConsoleEntry{
		{ID: 1, Level: "debug", Message: "d1"},
		{ID: 2, Level: "info", Message: "i1", Location: loc(`{"url":"https://example.com/app.js","lineNumber":10,"columnNumber":4}`)},
		{ID: 3, Level: "log", Message: "l1", Location: loc(`{"url":"https://example.com/","lineNumber":0}`)},
		{ID: 4, Level: "warning", Message: "w1", Location: loc(`{"url":"https://example.com/w.js"}`)},
		{ID: 5, Level: "warn", Message: "w2", Location: loc(`{"lineNumber":3}`)},
		{ID: 6, Level: "error", Message: "e1 with\nstack", Location: loc(`{"url":"https://example.com/e.js","lineNumber":42,"columnNumber":7}`)},
		{ID: 7, Level: "table", Message: "t1"},
		{ID: 8, Level: "assert", Message: "a1", Location: loc(`not json`)},
		{ID: 9, Level: "verbose", Message: "v1"},
	}
}

func TestFilterConsole(t *testing.T) {
	t.Parallel()
	tests := []struct {
		level   string
		wantIDs []int64
		wantErr bool
	}{
		{"", []int64{1, 2, 3, 4, 5, 6, 7, 8, 9}, false},
		{"debug", []int64{1, 2, 3, 4, 5, 6, 7, 8, 9}, false},
		{"info", []int64{2, 3, 4, 5, 6, 7, 8}, false},
		{"log", []int64{2, 3, 4, 5, 6, 7, 8}, false},
		{"warn", []int64{4, 5, 6, 8}, false},
		{"warning", []int64{4, 5, 6, 8}, false},
		{"error", []int64{6, 8}, false},
		{" ERROR ", []int64{6, 8}, false},
		{"fatal", nil, true},
		{"errors", nil, true},
	}
	for _, tt := range tests {
		t.Run("level="+tt.level, func(t *testing.T) {
			in := consoleFixture()
			got, err := content.FilterConsole(in, tt.level)
			if tt.wantErr {
				if code := proxy.ErrorCode(err); code != proxy.EINVALID {
					t.Fatalf("error = %v (code %q), want %s", err, code, proxy.EINVALID)
				}
				for _, name := range []string{"debug", "info", "warn", "error"} {
					if !strings.Contains(err.Error(), name) {
						t.Errorf("error %q does not name the allowed level %q", err, name)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var ids []int64
			for _, e := range got {
				ids = append(ids, e.ID)
			}
			if diff := cmp.Diff(tt.wantIDs, ids); diff != "" {
				t.Errorf("kept ids (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(consoleFixture(), in); diff != "" {
				t.Errorf("input modified (-want +got):\n%s", diff)
			}
		})
	}
}

func TestConsole(t *testing.T) {
	t.Parallel()
	fs := newFakeStore()
	fs.setResponse(proxy.Response{RefID: "r", Status: proxy.StatusSuccess})
	fs.console["r"] = consoleFixture()
	fs.setResponse(proxy.Response{RefID: "quiet", Status: proxy.StatusSuccess})
	fs.inFlight["running"] = true
	svc := content.New(fs)

	tests := []struct {
		name, ref, level string
		want             string
		wantCode         string
	}{
		{name: "all", ref: "r", want: "" +
			"[DEBUG] d1\n" +
			"[INFO] i1 @ https://example.com/app.js:10\n" +
			"[LOG] l1 @ https://example.com/:0\n" +
			"[WARNING] w1 @ https://example.com/w.js\n" +
			"[WARN] w2\n" +
			"[ERROR] e1 with\nstack @ https://example.com/e.js:42\n" +
			"[TABLE] t1\n" +
			"[ASSERT] a1\n" +
			"[VERBOSE] v1\n"},
		{name: "warn and above", ref: "r", level: "warning", want: "" +
			"[WARNING] w1 @ https://example.com/w.js\n" +
			"[WARN] w2\n" +
			"[ERROR] e1 with\nstack @ https://example.com/e.js:42\n" +
			"[ASSERT] a1\n"},
		{name: "errors only", ref: "r", level: "error", want: "" +
			"[ERROR] e1 with\nstack @ https://example.com/e.js:42\n" +
			"[ASSERT] a1\n"},
		{name: "no entries", ref: "quiet", want: ""},
		{name: "no entries at that level", ref: "quiet", level: "error", want: ""},
		{name: "unknown ref", ref: "nope", wantCode: proxy.EREFMISSING},
		{name: "in-flight ref", ref: "running", wantCode: proxy.EREFMISSING},
		{name: "bad level", ref: "r", level: "loud", wantCode: proxy.EINVALID},
		{name: "bad level wins over unknown ref", ref: "nope", level: "loud", wantCode: proxy.EINVALID},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := svc.Console(t.Context(), tt.ref, tt.level)
			if code := proxy.ErrorCode(err); code != tt.wantCode {
				t.Fatalf("error = %v (code %q), want code %q", err, code, tt.wantCode)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Console(%q, %q) (-want +got):\n%s", tt.ref, tt.level, diff)
			}
		})
	}
	if fs.puts != 0 {
		t.Errorf("Console wrote %d cursors; console reads have no cursor", fs.puts)
	}
}

func TestErrorLines(t *testing.T) {
	const page = "http://127.0.0.1:8080/dash"
	at := func(url string, line int) json.RawMessage {
		return json.RawMessage(fmt.Sprintf(`{"url":%q,"lineNumber":%d}`, url, line))
	}
	entry := func(level, msg string, loc json.RawMessage) proxy.ConsoleEntry {
		return proxy.ConsoleEntry{Level: level, Message: msg, Location: loc}
	}
	long := strings.Repeat("x", 300)
	tests := []struct {
		name    string
		entries []proxy.ConsoleEntry
		want    []string
	}{
		{"none", nil, nil},
		{"only errors, where they were logged", []proxy.ConsoleEntry{
			entry("info", "ready", at(page, 2)),
			entry("error", "Failed to load /api:\n 503", at(page, 7)),
			entry("warning", "slow", nil),
			entry("error", "TypeError: x", at("http://cdn/app.js", 3)),
			entry("error", "no location", nil),
		}, []string{"Failed to load /api: 503", "TypeError: x @ http://cdn/app.js:3", "no location"}},
		{"a long message is cut", []proxy.ConsoleEntry{entry("error", long, nil)}, []string{strings.Repeat("x", 200) + "…"}},
		{"past the bound, a count", []proxy.ConsoleEntry{
			entry("error", "1", nil), entry("error", "2", nil), entry("error", "3", nil), entry("error", "4", nil),
			entry("error", "5", nil), entry("error", "6", nil), entry("error", "7", nil),
		}, []string{"1", "2", "3", "4", "5", "2 more: get_console_content(ref_id, level: error)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, content.ErrorLines(tt.entries, page)); diff != "" {
				t.Errorf("ErrorLines (-want +got):\n%s", diff)
			}
		})
	}
}
