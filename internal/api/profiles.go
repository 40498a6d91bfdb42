package api

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/go-chi/chi/v5"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/wire"
)

// DefaultMaxProfileBytes bounds a profile's storage state sent to PUT
// /profiles/{name} when WithMaxProfileBytes sets nothing
// (PROXY_PROFILE_MAX_BYTES' default).
const DefaultMaxProfileBytes = 5 << 20

// WithProfiles serves the login profiles at /profiles and saving a
// session as one at POST /sessions/{id}/profile.
func WithProfiles(p proxy.ProfileService) Option { return func(s *Server) { s.profiles = p } }

// WithMaxProfileBytes bounds the storage state PUT /profiles/{name} takes
// (PROXY_PROFILE_MAX_BYTES), whatever the body limit of other requests.
func WithMaxProfileBytes(n int64) Option { return func(s *Server) { s.maxProfileBytes = n } }

// routeProfiles registers the profile routes. Listing, reading metadata
// and saving a session are an MCP client's (save_profile, list_profiles);
// storing a state, reading one and deleting are the operator's, and the
// session manager refuses them to a client identity too.
func (s *Server) routeProfiles(r chi.Router) {
	if s.profiles == nil {
		return
	}
	s.clientRoute(r, http.MethodGet, "/profiles", s.handleListProfiles)
	s.clientRoute(r, http.MethodGet, "/profiles/{name}", s.handleGetProfile)
	s.clientRoute(r, http.MethodPost, "/sessions/{id}/profile", s.handleSaveProfile)
	r.Put("/profiles/{name}", s.handlePutProfile)
	r.Get("/profiles/{name}/state", s.handleProfileState)
	r.Delete("/profiles/{name}", s.handleDeleteProfile)
}

// profileUpload reports whether r stores a profile's state: its body is
// bounded by PROXY_PROFILE_MAX_BYTES instead of the server's body limit.
func (s *Server) profileUpload(r *http.Request) bool {
	return s.profiles != nil && r.Method == http.MethodPut && strings.HasPrefix(r.URL.Path, "/profiles/") &&
		!strings.Contains(strings.TrimPrefix(r.URL.Path, "/profiles/"), "/")
}

// profileName is the route's profile name, refused before anything else
// when it could not be one.
func profileName(r *http.Request) (string, error) {
	name := chi.URLParam(r, "name")
	return name, proxy.ValidProfileName("name", name)
}

func (s *Server) handleListProfiles(w http.ResponseWriter, r *http.Request) {
	ps, err := s.profiles.ListProfiles(r.Context())
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	if ps == nil {
		ps = []*proxy.Profile{}
	}
	s.writeJSON(w, http.StatusOK, wire.ProfilesBody{Profiles: ps})
}

func (s *Server) handleGetProfile(w http.ResponseWriter, r *http.Request) {
	name, err := profileName(r)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	p, err := s.profiles.GetProfile(r.Context(), name)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	s.writeJSON(w, http.StatusOK, p)
}

// handlePutProfile stores the body, a Playwright storage state, as profile
// name: 201 for a new profile, 200 for its next version. A body over the
// limit is refused unread (by its Content-Length) or as soon as the limit
// is passed, before any parsing.
func (s *Server) handlePutProfile(w http.ResponseWriter, r *http.Request) {
	name, err := profileName(r)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	limit := s.maxProfileBytes
	if limit <= 0 {
		limit = DefaultMaxProfileBytes
	}
	if r.ContentLength > limit {
		s.writeErr(w, r, tooLarge(limit))
		return
	}
	state, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		if mbe := (*http.MaxBytesError)(nil); errors.As(err, &mbe) {
			s.writeErr(w, r, tooLarge(limit))
			return
		}
		s.writeErr(w, r, proxy.Errorf(proxy.EINVALID, "reading the storage state: %v", err))
		return
	}
	if !utf8.Valid(state) {
		s.writeErr(w, r, proxy.Errorf(proxy.EINVALID, "storage state is not valid UTF-8"))
		return
	}
	// Checked here too, so that a malformed state is refused naming its
	// field before the service is asked anything.
	if _, err := proxy.CheckStorageState(state); err != nil {
		s.writeErr(w, r, err)
		return
	}
	p, err := s.profiles.PutProfile(r.Context(), name, state)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	s.writeJSON(w, createdOrOK(p), p)
}

// tooLarge is the refusal of a storage state over limit bytes.
func tooLarge(limit int64) *proxy.Error {
	e := proxy.Errorf(proxy.ETOOLARGE, "storage state is larger than %d bytes (PROXY_PROFILE_MAX_BYTES)", limit)
	e.Details = map[string]any{"limit_bytes": limit}
	return e
}

// createdOrOK is 201 for a profile's first version, 200 for a later one.
func createdOrOK(p *proxy.Profile) int {
	if p.Version == 1 {
		return http.StatusCreated
	}
	return http.StatusOK
}

// handleProfileState answers a profile's storage state as a file to save:
// never cached, and not a page a browser would show.
func (s *Server) handleProfileState(w http.ResponseWriter, r *http.Request) {
	name, err := profileName(r)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	state, err := s.profiles.ProfileState(r.Context(), name)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(state)))
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="%s.json"`, name))
	w.WriteHeader(http.StatusOK)
	if _, err := w.Write(state); err != nil {
		s.log.Debug("writing response", "err", err)
	}
}

func (s *Server) handleDeleteProfile(w http.ResponseWriter, r *http.Request) {
	name, err := profileName(r)
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	if err := s.profiles.DeleteProfile(r.Context(), name); err != nil {
		s.writeErr(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// handleSaveProfile makes session id's state profile name: save_profile
// over HTTP, as mcp-bridge sends it.
func (s *Server) handleSaveProfile(w http.ResponseWriter, r *http.Request) {
	var body wire.SaveProfileBody
	if err := decodeBody(r, &body, false); err != nil {
		s.writeErr(w, r, err)
		return
	}
	if err := proxy.ValidProfileName("name", body.Name); err != nil {
		s.writeErr(w, r, err)
		return
	}
	p, err := s.profiles.SaveProfile(r.Context(), body.Name, chi.URLParam(r, "id"))
	if err != nil {
		s.writeErr(w, r, err)
		return
	}
	s.writeJSON(w, createdOrOK(p), p)
}
