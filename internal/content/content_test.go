package content_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/clock/clocktest"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/content"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/store"
)

// read is one get_content call and what it must return.
type read struct {
	// setSnapshot, if not nil, replaces the ref's snapshot before the read
	// (the record is immutable in production; this is how a test makes a
	// view grow or change).
	setSnapshot *string
	search      string
	reset       bool

	want       string
	unchanged  bool
	noMatch    bool
	wantImages bool
}

func ptr(s string) *string { return &s }

// alphaBeta has its heading and paragraph far enough apart that a search
// for the first does not show the second as its neighbour (alphaBetaAlpha);
// a later search for "a", which matches both, must still show the heading.
const (
	alphaBeta      = "- heading \"Alpha heading\" [level=1] [ref=e1]\n- text: one\n- text: two\n- text: three\n- text: four\n- paragraph [ref=e2]: Beta paragraph\n"
	alphaBetaAlpha = "- heading \"Alpha heading\" [level=1] [ref=e1]\n- text: one\n- text: two\n- text: three\n...\n"
)

func mustSearch(t testing.TB, text, query string) string {
	t.Helper()
	got, err := content.Search(text, proxy.Query{Text: query})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func TestGetDiffSequences(t *testing.T) {
	t.Parallel()
	snap := "- generic [ref=e1]:\n  - heading \"Title\" [level=1] [ref=e2]\n  - button \"Click me\" [ref=e4]\n" +
		"  - paragraph: one\n  - paragraph: two\n  - paragraph: three\n  - paragraph: four\n  - link \"Home\" [ref=e5]:\n    - /url: /\n"
	buttonView := mustSearch(t, snap, "button")
	linkView := mustSearch(t, snap, "link")
	if strings.HasPrefix(snap, buttonView) {
		t.Fatal("test data: the button view must not be a prefix of the full view")
	}

	tests := []struct {
		name  string
		reads []read
	}{
		{"first full, then empty, reset full", []read{
			{want: snap, wantImages: true},
			{unchanged: true},
			{unchanged: true},
			{reset: true, want: snap, wantImages: true},
			{unchanged: true},
		}},
		// A search is not a diff: it neither reads nor moves the cursor.
		{"the same search twice answers twice, and the full view is still a first read", []read{
			{search: "button", want: buttonView},
			{search: "BUTTON", want: buttonView},
			{want: snap, wantImages: true},
			{unchanged: true},
			{search: "button", want: buttonView},
			{unchanged: true},
		}},
		{"switching searches returns each view whole", []read{
			{search: "button", want: buttonView},
			{search: "link", want: linkView},
			{search: "link", want: linkView},
			{search: "button", want: buttonView},
		}},
		{"a later, wider search keeps what an earlier one returned", []read{
			{setSnapshot: ptr(alphaBeta), search: "Alpha", want: alphaBetaAlpha},
			{search: "Alpha", want: alphaBetaAlpha},
			{search: "a", want: alphaBeta},
		}},
		{"search with no match says so, every time", []read{
			{search: "nothing-like-this", noMatch: true},
			{search: "nothing-like-this", noMatch: true},
		}},
		{"reset with a search", []read{
			{search: "button", want: buttonView},
			{search: "button", reset: true, want: buttonView},
		}},
		{"append-only growth returns the tail", []read{
			{setSnapshot: ptr("- a\n- b\n"), want: "- a\n- b\n", wantImages: true},
			{setSnapshot: ptr("- a\n- b\n- c\n"), want: "- c\n"},
			{unchanged: true},
			{setSnapshot: ptr("- a\n- b\n- c\n- d\n- e\n"), want: "- d\n- e\n"},
			{reset: true, want: "- a\n- b\n- c\n- d\n- e\n", wantImages: true},
		}},
		{"a search between two reads leaves the tail to the second", []read{
			{setSnapshot: ptr("- a:\n  - a1\n- b\n"), want: "- a:\n  - a1\n- b\n", wantImages: true},
			{setSnapshot: ptr("- a:\n  - a1\n- b\n- c\n"), search: "a1", want: "- a:\n  - a1\n"},
			{want: "- c\n"},
		}},
		{"changed or shrunk view is returned whole", []read{
			{setSnapshot: ptr("- a\n- b\n"), want: "- a\n- b\n", wantImages: true},
			{setSnapshot: ptr("- a\n- x\n- y\n"), want: "- a\n- x\n- y\n", wantImages: true},
			{setSnapshot: ptr("- a\n"), want: "- a\n", wantImages: true},
			{setSnapshot: ptr(""), want: "- result text", wantImages: true}, // no snapshot: the result text
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fs := newFakeStore()
			resp := proxy.Response{RefID: "r", Status: proxy.StatusSuccess, PageSnapshot: snap,
				Result: `{"content":[{"type":"text","text":"- result text"}]}`}
			fs.setResponse(resp)
			images := []proxy.Image{{RefID: "r", MimeType: "image/png", Data: []byte{0x89, 'P'}}}
			fs.images["r"] = images
			svc := content.New(fs)
			for i, rd := range tt.reads {
				if rd.setSnapshot != nil {
					resp.PageSnapshot = *rd.setSnapshot
					fs.setResponse(resp)
				}
				got, err := svc.Content(t.Context(), "r", proxy.Query{Text: rd.search}, rd.reset)
				if err != nil {
					t.Fatalf("read %d: %v", i, err)
				}
				want := &proxy.Content{Text: rd.want, Unchanged: rd.unchanged, NoMatch: rd.noMatch, Snapshot: resp.PageSnapshot != ""}
				if rd.wantImages {
					want.Images = images
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Fatalf("read %d (search %q, reset %v) (-want +got):\n%s", i, rd.search, rd.reset, diff)
				}
			}
			plain := 0
			for _, rd := range tt.reads {
				if rd.search == "" {
					plain++
				}
			}
			if fs.puts != plain {
				t.Errorf("cursor written %d times for %d reads without a search, want once per such read", fs.puts, plain)
			}
		})
	}
}

func TestGetCursorContents(t *testing.T) {
	t.Parallel()
	fs := newFakeStore()
	fs.setResponse(proxy.Response{RefID: "r", Status: proxy.StatusSuccess, PageSnapshot: "- a\n- b\n"})
	clk := clocktest.New()
	clk.Advance(time.Hour)
	svc := content.New(fs, content.WithClock(clk))
	if _, err := svc.Content(t.Context(), "r", proxy.Query{}, false); err != nil {
		t.Fatal(err)
	}
	view := "- a\n- b\n"
	sum := sha256.Sum256([]byte(view))
	got := fs.cursors["r"]
	want := proxy.DiffCursor{RefID: "r", CursorPosition: len(view), LastSnapshotHash: hex.EncodeToString(sum[:]), LastRead: clk.Now()}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("stored cursor (-want +got):\n%s", diff)
	}
}

