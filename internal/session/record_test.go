package session

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/answer"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/content"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/redact"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/toolset"
)

// The recorded answers of a real @playwright/mcp worker, and the files they
// link, kept by package answer.
const (
	answerTestdata = "../answer/testdata"
	// recordedOutDir is the output dir the answers were recorded with.
	recordedOutDir = "/tmp/probe/out"
)

func recordedFile(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(answerTestdata, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// recordedAnswer is a recorded answer as a worker with its own output dir
// gives it: the files it links are copied there (Ingest removes what it
// reads, so each call gets a fresh dir).
func recordedAnswer(t *testing.T, name string) (raw json.RawMessage, dir string) {
	t.Helper()
	dir = t.TempDir()
	entries, err := os.ReadDir(filepath.Join(answerTestdata, "out"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if err := os.WriteFile(filepath.Join(dir, e.Name()), recordedFile(t, "out/"+e.Name()), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	raw = bytes.ReplaceAll(recordedFile(t, "results/"+name), []byte(recordedOutDir), []byte(dir))
	return raw, dir
}

// openRedaction masks nothing and keeps every image, as with no policy and
// an empty vault.
var openRedaction = redaction{imageOmitted: func(int) string { return "" }}

// programAnswer is upstream's answer to the program of one of the proxy's
// own tools: the program's result, then the code it ran, which quotes the
// encoded arguments.
func programAnswer(t *testing.T, result, code string) json.RawMessage {
	t.Helper()
	text := "### Result\n" + result + "\n### Ran Playwright code\n```js\nawait (" + code + ")(page);\n```"
	raw, err := json.Marshal(map[string]any{"content": []map[string]string{{"type": "text", "text": text}}})
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

func TestBuildRecord(t *testing.T) {
	const (
		refID   = "k3j5h2g8d9s7a6f4"
		session = "6f1c2f7e-3b0a-4c55-9d0e-8a7b6c5d4e3f"
		index   = "http://127.0.0.1:8765/index.html"
	)
	at := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	// Console lines are timed from the log's start, in its name.
	logStart := time.Date(2026, 11, 23, 9, 19, 40, 354e6, time.UTC)
	logAt := func(ms int) time.Time { return logStart.Add(time.Duration(ms) * time.Millisecond) }
	indexLoc := json.RawMessage(`{"url":"http://127.0.0.1:8765/index.html","lineNumber":3}`)

	indexYAML := string(recordedFile(t, "out/page-2026-11-23T09-19-41-079Z.yml"))
	consoleLog := string(recordedFile(t, "out/console-2026-11-23T09-19-40-354Z.log"))
	png := recordedFile(t, "out/page-2026-11-23T09-19-41-378Z.png")
	indexPage := content.Page{URL: index, Title: "Probe Page", Snapshot: indexYAML}
	retryable := func(code string) *bool { r := proxy.Errorf(code, "").Retryable; return &r }
	suggestion := func(code string) string { return proxy.Errorf(code, "").Suggestion }

	// The program of screenshot_element, and what it answers: a picture of
	// the element as base64 in its value.
	shot, ok := toolset.All().Lookup("screenshot_element")
	if !ok {
		t.Fatal("no screenshot_element tool")
	}
	prog, err := shot.Build(json.RawMessage(`{"selector":"#logo"}`))
	if err != nil {
		t.Fatal(err)
	}
	var progArgs struct{ Code string }
	if err := json.Unmarshal(prog.Args, &progArgs); err != nil {
		t.Fatal(err)
	}
	shotResult := func(data string) string {
		return `{"pwproxy":1,"ok":true,"value":{"success":true,"matches":1,"image":{"mime_type":"image/png","data":"` + data + `"}}}`
	}
	shotAnswer := programAnswer(t, shotResult(base64.StdEncoding.EncodeToString(png)), progArgs.Code)
	// In the record the arguments are named, not quoted, and the picture is
	// an image of the ref.
	shotRecorded := string(programAnswer(t, shotResult("(image stored with this ref)"),
		strings.ReplaceAll(progArgs.Code, prog.Blob, "(arguments: see the request)")))

	tests := []struct {
		name string
		// answer is a recorded answer (results/NAME); raw one made here.
		answer string
		raw    json.RawMessage
		in     recordInput // refID, sessionID, at, raw and outputDir are filled in
		want   func(raw string) recordOutput
	}{{
		name:   "navigate with a snapshot and console errors",
		answer: "00_navigate.json",
		in: recordInput{
			tool: "browser_navigate", fwd: forwarded{tool: "browser_navigate", params: json.RawMessage(`{"url":"http://127.0.0.1:8765/index.html"}`)},
			changes: true, redact: openRedaction, changesMax: DefaultChangesMax,
		},
		want: func(raw string) recordOutput {
			return recordOutput{
				response: &proxy.Response{RefID: refID, Status: proxy.StatusSuccess, Result: raw, PageSnapshot: indexYAML, ConsoleLogs: consoleLog, Timestamp: at},
				console: []proxy.ConsoleEntry{
					{Level: "info", Message: "log line", Timestamp: logAt(173), Location: indexLoc},
					{Level: "warn", Message: "warn line", Timestamp: logAt(174), Location: indexLoc},
					{Level: "error", Message: "error line", Timestamp: logAt(174), Location: indexLoc},
					{Level: "info", Message: "info line", Timestamp: logAt(175), Location: indexLoc},
					{Level: "error", Message: "Failed to load resource: the server responded with a status of 404 (File not found)", Timestamp: logAt(247),
						Location: json.RawMessage(`{"url":"http://127.0.0.1:8765/favicon.ico","lineNumber":0}`)},
				},
				activity: &proxy.SessionActivity{SessionID: session, At: at,
					Metadata: json.RawMessage(`{"last_title":"Probe Page","last_url":"http://127.0.0.1:8765/index.html"}`)},
				result: &proxy.CallResult{RefID: refID, SessionID: session, Status: proxy.StatusSuccess, Timestamp: at,
					Metadata: proxy.CallMetadata{Tool: "browser_navigate", PageURL: index, PageTitle: "Probe Page",
						HasSnapshot: true, SnapshotBytes: len(indexYAML), HasConsoleLogs: true, ConsoleErrorCount: 2},
					// A new page comes whole, as its outline.
					Changes: &proxy.Changes{NewPage: true, TitleChanged: true, URLAsSent: true, Added: 5, Text: content.Outline(indexYAML)},
					// The page's own errors without their location, others with it.
					ConsoleErrors: []string{"error line",
						"Failed to load resource: the server responded with a status of 404 (File not found) @ http://127.0.0.1:8765/favicon.ico:0"},
				},
				stored:   len(raw) + len(indexYAML) + len(consoleLog),
				lastPage: indexPage,
			}
		},
	}, {
		name:   "error answer",
		answer: "02_click.json",
		in: recordInput{
			tool: "browser_click", fwd: forwarded{tool: "browser_click", params: json.RawMessage(`{"element":"x","ref":"e999"}`)},
			lastPage: indexPage, changes: true, redact: openRedaction, changesMax: DefaultChangesMax,
		},
		want: func(raw string) recordOutput {
			const msg = "Error: Ref e999 not found in the current page snapshot. Try capturing new snapshot."
			return recordOutput{
				response: &proxy.Response{RefID: refID, Status: proxy.StatusError, Result: raw, ErrorMessage: msg, ErrorCode: proxy.EELEMENTMISSING, Timestamp: at},
				activity: &proxy.SessionActivity{SessionID: session, At: at},
				result: &proxy.CallResult{RefID: refID, SessionID: session, Status: proxy.StatusError, Timestamp: at,
					Metadata: proxy.CallMetadata{Tool: "browser_click"},
					Error:    msg, ErrorCode: proxy.EELEMENTMISSING, Retryable: retryable(proxy.EELEMENTMISSING), Suggestion: suggestion(proxy.EELEMENTMISSING)},
				stored: len(raw),
				// No page in the answer: the session stays where it was.
				lastPage: indexPage,
			}
		},
	}, {
		name:   "error answer that reports the page",
		answer: "08_evaluate.json",
		in: recordInput{
			tool: "browser_evaluate", fwd: forwarded{tool: "browser_evaluate", params: json.RawMessage(`{"function":"() => 1"}`)},
			lastPage: indexPage, changes: true, redact: openRedaction, changesMax: DefaultChangesMax,
		},
		want: func(raw string) recordOutput {
			const msg = "Execution context was destroyed, most likely because of a navigation"
			return recordOutput{
				response: &proxy.Response{RefID: refID, Status: proxy.StatusError, Result: raw, ErrorMessage: msg, ErrorCode: proxy.EBROWSER, Timestamp: at},
				activity: &proxy.SessionActivity{SessionID: session, At: at,
					Metadata: json.RawMessage(`{"last_title":"127.0.0.1","last_url":"chrome-error://chromewebdata/"}`)},
				result: &proxy.CallResult{RefID: refID, SessionID: session, Status: proxy.StatusError, Timestamp: at,
					Metadata: proxy.CallMetadata{Tool: "browser_evaluate", PageURL: "chrome-error://chromewebdata/", PageTitle: "127.0.0.1"},
					Error:    msg, ErrorCode: proxy.EBROWSER, Retryable: retryable(proxy.EBROWSER), Suggestion: suggestion(proxy.EBROWSER),
					// No snapshot: only that the page and its title changed.
					Changes: &proxy.Changes{NewPage: true, TitleChanged: true}},
				stored: len(raw),
				// Another page, whose snapshot the session has not seen.
				lastPage: content.Page{URL: "chrome-error://chromewebdata/", Title: "127.0.0.1"},
			}
		},
	}, {
		name: "program answer with an image",
		raw:  shotAnswer,
		in: recordInput{
			tool: "screenshot_element", fwd: forwarded{tool: toolset.RunTool, params: prog.Args, ext: shot, blob: prog.Blob},
			lastPage: indexPage, redact: openRedaction, changesMax: DefaultChangesMax,
			// A program's answer is its value, never upstream's text.
			inlineMax: 1 << 20,
		},
		want: func(string) recordOutput {
			return recordOutput{
				response: &proxy.Response{RefID: refID, Status: proxy.StatusSuccess, Result: shotRecorded, Timestamp: at},
				images:   []proxy.Image{{RefID: refID, Seq: 0, MimeType: "image/png", Data: png}},
				activity: &proxy.SessionActivity{SessionID: session, At: at},
				result: &proxy.CallResult{RefID: refID, SessionID: session, Status: proxy.StatusSuccess, Timestamp: at,
					Metadata: proxy.CallMetadata{Tool: "screenshot_element", HasImage: true},
					Value:    json.RawMessage(`{"image":{"bytes":6669,"mime_type":"image/png"},"matches":1,"success":true}`)},
				stored:   len(shotRecorded) + len(png),
				lastPage: indexPage,
			}
		},
	}, {
		name:   "screenshot over the image limit",
		answer: "04_take_screenshot.json",
		in: recordInput{
			tool: "browser_take_screenshot", fwd: forwarded{tool: "browser_take_screenshot", params: json.RawMessage(`{}`)},
			redact: redaction{
				maxImage:     1000,
				imageOmitted: func(size int) string { return fmt.Sprintf("[image of %d bytes omitted]", size) },
			},
			changesMax: DefaultChangesMax,
		},
		want: func(raw string) recordOutput {
			msg := fmt.Sprintf("[image of %d bytes omitted]; take a smaller one (an element, type jpeg, a lower scale, no fullPage)", len(png))
			return recordOutput{
				response: &proxy.Response{RefID: refID, Status: proxy.StatusError, Result: raw, ErrorMessage: msg, ErrorCode: proxy.EINVALID, Timestamp: at},
				activity: &proxy.SessionActivity{SessionID: session, At: at},
				result: &proxy.CallResult{RefID: refID, SessionID: session, Status: proxy.StatusError, Timestamp: at,
					Metadata: proxy.CallMetadata{Tool: "browser_take_screenshot"},
					Error:    msg, ErrorCode: proxy.EINVALID, Retryable: retryable(proxy.EINVALID),
					Suggestion: "Take a smaller screenshot: one element, type jpeg, a lower scale, no fullPage."},
				stored: len(raw),
			}
		},
	}, {
		name:   "PROXY_RESPONSE_MODE=full keeps upstream's answer",
		answer: "01_snapshot.json",
		in: recordInput{
			tool: "browser_snapshot", fwd: forwarded{tool: "browser_snapshot", params: json.RawMessage(`{}`)},
			lastPage: content.Page{URL: index, Title: "Probe Page", Snapshot: "- heading \"Hello probe\" [level=1] [ref=e2]"},
			// Asked for, but a full answer carries upstream's own instead.
			changes: true,
			redact:  openRedaction, full: true, changesMax: DefaultChangesMax,
		},
		want: func(raw string) recordOutput {
			inline := strings.TrimSuffix(indexYAML, "\n")
			return recordOutput{
				response: &proxy.Response{RefID: refID, Status: proxy.StatusSuccess, Result: raw, PageSnapshot: inline, Timestamp: at},
				// The same page: the session's last URL stands.
				activity: &proxy.SessionActivity{SessionID: session, At: at},
				result: &proxy.CallResult{RefID: refID, SessionID: session, Status: proxy.StatusSuccess, Timestamp: at,
					Metadata: proxy.CallMetadata{Tool: "browser_snapshot", PageURL: index, PageTitle: "Probe Page",
						HasSnapshot: true, SnapshotBytes: len(inline)},
					Upstream: json.RawMessage(raw)},
				stored:   len(raw) + len(inline),
				lastPage: content.Page{URL: index, Title: "Probe Page", Snapshot: inline},
			}
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := tt.in
			in.refID, in.sessionID, in.at = refID, session, at
			in.raw, in.outputDir = tt.raw, t.TempDir()
			if tt.answer != "" {
				in.raw, in.outputDir = recordedAnswer(t, tt.answer)
			}
			got := buildRecord(in)
			if diff := cmp.Diff(tt.want(string(in.raw)), got, cmp.AllowUnexported(recordOutput{}), cmpopts.EquateEmpty(), cmpopts.EquateErrors()); diff != "" {
				t.Errorf("buildRecord (-want +got):\n%s", diff)
			}
		})
	}
}

// TestBuildRecordMasksAllItKeeps: a secret in upstream's answer (the page's
// text, title, console) is masked in every part of the record and the
// answer, and in the page the next call is measured against.
func TestBuildRecordMasksAllItKeeps(t *testing.T) {
	secrets := []string{"Hello probe", "Probe Page", "error line"}
	var pairs []string
	for _, v := range secrets {
		pairs = append(pairs, v, "[masked]")
	}
	raw, dir := recordedAnswer(t, "00_navigate.json")
	got := buildRecord(recordInput{
		refID: "k3j5h2g8d9s7a6f4", sessionID: "6f1c2f7e-3b0a-4c55-9d0e-8a7b6c5d4e3f", tool: "browser_navigate",
		fwd: forwarded{tool: "browser_navigate", params: json.RawMessage(`{"url":"http://127.0.0.1:8765/index.html"}`)},
		raw: raw, outputDir: dir, at: time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC), changes: true,
		redact: redaction{
			mask:         redact.Redactor{Replacer: strings.NewReplacer(pairs...)},
			imageOmitted: openRedaction.imageOmitted,
		},
		changesMax: DefaultChangesMax,
	})
	kept, err := json.Marshal([]any{got.response, got.console, got.images, got.activity, got.result, got.lastPage})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range secrets {
		if bytes.Contains(kept, []byte(v)) {
			t.Errorf("%q is in the record: %s", v, kept)
		}
	}
	// Masked, not dropped.
	if got.result.Metadata.PageTitle != "[masked]" || !strings.Contains(got.lastPage.Snapshot, "[masked]") {
		t.Errorf("title %q, last snapshot %q: want them masked", got.result.Metadata.PageTitle, got.lastPage.Snapshot)
	}
}

// A call's record carries the files its answer says finished downloading,
// read from the worker's directory and described in its result; one the
// answer says is still arriving is named as pending, to be stored with the
// call that sees it finish.
func TestBuildRecordDownloads(t *testing.T) {
	dir := t.TempDir()
	csv := []byte("a,b\n1,2\n")
	big := bytes.Repeat([]byte{0}, 64)
	for name, data := range map[string][]byte{"report.csv": csv, "big.bin": big} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	text := "### Page\n- Page URL: http://127.0.0.1:1/\n### Events\n" +
		"- Downloading file report.csv ...\n- Downloading file big.bin ...\n- Downloading file slow.zip ...\n" +
		"- Downloaded file report.csv to \"" + filepath.Join(dir, "report.csv") + "\"\n" +
		"- Downloaded file big.bin to \"" + filepath.Join(dir, "big.bin") + "\""
	raw, err := json.Marshal(map[string]any{"content": []map[string]string{{"type": "text", "text": text}}})
	if err != nil {
		t.Fatal(err)
	}
	rec := buildRecord(recordInput{refID: "r", sessionID: "s", tool: "browser_click", raw: raw, outputDir: dir,
		at: time.Unix(0, 0), redact: openRedaction, maxDownload: 32})
	if rec.ingestErr != nil {
		t.Fatal(rec.ingestErr)
	}
	sum := sha256.Sum256(csv)
	stored := proxy.Download{RefID: "r", Name: "report.csv", MimeType: "text/csv; charset=utf-8", Size: 8, SHA256: hex.EncodeToString(sum[:]), Stored: true}
	notStored := proxy.Download{RefID: "r", Name: "big.bin", MimeType: "application/octet-stream", Size: 64}
	if diff := cmp.Diff([]proxy.Download{stored, notStored}, rec.result.Downloads); diff != "" {
		t.Errorf("the result's downloads (-want +got):\n%s", diff)
	}
	withData := stored
	withData.Data = csv
	if diff := cmp.Diff([]proxy.Download{withData, notStored}, rec.downloads); diff != "" {
		t.Errorf("the downloads recorded (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"slow.zip"}, rec.result.DownloadsPending); diff != "" {
		t.Errorf("pending downloads (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{"slow.zip": "r"}, rec.pending); diff != "" {
		t.Errorf("the session's downloads in progress (-want +got):\n%s", diff)
	}
}

func TestAttributeDownloads(t *testing.T) {
	tests := []struct {
		name      string
		parsed    answer.Parsed
		files     []string // the downloads ingested, by file name
		pending   map[string]string
		wantRefs  []string
		wantAfter map[string]string
	}{
		{"own downloads, nothing pending", answer.Parsed{Downloads: []answer.ParsedDownload{{Name: "a.csv", Path: "/o/a.csv"}}},
			[]string{"a.csv"}, nil, []string{"now"}, nil},
		{"one started here and not finished is remembered", answer.Parsed{Pending: []string{"slow.zip"}},
			nil, nil, nil, map[string]string{"slow.zip": "now"}},
		{"a late one goes to the call that started it, by the page's name", answer.Parsed{Downloads: []answer.ParsedDownload{
			{Name: "my report.csv", Path: "/o/my-report.csv", Late: true}, {Name: "b.csv", Path: "/o/b.csv"}}},
			[]string{"my-report.csv", "b.csv"}, map[string]string{"my report.csv": "click", "other.zip": "older"},
			[]string{"click", "now"}, map[string]string{"other.zip": "older"}},
		{"a late one nobody is known to have started stays here", answer.Parsed{Downloads: []answer.ParsedDownload{{Name: "x.csv", Path: "/o/x.csv", Late: true}}},
			[]string{"x.csv"}, nil, []string{"now"}, nil},
		{"the same name started again: the newest call", answer.Parsed{Pending: []string{"a.zip"}},
			nil, map[string]string{"a.zip": "older"}, nil, map[string]string{"a.zip": "now"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var downloads []proxy.Download
			for _, f := range tt.files {
				downloads = append(downloads, proxy.Download{Name: f})
			}
			before := maps.Clone(tt.pending)
			after := attributeDownloads(downloads, &tt.parsed, "now", tt.pending)
			var refs []string
			for _, d := range downloads {
				refs = append(refs, d.RefID)
			}
			if diff := cmp.Diff(tt.wantRefs, refs); diff != "" {
				t.Errorf("refs (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantAfter, after); diff != "" {
				t.Errorf("pending after (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(before, tt.pending); diff != "" {
				t.Errorf("the session's map was changed in place (-before +after):\n%s", diff)
			}
		})
	}
	many := answer.Parsed{}
	for i := range 2 * maxPendingDownloads {
		many.Pending = append(many.Pending, fmt.Sprint(i))
	}
	if n := len(attributeDownloads(nil, &many, "now", nil)); n != maxPendingDownloads {
		t.Errorf("%d downloads remembered, want the bound %d", n, maxPendingDownloads)
	}
}
