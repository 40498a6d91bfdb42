package api

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/wire"
)

// fakeProfiles keeps profiles in memory and refuses a client identity
// what the session manager refuses it: the operator's operations.
type fakeProfiles struct {
	mu     sync.Mutex
	states map[string]json.RawMessage
	meta   map[string]*proxy.Profile
	// saved are the (name, session) of each SaveProfile.
	saved [][2]string
}

func newFakeProfiles() *fakeProfiles {
	return &fakeProfiles{states: map[string]json.RawMessage{}, meta: map[string]*proxy.Profile{}}
}

var profileTime = time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)

func (f *fakeProfiles) put(name string, state json.RawMessage) (*proxy.Profile, error) {
	st, err := proxy.CheckStorageState(state)
	if err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	p := f.meta[name]
	if p == nil {
		p = &proxy.Profile{Name: name, CreatedAt: profileTime}
		f.meta[name] = p
	}
	p.Version++
	p.Origins, p.CookiesExpireAt, p.UpdatedAt, p.Bytes = st.Origins, st.CookiesExpireAt, profileTime, len(state)
	f.states[name] = state
	out := *p
	return &out, nil
}

func operatorOnly(ctx context.Context, what string) error {
	if _, client := proxy.ClientFrom(ctx); client {
		return proxy.Errorf(proxy.EFORBIDDEN, "%s is the operator's", what)
	}
	return nil
}

func (f *fakeProfiles) SaveProfile(_ context.Context, name, sessionID string) (*proxy.Profile, error) {
	if sessionID != knownID {
		return nil, proxy.Errorf(proxy.ESESSIONMISSING, "no session %s", sessionID)
	}
	f.mu.Lock()
	f.saved = append(f.saved, [2]string{name, sessionID})
	f.mu.Unlock()
	return f.put(name, json.RawMessage(`{"cookies":[],"origins":[{"origin":"https://example.com","localStorage":[]}]}`))
}

func (f *fakeProfiles) ListProfiles(context.Context) ([]*proxy.Profile, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := []*proxy.Profile{}
	for _, p := range f.meta {
		c := *p
		out = append(out, &c)
	}
	return out, nil
}

func (f *fakeProfiles) GetProfile(_ context.Context, name string) (*proxy.Profile, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	p, ok := f.meta[name]
	if !ok {
		return nil, proxy.ProfileNotFound(name)
	}
	c := *p
	return &c, nil
}

func (f *fakeProfiles) PutProfile(ctx context.Context, name string, state json.RawMessage) (*proxy.Profile, error) {
	if err := operatorOnly(ctx, "storing a profile"); err != nil {
		return nil, err
	}
	return f.put(name, state)
}

func (f *fakeProfiles) ProfileState(ctx context.Context, name string) (json.RawMessage, error) {
	if err := operatorOnly(ctx, "reading a profile's state"); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	s, ok := f.states[name]
	if !ok {
		return nil, proxy.ProfileNotFound(name)
	}
	return s, nil
}

func (f *fakeProfiles) DeleteProfile(ctx context.Context, name string) error {
	if err := operatorOnly(ctx, "deleting a profile"); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.meta[name]; !ok {
		return proxy.ProfileNotFound(name)
	}
	delete(f.meta, name)
	delete(f.states, name)
	return nil
}

// secretState is a storage state whose values are recognisable, so that
// a test can tell they went nowhere they must not.
const secretState = `{"cookies":[{"name":"sid","value":"SESSIONSECRET-7f3a9c","domain":".example.com","path":"/","expires":1893456000,"httpOnly":true,"secure":true,"sameSite":"Lax"}],` +
	`"origins":[{"origin":"https://app.example.com","localStorage":[{"name":"token","value":"SESSIONSECRET-7f3a9c-ls"}]}]}`

// profileReply is one answer of the profile routes.
type profileReply struct {
	Status int
	Code   string
	Field  any
}

func profileRequest(t *testing.T, h http.Handler, method, target string, body io.Reader, hdr map[string]string) (profileReply, *httptest.ResponseRecorder) {
	t.Helper()
	req := newRequest(method, target, body)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	got := profileReply{Status: rec.Code}
	if rec.Code >= 400 {
		var eb wire.ErrorBody
		if err := json.Unmarshal(rec.Body.Bytes(), &eb); err != nil {
			t.Fatalf("%s %s: error body %q: %v", method, target, rec.Body, err)
		}
		got.Code, got.Field = eb.Error, eb.Details["field"]
	}
	return got, rec
}

