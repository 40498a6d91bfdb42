package store_test

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/store"
)

// savedState is what the store gets back for a save: exact bytes and time.
type savedState struct {
	State json.RawMessage
	At    time.Time
}

func loadState(t *testing.T, db *store.DB, id string) savedState {
	t.Helper()
	state, at, err := db.LoadSessionState(t.Context(), id)
	if err != nil {
		t.Fatalf("LoadSessionState(%s): %v", id, err)
	}
	return savedState{state, at}
}

func TestSessionStateSaveLoad(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	// Key order, spacing and a non-ASCII URL must survive byte for byte: the
	// store does not own this JSON.
	first := json.RawMessage(`{"url":"https://example.com/ä?q=1#f", "storage_state":{"cookies":[{"name":"sid","value":"abc"}],"origins":[]}}`)
	second := json.RawMessage(`{"url":"https://example.org/","title":"Two"}`)

	tests := []struct {
		name  string
		saves []savedState // applied in order to a fresh session
		want  savedState
	}{
		{"never saved", nil, savedState{}},
		{"round trip", []savedState{{first, t0}}, savedState{first, t0.UTC()}},
		{"upsert replaces", []savedState{{first, t0}, {second, t0.Add(time.Minute)}}, savedState{second, t0.Add(time.Minute).UTC()}},
		{"last write wins even with an older time", []savedState{{first, t0}, {second, t0.Add(-time.Minute)}},
			savedState{second, t0.Add(-time.Minute).UTC()}},
		{"nil state is recorded as saved-with-nothing", []savedState{{first, t0}, {nil, t0.Add(time.Second)}},
			savedState{nil, t0.Add(time.Second).UTC()}},
	}
	db := newDB(t)
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id := "s" + string(rune('a'+i))
			mustSession(t, db, id)
			for _, s := range tt.saves {
				if err := db.SaveSessionState(ctx, id, s.State, s.At); err != nil {
					t.Fatalf("SaveSessionState: %v", err)
				}
			}
			got := loadState(t, db, id)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("loaded (-want +got):\n%s", diff)
			}
			if tt.want.State != nil && !bytes.Equal(got.State, tt.want.State) {
				t.Errorf("state bytes = %s, want %s", got.State, tt.want.State)
			}
		})
	}

	errTests := []struct {
		name string
		op   func() error
		code string
	}{
		{"save for unknown session", func() error { return db.SaveSessionState(ctx, "nope", first, t0) }, proxy.ESESSIONMISSING},
		{"save without id", func() error { return db.SaveSessionState(ctx, "", first, t0) }, proxy.EINVALID},
		{"save invalid JSON", func() error { return db.SaveSessionState(ctx, "sa", json.RawMessage(`{"url":`), t0) }, proxy.EINVALID},
		{"load for unknown session", func() error { _, _, err := db.LoadSessionState(ctx, "nope"); return err }, proxy.ESESSIONMISSING},
	}
	for _, tt := range errTests {
		t.Run(tt.name, func(t *testing.T) { wantCode(t, tt.op(), tt.code) })
	}
	// The failed saves changed nothing.
	if diff := cmp.Diff(savedState{}, loadState(t, db, "sa")); diff != "" {
		t.Errorf("session sa after failed saves (-want +got):\n%s", diff)
	}
}

