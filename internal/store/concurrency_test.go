package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/store"
)

func isBusy(err error) bool {
	var e *sqlite.Error
	if errors.As(err, &e) {
		return e.Code()&0xff == sqlite3.SQLITE_BUSY || e.Code()&0xff == sqlite3.SQLITE_LOCKED
	}
	return strings.Contains(err.Error(), "SQLITE_BUSY") || strings.Contains(err.Error(), "database is locked")
}

// TestConcurrentReadModifyWrite is SQLite's SQLITE_BUSY pitfall: many goroutines
// each doing read-modify-write work. It runs once on one handle and once
// on two handles of the same file, which is what two processes look like to
// SQLite (there only _txlock=immediate + busy_timeout keep writers apart).
func TestConcurrentReadModifyWrite(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		handles    int
		goroutines int
		iterations int
	}{
		{"one handle", 1, 32, 15},
		{"two handles on one file", 2, 24, 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			path := filepath.Join(t.TempDir(), "proxy.db")
			var dbs []*store.DB
			for range tt.handles {
				dbs = append(dbs, openDB(t, path))
			}
			mustSession(t, dbs[0], "hot")
			mustRequest(t, dbs[0], "hot", "hot-ref")
			mustResponse(t, dbs[0], "hot-ref", "- shared")

			var (
				wg   sync.WaitGroup
				mu   sync.Mutex
				errs []error
			)
			fail := func(err error) {
				mu.Lock()
				defer mu.Unlock()
				errs = append(errs, err)
			}
			for g := range tt.goroutines {
				db := dbs[g%len(dbs)]
				wg.Go(func() {
					for i := range tt.iterations {
						ref := fmt.Sprintf("g%d-i%d", g, i)
						if err := db.InsertRequest(ctx, &proxy.Request{RefID: ref, SessionID: "hot",
							ToolName: "browser_click", Params: json.RawMessage(`{"i":1}`), Timestamp: time.Now()}); err != nil {
							fail(fmt.Errorf("%s InsertRequest: %w", ref, err))
							return
						}
						if err := db.InsertResponse(ctx,
							&proxy.Response{RefID: ref, Status: proxy.StatusSuccess, Result: "{}", PageSnapshot: strings.Repeat("y", 4096), Timestamp: time.Now()},
							[]proxy.ConsoleEntry{{Level: "info", Message: "a"}, {Level: "error", Message: "b"}},
							[]proxy.Image{{MimeType: "image/png", Data: []byte{1, 2, 3}}}); err != nil {
							fail(fmt.Errorf("%s InsertResponse: %w", ref, err))
							return
						}
						// Read, then write what was read: on the hot
						// cursor and on this ref's own cursor.
						for _, target := range []string{"hot-ref", ref} {
							c, err := db.GetCursor(ctx, target)
							if err != nil {
								fail(fmt.Errorf("%s GetCursor: %w", target, err))
								return
							}
							pos := 0
							if c != nil {
								pos = c.CursorPosition
							}
							if err := db.PutCursor(ctx, &proxy.DiffCursor{RefID: target, CursorPosition: pos + 1,
								LastSnapshotHash: "h", LastRead: time.Now()}); err != nil {
								fail(fmt.Errorf("%s PutCursor: %w", target, err))
								return
							}
						}
						if err := db.TouchSession(ctx, "hot", time.Now()); err != nil {
							fail(fmt.Errorf("TouchSession: %w", err))
							return
						}
						if _, err := db.GetResponse(ctx, ref); err != nil {
							fail(fmt.Errorf("%s GetResponse: %w", ref, err))
							return
						}
					}
				})
			}
			wg.Wait()
			busy := 0
			for _, err := range errs {
				if isBusy(err) {
					busy++
				}
			}
			if len(errs) > 0 {
				t.Fatalf("%d errors (%d SQLITE_BUSY), first: %v", len(errs), busy, errs[0])
			}

			// Everything every goroutine wrote is there, as written.
			for g := range tt.goroutines {
				for i := range tt.iterations {
					ref := fmt.Sprintf("g%d-i%d", g, i)
					c, err := dbs[len(dbs)-1].ListConsole(ctx, ref)
					if err != nil {
						t.Fatal(err)
					}
					var got []string
					for _, e := range c {
						got = append(got, e.Level+":"+e.Message)
					}
					if diff := cmp.Diff([]string{"info:a", "error:b"}, got); diff != "" {
						t.Fatalf("%s console (-want +got):\n%s", ref, diff)
					}
					cur, err := dbs[0].GetCursor(ctx, ref)
					if err != nil || cur == nil || cur.CursorPosition != 1 {
						t.Fatalf("%s cursor = %+v, %v; want position 1", ref, cur, err)
					}
				}
			}
		})
	}
}

