package store

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
)

// writeTx runs fn in one database/sql transaction on the writer.
func (db *DB) writeTx(ctx context.Context, fn func(*sql.Tx) error) error {
	tx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
}

// twoHandles opens one new database file twice: two writer connections.
func twoHandles(t *testing.T) []*DB {
	t.Helper()
	path := filepath.Join(t.TempDir(), "proxy.db")
	var dbs []*DB
	for range 2 {
		db, err := Open(t.Context(), path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		dbs = append(dbs, db)
	}
	return dbs
}

// hammer runs fn iterations times in each of goroutines goroutines, which
// take the handles in turn, and fails the test if any call failed.
func hammer(t *testing.T, dbs []*DB, goroutines, iterations int, fn func(db *DB, g, i int) error) {
	t.Helper()
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	for g := range goroutines {
		db := dbs[g%len(dbs)]
		wg.Go(func() {
			for i := range iterations {
				if err := fn(db, g, i); err != nil {
					mu.Lock()
					errs = append(errs, fmt.Errorf("goroutine %d, iteration %d: %w", g, i, err))
					mu.Unlock()
					return
				}
			}
		})
	}
	wg.Wait()
	if len(errs) > 0 {
		t.Fatalf("%d of %d goroutines failed, first: %v", len(errs), goroutines, errs[0])
	}
}

// TestWriteTxReadModifyWrite runs true read-then-write transactions (the
// shape that mostly fails under busy_timeout alone)
// from many goroutines on two handles of one file, i.e. also across
// writer connections. Every one must succeed and no increment may be lost:
// the writer's DSN (_txlock=immediate, busy_timeout) is what makes it so.
func TestWriteTxReadModifyWrite(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	dbs := twoHandles(t)
	db := dbs[0]
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(db.CreateSession(ctx, &proxy.Session{ID: "s", State: proxy.SessionActive}))
	must(db.InsertRequest(ctx, &proxy.Request{RefID: "r", SessionID: "s", ToolName: "t"}))
	must(db.InsertResponse(ctx, &proxy.Response{RefID: "r", Status: proxy.StatusSuccess}, nil, nil))
	must(db.PutCursor(ctx, &proxy.DiffCursor{RefID: "r"}))

	const goroutines, iterations = 24, 10
	hammer(t, dbs, goroutines, iterations, func(db *DB, _, _ int) error {
		return db.writeTx(ctx, func(tx *sql.Tx) error {
			var pos int
			if err := tx.QueryRowContext(ctx, `SELECT cursor_position FROM diff_cursors WHERE ref_id = 'r'`).Scan(&pos); err != nil {
				return err
			}
			time.Sleep(100 * time.Microsecond) // widen the race window
			_, err := tx.ExecContext(ctx, `UPDATE diff_cursors SET cursor_position = ? WHERE ref_id = 'r'`, pos+1)
			return err
		})
	})
	c, err := db.GetCursor(ctx, "r")
	must(err)
	if want := goroutines * iterations; c.CursorPosition != want {
		t.Errorf("cursor_position = %d, want %d: %d increments lost", c.CursorPosition, want, want-c.CursorPosition)
	}
}

// TestTimestampsSortAsText pins the reason for the fixed-width layout.
func TestTimestampsSortAsText(t *testing.T) {
	t.Parallel()
	base := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	times := []time.Time{
		base,
		base.Add(time.Nanosecond),
		base.Add(500 * time.Millisecond),
		base.Add(time.Second),
		base.In(time.FixedZone("X", -7*3600)).Add(2 * time.Second),
	}
	for i := 1; i < len(times); i++ {
		a, b := formatTime(times[i-1]), formatTime(times[i])
		if a >= b {
			t.Errorf("%q sorts at or after %q", a, b)
		}
	}
	for _, tm := range times {
		t.Run(fmt.Sprint(tm), func(t *testing.T) {
			got, err := parseTime(formatTime(tm))
			if err != nil {
				t.Fatal(err)
			}
			if !got.Equal(tm) || got.Location() != time.UTC {
				t.Errorf("round trip of %v = %v", tm, got)
			}
		})
	}
}

// TestHotWritesAcrossHandles runs the call path's writes (the request, then
// the response with its console entries and the session's activity in one
// transaction) from many goroutines on two handles of one file, so that
// the hot transactions below database/sql meet each other and another
// writer connection. Every write must succeed and be readable afterwards.
func TestHotWritesAcrossHandles(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	dbs := twoHandles(t)
	if err := dbs[0].CreateSession(ctx, &proxy.Session{ID: "s", State: proxy.SessionActive}); err != nil {
		t.Fatal(err)
	}
	const goroutines, iterations = 16, 10
	at := time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC)
	hammer(t, dbs, goroutines, iterations, func(db *DB, g, i int) error {
		ref := fmt.Sprintf("r%d-%d", g, i)
		if err := db.InsertRequest(ctx, &proxy.Request{RefID: ref, SessionID: "s", ToolName: "t", Timestamp: at}); err != nil {
			return err
		}
		return db.RecordResponse(ctx, &proxy.Response{RefID: ref, Status: proxy.StatusSuccess, Result: ref, Timestamp: at},
			[]proxy.ConsoleEntry{{Level: proxy.LevelError, Message: ref, Timestamp: at}}, nil, nil,
			&proxy.SessionActivity{SessionID: "s", At: at.Add(time.Duration(g*iterations+i) * time.Second)})
	})
	for g := range goroutines {
		for i := range iterations {
			ref := fmt.Sprintf("r%d-%d", g, i)
			r, err := dbs[1].GetResponse(ctx, ref)
			if err != nil || r.Result != ref {
				t.Fatalf("GetResponse(%s) = %+v, %v", ref, r, err)
			}
			c, err := dbs[0].ListConsole(ctx, ref)
			if err != nil || len(c) != 1 || c[0].Message != ref {
				t.Fatalf("ListConsole(%s) = %+v, %v", ref, c, err)
			}
		}
	}
	s, err := dbs[0].GetSession(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	if want := at.Add(time.Duration(goroutines*iterations-1) * time.Second); !s.LastActivity.Equal(want) {
		t.Errorf("last_activity = %v, want the latest, %v", s.LastActivity, want)
	}
}

// TestHotStatementsFollowANewConnection: the hot statements belong to the
// writer connection they were prepared on; should database/sql replace
// that connection, the next write prepares them on the new one.
func TestHotStatementsFollowANewConnection(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "proxy.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.CreateSession(ctx, &proxy.Session{ID: "s", State: proxy.SessionActive}); err != nil {
		t.Fatal(err)
	}
	write := func(ref string) {
		t.Helper()
		if err := db.InsertRequest(ctx, &proxy.Request{RefID: ref, SessionID: "s", ToolName: "t"}); err != nil {
			t.Fatal(err)
		}
		if err := db.RecordResponse(ctx, &proxy.Response{RefID: ref, Status: proxy.StatusSuccess}, nil, nil, nil, &proxy.SessionActivity{SessionID: "s"}); err != nil {
			t.Fatal(err)
		}
	}
	write("before")
	first := db.hot.conn
	// Expire the connection: database/sql closes it and opens another.
	db.w.SetConnMaxLifetime(time.Nanosecond)
	time.Sleep(time.Millisecond)
	write("after")
	db.w.SetConnMaxLifetime(0)
	if db.hot.conn == first {
		t.Fatal("the writer kept its connection; the test did not replace it")
	}
	for _, ref := range []string{"before", "after"} {
		if _, err := db.GetResponse(ctx, ref); err != nil {
			t.Errorf("GetResponse(%s): %v", ref, err)
		}
	}
}
