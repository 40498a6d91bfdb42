package policy

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
)

func mustNew(t *testing.T, cfg Config) *Policy {
	t.Helper()
	p, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestCheckURL(t *testing.T) {
	blockOnly := mustNew(t, Config{BlockedDomains: []string{"evil.com", "*.tracker.net", "127.0.0.1", "10.0.0.0/8", "::1", "bücher.de", "Trailing.Org."}})
	allowList := mustNew(t, Config{AllowedDomains: []string{"example.com", "*.example.org"}, BlockedDomains: []string{"bad.example.org"}})
	files := mustNew(t, Config{EnableFileURLs: true})

	tests := []struct {
		name  string
		p     *Policy
		url   string
		allow bool
	}{
		{"plain allowed", blockOnly, "https://good.com/x", true},
		{"exact blocked", blockOnly, "https://evil.com/", false},
		{"mixed case", blockOnly, "HTTPS://EvIl.CoM/path", false},
		{"trailing dot", blockOnly, "http://evil.com./", false},
		{"trailing dots", blockOnly, "http://evil.com../", false},
		{"port", blockOnly, "http://evil.com:8443/", false},
		{"userinfo hides host", blockOnly, "http://good.com@evil.com/", false},
		{"userinfo with password", blockOnly, "http://good.com:pw@evil.com/", false},
		{"userinfo names blocked host", blockOnly, "http://evil.com@good.com/", true},
		{"backslash authority", blockOnly, `http://evil.com\@good.com/`, false},
		{"percent-encoded host", blockOnly, "http://%65vil.com/", false},
		{"tab inside", blockOnly, "http://ev\til.com/", false},
		{"leading spaces", blockOnly, "  \x01https://evil.com/", false},
		{"no scheme", blockOnly, "evil.com/login", false},
		{"no scheme allowed", blockOnly, "good.com", true},
		{"subdomain of exact entry", blockOnly, "https://www.evil.com/", true},
		{"wildcard subdomain", blockOnly, "https://a.b.tracker.net/", false},
		{"wildcard apex not matched", blockOnly, "https://tracker.net/", true},
		{"wildcard suffix lookalike", blockOnly, "https://eviltracker.net/", true},
		{"ipv4 literal", blockOnly, "http://127.0.0.1:8080/", false},
		{"ipv4 decimal", blockOnly, "http://2130706433/", false},
		{"ipv4 hex", blockOnly, "http://0x7f.0.0.1/", false},
		{"ipv4 short", blockOnly, "http://127.1/", false},
		{"ipv4 octal", blockOnly, "http://0177.0.0.01/", false},
		{"ipv4 invalid number", blockOnly, "http://1.2.3.999/", false},
		{"cidr", blockOnly, "http://10.20.30.40/", false},
		{"outside cidr", blockOnly, "http://11.0.0.1/", true},
		{"ipv6 loopback", blockOnly, "http://[::1]:3000/", false},
		{"ipv6 long form", blockOnly, "http://[0:0:0:0:0:0:0:1]/", false},
		{"ipv4-mapped ipv6", blockOnly, "http://[::ffff:127.0.0.1]/", false},
		{"ipv4-mapped into cidr", blockOnly, "http://[::ffff:10.1.1.1]/", false},
		{"unicode host", blockOnly, "https://bücher.de/", false},
		{"punycode of unicode entry", blockOnly, "https://xn--bcher-kva.de/", false},
		{"unicode upper case", blockOnly, "https://BÜCHER.de/", false},
		{"fullwidth letters", blockOnly, "https://ｅｖｉｌ.com/", false},
		{"entry with trailing dot and case", blockOnly, "https://TRAILING.org/", false},
		{"file scheme", blockOnly, "file:///etc/passwd", false},
		{"file scheme upper", blockOnly, "FILE:///etc/passwd", false},
		{"javascript", blockOnly, "javascript:alert(1)", false},
		{"data", blockOnly, "data:text/html,<h1>x</h1>", false},
		{"chrome", blockOnly, "chrome://settings", false},
		{"view-source", blockOnly, "view-source:https://good.com/", false},
		{"about blank", blockOnly, "about:blank", true},
		{"about other", blockOnly, "about:config", false},
		{"ftp", blockOnly, "ftp://good.com/", false},
		{"empty host", blockOnly, "http:///path", false},
		{"file enabled", files, "file:///tmp/x.html", true},

		{"allow exact", allowList, "https://example.com/", true},
		{"allow exact port", allowList, "http://example.com:8080/a?b", true},
		{"allow not subdomain of exact", allowList, "https://www.example.com/", false},
		{"allow wildcard", allowList, "https://docs.example.org/", true},
		{"allow wildcard apex", allowList, "https://example.org/", false},
		{"allow but blocked", allowList, "https://bad.example.org/", false},
		{"allow other", allowList, "https://other.com/", false},
		{"allow userinfo trick", allowList, "https://example.com@other.com/", false},
		{"allow ip", allowList, "http://93.184.216.34/", false},
		{"allow lookalike suffix", allowList, "https://example.com.evil.net/", false},
		{"allow about blank", allowList, "about:blank", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.p.CheckURL(tt.url)
			if tt.allow && err != nil {
				t.Fatalf("CheckURL(%q) = %v, want allowed", tt.url, err)
			}
			if !tt.allow {
				if err == nil {
					t.Fatalf("CheckURL(%q) allowed, want DOMAIN_BLOCKED", tt.url)
				}
				e := proxy.AsError(err)
				if e.Code != proxy.EDOMAINBLOCKED || e.Suggestion == "" {
					t.Fatalf("CheckURL(%q) = %+v, want DOMAIN_BLOCKED with a suggestion", tt.url, e)
				}
			}
		})
	}
}

