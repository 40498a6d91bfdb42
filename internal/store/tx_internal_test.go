package store

import (
	"database/sql"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
)

// TestWriteTxReadModifyWrite runs true read-then-write transactions (the
// shape that, per DESIGN.md, fails 19 times in 20 under busy_timeout alone)
// from many goroutines on two handles of one file, i.e. also across
// writer connections. Every one must succeed and no increment may be lost.
func TestWriteTxReadModifyWrite(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "proxy.db")
	var dbs []*DB
	for range 2 {
		db, err := Open(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		dbs = append(dbs, db)
	}
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
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	for g := range goroutines {
		db := dbs[g%2]
		wg.Go(func() {
			for range iterations {
				err := db.writeTx(ctx, func(tx *sql.Tx) error {
					var pos int
					if err := tx.QueryRowContext(ctx, `SELECT cursor_position FROM diff_cursors WHERE ref_id = 'r'`).Scan(&pos); err != nil {
						return err
					}
					time.Sleep(100 * time.Microsecond) // widen the race window
					_, err := tx.ExecContext(ctx, `UPDATE diff_cursors SET cursor_position = ? WHERE ref_id = 'r'`, pos+1)
					return err
				})
				if err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
					return
				}
			}
		})
	}
	wg.Wait()
	if len(errs) > 0 {
		t.Fatalf("%d of %d transactions failed, first: %v", len(errs), goroutines*iterations, errs[0])
	}
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
