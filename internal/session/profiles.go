package session

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/upstream"
)

// DefaultMaxProfileBytes bounds a profile's storage state when
// Options.MaxProfileBytes is 0 (PROXY_PROFILE_MAX_BYTES' default).
const DefaultMaxProfileBytes = 5 << 20

// ProfileStore is the part of the record that keeps login profiles (sealed).
type ProfileStore interface {
	// PutProfile stores state (already checked by proxy.CheckStorageState, described by meta) as
	// profile name's next version (1 for a new one), at time at. With ifVersion >= 0 it writes only
	// while the stored version is ifVersion (0: the profile must not exist yet) and otherwise
	// returns an error wrapping proxy.ErrProfileMoved. Returns the metadata as stored (Sessions nil).
	PutProfile(ctx context.Context, name string, state json.RawMessage, meta proxy.StorageState, at time.Time, ifVersion int64) (*proxy.Profile, error)
	// GetProfile: metadata only, Sessions nil; PROFILE_NOT_FOUND (proxy.ProfileNotFound).
	GetProfile(ctx context.Context, name string) (*proxy.Profile, error)
	// ListProfiles: every profile by name, Sessions nil; never nil.
	ListProfiles(ctx context.Context) ([]*proxy.Profile, error)
	// ProfileState: the decrypted storage state and its version; PROFILE_NOT_FOUND.
	ProfileState(ctx context.Context, name string) (json.RawMessage, int64, error)
	// DeleteProfile: PROFILE_NOT_FOUND when there is none.
	DeleteProfile(ctx context.Context, name string) error
	// SetSessionProfileVersion records the profile version a session now stands on (after it
	// wrote back). ESESSIONMISSING when the session is not recorded.
	SetSessionProfileVersion(ctx context.Context, sessionID string, version int64) error
}

// profileStore is the store's profile part, or UPSTREAM_UNAVAILABLE when
// the store keeps none.
func (m *Manager) profileStore() (ProfileStore, error) {
	if m.profiles == nil {
		return nil, &proxy.Error{Code: proxy.EUNAVAILABLE, Message: "this server's record keeps no login profiles"}
	}
	return m.profiles, nil
}

// allowProfiles refuses an MCP client what PROXY_PROFILES does not let it
// do (need is proxy.ProfilesUse or proxy.ProfilesSave); the operator may do
// everything.
func (m *Manager) allowProfiles(ctx context.Context, need string) error {
	if _, client := proxy.ClientFrom(ctx); !client {
		return nil
	}
	mode := m.opts.Profiles
	if mode == proxy.ProfilesSave || mode == need {
		return nil
	}
	what := "saving a session as a login profile is"
	if need == proxy.ProfilesUse {
		what = "login profiles are"
	}
	e := proxy.Errorf(proxy.EFORBIDDEN, "%s switched off for MCP clients on this server (PROXY_PROFILES=%s)", what, mode)
	e.Suggestion = "Go on without login profiles, or ask the server's operator to allow them (PROXY_PROFILES=use to start sessions from them, save to save them too)."
	return e
}

// operatorOnly refuses MCP clients what only the operator may do with
// profiles: read their contents, write or delete them directly.
func operatorOnly(ctx context.Context, what string) error {
	if _, client := proxy.ClientFrom(ctx); client {
		e := proxy.Errorf(proxy.EFORBIDDEN, "%s is the operator's (HTTP API with the operator token, or proxy-server profile), never an MCP client's", what)
		e.Suggestion = "Use profiles by name (list_profiles, create_new_session with profile); reading, writing or deleting one directly is for the server's operator."
		return e
	}
	return nil
}

// profileFor checks what every profile operation checks first: that the
// caller may (check), then the name (when field is not ""), and that the
// store keeps profiles.
func (m *Manager) profileFor(ctx context.Context, check func(context.Context) error, field, name string) (ProfileStore, error) {
	if err := check(ctx); err != nil {
		return nil, err
	}
	if field != "" {
		if err := proxy.ValidProfileName(field, name); err != nil {
			return nil, err
		}
	}
	return m.profileStore()
}

// may is allowProfiles(ctx, need) as a check for profileFor.
func (m *Manager) may(need string) func(context.Context) error {
	return func(ctx context.Context) error { return m.allowProfiles(ctx, need) }
}

// operator is operatorOnly(ctx, what) as a check for profileFor.
func operator(what string) func(context.Context) error {
	return func(ctx context.Context) error { return operatorOnly(ctx, what) }
}

