package store_test

import (
	"bytes"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/pressly/goose/v3"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/store"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/store/seal"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/migrations"
)

func randomHex(t *testing.T, n int) string {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// sessionState is a saved state as the upstream layer writes one, holding
// secret as a cookie value and a localStorage token.
func sessionState(secret string) json.RawMessage {
	return json.RawMessage(`{"url":"https://app.example.org/","storage_state":{"cookies":[{"name":"sid","value":"` + secret +
		`","domain":"app.example.org","path":"/","expires":-1,"httpOnly":true,"secure":true,"sameSite":"Lax"}],` +
		`"origins":[{"origin":"https://app.example.org","localStorage":[{"name":"token","value":"` + secret + `"}]}]}}`)
}

// assertAbsent reads every byte of the database's files and fails if
// secret is in any of them.
func assertAbsent(t *testing.T, dbPath, secret string) {
	t.Helper()
	files := 0
	for _, suffix := range []string{"", "-wal", "-shm", "-journal"} {
		raw, err := os.ReadFile(dbPath + suffix)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		files++
		if bytes.Contains(raw, []byte(secret)) {
			t.Errorf("%s (%d bytes) holds the secret", filepath.Base(dbPath+suffix), len(raw))
		}
	}
	if files == 0 {
		t.Fatal("no database file to read")
	}
}

// TestAtRest proves that neither a saved session state nor a profile
// leaves its cookie or token readable in the database's files, while the
// database is open (WAL) and after it is closed.
func TestAtRest(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "proxy.db")
	secret := "SECRET-" + randomHex(t, 12)
	db, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	mustSession(t, db, "s")
	state := sessionState(secret)
	if err := db.SaveSessionState(ctx, "s", state, t0); err != nil {
		t.Fatal(err)
	}
	profile, meta := storageState(t, secret, -1)
	if _, err := db.PutProfile(ctx, "work", profile, meta, t0, -1); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path + "-wal"); err != nil {
		t.Fatalf("no WAL while open: %v", err)
	}
	assertAbsent(t, path, secret)

	// What was sealed opens again.
	got, _, err := db.LoadSessionState(ctx, "s")
	if err != nil || !bytes.Equal(got, state) {
		t.Errorf("LoadSessionState = %s, %v; want the state saved", got, err)
	}
	gotProfile, _, err := db.ProfileState(ctx, "work")
	if err != nil || !bytes.Equal(gotProfile, profile) {
		t.Errorf("ProfileState = %s, %v; want the state put", gotProfile, err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	assertAbsent(t, path, secret)

	fi, err := os.Stat(store.KeyFilePath(path))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("key file mode %04o, want 0600", fi.Mode().Perm())
	}
}

