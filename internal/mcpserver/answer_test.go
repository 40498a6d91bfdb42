package mcpserver

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
)

func TestAnswer(t *testing.T) {
	yes := true
	const ref = "3232f408-800e-4da1-9874-6d0bb8795a7f"
	ok := func(md proxy.CallMetadata, ch *proxy.Changes) *proxy.CallResult {
		md.Tool = "browser_click"
		return &proxy.CallResult{RefID: ref, SessionID: "s", Status: proxy.StatusSuccess, Metadata: md, Changes: ch}
	}
	page := proxy.CallMetadata{PageURL: "http://127.0.0.1:8080/", PageTitle: "Shop", HasSnapshot: true, SnapshotBytes: 356}
	tests := []struct {
		name string
		res  *proxy.CallResult
		want string
	}{
		{"a small new page comes whole",
			ok(page, &proxy.Changes{NewPage: true, TitleChanged: true, Added: 1, Text: `- heading "Shop" [ref=e2]`}),
			"ref_id: " + ref + "\npage: Shop http://127.0.0.1:8080/\nsnapshot:\n- heading \"Shop\" [ref=e2]"},
		{"after a navigation to the URL sent, the title alone",
			ok(page, &proxy.Changes{NewPage: true, URLAsSent: true, Over: true}),
			"ref_id: " + ref + "\npage: Shop\nsnapshot: 356 B, read with get_content"},
		{"a big new page gives its size",
			ok(proxy.CallMetadata{PageURL: "http://127.0.0.1:8080/", PageTitle: "Shop", HasSnapshot: true, SnapshotBytes: 48213}, &proxy.Changes{NewPage: true, Added: 900, Over: true}),
			"ref_id: " + ref + "\npage: Shop http://127.0.0.1:8080/\nsnapshot: 48.2 KB, read with get_content"},
		{"a click that changed a line on the same page",
			ok(page, &proxy.Changes{Changed: 1, Text: `~ paragraph [ref=e3]: "Cart: 1" (was "Cart: 0")`}),
			"ref_id: " + ref + "\nchanges: +0 -0 ~1\n~ paragraph [ref=e3]: \"Cart: 1\" (was \"Cart: 0\")"},
		{"nothing changed",
			ok(page, &proxy.Changes{}),
			"ref_id: " + ref + "\nchanges: none"},
		{"too many changes to list",
			ok(page, &proxy.Changes{Added: 120, Removed: 30, Changed: 4, Over: true}),
			"ref_id: " + ref + "\nchanges: +120 -30 ~4, too many to list: read with get_content"},
		{"no snapshot: no page and no changes",
			ok(proxy.CallMetadata{PageURL: "http://x/", ConsoleErrorCount: 2, HasImage: true, Result: "42"}, nil),
			"ref_id: " + ref + "\nconsole: 2 errors\nresult: 42\nimage: get_content(ref_id) returns it"},
		{"console errors come with the count",
			&proxy.CallResult{RefID: ref, Status: proxy.StatusSuccess, Metadata: proxy.CallMetadata{ConsoleErrorCount: 2},
				ConsoleErrors: []string{"Failed to load /api: 503", "TypeError: x is undefined @ http://cdn/app.js:3"}},
			"ref_id: " + ref + "\nconsole: 2 errors\n! Failed to load /api: 503\n! TypeError: x is undefined @ http://cdn/app.js:3"},
		{"a proxy tool's value and a restore",
			&proxy.CallResult{RefID: ref, Status: proxy.StatusSuccess, Value: json.RawMessage(`{"rows":2}`), Metadata: proxy.CallMetadata{Restored: true}},
			"ref_id: " + ref + "\nrestored: true (refs from before the restore are stale)\nvalue: {\"rows\":2}"},
		{"an error with its code and what to do",
			&proxy.CallResult{RefID: ref, Status: proxy.StatusError, Error: "no element\nmatches ref e9", ErrorCode: "ELEMENT_NOT_FOUND", Retryable: &yes, Suggestion: "Take a new snapshot."},
			"error: ELEMENT_NOT_FOUND (retryable): no element matches ref e9\nsuggestion: Take a new snapshot.\nref_id: " + ref},
		{"a call that ran but is not recorded says so",
			&proxy.CallResult{RefID: ref, Status: proxy.StatusSuccess, NotRecorded: true, Warning: "this call ran in the browser, but its answer could not be recorded"},
			"ref_id: " + ref + "\nwarning: this call ran in the browser, but its answer could not be recorded"},
		{"an error without a code",
			&proxy.CallResult{RefID: ref, Status: proxy.StatusError, Error: "net::ERR_CONNECTION_REFUSED"},
			"error: net::ERR_CONNECTION_REFUSED\nref_id: " + ref},
		{"an evaluated value comes inline",
			ok(proxy.CallMetadata{Result: `"Apple 1.20"`}, nil),
			"ref_id: " + ref + "\nresult: \"Apple 1.20\""},
		{"a result of several lines keeps them, indented",
			ok(proxy.CallMetadata{Result: "- 0: [Prices](http://h/p)\n- 1: (current) [Stock](http://h/s)"}, nil),
			"ref_id: " + ref + "\nresult:\n  - 0: [Prices](http://h/p)\n  - 1: (current) [Stock](http://h/s)"},
		{"a result over the limit is its size",
			ok(proxy.CallMetadata{ResultBytes: 12345}, nil),
			"ref_id: " + ref + "\nresult: 12.3 KB, read with get_content"},
		{"a program's value over the limit is its size",
			&proxy.CallResult{RefID: ref, Status: proxy.StatusSuccess, Value: json.RawMessage(`{"rows":[]}`), Metadata: proxy.CallMetadata{ResultBytes: 4200}},
			"ref_id: " + ref + "\nvalue: 4.2 KB, read with get_content"},
		{"browser_tabs' list is one line; the current tab stands for the page line",
			&proxy.CallResult{RefID: ref, Status: proxy.StatusSuccess, Changes: &proxy.Changes{NewPage: true},
				Metadata: proxy.CallMetadata{Tool: "browser_tabs", PageURL: "http://h:8/t/c", PageTitle: "Carrier", HasSnapshot: true, SnapshotBytes: 2000,
					Result: "- 0: [Delivery](http://h:8/t/d)\n- 1: (current) [Carrier](http://h:8/t/c)\n- 2: [Other](https://o.example/x)"}},
			"ref_id: " + ref + "\ntabs: 0 Delivery /t/d; 1 (current) Carrier http://h:8/t/c; 2 Other https://o.example/x\nsnapshot: 2.0 KB, read with get_content"},
		{"a new page at the same URL and title: no page line",
			ok(page, &proxy.Changes{NewPage: true, SameURL: true, Text: "- status: Confirmed."}),
			"ref_id: " + ref + "\nsnapshot:\n- status: Confirmed."},
		{"a new page at the same URL: its new title alone",
			ok(page, &proxy.Changes{NewPage: true, SameURL: true, TitleChanged: true, Text: "- status: Confirmed."}),
			"ref_id: " + ref + "\npage: Shop\nsnapshot:\n- status: Confirmed."},
		{"browser_tabs' other text stays a result",
			&proxy.CallResult{RefID: ref, Status: proxy.StatusSuccess, Metadata: proxy.CallMetadata{Tool: "browser_tabs", Result: "No open tabs."}},
			"ref_id: " + ref + "\nresult: No open tabs."},
		{"a result before the changes it made",
			ok(proxy.CallMetadata{HasSnapshot: true, Result: "1"}, &proxy.Changes{Changed: 1, Text: "~ paragraph: \"2\" (was \"1\")"}),
			"ref_id: " + ref + "\nresult: 1\nchanges: +0 -0 ~1\n~ paragraph: \"2\" (was \"1\")"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Answer(tt.res)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Fatalf("Answer (-want +got):\n%s", diff)
			}
			p, err := ParseAnswer(got)
			if err != nil {
				t.Fatal(err)
			}
			if p.RefID != tt.res.RefID {
				t.Errorf("ParseAnswer ref = %q, want %q", p.RefID, tt.res.RefID)
			}
			if ch := tt.res.Changes; ch != nil && ch.NewPage && !ch.URLAsSent && !ch.SameURL && p.Tabs == "" && (p.PageURL != tt.res.Metadata.PageURL || p.PageTitle != tt.res.Metadata.PageTitle) {
				t.Errorf("ParseAnswer page = %q %q, want %q %q", p.PageTitle, p.PageURL, tt.res.Metadata.PageTitle, tt.res.Metadata.PageURL)
			}
			if p.Warning != tt.res.Warning {
				t.Errorf("ParseAnswer warning = %q, want %q", p.Warning, tt.res.Warning)
			}
			md := tt.res.Metadata
			if md.ResultBytes > 0 || p.Tabs != "" {
				md.Result = ""
			}
			if p.Result != md.Result || (md.ResultBytes > 0) != (p.ResultSize != "") {
				t.Errorf("ParseAnswer result = %q, size %q; want %q, size %d", p.Result, p.ResultSize, md.Result, md.ResultBytes)
			}
			if (p.Error != "") != (tt.res.Status == proxy.StatusError) {
				t.Errorf("ParseAnswer error = %q for status %s", p.Error, tt.res.Status)
			}
		})
	}
}

