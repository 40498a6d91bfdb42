package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/store"
)

// profileStore is the session manager's view of the store, signature for
// signature: *store.DB must keep satisfying it.
type profileStore interface {
	PutProfile(ctx context.Context, name string, state json.RawMessage, meta proxy.StorageState, at time.Time, ifVersion int64) (*proxy.Profile, error)
	GetProfile(ctx context.Context, name string) (*proxy.Profile, error)
	ListProfiles(ctx context.Context) ([]*proxy.Profile, error)
	ProfileState(ctx context.Context, name string) (json.RawMessage, int64, error)
	DeleteProfile(ctx context.Context, name string) error
	SetSessionProfileVersion(ctx context.Context, sessionID string, version int64) error
}

var _ profileStore = (*store.DB)(nil)

// storageState is a Playwright storage state with a cookie expiring at exp
// (0: a session cookie) and a localStorage entry, checked as callers do.
func storageState(t *testing.T, secret string, exp int64) (json.RawMessage, proxy.StorageState) {
	t.Helper()
	raw, err := json.Marshal(map[string]any{
		"cookies": []map[string]any{{"name": "sid", "value": secret, "domain": ".example.com", "path": "/",
			"expires": exp, "httpOnly": true, "secure": true, "sameSite": "Lax"}},
		"origins": []map[string]any{{"origin": "https://app.example.org",
			"localStorage": []map[string]any{{"name": "token", "value": secret}}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	meta, err := proxy.CheckStorageState(raw)
	if err != nil {
		t.Fatal(err)
	}
	return raw, meta
}

func TestProfiles(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db := newDB(t)
	v1, meta1 := storageState(t, "one", 1893456000) // 2030-01-01
	v2, meta2 := storageState(t, "two", -1)
	expires := time.Unix(1893456000, 0).UTC()
	origins := []string{"example.com", "https://app.example.org"}
	t1, t2 := t0.Add(time.Minute), t0.Add(2*time.Minute)

	// Each step runs on what the ones before left.
	steps := []struct {
		name      string
		profile   string
		state     json.RawMessage
		meta      proxy.StorageState
		at        time.Time
		ifVersion int64
		want      *proxy.Profile // nil: wantErr
		wantMoved bool
		wantCode  string
	}{
		{name: "new, if it does not exist", profile: "work", state: v1, meta: meta1, at: t0, ifVersion: 0,
			want: &proxy.Profile{Name: "work", Origins: origins, Version: 1, CreatedAt: t0, UpdatedAt: t0, CookiesExpireAt: &expires, Bytes: len(v1)}},
		{name: "new again: it exists", profile: "work", state: v2, meta: meta2, at: t1, ifVersion: 0, wantMoved: true},
		{name: "next version from the stored one", profile: "work", state: v2, meta: meta2, at: t1, ifVersion: 1,
			want: &proxy.Profile{Name: "work", Origins: origins, Version: 2, CreatedAt: t0, UpdatedAt: t1, Bytes: len(v2)}},
		{name: "from a version that moved on", profile: "work", state: v1, meta: meta1, at: t2, ifVersion: 1, wantMoved: true},
		{name: "from a version ahead", profile: "work", state: v1, meta: meta1, at: t2, ifVersion: 7, wantMoved: true},
		{name: "unconditional next version", profile: "work", state: v1, meta: meta1, at: t2, ifVersion: -1,
			want: &proxy.Profile{Name: "work", Origins: origins, Version: 3, CreatedAt: t0, UpdatedAt: t2, CookiesExpireAt: &expires, Bytes: len(v1)}},
		{name: "unconditional new", profile: "home.2", state: v2, meta: meta2, at: t1, ifVersion: -1,
			want: &proxy.Profile{Name: "home.2", Origins: origins, Version: 1, CreatedAt: t1, UpdatedAt: t1, Bytes: len(v2)}},
		{name: "conditional on a missing one", profile: "gone", state: v1, meta: meta1, at: t1, ifVersion: 2, wantMoved: true},
		{name: "no origins is an empty list", profile: "empty", state: json.RawMessage(`{"cookies":[],"origins":[]}`), at: t1, ifVersion: -1,
			want: &proxy.Profile{Name: "empty", Origins: []string{}, Version: 1, CreatedAt: t1, UpdatedAt: t1, Bytes: len(`{"cookies":[],"origins":[]}`)}},
		{name: "bad name", profile: "Work", state: v1, meta: meta1, at: t1, ifVersion: -1, wantCode: proxy.EINVALID},
		{name: "name too long", profile: string(make([]byte, 65)), state: v1, meta: meta1, at: t1, ifVersion: -1, wantCode: proxy.EINVALID},
		{name: "not JSON", profile: "work", state: json.RawMessage(`{"cookies":`), at: t1, ifVersion: -1, wantCode: proxy.EINVALID},
		{name: "no state", profile: "work", at: t1, ifVersion: -1, wantCode: proxy.EINVALID},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			got, err := db.PutProfile(ctx, st.profile, st.state, st.meta, st.at, st.ifVersion)
			switch {
			case st.wantMoved:
				if !errors.Is(err, proxy.ErrProfileMoved) {
					t.Fatalf("PutProfile = %v, %v; want ErrProfileMoved", got, err)
				}
				return
			case st.wantCode != "":
				wantCode(t, err, st.wantCode)
				return
			case err != nil:
				t.Fatal(err)
			}
			if diff := cmp.Diff(st.want, got); diff != "" {
				t.Errorf("PutProfile (-want +got):\n%s", diff)
			}
			again, err := db.GetProfile(ctx, st.profile)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(got, again); diff != "" {
				t.Errorf("GetProfile after PutProfile (-want +got):\n%s", diff)
			}
			state, version, err := db.ProfileState(ctx, st.profile)
			if err != nil {
				t.Fatal(err)
			}
			if string(state) != string(st.state) || version != st.want.Version {
				t.Errorf("ProfileState = %s v%d, want %s v%d", state, version, st.state, st.want.Version)
			}
		})
	}

	t.Run("list by name", func(t *testing.T) {
		list, err := db.ListProfiles(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, p := range list {
			names = append(names, p.Name)
			if p.Sessions != nil {
				t.Errorf("%s: Sessions = %v, want nil (the store does not know which are live)", p.Name, p.Sessions)
			}
		}
		if diff := cmp.Diff([]string{"empty", "home.2", "work"}, names); diff != "" {
			t.Errorf("ListProfiles (-want +got):\n%s", diff)
		}
	})

	t.Run("delete", func(t *testing.T) {
		if err := db.DeleteProfile(ctx, "home.2"); err != nil {
			t.Fatal(err)
		}
		_, err := db.GetProfile(ctx, "home.2")
		wantCode(t, err, proxy.EPROFILEMISSING)
		// Deleted, it starts again from version 1.
		p, err := db.PutProfile(ctx, "home.2", v1, meta1, t2, 0)
		if err != nil {
			t.Fatal(err)
		}
		if p.Version != 1 || !p.CreatedAt.Equal(t2) {
			t.Errorf("recreated: version %d created %v, want 1 at %v", p.Version, p.CreatedAt, t2)
		}
	})

	notFound := []struct {
		name string
		op   func() error
	}{
		{"get", func() error { _, err := db.GetProfile(ctx, "nope"); return err }},
		{"state", func() error { _, _, err := db.ProfileState(ctx, "nope"); return err }},
		{"delete", func() error { return db.DeleteProfile(ctx, "nope") }},
	}
	for _, tt := range notFound {
		t.Run("unknown profile: "+tt.name, func(t *testing.T) {
			err := tt.op()
			wantCode(t, err, proxy.EPROFILEMISSING)
			var e *proxy.Error
			if errors.As(err, &e) && e.Details["profile"] != "nope" {
				t.Errorf("details %v do not name the profile", e.Details)
			}
		})
	}

	t.Run("an empty store lists none, not nil", func(t *testing.T) {
		list, err := newDB(t).ListProfiles(ctx)
		if err != nil || list == nil || len(list) != 0 {
			t.Errorf("ListProfiles = %#v, %v; want an empty list", list, err)
		}
	})
}

// TestPutProfileIfVersionRace: writers that all started from version 3
// write at once; exactly one becomes version 4, every other is told the
// profile moved, and the stored state is the winner's.
func TestPutProfileIfVersionRace(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db := newDB(t)
	base, meta := storageState(t, "base", -1)
	for range 3 {
		if _, err := db.PutProfile(ctx, "shared", base, meta, t0, -1); err != nil {
			t.Fatal(err)
		}
	}
	const writers = 8
	states := make([]json.RawMessage, writers)
	for i := range states {
		states[i], _ = storageState(t, "writer-"+string(rune('a'+i)), -1)
	}
	var (
		wg     sync.WaitGroup
		start  = make(chan struct{})
		errs   = make([]error, writers)
		result = make([]*proxy.Profile, writers)
	)
	for i := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			result[i], errs[i] = db.PutProfile(ctx, "shared", states[i], meta, t0.Add(time.Second), 3)
		}()
	}
	close(start)
	wg.Wait()
	winner, moved := -1, 0
	for i, err := range errs {
		switch {
		case err == nil:
			if winner >= 0 {
				t.Errorf("writers %d and %d both won", winner, i)
			}
			winner = i
			if result[i].Version != 4 {
				t.Errorf("the winner stored version %d, want 4", result[i].Version)
			}
		case errors.Is(err, proxy.ErrProfileMoved):
			moved++
		default:
			t.Errorf("writer %d: %v", i, err)
		}
	}
	if winner < 0 || moved != writers-1 {
		t.Fatalf("winner %d, %d moved; want one winner and %d moved", winner, moved, writers-1)
	}
	state, version, err := db.ProfileState(ctx, "shared")
	if err != nil {
		t.Fatal(err)
	}
	if version != 4 || string(state) != string(states[winner]) {
		t.Errorf("stored v%d %s, want v4 with the winner's state", version, state)
	}
}

func TestSetSessionProfileVersion(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db := newDB(t)
	s := &proxy.Session{ID: "s", CreatedAt: t0, LastActivity: t0, State: proxy.SessionActive, Profile: "work", ProfileVersion: 2, ProfileWrite: true}
	if err := db.CreateSession(ctx, s); err != nil {
		t.Fatal(err)
	}
	if err := db.SetSessionProfileVersion(ctx, "s", 5); err != nil {
		t.Fatal(err)
	}
	got, err := db.GetSession(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	s.ProfileVersion = 5
	if diff := cmp.Diff(s, got); diff != "" {
		t.Errorf("GetSession (-want +got):\n%s", diff)
	}
	wantCode(t, db.SetSessionProfileVersion(ctx, "nope", 1), proxy.ESESSIONMISSING)
	bad := &proxy.Session{ID: "b", CreatedAt: t0, LastActivity: t0, State: proxy.SessionActive, Profile: "../etc"}
	wantCode(t, db.CreateSession(ctx, bad), proxy.EINVALID)
}
