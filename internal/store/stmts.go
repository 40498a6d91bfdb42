package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// hotStatements are the writes of every tool call, prepared on the writer
// connection at Open. They cannot be prepared lazily: a write transaction
// holds the writer's only connection, so preparing on db.w inside one would
// wait for itself. Inside a transaction use them through tx.StmtContext,
// which reuses the preparation (same connection).
type hotStatements struct {
	insertRequest  *sql.Stmt
	insertResponse *sql.Stmt
	insertConsole  *sql.Stmt
	insertImage    *sql.Stmt
	touchSession   *sql.Stmt
	setMetadata    *sql.Stmt
}

func (h *hotStatements) prepare(ctx context.Context, w *sql.DB) error {
	for _, s := range []struct {
		dst   **sql.Stmt
		query string
	}{
		{&h.insertRequest, `INSERT INTO requests (ref_id, session_id, tool_name, params, timestamp) VALUES (?, ?, ?, ?, ?)`},
		{&h.insertResponse, `INSERT INTO responses (ref_id, status, result, page_snapshot, console_logs, error_message, timestamp) VALUES (?, ?, ?, ?, ?, ?, ?)`},
		{&h.insertConsole, `INSERT INTO console_logs (ref_id, level, message, timestamp, location) VALUES (?, ?, ?, ?, ?)`},
		{&h.insertImage, `INSERT INTO images (ref_id, seq, mime_type, data) VALUES (?, ?, ?, ?)`},
		{&h.touchSession, `UPDATE sessions SET last_activity = MAX(last_activity, ?) WHERE session_id = ?`},
		{&h.setMetadata, `UPDATE sessions SET metadata = ? WHERE session_id = ?`},
	} {
		st, err := w.PrepareContext(ctx, s.query)
		if err != nil {
			_ = h.close()
			return fmt.Errorf("prepare %q: %w", s.query, err)
		}
		*s.dst = st
	}
	return nil
}

func (h *hotStatements) close() error {
	var errs []error
	for _, st := range []*sql.Stmt{h.insertRequest, h.insertResponse, h.insertConsole, h.insertImage, h.touchSession, h.setMetadata} {
		if st != nil {
			errs = append(errs, st.Close())
		}
	}
	return errors.Join(errs...)
}