// The answer must cost the model less than the JSON it replaces, which
// carried every field on every call.
func TestAnswerIsSmallerThanTheJSON(t *testing.T) {
	res := &proxy.CallResult{RefID: "3232f408-800e-4da1-9874-6d0bb8795a7f", SessionID: "f772e912-d37f-41b0-87ee-fc3a04bfc3ae", Status: proxy.StatusSuccess,
		Metadata: proxy.CallMetadata{Tool: "browser_click", PageURL: "http://127.0.0.1:8080/", PageTitle: "Shop", HasSnapshot: true, SnapshotBytes: 356, HasConsoleLogs: true},
		Changes:  &proxy.Changes{Changed: 1, Text: `~ paragraph [ref=e3]: "Cart: 1" (was "Cart: 0")`}}
	js, _ := json.Marshal(res)
	if a := Answer(res); len(a)*2 > len(js) {
		t.Errorf("answer is %d bytes, the JSON %d: want at most half\n%s", len(a), len(js), a)
	}
}

func TestParseAnswerWithoutRef(t *testing.T) {
	if _, err := ParseAnswer(`{"error":"SESSION_NOT_FOUND"}`); err == nil {
		t.Error("ParseAnswer of an error body: want an error")
	}
	// A refusal names no stored call: it has none.
	p, err := ParseAnswer("error: SESSION_NOT_FOUND: no session x\nsuggestion: List sessions.")
	want := Parsed{Error: "SESSION_NOT_FOUND: no session x", ErrorCode: proxy.ESESSIONMISSING, ErrorMessage: "no session x", Suggestion: "List sessions."}
	if diff := cmp.Diff(want, p); err != nil || diff != "" {
		t.Errorf("ParseAnswer of a refusal = %v (-want +got):\n%s", err, diff)
	}
}

