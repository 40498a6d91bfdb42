package store

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
)

// TestPoolsOpenFixed: every reader connection is open and idle from Open
// on, and each connection has its bounded page cache, so the store's
// descriptors and memory do not creep up with use.
func TestPoolsOpenFixed(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "proxy.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })

	st := db.r.Stats()
	if st.OpenConnections != st.MaxOpenConnections || st.Idle != st.MaxOpenConnections {
		t.Fatalf("readers after Open: %d open, %d idle, want all %d open and idle", st.OpenConnections, st.Idle, st.MaxOpenConnections)
	}
	// Hold every reader at once, so each connection is asked, not one
	// connection n times.
	var held []*sql.Conn
	for range st.MaxOpenConnections {
		c, err := db.r.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, c)
	}
	for i, c := range held {
		if got := cacheSize(t, c); got != -readerCacheKiB {
			t.Errorf("reader %d: cache_size %d, want %d", i, got, -readerCacheKiB)
		}
		c.Close()
	}
	w, err := db.w.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if got := cacheSize(t, w); got != -writerCacheKiB {
		t.Errorf("writer: cache_size %d, want %d", got, -writerCacheKiB)
	}
}

func cacheSize(t *testing.T, c *sql.Conn) int {
	t.Helper()
	var n int
	if err := c.QueryRowContext(context.Background(), "PRAGMA cache_size").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
