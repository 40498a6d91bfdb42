package mcpserver

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/mcp"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/catalog"
)

// fakeProfiles answers the profile tools from memory. Its states hold
// recognisable secrets: no answer may carry them.
type fakeProfiles struct {
	mu       sync.Mutex
	profiles []*proxy.Profile
	states   map[string]json.RawMessage
	// saves are the saves asked for: name, session and the client acted for.
	saves   []profileSave
	saveErr error
}

type profileSave struct {
	Name, Session string
	Client        proxy.ClientID
}

const profileSecret = "SESSIONSECRET-5d1e0b"

var expiry = time.Date(2027, 3, 1, 12, 0, 0, 0, time.UTC)

func (f *fakeProfiles) SaveProfile(ctx context.Context, name, sessionID string) (*proxy.Profile, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.saveErr != nil {
		return nil, f.saveErr
	}
	client, _ := proxy.ClientFrom(ctx)
	f.saves = append(f.saves, profileSave{name, sessionID, client})
	if f.states == nil {
		f.states = map[string]json.RawMessage{}
	}
	f.states[name] = json.RawMessage(`{"cookies":[{"name":"sid","value":"` + profileSecret + `"}],"origins":[]}`)
	return &proxy.Profile{Name: name, Version: int64(len(f.saves)), Origins: []string{"github.com", "https://github.com"}, CookiesExpireAt: &expiry, Bytes: 120}, nil
}

func (f *fakeProfiles) ListProfiles(context.Context) ([]*proxy.Profile, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.profiles), nil
}

func (f *fakeProfiles) GetProfile(_ context.Context, name string) (*proxy.Profile, error) {
	return nil, proxy.ProfileNotFound(name)
}

func (f *fakeProfiles) PutProfile(context.Context, string, json.RawMessage) (*proxy.Profile, error) {
	return nil, proxy.Errorf(proxy.EFORBIDDEN, "the operator's")
}

func (f *fakeProfiles) ProfileState(context.Context, string) (json.RawMessage, error) {
	return nil, proxy.Errorf(proxy.EFORBIDDEN, "the operator's")
}

func (f *fakeProfiles) DeleteProfile(context.Context, string) error {
	return proxy.Errorf(proxy.EFORBIDDEN, "the operator's")
}

func listedNames(t *testing.T, s *Server) []string {
	t.Helper()
	res, err := connect(t, s).ListTools(context.Background(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	return names
}

// PROXY_PROFILES decides what a client is offered: both tools with save,
// list_profiles alone with use, neither with off; calling one kept from it
// says why.
func TestProfileToolsPerMode(t *testing.T) {
	for _, tc := range []struct {
		mode string
		want []string
	}{
		{proxy.ProfilesSave, []string{catalog.ToolListProfiles, catalog.ToolSaveProfile}},
		{proxy.ProfilesUse, []string{catalog.ToolListProfiles}},
		{proxy.ProfilesOff, nil},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			b := &fakeBackend{profilesMode: tc.mode}
			s, err := New(context.Background(), b, b, WithProfiles(&fakeProfiles{}))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, n := range listedNames(t, s) {
				if n == catalog.ToolListProfiles || n == catalog.ToolSaveProfile {
					got = append(got, n)
				}
			}
			slices.Sort(got)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("profile tools (-want +got):\n%s", diff)
			}
			if slices.Contains(tc.want, catalog.ToolSaveProfile) {
				return
			}
			req := mcp.CallToolRequest{}
			req.Params.Name = catalog.ToolSaveProfile
			req.Params.Arguments = map[string]any{"name": "github"}
			_, err = connect(t, s).CallTool(context.Background(), req)
			if err == nil || !strings.Contains(err.Error(), "PROXY_PROFILES is "+tc.mode) {
				t.Errorf("save_profile = %v, want an unknown tool naming PROXY_PROFILES", err)
			}
		})
	}
}

