package nodes

import (
	"errors"
	"fmt"
	"net/http"
	"net/textproto"
	"net/url"
	"strconv"
	"strings"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
)

// DefaultCapacity is a node's capacity when its endpoint names none: about
// what one browser node of two cores serves before every call slows down.
const DefaultCapacity = 10

// ErrEndpoint is wrapped by every error ParseEndpoints returns.
var ErrEndpoint = errors.New("invalid browser endpoint")

// Endpoint is one remote Playwright browser server, as configured.
type Endpoint struct {
	// ID names the node in /nodes and in a session's node field: the
	// endpoint's name= option, else its host and port.
	ID string
	// URL is what workers connect to (ws:// or wss://), credentials
	// included; never show it, show Masked.
	URL string
	// Header is sent with every connection to the node (a hosted
	// service's API key, say); never shown.
	Header http.Header
	// Capacity is how many sessions the node may hold at once.
	Capacity int
	// Browser is the engine the node's server runs (firefox or webkit;
	// "" or chromium is Chromium): a session is placed only on a node of
	// its engine.
	Browser string
}

// Engine is the browser engine the node serves, chromium when unnamed.
func (e Endpoint) Engine() string {
	if e.Browser == "" {
		return proxy.BrowserChromium
	}
	return e.Browser
}

// ParseEndpoints reads PROXY_BROWSER_ENDPOINTS: endpoints separated by
// commas or white space, each a ws:// or wss:// URL whose fragment carries
// options joined by '&': max=N (capacity), name=ID, header=Name:Value
// (repeatable; escape what a URL cannot hold), and browser=chromium|firefox|
// webkit (the engine the node serves, chromium by default), e.g.
//
//	ws://10.0.0.5:3000/pw#max=20,wss://browser.example/pw#name=hosted&header=X-Api-Key:k
//	ws://10.0.0.6:3000/pw#browser=firefox
func ParseEndpoints(s string) ([]Endpoint, error) {
	fields := strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' })
	var eps []Endpoint
	seen := map[string]int{}
	for i, f := range fields {
		ep, err := parseEndpoint(f)
		if err != nil {
			return nil, fmt.Errorf("PROXY_BROWSER_ENDPOINTS entry %d: %w", i+1, err)
		}
		if n := seen[ep.ID]; n > 0 {
			seen[ep.ID] = n + 1
			ep.ID = fmt.Sprintf("%s-%d", ep.ID, n+1)
		} else {
			seen[ep.ID] = 1
		}
		eps = append(eps, ep)
	}
	return eps, nil
}

func parseEndpoint(s string) (Endpoint, error) {
	u, err := url.Parse(s)
	if err != nil {
		// url.Error repeats the whole string, credentials and all.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return Endpoint{}, fmt.Errorf("%w: %q: %w", ErrEndpoint, maskRaw(s), err)
	}
	if u.Scheme != "ws" && u.Scheme != "wss" {
		return Endpoint{}, fmt.Errorf("%w: %s: the scheme must be ws or wss", ErrEndpoint, Mask(u))
	}
	if u.Hostname() == "" {
		return Endpoint{}, fmt.Errorf("%w: %s: no host", ErrEndpoint, Mask(u))
	}
	ep := Endpoint{ID: u.Host, Capacity: DefaultCapacity, Header: http.Header{}}
	opts, err := url.ParseQuery(u.Fragment)
	if err != nil {
		return Endpoint{}, fmt.Errorf("%w: %s: options after '#': %w", ErrEndpoint, Mask(u), err)
	}
	for key, vals := range opts {
		for _, v := range vals {
			switch key {
			case "max":
				n, err := strconv.Atoi(v)
				if err != nil || n < 1 {
					return Endpoint{}, fmt.Errorf("%w: %s: max=%q must be a whole number ≥ 1", ErrEndpoint, Mask(u), v)
				}
				ep.Capacity = n
			case "name":
				if v == "" || strings.ContainsAny(v, "/ ") {
					return Endpoint{}, fmt.Errorf("%w: %s: name=%q must be non-empty, without '/' or spaces", ErrEndpoint, Mask(u), v)
				}
				ep.ID = v
			case "header":
				name, value, ok := strings.Cut(v, ":")
				name = strings.TrimSpace(name)
				if !ok || name == "" || !validHeaderName(name) {
					return Endpoint{}, fmt.Errorf("%w: %s: header= must be Name:Value", ErrEndpoint, Mask(u))
				}
				ep.Header.Add(textproto.CanonicalMIMEHeaderKey(name), strings.TrimSpace(value))
			case "browser":
				switch v {
				case proxy.BrowserChromium, proxy.BrowserFirefox, proxy.BrowserWebKit:
					ep.Browser = v
				default:
					return Endpoint{}, fmt.Errorf("%w: %s: browser=%q must be chromium, firefox or webkit", ErrEndpoint, Mask(u), v)
				}
			default:
				return Endpoint{}, fmt.Errorf("%w: %s: unknown option %q (max, name, header, browser)", ErrEndpoint, Mask(u), key)
			}
		}
	}
	u.Fragment, u.RawFragment = "", ""
	ep.URL = u.String()
	return ep, nil
}

func validHeaderName(s string) bool {
	for _, r := range s {
		if r <= ' ' || r >= 0x7f || strings.ContainsRune("\"(),/:;<=>?@[\\]{}", r) {
			return false
		}
	}
	return true
}

// Masked is the endpoint as it may be shown: see Mask.
func (e Endpoint) Masked() string {
	u, err := url.Parse(e.URL)
	if err != nil {
		return maskRaw(e.URL)
	}
	return Mask(u)
}

// Mask returns u without what may be a credential: the password of its
// user info and the value of every query parameter (a hosted service's
// token travels as ?token=…). Headers are never shown at all.
func Mask(u *url.URL) string {
	m := *u
	if m.User != nil {
		if _, ok := m.User.Password(); ok {
			m.User = url.UserPassword(m.User.Username(), "xxxxx")
		}
	}
	if m.RawQuery != "" {
		q := m.Query()
		for k := range q {
			q[k] = []string{"xxxxx"}
		}
		m.RawQuery = q.Encode()
	}
	m.Fragment, m.RawFragment = "", ""
	return m.String()
}

// maskRaw shows only the scheme and host of a string that does not parse.
func maskRaw(s string) string {
	if i := strings.Index(s, "://"); i >= 0 {
		rest := s[i+3:]
		if j := strings.IndexAny(rest, "/?#"); j >= 0 {
			rest = rest[:j]
		}
		if k := strings.LastIndex(rest, "@"); k >= 0 {
			rest = rest[k+1:]
		}
		return s[:i+3] + rest + "/…"
	}
	return "(unparsable)"
}
