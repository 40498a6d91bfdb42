package session

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/answer"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/content"
)

// upstreamText is an answer of upstream's with one text part.
func upstreamText(t *testing.T, text string) *answer.Parsed {
	t.Helper()
	raw, err := json.Marshal(map[string]any{"content": []map[string]string{{"type": "text", "text": text}}})
	if err != nil {
		t.Fatal(err)
	}
	p, err := answer.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestInlineResult(t *testing.T) {
	tabs := "- 0: [Prices](http://127.0.0.1:8000/prices.html)\n- 1: (current) [Stock](http://127.0.0.1:8000/stock.html)"
	big := `"` + strings.Repeat("x", 1200) + `"`
	tests := []struct {
		name    string
		text    string          // upstream's answer
		value   json.RawMessage // a program's value (one of the proxy's tools)
		max     int
		want    proxy.CallMetadata
		program bool
	}{
		{name: "evaluate, small", text: "### Result\n\"Apple 1.20\"\n### Ran Playwright code\n```js\nawait page.evaluate('1');\n```", max: 1000,
			want: proxy.CallMetadata{Result: `"Apple 1.20"`}},
		{name: "evaluate, indented JSON comes compact", text: "### Result\n{\n  \"a\": 1,\n  \"b\": [\n    1,\n    2\n  ]\n}", max: 1000,
			want: proxy.CallMetadata{Result: `{"a":1,"b":[1,2]}`}},
		{name: "compact JSON measured, not the indented", text: "### Result\n[\n  1,\n  2,\n  3\n]", max: len("[1,2,3]"),
			want: proxy.CallMetadata{Result: "[1,2,3]"}},
		{name: "text lines kept as they are", text: "### Result\n" + tabs, max: 1000,
			want: proxy.CallMetadata{Result: tabs}},
		{name: "over the limit: its size", text: "### Result\n" + big, max: 1000,
			want: proxy.CallMetadata{ResultBytes: len(big)}},
		{name: "limit 0: always its size", text: "### Result\n42", max: 0,
			want: proxy.CallMetadata{ResultBytes: 2}},
		{name: "no result section", text: "### Page\n- Page URL: http://127.0.0.1:8000/\n- Page Title: Home", max: 1000},
		{name: "a link to a file upstream wrote", text: "### Result\n- [Screenshot of viewport](/tmp/out/page-1.png)", max: 1000},
		{name: "a link among text is text", text: "### Result\nsaved\n- [Screenshot of viewport](/tmp/out/page-1.png)", max: 1000,
			want: proxy.CallMetadata{Result: "saved\n- [Screenshot of viewport](/tmp/out/page-1.png)"}},
		{name: "program value, small", program: true, value: json.RawMessage(`{"text":"Apple"}`), max: 1000},
		{name: "program value, over the limit", program: true, value: json.RawMessage(big), max: 1000,
			want: proxy.CallMetadata{ResultBytes: len(big)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			parsed := &answer.Parsed{}
			if tt.text != "" {
				parsed = upstreamText(t, tt.text)
			}
			res := &proxy.CallResult{Value: tt.value}
			inlineResult(res, tt.program, parsed, tt.max)
			if diff := cmp.Diff(tt.want, res.Metadata); diff != "" {
				t.Errorf("metadata (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(string(tt.value), string(res.Value)); diff != "" {
				t.Errorf("a program's value is kept whole for /call (-want +got):\n%s", diff)
			}
		})
	}
}

// TestBuildRecordFollowsTabSwitch: a tab switch reports no page, but its
// tab list names the page now current, which the next call is measured
// against; other calls without a page leave the session's page alone.
func TestBuildRecordFollowsTabSwitch(t *testing.T) {
	const (
		first  = "http://127.0.0.1:8000/t/delivery"
		second = "http://127.0.0.1:8000/t/carrier"
	)
	carrier := content.Page{URL: second, Title: "Carrier", Snapshot: "- heading \"Carrier\" [level=1]"}
	tests := []struct {
		name, tool, text string
		want             content.Page
	}{
		{"select the first tab", "browser_tabs", "### Result\n- 0: (current) [Delivery](" + first + ")\n- 1: [Carrier](" + second + ")",
			content.Page{URL: first, Title: "Delivery"}},
		{"the current tab again", "browser_tabs", "### Result\n- 0: [Delivery](" + first + ")\n- 1: (current) [Carrier](" + second + ")", carrier},
		{"not a tab list", "browser_tabs", "### Result\nNo open tabs.", carrier},
		{"another tool's result", "browser_evaluate", "### Result\n- 0: (current) [Delivery](" + first + ")", carrier},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw, err := json.Marshal(map[string]any{"content": []map[string]string{{"type": "text", "text": tt.text}}})
			if err != nil {
				t.Fatal(err)
			}
			got := buildRecord(recordInput{refID: "r", sessionID: "s", tool: tt.tool, fwd: forwarded{tool: tt.tool, params: json.RawMessage(`{}`)},
				raw: raw, outputDir: t.TempDir(), lastPage: carrier, changes: true, redact: openRedaction, inlineMax: 1000})
			if diff := cmp.Diff(tt.want, got.lastPage); diff != "" {
				t.Errorf("the session's page (-want +got):\n%s", diff)
			}
		})
	}
}
