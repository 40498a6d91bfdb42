package store

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"sync"
)

// hotStmt names one of the writes every tool call makes.
type hotStmt int

const (
	insertRequest hotStmt = iota
	insertResponse
	insertConsole
	insertImage
	touchSession
	setMetadata
	insertDownload
	nHot
)

var hotQueries = [nHot]string{
	insertRequest:  `INSERT INTO requests (ref_id, session_id, tool_name, params, timestamp) VALUES (?, ?, ?, ?, ?)`,
	insertResponse: `INSERT INTO responses (ref_id, status, result, page_snapshot, console_logs, error_message, error_code, timestamp) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
	insertConsole:  `INSERT INTO console_logs (ref_id, level, message, timestamp, location) VALUES (?, ?, ?, ?, ?)`,
	insertImage:    `INSERT INTO images (ref_id, seq, mime_type, data) VALUES (?, ?, ?, ?)`,
	touchSession:   `UPDATE sessions SET last_activity = MAX(last_activity, ?) WHERE session_id = ?`,
	setMetadata:    `UPDATE sessions SET metadata = ? WHERE session_id = ?`,
	insertDownload: `INSERT INTO downloads (ref_id, name, seq, mime_type, size, sha256, stored, data) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
}

// hotStatements are the writes of every tool call, prepared once on the
// writer's driver connection and run there through sql.Conn.Raw, below
// database/sql. Prepared, because modernc.org/sqlite parses the SQL again on
// every Exec otherwise, a visible share of proxy-server's CPU per call.
// Below database/sql, because its Tx starts a goroutine per transaction to
// watch the context, and waking that goroutine (and the idle thread it
// wakes) at the commit is a large part of a response write after an idle
// gap on a small VM (docs/BENCHMARKS.md §1 has the figures).
//
// The statements belong to the connection they were prepared on: they are
// used only inside Raw on that connection, and prepared again should
// database/sql ever replace it.
type hotStatements struct {
	mu    sync.Mutex
	conn  driver.Conn
	stmts [nHot]driver.Stmt
}

// on returns the statements prepared on c, preparing them when c is not
// the connection they were prepared on.
func (h *hotStatements) on(c driver.Conn) (*[nHot]driver.Stmt, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.conn == c {
		return &h.stmts, nil
	}
	h.forgetLocked()
	for i, q := range hotQueries {
		st, err := c.Prepare(q)
		if err != nil {
			_ = h.closeLocked()
			return nil, fmt.Errorf("prepare %q: %w", q, err)
		}
		h.stmts[i] = st
	}
	h.conn = c
	return &h.stmts, nil
}

// closeOn closes the statements if they were prepared on c, and forgets
// them either way.
func (h *hotStatements) closeOn(c driver.Conn) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if c != h.conn {
		h.forgetLocked()
		return nil
	}
	return h.closeLocked()
}

// forgetLocked drops statements prepared on a connection database/sql has
// since closed, without closing them: the driver has freed what finalizing
// them would touch. SQLite then keeps that connection's handle (and its 3
// descriptors) as a zombie. database/sql replaces the writer only when a
// connection broke (no lifetime or idle limit is set), so that is the price
// of a rare failure, not a leak per call.
func (h *hotStatements) forgetLocked() {
	h.stmts, h.conn = [nHot]driver.Stmt{}, nil
}

// closeLocked closes the statements: only from inside Raw on the
// connection they were prepared on.
func (h *hotStatements) closeLocked() error {
	var errs []error
	for i, st := range h.stmts {
		if st != nil {
			errs = append(errs, st.Close())
			h.stmts[i] = nil
		}
	}
	h.conn = nil
	return errors.Join(errs...)
}

// hotConn runs hot statements on the writer's connection; it is valid only
// inside the function given to DB.withHot.
type hotConn struct {
	ctx   context.Context
	stmts *[nHot]driver.Stmt
}

func (h hotConn) exec(s hotStmt, args ...any) error {
	nv := make([]driver.NamedValue, len(args))
	for i, a := range args {
		v, err := driver.DefaultParameterConverter.ConvertValue(a)
		if err != nil {
			return fmt.Errorf("argument %d: %w", i+1, err)
		}
		nv[i] = driver.NamedValue{Ordinal: i + 1, Value: v}
	}
	st, ok := h.stmts[s].(driver.StmtExecContext)
	if !ok {
		return fmt.Errorf("the SQLite driver's statements do not take a context")
	}
	_, err := st.ExecContext(h.ctx, nv)
	return err
}

// withHot runs fn on the writer's connection (onWriter), inside one
// transaction (BEGIN IMMEDIATE, from the DSN's _txlock) when tx is true. A
// write the storage refuses is STORAGE_FULL (wrote).
func (db *DB) withHot(ctx context.Context, write Write, tx bool, fn func(hotConn) error) error {
	if err := db.fault(write); err != nil {
		return db.wrote(err)
	}
	return db.wrote(db.onWriter(ctx, func(c driver.Conn) error {
		stmts, err := db.hot.on(c)
		if err != nil {
			return err
		}
		h := hotConn{ctx: ctx, stmts: stmts}
		if !tx {
			return fn(h)
		}
		b, ok := c.(driver.ConnBeginTx)
		if !ok {
			return fmt.Errorf("the SQLite driver's connection cannot begin a transaction with a context")
		}
		t, err := b.BeginTx(ctx, driver.TxOptions{})
		if err != nil {
			return err
		}
		if err := fn(h); err != nil {
			// The error that matters is fn's; a failed rollback after it
			// changes nothing for the caller (SQLite discards the journal).
			_ = t.Rollback()
			return err
		}
		return t.Commit()
	}))
}

// onWriter runs fn with the writer's driver connection, held for the
// duration: other writes wait in the pool.
func (db *DB) onWriter(ctx context.Context, fn func(driver.Conn) error) error {
	conn, err := db.w.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	return conn.Raw(func(dc any) error {
		c, ok := dc.(driver.Conn)
		if !ok {
			return fmt.Errorf("the SQLite driver's connection is a %T", dc)
		}
		return fn(c)
	})
}

// closeHot closes the hot statements on the connection they belong to.
func (db *DB) closeHot(ctx context.Context) error {
	return db.onWriter(ctx, db.hot.closeOn)
}

// prepareHot prepares the hot statements at Open, so that a broken schema
// fails there rather than on the first call.
func (db *DB) prepareHot(ctx context.Context) error {
	return db.withHot(ctx, "", false, func(hotConn) error { return nil })
}