func TestGetResultText(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, result, want string
	}{
		{"text parts joined, images skipped",
			`{"content":[{"type":"text","text":"### Result\nTook the screenshot"},{"type":"image","data":"iVBORw0KGgo=","mimeType":"image/png"},{"type":"text","text":"### Page\n- Page URL: https://example.com/"}]}`,
			"### Result\nTook the screenshot\n### Page\n- Page URL: https://example.com/"},
		{"error result", `{"content":[{"type":"text","text":"### Error\nRef e9 not found"}],"isError":true}`, "### Error\nRef e9 not found"},
		{"no text parts", `{"content":[{"type":"image","data":"AA==","mimeType":"image/png"}]}`, ""},
		{"empty content", `{"content":[]}`, ""},
		{"not a CallToolResult is shown as is", `{"foo":1}`, `{"foo":1}`},
		{"not JSON is shown as is", "plain \xff text", "plain \xff text"},
		{"empty", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, content.ResultText(tt.result)); diff != "" {
				t.Errorf("ResultText (-want +got):\n%s", diff)
			}
			fs := newFakeStore()
			fs.setResponse(proxy.Response{RefID: "r", Status: proxy.StatusSuccess, Result: tt.result})
			got, err := content.New(fs).Content(t.Context(), "r", proxy.Query{}, false)
			if err != nil {
				t.Fatal(err)
			}
			if got.Text != tt.want {
				t.Errorf("Get text = %q, want %q", got.Text, tt.want)
			}
		})
	}
}

