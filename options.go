package proxy

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
)

// Browser engines a session may ask for (BrowserOptions.Browser). Only
// Chromium runs on the server itself; the others need a browser node
// serving that engine.
const (
	BrowserChromium = "chromium"
	BrowserFirefox  = "firefox"
	BrowserWebKit   = "webkit"
)

// UpstreamIdleTimeoutFlag is @playwright/mcp's own idle timeout. Every
// worker has it switched off and the configuration refuses it in
// PLAYWRIGHT_ARGS: when an idle session gives its browser up is the
// session manager's decision (PROXY_SESSION_IDLE_TIMEOUT).
const UpstreamIdleTimeoutFlag = "--idle-timeout"

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

	// Profile starts the session from a copy of this login profile's
	// storage state. It shapes nothing: a warm spare serves it.
	Profile string `json:"profile,omitempty"`
	// ProfileWrite false keeps the session from writing its state back to
	// Profile when it closes or is suspended (nil: it does).
	ProfileWrite *bool `json:"profile_write,omitempty"`
}

// Shape is o without what does not shape the browser context (the
// profile).
func (o BrowserOptions) Shape() BrowserOptions {
	o.Profile, o.ProfileWrite = "", nil
	return o
}

// IsZero reports whether o asks for nothing beyond the defaults; a
// profile alone is still zero (it shapes nothing).
func (o BrowserOptions) IsZero() bool {
	return o.Viewport == nil && o.UserAgent == "" && o.Device == "" && o.Locale == "" &&
		o.Timezone == "" && o.ColorScheme == "" && (o.Browser == "" || o.Browser == BrowserChromium)
}

// DecodeBrowserOptions reads browser options from JSON (a create's body or
// arguments), refusing unknown fields and values of the wrong type with
// INVALID_PARAMETERS naming the field, and a profile that could not be a
// profile's name. Their other values are checked where the session is made.
func DecodeBrowserOptions(raw []byte) (BrowserOptions, error) {
	var o BrowserOptions
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return o, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&o); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			e := Errorf(EINVALID, "%s must be of type %s, not %s", te.Field, jsonType(te.Type.Kind()), te.Value)
			e.Details = map[string]any{"field": te.Field}
			return BrowserOptions{}, e
		}
		if f, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
			f = strings.Trim(f, `"`)
			e := Errorf(EINVALID, "unknown field %q (viewport, user_agent, device, locale, timezone, color_scheme, browser, profile, profile_write)", f)
			e.Details = map[string]any{"field": f}
			return BrowserOptions{}, e
		}
		return BrowserOptions{}, Errorf(EINVALID, "browser options: %v", err)
	}
	if o.Profile != "" {
		if err := ValidProfileName("profile", o.Profile); err != nil {
			return BrowserOptions{}, err
		}
	}
	return o, nil
}

func jsonType(k reflect.Kind) string {
	switch k {
	case reflect.String:
		return "string"
	case reflect.Int, reflect.Int64:
		return "integer"
	case reflect.Float64:
		return "number"
	case reflect.Bool:
		return "boolean"
	case reflect.Slice:
		return "array"
	case reflect.Struct, reflect.Pointer, reflect.Map:
		return "object"
	}
	return k.String()
}

// OneOf is the options of a CreateSession call's variadic argument: the
// zero value when none was given, an error when more than one was.
func OneOf(opts []BrowserOptions) (BrowserOptions, error) {
	switch len(opts) {
	case 0:
		return BrowserOptions{}, nil
	case 1:
		return opts[0], nil
	}
	return BrowserOptions{}, Errorf(EINVALID, "one set of browser options per session, not %d", len(opts))
}
