package store_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/store"
)

// t0 is deliberately not UTC and has every nanosecond digit set: the store
// must give back the same instant, exactly.
var t0 = time.Date(2025, 3, 4, 5, 6, 7, 123456789, time.FixedZone("JST", 9*3600))

func openDB(t testing.TB, path string) *store.DB {
	t.Helper()
	db, err := store.Open(context.Background(), path)
	if err != nil {
		t.Fatalf("Open(%q): %v", path, err)
	}
	t.Cleanup(func() {
		if err := db.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return db
}

func newDB(t testing.TB) *store.DB {
	t.Helper()
	return openDB(t, filepath.Join(t.TempDir(), "proxy.db"))
}

func mustSession(t testing.TB, db *store.DB, id string) *proxy.Session {
	t.Helper()
	s := &proxy.Session{ID: id, CreatedAt: t0, LastActivity: t0, State: proxy.SessionActive}
	if err := db.CreateSession(context.Background(), s); err != nil {
		t.Fatalf("CreateSession(%s): %v", id, err)
	}
	return s
}

func mustRequest(t testing.TB, db *store.DB, sessionID, refID string) *proxy.Request {
	t.Helper()
	r := &proxy.Request{RefID: refID, SessionID: sessionID, ToolName: "browser_snapshot",
		Params: json.RawMessage(`{}`), Timestamp: t0}
	if err := db.InsertRequest(context.Background(), r); err != nil {
		t.Fatalf("InsertRequest(%s): %v", refID, err)
	}
	return r
}

func mustResponse(t testing.TB, db *store.DB, refID, snapshot string) *proxy.Response {
	t.Helper()
	r := &proxy.Response{RefID: refID, Status: proxy.StatusSuccess, Result: `{"content":[]}`,
		PageSnapshot: snapshot, Timestamp: t0}
	if err := db.InsertResponse(context.Background(), r, nil, nil); err != nil {
		t.Fatalf("InsertResponse(%s): %v", refID, err)
	}
	return r
}

// wantCode fails unless err is a *proxy.Error with the given code ("" = nil).
func wantCode(t *testing.T, err error, code string) {
	t.Helper()
	if got := proxy.ErrorCode(err); got != code {
		t.Fatalf("error code = %q (err %v), want %q", got, err, code)
	}
	if code != "" {
		var e *proxy.Error
		if !errors.As(err, &e) {
			t.Fatalf("error %v is not a *proxy.Error", err)
		}
	}
}

func TestOpen(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		path    func(dir string) string
		wantErr bool
	}{
		{"plain file", func(dir string) string { return filepath.Join(dir, "proxy.db") }, false},
		{"missing parent directories are created", func(dir string) string { return filepath.Join(dir, "a", "b", "proxy.db") }, false},
		{"URI metacharacters in the path", func(dir string) string { return filepath.Join(dir, "we?ird #dir%20", "p&x=1.db") }, false},
		{"relative path", func(dir string) string {
			rel, err := filepath.Rel(mustGetwd(t), filepath.Join(dir, "rel.db"))
			if err != nil {
				t.Fatal(err)
			}
			return rel
		}, false},
		{"empty path", func(string) string { return "" }, true},
		{"in-memory", func(string) string { return ":memory:" }, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := tt.path(t.TempDir())
			db, err := store.Open(t.Context(), path)
			if tt.wantErr {
				if err == nil {
					db.Close()
					t.Fatalf("Open(%q) succeeded, want an error", path)
				}
				return
			}
			if err != nil {
				t.Fatalf("Open(%q): %v", path, err)
			}
			defer db.Close()
			abs, _ := filepath.Abs(path)
			if db.Path() != abs {
				t.Errorf("Path() = %q, want %q", db.Path(), abs)
			}
			// The file is really at that path, not at a URI-mangled one.
			if _, err := os.Stat(abs); err != nil {
				t.Errorf("database file: %v", err)
			}
		})
	}
}

func mustGetwd(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return wd
}

func TestOpenMigratesIdempotently(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "proxy.db")

	db, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	mustSession(t, db, "s1")
	mustRequest(t, db, "s1", "r1")
	mustResponse(t, db, "r1", "- snapshot")
	if err := db.Migrate(ctx); err != nil {
		t.Fatalf("second Migrate: %v", err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}

	for i := range 3 {
		db := openDB(t, path)
		if err := db.Migrate(ctx); err != nil {
			t.Fatalf("re-open %d: Migrate: %v", i, err)
		}
		r, err := db.GetResponse(ctx, "r1")
		if err != nil {
			t.Fatalf("re-open %d: %v", i, err)
		}
		if r.PageSnapshot != "- snapshot" {
			t.Fatalf("re-open %d: snapshot = %q", i, r.PageSnapshot)
		}
	}
}