func TestGetErrors(t *testing.T) {
	t.Parallel()
	fs := newFakeStore()
	fs.inFlight["running"] = true
	svc := content.New(fs)
	for _, ref := range []string{"unknown", "running"} {
		t.Run(ref, func(t *testing.T) {
			_, err := svc.Content(t.Context(), ref, proxy.Query{}, false)
			if code := proxy.ErrorCode(err); code != proxy.EREFMISSING {
				t.Fatalf("Get(%s) error = %v (code %q), want %s", ref, err, code, proxy.EREFMISSING)
			}
			if len(fs.cursors) != 0 {
				t.Errorf("a failed read stored a cursor")
			}
		})
	}
}

// TestGetConcurrentSameRef: parallel reads of one ref must behave as if
// serialised: exactly one gets the full view, every other one "unchanged".
func TestGetConcurrentSameRef(t *testing.T) {
	t.Parallel()
	fs := newFakeStore()
	fs.setResponse(proxy.Response{RefID: "r", Status: proxy.StatusSuccess, PageSnapshot: strings.Repeat("- x\n", 1000)})
	svc := content.New(fs)
	var (
		wg              sync.WaitGroup
		mu              sync.Mutex
		full, unchanged int
	)
	for range 32 {
		wg.Go(func() {
			c, err := svc.Content(context.Background(), "r", proxy.Query{}, false)
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			if c.Unchanged {
				unchanged++
			} else {
				full++
			}
		})
	}
	wg.Wait()
	if full != 1 || unchanged != 31 {
		t.Errorf("full reads = %d, unchanged = %d; want 1 and 31", full, unchanged)
	}
}

// TestCursorSurvivesRestart runs the diff cursor on the real store across a
// Close and a new Open of the same file.
func TestCursorSurvivesRestart(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "proxy.db")
	snap := readSnapshot(t)

	db, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	seed(t, db, "r", snap, []proxy.ConsoleEntry{{Level: "error", Message: "boom"}})
	got, err := content.New(db).Content(ctx, "r", proxy.Query{}, false)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(&proxy.Content{Text: snap, Images: []proxy.Image{}, Snapshot: true}, got); diff != "" {
		t.Fatalf("first read (-want +got):\n%s", diff)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	db, err = store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	svc := content.New(db)
	reads := []struct {
		search string
		reset  bool
		want   *proxy.Content
	}{
		{"", false, &proxy.Content{Unchanged: true, Snapshot: true}},
		{"", true, &proxy.Content{Text: snap, Images: []proxy.Image{}, Snapshot: true}},
		{"button", false, &proxy.Content{Text: mustSearch(t, snap, "button"), Snapshot: true}},
		{"", false, &proxy.Content{Unchanged: true, Snapshot: true}}, // the search moved no cursor
	}
	for i, rd := range reads {
		got, err := svc.Content(ctx, "r", proxy.Query{Text: rd.search}, rd.reset)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(rd.want, got); diff != "" {
			t.Errorf("read %d after restart (-want +got):\n%s", i, diff)
		}
	}
	if _, err := svc.Content(ctx, "nope", proxy.Query{}, false); proxy.ErrorCode(err) != proxy.EREFMISSING {
		t.Errorf("unknown ref on the real store: %v, want %s", err, proxy.EREFMISSING)
	}
	out, err := svc.Console(ctx, "r", "")
	if err != nil || out != "[ERROR] boom\n" {
		t.Errorf("Console = %q, %v", out, err)
	}
}

