package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/store"
)

// profileDB is the test's record: the real store for sessions and events,
// and an in-memory ProfileStore playing the contract's profile part,
// including the profile fields of a session (kept beside the real rows).
type profileDB struct {
	*store.DB

	mu       sync.Mutex
	profiles map[string]*storedProfile
	sessions map[string]sessionProfile
	puts     int // PutProfile calls that wrote
}

type storedProfile struct {
	meta  proxy.Profile
	state json.RawMessage
}

type sessionProfile struct {
	name    string
	version int64
	write   bool
}

func newProfileDB(db *store.DB) *profileDB {
	return &profileDB{DB: db, profiles: map[string]*storedProfile{}, sessions: map[string]sessionProfile{}}
}

func (p *profileDB) PutProfile(_ context.Context, name string, state json.RawMessage, meta proxy.StorageState, at time.Time, ifVersion int64) (*proxy.Profile, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	cur := p.profiles[name]
	var version int64
	if cur != nil {
		version = cur.meta.Version
	}
	if ifVersion >= 0 && version != ifVersion {
		return nil, fmt.Errorf("profile %s is at version %d, not %d: %w", name, version, ifVersion, proxy.ErrProfileMoved)
	}
	next := &storedProfile{state: append(json.RawMessage(nil), state...), meta: proxy.Profile{
		Name: name, Origins: meta.Origins, Version: version + 1, CreatedAt: at, UpdatedAt: at, CookiesExpireAt: meta.CookiesExpireAt, Bytes: len(state)}}
	if cur != nil {
		next.meta.CreatedAt = cur.meta.CreatedAt
	}
	p.profiles[name] = next
	p.puts++
	out := next.meta
	return &out, nil
}

func (p *profileDB) GetProfile(_ context.Context, name string) (*proxy.Profile, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	cur := p.profiles[name]
	if cur == nil {
		return nil, proxy.ProfileNotFound(name)
	}
	out := cur.meta
	return &out, nil
}

func (p *profileDB) ListProfiles(context.Context) ([]*proxy.Profile, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := []*proxy.Profile{}
	for _, cur := range p.profiles {
		m := cur.meta
		out = append(out, &m)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func (p *profileDB) ProfileState(_ context.Context, name string) (json.RawMessage, int64, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	cur := p.profiles[name]
	if cur == nil {
		return nil, 0, proxy.ProfileNotFound(name)
	}
	return append(json.RawMessage(nil), cur.state...), cur.meta.Version, nil
}

func (p *profileDB) DeleteProfile(_ context.Context, name string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.profiles[name] == nil {
		return proxy.ProfileNotFound(name)
	}
	delete(p.profiles, name)
	return nil
}

func (p *profileDB) SetSessionProfileVersion(ctx context.Context, id string, version int64) error {
	if _, err := p.DB.GetSession(ctx, id); err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	sp := p.sessions[id]
	sp.version = version
	p.sessions[id] = sp
	return nil
}

func (p *profileDB) CreateSession(ctx context.Context, s *proxy.Session) error {
	if err := p.DB.CreateSession(ctx, s); err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.sessions[s.ID] = sessionProfile{s.Profile, s.ProfileVersion, s.ProfileWrite}
	return nil
}

func (p *profileDB) withProfile(s *proxy.Session) *proxy.Session {
	p.mu.Lock()
	defer p.mu.Unlock()
	sp := p.sessions[s.ID]
	s.Profile, s.ProfileVersion, s.ProfileWrite = sp.name, sp.version, sp.write
	return s
}

func (p *profileDB) GetSession(ctx context.Context, id string) (*proxy.Session, error) {
	s, err := p.DB.GetSession(ctx, id)
	if err != nil {
		return nil, err
	}
	return p.withProfile(s), nil
}

func (p *profileDB) ListSessions(ctx context.Context) ([]*proxy.Session, error) {
	all, err := p.DB.ListSessions(ctx)
	for _, s := range all {
		p.withProfile(s)
	}
	return all, err
}

// version is profile name's stored version, 0 when there is none.
func (p *profileDB) version(name string) int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	if cur := p.profiles[name]; cur != nil {
		return cur.meta.Version
	}
	return 0
}

func (p *profileDB) stateOf(name string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if cur := p.profiles[name]; cur != nil {
		return string(cur.state)
	}
	return ""
}

func (p *profileDB) writes() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.puts
}

