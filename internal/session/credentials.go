package session

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/policy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/redact"
)

// Credential vault limits.
const (
	// maxCredentials bounds the vault; past it the oldest entry goes (its
	// placeholder then reaches the browser as typed, and its value is no
	// longer masked in new records).
	maxCredentials = 256
	// maxCredentialBytes bounds one value: a password or a token, not a
	// document, and every recorded text is searched for each value.
	maxCredentialBytes = 8 << 10
	// credPrefix starts every credential name; revealing looks for it
	// before decoding anything.
	credPrefix = "cred_"
)

// credentials is the credential vault: values the model must be able to
// type into a page without ever seeing them (the authenticate prompt's
// password). The model only gets a placeholder, policy.Mask(name); the
// manager puts the value back into a call's params just before forwarding
// them (reveal) and masks the value in everything recorded or returned
// (mask). Values live in memory only: they are never stored, logged, or
// returned. The zero value is an empty vault, safe for concurrent use.
type credentials struct {
	mu     sync.Mutex
	values map[string]string // name → value
	order  []string          // names, oldest first
	// Built on demand from values and dropped by every add (a nil
	// Replacer: not built).
	masker, revealer redact.Redactor
}

// add stores value and returns its name. The same value gets the same name
// (refreshed as the newest), so that masking never has to choose between two
// placeholders for one value.
func (c *credentials) add(value string) (string, error) {
	switch {
	case value == "":
		return "", proxy.Errorf(proxy.EINVALID, "credential value is empty")
	case len(value) < policy.MinSecretLen:
		// Never echo the value itself.
		return "", proxy.Errorf(proxy.EINVALID, "credential value is shorter than %d bytes: it would be masked inside ordinary text everywhere", policy.MinSecretLen)
	case len(value) > maxCredentialBytes:
		return "", proxy.Errorf(proxy.EINVALID, "credential value is longer than %d bytes", maxCredentialBytes)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for name, v := range c.values {
		if v == value {
			c.order = append(slices.DeleteFunc(c.order, func(n string) bool { return n == name }), name)
			return name, nil
		}
	}
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("credential name: %w", err)
	}
	name := credPrefix + hex.EncodeToString(b[:])
	if c.values == nil {
		c.values = make(map[string]string)
	}
	c.values[name] = value
	c.order = append(c.order, name)
	for len(c.order) > maxCredentials {
		delete(c.values, c.order[0])
		c.order = c.order[1:]
	}
	c.masker, c.revealer = redact.Redactor{}, redact.Redactor{}
	return name, nil
}

// redactors returns the masking and revealing redactors; for an empty
// vault they are zero Redactors, which change nothing.
func (c *credentials) redactors() (masker, revealer redact.Redactor) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.values) == 0 {
		return redact.Redactor{}, redact.Redactor{}
	}
	if c.masker.Replacer == nil {
		c.masker, c.revealer = c.build()
	}
	return c.masker, c.revealer
}

// build compiles the vault. A strings.Replacer tries its pairs in argument
// order at each position, so sorting the spellings longest first masks a
// value that contains another one whole. Masking covers keys too (a
// recorded document's keys can hold page text) and masks a document that
// does not decode as text; revealing touches only values (an argument's
// name is never a secret) and leaves params that are not JSON as they are
// (they are refused later, with the validation error they deserve).
func (c *credentials) build() (masker, revealer redact.Redactor) {
	type spelling struct{ text, mask string }
	var spellings []spelling
	var reveal []string
	for name, v := range c.values {
		mask := policy.Mask(name)
		reveal = append(reveal, mask, v)
		seen := map[string]bool{}
		// The value as typed, and as it appears inside JSON text and URLs:
		// the record keeps upstream's answers and the call's params as raw
		// JSON, and a typed value may end up in a query string.
		for _, s := range []string{v, jsonEscaped(v, false), jsonEscaped(v, true), url.QueryEscape(v), url.PathEscape(v)} {
			if !seen[s] {
				seen[s] = true
				spellings = append(spellings, spelling{s, mask})
			}
		}
	}
	slices.SortFunc(spellings, func(a, b spelling) int {
		if d := len(b.text) - len(a.text); d != 0 {
			return d
		}
		return strings.Compare(a.text, b.text)
	})
	pairs := make([]string, 0, 2*len(spellings))
	for _, s := range spellings {
		pairs = append(pairs, s.text, s.mask)
	}
	masker = redact.Redactor{Replacer: strings.NewReplacer(pairs...)}
	revealer = redact.Redactor{Replacer: strings.NewReplacer(reveal...), SkipKeys: true, KeepInvalid: true}
	return masker, revealer
}

// jsonEscaped is v as it appears between the quotes of a JSON string, with
// <, > and & escaped as Go's json.Marshal does when html is set.
func jsonEscaped(v string, html bool) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(html)
	_ = enc.Encode(v) // a string always encodes
	out := strings.TrimSuffix(buf.String(), "\n")
	return out[1 : len(out)-1]
}

// AddCredential puts value into the credential vault and returns the
// placeholder (<secret>cred_…</secret>) that stands for it: typed into a
// page through any tool, the placeholder reaches the browser as the value,
// and the value is masked back to the placeholder in everything recorded
// and returned. Values shorter than policy.MinSecretLen are refused: they
// would be masked inside ordinary text. The value is never logged.
func (m *Manager) AddCredential(_ context.Context, value string) (string, error) {
	name, err := m.creds.add(value)
	if err != nil {
		return "", err
	}
	m.log.Info("credential added to the vault", "name", name)
	return policy.Mask(name), nil
}

// revealCredentials replaces every placeholder of a known credential inside
// the JSON string values of params with the credential's value. It decodes
// and re-encodes, so a value with quotes, backslashes or any other character
// stays valid JSON (and a placeholder the client wrote as \u003csecret\u003e
// is found too); params without a known placeholder come back unchanged,
// byte for byte, and so do params that are not JSON (they are refused
// later, with the validation error they deserve).
func (m *Manager) revealCredentials(params json.RawMessage) json.RawMessage {
	if !bytes.Contains(params, []byte(credPrefix)) {
		return params
	}
	_, revealer := m.creds.redactors()
	return revealer.JSON(params)
}
