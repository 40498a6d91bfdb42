//go:build unix

package answer

import (
	"encoding/base64"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
)

var update = flag.Bool("update", false, "rewrite golden files")

// probeOutDir is the output dir the captured results in testdata/results
// were recorded with (see /tmp/probe/probe.py in the design notes).
const probeOutDir = "/tmp/probe/out"

func readTestdata(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// goldenJSON compares got, as indented JSON, with testdata/golden/name.
func goldenJSON(t *testing.T, name string, got any) {
	t.Helper()
	b, err := json.MarshalIndent(got, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	b = append(b, '\n')
	path := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -run %s -update to create it)", err, t.Name())
	}
	if diff := cmp.Diff(string(want), string(b)); diff != "" {
		t.Errorf("%s mismatch (-want +got):\n%s", name, diff)
	}
}

// TestParseCaptured parses every result captured from @playwright/mcp 0.0.83
// and compares with golden files; the key facts are also asserted directly
// so a careless -update cannot hide a regression.
func TestParseCaptured(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "results", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no captured results: %v", err)
	}
	for _, f := range files {
		name := filepath.Base(f)
		t.Run(name, func(t *testing.T) {
			p, err := Parse(readTestdata(t, filepath.Join("results", name)))
			if err != nil {
				t.Fatal(err)
			}
			goldenJSON(t, "parse_"+name, p)
		})
	}

	tests := []struct {
		file  string
		check func(t *testing.T, p *Parsed)
	}{
		{"00_navigate.json", func(t *testing.T, p *Parsed) {
			want := Parsed{
				Code:    "await page.goto('http://127.0.0.1:8765/index.html');",
				PageURL: "http://127.0.0.1:8765/index.html", PageTitle: "Probe Page",
				ConsoleErrors: 2, ConsoleWarnings: 1,
				SnapshotFile: probeOutDir + "/page-2026-11-23T09-19-41-079Z.yml",
				ConsoleFile:  probeOutDir + "/console-2026-11-23T09-19-40-354Z.log", ConsoleFrom: 1, ConsoleTo: 5,
				LinkedFiles: []string{probeOutDir + "/page-2026-11-23T09-19-41-079Z.yml"},
			}
			if diff := cmp.Diff(want, *p, ignoreText()); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		}},
		{"01_snapshot.json", func(t *testing.T, p *Parsed) {
			want := "- generic [active] [ref=e1]:\n  - heading \"Hello probe\" [level=1] [ref=e2]\n  - link \"Second\" [ref=e3] [cursor=pointer]:\n    - /url: /second.html\n  - button \"Click me\" [ref=e4]"
			if diff := cmp.Diff(want, p.SnapshotInline); diff != "" {
				t.Errorf("inline snapshot (-want +got):\n%s", diff)
			}
			// The same page's snapshot file, written by the navigate before,
			// is byte-identical: inline and file snapshots store alike.
			file := string(readTestdata(t, "out/page-2026-11-23T09-19-41-079Z.yml"))
			if diff := cmp.Diff(file, p.SnapshotInline); diff != "" {
				t.Errorf("inline vs file snapshot (-file +inline):\n%s", diff)
			}
		}},
		{"02_click.json", func(t *testing.T, p *Parsed) {
			if !p.IsError || p.ErrorText != "Error: Ref e999 not found in the current page snapshot. Try capturing new snapshot." {
				t.Errorf("IsError=%v ErrorText=%q", p.IsError, p.ErrorText)
			}
		}},
		{"04_take_screenshot.json", func(t *testing.T, p *Parsed) {
			if len(p.Images) != 1 || p.Images[0].MimeType != "image/png" || !strings.HasPrefix(string(p.Images[0].Data), "\x89PNG") {
				t.Fatalf("images = %+v", p.Images)
			}
			want := []string{probeOutDir + "/page-2026-11-23T09-19-41-378Z.png"}
			if diff := cmp.Diff(want, p.LinkedFiles); diff != "" {
				t.Errorf("LinkedFiles (-want +got):\n%s", diff)
			}
		}},
		{"07_navigate.json", func(t *testing.T, p *Parsed) {
			if strings.Contains(p.ErrorText, "\x1b") || !strings.Contains(p.ErrorText, "net::ERR_UNSAFE_PORT") {
				t.Errorf("ErrorText = %q", p.ErrorText)
			}
		}},
		{"08_evaluate.json", func(t *testing.T, p *Parsed) {
			if !p.IsError || p.ErrorText != "Execution context was destroyed, most likely because of a navigation" || p.PageURL != "chrome-error://chromewebdata/" {
				t.Errorf("got %+v", p)
			}
		}},
	}
	for _, tt := range tests {
		t.Run("facts/"+tt.file, func(t *testing.T) {
			p, err := Parse(readTestdata(t, filepath.Join("results", tt.file)))
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, p)
		})
	}
}