// save_profile saves the caller's default session (or the one named) and
// answers what the profile is, never what it holds; list_profiles answers
// a line per profile.
func TestSaveAndListProfiles(t *testing.T) {
	b := &fakeBackend{}
	profiles := &fakeProfiles{profiles: []*proxy.Profile{
		{Name: "github", Version: 3, Origins: []string{"github.com"}, UpdatedAt: time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC), CookiesExpireAt: &expiry, Sessions: []string{"a", "b"}},
		{Name: "intranet", Version: 1, UpdatedAt: time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC), Sessions: []string{"c"}},
	}}
	s, err := New(context.Background(), b, b, WithProfiles(profiles), actForClients())
	if err != nil {
		t.Fatal(err)
	}
	c := connect(t, s)

	text, isErr := call(t, c, catalog.ToolSaveProfile, map[string]any{"name": "github"})
	if p, _ := ParseAnswer(text); !isErr || p.ErrorCode != proxy.EINVALID || len(profiles.saves) != 0 {
		t.Errorf("save_profile before any session = %q (error %v), %d saves; want INVALID_PARAMETERS and none", text, isErr, len(profiles.saves))
	}
	text, isErr = call(t, c, catalog.ToolSaveProfile, map[string]any{"name": "Not A Name"})
	if p, _ := ParseAnswer(text); !isErr || p.ErrorCode != proxy.EINVALID || !strings.Contains(p.ErrorMessage, "name") {
		t.Errorf("save_profile with a bad name = %q, want INVALID_PARAMETERS naming name", text)
	}
	if text, isErr := call(t, c, "browser_navigate", map[string]any{"url": "http://127.0.0.1/"}); isErr {
		t.Fatalf("navigate: %s", text)
	}
	def := b.created[0]
	text, isErr = call(t, c, catalog.ToolSaveProfile, map[string]any{"name": "github"})
	if isErr {
		t.Fatalf("save_profile: %s", text)
	}
	want := "profile: github version 1\nsession_id: " + def + "\norigins: github.com, https://github.com\ncookies_expire_at: 2027-03-01T12:00:00Z"
	if diff := cmp.Diff(want, text); diff != "" {
		t.Errorf("save_profile answer (-want +got):\n%s", diff)
	}
	if strings.Contains(text, profileSecret) {
		t.Errorf("save_profile answers the state: %s", text)
	}
	const other = "99999999-9999-4999-8999-999999999999"
	if text, isErr := call(t, c, catalog.ToolSaveProfile, map[string]any{"name": "work", "session_id": other}); isErr {
		t.Fatalf("save_profile with a session_id: %s", text)
	}
	profiles.saveErr = proxy.Errorf(proxy.EFORBIDDEN, "PROXY_PROFILES=use: MCP clients may not save profiles")
	if text, isErr := call(t, c, catalog.ToolSaveProfile, map[string]any{"name": "github"}); !isErr || !strings.Contains(text, proxy.EFORBIDDEN) {
		t.Errorf("a refused save = %q, want FORBIDDEN", text)
	}
	wantSaves := []profileSave{{"github", def, b.owners[def]}, {"work", other, b.owners[def]}}
	if diff := cmp.Diff(wantSaves, profiles.saves); diff != "" {
		t.Errorf("saves (-want +got):\n%s", diff)
	}

	text, isErr = call(t, c, catalog.ToolListProfiles, nil)
	wantList := "github: version 3, origins github.com, updated 2026-11-27T10:00:00Z, cookies expire 2027-03-01T12:00:00Z, 2 live sessions\n" +
		"intranet: version 1, updated 2026-11-26T09:00:00Z, 1 live session"
	if diff := cmp.Diff(wantList, text); isErr || diff != "" {
		t.Errorf("list_profiles (error %v) (-want +got):\n%s", isErr, diff)
	}
	profiles.profiles = nil
	if text, _ := call(t, c, catalog.ToolListProfiles, nil); !strings.Contains(text, "no profiles") {
		t.Errorf("list_profiles of none = %q, want it to say there are none", text)
	}
}

