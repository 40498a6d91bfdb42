package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	sqlite3 "modernc.org/sqlite/lib"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
)

func validState(s proxy.SessionState) bool {
	switch s {
	case proxy.SessionActive, proxy.SessionSuspended, proxy.SessionClosed, proxy.SessionError:
		return true
	}
	return false
}

// CreateSession records a new session. A second session with the same id is
// EINVALID; the existing one is left untouched.
func (db *DB) CreateSession(ctx context.Context, s *proxy.Session) error {
	if s == nil || s.ID == "" {
		return proxy.Errorf(proxy.EINVALID, "session id is required")
	}
	if !validState(s.State) {
		return proxy.Errorf(proxy.EINVALID, "invalid session state %q", s.State)
	}
	if len(s.Metadata) > 0 && !json.Valid(s.Metadata) {
		return proxy.Errorf(proxy.EINVALID, "session metadata is not valid JSON")
	}
	var profile any // NULL: none
	if s.Profile != "" {
		if err := proxy.ValidProfileName("profile", s.Profile); err != nil {
			return err
		}
		profile = s.Profile
	}
	var opts []byte
	if s.Options != nil {
		var err error
		if opts, err = json.Marshal(s.Options); err != nil {
			return fmt.Errorf("store: create session %s: options: %w", s.ID, err)
		}
	}
	_, err := db.exec(ctx, WriteSession,
		`INSERT INTO sessions (session_id, created_at, last_activity, state, metadata, owner, options, profile, profile_version, profile_write)
		 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		s.ID, formatTime(s.CreatedAt), formatTime(s.LastActivity), string(s.State), nullJSON(s.Metadata), string(s.Owner), nullJSON(opts),
		profile, s.ProfileVersion, s.ProfileWrite)
	switch {
	case sqliteCode(err) == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY:
		return proxy.Errorf(proxy.EINVALID, "session %q already exists", s.ID)
	case err != nil:
		return fmt.Errorf("store: create session %s: %w", s.ID, err)
	}
	return nil
}

const sessionColumns = `session_id, created_at, last_activity, state, metadata, owner, options, profile, profile_version, profile_write`

type scanner interface{ Scan(dest ...any) error }

func scanSession(row scanner) (*proxy.Session, error) {
	var (
		s                     proxy.Session
		created, lastActivity string
		state, owner          string
		metadata, opts        sql.NullString
		profile               sql.NullString
		err1, err2            error
	)
	if err := row.Scan(&s.ID, &created, &lastActivity, &state, &metadata, &owner, &opts,
		&profile, &s.ProfileVersion, &s.ProfileWrite); err != nil {
		return nil, err
	}
	s.Profile = profile.String
	if opts.Valid {
		var o proxy.BrowserOptions
		if err := json.Unmarshal([]byte(opts.String), &o); err != nil {
			return nil, fmt.Errorf("session %s: options: %w", s.ID, err)
		}
		s.Options = &o
	}
	s.CreatedAt, err1 = parseTime(created)
	s.LastActivity, err2 = parseTime(lastActivity)
	if err := errors.Join(err1, err2); err != nil {
		return nil, err
	}
	s.State = proxy.SessionState(state)
	s.Metadata = rawJSON(metadata)
	s.Owner = proxy.ClientID(owner)
	return &s, nil
}

// GetSession returns one session, ESESSIONMISSING if there is none.
func (db *DB) GetSession(ctx context.Context, id string) (*proxy.Session, error) {
	s, err := scanSession(db.r.QueryRowContext(ctx,
		`SELECT `+sessionColumns+` FROM sessions WHERE session_id = ?`, id))
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, proxy.SessionNotFound(id)
	case err != nil:
		return nil, fmt.Errorf("store: get session %s: %w", id, err)
	}
	return s, nil
}

// ListSessions returns every session, newest first; never nil.
func (db *DB) ListSessions(ctx context.Context) ([]*proxy.Session, error) {
	out, err := queryAll(ctx, db, scanSession,
		`SELECT `+sessionColumns+` FROM sessions ORDER BY created_at DESC, session_id DESC`)
	if err != nil {
		return nil, fmt.Errorf("store: list sessions: %w", err)
	}
	return out, nil
}

// queryAll runs query on the readers and scans every row it returns;
// never nil.
func queryAll[T any](ctx context.Context, db *DB, scan func(scanner) (T, error), query string, args ...any) ([]T, error) {
	rows, err := db.r.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []T{}
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// UpdateSessionState sets a session's state; ESESSIONMISSING if there is none.
func (db *DB) UpdateSessionState(ctx context.Context, id string, state proxy.SessionState) error {
	if !validState(state) {
		return proxy.Errorf(proxy.EINVALID, "invalid session state %q", state)
	}
	return db.updateSession(ctx, "update session state", id,
		`UPDATE sessions SET state = ? WHERE session_id = ?`, string(state), id)
}

// TouchSession records activity at the given time. last_activity only moves
// forward: calls finishing out of order must not make a busy session look
// idle to the idle sweeper.
func (db *DB) TouchSession(ctx context.Context, id string, at time.Time) error {
	return db.updateSession(ctx, "touch session", id,
		`UPDATE sessions SET last_activity = MAX(last_activity, ?) WHERE session_id = ?`, formatTime(at), id)
}

func (db *DB) updateSession(ctx context.Context, what, id, query string, args ...any) error {
	res, err := db.exec(ctx, WriteSession, query, args...)
	if err != nil {
		return fmt.Errorf("store: %s %s: %w", what, id, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("store: %s %s: %w", what, id, err)
	}
	if n == 0 {
		return proxy.SessionNotFound(id)
	}
	return nil
}
