package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/store/seal"
)

// What is sealed, and the row each blob is bound to: a blob copied into
// another row does not open there.
const (
	sealSessionState = "session_state" // keyed by session id
	sealProfile      = "profile"       // keyed by profile name
)

// sealBatch bounds how many rows of plaintext sealLegacyStates holds in
// memory at once.
const sealBatch = 64

// migrateAndSeal brings the schema up to date and seals the saved states
// an older version kept as JSON text. Both run with secure_delete on, so
// that what they free (the rebuilt table's old pages, each row's old
// value) is overwritten with zeros rather than left in free pages; the
// TRUNCATE checkpoint afterwards copies those pages over the main file and
// empties the WAL that held the old ones. secure_delete goes off again for
// the record's ordinary writes: what they replace is never worth the I/O.
func (db *DB) migrateAndSeal(ctx context.Context) error {
	// The writer pool is one connection, so the pragma holds for what
	// follows.
	if _, err := db.w.ExecContext(ctx, "PRAGMA secure_delete = ON"); err != nil {
		return fmt.Errorf("secure_delete: %w", err)
	}
	if err := db.Migrate(ctx); err != nil {
		return err
	}
	n, err := db.sealLegacyStates(ctx)
	if err != nil {
		return err
	}
	if n > 0 {
		// A server of this database running in another process keeps the
		// WAL from being truncated (busy); its own checkpoints then copy
		// the zeroed pages, and its Close truncates the WAL.
		if _, err := db.w.ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
			return fmt.Errorf("checkpoint after sealing saved states: %w", err)
		}
	}
	if _, err := db.w.ExecContext(ctx, "PRAGMA secure_delete = OFF"); err != nil {
		return fmt.Errorf("secure_delete: %w", err)
	}
	return nil
}

// sealLegacyStates seals every saved state stored as text (JSON saved
// before states were sealed) in place, and returns how many it sealed.
func (db *DB) sealLegacyStates(ctx context.Context) (int, error) {
	total := 0
	for {
		n, err := db.sealLegacyBatch(ctx)
		if err != nil {
			return total, fmt.Errorf("sealing saved states: %w", err)
		}
		if n == 0 {
			return total, nil
		}
		total += n
	}
}

func (db *DB) sealLegacyBatch(ctx context.Context) (int, error) {
	type legacy struct {
		id    string
		state []byte
	}
	var batch []legacy
	// Read to the end before writing: the writer pool is one connection.
	rows, err := db.w.QueryContext(ctx,
		`SELECT session_id, state FROM session_state WHERE typeof(state) = 'text' LIMIT ?`, sealBatch)
	if err != nil {
		return 0, err
	}
	for rows.Next() {
		var l legacy
		if err := rows.Scan(&l.id, &l.state); err != nil {
			rows.Close()
			return 0, err
		}
		batch = append(batch, l)
	}
	if err := rows.Close(); err != nil {
		return 0, err
	}
	if err := rows.Err(); err != nil {
		return 0, err
	}
	if len(batch) == 0 {
		return 0, nil
	}
	tx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	for _, l := range batch {
		blob, err := db.box.Seal(seal.Row(sealSessionState, l.id), l.state)
		if err == nil {
			_, err = tx.ExecContext(ctx,
				`UPDATE session_state SET state = ? WHERE session_id = ? AND typeof(state) = 'text'`, blob, l.id)
		}
		if err != nil {
			// The error that matters is this one; nothing was sealed.
			_ = tx.Rollback()
			return 0, fmt.Errorf("session %s: %w", l.id, err)
		}
	}
	return len(batch), tx.Commit()
}

// CheckStateKey reports whether what the record holds sealed opens with
// the store's key: it tries the newest saved session state and the newest
// profile, and returns an error wrapping seal.ErrOpen naming the first that
// does not (nil when both open, or there is none). A server started with
// another key than the one that sealed them says so at start, instead of
// each session resuming blank without a word.
func (db *DB) CheckStateKey(ctx context.Context) error {
	newest := []struct{ table, what, query string }{
		{sealSessionState, "the saved state of session",
			`SELECT session_id, state FROM session_state WHERE typeof(state) = 'blob' ORDER BY saved_at DESC LIMIT 1`},
		{sealProfile, "profile", `SELECT name, state FROM profiles ORDER BY updated_at DESC LIMIT 1`},
	}
	for _, n := range newest {
		var (
			key  string
			blob []byte
		)
		err := db.r.QueryRowContext(ctx, n.query).Scan(&key, &blob)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			continue
		case err != nil:
			return fmt.Errorf("store: check state key: %w", err)
		}
		if _, err := db.box.Open(seal.Row(n.table, key), blob); err != nil {
			return fmt.Errorf("store: %s %s: %w", n.what, key, err)
		}
	}
	return nil
}
