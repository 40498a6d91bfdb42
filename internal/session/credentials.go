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
	// Built on demand from values and dropped by every add.
	masker   *strings.Replacer
	revealer *strings.Replacer
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
	c.masker, c.revealer = nil, nil
	return name, nil
}

// replacers returns the masking and revealing replacers (nil, nil when the
// vault is empty).
func (c *credentials) replacers() (masker, revealer *strings.Replacer) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.values) == 0 {
		return nil, nil
	}
	if c.masker == nil {
		c.masker, c.revealer = c.build()
	}
	return c.masker, c.revealer
}

// build compiles the vault. A strings.Replacer tries its pairs in argument
// order at each position, so sorting the spellings longest first masks a
// value that contains another one whole.
func (c *credentials) build() (masker, revealer *strings.Replacer) {
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
	return strings.NewReplacer(pairs...), strings.NewReplacer(reveal...)
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
	_, revealer := m.creds.replacers()
	if revealer == nil {
		return params
	}
	dec := json.NewDecoder(bytes.NewReader(params))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return params
	}
	doc, changed := replaceStrings(doc, revealer, false)
	if !changed {
		return params
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(doc); err != nil {
		return params
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// maskCredentials replaces every known credential value in s — as typed, as
// escaped inside JSON text, and URL-escaped — with its placeholder, longest
// value first. It is for text (snapshots, console lines, titles, URLs); a
// JSON document goes through maskCredentialsJSON, since a replacement in
// raw JSON could start inside an escape sequence ("\n" + "abcd…") and
// corrupt it.
func (m *Manager) maskCredentials(s string) string {
	masker, _ := m.creds.replacers()
	if masker == nil || s == "" {
		return s
	}
	return masker.Replace(s)
}

// maskCredentialsJSON masks credential values in every string and key of a
// JSON document (an upstream result, a call's params), leaving base64 image
// and blob data alone (masking would corrupt an image, and images are not
// text). The bytes come back unchanged when nothing was masked, and a
// document that does not decode is masked as text.
func (m *Manager) maskCredentialsJSON(raw json.RawMessage) json.RawMessage {
	masker, _ := m.creds.replacers()
	if masker == nil || len(raw) == 0 {
		return raw
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return json.RawMessage(masker.Replace(string(raw)))
	}
	doc, changed := replaceStrings(doc, masker, true)
	if !changed {
		return raw
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(doc); err != nil {
		return json.RawMessage(masker.Replace(string(raw)))
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// replaceStrings walks a decoded JSON document, replacing in string values
// and, with keys, in object keys too (an argument's name is never a secret,
// but a recorded document's keys can hold page text). Media items are left
// alone: replacing inside base64 would corrupt an image, and images are not
// text.
func replaceStrings(v any, r *strings.Replacer, keys bool) (any, bool) {
	switch x := v.(type) {
	case string:
		out := r.Replace(x)
		return out, out != x
	case []any:
		changed := false
		for i, e := range x {
			var c bool
			if x[i], c = replaceStrings(e, r, keys); c {
				changed = true
			}
		}
		return x, changed
	case map[string]any:
		if isMedia(x) {
			return x, false
		}
		changed := false
		out := make(map[string]any, len(x))
		for k, e := range x {
			nk := k
			if keys {
				nk = r.Replace(k)
			}
			ne, c := replaceStrings(e, r, keys)
			if c || nk != k {
				changed = true
			}
			out[nk] = ne
		}
		return out, changed
	}
	return v, false
}

// isMedia reports an MCP image/audio content item or a blob resource: an
// object with a mimeType and base64 data.
func isMedia(m map[string]any) bool {
	if _, ok := m["mimeType"]; !ok {
		return false
	}
	_, data := m["data"].(string)
	_, blob := m["blob"].(string)
	return data || blob
}
