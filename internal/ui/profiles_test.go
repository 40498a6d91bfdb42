//go:build unix

package ui

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/e2etest"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/export"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/upstream"
)

func TestMain(m *testing.M) { e2etest.Main(m) }

// hostileOrigin is an origin an imported storage state may hold: it runs
// script if the page writes it as markup.
const hostileOrigin = "https://<img src=x onerror=alert(1)>.example"

// fakeAPI serves the JSON endpoints the Profiles page reads, in the shapes
// the HTTP API documents, and records what the page asked of it. Stored
// states are checked with the contract's own proxy.CheckStorageState.
type fakeAPI struct {
	mu       sync.Mutex
	now      time.Time
	profiles map[string]*proxy.Profile
	states   map[string]string
	sessions []*proxy.Session
	events   map[string][]proxy.SessionEvent
	deleted  []string
	imported map[string]string // name → the body PUT
	reads    []string          // every request for a profile's contents
	unknown  []string          // requests for anything else
}

func newFakeAPI(secret string) *fakeAPI {
	now := time.Now().UTC().Truncate(time.Second)
	future, past := now.Add(30*24*time.Hour), now.Add(-48*time.Hour)
	f := &fakeAPI{
		now:      now,
		profiles: map[string]*proxy.Profile{},
		states:   map[string]string{},
		events:   map[string][]proxy.SessionEvent{},
		imported: map[string]string{},
	}
	add := func(p *proxy.Profile) {
		p.CreatedAt, p.UpdatedAt, p.Bytes = now.Add(-time.Hour), now, 120
		f.profiles[p.Name] = p
		f.states[p.Name] = `{"cookies":[{"name":"sid","value":"` + secret + `","domain":"github.com","path":"/","expires":-1,"httpOnly":true,"secure":true,"sameSite":"Lax"}],"origins":[]}`
	}
	add(&proxy.Profile{Name: "github", Origins: []string{"github.com", "https://github.com"}, Version: 3, CookiesExpireAt: &future, Sessions: []string{"s-prof-1", "s-prof-2"}})
	add(&proxy.Profile{Name: "old.login", Origins: []string{"intranet.example"}, Version: 1, CookiesExpireAt: &past, Sessions: []string{}})
	add(&proxy.Profile{Name: "hostile", Origins: []string{hostileOrigin}, Version: 1, Sessions: []string{}})
	// The server refuses this one's deletion, as it does for a client's
	// token.
	add(&proxy.Profile{Name: "locked", Origins: []string{"example.com"}, Version: 2, Sessions: []string{}})
	f.sessions = []*proxy.Session{
		{ID: "s-prof-1", CreatedAt: now, LastActivity: now, State: proxy.SessionActive, Profile: "github", ProfileVersion: 3, ProfileWrite: true},
		{ID: "s-prof-2", CreatedAt: now, LastActivity: now, State: proxy.SessionSuspended, Profile: "github", ProfileVersion: 2},
		{ID: "s-plain", CreatedAt: now, LastActivity: now, State: proxy.SessionActive},
	}
	f.events["s-prof-2"] = []proxy.SessionEvent{{SessionID: "s-prof-2", At: now, Kind: proxy.EventProfileConflict, Detail: "profile github changed since the session started from it (version 3): kept the newer"}}
	return f
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

func writeErr(w http.ResponseWriter, code int, err error) {
	e := proxy.AsError(err)
	writeJSON(w, code, map[string]any{"error": e.Code, "message": e.Message, "details": e.Details, "retryable": e.Retryable})
}

func (f *fakeAPI) routes() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/ui/", Handler("/ui/"))
	mux.HandleFunc("GET /sessions", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		writeJSON(w, http.StatusOK, map[string]any{"sessions": f.sessions})
	})
	mux.HandleFunc("GET /sessions/{id}/export", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		for _, s := range f.sessions {
			if s.ID == r.PathValue("id") {
				out, err := export.JSON(s, nil, f.events[s.ID], false)
				if err != nil {
					writeErr(w, http.StatusInternalServerError, err)
					return
				}
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write(out)
				return
			}
		}
		writeErr(w, http.StatusNotFound, proxy.Errorf(proxy.ESESSIONMISSING, "no session"))
	})
	mux.HandleFunc("GET /profiles", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		list := []*proxy.Profile{}
		for _, p := range f.profiles {
			list = append(list, p)
		}
		writeJSON(w, http.StatusOK, map[string]any{"profiles": list})
	})
	mux.HandleFunc("/profiles/{name}/state", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.reads = append(f.reads, r.Method+" "+r.URL.Path)
		_, _ = io.WriteString(w, f.states[r.PathValue("name")])
	})
	mux.HandleFunc("DELETE /profiles/{name}", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		name := r.PathValue("name")
		switch {
		case name == "locked":
			writeErr(w, http.StatusForbidden, proxy.Errorf(proxy.EFORBIDDEN, "deleting a profile is the operator's"))
		case f.profiles[name] == nil:
			writeErr(w, http.StatusNotFound, proxy.ProfileNotFound(name))
		default:
			delete(f.profiles, name)
			f.deleted = append(f.deleted, name)
			w.WriteHeader(http.StatusNoContent)
		}
	})
	mux.HandleFunc("PUT /profiles/{name}", func(w http.ResponseWriter, r *http.Request) {
		name := r.PathValue("name")
		body, err := io.ReadAll(r.Body)
		if err != nil {
			writeErr(w, http.StatusBadRequest, err)
			return
		}
		if err := proxy.ValidProfileName("name", name); err != nil {
			writeErr(w, http.StatusBadRequest, err)
			return
		}
		meta, err := proxy.CheckStorageState(body)
		if err != nil {
			writeErr(w, http.StatusBadRequest, err)
			return
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		p := &proxy.Profile{Name: name, Origins: meta.Origins, CookiesExpireAt: meta.CookiesExpireAt, Version: 1, CreatedAt: f.now, Sessions: []string{}}
		if old := f.profiles[name]; old != nil {
			p.Version, p.CreatedAt = old.Version+1, old.CreatedAt
		}
		p.UpdatedAt, p.Bytes = f.now, len(body)
		f.profiles[name], f.states[name], f.imported[name] = p, string(body), string(body)
		writeJSON(w, http.StatusOK, p)
	})
	mux.HandleFunc("GET /test/deleted", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		writeJSON(w, http.StatusOK, append([]string{}, f.deleted...))
	})
	notServed(mux, &f.mu, &f.unknown)
	return mux
}