// storeProfile stores a checked state as profile name's next version,
// whatever version is stored, and describes it with its live sessions.
func (m *Manager) storeProfile(ctx context.Context, ps ProfileStore, name string, state json.RawMessage, meta proxy.StorageState) (*proxy.Profile, error) {
	p, err := ps.PutProfile(ctx, name, state, meta, m.clock.Now().UTC(), -1)
	if err != nil {
		return nil, fmt.Errorf("saving profile %q: %w", name, err)
	}
	sessions, err := m.profileSessions(ctx)
	if err != nil {
		return nil, err
	}
	p.Sessions = sessions.of(name)
	return p, nil
}

// checkProfileState checks a storage state for a profile: its size first
// (PAYLOAD_TOO_LARGE), then its shape (INVALID_PARAMETERS naming the
// field). It returns the state compacted, and what it says about itself.
func (m *Manager) checkProfileState(state json.RawMessage) (json.RawMessage, proxy.StorageState, error) {
	if limit := m.opts.MaxProfileBytes; int64(len(state)) > limit {
		e := proxy.Errorf(proxy.ETOOLARGE, "the storage state is %d bytes, over the limit of %d (PROXY_PROFILE_MAX_BYTES)", len(state), limit)
		e.Details = map[string]any{"bytes": len(state), "limit": limit}
		return nil, proxy.StorageState{}, e
	}
	meta, err := proxy.CheckStorageState(state)
	if err != nil {
		return nil, proxy.StorageState{}, err
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, state); err != nil {
		return nil, proxy.StorageState{}, fmt.Errorf("compacting a storage state: %w", err)
	}
	return compact.Bytes(), meta, nil
}

// storageOf is the storage-state part of a worker's saved state (never its
// page: a profile is an identity, not a place).
func storageOf(saved json.RawMessage) (json.RawMessage, error) {
	var s upstream.SavedState
	if err := json.Unmarshal(saved, &s); err != nil {
		return nil, fmt.Errorf("decoding a saved state: %w", err)
	}
	if len(s.StorageState) == 0 {
		return nil, errors.New("the saved state has no storage state")
	}
	return s.StorageState, nil
}

// startState is a profile's storage state as a worker restores it: no
// page, so the session starts on a blank one.
func startState(storage json.RawMessage) (json.RawMessage, error) {
	b, err := json.Marshal(upstream.SavedState{StorageState: storage})
	if err != nil {
		return nil, fmt.Errorf("encoding a profile's state: %w", err)
	}
	return b, nil
}

// profileStart is what a create from a profile loaded, before it has a
// worker.
type profileStart struct {
	name    string
	version int64
	write   bool
	state   json.RawMessage // a worker's saved state: the storage, no page
}

// loadProfile reads the profile a create starts from, before a slot or a
// worker is taken: an unknown one is PROFILE_NOT_FOUND having cost nothing.
func (m *Manager) loadProfile(ctx context.Context, o proxy.BrowserOptions) (*profileStart, error) {
	if o.Profile == "" {
		return nil, nil
	}
	ps, err := m.profileFor(ctx, m.may(proxy.ProfilesUse), "profile", o.Profile)
	if err != nil {
		return nil, err
	}
	storage, version, err := ps.ProfileState(ctx, o.Profile)
	if err != nil {
		return nil, err
	}
	state, err := startState(storage)
	if err != nil {
		return nil, err
	}
	return &profileStart{name: o.Profile, version: version, write: o.ProfileWrite == nil || *o.ProfileWrite, state: state}, nil
}

// applyProfile gives a new session's worker the profile's state, within
// ctx and restoreStateTimeout. What failed is logged, not returned: an
// upstream message could quote the state.
func (m *Manager) applyProfile(ctx context.Context, w Worker, p *profileStart) error {
	rctx, cancel := context.WithTimeout(ctx, restoreStateTimeout)
	defer cancel()
	if err := w.RestoreState(rctx, p.state); err != nil {
		m.log.WarnContext(ctx, "starting a session from a profile", "profile", p.name, "worker_pid", w.PID(), "err", err)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return &proxy.Error{Code: proxy.EUNAVAILABLE, Message: fmt.Sprintf("the browser did not take profile %q's state; no session was created", p.name), Retryable: true,
			Suggestion: "Retry; if it fails again, check the profile (GET /profiles/{name}) or save it anew.", Details: map[string]any{"profile": p.name}}
	}
	return nil
}

