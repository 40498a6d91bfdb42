package migrations_test

import (
	"database/sql"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/pressly/goose/v3"
	_ "modernc.org/sqlite"

	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/migrations"
)

func TestFSHoldsMigrationsAtRoot(t *testing.T) {
	names, err := fs.Glob(migrations.FS, "*.sql")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"00001_initial.sql", "00002_session_state.sql", "00003_session_owner.sql", "00004_session_events.sql", "00005_downloads.sql", "00006_session_options.sql", "00007_profiles.sql"}, names); diff != "" {
		t.Errorf("embedded migrations (-want +got):\n%s", diff)
	}
}

func openProvider(t *testing.T) (*sql.DB, *goose.Provider) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(t.TempDir(), "m.db")+"?_pragma=foreign_keys(1)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	p, err := goose.NewProvider(goose.DialectSQLite3, db, migrations.FS, goose.WithDisableGlobalRegistry(true))
	if err != nil {
		t.Fatal(err)
	}
	return db, p
}

func tables(t *testing.T, db *sql.DB) []string {
	t.Helper()
	rows, err := db.QueryContext(t.Context(),
		`SELECT name FROM sqlite_schema WHERE type IN ('table', 'index') AND name NOT LIKE 'sqlite_%' ORDER BY name`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		out = append(out, n)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestUpDownUp proves every migration applies, reverts cleanly and applies
// again, and that a second Up is a no-op.
func TestUpDownUp(t *testing.T) {
	ctx := t.Context()
	db, p := openProvider(t)
	schema := []string{
		"console_logs", "console_logs_ref_id", "diff_cursors", "downloads", "goose_db_version", "images", "profiles",
		"requests", "requests_session_timestamp", "responses", "session_events", "session_events_session_at", "session_state", "sessions",
	}
	v6 := slices.DeleteFunc(slices.Clone(schema), func(n string) bool { return n == "profiles" })
	v4 := slices.DeleteFunc(slices.Clone(v6), func(n string) bool { return n == "downloads" })
	v3 := slices.DeleteFunc(slices.Clone(v4), func(n string) bool { return strings.HasPrefix(n, "session_events") })
	v1 := slices.DeleteFunc(slices.Clone(v3), func(n string) bool { return n == "session_state" })
	steps := []struct {
		name        string
		run         func() (int, error)
		wantVersion int64
		wantTables  []string
	}{
		{"up", func() (int, error) { r, err := p.Up(ctx); return len(r), err }, 7, schema},
		{"up again is a no-op", func() (int, error) { r, err := p.Up(ctx); return len(r), err }, 7, schema},
		{"down the profiles", func() (int, error) { _, err := p.Down(ctx); return 1, err }, 6, v6},
		{"down one step (a column)", func() (int, error) { _, err := p.Down(ctx); return 1, err }, 5, v6},
		{"down the downloads", func() (int, error) { _, err := p.Down(ctx); return 1, err }, 4, v4},
		{"down one step (a table)", func() (int, error) { _, err := p.Down(ctx); return 1, err }, 3, v3},
		{"down another (a column)", func() (int, error) { _, err := p.Down(ctx); return 1, err }, 2, v3},
		{"down another", func() (int, error) { _, err := p.Down(ctx); return 1, err }, 1, v1},
		{"down to zero", func() (int, error) { r, err := p.DownTo(ctx, 0); return len(r), err }, 0, []string{"goose_db_version"}},
		{"up after down", func() (int, error) { r, err := p.Up(ctx); return len(r), err }, 7, schema},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			if _, err := st.run(); err != nil {
				t.Fatal(err)
			}
			v, err := p.GetDBVersion(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if v != st.wantVersion {
				t.Errorf("version = %d, want %d", v, st.wantVersion)
			}
			if diff := cmp.Diff(st.wantTables, tables(t, db)); diff != "" {
				t.Errorf("schema objects (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSchemaConstraints pins what the schema itself refuses, independently
// of the Go checks in internal/store.
func TestSchemaConstraints(t *testing.T) {
	ctx := t.Context()
	db, p := openProvider(t)
	if _, err := p.Up(ctx); err != nil {
		t.Fatal(err)
	}
	const ts = "2025-01-01T00:00:00.000000000Z"
	setup := []string{
		`INSERT INTO sessions (session_id, created_at, last_activity, state, metadata) VALUES ('s', '` + ts + `', '` + ts + `', 'active', NULL)`,
		`INSERT INTO requests VALUES ('r', 's', 'browser_snapshot', '{}', '` + ts + `')`,
		`INSERT INTO responses (ref_id, status, timestamp) VALUES ('r', 'success', '` + ts + `')`,
	}
	for _, q := range setup {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	tests := []struct {
		name    string
		query   string
		wantErr string // "" = must succeed
	}{
		{"request for unknown session", `INSERT INTO requests VALUES ('r2', 'nope', 't', NULL, '` + ts + `')`, "FOREIGN KEY"},
		{"response for unknown request", `INSERT INTO responses (ref_id, status, timestamp) VALUES ('nope', 'success', '` + ts + `')`, "FOREIGN KEY"},
		{"console for unknown response", `INSERT INTO console_logs (ref_id, level, message, timestamp) VALUES ('nope', 'info', 'm', '` + ts + `')`, "FOREIGN KEY"},
		{"image for unknown response", `INSERT INTO images VALUES ('nope', 0, 'image/png', x'00')`, "FOREIGN KEY"},
		{"download for unknown response", `INSERT INTO downloads (ref_id, name, seq, mime_type, size, stored) VALUES ('nope', 'a.csv', 0, 'text/csv', 1, 1)`, "FOREIGN KEY"},
		{"negative download size", `INSERT INTO downloads (ref_id, name, seq, mime_type, size, stored) VALUES ('r', 'a.csv', 0, 'text/csv', -1, 1)`, "CHECK"},
		{"download name twice in one ref", `INSERT INTO downloads (ref_id, name, seq, mime_type, size, stored) VALUES ('r', 'b.csv', 0, 'text/csv', 1, 1), ('r', 'b.csv', 1, 'text/csv', 1, 1)`, "UNIQUE"},
		{"cursor for unknown response", `INSERT INTO diff_cursors VALUES ('nope', 0, 'h', '` + ts + `')`, "FOREIGN KEY"},
		{"unknown session state", `UPDATE sessions SET state = 'zombie'`, "CHECK"},
		{"invalid metadata JSON", `UPDATE sessions SET metadata = '{'`, "CHECK"},
		{"invalid params JSON", `UPDATE requests SET params = 'nope'`, "CHECK"},
		{"unknown response status", `UPDATE responses SET status = 'meh'`, "CHECK"},
		{"negative cursor", `INSERT INTO diff_cursors VALUES ('r', -1, 'h', '` + ts + `')`, "CHECK"},
		{"saved state for unknown session", `INSERT INTO session_state (session_id, state, saved_at) VALUES ('nope', '{}', '` + ts + `')`, "FOREIGN KEY"},
		{"saved state neither sealed nor JSON", `INSERT INTO session_state (session_id, state, saved_at) VALUES ('s', '{', '` + ts + `')`, "CHECK"},
		{"a sealed saved state", `INSERT INTO session_state (session_id, state, saved_at) VALUES ('s', x'01ff00', '` + ts + `')`, ""},
		{"profile state in the clear", `INSERT INTO profiles (name, version, state, bytes, created_at, updated_at) VALUES ('p', 1, '{}', 2, '` + ts + `', '` + ts + `')`, "CHECK"},
		{"profile version 0", `INSERT INTO profiles (name, version, state, bytes, created_at, updated_at) VALUES ('p', 0, x'01', 2, '` + ts + `', '` + ts + `')`, "CHECK"},
		{"profile origins not an array", `INSERT INTO profiles (name, version, state, origins, bytes, created_at, updated_at) VALUES ('p', 1, x'01', '{}', 2, '` + ts + `', '` + ts + `')`, "CHECK"},
		{"a profile", `INSERT INTO profiles (name, version, state, bytes, created_at, updated_at) VALUES ('p', 1, x'01', 2, '` + ts + `', '` + ts + `')`, ""},
		{"a profile name twice", `INSERT INTO profiles (name, version, state, bytes, created_at, updated_at) VALUES ('p', 1, x'01', 2, '` + ts + `', '` + ts + `')`, "UNIQUE"},
		{"a session without a profile", `SELECT 1 FROM sessions WHERE profile IS NULL AND profile_version = 0 AND profile_write = 0`, ""},
		{"saved state without saved_at", `INSERT INTO session_state (session_id, state) VALUES ('s', '{}')`, "NOT NULL"},
		{"JSON that looks numeric stays text", `UPDATE sessions SET metadata = '1.0'`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := db.ExecContext(ctx, tt.query)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("error = %v, want one mentioning %s", err, tt.wantErr)
			}
		})
	}
	var md, typ string
	if err := db.QueryRowContext(ctx, `SELECT metadata, typeof(metadata) FROM sessions`).Scan(&md, &typ); err != nil {
		t.Fatal(err)
	}
	if md != "1.0" || typ != "text" {
		t.Errorf("metadata = %q (%s), want the text 1.0 unchanged", md, typ)
	}
}