// WithDefaultProfile (mcp-bridge --profile): the default session starts
// from the profile; an unknown one is PROFILE_NOT_FOUND at that first call
// and no session is left behind. create_new_session passes its own.
func TestDefaultProfile(t *testing.T) {
	nav := map[string]any{"url": "http://127.0.0.1/"}
	t.Run("known", func(t *testing.T) {
		b := &fakeBackend{profiles: map[string]bool{"github": true, "work": true}}
		s, err := New(context.Background(), b, b, WithDefaultProfile("github"))
		if err != nil {
			t.Fatal(err)
		}
		c := connect(t, s)
		// The first answer says once which profile the session is signed
		// in as; the record's facts read as before.
		for i, want := range []bool{true, false} {
			text, isErr := call(t, c, "browser_navigate", nav)
			p, err := ParseAnswer(text)
			if said := slices.Contains(strings.Split(text, "\n"), "profile: github"); isErr || err != nil || p.RefID != "ref-1" || said != want {
				t.Errorf("navigate %d = %q (%v); want ref-1, and the line profile: github %v", i, text, err, want)
			}
		}
		text, isErr := call(t, c, catalog.ToolCreateSession, map[string]any{"profile": "work", "profile_write": false})
		if isErr || !strings.Contains(text, `"profile":"work"`) {
			t.Errorf("create_new_session = %s, want it to name its profile", text)
		}
		text, isErr = call(t, c, catalog.ToolCreateSession, map[string]any{"profile": "Work!"})
		if p, _ := ParseAnswer(text); !isErr || p.ErrorCode != proxy.EINVALID || !strings.Contains(p.ErrorMessage, "profile") {
			t.Errorf("create_new_session with a bad profile name = %q, want INVALID_PARAMETERS naming profile", text)
		}
		no := false
		want := []proxy.BrowserOptions{{Profile: "github"}, {Profile: "work", ProfileWrite: &no}}
		if diff := cmp.Diff(want, b.createOpts); diff != "" {
			t.Errorf("create options (-want +got):\n%s", diff)
		}
	})
	t.Run("unknown", func(t *testing.T) {
		b := &fakeBackend{}
		s, err := New(context.Background(), b, b, WithDefaultProfile("gone"))
		if err != nil {
			t.Fatal(err)
		}
		text, isErr := call(t, connect(t, s), "browser_navigate", nav)
		if p, _ := ParseAnswer(text); !isErr || p.ErrorCode != proxy.EPROFILEMISSING || len(b.created) != 0 {
			t.Errorf("navigate = %q, %d sessions; want PROFILE_NOT_FOUND and none", text, len(b.created))
		}
	})
}

// /mcp?profile=NAME and /ws?profile=NAME: the profile of the MCP
// session's first request is its default session's; another client's is
// its own; a name that could not be one refuses the handshake.
func TestProfileQueryParameter(t *testing.T) {
	nav := map[string]any{"url": "http://127.0.0.1/"}
	b := &fakeBackend{profiles: map[string]bool{"github": true, "work": true}}
	h := NewHTTPHandler(b, b, HTTPConfig{Logger: quiet(), Options: []Option{WithDefaultProfile("work")}})
	url := serveHTTP(t, h)
	for _, q := range []string{"?profile=github", ""} {
		c := dialHTTP(t, url+q)
		if text, isErr, err := callHTTP(c, "browser_navigate", nav); err != nil || isErr {
			t.Fatalf("navigate over %s: %s %v", q, text, err)
		}
	}
	wsURL := serveWS(t, h)
	ws := dialWS(t, wsURL+"?profile=github", WSSubprotocol)
	ws.initialize(t)
	if text, isErr := ws.callTool(t, "browser_navigate", nav); isErr {
		t.Fatalf("navigate over /ws: %s", text)
	}
	want := []proxy.BrowserOptions{{Profile: "github"}, {Profile: "work"}, {Profile: "github"}}
	b.mu.Lock()
	got := slices.Clone(b.createOpts)
	b.mu.Unlock()
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("create options (-want +got):\n%s", diff)
	}
	for _, q := range []string{"?profile=GitHub", "?profile=a&profile=b", "?profile="} {
		init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
		resp := sendHTTP(t, http.MethodPost, url+q, "", init)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("initialize at %s = %d, want 400", q, resp.StatusCode)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_, wsResp, err := websocket.Dial(ctx, wsURL+q, &websocket.DialOptions{Subprotocols: []string{WSSubprotocol}})
		cancel()
		if err == nil || wsResp == nil || wsResp.StatusCode != http.StatusBadRequest {
			t.Errorf("WebSocket handshake at %s = %v, %+v; want 400", q, err, wsResp)
		}
	}
}