// Each download is a line of its own, after the call's other facts and
// before the page's changes, whatever the ref line is called.
func TestAnswerNamesDownloads(t *testing.T) {
	const ref = "3232f408-800e-4da1-9874-6d0bb8795a7f"
	tests := []struct {
		name string
		res  *proxy.CallResult
		want []string
	}{
		{"none", &proxy.CallResult{RefID: ref, Status: proxy.StatusSuccess}, nil},
		{"a stored download with its size",
			&proxy.CallResult{RefID: ref, Status: proxy.StatusSuccess, Downloads: []proxy.Download{{Name: "report.csv", Size: 1234, Stored: true}}},
			[]string{"report.csv 1.2 KB"}},
		{"one over the limit says it was not stored",
			&proxy.CallResult{RefID: ref, Status: proxy.StatusSuccess, Downloads: []proxy.Download{
				{Name: "small.bin", Size: 12, Stored: true},
				{Name: "big.bin", Size: 3_400_000},
			}},
			[]string{"small.bin 12 B", "big.bin 3.4 MB, not stored: over PROXY_MAX_DOWNLOAD_BYTES"}},
		{"a name cannot break the answer's lines",
			&proxy.CallResult{RefID: ref, Status: proxy.StatusSuccess, Downloads: []proxy.Download{{Name: "a\nchanges: none", Size: 1, Stored: true}}},
			[]string{"a changes: none 1 B"}},
		{"one that had not finished",
			&proxy.CallResult{RefID: ref, Status: proxy.StatusSuccess, DownloadsPending: []string{"slow.zip"}},
			[]string{"slow.zip started, not finished: stored with this call once a later answer sees it finish"}},
		{"one an earlier call started names that call",
			&proxy.CallResult{RefID: ref, Status: proxy.StatusSuccess, Downloads: []proxy.Download{
				{RefID: "earlier", Name: "slow.zip", Size: 2_000_000, Stored: true},
				{RefID: ref, Name: "mine.csv", Size: 10, Stored: true},
			}},
			[]string{"slow.zip 2.0 MB, stored with ref_id earlier (the call that started it)", "mine.csv 10 B"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.res.Metadata = proxy.CallMetadata{HasImage: true, HasSnapshot: true}
			tt.res.Changes = &proxy.Changes{Changed: 1, Text: "~ x"}
			got := Answer(tt.res)
			p, err := ParseAnswer(got)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, p.Downloads); diff != "" {
				t.Errorf("download lines of %q (-want +got):\n%s", got, diff)
			}
			if !p.Image || p.Body != "changes: +0 -0 ~1\n~ x" {
				t.Errorf("the other facts of %q moved: image %t, body %q", got, p.Image, p.Body)
			}
		})
	}
}