// TestAtRestSealsLegacyStates: states an older version saved as JSON (one
// checkpointed into the main file, one still in the WAL) are sealed when
// the store opens the database, and their plaintext is gone from every
// file, not just from the rows.
func TestAtRestSealsLegacyStates(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "proxy.db")
	secret := "SECRET-" + randomHex(t, 12)
	states := map[string]json.RawMessage{
		"in-main-file": sessionState(secret + "-main"),
		"in-the-wal":   sessionState(secret + "-wal"),
	}

	// The database as the version before sealing left it.
	old, err := sql.Open("sqlite", "file:"+path+"?_pragma=journal_mode(WAL)&_pragma=foreign_keys(1)")
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	old.SetMaxOpenConns(1)
	p, err := goose.NewProvider(goose.DialectSQLite3, old, migrations.FS, goose.WithDisableGlobalRegistry(true))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.UpTo(ctx, 6); err != nil {
		t.Fatal(err)
	}
	legacy := func(id string) {
		t.Helper()
		for _, q := range []struct {
			sql  string
			args []any
		}{
			{`INSERT INTO sessions (session_id, created_at, last_activity, state) VALUES (?, ?, ?, 'suspended')`,
				[]any{id, "2025-01-01T00:00:00.000000000Z", "2025-01-01T00:00:00.000000000Z"}},
			{`INSERT INTO session_state (session_id, state, saved_at) VALUES (?, ?, ?)`,
				[]any{id, string(states[id]), "2025-01-01T00:00:00.000000000Z"}},
		} {
			if _, err := old.ExecContext(ctx, q.sql, q.args...); err != nil {
				t.Fatal(err)
			}
		}
	}
	legacy("in-main-file")
	if _, err := old.ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
		t.Fatal(err)
	}
	legacy("in-the-wal")
	for _, f := range []string{path, path + "-wal"} {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(raw, []byte(secret)) {
			t.Fatalf("set-up: %s does not hold the legacy plaintext", filepath.Base(f))
		}
	}

	db, err := store.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	assertAbsent(t, path, secret)
	for id, want := range states {
		got, _, err := db.LoadSessionState(ctx, id)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: LoadSessionState = %s, %v; want the legacy state", id, got, err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if err := old.Close(); err != nil {
		t.Fatal(err)
	}
	assertAbsent(t, path, secret)

	// Sealed once: a second Open finds nothing left to seal and reads the
	// same states.
	again := openDB(t, path)
	for id, want := range states {
		got, _, err := again.LoadSessionState(ctx, id)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("reopened, %s: LoadSessionState = %s, %v; want the legacy state", id, got, err)
		}
	}
}