// newProfileManager is newManager over a profileDB.
func newProfileManager(t *testing.T, opts Options) (*Manager, *fakeSpawner, *profileDB) {
	t.Helper()
	if opts.Clock == nil {
		opts.Clock = nowClock(newFakeClock().Now)
	}
	var pdb *profileDB
	m, sp, _ := newManagerOn(t, opts, func(db *store.DB) Store {
		pdb = newProfileDB(db)
		return pdb
	})
	return m, sp, pdb
}

// stateWith is a storage state holding one cookie of value secret for
// 127.0.0.1.
func stateWith(secret string) string {
	return `{"cookies":[{"name":"sid","value":"` + secret + `","domain":"127.0.0.1","path":"/","expires":-1,"httpOnly":true,"secure":false,"sameSite":"Lax"}],"origins":[]}`
}

// putProfile stores profile name as the operator would.
func putProfile(t *testing.T, m *Manager, name, state string) *proxy.Profile {
	t.Helper()
	p, err := m.PutProfile(context.Background(), name, json.RawMessage(state))
	if err != nil {
		t.Fatalf("PutProfile %s: %v", name, err)
	}
	return p
}

// eventsOf lists a session's event kinds and details.
func eventsOf(t *testing.T, db *profileDB, id string) []proxy.SessionEvent {
	t.Helper()
	evs, err := db.ListSessionEvents(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

func eventDetails(evs []proxy.SessionEvent, kind string) []string {
	var out []string
	for _, e := range evs {
		if e.Kind == kind {
			out = append(out, e.Detail)
		}
	}
	return out
}

func client(name string) context.Context {
	return proxy.WithClient(context.Background(), proxy.ClientID(name))
}

func TestCreateFromProfile(t *testing.T) {
	ctx := context.Background()
	m, sp, db := newProfileManager(t, Options{WarmPool: 1})
	secret := "SESSIONSECRET-" + fmt.Sprint(time.Now().UnixNano())
	putProfile(t, m, "acct", stateWith(secret))
	waitFor(t, "a warm worker", func() bool { return len(m.pool.ready) == 1 })
	warm := sp.all()[0]

	no := false
	a, err := m.CreateSession(ctx, proxy.BrowserOptions{Profile: "acct"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := m.CreateSession(ctx, proxy.BrowserOptions{Profile: "acct", ProfileWrite: &no})
	if err != nil {
		t.Fatal(err)
	}
	type got struct {
		Profile   string
		Version   int64
		Write     bool
		Options   *proxy.BrowserOptions
		Restored  []string
		Saved     string
		Created   []string
		WarmSpare bool
	}
	check := func(s *proxy.Session) got {
		l := m.reg.get(s.ID)
		w := l.currentWorker().(*fakeWorker)
		saved, _, err := db.LoadSessionState(ctx, s.ID)
		if err != nil {
			t.Fatal(err)
		}
		storage, _ := storageOf(saved)
		stored, err := db.GetSession(ctx, s.ID)
		if err != nil {
			t.Fatal(err)
		}
		return got{Profile: stored.Profile, Version: stored.ProfileVersion, Write: stored.ProfileWrite, Options: stored.Options,
			Restored: w.restoredStorages(), Saved: string(storage), Created: eventDetails(eventsOf(t, db, s.ID), proxy.EventCreated),
			WarmSpare: w == warm}
	}
	for _, tc := range []struct {
		name string
		s    *proxy.Session
		want got
	}{
		{"writes back (default), from the warm spare", a, got{Profile: "acct", Version: 1, Write: true, Restored: []string{stateWith(secret)}, Saved: stateWith(secret),
			Created: []string{fmt.Sprintf("worker %d; profile acct v1", warm.pid)}, WarmSpare: true}},
		{"profile_write false", b, got{Profile: "acct", Version: 1, Write: false, Restored: []string{stateWith(secret)}, Saved: stateWith(secret),
			Created: []string{fmt.Sprintf("worker %d; profile acct v1", m.reg.get(b.ID).currentWorker().PID())}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, check(tc.s)); diff != "" {
				t.Errorf("session from a profile (-want +got):\n%s", diff)
			}
			if tc.s.Profile != "acct" || tc.s.ProfileVersion != 1 {
				t.Errorf("create answered profile %q v%d, want acct v1", tc.s.Profile, tc.s.ProfileVersion)
			}
		})
	}
	t.Run("each session has its own copy", func(t *testing.T) {
		wa := m.reg.get(a.ID).currentWorker().(*fakeWorker)
		wb := m.reg.get(b.ID).currentWorker().(*fakeWorker)
		wa.setStorage(stateWith("CHANGED-IN-A"))
		if got := string(wb.storage); got != stateWith(secret) {
			t.Errorf("B's browser changed with A's: %s", got)
		}
		if got := db.stateOf("acct"); got != stateWith(secret) {
			t.Errorf("the profile changed before any write-back: %s", got)
		}
	})
}

func TestCreateFromProfileRefused(t *testing.T) {
	tests := []struct {
		name    string
		mode    string
		ctx     context.Context
		opts    proxy.BrowserOptions
		restore error // the worker's RestoreState fails
		code    string
	}{
		{"unknown profile", proxy.ProfilesSave, context.Background(), proxy.BrowserOptions{Profile: "nope"}, nil, proxy.EPROFILEMISSING},
		{"not a profile name", proxy.ProfilesSave, context.Background(), proxy.BrowserOptions{Profile: "../x"}, nil, proxy.EINVALID},
		{"mode off, a client", proxy.ProfilesOff, client("c1"), proxy.BrowserOptions{Profile: "acct"}, nil, proxy.EFORBIDDEN},
		{"the browser refuses the state", proxy.ProfilesSave, context.Background(), proxy.BrowserOptions{Profile: "acct"}, errors.New("boom"), proxy.EUNAVAILABLE},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, sp, db := newProfileManager(t, Options{Profiles: tt.mode, MaxSessions: 1})
			putProfile(t, m, "acct", stateWith("SESSIONSECRET-refused"))
			sp.prepare = func(w *fakeWorker) { w.restoreErr = tt.restore }
			_, err := m.CreateSession(tt.ctx, tt.opts)
			if got := proxy.ErrorCode(err); got != tt.code {
				t.Fatalf("create: %v (%s), want %s", err, got, tt.code)
			}
			if strings.Contains(err.Error(), "SESSIONSECRET") {
				t.Errorf("the error quotes the profile's state: %v", err)
			}
			all, err := db.ListSessions(context.Background())
			if err != nil || len(all) != 0 {
				t.Errorf("sessions after a refused create: %d, %v; want none", len(all), err)
			}
			for _, w := range sp.all() {
				if !w.closed.Load() {
					t.Errorf("worker %d was left running by a refused create", w.pid)
				}
			}
			if tt.restore == nil && len(sp.all()) > 0 {
				t.Errorf("a refused create started %d workers before refusing", len(sp.all()))
			}
			// The slot is free again.
			if _, err := m.CreateSession(context.Background()); err != nil {
				t.Errorf("create after a refused one: %v", err)
			}
		})
	}
}

// TestProfileModes: what each caller may do with profiles under each
// PROXY_PROFILES mode.
func TestProfileModes(t *testing.T) {
	ops := []struct {
		name string
		do   func(ctx context.Context, m *Manager, sessionID string) error
	}{
		{"list", func(ctx context.Context, m *Manager, _ string) error { _, err := m.ListProfiles(ctx); return err }},
		{"get", func(ctx context.Context, m *Manager, _ string) error { _, err := m.GetProfile(ctx, "acct"); return err }},
		{"create from", func(ctx context.Context, m *Manager, _ string) error {
			_, err := m.CreateSession(ctx, proxy.BrowserOptions{Profile: "acct"})
			return err
		}},
		{"save", func(ctx context.Context, m *Manager, id string) error {
			_, err := m.SaveProfile(ctx, "saved", id)
			return err
		}},
		{"put", func(ctx context.Context, m *Manager, _ string) error {
			_, err := m.PutProfile(ctx, "put", json.RawMessage(stateWith("x")))
			return err
		}},
		{"state", func(ctx context.Context, m *Manager, _ string) error {
			_, err := m.ProfileState(ctx, "acct")
			return err
		}},
		{"delete", func(ctx context.Context, m *Manager, _ string) error { return m.DeleteProfile(ctx, "acct") }},
	}
	const ok, no = "", proxy.EFORBIDDEN
	// want is per op, in the order of ops.
	tests := []struct {
		mode   string
		client bool
		want   []string
	}{
		{proxy.ProfilesOff, true, []string{no, no, no, no, no, no, no}},
		{proxy.ProfilesUse, true, []string{ok, ok, ok, no, no, no, no}},
		{proxy.ProfilesSave, true, []string{ok, ok, ok, ok, no, no, no}},
		{"", true, []string{ok, ok, ok, ok, no, no, no}},
		{proxy.ProfilesOff, false, []string{ok, ok, ok, ok, ok, ok, ok}},
		{proxy.ProfilesUse, false, []string{ok, ok, ok, ok, ok, ok, ok}},
		{proxy.ProfilesSave, false, []string{ok, ok, ok, ok, ok, ok, ok}},
	}
	for _, tt := range tests {
		caller := "operator"
		if tt.client {
			caller = "client"
		}
		t.Run(fmt.Sprintf("%s mode %q", caller, tt.mode), func(t *testing.T) {
			m, _, _ := newProfileManager(t, Options{Profiles: tt.mode})
			ctx := context.Background()
			if tt.client {
				ctx = client("c1")
			}
			s, err := m.CreateSession(ctx)
			if err != nil {
				t.Fatal(err)
			}
			m.reg.get(s.ID).currentWorker().(*fakeWorker).setStorage(stateWith("SESSIONSECRET-modes"))
			var got []string
			for _, op := range ops {
				putProfile(t, m, "acct", stateWith("SESSIONSECRET-modes")) // delete may have taken it
				got = append(got, proxy.ErrorCode(op.do(ctx, m, s.ID)))
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("codes of list, get, create from, save, put, state, delete (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSaveProfile(t *testing.T) {
	ctx := context.Background()
	m, _, db := newProfileManager(t, Options{})
	plain, err := m.CreateSession(ctx)
	if err != nil {
		t.Fatal(err)
	}
	worker := func(id string) *fakeWorker { return m.reg.get(id).currentWorker().(*fakeWorker) }
	worker(plain.ID).setStorage(stateWith("SESSIONSECRET-one"))

	first, err := m.SaveProfile(ctx, "acct", plain.ID)
	if err != nil {
		t.Fatal(err)
	}
	worker(plain.ID).setStorage(stateWith("SESSIONSECRET-two"))
	second, err := m.SaveProfile(ctx, "acct", plain.ID)
	if err != nil {
		t.Fatal(err)
	}
	t.Run("new, then its next version", func(t *testing.T) {
		got := []int64{first.Version, second.Version}
		if diff := cmp.Diff([]int64{1, 2}, got); diff != "" {
			t.Errorf("versions (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(stateWith("SESSIONSECRET-two"), db.stateOf("acct")); diff != "" {
			t.Errorf("stored state (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]string{"127.0.0.1"}, second.Origins); diff != "" {
			t.Errorf("origins (-want +got):\n%s", diff)
		}
		want := []string{"profile acct version 1", "profile acct version 2"}
		if diff := cmp.Diff(want, eventDetails(eventsOf(t, db, plain.ID), proxy.EventProfileSaved)); diff != "" {
			t.Errorf("profile_saved events (-want +got):\n%s", diff)
		}
		// A plain session is not one started from the profile.
		if diff := cmp.Diff([]string{}, second.Sessions); diff != "" {
			t.Errorf("sessions of the profile (-want +got):\n%s", diff)
		}
	})

	t.Run("the own session's version moves with its save", func(t *testing.T) {
		from, err := m.CreateSession(ctx, proxy.BrowserOptions{Profile: "acct"})
		if err != nil {
			t.Fatal(err)
		}
		worker(from.ID).setStorage(stateWith("SESSIONSECRET-three"))
		p, err := m.SaveProfile(ctx, "acct", from.ID)
		if err != nil {
			t.Fatal(err)
		}
		stored, _ := db.GetSession(ctx, from.ID)
		if p.Version != 3 || stored.ProfileVersion != 3 || !slices.Equal(p.Sessions, []string{from.ID}) {
			t.Errorf("after saving its own profile: profile v%d sessions %v, session stands on v%d; want v3, [%s], v3", p.Version, p.Sessions, stored.ProfileVersion, from.ID)
		}
		// Its write-back on close is then no conflict with its own save.
		worker(from.ID).setStorage(stateWith("SESSIONSECRET-four"))
		if err := m.CloseSession(ctx, from.ID); err != nil {
			t.Fatal(err)
		}
		if got := db.version("acct"); got != 4 {
			t.Errorf("profile version after the write-back = %d, want 4", got)
		}
		if got := eventDetails(eventsOf(t, db, from.ID), proxy.EventProfileConflict); got != nil {
			t.Errorf("conflict events after its own save: %v", got)
		}
	})

	t.Run("refusals", func(t *testing.T) {
		other, err := m.CreateSession(client("c2"))
		if err != nil {
			t.Fatal(err)
		}
		tests := []struct {
			name, profile, session string
			ctx                    context.Context
			code                   string
		}{
			{"another client's session", "acct", other.ID, client("c1"), proxy.ESESSIONMISSING},
			{"unknown session", "acct", "6f1c1d2e-0000-4000-8000-000000000000", client("c1"), proxy.ESESSIONMISSING},
			{"bad name", "Acct!", plain.ID, ctx, proxy.EINVALID},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				_, err := m.SaveProfile(tc.ctx, tc.profile, tc.session)
				if got := proxy.ErrorCode(err); got != tc.code {
					t.Errorf("SaveProfile: %v, want %s", err, tc.code)
				}
			})
		}
		_, errOther := m.SaveProfile(client("c1"), "acct", other.ID)
		_, errUnknown := m.SaveProfile(client("c1"), "acct", "6f1c1d2e-0000-4000-8000-000000000000")
		if strings.ReplaceAll(errOther.Error(), other.ID, "ID") != strings.ReplaceAll(errUnknown.Error(), "6f1c1d2e-0000-4000-8000-000000000000", "ID") {
			t.Errorf("another client's session is told apart from an unknown one:\n%v\n%v", errOther, errUnknown)
		}
	})

	t.Run("over the size limit", func(t *testing.T) {
		small, _, _ := newProfileManager(t, Options{MaxProfileBytes: 64})
		s, err := small.CreateSession(ctx)
		if err != nil {
			t.Fatal(err)
		}
		small.reg.get(s.ID).currentWorker().(*fakeWorker).setStorage(stateWith("SESSIONSECRET-big"))
		if _, err := small.SaveProfile(ctx, "big", s.ID); proxy.ErrorCode(err) != proxy.ETOOLARGE {
			t.Errorf("save over the limit: %v, want PAYLOAD_TOO_LARGE", err)
		}
		if _, err := small.PutProfile(ctx, "big", json.RawMessage(stateWith("SESSIONSECRET-big"))); proxy.ErrorCode(err) != proxy.ETOOLARGE {
			t.Errorf("put over the limit: %v, want PAYLOAD_TOO_LARGE", err)
		}
		if _, err := small.GetProfile(ctx, "big"); proxy.ErrorCode(err) != proxy.EPROFILEMISSING {
			t.Errorf("a refused profile exists: %v", err)
		}
	})

	t.Run("a suspended session is revived to save", func(t *testing.T) {
		s, err := m.CreateSession(ctx)
		if err != nil {
			t.Fatal(err)
		}
		worker(s.ID).setStorage(stateWith("SESSIONSECRET-asleep"))
		if !m.trySuspend(ctx, m.reg.get(s.ID), "test") {
			t.Fatal("could not suspend an idle session")
		}
		p, err := m.SaveProfile(ctx, "asleep", s.ID)
		if err != nil {
			t.Fatal(err)
		}
		if p.Version != 1 || db.stateOf("asleep") != stateWith("SESSIONSECRET-asleep") {
			t.Errorf("saved from a revived session: v%d %s", p.Version, db.stateOf("asleep"))
		}
	})
}

// TestWriteBack: a session started from a profile writes its state back
// when it closes or is suspended, unless the profile moved on, went, or
// the session opted out.
func TestWriteBack(t *testing.T) {
	ends := []struct {
		name string
		end  func(t *testing.T, m *Manager, id string)
	}{
		{"close", func(t *testing.T, m *Manager, id string) {
			if err := m.CloseSession(context.Background(), id); err != nil {
				t.Fatal(err)
			}
		}},
		{"suspend", func(t *testing.T, m *Manager, id string) {
			if !m.trySuspend(context.Background(), m.reg.get(id), "idle") {
				t.Fatal("could not suspend an idle session")
			}
		}},
		{"shutdown", func(t *testing.T, m *Manager, _ string) {
			if err := m.Shutdown(context.Background()); err != nil {
				t.Fatal(err)
			}
		}},
	}
	const sessionState = "SESSIONSECRET-session"
	tests := []struct {
		name string
		// meanwhile runs between the create and the end.
		meanwhile    func(t *testing.T, m *Manager)
		noWrite      bool
		wantVersion  int64  // of the profile afterwards; 0: gone
		wantState    string // the profile's state afterwards
		wantSaved    []string
		wantConflict []string
		wantSession  int64 // the version the session stands on afterwards
	}{
		{name: "written back", wantVersion: 2, wantState: stateWith(sessionState), wantSaved: []string{"profile acct version 2"}, wantSession: 2},
		{name: "profile_write false", noWrite: true, wantVersion: 1, wantState: stateWith("SESSIONSECRET-v1"), wantSession: 1},
		{name: "another save meanwhile",
			meanwhile:   func(t *testing.T, m *Manager) { putProfile(t, m, "acct", stateWith("SESSIONSECRET-other")) },
			wantVersion: 2, wantState: stateWith("SESSIONSECRET-other"),
			wantConflict: []string{"profile acct moved on to version 2 since this session started from version 1; the session's state was not written back"},
			wantSession:  1},
		{name: "deleted meanwhile",
			meanwhile: func(t *testing.T, m *Manager) {
				if err := m.DeleteProfile(context.Background(), "acct"); err != nil {
					t.Fatal(err)
				}
			},
			wantConflict: []string{"profile acct was deleted since this session started from version 1; the session's state was not written back"},
			wantSession:  1},
	}
	for _, end := range ends {
		for _, tt := range tests {
			t.Run(end.name+"/"+tt.name, func(t *testing.T) {
				ctx := context.Background()
				m, _, db := newProfileManager(t, Options{})
				putProfile(t, m, "acct", stateWith("SESSIONSECRET-v1"))
				write := !tt.noWrite
				s, err := m.CreateSession(ctx, proxy.BrowserOptions{Profile: "acct", ProfileWrite: &write})
				if err != nil {
					t.Fatal(err)
				}
				m.reg.get(s.ID).currentWorker().(*fakeWorker).setStorage(stateWith(sessionState))
				if tt.meanwhile != nil {
					tt.meanwhile(t, m)
				}
				end.end(t, m, s.ID)

				evs := eventsOf(t, db, s.ID)
				stored, err := db.GetSession(ctx, s.ID)
				if err != nil {
					t.Fatal(err)
				}
				type outcome struct {
					Version   int64
					State     string
					Saved     []string
					Conflicts []string
					Session   int64
				}
				got := outcome{db.version("acct"), db.stateOf("acct"), eventDetails(evs, proxy.EventProfileSaved), eventDetails(evs, proxy.EventProfileConflict), stored.ProfileVersion}
				want := outcome{tt.wantVersion, tt.wantState, tt.wantSaved, tt.wantConflict, tt.wantSession}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("after the %s (-want +got):\n%s", end.name, diff)
				}
				for _, e := range evs {
					if strings.Contains(e.Detail, "SESSIONSECRET") {
						t.Errorf("event %s quotes the state: %s", e.Kind, e.Detail)
					}
				}
			})
		}
	}
}

// TestWriteBackAfterRevive: a suspended session revived into a new worker
// still knows its profile and the version it wrote back (read from the
// record), so its next write-back is no conflict; a crash writes nothing.
func TestWriteBackAfterRevive(t *testing.T) {
	ctx := context.Background()
	m, sp, db := newProfileManager(t, Options{restartBackoff: time.Millisecond})
	putProfile(t, m, "acct", stateWith("SESSIONSECRET-v1"))
	s, err := m.CreateSession(ctx, proxy.BrowserOptions{Profile: "acct"})
	if err != nil {
		t.Fatal(err)
	}
	m.reg.get(s.ID).currentWorker().(*fakeWorker).setStorage(stateWith("SESSIONSECRET-before"))
	if !m.trySuspend(ctx, m.reg.get(s.ID), "idle") {
		t.Fatal("could not suspend an idle session")
	}
	// The revive restores the session's own state, not the profile's.
	navigate(t, m, s.ID, "http://127.0.0.1/back")
	revived := sp.all()[len(sp.all())-1]
	if got := revived.restoredStorages(); !slices.Equal(got, []string{stateWith("SESSIONSECRET-before")}) {
		t.Errorf("revived worker got %v", got)
	}
	l := m.reg.get(s.ID)
	if l.profile != "acct" || l.profileVersion != 2 || !l.profileWrite {
		t.Errorf("revived handle: profile %q v%d write %v; want acct v2 true", l.profile, l.profileVersion, l.profileWrite)
	}
	// A crash is no write-back.
	writes := db.writes()
	revived.die()
	waitFor(t, "the restart after the crash", func() bool { return len(sp.all()) == 3 && m.reg.get(s.ID).currentWorker() == sp.all()[2] })
	// A call waits for the restart, restore included, to finish.
	navigate(t, m, s.ID, "http://127.0.0.1/again")
	if db.writes() != writes {
		t.Errorf("a crash wrote the profile")
	}
	m.reg.get(s.ID).currentWorker().(*fakeWorker).setStorage(stateWith("SESSIONSECRET-after"))
	if err := m.CloseSession(ctx, s.ID); err != nil {
		t.Fatal(err)
	}
	if v, st := db.version("acct"), db.stateOf("acct"); v != 3 || st != stateWith("SESSIONSECRET-after") {
		t.Errorf("profile after the close: v%d %s; want v3 with the last state", v, st)
	}
	want := []string{"profile acct version 2", "profile acct version 3"}
	if diff := cmp.Diff(want, eventDetails(eventsOf(t, db, s.ID), proxy.EventProfileSaved)); diff != "" {
		t.Errorf("profile_saved events (-want +got):\n%s", diff)
	}
}

func TestListAndGetProfiles(t *testing.T) {
	ctx := context.Background()
	m, _, _ := newProfileManager(t, Options{})
	putProfile(t, m, "b-site", stateWith("SESSIONSECRET-b"))
	putProfile(t, m, "a-site", `{"cookies":[],"origins":[{"origin":"https://a.example","localStorage":[{"name":"k","value":"SESSIONSECRET-a"}]}]}`)
	mine, err := m.CreateSession(client("c1"), proxy.BrowserOptions{Profile: "a-site"})
	if err != nil {
		t.Fatal(err)
	}
	theirs, err := m.CreateSession(client("c2"), proxy.BrowserOptions{Profile: "a-site"})
	if err != nil {
		t.Fatal(err)
	}
	closed, err := m.CreateSession(client("c1"), proxy.BrowserOptions{Profile: "a-site"})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.CloseSession(ctx, closed.ID); err != nil {
		t.Fatal(err)
	}
	type row struct {
		Name     string
		Origins  []string
		Sessions []string
	}
	rows := func(ps []*proxy.Profile) []row {
		var out []row
		for _, p := range ps {
			out = append(out, row{p.Name, p.Origins, p.Sessions})
		}
		return out
	}
	for _, tc := range []struct {
		name string
		ctx  context.Context
		want []row
	}{
		{"a client sees its own sessions", client("c1"), []row{{"a-site", []string{"https://a.example"}, []string{mine.ID}}, {"b-site", []string{"127.0.0.1"}, []string{}}}},
		{"the operator sees all", ctx, []row{{"a-site", []string{"https://a.example"}, sortedIDs(mine.ID, theirs.ID)}, {"b-site", []string{"127.0.0.1"}, []string{}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			list, err := m.ListProfiles(tc.ctx)
			if err != nil {
				t.Fatal(err)
			}
			got := rows(list)
			for i := range got {
				sort.Strings(got[i].Sessions)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ListProfiles (-want +got):\n%s", diff)
			}
			one, err := m.GetProfile(tc.ctx, "a-site")
			if err != nil {
				t.Fatal(err)
			}
			g := rows([]*proxy.Profile{one})[0]
			sort.Strings(g.Sessions)
			if diff := cmp.Diff(tc.want[0], g); diff != "" {
				t.Errorf("GetProfile (-want +got):\n%s", diff)
			}
		})
	}
	if _, err := m.GetProfile(ctx, "nope"); proxy.ErrorCode(err) != proxy.EPROFILEMISSING {
		t.Errorf("unknown profile: %v", err)
	}
	if _, err := m.PutProfile(ctx, "bad", json.RawMessage(`{"cookies":[{"name":"a"}],"origins":[]}`)); proxy.ErrorCode(err) != proxy.EINVALID {
		t.Errorf("malformed state: %v, want INVALID_PARAMETERS", err)
	}
}

// TestProfileSecretsStayOutOfLogs: a profile's contents appear in no log
// line, at debug level, and no session event, across its whole life.
func TestProfileSecretsStayOutOfLogs(t *testing.T) {
	var logs logSink
	secret := fmt.Sprintf("SESSIONSECRET-%d", time.Now().UnixNano())
	m, _, db := newProfileManager(t, Options{Logger: slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	ctx := client("c1")
	putProfile(t, m, "acct", stateWith(secret+"-put"))
	a, err := m.CreateSession(ctx, proxy.BrowserOptions{Profile: "acct"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := m.CreateSession(ctx, proxy.BrowserOptions{Profile: "acct"})
	if err != nil {
		t.Fatal(err)
	}
	m.reg.get(a.ID).currentWorker().(*fakeWorker).setStorage(stateWith(secret + "-a"))
	m.reg.get(b.ID).currentWorker().(*fakeWorker).setStorage(stateWith(secret + "-b"))
	if _, err := m.SaveProfile(ctx, "other", a.ID); err != nil {
		t.Fatal(err)
	}
	if err := m.CloseSession(ctx, a.ID); err != nil { // written back
		t.Fatal(err)
	}
	if err := m.CloseSession(ctx, b.ID); err != nil { // a conflict
		t.Fatal(err)
	}
	if got := eventDetails(eventsOf(t, db, b.ID), proxy.EventProfileConflict); len(got) != 1 {
		t.Fatalf("conflict events of B: %v, want one", got)
	}
	if strings.Contains(logs.text(), secret) {
		t.Errorf("the logs hold a profile's contents:\n%s", logs.text())
	}
	if !strings.Contains(logs.text(), `"profile":"acct"`) {
		t.Errorf("the logs do not name the profile; is the logger wired?\n%s", logs.text())
	}
	for _, id := range []string{a.ID, b.ID} {
		for _, e := range eventsOf(t, db, id) {
			if strings.Contains(e.Detail, secret) {
				t.Errorf("event %s of %s holds a profile's contents: %s", e.Kind, id, e.Detail)
			}
		}
	}
}

func (s *logSink) text() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}

func sortedIDs(ids ...string) []string {
	sort.Strings(ids)
	return ids
}

// BenchmarkCreateSession is the cost of a create with and without a
// profile, over fake workers: what a profile adds in the proxy itself
// (reading it, the state handed to the worker, the session's own saved
// state), not the browser's part.
func BenchmarkCreateSession(b *testing.B) {
	for _, bc := range []struct {
		name string
		opts proxy.BrowserOptions
	}{{"plain", proxy.BrowserOptions{}}, {"profile", proxy.BrowserOptions{Profile: "acct"}}} {
		b.Run(bc.name, func(b *testing.B) {
			ctx := context.Background()
			db, err := store.Open(ctx, b.TempDir()+"/p.db")
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			pdb := newProfileDB(db)
			m := New(pdb, SpawnFunc(func(context.Context) (Worker, error) {
				return &fakeWorker{pid: int(nextPID.Add(1)), dir: b.TempDir(), done: make(chan struct{})}, nil
			}), Options{MaxSessions: b.N + 1, Logger: slog.New(slog.DiscardHandler)})
			defer m.Shutdown(ctx)
			if _, err := m.PutProfile(ctx, "acct", json.RawMessage(stateWith("SESSIONSECRET-bench"))); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for range b.N {
				if _, err := m.CreateSession(ctx, bc.opts); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

var _ ProfileStore = (*profileDB)(nil)