// TestProfileRoutes: every profile route for the operator, in the order a
// user would meet them: names are checked first, a malformed state names
// its field, a state over PROXY_PROFILE_MAX_BYTES is 413 even when it is
// within, or when the server's body limit is below, the profile limit.
func TestProfileRoutes(t *testing.T) {
	const limit = 1024
	h := New(&fakeSessions{}, fakeContent{}, WithProfiles(newFakeProfiles()), WithMaxProfileBytes(limit),
		// Smaller than a profile may be: the route has its own limit.
		WithMaxBodyBytes(256))
	big := `{"cookies":[],"origins":[{"origin":"https://example.com","localStorage":[{"name":"k","value":"` + strings.Repeat("x", limit) + `"}]}]}`
	within := `{"cookies":[],"origins":[{"origin":"https://example.com","localStorage":[{"name":"k","value":"` + strings.Repeat("x", 600) + `"}]}]}`
	// unsized has no Content-Length: the limit applies as it is read.
	unsized := func(s string) io.Reader { return io.MultiReader(strings.NewReader(s)) }
	tests := []struct {
		name, method, target string
		body                 io.Reader
		want                 profileReply
	}{
		{"unknown profile", "GET", "/profiles/github", nil, profileReply{404, proxy.EPROFILEMISSING, nil}},
		{"bad name", "GET", "/profiles/GitHub", nil, profileReply{400, proxy.EINVALID, "name"}},
		{"bad name before the body", "PUT", "/profiles/-x", strings.NewReader(big), profileReply{400, proxy.EINVALID, "name"}},
		{"new profile", "PUT", "/profiles/github", strings.NewReader(secretState), profileReply{201, "", nil}},
		{"next version", "PUT", "/profiles/github", strings.NewReader(secretState), profileReply{200, "", nil}},
		{"over the global body limit, within the profile's", "PUT", "/profiles/big", strings.NewReader(within), profileReply{201, "", nil}},
		{"malformed state", "PUT", "/profiles/bad", strings.NewReader(`{"cookies":[{"name":"a","value":"b","path":"/","expires":-1}],"origins":[]}`), profileReply{400, proxy.EINVALID, "cookies[0].domain"}},
		{"not JSON", "PUT", "/profiles/bad", strings.NewReader(`cookies`), profileReply{400, proxy.EINVALID, "state"}},
		{"too large by its length", "PUT", "/profiles/huge", strings.NewReader(big), profileReply{413, proxy.ETOOLARGE, nil}},
		{"too large as it is read", "PUT", "/profiles/huge", unsized(big), profileReply{413, proxy.ETOOLARGE, nil}},
		{"metadata", "GET", "/profiles/github", nil, profileReply{200, "", nil}},
		{"list", "GET", "/profiles", nil, profileReply{200, "", nil}},
		{"save a session", "POST", "/sessions/" + knownID + "/profile", strings.NewReader(`{"name":"saved"}`), profileReply{201, "", nil}},
		{"save a session again", "POST", "/sessions/" + knownID + "/profile", strings.NewReader(`{"name":"saved"}`), profileReply{200, "", nil}},
		{"save an unknown session", "POST", "/sessions/nope/profile", strings.NewReader(`{"name":"saved"}`), profileReply{404, proxy.ESESSIONMISSING, nil}},
		{"save under a bad name", "POST", "/sessions/" + knownID + "/profile", strings.NewReader(`{"name":"Saved!"}`), profileReply{400, proxy.EINVALID, "name"}},
		{"save without a name", "POST", "/sessions/" + knownID + "/profile", strings.NewReader(`{}`), profileReply{400, proxy.EINVALID, "name"}},
		{"delete", "DELETE", "/profiles/github", nil, profileReply{204, "", nil}},
		{"delete again", "DELETE", "/profiles/github", nil, profileReply{404, proxy.EPROFILEMISSING, nil}},
		{"state of a deleted profile", "GET", "/profiles/github/state", nil, profileReply{404, proxy.EPROFILEMISSING, nil}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, rec := profileRequest(t, h, tt.method, tt.target, tt.body, nil)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("%s %s (-want +got):\n%s\n%s", tt.method, tt.target, diff, rec.Body)
			}
			if got.Status >= 300 {
				return
			}
			if tt.method == "DELETE" {
				if rec.Body.Len() != 0 {
					t.Errorf("DELETE answered a body: %s", rec.Body)
				}
				return
			}
			if strings.Contains(rec.Body.String(), "SESSIONSECRET") {
				t.Errorf("%s %s answers the state's values: %s", tt.method, tt.target, rec.Body)
			}
		})
	}
	t.Run("list answers metadata", func(t *testing.T) {
		_, rec := profileRequest(t, h, "GET", "/profiles", nil, nil)
		var body wire.ProfilesBody
		if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, p := range body.Profiles {
			names = append(names, p.Name)
		}
		if diff := cmp.Diff([]string{"big", "saved"}, slices.Sorted(slices.Values(names))); diff != "" {
			t.Errorf("profiles (-want +got):\n%s", diff)
		}
	})
}