func seed(t testing.TB, db *store.DB, ref, snapshot string, console []proxy.ConsoleEntry) {
	t.Helper()
	ctx := context.Background()
	if _, err := db.GetSession(ctx, "s"); err != nil {
		if err := db.CreateSession(ctx, &proxy.Session{ID: "s", State: proxy.SessionActive}); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.InsertRequest(ctx, &proxy.Request{RefID: ref, SessionID: "s", ToolName: "browser_snapshot",
		Params: json.RawMessage(`{}`)}); err != nil {
		t.Fatal(err)
	}
	if err := db.InsertResponse(ctx, &proxy.Response{RefID: ref, Status: proxy.StatusSuccess, Result: "{}",
		PageSnapshot: snapshot}, console, nil); err != nil {
		t.Fatal(err)
	}
}

// bigSnapshot is a realistic snapshot repeated to at least n bytes, with
// refs renumbered so that every line stays unique, as in a real page.
func bigSnapshot(t testing.TB, n int) string {
	t.Helper()
	base := readSnapshot(t)
	var b strings.Builder
	b.WriteString("- generic [ref=e0]:\n")
	for i := 0; b.Len() < n; i++ {
		for line := range strings.Lines(base) {
			b.WriteString("  " + strings.ReplaceAll(line, "[ref=e", fmt.Sprintf("[ref=e%d_", i)))
		}
	}
	return b.String()
}

// TestPeekLeavesTheCursorAlone reads refs whole, images included, before and
// between get_content reads: the diff cursor is neither read nor written, so
// the next get_content answers as if the peek never happened.
func TestPeekLeavesTheCursorAlone(t *testing.T) {
	t.Parallel()
	snap := "- generic [ref=e1]:\n  - button \"Click me\" [ref=e4]\n"
	png := []proxy.Image{{RefID: "shot", MimeType: "image/png", Data: []byte{0x89, 'P', 'N', 'G'}}}
	tests := []struct {
		name string
		ref  string
		// readFirst makes a get_content read before the peek.
		readFirst bool
		want      *proxy.Content
		// wantNext is what get_content answers after the peek.
		wantNext *proxy.Content
		wantCode string
	}{
		{name: "snapshot, never read", ref: "snap",
			want:     &proxy.Content{Text: snap, Images: []proxy.Image{}, Snapshot: true},
			wantNext: &proxy.Content{Text: snap, Images: []proxy.Image{}, Snapshot: true}},
		{name: "snapshot, already read", ref: "snap", readFirst: true,
			want:     &proxy.Content{Text: snap, Images: []proxy.Image{}, Snapshot: true},
			wantNext: &proxy.Content{Unchanged: true, Snapshot: true}},
		{name: "result text with an image", ref: "shot",
			want:     &proxy.Content{Text: "### Result\nTook the screenshot", Images: png},
			wantNext: &proxy.Content{Text: "### Result\nTook the screenshot", Images: png}},
		{name: "unknown ref", ref: "nope", wantCode: proxy.EREFMISSING},
		{name: "call still running", ref: "running", wantCode: proxy.EREFMISSING},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fs := newFakeStore()
			fs.setResponse(proxy.Response{RefID: "snap", Status: proxy.StatusSuccess, PageSnapshot: snap, Result: "{}"})
			fs.setResponse(proxy.Response{RefID: "shot", Status: proxy.StatusSuccess,
				Result: `{"content":[{"type":"text","text":"### Result\nTook the screenshot"},{"type":"image","data":"iVBORw==","mimeType":"image/png"}]}`})
			fs.images["shot"] = png
			fs.inFlight["running"] = true
			svc := content.New(fs)
			ctx := t.Context()
			if tt.readFirst {
				if _, err := svc.Content(ctx, tt.ref, proxy.Query{}, false); err != nil {
					t.Fatal(err)
				}
			}
			cursorsBefore, putsBefore := maps.Clone(fs.cursors), fs.puts

			got, err := svc.Peek(ctx, tt.ref)
			if proxy.ErrorCode(err) != tt.wantCode {
				t.Fatalf("Peek(%q) error = %v, want code %q", tt.ref, err, tt.wantCode)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Peek (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(cursorsBefore, fs.cursors); diff != "" || fs.puts != putsBefore {
				t.Errorf("Peek wrote cursors (%d puts before, %d after) (-before +after):\n%s", putsBefore, fs.puts, diff)
			}
			if tt.wantNext == nil {
				return
			}
			next, err := svc.Content(ctx, tt.ref, proxy.Query{}, false)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.wantNext, next); diff != "" {
				t.Errorf("get_content after the peek (-want +got):\n%s", diff)
			}
		})
	}
}
