//go:build unix

package main

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestSessionStateSealedAtRest: a real session signs in (an HttpOnly
// cookie from the server, a localStorage token from a script), its state
// is saved with both, and neither value is in the database's files, while
// the server runs and after it stops, nor in its debug log.
func TestSessionStateSealedAtRest(t *testing.T) {
	nonce := make([]byte, 12)
	if _, err := rand.Read(nonce); err != nil {
		t.Fatal(err)
	}
	secret := "SESSIONSECRET-" + hex.EncodeToString(nonce)
	mux := http.NewServeMux()
	mux.HandleFunc("/login", func(w http.ResponseWriter, r *http.Request) {
		http.SetCookie(w, &http.Cookie{Name: "sid", Value: secret, Path: "/", HttpOnly: true, Expires: time.Now().Add(time.Hour)})
		// The token reaches the page encoded, so that only the browser's
		// storage holds it in the clear, never the page the record keeps.
		fmt.Fprintf(w, `<!doctype html><title>signed in</title><p>welcome</p>
<script>localStorage.setItem("token", atob(%q))</script>`, base64.StdEncoding.EncodeToString([]byte(secret)))
	})
	site := httptest.NewServer(mux)
	t.Cleanup(site.Close)

	logFile := filepath.Join(t.TempDir(), "proxy.log")
	s := startServer(t, "", map[string]string{"PROXY_LOG_FILE": logFile})
	id := s.createSession(t)
	s.call(t, id, "browser_navigate", map[string]string{"url": site.URL + "/login"})
	// The saved state really holds both, opened with the key.
	waitSavedState(t, openRO(t, s.DBPath), id, "the cookie and the token", func(plain []byte) bool {
		return bytes.Count(plain, []byte(secret)) >= 2
	})

	files := []string{s.DBPath, s.DBPath + "-wal", s.DBPath + "-shm", logFile}
	assertAbsent(t, "while serving", secret, files...)
	s.stop()
	assertAbsent(t, "after stopping", secret, files...)
	if fi, err := os.Stat(logFile); err != nil || fi.Size() == 0 {
		t.Errorf("no debug log was read: %v", err)
	}
	fi, err := os.Stat(s.DBPath + ".key")
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("key file mode %04o, want 0600", fi.Mode().Perm())
	}
}

// assertAbsent reads every byte of each file that exists and fails if
// secret is in one.
func assertAbsent(t *testing.T, when, secret string, files ...string) {
	t.Helper()
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(raw, []byte(secret)) {
			t.Errorf("%s: %s holds the secret", when, filepath.Base(f))
		}
	}
}