// The state is answered as a file to keep: exactly the bytes stored,
// never cached, as an attachment.
func TestProfileStateHeaders(t *testing.T) {
	h := New(&fakeSessions{}, fakeContent{}, WithProfiles(newFakeProfiles()))
	if got, rec := profileRequest(t, h, "PUT", "/profiles/github", strings.NewReader(secretState), nil); got.Status != 201 {
		t.Fatalf("PUT = %+v %s", got, rec.Body)
	}
	got, rec := profileRequest(t, h, "GET", "/profiles/github/state", nil, nil)
	if got.Status != 200 {
		t.Fatalf("GET state = %+v %s", got, rec.Body)
	}
	want := map[string]string{
		"Content-Type":        "application/json",
		"Cache-Control":       "no-store",
		"Content-Disposition": `attachment; filename="github.json"`,
	}
	for k, v := range want {
		if g := rec.Header().Get(k); g != v {
			t.Errorf("%s = %q, want %q", k, g, v)
		}
	}
	if diff := cmp.Diff(secretState, rec.Body.String()); diff != "" {
		t.Errorf("state (-want +got):\n%s", diff)
	}
}

// A client token lists profiles, reads their metadata and saves its
// sessions; storing, reading a state and deleting are the operator's (403
// at the door). The operator's token sent with mcp-bridge's identity acts
// for that client, and the service refuses it the operator's operations.
func TestProfileRoutesRoles(t *testing.T) {
	profiles := newFakeProfiles()
	if _, err := profiles.put("github", json.RawMessage(secretState)); err != nil {
		t.Fatal(err)
	}
	srv := New(&fakeSessions{}, fakeContent{}, WithLogger(slog.New(slog.DiscardHandler)),
		WithAuthToken(operatorToken), WithClientTokens(ClientToken{Name: "alice", Token: aliceToken}), WithProfiles(profiles))
	const bridge = "bridge-identity-aaaaaaaaaaaaaaaa"
	operator := map[string]string{"Authorization": "Bearer " + operatorToken}
	client := map[string]string{"Authorization": "Bearer " + aliceToken}
	operatorAsBridge := map[string]string{"Authorization": "Bearer " + operatorToken, wire.ClientIDHeader: bridge}
	clientBridge := map[string]string{"Authorization": "Bearer " + aliceToken, wire.ClientIDHeader: bridge}
	forbidden := profileReply{403, proxy.EFORBIDDEN, nil}
	tests := []struct {
		name           string
		method, target string
		body           string
		hdr            map[string]string
		want           profileReply
	}{
		{"client lists", "GET", "/profiles", "", client, profileReply{200, "", nil}},
		{"client reads metadata", "GET", "/profiles/github", "", clientBridge, profileReply{200, "", nil}},
		{"client saves", "POST", "/sessions/" + knownID + "/profile", `{"name":"mine"}`, clientBridge, profileReply{201, "", nil}},
		{"client stores", "PUT", "/profiles/github", secretState, client, forbidden},
		{"client reads the state", "GET", "/profiles/github/state", "", clientBridge, forbidden},
		{"client deletes", "DELETE", "/profiles/github", "", client, forbidden},
		{"bridge identity stores", "PUT", "/profiles/github", secretState, operatorAsBridge, forbidden},
		{"bridge identity reads the state", "GET", "/profiles/github/state", "", operatorAsBridge, forbidden},
		{"bridge identity deletes", "DELETE", "/profiles/github", "", operatorAsBridge, forbidden},
		{"operator reads the state", "GET", "/profiles/github/state", "", operator, profileReply{200, "", nil}},
		{"operator deletes", "DELETE", "/profiles/github", "", operator, profileReply{204, "", nil}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, rec := profileRequest(t, srv, tt.method, tt.target, strings.NewReader(tt.body), tt.hdr)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("%s %s (-want +got):\n%s\n%s", tt.method, tt.target, diff, rec.Body)
			}
		})
	}
}

// No log line, at debug level, carries a value of a state: neither one
// stored nor one refused.
func TestProfileStateNeverLogged(t *testing.T) {
	var logs bytes.Buffer
	h := New(&fakeSessions{}, fakeContent{}, WithProfiles(newFakeProfiles()), WithMaxProfileBytes(2048),
		WithLogger(slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))))
	malformed := strings.Replace(secretState, `"path":"/",`, "", 1)
	huge := strings.Replace(secretState, "SESSIONSECRET-7f3a9c-ls", "SESSIONSECRET-"+strings.Repeat("y", 4096), 1)
	for _, step := range []struct{ method, target, body string }{
		{"PUT", "/profiles/github", secretState},
		{"PUT", "/profiles/github", malformed},
		{"PUT", "/profiles/github", huge},
		{"GET", "/profiles/github/state", ""},
		{"GET", "/profiles", ""},
	} {
		_, rec := profileRequest(t, h, step.method, step.target, strings.NewReader(step.body), nil)
		if rec.Code >= 400 && strings.Contains(rec.Body.String(), "SESSIONSECRET") {
			t.Errorf("%s %s refused with the state's values: %s", step.method, step.target, rec.Body)
		}
	}
	if !strings.Contains(logs.String(), "http request") {
		t.Fatalf("nothing logged at debug level:\n%s", &logs)
	}
	if strings.Contains(logs.String(), "SESSIONSECRET") {
		t.Errorf("the log has a value of a state:\n%s", &logs)
	}
}
