package mcpserver

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
)

func schema(props ...string) json.RawMessage {
	p := map[string]any{}
	for _, name := range props {
		p[name] = map[string]string{"type": "string"}
	}
	b, err := json.Marshal(map[string]any{"type": "object", "properties": p})
	if err != nil {
		panic(err)
	}
	return b
}

// upstreamOnly is a catalogue without the proxy's selector tools
// (PROXY_TOOLSETS without navigation, interaction, extraction…).
var upstreamOnly = []proxy.Tool{
	{Name: "browser_navigate", InputSchema: schema("url")},
	{Name: "browser_snapshot", InputSchema: schema()},
	{Name: "browser_click", InputSchema: schema("element", "target")},
	{Name: "browser_type", InputSchema: schema("element", "target", "text")},
	{Name: "browser_fill_form", InputSchema: schema("fields")},
	{Name: "browser_take_screenshot", InputSchema: schema("type", "fullPage", "target")},
	{Name: "browser_wait_for", InputSchema: schema("text", "time")},
	{Name: "browser_evaluate", InputSchema: schema("function")},
}

// withSelectorTools adds every proxy selector tool.
var withSelectorTools = append(append([]proxy.Tool{}, upstreamOnly...),
	proxy.Tool{Name: "navigate", InputSchema: schema("url")},
	proxy.Tool{Name: "fill", InputSchema: schema("selector", "value")},
	proxy.Tool{Name: "click", InputSchema: schema("selector")},
	proxy.Tool{Name: "type", InputSchema: schema("selector", "text")},
	proxy.Tool{Name: "get_text", InputSchema: schema("selector")},
	proxy.Tool{Name: "extract_table", InputSchema: schema("selector")},
	proxy.Tool{Name: "extract_links", InputSchema: schema("selector")},
	proxy.Tool{Name: "get_page_metadata", InputSchema: schema()},
	proxy.Tool{Name: "screenshot_element", InputSchema: schema("selector")},
	proxy.Tool{Name: "save_state", InputSchema: schema()},
	proxy.Tool{Name: "wait_for_load", InputSchema: schema()},
	proxy.Tool{Name: "wait_for_selector", InputSchema: schema("selector")},
	proxy.Tool{Name: "get_cookies", InputSchema: schema()},
)

func promptClient(t *testing.T, tools []proxy.Tool) (*client.Client, *fakeBackend) {
	t.Helper()
	b := &fakeBackend{tools: tools}
	s, err := New(context.Background(), b, b, WithLogger(quiet()))
	if err != nil {
		t.Fatal(err)
	}
	return connect(t, s), b
}

func getPrompt(c *client.Client, name string, args map[string]string) (string, error) {
	req := mcp.GetPromptRequest{}
	req.Params.Name = name
	req.Params.Arguments = args
	res, err := c.GetPrompt(context.Background(), req)
	if err != nil {
		return "", err
	}
	var parts []string
	for _, m := range res.Messages {
		if m.Role != mcp.RoleUser {
			return "", proxy.Errorf(proxy.EINTERNAL, "message role %q", m.Role)
		}
		parts = append(parts, m.Content.(mcp.TextContent).Text)
	}
	return strings.Join(parts, "\n"), nil
}