func openDBWithKey(t *testing.T, path string, key []byte) *store.DB {
	t.Helper()
	db, err := store.Open(t.Context(), path, store.WithStateKey(key))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func TestStateKey(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	key := make([]byte, seal.KeySize)
	if _, err := rand.Read(key); err != nil {
		t.Fatal(err)
	}
	other := make([]byte, seal.KeySize)
	if _, err := rand.Read(other); err != nil {
		t.Fatal(err)
	}

	t.Run("a given key: no key file", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "proxy.db")
		db, err := store.Open(ctx, path, store.WithStateKey(key))
		if err != nil {
			t.Fatal(err)
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(store.KeyFilePath(path)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("key file: %v, want none", err)
		}
	})

	t.Run("a key file others may read is refused", func(t *testing.T) {
		if runtime.GOOS == "windows" {
			t.Skip("no permission bits to check")
		}
		path := filepath.Join(t.TempDir(), "proxy.db")
		if err := os.WriteFile(store.KeyFilePath(path), []byte(hex.EncodeToString(key)+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(store.KeyFilePath(path), 0o644); err != nil {
			t.Fatal(err)
		}
		db, err := store.Open(ctx, path)
		if err == nil {
			db.Close()
			t.Fatal("Open succeeded with a 0644 key file")
		}
		for _, want := range []string{"chmod 600", store.KeyFilePath(path)} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not say %q", err, want)
			}
		}
		if strings.Contains(err.Error(), hex.EncodeToString(key)) {
			t.Error("the error holds the key")
		}
	})

	t.Run("a key of the wrong size is refused", func(t *testing.T) {
		db, err := store.Open(ctx, filepath.Join(t.TempDir(), "proxy.db"), store.WithStateKey(key[:16]))
		if !errors.Is(err, seal.ErrKey) {
			if db != nil {
				db.Close()
			}
			t.Fatalf("Open = %v, want ErrKey", err)
		}
	})

	t.Run("another key opens nothing and deletes nothing", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "proxy.db")
		secret := "SECRET-" + randomHex(t, 12)
		state := sessionState(secret)
		profile, meta := storageState(t, secret, -1)
		db, err := store.Open(ctx, path, store.WithStateKey(key))
		if err != nil {
			t.Fatal(err)
		}
		mustSession(t, db, "s")
		if err := db.SaveSessionState(ctx, "s", state, t0); err != nil {
			t.Fatal(err)
		}
		if _, err := db.PutProfile(ctx, "work", profile, meta, t0, -1); err != nil {
			t.Fatal(err)
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}

		wrong, err := store.Open(ctx, path, store.WithStateKey(other))
		if err != nil {
			t.Fatal(err)
		}
		if err := wrong.CheckStateKey(ctx); !errors.Is(err, seal.ErrOpen) || !strings.Contains(err.Error(), "session s") {
			t.Errorf("CheckStateKey with another key = %v, want ErrOpen naming session s", err)
		}
		_, _, err = wrong.LoadSessionState(ctx, "s")
		if !errors.Is(err, seal.ErrOpen) {
			t.Errorf("LoadSessionState with another key = %v, want ErrOpen", err)
		}
		_, _, perr := wrong.ProfileState(ctx, "work")
		if !errors.Is(perr, seal.ErrOpen) {
			t.Errorf("ProfileState with another key = %v, want ErrOpen", perr)
		}
		for _, e := range []error{err, perr} {
			if e != nil && (strings.Contains(e.Error(), secret) || strings.Contains(e.Error(), hex.EncodeToString(other))) {
				t.Errorf("the error %q holds the secret or the key", e)
			}
		}
		// The metadata is no secret and still reads.
		if p, err := wrong.GetProfile(ctx, "work"); err != nil || p.Version != 1 {
			t.Errorf("GetProfile with another key = %v, %v", p, err)
		}
		if err := wrong.Close(); err != nil {
			t.Fatal(err)
		}

		right, err := store.Open(ctx, path, store.WithStateKey(key))
		if err != nil {
			t.Fatal(err)
		}
		defer right.Close()
		if err := right.CheckStateKey(ctx); err != nil {
			t.Errorf("CheckStateKey with the key again: %v", err)
		}
		got, _, err := right.LoadSessionState(ctx, "s")
		if err != nil || !bytes.Equal(got, state) {
			t.Errorf("LoadSessionState with the key again = %s, %v", got, err)
		}
		gotProfile, _, err := right.ProfileState(ctx, "work")
		if err != nil || !bytes.Equal(gotProfile, profile) {
			t.Errorf("ProfileState with the key again = %s, %v", gotProfile, err)
		}
	})

	t.Run("another key and only a profile sealed", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "proxy.db")
		db, err := store.Open(ctx, path, store.WithStateKey(key))
		if err != nil {
			t.Fatal(err)
		}
		if err := db.CheckStateKey(ctx); err != nil {
			t.Errorf("CheckStateKey on an empty store: %v", err)
		}
		profile, meta := storageState(t, "SECRET-p", -1)
		if _, err := db.PutProfile(ctx, "work", profile, meta, t0, -1); err != nil {
			t.Fatal(err)
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		wrong := openDBWithKey(t, path, other)
		if err := wrong.CheckStateKey(ctx); !errors.Is(err, seal.ErrOpen) || !strings.Contains(err.Error(), "profile work") {
			t.Errorf("CheckStateKey with another key = %v, want ErrOpen naming profile work", err)
		}
	})

	t.Run("a state moved to another session's row does not open", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "proxy.db")
		db := openDB(t, path)
		mustSession(t, db, "a")
		mustSession(t, db, "b")
		if err := db.SaveSessionState(ctx, "a", sessionState("SECRET-a"), t0); err != nil {
			t.Fatal(err)
		}
		if err := db.SaveSessionState(ctx, "b", json.RawMessage(`{}`), t0); err != nil {
			t.Fatal(err)
		}
		raw, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(5000)")
		if err != nil {
			t.Fatal(err)
		}
		defer raw.Close()
		if _, err := raw.ExecContext(ctx,
			`UPDATE session_state SET state = (SELECT state FROM session_state WHERE session_id = 'a') WHERE session_id = 'b'`); err != nil {
			t.Fatal(err)
		}
		if _, _, err := db.LoadSessionState(ctx, "b"); !errors.Is(err, seal.ErrOpen) {
			t.Errorf("LoadSessionState of a moved blob = %v, want ErrOpen", err)
		}
		// A session that does not exist is still told apart.
		_, _, err = db.LoadSessionState(ctx, "nope")
		wantCode(t, err, proxy.ESESSIONMISSING)
	})
}
