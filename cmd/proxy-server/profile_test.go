//go:build unix

package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/store"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/store/seal"
)

// profileCLI runs `proxy-server profile ARGS -db path` in-process, with
// stdin, and returns what it printed.
func profileCLI(ctx context.Context, path string, stdin string, args ...string) (stdout, stderr string, err error) {
	var out, errOut bytes.Buffer
	m := NewMain(&out, &errOut)
	m.Stdin = strings.NewReader(stdin)
	full := append([]string{"profile", args[0], "-db", path}, args[1:]...)
	err = m.Run(ctx, full)
	return out.String(), errOut.String(), err
}

// cliEnv clears the variables the CLI reads, so the developer's own do not
// leak in.
func cliEnv(t *testing.T) {
	t.Setenv("PROXY_STATE_KEY", "")
	t.Setenv("PROXY_PROFILES", "")
	t.Setenv("PROXY_PROFILE_MAX_BYTES", "4096")
	t.Setenv("PROXY_AUTH_TOKEN", "")
	t.Setenv("PROXY_CLIENT_TOKENS_FILE", "")
	t.Setenv("PROXY_LOG_FILE", "")
}

func TestProfileCLI(t *testing.T) {
	cliEnv(t)
	ctx := t.Context()
	dir := t.TempDir()
	db := filepath.Join(dir, "data", "proxy.db")
	nonce := make([]byte, 8)
	if _, err := rand.Read(nonce); err != nil {
		t.Fatal(err)
	}
	secret := "SECRET-" + hex.EncodeToString(nonce)
	state := `{
  "cookies": [{"name": "sid", "value": "` + secret + `", "domain": ".example.com", "path": "/",
               "expires": 1893456000, "httpOnly": true, "secure": true, "sameSite": "Lax"}],
  "origins": [{"origin": "https://app.example.org", "localStorage": [{"name": "token", "value": "` + secret + `"}]}]
}`
	in := filepath.Join(dir, "state.json")
	if err := os.WriteFile(in, []byte(state), 0o600); err != nil {
		t.Fatal(err)
	}
	compact := func(s string) string {
		var b bytes.Buffer
		if err := json.Compact(&b, []byte(s)); err != nil {
			t.Fatalf("not JSON: %v: %q", err, s)
		}
		return b.String()
	}
	run := func(t *testing.T, stdin string, args ...string) string {
		t.Helper()
		out, errOut, err := profileCLI(ctx, db, stdin, args...)
		if err != nil {
			t.Fatalf("profile %v: %v (stderr %q)", args, err, errOut)
		}
		return out
	}

	t.Run("import from a file", func(t *testing.T) {
		out := run(t, "", "import", "work", in)
		if !strings.Contains(out, "profile work version 1") {
			t.Errorf("import printed %q, want the name and version 1", out)
		}
	})
	t.Run("import from stdin is the next version", func(t *testing.T) {
		out := run(t, state, "import", "work", "-")
		if !strings.Contains(out, "profile work version 2") {
			t.Errorf("import printed %q, want version 2", out)
		}
	})
	t.Run("list", func(t *testing.T) {
		out := run(t, "", "list")
		for _, want := range []string{"NAME", "work", "2", "example.com,https://app.example.org", "2030-01-01T00:00:00Z"} {
			if !strings.Contains(out, want) {
				t.Errorf("list printed %q, without %q", out, want)
			}
		}
		if strings.Contains(out, secret) {
			t.Error("list printed the profile's contents")
		}
	})
	t.Run("list -json names the live sessions started from it", func(t *testing.T) {
		s, err := store.Open(ctx, db)
		if err != nil {
			t.Fatal(err)
		}
		for _, sess := range []*proxy.Session{
			{ID: "live", State: proxy.SessionActive, Profile: "work", ProfileVersion: 2},
			{ID: "closed", State: proxy.SessionClosed, Profile: "work", ProfileVersion: 1},
			{ID: "other", State: proxy.SessionSuspended},
		} {
			sess.CreatedAt, sess.LastActivity = time.Now(), time.Now()
			if err := s.CreateSession(ctx, sess); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		var got []proxy.Profile
		if err := json.Unmarshal([]byte(run(t, "", "list", "-json")), &got); err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 {
			t.Fatalf("list -json = %+v, want one profile", got)
		}
		exp := time.Unix(1893456000, 0).UTC()
		want := proxy.Profile{Name: "work", Version: 2, Origins: []string{"example.com", "https://app.example.org"},
			CookiesExpireAt: &exp, Sessions: []string{"live"}, Bytes: len(compact(state)),
			CreatedAt: got[0].CreatedAt, UpdatedAt: got[0].UpdatedAt}
		if diff := cmp.Diff(want, got[0]); diff != "" {
			t.Errorf("list -json (-want +got):\n%s", diff)
		}
	})
	t.Run("export to a file: 0600, the same JSON", func(t *testing.T) {
		out := filepath.Join(dir, "exported.json")
		// An existing file of a wider mode is replaced, not reused.
		if err := os.WriteFile(out, []byte("old"), 0o644); err != nil {
			t.Fatal(err)
		}
		run(t, "", "export", "work", out)
		fi, err := os.Stat(out)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("exported file mode %04o, want 0600", fi.Mode().Perm())
		}
		raw, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(compact(state), compact(string(raw))); diff != "" {
			t.Errorf("exported state (-imported +exported):\n%s", diff)
		}
	})
	t.Run("export to stdout", func(t *testing.T) {
		if diff := cmp.Diff(compact(state), compact(run(t, "", "export", "work", "-"))); diff != "" {
			t.Errorf("exported state (-imported +exported):\n%s", diff)
		}
	})
	t.Run("the database holds no secret", func(t *testing.T) {
		assertAbsent(t, "after import", secret, db, db+"-wal", db+"-shm")
	})
	t.Run("another PROXY_STATE_KEY opens nothing", func(t *testing.T) {
		key := make([]byte, seal.KeySize)
		if _, err := rand.Read(key); err != nil {
			t.Fatal(err)
		}
		t.Setenv("PROXY_STATE_KEY", hex.EncodeToString(key))
		_, _, err := profileCLI(ctx, db, "", "export", "work", "-")
		if !errors.Is(err, seal.ErrOpen) {
			t.Errorf("export with another key = %v, want ErrOpen", err)
		}
	})
	t.Run("delete, then the list is empty", func(t *testing.T) {
		if out := run(t, "", "delete", "work"); !strings.Contains(out, "work") {
			t.Errorf("delete printed %q", out)
		}
		if out := run(t, "", "list"); strings.TrimSpace(out) != "no profiles" {
			t.Errorf("list after delete = %q", out)
		}
		if out := run(t, "", "list", "-json"); strings.TrimSpace(out) != "[]" {
			t.Errorf("list -json after delete = %q", out)
		}
	})

	big := `{"cookies":[],"origins":[],"pad":"` + strings.Repeat("x", 4096) + `"}`
	refusals := []struct {
		name  string
		stdin string
		args  []string
		want  []string // in the error
	}{
		{"bad name", "", []string{"import", "Work!", in}, []string{proxy.EINVALID, "NAME", "Work!"}},
		{"bad state names the field", `{"cookies":[{"name":"a","value":"b","path":"/","expires":-1}],"origins":[]}`,
			[]string{"import", "work", "-"}, []string{proxy.EINVALID, "cookies[0].domain"}},
		{"not JSON", "hello", []string{"import", "work", "-"}, []string{proxy.EINVALID, "state"}},
		{"over PROXY_PROFILE_MAX_BYTES", big, []string{"import", "work", "-"}, []string{proxy.ETOOLARGE, "PROXY_PROFILE_MAX_BYTES", "4096"}},
		{"missing file", "", []string{"import", "work", filepath.Join(dir, "nope.json")}, []string{"nope.json", "no such file"}},
		{"export unknown", "", []string{"export", "nope", "-"}, []string{proxy.EPROFILEMISSING, `"nope"`}},
		{"delete unknown", "", []string{"delete", "nope"}, []string{proxy.EPROFILEMISSING, `"nope"`}},
		{"too few arguments", "", []string{"import", "work"}, []string{"2 arguments"}},
		{"unknown subcommand", "", []string{"rename", "a", "b"}, []string{"rename"}},
	}
	t.Run("refused: list of a database that is not there, and none is made", func(t *testing.T) {
		missing := filepath.Join(dir, "elsewhere", "proxy.db")
		_, _, err := profileCLI(ctx, missing, "", "list")
		if err == nil || !strings.Contains(err.Error(), missing) {
			t.Errorf("list = %v, want an error naming %s", err, missing)
		}
		if _, err := os.Stat(filepath.Dir(missing)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("list made %s: %v", filepath.Dir(missing), err)
		}
	})
	for _, tt := range refusals {
		t.Run("refused: "+tt.name, func(t *testing.T) {
			_, _, err := profileCLI(ctx, db, tt.stdin, tt.args...)
			if err == nil {
				t.Fatal("succeeded")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
	t.Run("nothing was stored by the refusals", func(t *testing.T) {
		if out := run(t, "", "list", "-json"); strings.TrimSpace(out) != "[]" {
			t.Errorf("list -json = %q", out)
		}
	})
}