func TestPromptsList(t *testing.T) {
	c, _ := promptClient(t, upstreamOnly)
	res, err := c.ListPrompts(context.Background(), mcp.ListPromptsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for _, p := range res.Prompts {
		if p.Description == "" {
			t.Errorf("prompt %s has no description", p.Name)
		}
		for _, a := range p.Arguments {
			name := a.Name
			if a.Required {
				name += "*"
			}
			got[p.Name] = append(got[p.Name], name)
		}
	}
	want := map[string][]string{
		PromptScrapeWebsite:    {"url*", "selectors*"},
		PromptFillForm:         {"url*", "form_data*", "submit_button"},
		PromptAuthenticate:     {"url*", "username*", "password*", "username_selector", "password_selector", "submit_selector"},
		PromptE2ETest:          {"test_scenario*", "start_url*"},
		PromptVisualRegression: {"url*", "baseline_screenshot*"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("prompts/list arguments (* = required) (-want +got):\n%s", diff)
	}
}

func TestPromptsRender(t *testing.T) {
	tests := []struct {
		name   string
		tools  []proxy.Tool
		prompt string
		args   map[string]string
		// want must all appear, in this order; absent must not appear.
		want, absent []string
	}{
		{name: "scrape with selector tools", tools: withSelectorTools, prompt: PromptScrapeWebsite,
			args: map[string]string{"url": "http://127.0.0.1/shop", "selectors": `{"title":"h1","price":".price > span"}`},
			want: []string{"scrape data from http://127.0.0.1/shop", `Call navigate with url "http://127.0.0.1/shop".`, "wait_for_load",
				"call get_text with selector", "- title: h1", "- price: .price > span", "extract_table and extract_links", "fields title, price",
				"get_page_metadata", "get_content(ref_id, search_for)"},
			absent: []string{"browser_navigate", "browser_evaluate"}},
		{name: "scrape with upstream tools", tools: upstreamOnly, prompt: PromptScrapeWebsite,
			args:   map[string]string{"url": "http://127.0.0.1/shop", "selectors": `{"title":"h1"}`},
			want:   []string{`Call browser_navigate with url "http://127.0.0.1/shop".`, "browser_wait_for", "browser_evaluate", "- title: h1", "page_url and page_title"},
			absent: []string{"get_text", "get_page_metadata", "extract_table", "Call navigate"}},
		{name: "fill_form default submit button, selector tools", tools: withSelectorTools, prompt: PromptFillForm,
			args: map[string]string{"url": "http://127.0.0.1/form", "form_data": `{"email":"a@example.com","#age":42,"agree":true}`},
			want: []string{"form at http://127.0.0.1/form", "call fill with selector = its selector and value = its value",
				`- email (selector [name='email']): "a@example.com"`, `- #age (selector #age): "42"`, `- agree (selector [name='agree']): "true"`,
				`Click the submit button (button[type='submit']): call click with selector "button[type='submit']".`},
			absent: []string{"browser_"}},
		{name: "fill_form given submit button, upstream tools", tools: upstreamOnly, prompt: PromptFillForm,
			args: map[string]string{"url": "http://127.0.0.1/form", "form_data": `{"email":"a@example.com"}`, "submit_button": "#send"},
			want: []string{"browser_navigate", "browser_snapshot", "browser_fill_form", `- email (selector [name='email']): "a@example.com"`,
				`Click the submit button (#send): call browser_click with target "#send"`},
			absent: []string{"button[type='submit']", "call fill", "call click"}},
		{name: "authenticate with defaults, upstream tools", tools: upstreamOnly, prompt: PromptAuthenticate,
			args: map[string]string{"url": "http://127.0.0.1/login", "username": "alice@example.com", "password": "correct horse battery"},
			want: []string{"log into http://127.0.0.1/login",
				`Fill the username field (input[name='username'], input[type='email']) with "alice@example.com": call browser_type with target "input[name='username'], input[type='email']" and text "alice@example.com"`,
				"Fill the password field (input[name='password'], input[type='password']) with exactly this placeholder, character for character: " + fakePlaceholder,
				`call browser_type with target "input[name='password'], input[type='password']" and text "` + fakePlaceholder + `"`,
				`Click submit (button[type='submit']): call browser_click`, "saves and restores them itself.", "session_id", "2FA"},
			absent: []string{"correct horse battery", "save_state", "get_cookies"}},
		{name: "authenticate with selectors given, selector tools", tools: withSelectorTools, prompt: PromptAuthenticate,
			args: map[string]string{"url": "http://127.0.0.1/login", "username": "alice", "password": "p\"w\\d✓", "username_selector": "#user",
				"password_selector": "#pass", "submit_selector": "#go"},
			want: []string{`call fill with selector "#user" and value "alice"`, `call fill with selector "#pass" and value "` + fakePlaceholder + `"`,
				`call click with selector "#go"`, "saves and restores them itself. To reuse this login in another session, call save_state.", "get_cookies"},
			absent: []string{`p"w\d✓`, `p\"w\\d✓`, "input[name='password']"}},
		{name: "e2e test, selector tools", tools: withSelectorTools, prompt: PromptE2ETest,
			args: map[string]string{"test_scenario": "Add a book to the cart and check out", "start_url": "http://127.0.0.1/"},
			want: []string{"Execute this E2E test scenario: Add a book to the cart and check out", "Starting at: http://127.0.0.1/",
				`Call navigate with url "http://127.0.0.1/".`, "click, fill, type, browser_click", "call browser_take_screenshot;",
				"get_console_content(ref_id, level: \"error\")", "Test result (pass/fail)", "playwright:///screenshot/{ref_id}"}},
		{name: "visual regression, upstream tools", tools: upstreamOnly, prompt: PromptVisualRegression,
			args: map[string]string{"url": "http://127.0.0.1/", "baseline_screenshot": "/tmp/baseline.png"},
			want: []string{"visual regression testing for http://127.0.0.1/", "call browser_take_screenshot with fullPage true", "/tmp/baseline.png",
				"percentage"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := promptClient(t, tc.tools)
			text, err := getPrompt(c, tc.prompt, tc.args)
			if err != nil {
				t.Fatalf("prompts/get %s: %v", tc.prompt, err)
			}
			rest := text
			for _, w := range tc.want {
				i := strings.Index(rest, w)
				if i < 0 {
					t.Errorf("%q is missing (or out of order) in:\n%s", w, text)
					continue
				}
				rest = rest[i+len(w):]
			}
			for _, a := range tc.absent {
				if strings.Contains(text, a) {
					t.Errorf("%q must not appear in:\n%s", a, text)
				}
			}
		})
	}
}

func TestPromptsRefuseBadArguments(t *testing.T) {
	full := map[string]map[string]string{
		PromptScrapeWebsite:    {"url": "http://127.0.0.1/", "selectors": `{"a":"h1"}`},
		PromptFillForm:         {"url": "http://127.0.0.1/", "form_data": `{"a":"b"}`},
		PromptAuthenticate:     {"url": "http://127.0.0.1/", "username": "u", "password": "long enough"},
		PromptE2ETest:          {"test_scenario": "x", "start_url": "http://127.0.0.1/"},
		PromptVisualRegression: {"url": "http://127.0.0.1/", "baseline_screenshot": "b.png"},
	}
	without := func(prompt, arg string) map[string]string {
		m := map[string]string{}
		for k, v := range full[prompt] {
			if k != arg {
				m[k] = v
			}
		}
		return m
	}
	with := func(prompt, arg, value string) map[string]string {
		m := without(prompt, arg)
		m[arg] = value
		return m
	}
	type tcase struct {
		name, prompt string
		args         map[string]string
		want         string
	}
	var tests []tcase
	for _, p := range promptDefs() {
		for _, a := range p.args {
			if a.required {
				tests = append(tests,
					tcase{p.name + " without " + a.name, p.name, without(p.name, a.name), "missing required argument " + a.name},
					tcase{p.name + " with blank " + a.name, p.name, with(p.name, a.name, "  "), "missing required argument " + a.name})
			}
		}
	}
	tests = append(tests,
		tcase{"selectors not JSON", PromptScrapeWebsite, with(PromptScrapeWebsite, "selectors", "h1"), "argument selectors must be a JSON object"},
		tcase{"selectors an array", PromptScrapeWebsite, with(PromptScrapeWebsite, "selectors", `["h1"]`), "argument selectors must be a JSON object"},
		tcase{"selectors empty", PromptScrapeWebsite, with(PromptScrapeWebsite, "selectors", `{}`), "names no field"},
		tcase{"selectors trailing data", PromptScrapeWebsite, with(PromptScrapeWebsite, "selectors", `{"a":"h1"} x`), "data after the object"},
		tcase{"selector not a string", PromptScrapeWebsite, with(PromptScrapeWebsite, "selectors", `{"a":1}`), "selectors.a must be a CSS selector string"},
		tcase{"form_data duplicate", PromptFillForm, with(PromptFillForm, "form_data", `{"a":"1","a":"2"}`), `field "a" is given twice`},
		tcase{"form_data truncated", PromptFillForm, with(PromptFillForm, "form_data", `{"a":"1"`), "argument form_data must be a JSON object"},
		tcase{"form_data number key", PromptFillForm, with(PromptFillForm, "form_data", `{1:"2"}`), "argument form_data must be a JSON object"},
		tcase{"form_data trailing comma", PromptFillForm, with(PromptFillForm, "form_data", `{"a":"1",}`), "argument form_data must be a JSON object"},
		tcase{"form_data missing colon", PromptFillForm, with(PromptFillForm, "form_data", `{"a" "1"}`), "argument form_data must be a JSON object"},
		tcase{"unknown argument", PromptFillForm, with(PromptFillForm, "submit_selector", "#go"), "has no argument submit_selector"},
		tcase{"password too short", PromptAuthenticate, with(PromptAuthenticate, "password", "abc"), "the password cannot be used"},
	)
	c, b := promptClient(t, upstreamOnly)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			text, err := getPrompt(c, tc.prompt, tc.args)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), proxy.EINVALID) {
				t.Fatalf("prompts/get %s %v = %q, %v; want an %s error containing %q", tc.prompt, tc.args, text, err, proxy.EINVALID, tc.want)
			}
			if strings.Contains(err.Error(), "abc") {
				t.Errorf("the error echoes the password: %v", err)
			}
		})
	}
	if len(b.credentials) != 0 {
		t.Errorf("refused prompts put %q in the vault", b.credentials)
	}
	if _, err := getPrompt(c, "no_such_prompt", nil); err == nil {
		t.Error("an unknown prompt rendered")
	}
}

func TestAuthenticateKeepsThePasswordOut(t *testing.T) {
	const password = "S3cret-pa55-zq81"
	c, b := promptClient(t, upstreamOnly)
	text, err := getPrompt(c, PromptAuthenticate, map[string]string{"url": "http://127.0.0.1/login", "username": "alice", "password": password})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(text, password) || !strings.Contains(text, fakePlaceholder) {
		t.Errorf("rendered prompt: want the placeholder %s and never the password:\n%s", fakePlaceholder, text)
	}
	if diff := cmp.Diff([]string{password}, b.credentials); diff != "" {
		t.Errorf("values given to the vault (-want +got):\n%s", diff)
	}
}