func TestNewRejectsBadEntries(t *testing.T) {
	for _, e := range []string{"https://example.com", "example.com:8080", "exa*mple.com", "example.com/path", "*.1.2.3.4", "10.0.0.0/99", "user@example.com"} {
		if _, err := New(Config{BlockedDomains: []string{e}}); err == nil {
			t.Errorf("New accepted blocked entry %q", e)
		}
	}
	if _, err := New(Config{Secrets: map[string]string{"PIN": "123"}}); err == nil || strings.Contains(err.Error(), "123") {
		t.Errorf("short secret: err = %v, want an error that does not show the value", err)
	}
}

func TestCheckCall(t *testing.T) {
	p := mustNew(t, Config{BlockedDomains: []string{"evil.com"}, EnableScriptEvaluation: false, EnableFileUpload: false})
	navSchema := json.RawMessage(`{"type":"object","properties":{"url":{"type":"string"}}}`)
	tabsSchema := json.RawMessage(`{"type":"object","properties":{"action":{"type":"string"},"url":{"type":"string"}}}`)
	futureSchema := json.RawMessage(`{"type":"object","properties":{"startUrl":{"type":"string"}}}`)

	tests := []struct {
		name, tool string
		schema     json.RawMessage
		params     string
		code       string // "" = allowed
	}{
		{"navigate ok", "browser_navigate", navSchema, `{"url":"https://good.com"}`, ""},
		{"navigate blocked", "browser_navigate", navSchema, `{"url":"https://evil.com"}`, proxy.EDOMAINBLOCKED},
		{"tabs new blocked", "browser_tabs", tabsSchema, `{"action":"new","url":"https://evil.com"}`, proxy.EDOMAINBLOCKED},
		{"tabs new without url", "browser_tabs", tabsSchema, `{"action":"new"}`, ""},
		{"unknown tool with url-ish property", "browser_future", futureSchema, `{"startUrl":"file:///etc/passwd"}`, proxy.EDOMAINBLOCKED},
		{"url argument not in schema", "browser_click", nil, `{"url":"javascript:alert(1)"}`, proxy.EDOMAINBLOCKED},
		{"url list", "browser_future", futureSchema, `{"startUrl":["https://good.com","https://evil.com"]}`, proxy.EDOMAINBLOCKED},
		{"evaluate off", "browser_evaluate", nil, `{"function":"() => 1"}`, proxy.ETOOLMISSING},
		{"run code off", "browser_run_code_unsafe", nil, `{}`, proxy.ETOOLMISSING},
		{"upload off", "browser_file_upload", nil, `{"paths":["/etc/passwd"]}`, proxy.ETOOLMISSING},
		{"drop files off", "browser_drop", nil, `{"paths":["/etc/passwd"]}`, proxy.EINVALID},
		{"drop data on", "browser_drop", nil, `{"data":{"text/plain":"x"}}`, ""},
		{"click ok", "browser_click", nil, `{"target":"e1"}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := p.CheckCall(tt.tool, tt.schema, args(t, tt.params))
			if got := proxy.ErrorCode(err); got != tt.code {
				t.Fatalf("CheckCall = %v, want code %q", err, tt.code)
			}
		})
	}
	for _, name := range []string{"browser_evaluate", "browser_run_code_unsafe", "browser_file_upload"} {
		if p.ToolEnabled(name) {
			t.Errorf("%s enabled with the switches off", name)
		}
	}
	on := mustNew(t, Config{EnableScriptEvaluation: true, EnableFileUpload: true})
	if !on.ToolEnabled("browser_evaluate") || !on.ToolEnabled("browser_file_upload") {
		t.Error("switches on, tools hidden")
	}
	if err := on.CheckCall("browser_drop", nil, args(t, `{"paths":["/tmp/a"]}`)); err != nil {
		t.Errorf("drop with uploads enabled: %v", err)
	}
}

// args decodes a call's arguments as the catalogue hands them over.
func args(t *testing.T, params string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(params), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestUpstreamArgs(t *testing.T) {
	p := mustNew(t, Config{AllowedDomains: []string{"Example.COM", "*.example.org", "10.0.0.0/8"}, BlockedDomains: []string{"bücher.de", "::1"}})
	got := p.UpstreamArgs()
	want := []string{"--allowed-origins", "example.com;example.com:*;*.example.org;*.example.org:*", "--blocked-origins", "xn--bcher-kva.de;xn--bcher-kva.de:*"}
	if !slices.Equal(got, want) {
		t.Fatalf("UpstreamArgs = %q, want %q", got, want)
	}
	if args := mustNew(t, Config{}).UpstreamArgs(); len(args) != 0 {
		t.Fatalf("no lists: %q", args)
	}
}

func TestRedact(t *testing.T) {
	p := mustNew(t, Config{Secrets: map[string]string{"PASSWORD": "hunter2!x", "LONG": "hunter2!xyz", "TOKEN": `a"b\c<d>`}, MaxScreenshotBytes: 10})
	if got := p.Redact("typed hunter2!xyz and hunter2!x"); got != "typed <secret>LONG</secret> and <secret>PASSWORD</secret>" {
		t.Errorf("Redact = %q", got)
	}
	if got := p.Redact("https://x.com/?pw=hunter2%21x"); got != "https://x.com/?pw=<secret>PASSWORD</secret>" {
		t.Errorf("URL-escaped: %q", got)
	}

	// JSON: escaped forms are masked, image data is not, big images go.
	big := strings.Repeat("QUFB", 10) // 30 bytes decoded
	raw := json.RawMessage(`{"content":[{"type":"text","text":"tok a\"b\\c\u003cd\u003e pw hunter2!x"},{"type":"image","mimeType":"image/png","data":"` + big + `"},{"type":"image","mimeType":"image/png","data":"aHVudGVyMiF4"}],"isError":false}`)
	out := string(p.Masker().JSON(raw))
	for _, leak := range []string{"hunter2!x", `a\"b\\c`, big} {
		if strings.Contains(out, leak) {
			t.Errorf("Masker().JSON kept %q: %s", leak, out)
		}
	}
	for _, want := range []string{"<secret>TOKEN</secret>", "<secret>PASSWORD</secret>", "image omitted: 30 bytes", "aHVudGVyMiF4"} {
		if !strings.Contains(out, want) {
			t.Errorf("Masker().JSON lacks %q: %s", want, out)
		}
	}
	if !json.Valid([]byte(out)) {
		t.Errorf("Masker().JSON made invalid JSON: %s", out)
	}
	clean := json.RawMessage(`{"a":  "nothing secret here"}`)
	if got := p.Masker().JSON(clean); string(got) != string(clean) {
		t.Errorf("unchanged document was rewritten: %s", got)
	}
	if got := string(p.Masker().JSON(json.RawMessage(`{"text":"hunter2!x`))); got != `{"text":"<secret>PASSWORD</secret>` {
		t.Errorf("invalid JSON is not masked as text: %s", got)
	}
}

// TestRedactOrder pins the masking order: one secret after another (longest
// first, then by name), each over the whole text — not a single pass that
// takes the earliest match.
func TestRedactOrder(t *testing.T) {
	p := mustNew(t, Config{Secrets: map[string]string{"A": "cdef", "B": "abcd"}})
	if got := p.Redact("abcdef"); got != "ab<secret>A</secret>" {
		t.Errorf("Redact = %q, want A masked first though B starts earlier", got)
	}
	if got := string(p.Masker().JSON(json.RawMessage(`{"abcdef":"abcdef"}`))); got != `{"ab<secret>A</secret>":"ab<secret>A</secret>"}` {
		t.Errorf("Masker().JSON = %s", got)
	}
}

func TestLoadSecrets(t *testing.T) {
	path := filepath.Join(t.TempDir(), "secrets.env")
	data := "# comment\n\nexport USER_NAME=alice@example.com\nPASSWORD='p@ss w0rd#1'\nQUOTED=\"line\\nnext\"\nPLAIN=value # trailing comment\n"
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := LoadSecrets(path)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"USER_NAME": "alice@example.com", "PASSWORD": "p@ss w0rd#1", "QUOTED": "line\nnext", "PLAIN": "value"}
	if len(got) != len(want) {
		t.Fatalf("LoadSecrets = %q, want %q", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	if err := os.WriteFile(path, []byte("not a pair\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadSecrets(path); err == nil {
		t.Error("bad line accepted")
	}
}
