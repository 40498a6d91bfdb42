package session

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
)

func vaultManager() *Manager {
	return &Manager{log: slog.New(slog.DiscardHandler), opts: Options{Policy: openPolicy{}}}
}

var placeholderRE = regexp.MustCompile(`^<secret>(cred_[0-9a-f]{16})</secret>$`)

func addCred(t *testing.T, m *Manager, value string) string {
	t.Helper()
	p, err := m.AddCredential(t.Context(), value)
	if err != nil {
		t.Fatalf("AddCredential: %v", err)
	}
	return p
}

func TestAddCredential(t *testing.T) {
	tests := []struct {
		name, value string
		wantErr     bool
	}{
		{"empty", "", true},
		{"three bytes", "xyz", true},
		{"four bytes", "abcd", false},
		{"unicode", "pässwörd-ß", false},
		{"quotes and backslashes", `a"b\c'd`, false},
		{"too long", strings.Repeat("k", maxCredentialBytes+1), true},
		{"longest allowed", strings.Repeat("k", maxCredentialBytes), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := vaultManager()
			p, err := m.AddCredential(t.Context(), tc.value)
			if tc.wantErr {
				if proxy.ErrorCode(err) != proxy.EINVALID {
					t.Fatalf("AddCredential = %q, %v; want %s", p, err, proxy.EINVALID)
				}
				if tc.value != "" && strings.Contains(err.Error(), tc.value) {
					t.Errorf("the error echoes the value: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !placeholderRE.MatchString(p) {
				t.Errorf("placeholder %q is not <secret>cred_<16 hex></secret>", p)
			}
			if again := addCred(t, m, tc.value); again != p {
				t.Errorf("the same value got %q, then %q: want one placeholder per value", p, again)
			}
			if other := addCred(t, m, "x"+tc.value[1:]); other == p {
				t.Errorf("two values share the placeholder %q", p)
			}
		})
	}
}

func TestRevealCredentials(t *testing.T) {
	m := vaultManager()
	values := map[string]string{
		"plain":   "S3cret-pa55",
		"quotes":  `pa"ss'wo\rd`,
		"unicode": "pässwörd✓🔑",
		"control": "line1\nline2\ttab",
		"html":    "a<b>&c",
	}
	ph := map[string]string{}
	for k, v := range values {
		ph[k] = addCred(t, m, v)
	}
	// goEscaped is the placeholder as Go's json.Marshal writes it, which is
	// how mcpserver encodes a tool call's arguments.
	goEscaped := strings.NewReplacer("<", `\u003c`, ">", `\u003e`).Replace(ph["plain"])

	tests := []struct {
		name   string
		params string
		// want is the decoded result; nil means the bytes must come back
		// unchanged.
		want any
	}{
		{"whole string", `{"text":"` + ph["plain"] + `"}`, map[string]any{"text": values["plain"]}},
		{"inside code", `{"function":"() => { document.title = '` + ph["quotes"] + `'; return 'ok'; }"}`,
			map[string]any{"function": "() => { document.title = '" + values["quotes"] + "'; return 'ok'; }"}},
		{"unicode value", `{"text":"` + ph["unicode"] + `"}`, map[string]any{"text": values["unicode"]}},
		{"control characters", `{"text":"` + ph["control"] + `"}`, map[string]any{"text": values["control"]}},
		{"html characters", `{"text":"` + ph["html"] + `"}`, map[string]any{"text": values["html"]}},
		{"escaped by json.Marshal", `{"text":"` + goEscaped + `"}`, map[string]any{"text": values["plain"]}},
		{"two in one string", `{"text":"` + ph["plain"] + `/` + ph["unicode"] + `"}`, map[string]any{"text": values["plain"] + "/" + values["unicode"]}},
		{"nested", `{"fields":[{"name":"Password","value":"` + ph["plain"] + `"}],"n":1.50,"ok":true,"none":null}`,
			map[string]any{"fields": []any{map[string]any{"name": "Password", "value": values["plain"]}}, "n": json.Number("1.50"), "ok": true, "none": nil}},
		{"keys are not revealed", `{"` + ph["plain"] + `":"x"}`, nil},
		{"media data is not revealed", `{"type":"image","mimeType":"image/png","data":"` + ph["plain"] + `"}`, nil},
		{"unknown credential", `{"text":"<secret>cred_0000000000000000</secret>"}`, nil},
		{"no placeholder", `{ "text" : "hello",  "n": 1.0 }`, nil},
		{"not JSON", `{"text":"` + ph["plain"], nil},
		{"empty", ``, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := m.revealCredentials(json.RawMessage(tc.params))
			if tc.want == nil {
				if string(got) != tc.params {
					t.Errorf("revealCredentials(%s) = %s, want the bytes unchanged", tc.params, got)
				}
				return
			}
			dec := json.NewDecoder(strings.NewReader(string(got)))
			dec.UseNumber()
			var doc any
			if err := dec.Decode(&doc); err != nil {
				t.Fatalf("revealCredentials gave invalid JSON %s: %v", got, err)
			}
			if diff := cmp.Diff(tc.want, doc); diff != "" {
				t.Errorf("revealed params (-want +got):\n%s", diff)
			}
		})
	}
}

