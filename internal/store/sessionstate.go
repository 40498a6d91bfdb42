package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	sqlite3 "modernc.org/sqlite/lib"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/store/seal"
)

// SaveSessionState records what a session needs to be resumed in a new
// worker, replacing what was saved before: only the latest state is worth
// restoring. state is opaque JSON (the upstream layer's SavedState); nil
// stores "saved, nothing to keep", which LoadSessionState gives back as nil.
// ESESSIONMISSING if the session is not recorded; EINVALID for bad JSON.
// It is stored sealed (seal.go): it holds the session's cookies.
//
// The last write wins even when at is older than the stored saved_at: a wall
// clock stepping back must not make the proxy keep a stale state and throw
// the newest away. Callers save one session at a time anyway.
func (db *DB) SaveSessionState(ctx context.Context, sessionID string, state json.RawMessage, at time.Time) error {
	switch {
	case sessionID == "":
		return proxy.Errorf(proxy.EINVALID, "session id is required")
	case len(state) > 0 && !json.Valid(state):
		return proxy.Errorf(proxy.EINVALID, "session %q: saved state is not valid JSON", sessionID)
	}
	var sealed any // NULL: nothing to keep
	if len(state) > 0 {
		blob, err := db.box.Seal(seal.Row(sealSessionState, sessionID), state)
		if err != nil {
			return fmt.Errorf("store: save session state %s: %w", sessionID, err)
		}
		sealed = blob
	}
	_, err := db.exec(ctx, WriteState,
		`INSERT INTO session_state (session_id, state, saved_at) VALUES (?, ?, ?)
		 ON CONFLICT (session_id) DO UPDATE SET state = excluded.state, saved_at = excluded.saved_at`,
		sessionID, sealed, formatTime(at))
	switch {
	case sqliteCode(err) == sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY:
		return proxy.SessionNotFound(sessionID)
	case err != nil:
		return fmt.Errorf("store: save session state %s: %w", sessionID, err)
	}
	return nil
}

// LoadSessionState returns the state last saved for a session and when it
// was saved: nil and the zero time when none was (a session that never got
// suspended), ESESSIONMISSING when the session itself is not recorded, so a
// resume can tell "start blank" from "no such session". A state that does
// not open with the store's key (it changed) is an error wrapping
// seal.ErrOpen, and stays stored.
func (db *DB) LoadSessionState(ctx context.Context, sessionID string) (json.RawMessage, time.Time, error) {
	var (
		id      string
		state   []byte
		kind    string
		savedAt sql.NullString
	)
	// One statement on one snapshot: two queries could see the session
	// deleted between them.
	err := db.r.QueryRowContext(ctx,
		`SELECT s.session_id, st.state, COALESCE(typeof(st.state), 'null'), st.saved_at
		   FROM sessions s LEFT JOIN session_state st ON st.session_id = s.session_id
		  WHERE s.session_id = ?`, sessionID).Scan(&id, &state, &kind, &savedAt)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, time.Time{}, proxy.SessionNotFound(sessionID)
	case err != nil:
		return nil, time.Time{}, fmt.Errorf("store: load session state %s: %w", sessionID, err)
	case !savedAt.Valid:
		return nil, time.Time{}, nil
	}
	at, err := parseTime(savedAt.String)
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("store: load session state %s: %w", sessionID, err)
	}
	switch kind {
	case "null":
		return nil, at, nil
	case "text":
		// JSON an older version wrote after this one sealed the rest at
		// Open: kept as it was written.
		return json.RawMessage(state), at, nil
	}
	plain, err := db.box.Open(seal.Row(sealSessionState, sessionID), state)
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("store: load session state %s: %w", sessionID, err)
	}
	return plain, at, nil
}

// SessionsInState returns the sessions in any of the given states, newest
// first like ListSessions; never nil, and empty when no state is given. It
// is what start-up recovery walks (e.g. every suspended session, to know
// what can be resumed).
func (db *DB) SessionsInState(ctx context.Context, states ...proxy.SessionState) ([]*proxy.Session, error) {
	if len(states) == 0 {
		return []*proxy.Session{}, nil
	}
	args := make([]any, len(states))
	for i, s := range states {
		if !validState(s) {
			return nil, proxy.Errorf(proxy.EINVALID, "invalid session state %q", s)
		}
		args[i] = string(s)
	}
	placeholders := strings.TrimSuffix(strings.Repeat("?, ", len(states)), ", ")
	out, err := queryAll(ctx, db, scanSession,
		`SELECT `+sessionColumns+` FROM sessions WHERE state IN (`+placeholders+`)
		 ORDER BY created_at DESC, session_id DESC`, args...)
	if err != nil {
		return nil, fmt.Errorf("store: sessions in state %v: %w", states, err)
	}
	return out, nil
}

// SetSessionsState moves every session in state from to state to, in one
// statement, and returns how many moved. Start-up recovery uses it to turn
// the `active` sessions a crashed server left behind (their workers died
// with it) into `suspended` ones that the next call resumes.
func (db *DB) SetSessionsState(ctx context.Context, from, to proxy.SessionState) (int64, error) {
	for _, s := range []proxy.SessionState{from, to} {
		if !validState(s) {
			return 0, proxy.Errorf(proxy.EINVALID, "invalid session state %q", s)
		}
	}
	if from == to {
		return 0, nil // SQLite would count the rows it matched as changed
	}
	res, err := db.exec(ctx, WriteSession, `UPDATE sessions SET state = ? WHERE state = ?`, string(to), string(from))
	if err != nil {
		return 0, fmt.Errorf("store: set sessions state %s→%s: %w", from, to, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("store: set sessions state %s→%s: %w", from, to, err)
	}
	return n, nil
}
