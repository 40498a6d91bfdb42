package session

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
	_ "time/tzdata" // time zones are checked the same on hosts without a zoneinfo database

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/upstream"
)

// DeviceCatalog is Playwright's device descriptors by name, as the
// workers know them (real: *upstream.Devices).
type DeviceCatalog interface {
	Devices(ctx context.Context) (map[string]json.RawMessage, error)
}

// Bounds of a session's browser options. A viewport past maxViewportSide
// is refused rather than handed to the browser, where it costs memory in
// proportion to its area and fails late, inside the worker's start.
const (
	maxViewportSide = 10000
	maxUserAgent    = 1024
	deviceExamples  = 5
)

var localeRE = regexp.MustCompile(`^[A-Za-z]{2,8}(-[A-Za-z0-9]{1,8})*$`)

// commonDevices are offered first when a device name matches nothing.
var commonDevices = []string{"Desktop Chrome", "iPhone 15", "Pixel 7", "iPad Pro 11", "Galaxy S9+"}

// shapeOf checks o and turns it into what a worker is started with. Every
// refusal is INVALID_PARAMETERS naming its field: a value the browser
// refuses would otherwise surface as a failed worker start, retried and
// counted against the spawn circuit breaker.
func (m *Manager) shapeOf(ctx context.Context, o proxy.BrowserOptions) (upstream.Shape, error) {
	if o.IsZero() {
		return upstream.Shape{}, nil
	}
	ctxOpts := map[string]any{}
	if o.Device != "" {
		dev, err := m.device(ctx, o.Device)
		if err != nil {
			return upstream.Shape{}, err
		}
		var mobile struct {
			IsMobile bool `json:"isMobile"`
		}
		_ = json.Unmarshal(dev, &mobile) // a descriptor without it is not mobile
		if mobile.IsMobile && o.Browser == proxy.BrowserFirefox {
			return upstream.Shape{}, invalidOption("device", "%q is a mobile device, which Firefox cannot emulate; use chromium or webkit", o.Device)
		}
		if err := json.Unmarshal(dev, &ctxOpts); err != nil {
			return upstream.Shape{}, fmt.Errorf("device %q: %w", o.Device, err)
		}
		// The session's engine is its own choice (browser), never the
		// device's preference.
		delete(ctxOpts, "defaultBrowserType")
	}
	if v := o.Viewport; v != nil {
		for _, side := range []struct {
			name string
			n    int
		}{{"viewport.width", v.Width}, {"viewport.height", v.Height}} {
			if side.n < 1 || side.n > maxViewportSide {
				return upstream.Shape{}, invalidOption(side.name, "%s must be from 1 to %d pixels, not %d", side.name, maxViewportSide, side.n)
			}
		}
		ctxOpts["viewport"] = map[string]int{"width": v.Width, "height": v.Height}
	}
	if ua := o.UserAgent; ua != "" {
		if len(ua) > maxUserAgent || strings.ContainsFunc(ua, func(r rune) bool { return r < ' ' || r == 0x7f }) {
			return upstream.Shape{}, invalidOption("user_agent", "user_agent must be at most %d bytes of printable text", maxUserAgent)
		}
		ctxOpts["userAgent"] = ua
	}
	if o.Locale != "" {
		if len(o.Locale) > 35 || !localeRE.MatchString(o.Locale) {
			return upstream.Shape{}, invalidOption("locale", "locale %q is not a BCP 47 language tag such as en-US or fr", o.Locale)
		}
		ctxOpts["locale"] = o.Locale
	}
	if o.Timezone != "" {
		if err := checkTimezone(o.Timezone); err != nil {
			return upstream.Shape{}, err
		}
		ctxOpts["timezoneId"] = o.Timezone
	}
	switch o.ColorScheme {
	case "":
	case "light", "dark", "no-preference":
		ctxOpts["colorScheme"] = o.ColorScheme
	default:
		return upstream.Shape{}, invalidOption("color_scheme", "color_scheme %q must be light, dark or no-preference", o.ColorScheme)
	}
	switch o.Browser {
	case "", proxy.BrowserChromium, proxy.BrowserFirefox, proxy.BrowserWebKit:
	default:
		return upstream.Shape{}, invalidOption("browser", "browser %q must be chromium, firefox or webkit", o.Browser)
	}
	s := upstream.Shape{Browser: o.Browser}
	if len(ctxOpts) > 0 {
		raw, err := json.Marshal(ctxOpts)
		if err != nil {
			return upstream.Shape{}, fmt.Errorf("context options: %w", err)
		}
		s.Context = raw
	}
	return s, nil
}

func checkTimezone(tz string) error {
	bad := func() error {
		return invalidOption("timezone", "timezone %q is not an IANA time zone such as Europe/Paris or America/New_York", tz)
	}
	if tz == "Local" || len(tz) > 64 || strings.ContainsFunc(tz, func(r rune) bool {
		return !(r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || strings.ContainsRune("/_+-", r))
	}) {
		return bad()
	}
	if _, err := time.LoadLocation(tz); err != nil {
		return bad()
	}
	return nil
}

// device returns the descriptor named name, or INVALID_PARAMETERS listing
// a few that exist.
func (m *Manager) device(ctx context.Context, name string) (json.RawMessage, error) {
	if m.opts.Devices == nil {
		return nil, invalidOption("device", "device emulation is not available on this server")
	}
	list, err := m.opts.Devices.Devices(ctx)
	if err != nil {
		m.log.WarnContext(ctx, "reading the device catalogue", "err", err)
		return nil, &proxy.Error{Code: proxy.EUNAVAILABLE, Message: "the device catalogue cannot be read: " + err.Error(), Retryable: true,
			Suggestion: "Retry in a few seconds, or pass viewport and user_agent instead of device."}
	}
	if d, ok := list[name]; ok {
		return d, nil
	}
	some := similarDevices(list, name)
	e := invalidOption("device", "unknown device %q; known devices include %s", name, strings.Join(some, ", "))
	e.Details["examples"] = some
	return nil, e
}

// similarDevices picks up to deviceExamples names of list: those sharing a
// word with name first, then common ones.
func similarDevices(list map[string]json.RawMessage, name string) []string {
	names := make([]string, 0, len(list))
	for n := range list {
		names = append(names, n)
	}
	slices.Sort(names)
	var out []string
	add := func(n string) {
		if len(out) < deviceExamples && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	for _, w := range strings.Fields(strings.ToLower(name)) {
		for _, n := range names {
			if strings.Contains(strings.ToLower(n), w) {
				add(n)
			}
		}
	}
	for _, n := range commonDevices {
		if _, ok := list[n]; ok {
			add(n)
		}
	}
	for _, n := range names {
		add(n)
	}
	return out
}

func invalidOption(field, format string, args ...any) *proxy.Error {
	e := proxy.Errorf(proxy.EINVALID, format, args...)
	e.Details = map[string]any{"field": field}
	return e
}
