package policy

import (
	"bufio"
	"encoding/base64"
	"fmt"
	"net/url"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/redact"
)

// secret is one PROXY_SECRETS_FILE entry with the spellings it is masked in.
type secret struct {
	name   string
	values []string // the value, and its URL-escaped forms when they differ
}

// Mask is what a secret's value is replaced with, in the format of
// upstream's own redaction (@playwright/mcp --secrets) so that the model
// meets one convention.
func Mask(name string) string { return "<secret>" + name + "</secret>" }

var secretName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.\-]*$`)

func compileSecrets(m map[string]string) ([]secret, error) {
	var out []secret
	for name, v := range m {
		if !secretName.MatchString(name) {
			return nil, fmt.Errorf("PROXY_SECRETS_FILE: %q is not a valid secret name", name)
		}
		if len(v) < MinSecretLen {
			// Never echo the value itself.
			return nil, fmt.Errorf("PROXY_SECRETS_FILE: the value of %s is shorter than %d bytes: it would be masked inside ordinary text everywhere", name, MinSecretLen)
		}
		s := secret{name: name, values: []string{v}}
		for _, alt := range []string{url.QueryEscape(v), url.PathEscape(v)} {
			if alt != v && !contains(s.values, alt) {
				s.values = append(s.values, alt)
			}
		}
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool {
		if len(out[i].values[0]) != len(out[j].values[0]) {
			return len(out[i].values[0]) > len(out[j].values[0])
		}
		return out[i].name < out[j].name
	})
	return out, nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// secretList is the compiled secrets as a redact.Replacer. It masks one
// secret after another, each spelling over the whole text (longest secret
// first, so that a secret containing another is masked whole), which is not
// quite a strings.Replacer's single pass: where two secrets overlap, the
// first in this order wins even when the other starts earlier.
type secretList []secret

// Replace masks every secret in s.
func (l secretList) Replace(s string) string {
	for _, sec := range l {
		for _, v := range sec.values {
			if strings.Contains(s, v) {
				s = strings.ReplaceAll(s, v, Mask(sec.name))
			}
		}
	}
	return s
}

// masker masks the secrets in text and in JSON documents (keys included; a
// document that does not decode is masked as text). It holds a pointer to
// the list, so that building one per call allocates nothing.
func (p *Policy) masker() redact.Redactor {
	return redact.Redactor{Replacer: (*secretList)(&p.secrets)}
}

// Redact masks every secret in s. Longer secrets are masked first so that a
// secret containing another is masked whole.
func (p *Policy) Redact(s string) string {
	if len(p.secrets) == 0 {
		return s
	}
	return p.masker().String(s)
}

// Masker masks secrets in text and in every string (and key) of a JSON
// document, and in a document replaces inline images over MaxImageBytes
// with a text item. Its JSON leaves the bytes untouched when nothing
// changes — the record keeps upstream's answer exactly as received
// whenever it can — and base64 image data is never masked (that would
// corrupt the image; images are not text). A document that does not decode
// is masked as plain text. Its fields are nil where the policy has nothing
// to do, and a caller with values of its own to mask chains them on
// (redact.Then), so that one walk masks both.
func (p *Policy) Masker() redact.Redactor {
	var r redact.Redactor
	if len(p.secrets) > 0 {
		r = p.masker()
	}
	if p.maxImage > 0 {
		r.Media = p.omitImage
	}
	return r
}

// omitImage replaces an image over MaxImageBytes with a text item saying
// so. Any other media item stays as it is: its other fields (mimeType…)
// cannot hold typed text.
func (p *Policy) omitImage(item map[string]any, data string) (any, bool) {
	if n := base64.StdEncoding.DecodedLen(len(data)); item["type"] == "image" && p.maxImage > 0 && int64(n) > p.maxImage {
		return map[string]any{"type": "text", "text": p.ImageOmitted(n)}, true
	}
	return item, false
}

// ImageOmitted is the note that stands in for an image over the limit.
func (p *Policy) ImageOmitted(size int) string {
	return fmt.Sprintf("[image omitted: %d bytes is over PROXY_MAX_SCREENSHOT_BYTES (%d); it was not stored or returned]", size, p.maxImage)
}

// LoadSecrets reads a dotenv file: KEY=VALUE lines, blank lines and #
// comments, an optional "export " prefix, values optionally in single quotes
// (literal) or double quotes (with \n, \t, \", \\ escapes). Errors name the
// line, never a value.
func LoadSecrets(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading secrets file: %w", err)
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		line = strings.TrimPrefix(line, "export ")
		key, val, ok := strings.Cut(line, "=")
		key = strings.TrimSpace(key)
		if !ok || !secretName.MatchString(key) {
			return nil, fmt.Errorf("secrets file %s line %d: want KEY=VALUE", path, n)
		}
		val = strings.TrimSpace(val)
		switch {
		case len(val) >= 2 && val[0] == '\'' && val[len(val)-1] == '\'':
			val = val[1 : len(val)-1]
		case len(val) >= 2 && val[0] == '"' && val[len(val)-1] == '"':
			u, err := strconv.Unquote(val)
			if err != nil {
				return nil, fmt.Errorf("secrets file %s line %d: bad double-quoted value", path, n)
			}
			val = u
		default:
			// An unquoted value ends at " #" (a trailing comment).
			if i := strings.Index(val, " #"); i >= 0 {
				val = strings.TrimSpace(val[:i])
			}
		}
		out[key] = val
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading secrets file %s: %w", path, err)
	}
	return out, nil
}
