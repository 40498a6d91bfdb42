//go:build unix

package main

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/mcpserver"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/wire"
)

// loginSite is a site with a real sign-in: a password form whose success
// sets an HttpOnly session cookie, after which the app keeps a token in
// localStorage and a record in IndexedDB. Its pages never show a secret:
// they say who is signed in and the cookie's generation (rotations).
type loginSite struct {
	URL      string
	password string
	lsToken  string // what the app keeps in localStorage
	idbNote  string // what the app keeps in IndexedDB

	mu   sync.Mutex
	sids map[string]int // session cookie value → generation
}

func newLoginSite(t *testing.T) *loginSite {
	t.Helper()
	l := &loginSite{password: "pw-" + secret(t), lsToken: "LSTOKEN-" + secret(t), idbNote: "IDBNOTE-" + secret(t), sids: map[string]int{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /login", func(w http.ResponseWriter, r *http.Request) {
		page(w, "Sign in", `<form method="post" action="/login"><label>Password <input type="password" name="password"></label><button>Sign in</button></form>`)
	})
	mux.HandleFunc("POST /login", func(w http.ResponseWriter, r *http.Request) {
		if r.FormValue("password") != l.password {
			page(w, "Sign in", `<p>wrong password</p>`)
			return
		}
		l.setCookie(w, 1)
		http.Redirect(w, r, "/app?first=1", http.StatusSeeOther)
	})
	mux.HandleFunc("GET /app", func(w http.ResponseWriter, r *http.Request) {
		script := ""
		if r.URL.Query().Get("first") == "1" {
			// What a single-page app keeps once signed in.
			script = fmt.Sprintf(`<script>
localStorage.setItem('token', %q);
window.__ready = new Promise(done => {
  const open = indexedDB.open('app', 1);
  open.onupgradeneeded = () => open.result.createObjectStore('kv', { keyPath: 'id' });
  open.onsuccess = () => {
    const tx = open.result.transaction('kv', 'readwrite');
    tx.objectStore('kv').put({ id: 'login', note: %q });
    tx.oncomplete = () => { open.result.close(); done(); };
  };
});
</script>`, l.lsToken, l.idbNote)
		}
		page(w, "App", `<p id="who">`+l.who(r)+`</p>`+script)
	})
	mux.HandleFunc("GET /rotate", func(w http.ResponseWriter, r *http.Request) {
		gen := l.gen(r)
		if gen == 0 {
			page(w, "Rotate", `<p id="who">signed-out</p>`)
			return
		}
		l.setCookie(w, gen+1)
		page(w, "Rotated", fmt.Sprintf(`<p id="who">rotated to gen=%d</p>`, gen+1))
	})
	mux.HandleFunc("GET /mark", func(w http.ResponseWriter, r *http.Request) {
		page(w, "Mark", fmt.Sprintf(`<p id="who">%s</p><script>localStorage.setItem('mark', %q)</script>`, l.who(r), r.URL.Query().Get("v")))
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	l.URL = srv.URL
	return l
}

func page(w http.ResponseWriter, title, body string) {
	w.Header().Set("Content-Type", "text/html")
	fmt.Fprintf(w, `<!doctype html><title>%s</title>%s`, title, body)
}

func secret(t *testing.T) string {
	t.Helper()
	b := make([]byte, 12)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// mint makes a valid session cookie value of generation gen.
func (l *loginSite) mint(gen int) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	v := fmt.Sprintf("SID%d-%s", gen, hex.EncodeToString(sha256.New().Sum([]byte(fmt.Sprint(time.Now().UnixNano(), gen))))[:40])
	l.sids[v] = gen
	return v
}

func (l *loginSite) setCookie(w http.ResponseWriter, gen int) {
	http.SetCookie(w, &http.Cookie{Name: "sid", Value: l.mint(gen), Path: "/", MaxAge: 86400, HttpOnly: true, SameSite: http.SameSiteLaxMode})
}

func (l *loginSite) gen(r *http.Request) int {
	c, err := r.Cookie("sid")
	if err != nil {
		return 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.sids[c.Value]
}

func (l *loginSite) who(r *http.Request) string {
	if gen := l.gen(r); gen > 0 {
		return fmt.Sprintf("user=alice gen=%d", gen)
	}
	return "signed-out"
}

// secrets are every value no stored byte, log line or answer may hold.
func (l *loginSite) secrets() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := []string{l.lsToken, l.idbNote}
	for v := range l.sids {
		out = append(out, v)
	}
	return out
}

// short is the first 8 hex digits of a value's SHA-256: how the status
// program reports what a page holds without the value entering the record.
func short(v string) string {
	sum := sha256.Sum256([]byte(v))
	return hex.EncodeToString(sum[:4])
}

// statusProgram reports what the page's browser context holds: who the
// server says is signed in (the HttpOnly cookie), and digests of the
// localStorage token and the IndexedDB record, and the mark.
const statusProgram = `async () => {
  if (window.__ready) await window.__ready;
  const h = async s => s == null ? 'none' : Array.from(new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(s)))).slice(0, 4).map(b => b.toString(16).padStart(2, '0')).join('');
  const note = await new Promise(done => {
    const open = indexedDB.open('app');
    open.onerror = () => done(null);
    open.onsuccess = () => {
      const db = open.result;
      if (!db.objectStoreNames.contains('kv')) { db.close(); return done(null); }
      const get = db.transaction('kv').objectStore('kv').get('login');
      get.onsuccess = () => { db.close(); done(get.result ? get.result.note : null); };
      get.onerror = () => { db.close(); done(null); };
    };
  });
  const who = document.getElementById('who');
  return [who ? who.textContent : 'no-app', 'ls=' + await h(localStorage.getItem('token')), 'idb=' + await h(note), 'mark=' + (localStorage.getItem('mark') || 'none')].join(' ');
}`

// status opens the app in the client's session (sessionID "" = its
// default) and reports what it holds.
func (l *loginSite) status(m *mcpClient, sessionID string) string {
	m.t.Helper()
	args := map[string]any{"url": l.URL + "/app"}
	if sessionID != "" {
		args["session_id"] = sessionID
	}
	m.browser("browser_navigate", args)
	args = map[string]any{"function": statusProgram}
	if sessionID != "" {
		args["session_id"] = sessionID
	}
	res := m.browser("browser_evaluate", args)
	return strings.Trim(strings.TrimSpace(res.Result), `"`)
}

// signedIn is the status of a session holding generation gen of the
// cookie and the app's storage, with mark.
func (l *loginSite) signedIn(gen int, mark string) string {
	return fmt.Sprintf("user=alice gen=%d ls=%s idb=%s mark=%s", gen, short(l.lsToken), short(l.idbNote), mark)
}

var passwordRef = regexp.MustCompile(`textbox "Password" \[ref=(e\d+)\]`)

// signIn signs in with the site's form through the tools, in the client's
// default session.
func (l *loginSite) signIn(m *mcpClient) {
	m.t.Helper()
	nav := m.browser("browser_navigate", map[string]any{"url": l.URL + "/login"})
	snap := m.callText("get_content", map[string]any{"ref_id": nav.RefID, "search_for": "Password"})
	ref := passwordRef.FindStringSubmatch(snap)
	if ref == nil {
		m.t.Fatalf("no password field in %q", snap)
	}
	m.browser("browser_type", map[string]any{"element": "Password", "target": ref[1], "text": l.password, "submit": true})
}

// profileOf reads a profile's metadata as the operator.
func profileOf(t *testing.T, s *server, name string) (int, proxy.Profile) {
	t.Helper()
	var p proxy.Profile
	var raw string
	code := do(t, "GET", s.URL+"/profiles/"+name, nil, &raw)
	if code == http.StatusOK {
		if err := json.Unmarshal([]byte(raw), &p); err != nil {
			t.Fatal(err)
		}
	}
	return code, p
}

// waitVersion waits until profile name is at version v or later.
func waitVersion(t *testing.T, s *server, name string, v int64) proxy.Profile {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for {
		code, p := profileOf(t, s, name)
		if code == http.StatusOK && p.Version >= v {
			return p
		}
		if time.Now().After(deadline) {
			t.Fatalf("profile %s: %d, version %d, want %d", name, code, p.Version, v)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// errorOf decodes an error body.
func errorOf(t *testing.T, raw string) wire.ErrorBody {
	t.Helper()
	var e wire.ErrorBody
	if err := json.Unmarshal([]byte(raw), &e); err != nil {
		t.Fatalf("error body %q: %v", raw, err)
	}
	return e
}

// TestLoginProfiles signs in to a real site through the tools, saves the
// login as a profile and starts other conversations from it, on real
// Chromium with the warm pool on: signed in on their first call, each on a
// copy of its own, a rotated cookie written back on close, a conflict kept
// the newer, profiles that outlive the server, and no secret in the
// database files, the log, the record or the exports.
func TestLoginProfiles(t *testing.T) {
	site := newLoginSite(t)
	logPath := filepath.Join(t.TempDir(), "server.log")
	env := map[string]string{"PROXY_WARM_POOL": "1", "PROXY_LOG_FILE": logPath}
	s := startServer(t, "", env)
	_, bridgeBin := binaries(t)
	bridge := func(name string, args ...string) *mcpClient {
		t.Helper()
		tr := transport.NewStdioWithOptions(bridgeBin, []string{"MCP_PROXY_URL=" + s.URL, "MCP_PROXY_AUTOSTART=0"}, args)
		return startMCP(t, tr, name, nil)
	}

	// Conversation 1 signs in through the tools and saves the login.
	c1 := bridge("conversation-1")
	site.signIn(c1)
	if got, want := site.status(c1, ""), site.signedIn(1, "none"); got != want {
		t.Fatalf("after signing in: %q, want %q", got, want)
	}
	c1Session := c1.defaultSession()
	saved := c1.callText("save_profile", map[string]any{"name": "github"})
	if !strings.Contains(saved, "github") {
		t.Errorf("save_profile answered %q", saved)
	}
	if code, p := profileOf(t, s, "github"); code != http.StatusOK || p.Version != 1 || !contains(p.Origins, "127.0.0.1") {
		t.Fatalf("GET /profiles/github = %d %+v", code, p)
	}

	// A bridge started with --profile is signed in on its first call.
	c2 := bridge("conversation-2", "--profile", "github")
	c2Session := ""
	t.Run("a bridge started with --profile is signed in at once", func(t *testing.T) {
		if got, want := site.status(c2, ""), site.signedIn(1, "none"); got != want {
			t.Errorf("first call: %q, want %q", got, want)
		}
		id := c2.defaultSession()
		c2Session = id
		if sess := s.getSession(t, id); sess.Profile != "github" || !sess.ProfileWrite || sess.ProfileVersion != 1 {
			t.Errorf("session %s: profile %q version %d write %v", id, sess.Profile, sess.ProfileVersion, sess.ProfileWrite)
		}
	})

	c3 := bridge("conversation-3", "--profile", "github")
	c3Session := ""
	t.Run("two conversations on one profile share nothing live", func(t *testing.T) {
		c2.browser("browser_navigate", map[string]any{"url": site.URL + "/rotate"})
		c2.browser("browser_navigate", map[string]any{"url": site.URL + "/mark?v=two"})
		if got, want := site.status(c2, ""), site.signedIn(2, "two"); got != want {
			t.Errorf("conversation 2 after its rotation: %q, want %q", got, want)
		}
		if got, want := site.status(c3, ""), site.signedIn(1, "none"); got != want {
			t.Errorf("conversation 3 sees %q, want %q", got, want)
		}
		c3Session = c3.defaultSession()
		if got, want := site.status(c1, ""), site.signedIn(1, "none"); got != want {
			t.Errorf("conversation 1 sees %q, want %q", got, want)
		}
	})

	t.Run("a hostile conversation reaches no other's session nor a profile's contents", func(t *testing.T) {
		text, isErr := c3.toolAnswer("save_profile", map[string]any{"name": "stolen", "session_id": c1Session})
		if a, _ := mcpserver.ParseAnswer(text); !isErr || a.ErrorCode != proxy.ESESSIONMISSING {
			t.Errorf("save_profile of another client's session answered %q", text)
		}
		if code, _ := profileOf(t, s, "stolen"); code != http.StatusNotFound {
			t.Errorf("GET /profiles/stolen = %d", code)
		}
		for _, r := range []struct{ method, path string }{{"GET", "/profiles/github/state"}, {"DELETE", "/profiles/github"}, {"PUT", "/profiles/github"}} {
			req, _ := http.NewRequest(r.method, s.URL+r.path, strings.NewReader(`{"cookies":[],"origins":[]}`))
			req.Header.Set(wire.ClientIDHeader, "hostile-client-0123456789abcdef")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusForbidden {
				t.Errorf("%s %s as an MCP client = %d, want 403", r.method, r.path, resp.StatusCode)
			}
		}
		// Another client sees the profile, not the sessions using it.
		req, _ := http.NewRequest("GET", s.URL+"/profiles/github", nil)
		req.Header.Set(wire.ClientIDHeader, "hostile-client-0123456789abcdef")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var seen proxy.Profile
		err = json.NewDecoder(resp.Body).Decode(&seen)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK || len(seen.Sessions) != 0 {
			t.Errorf("GET /profiles/github as another client = %d %+v (%v): it may not see sessions of others", resp.StatusCode, seen, err)
		}
		if _, op := profileOf(t, s, "github"); !contains(op.Sessions, c3Session) {
			t.Errorf("the operator does not see session %s using the profile: %v", c3Session, op.Sessions)
		}
		list := c3.callText("list_profiles", nil)
		for _, v := range site.secrets() {
			if strings.Contains(list, v) {
				t.Errorf("list_profiles shows a secret: %q", list)
			}
		}
		if !strings.Contains(list, "github") {
			t.Errorf("list_profiles = %q", list)
		}
		if _, p := profileOf(t, s, "github"); contains(p.Sessions, c1Session) != false {
			t.Errorf("profile github lists session %s, which did not start from it: %v", c1Session, p.Sessions)
		}
	})

	t.Run("the rotated cookie is written back when its conversation ends", func(t *testing.T) {
		c2.c.Close() // the bridge exits and closes its session
		waitVersion(t, s, "github", 2)
		m := dialMCP(t, s.URL+"/mcp")
		// It does not write back: the next subtest counts versions.
		id := createProfileSession(t, m, "github", false)
		if got, want := site.status(m, id), site.signedIn(2, "two"); got != want {
			t.Errorf("a session from version 2: %q, want %q", got, want)
		}
		if !hasEvent(t, s, c2Session, proxy.EventProfileSaved) {
			t.Errorf("no %s event on session %s", proxy.EventProfileSaved, c2Session)
		}
	})

	t.Run("a conversation that started from an older version does not overwrite the newer", func(t *testing.T) {
		c3.c.Close()
		deadline := time.Now().Add(90 * time.Second)
		for !hasEvent(t, s, c3Session, proxy.EventProfileConflict) {
			if time.Now().After(deadline) {
				t.Fatalf("no %s event on session %s", proxy.EventProfileConflict, c3Session)
			}
			time.Sleep(100 * time.Millisecond)
		}
		if _, p := profileOf(t, s, "github"); p.Version != 2 {
			t.Errorf("profile github at version %d after the conflict, want 2", p.Version)
		}
	})

	t.Run("/mcp?profile= starts its default session from the profile", func(t *testing.T) {
		m := dialMCP(t, s.URL+"/mcp?profile=github")
		if got, want := site.status(m, ""), site.signedIn(2, "two"); got != want {
			t.Errorf("/mcp?profile=github: %q, want %q", got, want)
		}
	})

	t.Run("an imported storage state signs in", func(t *testing.T) {
		state := fmt.Sprintf(`{"cookies":[{"name":"sid","value":%q,"domain":"127.0.0.1","path":"/","expires":-1,"httpOnly":true,"secure":false,"sameSite":"Lax"}],"origins":[]}`, site.mint(7))
		var raw string
		if code := do(t, "PUT", s.URL+"/profiles/imported", state, &raw); code != http.StatusOK && code != http.StatusCreated {
			t.Fatalf("PUT /profiles/imported = %d %s", code, raw)
		}
		m := dialMCP(t, s.URL+"/mcp")
		id := createProfileSession(t, m, "imported", true)
		if got, want := site.status(m, id), "user=alice gen=7 ls=none idb=none mark=none"; got != want {
			t.Errorf("session from the imported state: %q, want %q", got, want)
		}
	})

	t.Run("bad names and states get their codes", func(t *testing.T) {
		big := `{"cookies":[],"origins":[{"origin":"http://a","localStorage":[{"name":"k","value":"` + strings.Repeat("x", 6<<20) + `"}]}]}`
		for _, tc := range []struct {
			name, method, path, body string
			status                   int
			code, field              string
		}{
			{"upper-case name", "PUT", "/profiles/GitHub", `{"cookies":[],"origins":[]}`, 400, proxy.EINVALID, "name"},
			{"name with a dot first", "PUT", "/profiles/.x", `{"cookies":[],"origins":[]}`, 400, proxy.EINVALID, "name"},
			{"not JSON", "PUT", "/profiles/x", `{`, 400, proxy.EINVALID, "state"},
			{"a cookie without a domain", "PUT", "/profiles/x", `{"cookies":[{"name":"a","value":"b","path":"/","expires":-1}],"origins":[]}`, 400, proxy.EINVALID, "cookies[0].domain"},
			{"no origins", "PUT", "/profiles/x", `{"cookies":[]}`, 400, proxy.EINVALID, "origins"},
			{"over the size limit", "PUT", "/profiles/x", big, 413, proxy.ETOOLARGE, ""},
			{"unknown profile", "GET", "/profiles/nope", "", 404, proxy.EPROFILEMISSING, ""},
			{"unknown profile's state", "GET", "/profiles/nope/state", "", 404, proxy.EPROFILEMISSING, ""},
			{"delete unknown", "DELETE", "/profiles/nope", "", 404, proxy.EPROFILEMISSING, ""},
			{"session from an unknown profile", "POST", "/sessions", `{"profile":"nope"}`, 404, proxy.EPROFILEMISSING, ""},
			{"session from a bad name", "POST", "/sessions", `{"profile":"No Such"}`, 400, proxy.EINVALID, "profile"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				var raw string
				var body any
				if tc.body != "" {
					body = tc.body
				}
				code := do(t, tc.method, s.URL+tc.path, body, &raw)
				if code != tc.status {
					t.Fatalf("%s %s = %d %s, want %d", tc.method, tc.path, code, raw, tc.status)
				}
				e := errorOf(t, raw)
				if e.Error != tc.code {
					t.Errorf("code %s, want %s (%s)", e.Error, tc.code, e.Message)
				}
				if tc.field != "" && e.Details["field"] != tc.field {
					t.Errorf("field %v, want %s (%s)", e.Details["field"], tc.field, e.Message)
				}
			})
		}
		if code, _ := profileOf(t, s, "x"); code != http.StatusNotFound {
			t.Errorf("a refused PUT left profile x: %d", code)
		}
	})

	t.Run("a session from a profile comes back from a crash with its IndexedDB", func(t *testing.T) {
		m := dialMCP(t, s.URL+"/mcp")
		id := createProfileSession(t, m, "github", false)
		if got, want := site.status(m, id), site.signedIn(2, "two"); got != want {
			t.Fatalf("before the crash: %q, want %q", got, want)
		}
		// The navigation's background save holds the page and IndexedDB.
		waitSavedState(t, openRO(t, s.DBPath), id, "the app with IndexedDB", func(plain []byte) bool {
			return bytes.Contains(plain, []byte("/app")) && bytes.Contains(plain, []byte(`"indexedDB":[{`))
		})
		pid := s.getSession(t, id).WorkerPID
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		if got, want := site.status(m, id), site.signedIn(2, "two"); got != want {
			t.Errorf("after the worker's crash: %q, want %q", got, want)
		}
		if now := s.getSession(t, id).WorkerPID; now == pid {
			t.Errorf("still worker %d after it was killed", pid)
		}
	})

	t.Run("exports say which profile, never its contents", func(t *testing.T) {
		var play, js string
		code, sess, e := createWith(t, s, json.RawMessage(`{"profile":"github"}`))
		if code != http.StatusCreated {
			t.Fatalf("POST /sessions from a profile = %d %+v", code, e)
		}
		id := sess.ID
		s.call(t, id, "browser_navigate", map[string]string{"url": site.URL + "/app"})
		do(t, "GET", s.URL+"/sessions/"+id+"/export?format=playwright", nil, &play)
		do(t, "GET", s.URL+"/sessions/"+id+"/export?format=json", nil, &js)
		if !strings.Contains(play, "storageState") || !strings.Contains(play, "github") {
			t.Errorf("the Playwright export does not use the profile:\n%s", play)
		}
		if !regexp.MustCompile(`"profile":\s*"github"`).MatchString(js) {
			t.Errorf("the JSON export does not name the profile")
		}
		for _, v := range site.secrets() {
			if strings.Contains(play, v) || strings.Contains(js, v) {
				t.Errorf("an export holds a secret")
			}
		}
	})

	// The server stops: sessions started from the profile write back as
	// they are suspended; the profiles are there after a restart.
	s.stop()
	t.Run("nothing stored, logged or recorded holds a secret", func(t *testing.T) {
		for _, f := range []string{s.DBPath, s.DBPath + "-wal", s.DBPath + "-shm", logPath} {
			data, err := os.ReadFile(f)
			if os.IsNotExist(err) {
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range site.secrets() {
				if bytes.Contains(data, []byte(v)) {
					t.Errorf("%s holds the secret %q", filepath.Base(f), v[:8])
				}
			}
		}
		info, err := os.Stat(s.DBPath + ".key")
		if err != nil {
			t.Fatalf("no key file beside the database: %v", err)
		}
		if mode := info.Mode().Perm(); mode != 0o600 {
			t.Errorf("key file mode %o, want 600", mode)
		}
	})

	t.Run("profiles survive a server restart", func(t *testing.T) {
		s2 := startServer(t, s.DBPath, env)
		var list struct{ Profiles []proxy.Profile }
		do(t, "GET", s2.URL+"/profiles", nil, &list)
		var names []string
		for _, p := range list.Profiles {
			names = append(names, p.Name)
		}
		if !contains(names, "github") || !contains(names, "imported") {
			t.Fatalf("GET /profiles after a restart: %v", names)
		}
		m := dialMCP(t, s2.URL+"/mcp?profile=github")
		if got, want := site.status(m, ""), site.signedIn(2, "two"); got != want {
			t.Errorf("after a restart: %q, want %q", got, want)
		}
	})
}

// createProfileSession creates a session from profile name over MCP,
// writing back to it or not, and returns its id.
func createProfileSession(t *testing.T, m *mcpClient, name string, write bool) string {
	t.Helper()
	var out struct {
		ID      string `json:"session_id"`
		Profile string `json:"profile"`
	}
	text := m.callText("create_new_session", map[string]any{"profile": name, "profile_write": write})
	if err := json.Unmarshal([]byte(text), &out); err != nil || out.ID == "" {
		t.Fatalf("create_new_session(profile: %s) answered %q: %v", name, text, err)
	}
	return out.ID
}

// hasEvent reports whether session id's timeline holds an event of kind,
// as the operator's JSON export shows it.
func hasEvent(t *testing.T, s *server, id, kind string) bool {
	t.Helper()
	var exp struct {
		Events []proxy.SessionEvent `json:"events"`
	}
	if code := do(t, "GET", s.URL+"/sessions/"+id+"/export?format=json", nil, &exp); code != http.StatusOK {
		t.Fatalf("GET /sessions/%s/export = %d", id, code)
	}
	for _, e := range exp.Events {
		if e.Kind == kind {
			return true
		}
	}
	return false
}

func contains(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}