func TestSessions(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db := newDB(t)

	older := &proxy.Session{ID: "a-older", CreatedAt: t0, LastActivity: t0, State: proxy.SessionActive}
	newer := &proxy.Session{ID: "b-newer", CreatedAt: t0.Add(time.Nanosecond), LastActivity: t0,
		State: proxy.SessionSuspended, Metadata: json.RawMessage(`{"url":"https://example.com/ä","n":1.0}`),
		Profile: "work", ProfileVersion: 3, ProfileWrite: true,
		Options: &proxy.BrowserOptions{Viewport: &proxy.Viewport{Width: 390, Height: 844}, Device: "iPhone 15", Locale: "fr-FR", Timezone: "Europe/Paris", ColorScheme: "dark", UserAgent: "ua/1", Browser: "webkit"}}
	// Created out of order, and with a fraction that RFC3339Nano would trim
	// ("…07Z" vs "…07.5Z"): the listing must still be newest first.
	newest := &proxy.Session{ID: "c-newest", CreatedAt: t0.Truncate(time.Second).Add(time.Second), LastActivity: t0,
		State: proxy.SessionClosed}
	for _, s := range []*proxy.Session{newer, newest, older} {
		if err := db.CreateSession(ctx, s); err != nil {
			t.Fatalf("CreateSession(%s): %v", s.ID, err)
		}
	}

	t.Run("get round-trips exactly", func(t *testing.T) {
		got, err := db.GetSession(ctx, newer.ID)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(newer, got); diff != "" {
			t.Errorf("GetSession (-want +got):\n%s", diff)
		}
		if got.CreatedAt.Location() != time.UTC {
			t.Errorf("CreatedAt location = %v, want UTC", got.CreatedAt.Location())
		}
		if !bytes.Equal(got.Metadata, newer.Metadata) {
			t.Errorf("metadata bytes = %s, want %s", got.Metadata, newer.Metadata)
		}
	})

	t.Run("list newest first", func(t *testing.T) {
		got, err := db.ListSessions(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]*proxy.Session{newest, newer, older}, got); diff != "" {
			t.Errorf("ListSessions (-want +got):\n%s", diff)
		}
	})

	errTests := []struct {
		name string
		op   func() error
		code string
	}{
		{"get unknown", func() error { _, err := db.GetSession(ctx, "nope"); return err }, proxy.ESESSIONMISSING},
		{"create duplicate", func() error { return db.CreateSession(ctx, older) }, proxy.EINVALID},
		{"create without id", func() error { return db.CreateSession(ctx, &proxy.Session{State: proxy.SessionActive}) }, proxy.EINVALID},
		{"create nil", func() error { return db.CreateSession(ctx, nil) }, proxy.EINVALID},
		{"create bad state", func() error { return db.CreateSession(ctx, &proxy.Session{ID: "x", State: "zombie"}) }, proxy.EINVALID},
		{"create bad metadata", func() error {
			return db.CreateSession(ctx, &proxy.Session{ID: "x", State: proxy.SessionActive, Metadata: json.RawMessage(`{`)})
		}, proxy.EINVALID},
		{"update state unknown", func() error { return db.UpdateSessionState(ctx, "nope", proxy.SessionClosed) }, proxy.ESESSIONMISSING},
		{"update bad state", func() error { return db.UpdateSessionState(ctx, older.ID, "zombie") }, proxy.EINVALID},
		{"touch unknown", func() error { return db.TouchSession(ctx, "nope", t0) }, proxy.ESESSIONMISSING},
	}
	for _, tt := range errTests {
		t.Run(tt.name, func(t *testing.T) { wantCode(t, tt.op(), tt.code) })
	}

	updates := []struct {
		name string
		op   func(id string) error
		want func(s proxy.Session) proxy.Session
	}{
		{"state", func(id string) error { return db.UpdateSessionState(ctx, id, proxy.SessionError) },
			func(s proxy.Session) proxy.Session { s.State = proxy.SessionError; return s }},
		{"touch forward", func(id string) error { return db.TouchSession(ctx, id, t0.Add(time.Hour)) },
			func(s proxy.Session) proxy.Session { s.LastActivity = t0.Add(time.Hour); return s }},
		{"touch backward is ignored", func(id string) error { return db.TouchSession(ctx, id, t0.Add(-time.Hour)) },
			func(s proxy.Session) proxy.Session { return s }},
	}
	for i, tt := range updates {
		t.Run(tt.name, func(t *testing.T) {
			s := proxy.Session{ID: "u" + string(rune('a'+i)), CreatedAt: t0, LastActivity: t0,
				State: proxy.SessionActive, Metadata: json.RawMessage(`{"old":true}`)}
			if err := db.CreateSession(ctx, &s); err != nil {
				t.Fatal(err)
			}
			if err := tt.op(s.ID); err != nil {
				t.Fatal(err)
			}
			got, err := db.GetSession(ctx, s.ID)
			if err != nil {
				t.Fatal(err)
			}
			want := tt.want(s)
			if diff := cmp.Diff(&want, got); diff != "" {
				t.Errorf("after update (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRequests(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db := newDB(t)
	mustSession(t, db, "s")

	okTests := []struct {
		name string
		req  proxy.Request
	}{
		{"with params", proxy.Request{RefID: "r1", SessionID: "s", ToolName: "browser_click",
			Params: json.RawMessage(`{"element":"Click \"me\"","target":"e4","n":1.50}`), Timestamp: t0}},
		{"without params", proxy.Request{RefID: "r2", SessionID: "s", ToolName: "browser_snapshot", Timestamp: t0}},
	}
	for _, tt := range okTests {
		t.Run(tt.name, func(t *testing.T) {
			if err := db.InsertRequest(ctx, &tt.req); err != nil {
				t.Fatal(err)
			}
			got, err := db.GetRequest(ctx, tt.req.RefID)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(&tt.req, got); diff != "" {
				t.Errorf("GetRequest (-want +got):\n%s", diff)
			}
		})
	}

	errTests := []struct {
		name string
		req  *proxy.Request
		code string
	}{
		{"unknown session (foreign key)", &proxy.Request{RefID: "x1", SessionID: "nope", ToolName: "t"}, proxy.ESESSIONMISSING},
		{"duplicate ref", &proxy.Request{RefID: "r1", SessionID: "s", ToolName: "t"}, proxy.EINVALID},
		{"nil", nil, proxy.EINVALID},
		{"no ref", &proxy.Request{SessionID: "s", ToolName: "t"}, proxy.EINVALID},
		{"no session", &proxy.Request{RefID: "x2", ToolName: "t"}, proxy.EINVALID},
		{"no tool", &proxy.Request{RefID: "x3", SessionID: "s"}, proxy.EINVALID},
		{"bad params", &proxy.Request{RefID: "x4", SessionID: "s", ToolName: "t", Params: json.RawMessage(`{"a":`)}, proxy.EINVALID},
	}
	for _, tt := range errTests {
		t.Run(tt.name, func(t *testing.T) { wantCode(t, db.InsertRequest(ctx, tt.req), tt.code) })
	}
	t.Run("get unknown", func(t *testing.T) {
		_, err := db.GetRequest(ctx, "nope")
		wantCode(t, err, proxy.EREFMISSING)
	})
}

func TestResponseRoundTrip(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db := newDB(t)
	mustSession(t, db, "s")

	big := bytes.Repeat([]byte("- generic [ref=e1]:\n  - button \"Click me\" [ref=e4]\n"), 1<<20/48+1)[:1<<20]
	tests := []struct {
		name    string
		resp    proxy.Response
		console []proxy.ConsoleEntry
		images  []proxy.Image
	}{
		{
			name: "every field, awkward bytes",
			resp: proxy.Response{Status: proxy.StatusSuccess,
				Result:       `{"content":[{"type":"text","text":"### Result\n\"ok\" \u00e9"}]}`,
				PageSnapshot: "- heading \"Caf\xc3\xa9 \xf0\x9f\x8d\xb5\" [level=1]\r\n- text: \xff\xfe invalid UTF-8 \x00 NUL\n  trailing spaces   \n",
				ConsoleLogs:  "[ERROR] boom @ http://x/app.js:1\n[LOG] hi",
				ErrorMessage: "", Timestamp: t0},
			console: []proxy.ConsoleEntry{
				{Level: proxy.LevelError, Message: "boom \xff", Timestamp: t0,
					Location: json.RawMessage(`{"url":"http://x/app.js","lineNumber":1,"columnNumber":7}`)},
				{Level: proxy.LevelInfo, Message: "second", Timestamp: t0.Add(time.Millisecond)},
				{Level: proxy.LevelDebug, Message: "", Timestamp: time.Time{}},
			},
			images: []proxy.Image{
				{MimeType: "image/png", Data: []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")},
				{MimeType: "image/jpeg", Data: []byte{0xff, 0xd8, 0xff, 0x00}},
				{MimeType: "image/png", Data: nil},
			},
		},
		{
			name: "1 MB snapshot",
			resp: proxy.Response{Status: proxy.StatusSuccess, Result: "{}", PageSnapshot: string(big), Timestamp: t0},
		},
		{
			name: "error status",
			resp: proxy.Response{Status: proxy.StatusError, Result: `{"content":[{"type":"text","text":"### Error\nRef e9 not found"}],"isError":true}`,
				ErrorMessage: "Ref e9 not found", Timestamp: t0},
		},
		{
			name: "empty strings",
			resp: proxy.Response{Status: proxy.StatusSuccess},
		},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ref := "ref-" + string(rune('a'+i))
			mustRequest(t, db, "s", ref)
			tt.resp.RefID = ref
			// RefIDs and seqs the caller got wrong are overridden.
			console := append([]proxy.ConsoleEntry(nil), tt.console...)
			for j := range console {
				console[j].RefID = "wrong"
			}
			images := append([]proxy.Image(nil), tt.images...)
			for j := range images {
				images[j].Seq = 7
			}
			if err := db.InsertResponse(ctx, &tt.resp, console, images); err != nil {
				t.Fatal(err)
			}
			if console != nil && console[0].RefID != "wrong" {
				t.Error("InsertResponse modified the caller's console slice")
			}

			got, err := db.GetResponse(ctx, ref)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(&tt.resp, got); diff != "" {
				t.Errorf("GetResponse (-want +got):\n%s", diff)
			}
			if got.PageSnapshot != tt.resp.PageSnapshot || got.Result != tt.resp.Result {
				t.Errorf("stored text differs byte-wise")
			}

			wantConsole := []proxy.ConsoleEntry{}
			gotConsole, err := db.ListConsole(ctx, ref)
			if err != nil {
				t.Fatal(err)
			}
			for j, c := range tt.console {
				c.RefID = ref
				if j < len(gotConsole) {
					c.ID = gotConsole[j].ID
					if j > 0 && c.ID <= gotConsole[j-1].ID {
						t.Errorf("console ids not increasing: %d after %d", c.ID, gotConsole[j-1].ID)
					}
				}
				wantConsole = append(wantConsole, c)
			}
			if diff := cmp.Diff(wantConsole, gotConsole); diff != "" {
				t.Errorf("ListConsole (-want +got):\n%s", diff)
			}

			wantImages := []proxy.Image{}
			for j, img := range tt.images {
				img.RefID, img.Seq = ref, j
				if img.Data == nil {
					img.Data = []byte{}
				}
				wantImages = append(wantImages, img)
			}
			gotImages, err := db.ListImages(ctx, ref)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(wantImages, gotImages); diff != "" {
				t.Errorf("ListImages (-want +got):\n%s", diff)
			}
		})
	}
}

func TestResponseErrors(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db := newDB(t)
	mustSession(t, db, "s")
	mustRequest(t, db, "s", "done")
	mustResponse(t, db, "done", "x")
	mustRequest(t, db, "s", "inflight")

	t.Run("get unknown", func(t *testing.T) {
		_, err := db.GetResponse(ctx, "nope")
		wantCode(t, err, proxy.EREFMISSING)
		if strings.Contains(err.Error(), "in flight") {
			t.Errorf("unknown ref reported as in flight: %v", err)
		}
	})
	t.Run("get in flight", func(t *testing.T) {
		_, err := db.GetResponse(ctx, "inflight")
		wantCode(t, err, proxy.EREFMISSING)
		if !strings.Contains(err.Error(), "in flight") || !proxy.AsError(err).Retryable {
			t.Errorf("in-flight error = %v (retryable %v), want an in-flight, retryable message", err, proxy.AsError(err).Retryable)
		}
	})

	loc := json.RawMessage(`{"url":"u"}`)
	tests := []struct {
		name    string
		resp    *proxy.Response
		console []proxy.ConsoleEntry
		code    string
	}{
		{"no request (foreign key)", &proxy.Response{RefID: "nope", Status: proxy.StatusSuccess}, nil, proxy.EREFMISSING},
		{"duplicate", &proxy.Response{RefID: "done", Status: proxy.StatusSuccess}, nil, proxy.EINVALID},
		{"bad status", &proxy.Response{RefID: "inflight", Status: "meh"}, nil, proxy.EINVALID},
		{"nil", nil, nil, proxy.EINVALID},
		{"bad console location", &proxy.Response{RefID: "inflight", Status: proxy.StatusSuccess},
			[]proxy.ConsoleEntry{{Level: "info", Location: loc}, {Level: "info", Location: json.RawMessage(`{`)}}, proxy.EINVALID},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantCode(t, db.InsertResponse(ctx, tt.resp, tt.console, nil), tt.code)
		})
	}

	t.Run("rejected inserts leave nothing behind", func(t *testing.T) {
		_, err := db.GetResponse(ctx, "inflight")
		wantCode(t, err, proxy.EREFMISSING)
		c, err := db.ListConsole(ctx, "inflight")
		if err != nil || len(c) != 0 {
			t.Errorf("ListConsole = %v, %v; want nothing", c, err)
		}
	})

	t.Run("lists of unknown refs are empty", func(t *testing.T) {
		c, err := db.ListConsole(ctx, "nope")
		if err != nil || c == nil || len(c) != 0 {
			t.Errorf("ListConsole = %#v, %v; want empty, non-nil", c, err)
		}
		i, err := db.ListImages(ctx, "nope")
		if err != nil || i == nil || len(i) != 0 {
			t.Errorf("ListImages = %#v, %v; want empty, non-nil", i, err)
		}
	})
}

func TestCursors(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db := newDB(t)
	mustSession(t, db, "s")
	mustRequest(t, db, "s", "r")
	mustResponse(t, db, "r", "x")

	if c, err := db.GetCursor(ctx, "r"); c != nil || err != nil {
		t.Fatalf("GetCursor before any = %v, %v; want nil, nil", c, err)
	}
	steps := []struct {
		name string
		put  proxy.DiffCursor
	}{
		{"create", proxy.DiffCursor{RefID: "r", CursorPosition: 10, LastSnapshotHash: "aaa", LastRead: t0}},
		{"replace", proxy.DiffCursor{RefID: "r", CursorPosition: 0, LastSnapshotHash: "bbb", LastRead: t0.Add(time.Second)}},
	}
	for _, tt := range steps {
		t.Run(tt.name, func(t *testing.T) {
			if err := db.PutCursor(ctx, &tt.put); err != nil {
				t.Fatal(err)
			}
			got, err := db.GetCursor(ctx, "r")
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(&tt.put, got); diff != "" {
				t.Errorf("GetCursor (-want +got):\n%s", diff)
			}
		})
	}

	errTests := []struct {
		name string
		c    *proxy.DiffCursor
		code string
	}{
		{"unknown ref (foreign key)", &proxy.DiffCursor{RefID: "nope"}, proxy.EREFMISSING},
		{"nil", nil, proxy.EINVALID},
		{"negative position", &proxy.DiffCursor{RefID: "r", CursorPosition: -1}, proxy.EINVALID},
	}
	for _, tt := range errTests {
		t.Run(tt.name, func(t *testing.T) { wantCode(t, db.PutCursor(ctx, tt.c), tt.code) })
	}
}

func TestSizeBytes(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db := newDB(t)
	before, err := db.SizeBytes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if before <= 0 {
		t.Fatalf("SizeBytes = %d, want > 0", before)
	}
	mustSession(t, db, "s")
	mustRequest(t, db, "s", "r")
	mustResponse(t, db, "r", strings.Repeat("x", 1<<20))
	after, err := db.SizeBytes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if after < before+1<<20 {
		t.Errorf("SizeBytes after a 1 MB snapshot = %d, want >= %d", after, before+1<<20)
	}
}

func TestPing(t *testing.T) {
	t.Parallel()
	db, err := store.Open(t.Context(), filepath.Join(t.TempDir(), "proxy.db"))
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Ping(t.Context()); err != nil {
		t.Fatalf("Ping on an open database: %v", err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if err := db.Ping(t.Context()); err == nil {
		t.Fatal("Ping on a closed database succeeded")
	}
}

func TestCloseCheckpoints(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "proxy.db")
	db, err := store.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	mustSession(t, db, "s")
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	// After a clean close the main file alone holds everything.
	if fi, err := os.Stat(path + "-wal"); err == nil && fi.Size() != 0 {
		t.Errorf("WAL left with %d bytes after Close", fi.Size())
	}
	db2 := openDB(t, path)
	if _, err := db2.GetSession(t.Context(), "s"); err != nil {
		t.Fatal(err)
	}
}