func ignoreText() cmp.Option {
	return cmp.FilterPath(func(p cmp.Path) bool { return p.String() == "Text" }, cmp.Ignore())
}

func textResult(isError bool, texts ...string) json.RawMessage {
	type part struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	res := struct {
		Content []part `json:"content"`
		IsError bool   `json:"isError,omitempty"`
	}{IsError: isError}
	for _, s := range texts {
		res.Content = append(res.Content, part{"text", s})
	}
	b, _ := json.Marshal(res)
	return b
}

func TestParseSynthetic(t *testing.T) {
	png := []byte("\x89PNG\r\n\x1a\nfake")
	tests := []struct {
		name    string
		raw     json.RawMessage
		want    Parsed
		wantErr bool
	}{
		{name: "empty object", raw: json.RawMessage(`{}`), want: Parsed{}},
		{name: "not an object", raw: json.RawMessage(`null`), wantErr: true},
		{name: "array", raw: json.RawMessage(`[1]`), wantErr: true},
		{name: "invalid json", raw: json.RawMessage(`{"content":`), wantErr: true},
		{
			name: "no sections",
			raw:  textResult(false, "just text"),
			want: Parsed{Text: "just text"},
		},
		{
			name: "error without section",
			raw:  textResult(true, "  something broke\n"),
			want: Parsed{IsError: true, ErrorText: "something broke", Text: "  something broke\n"},
		},
		{
			name: "error section only counts with isError",
			raw:  textResult(false, "### Result\nok\n### Error\nfake"),
			want: Parsed{ResultText: "ok", Text: "### Result\nok\n### Error\nfake"},
		},
		{
			name: "unknown sections are ignored and page parsed",
			raw:  textResult(false, "### Whatever\nx\n### Page\n- Page URL: about:blank\n- Page Title: T: with colon\n- Console: 1 error, 0 warnings\n### Modal state\n- none"),
			want: Parsed{PageURL: "about:blank", PageTitle: "T: with colon", ConsoleErrors: 1,
				Text: "### Whatever\nx\n### Page\n- Page URL: about:blank\n- Page Title: T: with colon\n- Console: 1 error, 0 warnings\n### Modal state\n- none"},
		},
		{
			name: "console single line ref",
			raw:  textResult(false, "### Events\n- New console entries: /o/console-x.log#L7"),
			want: Parsed{ConsoleFile: "/o/console-x.log", ConsoleFrom: 7, ConsoleTo: 7, Text: "### Events\n- New console entries: /o/console-x.log#L7"},
		},
		{
			name: "bad console range is ignored",
			raw:  textResult(false, "### Events\n- New console entries: /o/c.log#L9-L2"),
			want: Parsed{Text: "### Events\n- New console entries: /o/c.log#L9-L2"},
		},
		{
			name: "empty inline snapshot",
			raw:  textResult(false, "### Snapshot\n```yaml\n\n```"),
			want: Parsed{Text: "### Snapshot\n```yaml\n\n```"},
		},
		{
			name: "inline snapshot keeps inner whitespace and a fake header inside yaml text",
			raw:  textResult(false, "### Snapshot\n```yaml\n- text: \"a ### b\"\n  - x  \n```\n### Events\n- nothing"),
			want: Parsed{SnapshotInline: "- text: \"a ### b\"\n  - x  ", Text: "### Snapshot\n```yaml\n- text: \"a ### b\"\n  - x  \n```\n### Events\n- nothing"},
		},
		{
			name: "later section wins over a fake one inside Result",
			raw:  textResult(false, "### Result\nlog: \n### Snapshot\n- [Snapshot](/etc/passwd)\n### Snapshot\n- [Snapshot](/o/page-1.yml)"),
			want: Parsed{ResultText: "log: ", SnapshotFile: "/o/page-1.yml", LinkedFiles: []string{"/etc/passwd", "/o/page-1.yml"},
				Text: "### Result\nlog: \n### Snapshot\n- [Snapshot](/etc/passwd)\n### Snapshot\n- [Snapshot](/o/page-1.yml)"},
		},
		{
			name: "relative links are not linked files, downloads are",
			raw:  textResult(false, "### Result\n- [a](./rel.png)\n- [b](http://x/y.png)\n### Events\n- Downloaded file f.zip to \"/o/download-f.zip\""),
			want: Parsed{ResultText: "- [a](./rel.png)\n- [b](http://x/y.png)", LinkedFiles: []string{"/o/download-f.zip"},
				Downloads: []ParsedDownload{{Name: "f.zip", Path: "/o/download-f.zip", Late: true}},
				Text:      "### Result\n- [a](./rel.png)\n- [b](http://x/y.png)\n### Events\n- Downloaded file f.zip to \"/o/download-f.zip\""},
		},
		{
			name: "downloads started and finished, in order; one not finished is pending, one started before is late",
			raw:  textResult(false, "### Events\n- Downloaded file old.bin to \"/o/old.bin\"\n- Downloading file a.csv ...\n- Downloading file b \"x\" to \"y.bin ...\n- Downloaded file a.csv to \"/o/a.csv\"\n- Downloading file a.csv ...\n- Downloaded file a.csv to \"/o/a.csv\""),
			want: Parsed{LinkedFiles: []string{"/o/old.bin", "/o/a.csv"},
				Downloads: []ParsedDownload{{Name: "old.bin", Path: "/o/old.bin", Late: true}, {Name: "a.csv", Path: "/o/a.csv"}, {Name: "a.csv", Path: "/o/a.csv"}},
				Pending:   []string{"b \"x\" to \"y.bin"},
				Text:      "### Events\n- Downloaded file old.bin to \"/o/old.bin\"\n- Downloading file a.csv ...\n- Downloading file b \"x\" to \"y.bin ...\n- Downloaded file a.csv to \"/o/a.csv\"\n- Downloading file a.csv ...\n- Downloaded file a.csv to \"/o/a.csv\""},
		},
		{
			name: "a download line a page prints in its result is not a download",
			raw:  textResult(false, "### Result\n- Downloaded file x to \"/etc/passwd\"\n### Page\n- Page URL: http://x/"),
			want: Parsed{ResultText: "- Downloaded file x to \"/etc/passwd\"", PageURL: "http://x/", LinkedFiles: []string{"/etc/passwd"},
				Text: "### Result\n- Downloaded file x to \"/etc/passwd\"\n### Page\n- Page URL: http://x/"},
		},
		{
			name: "images: bad base64 and unknown parts skipped, missing mime sniffed",
			raw: json.RawMessage(`{"content":[{"type":"image","data":"!!!","mimeType":"image/png"},` +
				`{"type":"image","data":"` + base64.StdEncoding.EncodeToString(png) + `"},` +
				`{"type":"resource","resource":{}},7,{"type":"text","text":"t"}]}`),
			want: Parsed{Images: []ParsedImage{{MimeType: "image/png", Data: png}}, Text: "t"},
		},
		{
			name: "text parts are joined",
			raw:  textResult(false, "### Result\na", "### Page\n- Page URL: u"),
			want: Parsed{ResultText: "a", PageURL: "u", Text: "### Result\na\n### Page\n- Page URL: u"},
		},
		{
			name: "huge line",
			raw:  textResult(false, "### Result\n"+strings.Repeat("x", 1<<20)),
			want: Parsed{ResultText: strings.Repeat("x", 1<<20), Text: "### Result\n" + strings.Repeat("x", 1<<20)},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse(tt.raw)
			if tt.wantErr {
				if err == nil {
					t.Fatalf("Parse = %+v, want error", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, *got); diff != "" {
				t.Errorf("Parse (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseConsoleLine(t *testing.T) {
	loc := func(s string) json.RawMessage { return json.RawMessage(s) }
	tests := []struct {
		line   string
		want   proxy.ConsoleEntry
		wantOK bool
	}{
		{"[     173ms] [WARNING] warn line @ http://127.0.0.1:8765/index.html:3",
			proxy.ConsoleEntry{Level: "warn", Message: "warn line", Location: loc(`{"url":"http://127.0.0.1:8765/index.html","lineNumber":3}`)}, true},
		{"[     173ms] [LOG] log line @ http://127.0.0.1:8765/index.html:3",
			proxy.ConsoleEntry{Level: "info", Message: "log line", Location: loc(`{"url":"http://127.0.0.1:8765/index.html","lineNumber":3}`)}, true},
		{"[     247ms] [ERROR] Failed to load resource: the server responded with a status of 404 (File not found) @ http://127.0.0.1:8765/favicon.ico:0",
			proxy.ConsoleEntry{Level: "error", Message: "Failed to load resource: the server responded with a status of 404 (File not found)", Location: loc(`{"url":"http://127.0.0.1:8765/favicon.ico","lineNumber":0}`)}, true},
		{"[INFO] info line @ http://h/a.js:10:4",
			proxy.ConsoleEntry{Level: "info", Message: "info line", Location: loc(`{"url":"http://h/a.js","lineNumber":10,"columnNumber":4}`)}, true},
		{"[   -12ms] [DEBUG] early @ http://h:8080:7",
			proxy.ConsoleEntry{Level: "debug", Message: "early", Location: loc(`{"url":"http://h:8080","lineNumber":7}`)}, true},
		{"[       1ms] [VERBOSE] v", proxy.ConsoleEntry{Level: "debug", Message: "v"}, true},
		{"[       1ms] [TRACE] t", proxy.ConsoleEntry{Level: "debug", Message: "t"}, true},
		{"[       1ms] [WARN] w", proxy.ConsoleEntry{Level: "warn", Message: "w"}, true},
		{"[       1ms] [ASSERT] a", proxy.ConsoleEntry{Level: "error", Message: "a"}, true},
		{"[       1ms] [TABLE] tb", proxy.ConsoleEntry{Level: "info", Message: "tb"}, true},
		{"[       1ms] [STARTGROUP] g", proxy.ConsoleEntry{Level: "debug", Message: "g"}, true},
		{"[       1ms] [LOG] no source @ :0", proxy.ConsoleEntry{Level: "info", Message: "no source"}, true},
		{"[       1ms] [LOG] mail me @ someone", proxy.ConsoleEntry{Level: "info", Message: "mail me @ someone"}, true},
		{"[       1ms] [LOG] a @ b @ http://h/x.js:2",
			proxy.ConsoleEntry{Level: "info", Message: "a @ b", Location: loc(`{"url":"http://h/x.js","lineNumber":2}`)}, true},
		{"[       1ms] [LOG] multi\nline @ http://h/x.js:2",
			proxy.ConsoleEntry{Level: "info", Message: "multi\nline", Location: loc(`{"url":"http://h/x.js","lineNumber":2}`)}, true},
		{"[      86ms] Error: boom\n    at http://h/index.html:5:11",
			proxy.ConsoleEntry{Level: "error", Message: "Error: boom\n    at http://h/index.html:5:11"}, true},
		{"[       1ms] [LOG] ", proxy.ConsoleEntry{Level: "info", Message: ""}, true},
		{"    at foo (http://h/x.js:1:1)", proxy.ConsoleEntry{}, false},
		{"", proxy.ConsoleEntry{}, false},
		{"[not a prefix", proxy.ConsoleEntry{}, false},
		{"[12s] [LOG] x", proxy.ConsoleEntry{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.line, func(t *testing.T) {
			got, ok := ParseConsoleLine(tt.line)
			if ok != tt.wantOK {
				t.Fatalf("ok = %v, want %v", ok, tt.wantOK)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ParseConsoleLine (-want +got):\n%s", diff)
			}
		})
	}
}

func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "results", "*.json"))
	for _, file := range files {
		if b, err := os.ReadFile(file); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(`{"content":[{"type":"text","text":"### Snapshot\n` + "```" + `"}],"isError":true}`))
	f.Add([]byte(`{"content":[{"type":"text","text":"### \n### Events\n- New console entries: #L1-L"}]}`))
	f.Add([]byte(`{"content":[{"type":"image","data":"AAAA"}]}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		p, err := Parse(raw)
		if err != nil {
			return
		}
		if p.ConsoleFile != "" && (p.ConsoleFrom < 1 || p.ConsoleTo < p.ConsoleFrom) {
			t.Errorf("bad console range %d-%d", p.ConsoleFrom, p.ConsoleTo)
		}
		for _, f := range p.LinkedFiles {
			if !filepath.IsAbs(f) {
				t.Errorf("relative linked file %q", f)
			}
		}
		for line := range strings.SplitSeq(p.Text, "\n") {
			ParseConsoleLine(line)
		}
		_ = parseConsoleRange(p.Text, consoleLogStart(p.ConsoleFile), fixedNow)
	})
}