// notServed answers 404 to what mux does not serve, and records it in
// unknown (under mu) but for the browser's own favicon request.
func notServed(mux *http.ServeMux, mu *sync.Mutex, unknown *[]string) {
	mux.HandleFunc("GET /favicon.ico", http.NotFound)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		*unknown = append(*unknown, r.Method+" "+r.URL.Path)
		mu.Unlock()
		http.NotFound(w, r)
	})
}

func randomSecret(prefix string) string { return prefix + "-" + rand.Text() }

// TestProfilesPageInBrowser drives the Profiles page, a session's profile
// and the sessions list in headless Chromium (the project's playwright-core,
// testdata/profiles.js) against a fake of the JSON endpoints: the table and
// its expiry marks, a hostile origin shown as text, deletion only after a
// second click, a refused deletion explained, an import (a bad name, a
// malformed state naming its field, a good one), and no profile contents
// anywhere in the page or asked for.
func TestProfilesPageInBrowser(t *testing.T) {
	e2etest.RequireBrowser(t)
	stored := randomSecret("PROFILESECRET")
	imported := randomSecret("IMPORTSECRET")
	f := newFakeAPI(stored)
	srv := httptest.NewServer(f.routes())
	t.Cleanup(srv.Close)

	importFile := `{"cookies":[{"name":"token","value":"` + imported + `","domain":".imported.example","path":"/","expires":` +
		strconv.FormatInt(time.Now().Add(7*24*time.Hour).Unix(), 10) + `,"httpOnly":true,"secure":true,"sameSite":"Strict"}],` +
		`"origins":[{"origin":"https://imported.example","localStorage":[{"name":"k","value":"` + imported + `"}]}]}`
	badFile := `{"cookies":[{"name":"a","value":"b","path":"/","expires":-1}],"origins":[]}`
	runBrowserCheck(t, "profiles.js", "PROFILES_CHECK", "inspector-profiles.png", map[string]any{
		"base": srv.URL, "hostileOrigin": hostileOrigin, "secrets": []string{stored, imported},
		"importFile": importFile, "badFile": badFile,
	})

	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.reads) != 0 {
		t.Errorf("the page asked for profile contents: %v", f.reads)
	}
	if len(f.unknown) != 0 {
		t.Errorf("the page asked for what the API does not serve: %v", f.unknown)
	}
	if diff := cmp.Diff([]string{"github"}, f.deleted); diff != "" {
		t.Errorf("deleted profiles (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{"imported": importFile}, f.imported); diff != "" {
		t.Errorf("imported states, as PUT (-want +got):\n%s", diff)
	}
}

// runBrowserCheck runs testdata/script under node with conf as JSON in
// env: a script that drives headless Chromium through the project's
// playwright-core, exits non-zero with its reason when an expectation
// fails, and says {"ok":true} on stdout when all held. conf gets the
// browser's and playwright-core's paths, and "screenshot", a file named
// shot in $PWPROXY_UI_SCREENSHOTS when that is set, for the script to keep
// a picture of the page in.
func runBrowserCheck(t *testing.T, script, env, shot string, conf map[string]any) {
	t.Helper()
	chromium, err := upstream.FindBrowser()
	if err != nil {
		t.Fatal(err)
	}
	conf["chromium"] = chromium
	conf["playwright"] = filepath.Join(e2etest.ProjectRoot(t), "node_modules", "playwright-core")
	conf["screenshot"] = ""
	if dir := os.Getenv("PWPROXY_UI_SCREENSHOTS"); dir != "" {
		conf["screenshot"] = filepath.Join(dir, shot)
	}
	js, err := json.Marshal(conf)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", filepath.Join("testdata", script))
	cmd.Env = append(os.Environ(), env+"="+string(js), "TMPDIR="+t.TempDir())
	// Its own group, so that a hang takes Chromium down with node.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		var exit *exec.ExitError
		if !errors.As(err, &exit) {
			t.Fatal(err)
		}
		t.Fatalf("%s failed: %v\n%s%s", script, err, stderr.String(), stdout.String())
	}
	if !strings.Contains(stdout.String(), `"ok":true`) {
		t.Fatalf("%s said: %s", script, stdout.String())
	}
}