// SaveProfile makes the current storage state of session sessionID
// profile name: a new profile, or its next version. The session is taken
// like a call takes it (a suspended one is revived). A session that
// started from this same profile now stands on the new version, so its
// own write-back does not take this save for someone else's.
func (m *Manager) SaveProfile(ctx context.Context, name, sessionID string) (*proxy.Profile, error) {
	if err := m.checkOpen(); err != nil {
		return nil, err
	}
	ps, err := m.profileFor(ctx, m.may(proxy.ProfilesSave), "name", name)
	if err != nil {
		return nil, err
	}
	l, err := m.acquire(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	defer m.release(l)
	if _, err := m.sup.ensureWorker(ctx, l); err != nil {
		return nil, withSessionID(err, l.id)
	}
	sctx, cancel := context.WithTimeout(upstream.WithIndexedDB(ctx), saveStateTimeout)
	saved, err := l.worker.SaveState(sctx)
	cancel()
	if err != nil {
		return nil, withSessionID(&proxy.Error{Code: proxy.EUNAVAILABLE, Message: "the session's browser state could not be read: " + err.Error(), Retryable: true}, l.id)
	}
	storage, err := storageOf(saved)
	if err != nil {
		return nil, err
	}
	storage, meta, err := m.checkProfileState(storage)
	if err != nil {
		return nil, withSessionID(err, l.id)
	}
	p, err := m.storeProfile(ctx, ps, name, storage, meta)
	if err != nil {
		return nil, err
	}
	if l.profile == name {
		m.standOn(ctx, l, p.Version)
	}
	m.log.InfoContext(ctx, "profile saved", "session_id", l.id, "profile", name, "version", p.Version, "bytes", p.Bytes)
	recordEvent(m.store, m.log, m.clock.Now(), l.id, proxy.EventProfileSaved, profileVersionDetail(name, p.Version))
	return p, nil
}

// standOn records that session l now stands on version of its profile, so
// that its own later write-back does not take that version for someone
// else's. The caller holds l's lock.
func (m *Manager) standOn(ctx context.Context, l *live, version int64) {
	l.profileVersion = version
	if err := m.profiles.SetSessionProfileVersion(context.WithoutCancel(ctx), l.id, version); err != nil {
		m.log.WarnContext(ctx, "recording the profile version a session stands on", "session_id", l.id, "profile", l.profile, "err", err)
	}
}

func profileVersionDetail(name string, version int64) string {
	return fmt.Sprintf("profile %s version %d", name, version)
}

// liveProfileSessions maps a profile name to the live (active or
// suspended) sessions started from it that the caller may see.
type liveProfileSessions map[string][]string

// of never returns nil: an empty list says "none", not "unknown".
func (s liveProfileSessions) of(name string) []string {
	if ids := s[name]; ids != nil {
		return ids
	}
	return []string{}
}

func (m *Manager) profileSessions(ctx context.Context) (liveProfileSessions, error) {
	all, err := m.store.ListSessions(ctx)
	if err != nil {
		return nil, err
	}
	out := liveProfileSessions{}
	for _, s := range all {
		if s.Profile == "" || !proxy.CanSee(ctx, s.Owner) {
			continue
		}
		if s.State == proxy.SessionActive || s.State == proxy.SessionSuspended {
			out[s.Profile] = append(out[s.Profile], s.ID)
		}
	}
	return out, nil
}

// ListProfiles returns every profile's metadata, by name.
func (m *Manager) ListProfiles(ctx context.Context) ([]*proxy.Profile, error) {
	ps, err := m.profileFor(ctx, m.may(proxy.ProfilesUse), "", "")
	if err != nil {
		return nil, err
	}
	list, err := ps.ListProfiles(ctx)
	if err != nil {
		return nil, err
	}
	sessions, err := m.profileSessions(ctx)
	if err != nil {
		return nil, err
	}
	for _, p := range list {
		p.Sessions = sessions.of(p.Name)
	}
	return list, nil
}

// GetProfile returns one profile's metadata (PROFILE_NOT_FOUND).
func (m *Manager) GetProfile(ctx context.Context, name string) (*proxy.Profile, error) {
	ps, err := m.profileFor(ctx, m.may(proxy.ProfilesUse), "name", name)
	if err != nil {
		return nil, err
	}
	p, err := ps.GetProfile(ctx, name)
	if err != nil {
		return nil, err
	}
	sessions, err := m.profileSessions(ctx)
	if err != nil {
		return nil, err
	}
	p.Sessions = sessions.of(name)
	return p, nil
}

// PutProfile stores a Playwright storage state as profile name (new, or
// its next version). The operator's.
func (m *Manager) PutProfile(ctx context.Context, name string, state json.RawMessage) (*proxy.Profile, error) {
	ps, err := m.profileFor(ctx, operator("writing a profile directly"), "name", name)
	if err != nil {
		return nil, err
	}
	state, meta, err := m.checkProfileState(state)
	if err != nil {
		return nil, err
	}
	p, err := m.storeProfile(ctx, ps, name, state, meta)
	if err != nil {
		return nil, err
	}
	m.log.InfoContext(ctx, "profile written by the operator", "profile", name, "version", p.Version, "bytes", p.Bytes)
	return p, nil
}

// ProfileState returns a profile's storage state. The operator's.
func (m *Manager) ProfileState(ctx context.Context, name string) (json.RawMessage, error) {
	ps, err := m.profileFor(ctx, operator("reading a profile's contents"), "name", name)
	if err != nil {
		return nil, err
	}
	state, _, err := ps.ProfileState(ctx, name)
	return state, err
}

// DeleteProfile removes a profile; sessions started from it keep their own
// copy, and do not bring it back when they close. The operator's.
func (m *Manager) DeleteProfile(ctx context.Context, name string) error {
	ps, err := m.profileFor(ctx, operator("deleting a profile"), "name", name)
	if err != nil {
		return err
	}
	if err := ps.DeleteProfile(ctx, name); err != nil {
		return err
	}
	m.log.InfoContext(ctx, "profile deleted", "profile", name)
	return nil
}

// writeBack makes saved, the browser state a session just had saved as it
// closes or is suspended, the next version of the profile it started from,
// unless the profile changed (or went) since: then the newer one stays and
// the session's timeline says why its state was not written. It never
// fails the close or suspend; the caller holds l's lock.
func (m *Manager) writeBack(ctx context.Context, l *live, saved json.RawMessage) {
	if l.profile == "" || !l.profileWrite || saved == nil || m.profiles == nil || l.profileVersion < 1 {
		return
	}
	ctx = context.WithoutCancel(ctx)
	fail := func(err error) {
		m.log.Warn("writing a session's state back to its profile", "session_id", l.id, "profile", l.profile, "err", err)
	}
	storage, err := storageOf(saved)
	if err != nil {
		fail(err)
		return
	}
	storage, meta, err := m.checkProfileState(storage)
	if err != nil {
		fail(err)
		return
	}
	p, err := m.profiles.PutProfile(ctx, l.profile, storage, meta, m.clock.Now().UTC(), l.profileVersion)
	switch {
	case errors.Is(err, proxy.ErrProfileMoved) || proxy.ErrorCode(err) == proxy.EPROFILEMISSING:
		detail := m.conflictDetail(ctx, l)
		m.log.Info("profile changed since the session started from it; not written back", "session_id", l.id, "profile", l.profile, "from_version", l.profileVersion)
		recordEvent(m.store, m.log, m.clock.Now(), l.id, proxy.EventProfileConflict, detail)
	case err != nil:
		fail(err)
	default:
		m.standOn(ctx, l, p.Version)
		m.log.Info("session state written back to its profile", "session_id", l.id, "profile", l.profile, "version", p.Version, "bytes", p.Bytes)
		recordEvent(m.store, m.log, m.clock.Now(), l.id, proxy.EventProfileSaved, profileVersionDetail(l.profile, p.Version))
	}
}

// conflictDetail says why a write-back was refused: the profile moved on
// to a newer version, or was deleted.
func (m *Manager) conflictDetail(ctx context.Context, l *live) string {
	const notWritten = "the session's state was not written back"
	cur, err := m.profiles.GetProfile(ctx, l.profile)
	switch {
	case proxy.ErrorCode(err) == proxy.EPROFILEMISSING:
		return fmt.Sprintf("profile %s was deleted since this session started from version %d; %s", l.profile, l.profileVersion, notWritten)
	case err != nil:
		return fmt.Sprintf("profile %s changed since this session started from version %d; %s", l.profile, l.profileVersion, notWritten)
	}
	return fmt.Sprintf("profile %s moved on to version %d since this session started from version %d; %s", l.profile, cur.Version, l.profileVersion, notWritten)
}

var _ proxy.ProfileService = (*Manager)(nil)
