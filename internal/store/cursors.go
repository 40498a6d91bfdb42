package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	sqlite3 "modernc.org/sqlite/lib"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
)

// GetCursor returns the diff cursor of a ref, or nil, nil when it has none.
func (db *DB) GetCursor(ctx context.Context, refID string) (*proxy.DiffCursor, error) {
	var (
		c        = proxy.DiffCursor{RefID: refID}
		lastRead string
	)
	err := db.r.QueryRowContext(ctx,
		`SELECT cursor_position, last_snapshot_hash, last_read FROM diff_cursors WHERE ref_id = ?`, refID).
		Scan(&c.CursorPosition, &c.LastSnapshotHash, &lastRead)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("store: get cursor %s: %w", refID, err)
	}
	if c.LastRead, err = parseTime(lastRead); err != nil {
		return nil, fmt.Errorf("store: get cursor %s: %w", refID, err)
	}
	return &c, nil
}

// PutCursor creates or replaces the diff cursor of a ref. EREFMISSING if the
// ref has no recorded response: a cursor on nothing would be an orphan.
func (db *DB) PutCursor(ctx context.Context, c *proxy.DiffCursor) error {
	switch {
	case c == nil || c.RefID == "":
		return proxy.Errorf(proxy.EINVALID, "cursor ref_id is required")
	case c.CursorPosition < 0:
		return proxy.Errorf(proxy.EINVALID, "cursor %q: negative position %d", c.RefID, c.CursorPosition)
	}
	_, err := db.exec(ctx, WriteCursor,
		`INSERT INTO diff_cursors (ref_id, cursor_position, last_snapshot_hash, last_read) VALUES (?, ?, ?, ?)
		 ON CONFLICT (ref_id) DO UPDATE SET
		   cursor_position = excluded.cursor_position,
		   last_snapshot_hash = excluded.last_snapshot_hash,
		   last_read = excluded.last_read`,
		c.RefID, c.CursorPosition, c.LastSnapshotHash, formatTime(c.LastRead))
	switch {
	case sqliteCode(err) == sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY:
		return proxy.Errorf(proxy.EREFMISSING, "ref_id %q has no recorded response", c.RefID)
	case err != nil:
		return fmt.Errorf("store: put cursor %s: %w", c.RefID, err)
	}
	return nil
}