func TestMaskCredentials(t *testing.T) {
	m := vaultManager()
	short := addCred(t, m, "hunter22")
	long := addCred(t, m, "hunter22-and-more")
	odd := addCred(t, m, `a"b\c d/é`)
	tests := []struct{ name, in, want string }{
		{"plain", "typed hunter22 here", "typed " + short + " here"},
		{"longest first", "value hunter22-and-more!", "value " + long + "!"},
		{"both", "hunter22 hunter22-and-more", short + " " + long},
		{"as typed", `title a"b\c d/é end`, "title " + odd + " end"},
		{"escaped in JSON text", `{"title":"a\"b\\c d/é"}`, `{"title":"` + odd + `"}`},
		{"query escaped", "https://x.test/?p=a%22b%5Cc+d%2F%C3%A9", "https://x.test/?p=" + odd},
		{"path escaped", "https://x.test/a%22b%5Cc%20d%2F%C3%A9", "https://x.test/" + odd},
		{"nothing to mask", "hunter2 is shorter", "hunter2 is shorter"},
		{"empty", "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, m.redaction().text(tc.in)); diff != "" {
				t.Errorf("redaction().text(%q) (-want +got):\n%s", tc.in, diff)
			}
		})
	}
	if got := vaultManager().redaction().text("hunter22"); got != "hunter22" {
		t.Errorf("an empty vault masked %q", got)
	}
}

func TestMaskCredentialsJSON(t *testing.T) {
	m := vaultManager()
	ph := addCred(t, m, "nabcd")
	quoted := addCred(t, m, `q"uo\te`)
	const same = "\x00same" // the output must be the input, byte for byte
	tests := []struct {
		name, in string
		// want is the decoded output, or, when it is a string, the exact
		// bytes (same: unchanged).
		want any
	}{
		{"in a string", `{"content":[{"type":"text","text":"### Page\n- Page Title: nabcd"}]}`,
			map[string]any{"content": []any{map[string]any{"type": "text", "text": "### Page\n- Page Title: " + ph}}}},
		// A text replacement would hit the "n" of the \n escape.
		{"after an escape", `{"text":"line\nabcd"}`, same},
		{"quoted value", `{"text":"x q\"uo\\te y"}`, map[string]any{"text": "x " + quoted + " y"}},
		{"key", `{"nabcd":1}`, map[string]any{ph: json.Number("1")}},
		{"image data untouched", `{"type":"image","mimeType":"image/png","data":"nabcd"}`, same},
		{"blob untouched", `{"uri":"file.pdf","mimeType":"application/pdf","blob":"nabcd"}`, same},
		{"nothing", `{"text": "clean",  "n": 2.50}`, same},
		{"not JSON is masked as text", `nabcd {`, ph + " {"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := m.redaction().doc(json.RawMessage(tc.in))
			if raw, ok := tc.want.(string); ok {
				if raw == same {
					raw = tc.in
				}
				if string(got) != raw {
					t.Errorf("redaction().doc(%s) = %s, want %s", tc.in, got, raw)
				}
				return
			}
			dec := json.NewDecoder(strings.NewReader(string(got)))
			dec.UseNumber()
			var doc any
			if err := dec.Decode(&doc); err != nil {
				t.Fatalf("invalid JSON %s: %v", got, err)
			}
			if diff := cmp.Diff(tc.want, doc); diff != "" {
				t.Errorf("masked (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCredentialVaultDropsTheOldest(t *testing.T) {
	m := vaultManager()
	first := addCred(t, m, "value-0000")
	second := addCred(t, m, "value-0001")
	addCred(t, m, "value-0000") // used again: now the newest
	for i := 2; i <= maxCredentials; i++ {
		addCred(t, m, fmt.Sprintf("value-%04d", i))
	}
	reveal := func(p string) string {
		return string(m.revealCredentials(json.RawMessage(`{"t":"` + p + `"}`)))
	}
	if got := reveal(second); got != `{"t":"`+second+`"}` {
		t.Errorf("the oldest credential is still revealed after %d more: %s", maxCredentials, got)
	}
	if got := reveal(first); got != `{"t":"value-0000"}` {
		t.Errorf("a credential added again was dropped as old: %s", got)
	}
	if got := m.redaction().text("value-0001 value-0000"); got != "value-0001 "+first {
		t.Errorf("mask after eviction = %q, want only the kept value masked", got)
	}
}

func TestCredentialVaultConcurrency(t *testing.T) {
	m := vaultManager()
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 50 {
				v := fmt.Sprintf("secret-%d-%d", i, j)
				p, err := m.AddCredential(t.Context(), v)
				if err != nil {
					t.Error(err)
					return
				}
				if got := string(m.revealCredentials(json.RawMessage(`"` + p + `"`))); got != `"`+v+`"` {
					t.Errorf("reveal %s = %s", p, got)
				}
				if got := m.redaction().text("x " + v); got != "x "+p {
					t.Errorf("mask %s = %s", v, got)
				}
			}
		}()
	}
	wg.Wait()
}
