package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/store/seal"
)

// WriteProfile names the writes of login profiles, for SetWriteFault.
const WriteProfile Write = "profile"

// The three ways PutProfile writes, each one statement: a conditional write
// is decided by SQLite under the write lock, so two writers that started
// from the same version cannot both win.
const (
	// Any version: a new profile, or the next version of one.
	putProfileAny = `INSERT INTO profiles (name, version, state, origins, cookies_expire_at, bytes, created_at, updated_at)
		VALUES (?1, 1, ?2, ?3, ?4, ?5, ?6, ?6)
		ON CONFLICT (name) DO UPDATE SET version = version + 1, state = excluded.state, origins = excluded.origins,
			cookies_expire_at = excluded.cookies_expire_at, bytes = excluded.bytes, updated_at = excluded.updated_at
		RETURNING ` + profileColumns
	// ifVersion 0: only a profile that does not exist yet.
	putProfileNew = `INSERT INTO profiles (name, version, state, origins, cookies_expire_at, bytes, created_at, updated_at)
		VALUES (?1, 1, ?2, ?3, ?4, ?5, ?6, ?6)
		ON CONFLICT (name) DO NOTHING
		RETURNING ` + profileColumns
	// ifVersion > 0: only while the stored version is ?7.
	putProfileIf = `UPDATE profiles SET version = version + 1, state = ?2, origins = ?3, cookies_expire_at = ?4, bytes = ?5, updated_at = ?6
		WHERE name = ?1 AND version = ?7
		RETURNING ` + profileColumns
)

const profileColumns = `name, version, origins, cookies_expire_at, bytes, created_at, updated_at`

// PutProfile stores state (already checked by proxy.CheckStorageState,
// described by meta) sealed as profile name's next version (1 for a new
// one), at time at. With ifVersion >= 0 it writes only while the stored
// version is ifVersion (0: the profile must not exist yet) and otherwise
// returns an error wrapping proxy.ErrProfileMoved. It returns the metadata
// as stored (Sessions nil).
func (db *DB) PutProfile(ctx context.Context, name string, state json.RawMessage, meta proxy.StorageState, at time.Time, ifVersion int64) (*proxy.Profile, error) {
	if err := proxy.ValidProfileName("name", name); err != nil {
		return nil, err
	}
	if len(state) == 0 || !json.Valid(state) {
		e := proxy.Errorf(proxy.EINVALID, "profile %q: the storage state is not valid JSON", name)
		e.Details = map[string]any{"field": "state"}
		return nil, e
	}
	origins := meta.Origins
	if origins == nil {
		origins = []string{}
	}
	originsJSON, err := json.Marshal(origins)
	if err != nil {
		return nil, fmt.Errorf("store: put profile %s: origins: %w", name, err)
	}
	var expires any // NULL: no persistent cookie
	if meta.CookiesExpireAt != nil {
		expires = formatTime(*meta.CookiesExpireAt)
	}
	blob, err := db.box.Seal(seal.Row(sealProfile, name), state)
	if err != nil {
		return nil, fmt.Errorf("store: put profile %s: %w", name, err)
	}
	query := putProfileAny
	args := []any{name, blob, string(originsJSON), expires, len(state), formatTime(at)}
	switch {
	case ifVersion == 0:
		query = putProfileNew
	case ifVersion > 0:
		query, args = putProfileIf, append(args, ifVersion)
	}
	if err := db.fault(WriteProfile); err != nil {
		return nil, db.wrote(err)
	}
	p, err := scanProfile(db.w.QueryRowContext(ctx, query, args...))
	// No row back is the condition refusing the write: SQLite wrote fine.
	moved := errors.Is(err, sql.ErrNoRows)
	if moved {
		err = nil
	}
	if err := db.wrote(err); err != nil {
		return nil, fmt.Errorf("store: put profile %s: %w", name, err)
	}
	if moved {
		return nil, fmt.Errorf("store: put profile %s at version %d: %w", name, ifVersion, proxy.ErrProfileMoved)
	}
	return p, nil
}

func scanProfile(row scanner) (*proxy.Profile, error) {
	var (
		p                   proxy.Profile
		origins             string
		expires             sql.NullString
		created, updated    string
		errOrig, err1, err2 error
	)
	if err := row.Scan(&p.Name, &p.Version, &origins, &expires, &p.Bytes, &created, &updated); err != nil {
		return nil, err
	}
	errOrig = json.Unmarshal([]byte(origins), &p.Origins)
	p.CreatedAt, err1 = parseTime(created)
	p.UpdatedAt, err2 = parseTime(updated)
	if err := errors.Join(errOrig, err1, err2); err != nil {
		return nil, fmt.Errorf("profile %s: %w", p.Name, err)
	}
	if expires.Valid {
		t, err := parseTime(expires.String)
		if err != nil {
			return nil, fmt.Errorf("profile %s: %w", p.Name, err)
		}
		p.CookiesExpireAt = &t
	}
	return &p, nil
}

// GetProfile returns one profile's metadata (Sessions nil);
// PROFILE_NOT_FOUND when there is none.
func (db *DB) GetProfile(ctx context.Context, name string) (*proxy.Profile, error) {
	p, err := scanProfile(db.r.QueryRowContext(ctx, `SELECT `+profileColumns+` FROM profiles WHERE name = ?`, name))
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, proxy.ProfileNotFound(name)
	case err != nil:
		return nil, fmt.Errorf("store: get profile %s: %w", name, err)
	}
	return p, nil
}

// ListProfiles returns every profile's metadata by name (Sessions nil);
// never nil.
func (db *DB) ListProfiles(ctx context.Context) ([]*proxy.Profile, error) {
	out, err := queryAll(ctx, db, scanProfile, `SELECT `+profileColumns+` FROM profiles ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("store: list profiles: %w", err)
	}
	return out, nil
}

// ProfileState returns a profile's storage state, opened, and its version;
// PROFILE_NOT_FOUND when there is none. One that does not open with the
// store's key (it changed) is an error wrapping seal.ErrOpen, and stays
// stored.
func (db *DB) ProfileState(ctx context.Context, name string) (json.RawMessage, int64, error) {
	var (
		blob    []byte
		version int64
	)
	err := db.r.QueryRowContext(ctx, `SELECT state, version FROM profiles WHERE name = ?`, name).Scan(&blob, &version)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, 0, proxy.ProfileNotFound(name)
	case err != nil:
		return nil, 0, fmt.Errorf("store: profile state %s: %w", name, err)
	}
	plain, err := db.box.Open(seal.Row(sealProfile, name), blob)
	if err != nil {
		return nil, 0, fmt.Errorf("store: profile state %s: %w", name, err)
	}
	return plain, version, nil
}

// DeleteProfile removes a profile; PROFILE_NOT_FOUND when there is none.
// Sessions started from it keep their own state and their profile name.
func (db *DB) DeleteProfile(ctx context.Context, name string) error {
	res, err := db.exec(ctx, WriteProfile, `DELETE FROM profiles WHERE name = ?`, name)
	if err != nil {
		return fmt.Errorf("store: delete profile %s: %w", name, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("store: delete profile %s: %w", name, err)
	}
	if n == 0 {
		return proxy.ProfileNotFound(name)
	}
	return nil
}

// SetSessionProfileVersion records the profile version a session now
// stands on (after it wrote back); ESESSIONMISSING when the session is not
// recorded.
func (db *DB) SetSessionProfileVersion(ctx context.Context, sessionID string, version int64) error {
	return db.updateSession(ctx, "set session profile version", sessionID,
		`UPDATE sessions SET profile_version = ? WHERE session_id = ?`, version, sessionID)
}