// TestConcurrentReadersDuringWrites checks that reads are not serialised
// behind writes: while one goroutine streams large inserts, readers keep
// getting answers.
func TestConcurrentReadersDuringWrites(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db := newDB(t)
	mustSession(t, db, "s")
	mustRequest(t, db, "s", "read-me")
	mustResponse(t, db, "read-me", "- stable")

	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		big := strings.Repeat("z", 256<<10)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			ref := fmt.Sprintf("w%d", i)
			if err := db.InsertRequest(ctx, &proxy.Request{RefID: ref, SessionID: "s", ToolName: "t", Timestamp: time.Now()}); err != nil {
				t.Error(err)
				return
			}
			if err := db.InsertResponse(ctx, &proxy.Response{RefID: ref, Status: proxy.StatusSuccess, PageSnapshot: big, Timestamp: time.Now()}, nil, nil); err != nil {
				t.Error(err)
				return
			}
		}
	})
	var readers sync.WaitGroup
	for range 16 {
		readers.Go(func() {
			for range 50 {
				r, err := db.GetResponse(ctx, "read-me")
				if err != nil {
					t.Error(err)
					return
				}
				if r.PageSnapshot != "- stable" {
					t.Errorf("snapshot = %q", r.PageSnapshot)
					return
				}
			}
		})
	}
	readers.Wait()
	close(stop)
	wg.Wait()
}

// TestAbandonedHandle simulates a crash in-process: the first handle is
// never closed (no checkpoint, WAL still in use) and a second Open on the
// same file must see everything the first one committed.
func TestAbandonedHandle(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "proxy.db")

	first, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	// Closed only when the test is over, after the second handle did its
	// checks: until then it is the abandoned handle of a crashed server.
	t.Cleanup(func() { first.Close() })
	want := writeFixture(t, first)

	second := openDB(t, path)
	checkFixture(t, second, want)

	// And the survivor keeps working on the same file.
	mustRequest(t, second, want.session.ID, "after-crash")
	if _, err := first.GetRequest(ctx, "after-crash"); err != nil {
		t.Errorf("first handle cannot see the second one's write: %v", err)
	}
}

// fixture is one of everything, for durability checks.
type fixture struct {
	session  *proxy.Session
	request  *proxy.Request
	response *proxy.Response
	console  []proxy.ConsoleEntry
	images   []proxy.Image
	cursor   *proxy.DiffCursor
}

func newFixture() fixture {
	return fixture{
		session: &proxy.Session{ID: "durable", CreatedAt: t0, LastActivity: t0, State: proxy.SessionActive,
			Metadata: json.RawMessage(`{"last_url":"https://example.com/"}`)},
		request: &proxy.Request{RefID: "durable-ref", SessionID: "durable", ToolName: "browser_take_screenshot",
			Params: json.RawMessage(`{"type":"png"}`), Timestamp: t0},
		response: &proxy.Response{RefID: "durable-ref", Status: proxy.StatusSuccess,
			Result:       `{"content":[{"type":"text","text":"Took the screenshot"}]}`,
			PageSnapshot: "- generic [ref=e1]:\n  - button \"Go\" [ref=e2]\n\xff",
			ConsoleLogs:  "[ERROR] x", Timestamp: t0},
		console: []proxy.ConsoleEntry{{RefID: "durable-ref", Level: "error", Message: "x", Timestamp: t0,
			Location: json.RawMessage(`{"url":"https://example.com/a.js","lineNumber":3,"columnNumber":1}`)}},
		images: []proxy.Image{{RefID: "durable-ref", Seq: 0, MimeType: "image/png", Data: []byte("\x89PNG\x00\xff")}},
		cursor: &proxy.DiffCursor{RefID: "durable-ref", CursorPosition: 42, LastSnapshotHash: "abc", LastRead: t0},
	}
}

func writeFixture(t testing.TB, db *store.DB) fixture {
	t.Helper()
	ctx := context.Background()
	f := newFixture()
	steps := []error{
		db.CreateSession(ctx, f.session),
		db.InsertRequest(ctx, f.request),
		db.InsertResponse(ctx, f.response, f.console, f.images),
		db.PutCursor(ctx, f.cursor),
	}
	if err := errors.Join(steps...); err != nil {
		t.Fatalf("write fixture: %v", err)
	}
	return f
}

func checkFixture(t testing.TB, db *store.DB, want fixture) {
	t.Helper()
	ctx := context.Background()
	s, err := db.GetSession(ctx, want.session.ID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want.session, s); diff != "" {
		t.Errorf("session (-want +got):\n%s", diff)
	}
	req, err := db.GetRequest(ctx, want.request.RefID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want.request, req); diff != "" {
		t.Errorf("request (-want +got):\n%s", diff)
	}
	resp, err := db.GetResponse(ctx, want.response.RefID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want.response, resp); diff != "" {
		t.Errorf("response (-want +got):\n%s", diff)
	}
	console, err := db.ListConsole(ctx, want.response.RefID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want.console, console, cmpopts.IgnoreFields(proxy.ConsoleEntry{}, "ID")); diff != "" {
		t.Errorf("console (-want +got):\n%s", diff)
	}
	images, err := db.ListImages(ctx, want.response.RefID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want.images, images); diff != "" {
		t.Errorf("images (-want +got):\n%s", diff)
	}
	cur, err := db.GetCursor(ctx, want.cursor.RefID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want.cursor, cur); diff != "" {
		t.Errorf("cursor (-want +got):\n%s", diff)
	}
}