// TestSessionStateSchema pins what a reader of the file (the sqlite3 shell)
// finds in session_state: a sealed blob per saved state, NULL for "nothing
// to keep", and no row once its session is gone.
func TestSessionStateSchema(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "proxy.db")
	db := openDB(t, path)
	states := map[string]json.RawMessage{
		"with-url":   json.RawMessage(`{"url":"https://example.com/x","storage_state":{}}`),
		"not-object": json.RawMessage(`[1,2]`),
		"null-state": nil,
	}
	for id, st := range states {
		mustSession(t, db, id)
		if err := db.SaveSessionState(ctx, id, st, t0); err != nil {
			t.Fatal(err)
		}
	}
	// A second handle on the file, as the sqlite3 shell would be.
	raw, err := sql.Open("sqlite", "file:"+path+"?_pragma=foreign_keys(1)&_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	kinds := map[string]string{}
	rows, err := raw.QueryContext(ctx, `SELECT session_id, typeof(state), state FROM session_state`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var (
			id, kind string
			blob     []byte
		)
		if err := rows.Scan(&id, &kind, &blob); err != nil {
			t.Fatal(err)
		}
		kinds[id] = kind
		if bytes.Contains(blob, []byte("example.com")) {
			t.Errorf("session %s: the stored state holds its plaintext", id)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	rows.Close()
	want := map[string]string{"with-url": "blob", "not-object": "blob", "null-state": "null"}
	if diff := cmp.Diff(want, kinds); diff != "" {
		t.Errorf("stored state types (-want +got):\n%s", diff)
	}

	// Deleting a session takes its saved state with it.
	if _, err := raw.ExecContext(ctx, `DELETE FROM sessions WHERE session_id = 'with-url'`); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := raw.QueryRowContext(ctx, `SELECT count(*) FROM session_state WHERE session_id = 'with-url'`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("%d session_state rows left after the session was deleted", n)
	}
	_, _, err = db.LoadSessionState(ctx, "with-url")
	wantCode(t, err, proxy.ESESSIONMISSING)
}

func TestSessionStateSurvivesReopen(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "proxy.db")
	state := json.RawMessage(`{"url":"https://example.com/","storage_state":{"cookies":[],"origins":[]}}`)

	db, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	mustSession(t, db, "s")
	if err := db.SaveSessionState(ctx, "s", state, t0); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	got := loadState(t, openDB(t, path), "s")
	if diff := cmp.Diff(savedState{state, t0.UTC()}, got); diff != "" {
		t.Errorf("after reopen (-want +got):\n%s", diff)
	}
}

func TestSessionsInStateAndSetSessionsState(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db := newDB(t)
	// Created oldest first; listings are newest first.
	all := map[string]*proxy.Session{}
	for i, st := range []proxy.SessionState{
		proxy.SessionActive, proxy.SessionSuspended, proxy.SessionActive, proxy.SessionClosed, proxy.SessionError,
	} {
		s := &proxy.Session{ID: "s" + string(rune('0'+i)), CreatedAt: t0.Add(time.Duration(i) * time.Second).UTC(),
			LastActivity: t0.UTC(), State: st}
		if err := db.CreateSession(ctx, s); err != nil {
			t.Fatal(err)
		}
		all[s.ID] = s
	}
	sessions := func(ids ...string) []*proxy.Session {
		out := []*proxy.Session{}
		for _, id := range ids {
			out = append(out, all[id])
		}
		return out
	}

	queries := []struct {
		name   string
		states []proxy.SessionState
		want   []*proxy.Session
	}{
		{"no state asked", nil, sessions()},
		{"one state", []proxy.SessionState{proxy.SessionActive}, sessions("s2", "s0")},
		{"several states", []proxy.SessionState{proxy.SessionSuspended, proxy.SessionError}, sessions("s4", "s1")},
		{"duplicates are harmless", []proxy.SessionState{proxy.SessionClosed, proxy.SessionClosed}, sessions("s3")},
	}
	for _, tt := range queries {
		t.Run(tt.name, func(t *testing.T) {
			got, err := db.SessionsInState(ctx, tt.states...)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("SessionsInState(%v) (-want +got):\n%s", tt.states, diff)
			}
		})
	}

	errTests := []struct {
		name string
		op   func() error
	}{
		{"query bad state", func() error { _, err := db.SessionsInState(ctx, proxy.SessionActive, "zombie"); return err }},
		{"move from bad state", func() error { _, err := db.SetSessionsState(ctx, "zombie", proxy.SessionActive); return err }},
		{"move to bad state", func() error { _, err := db.SetSessionsState(ctx, proxy.SessionActive, ""); return err }},
	}
	for _, tt := range errTests {
		t.Run(tt.name, func(t *testing.T) { wantCode(t, tt.op(), proxy.EINVALID) })
	}

	// Start-up recovery, run twice as a restarted server would: the second
	// run finds nothing left to move.
	moves := []struct {
		name     string
		from, to proxy.SessionState
		want     int64
	}{
		{"active become suspended", proxy.SessionActive, proxy.SessionSuspended, 2},
		{"again: nothing left", proxy.SessionActive, proxy.SessionSuspended, 0},
		{"same state changes nothing", proxy.SessionSuspended, proxy.SessionSuspended, 0},
	}
	for _, tt := range moves {
		t.Run(tt.name, func(t *testing.T) {
			n, err := db.SetSessionsState(ctx, tt.from, tt.to)
			if err != nil {
				t.Fatal(err)
			}
			if n != tt.want {
				t.Errorf("SetSessionsState(%s, %s) = %d, want %d", tt.from, tt.to, n, tt.want)
			}
		})
	}
	for _, id := range []string{"s0", "s2"} {
		all[id].State = proxy.SessionSuspended
	}
	got, err := db.SessionsInState(ctx, proxy.SessionSuspended)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(sessions("s2", "s1", "s0"), got); diff != "" {
		t.Errorf("suspended after recovery (-want +got):\n%s", diff)
	}
	// Everything else is untouched.
	list, err := db.ListSessions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(sessions("s4", "s3", "s2", "s1", "s0"), list); diff != "" {
		t.Errorf("all sessions (-want +got):\n%s", diff)
	}
}
