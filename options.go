package proxy

// Browser engines a session may ask for (BrowserOptions.Browser). Only
// Chromium runs on the server itself; the others need a browser node
// serving that engine.
const (
	BrowserChromium = "chromium"
	BrowserFirefox  = "firefox"
	BrowserWebKit   = "webkit"
)

// Viewport is a page's size in CSS pixels.
type Viewport struct {
	Width  int `json:"width"`
	Height int `json:"height"`
}

// BrowserOptions shape one session's browser context: what its pages see
// of the window, the user agent, the language, the time zone and the
// colour scheme, and on which browser engine it runs. The zero value is
// the server's defaults, which a warm spare worker already has.
type BrowserOptions struct {
	Viewport  *Viewport `json:"viewport,omitempty"`
	UserAgent string    `json:"user_agent,omitempty"`
	// Device is one of Playwright's device descriptors ("iPhone 15"): its
	// viewport, user agent, scale factor and touch; the other fields win
	// over what it sets.
	Device string `json:"device,omitempty"`
	// Locale is a BCP 47 language tag (navigator.language, Accept-Language).
	Locale string `json:"locale,omitempty"`
	// Timezone is an IANA time zone id ("Europe/Paris").
	Timezone string `json:"timezone,omitempty"`
	// ColorScheme is "light", "dark" or "no-preference".
	ColorScheme string `json:"color_scheme,omitempty"`
	// Browser is the engine: chromium (the default), firefox or webkit.
	Browser string `json:"browser,omitempty"`
}

// IsZero reports whether o asks for nothing beyond the defaults.
func (o BrowserOptions) IsZero() bool {
	return o.Viewport == nil && o.UserAgent == "" && o.Device == "" && o.Locale == "" &&
		o.Timezone == "" && o.ColorScheme == "" && (o.Browser == "" || o.Browser == BrowserChromium)
}
