package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"
)

// Profile is a named, saved browser identity: a Playwright storage state
// (cookies, localStorage, IndexedDB) kept encrypted, described here by its
// metadata only. Nothing in a Profile is secret: its contents never leave
// the store except through ProfileService.ProfileState, the operator's.
type Profile struct {
	Name string `json:"name"`
	// Origins are the sites the state holds something for: the origins of
	// its localStorage and IndexedDB, and its cookies' domains, sorted.
	Origins []string `json:"origins"`
	// Version counts the states saved under the name, from 1.
	Version   int64     `json:"version"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
	// CookiesExpireAt is the earliest expiry among its persistent cookies
	// (nil when it has none): when a login it holds may end.
	CookiesExpireAt *time.Time `json:"cookies_expire_at"`
	// Sessions are the live (active or suspended) sessions started from it
	// that the caller may see.
	Sessions []string `json:"sessions"`
	// Bytes is the size of its storage state.
	Bytes int `json:"bytes"`
}

// ProfileService manages login profiles. MCP clients may save, list and
// use them (PROXY_PROFILES); reading a profile's contents and deleting one
// are the operator's.
type ProfileService interface {
	// SaveProfile makes the current storage state of a session the caller
	// may see profile name: a new profile, or its next version.
	SaveProfile(ctx context.Context, name, sessionID string) (*Profile, error)
	// ListProfiles returns every profile, by name.
	ListProfiles(ctx context.Context) ([]*Profile, error)
	// GetProfile returns one profile's metadata (PROFILE_NOT_FOUND).
	GetProfile(ctx context.Context, name string) (*Profile, error)
	// PutProfile stores a Playwright storage state as profile name (new,
	// or its next version). The operator's.
	PutProfile(ctx context.Context, name string, state json.RawMessage) (*Profile, error)
	// ProfileState returns a profile's storage state. The operator's.
	ProfileState(ctx context.Context, name string) (json.RawMessage, error)
	// DeleteProfile removes a profile; sessions started from it keep their
	// own copy. The operator's.
	DeleteProfile(ctx context.Context, name string) error
}

// ErrProfileMoved is a conditional profile write refused because the
// profile changed (or went) since the version the writer started from.
var ErrProfileMoved = errors.New("profile changed since the session started from it")

// Profile modes (PROXY_PROFILES): what MCP clients may do with profiles.
const (
	ProfilesOff  = "off"  // profiles are not offered to MCP clients
	ProfilesUse  = "use"  // list them and start sessions from them
	ProfilesSave = "save" // and save sessions as profiles (the default)
)

var profileName = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,63}$`)

// ValidProfileName refuses a name that is not [a-z0-9][a-z0-9._-]{0,63}
// with INVALID_PARAMETERS naming field.
func ValidProfileName(field, name string) error {
	if profileName.MatchString(name) {
		return nil
	}
	e := Errorf(EINVALID, "%s %q is not a profile name: 1 to 64 of a-z, 0-9, '.', '_', '-', starting with a letter or digit", field, name)
	e.Details = map[string]any{"field": field}
	return e
}

// ProfileNotFound is the error for an unknown profile name.
func ProfileNotFound(name string) *Error {
	e := Errorf(EPROFILEMISSING, "no profile %q", name)
	e.Details = map[string]any{"profile": name}
	return e
}

// StorageState is what a Playwright storage state says about itself,
// without its values.
type StorageState struct {
	Origins         []string
	CookiesExpireAt *time.Time
}

// storageState is Playwright's storage-state JSON, as far as it is checked.
type storageState struct {
	Cookies []struct {
		Name     *string  `json:"name"`
		Value    *string  `json:"value"`
		Domain   *string  `json:"domain"`
		Path     *string  `json:"path"`
		Expires  *float64 `json:"expires"`
		HTTPOnly *bool    `json:"httpOnly"`
		Secure   *bool    `json:"secure"`
		SameSite *string  `json:"sameSite"`
	} `json:"cookies"`
	Origins []struct {
		Origin       *string `json:"origin"`
		LocalStorage []struct {
			Name  *string `json:"name"`
			Value *string `json:"value"`
		} `json:"localStorage"`
		IndexedDB json.RawMessage `json:"indexedDB"`
	} `json:"origins"`
}

// CheckStorageState checks that raw is a Playwright storage state (what
// context.storageState() writes: cookies and origins) and describes it.
// A malformed one is INVALID_PARAMETERS naming the first bad field
// ("cookies[3].domain"). No value of the state is ever put in an error.
func CheckStorageState(raw json.RawMessage) (StorageState, error) {
	var st storageState
	bad := func(field, why string) (StorageState, error) {
		e := Errorf(EINVALID, "storage state: %s %s", field, why)
		e.Details = map[string]any{"field": field}
		return StorageState{}, e
	}
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return bad("state", "must be a JSON object with cookies and origins")
	}
	if err := json.Unmarshal(trimmed, &st); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return bad(te.Field, "must be of type "+jsonType(te.Type.Kind())+", not "+te.Value)
		}
		return bad("state", "is not valid JSON")
	}
	var probe map[string]json.RawMessage
	_ = json.Unmarshal(trimmed, &probe) // it decoded above
	if _, ok := probe["cookies"]; !ok {
		return bad("cookies", "is missing")
	}
	if _, ok := probe["origins"]; !ok {
		return bad("origins", "is missing")
	}
	sites := map[string]bool{}
	var earliest *time.Time
	for i, c := range st.Cookies {
		f := fmt.Sprintf("cookies[%d]", i)
		switch {
		case c.Name == nil:
			return bad(f+".name", "is missing")
		case c.Value == nil:
			return bad(f+".value", "is missing")
		case c.Domain == nil || *c.Domain == "":
			return bad(f+".domain", "is missing")
		case c.Path == nil:
			return bad(f+".path", "is missing")
		case c.Expires == nil:
			return bad(f+".expires", "is missing (-1 for a session cookie)")
		case c.SameSite != nil && *c.SameSite != "Strict" && *c.SameSite != "Lax" && *c.SameSite != "None":
			return bad(f+".sameSite", "must be Strict, Lax or None")
		}
		sites[strings.TrimPrefix(*c.Domain, ".")] = true
		if *c.Expires > 0 {
			t := time.Unix(int64(*c.Expires), 0).UTC()
			if earliest == nil || t.Before(*earliest) {
				earliest = &t
			}
		}
	}
	for i, o := range st.Origins {
		f := fmt.Sprintf("origins[%d]", i)
		if o.Origin == nil || *o.Origin == "" {
			return bad(f+".origin", "is missing")
		}
		if !strings.Contains(*o.Origin, "://") {
			return bad(f+".origin", "must be an origin such as https://example.com")
		}
		for j, kv := range o.LocalStorage {
			switch {
			case kv.Name == nil:
				return bad(fmt.Sprintf("%s.localStorage[%d].name", f, j), "is missing")
			case kv.Value == nil:
				return bad(fmt.Sprintf("%s.localStorage[%d].value", f, j), "is missing")
			}
		}
		if len(o.IndexedDB) > 0 && string(o.IndexedDB) != "null" && o.IndexedDB[0] != '[' {
			return bad(f+".indexedDB", "must be an array")
		}
		sites[*o.Origin] = true
	}
	out := StorageState{Origins: make([]string, 0, len(sites)), CookiesExpireAt: earliest}
	for s := range sites {
		out.Origins = append(out.Origins, s)
	}
	sort.Strings(out.Origins)
	return out, nil
}
