package mcpserver

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
)

// profileParam is the query parameter of /mcp and /ws that names the login
// profile an MCP client's default session starts from.
const profileParam = "profile"

// WithProfiles answers save_profile and list_profiles through p: the
// session manager in proxy-server's own process, mcp-bridge's HTTP client.
func WithProfiles(p proxy.ProfileService) Option { return func(c *config) { c.profiles = p } }

// WithDefaultProfile makes every client's default session start from a
// copy of login profile name (mcp-bridge --profile). A client of /mcp or
// /ws names its own with ?profile=, which wins.
func WithDefaultProfile(name string) Option { return func(c *config) { c.defaultProfile = name } }

// queryProfile is the profile a request's URL names ("" for none), refused
// when it could not be a profile's name.
func queryProfile(q map[string][]string) (string, error) {
	list, given := q[profileParam]
	if !given {
		return "", nil
	}
	if len(list) != 1 {
		return "", proxy.Errorf(proxy.EINVALID, "query parameter %s given %d times; name one profile", profileParam, len(list))
	}
	if err := proxy.ValidProfileName(profileParam, list[0]); err != nil {
		return "", err
	}
	return list[0], nil
}

// setClientProfile makes the default session of MCP session mcpSessionID
// start from profile name, before it has one.
func (s *Server) setClientProfile(mcpSessionID, name string) {
	if name == "" {
		return
	}
	d := s.defaultOf(mcpSessionID)
	d.mu.Lock()
	defer d.mu.Unlock()
	d.profile = name
}

// profileOf is the profile a client's default session starts from: its
// own (?profile=), else the server's (WithDefaultProfile); "" for none.
// The caller holds d.mu.
func (s *Server) profileOf(d *defaultSession) string {
	if d.profile != "" {
		return d.profile
	}
	return s.defaultProfile
}

// noProfiles is the refusal of a profile tool where no profiles are served.
func noProfiles() error {
	return proxy.Errorf(proxy.ETOOLMISSING, "this server keeps no login profiles")
}

// saveProfile answers save_profile: the state of the session named (else
// the caller's default one) becomes profile name. The answer describes the
// profile; its contents never leave the store.
func (s *Server) saveProfile(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	if s.profiles == nil {
		return s.errorResult(ctx, noProfiles()), nil
	}
	name, _ := req.GetArguments()["name"].(string)
	if err := proxy.ValidProfileName("name", name); err != nil {
		return s.errorResult(ctx, err), nil
	}
	// Saving a session made only for that would save nothing worth
	// keeping: no page was ever signed in to.
	id, err := s.existingSession(ctx, req, "sign in with the browser tools first, then save_profile")
	if err != nil {
		return s.errorResult(ctx, err), nil
	}
	p, err := s.profiles.SaveProfile(s.acting(ctx), name, id)
	if err != nil {
		return s.errorResult(ctx, err), nil
	}
	lines := []string{fmt.Sprintf("profile: %s version %d", p.Name, p.Version), "session_id: " + id}
	if len(p.Origins) > 0 {
		lines = append(lines, "origins: "+strings.Join(p.Origins, ", "))
	}
	if p.CookiesExpireAt != nil {
		lines = append(lines, "cookies_expire_at: "+p.CookiesExpireAt.UTC().Format(time.RFC3339))
	}
	return mcp.NewToolResultText(strings.Join(lines, "\n")), nil
}

// listProfiles answers list_profiles: one line per profile, what it is for
// and until when, never what it holds.
func (s *Server) listProfiles(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	if s.profiles == nil {
		return s.errorResult(ctx, noProfiles()), nil
	}
	ps, err := s.profiles.ListProfiles(s.acting(ctx))
	if err != nil {
		return s.errorResult(ctx, err), nil
	}
	if len(ps) == 0 {
		return mcp.NewToolResultText("no profiles yet: sign in, then save_profile(name)"), nil
	}
	lines := make([]string, 0, len(ps))
	for _, p := range ps {
		lines = append(lines, profileLine(p))
	}
	return mcp.NewToolResultText(strings.Join(lines, "\n")), nil
}

// profileLine is one profile in list_profiles' answer.
func profileLine(p *proxy.Profile) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: version %d", p.Name, p.Version)
	if len(p.Origins) > 0 {
		b.WriteString(", origins " + strings.Join(p.Origins, " "))
	}
	b.WriteString(", updated " + p.UpdatedAt.UTC().Format(time.RFC3339))
	if p.CookiesExpireAt != nil {
		b.WriteString(", cookies expire " + p.CookiesExpireAt.UTC().Format(time.RFC3339))
	}
	switch n := len(p.Sessions); n {
	case 0:
	case 1:
		b.WriteString(", 1 live session")
	default:
		fmt.Fprintf(&b, ", %d live sessions", n)
	}
	return b.String()
}

// existingSession is the session a call names (session_id), else the
// caller's default one, which it never creates: a tool that needs a page
// already opened refuses, saying what to do first.
func (s *Server) existingSession(ctx context.Context, req mcp.CallToolRequest, first string) (string, error) {
	id, err := optionalString(req, "session_id")
	if err != nil || id != "" {
		return id, err
	}
	if id = s.DefaultSessionOf(clientKey(ctx)); id == "" {
		return "", proxy.Errorf(proxy.EINVALID, "you have no browser session yet: %s", first)
	}
	return id, nil
}

// optionalString is the string argument key, "" when absent; a value of
// another type is refused rather than read as absent.
func optionalString(req mcp.CallToolRequest, key string) (string, error) {
	v, ok := req.GetArguments()[key]
	if !ok || v == nil {
		return "", nil
	}
	if s, ok := v.(string); ok {
		return s, nil
	}
	return "", proxy.Errorf(proxy.EINVALID, "%s must be a string, got %v", key, v)
}
