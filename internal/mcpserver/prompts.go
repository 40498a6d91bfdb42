package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/catalog"
)

// Prompt names, as MCP clients list them.
const (
	PromptScrapeWebsite    = "scrape_website"
	PromptFillForm         = "fill_form"
	PromptAuthenticate     = "authenticate"
	PromptE2ETest          = "e2e_test"
	PromptVisualRegression = "visual_regression"
)

// promptArg is one argument of a prompt. MCP prompt arguments are strings;
// object arguments carry a JSON object.
type promptArg struct {
	name, description string
	required          bool
	def               string // used when the argument is absent or empty
}

// promptDef is a prompt and how to render it. render gets the arguments
// with defaults applied and the tools this server lists.
type promptDef struct {
	name, title, description string
	args                     []promptArg
	render                   func(ctx context.Context, s *Server, tb toolbox, a map[string]string) (string, error)
}

func promptDefs() []promptDef {
	return []promptDef{
		{name: PromptScrapeWebsite, title: "Scrape a website", description: "Scrape structured data from a website",
			args: []promptArg{
				{name: "url", description: "The URL to scrape", required: true},
				{name: "selectors", description: `JSON object mapping field names to CSS selectors, e.g. {"title":"h1","price":".price"}`, required: true},
			},
			render: renderScrape},
		{name: PromptFillForm, title: "Fill a form", description: "Fill out and submit a web form",
			args: []promptArg{
				{name: "url", description: "The URL containing the form", required: true},
				{name: "form_data", description: `JSON object with form field values, keyed by field name or CSS selector, e.g. {"email":"a@example.com","#age":"42"}`, required: true},
				{name: "submit_button", description: "Selector for submit button", def: "button[type='submit']"},
			},
			render: renderFillForm},
		{name: PromptAuthenticate, title: "Log into a website", description: "Log into a website (the password goes to the credential vault and never into the conversation or the record)",
			args: []promptArg{
				{name: "url", description: "Login page URL", required: true},
				{name: "username", description: "Username or email", required: true},
				{name: "password", description: "Password; the model only sees a placeholder that the proxy replaces on the way to the browser", required: true},
				{name: "username_selector", description: "Username field selector", def: "input[name='username'], input[type='email']"},
				{name: "password_selector", description: "Password field selector", def: "input[name='password'], input[type='password']"},
				{name: "submit_selector", description: "Submit button selector", def: "button[type='submit']"},
			},
			render: renderAuthenticate},
		{name: PromptE2ETest, title: "Run an end-to-end test", description: "Run end-to-end user journey test",
			args: []promptArg{
				{name: "test_scenario", description: "Description of the user journey", required: true},
				{name: "start_url", description: "Starting URL", required: true},
			},
			render: renderE2E},
		{name: PromptVisualRegression, title: "Visual regression test", description: "Compare page screenshots for visual changes",
			args: []promptArg{
				{name: "url", description: "The URL to test", required: true},
				{name: "baseline_screenshot", description: "Path to baseline screenshot", required: true},
			},
			render: renderVisual},
	}
}

// addPrompts registers the prompts. tools is the catalogue this server
// lists: the rendered steps name only tools the client can call.
func (s *Server) addPrompts(tools []proxy.Tool) {
	tb := newToolbox(tools)
	for _, p := range promptDefs() {
		opts := []mcp.PromptOption{mcp.WithPromptTitle(p.title), mcp.WithPromptDescription(p.description)}
		for _, a := range p.args {
			desc := a.description
			if a.def != "" {
				desc += " (default: " + a.def + ")"
			}
			aopts := []mcp.ArgumentOption{mcp.ArgumentDescription(desc)}
			if a.required {
				aopts = append(aopts, mcp.RequiredArgument())
			}
			opts = append(opts, mcp.WithArgument(a.name, aopts...))
		}
		s.mcp.AddPrompt(mcp.NewPrompt(p.name, opts...), s.promptHandler(p, tb))
	}
}

func (s *Server) promptHandler(p promptDef, tb toolbox) server.PromptHandlerFunc {
	return func(ctx context.Context, req mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		args, err := p.bind(req.Params.Arguments)
		if err != nil {
			return nil, promptError(err)
		}
		text, err := p.render(ctx, s, tb.visible(ctx, s.visible), args)
		if err != nil {
			return nil, promptError(err)
		}
		return mcp.NewGetPromptResult(p.description, []mcp.PromptMessage{mcp.NewPromptMessage(mcp.RoleUser, mcp.NewTextContent(text))}), nil
	}
}

// bind checks the arguments (mcp-go does not: it hands over whatever the
// client sent) and applies defaults. An empty value counts as absent. An
// unknown name is refused: a misspelt optional argument would otherwise
// silently fall back to its default.
func (p promptDef) bind(given map[string]string) (map[string]string, error) {
	names := make([]string, len(p.args))
	for i, a := range p.args {
		names[i] = a.name
	}
	var unknown []string
	for k := range given {
		if !slices.Contains(names, k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return nil, proxy.Errorf(proxy.EINVALID, "prompt %s has no argument %s (arguments: %s)", p.name, strings.Join(unknown, ", "), strings.Join(names, ", "))
	}
	out := make(map[string]string, len(p.args))
	for _, a := range p.args {
		v := given[a.name]
		switch {
		case strings.TrimSpace(v) != "":
			out[a.name] = v
		case a.required:
			e := proxy.Errorf(proxy.EINVALID, "prompt %s: missing required argument %s (%s)", p.name, a.name, a.description)
			e.Details = map[string]any{"argument": a.name}
			return nil, e
		default:
			out[a.name] = a.def
		}
	}
	return out, nil
}

// field is one entry of a JSON object argument, in the order given.
type field struct {
	key string
	// value is the entry's string, or its JSON text when it is not a string.
	value    string
	isString bool
}

// objectArg parses a JSON object argument, keeping the order of its
// entries: a form is filled, and scraped fields are reported, in the
// order the user wrote them.
func objectArg(prompt, name, raw string) ([]field, error) {
	bad := func(why string) error {
		e := proxy.Errorf(proxy.EINVALID, "prompt %s: argument %s must be a JSON object of field → value, e.g. {\"title\":\"h1\"}: %s", prompt, name, why)
		e.Details = map[string]any{"argument": name}
		return e
	}
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, bad("it does not start with {")
	}
	var out []field
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, bad(err.Error())
		}
		key := tok.(string) // inside an object, More and Token give keys
		if seen[key] {
			return nil, bad(fmt.Sprintf("field %q is given twice", key))
		}
		seen[key] = true
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, bad(err.Error())
		}
		f := field{key: key}
		if err := json.Unmarshal(v, &f.value); err == nil {
			f.isString = true
		} else {
			var buf bytes.Buffer
			if err := json.Compact(&buf, v); err != nil {
				return nil, bad(err.Error())
			}
			f.value = buf.String()
		}
		out = append(out, f)
	}
	if _, err := dec.Token(); err != nil {
		return nil, bad(err.Error())
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, bad("there is data after the object")
	}
	if len(out) == 0 {
		return nil, bad("it names no field")
	}
	return out, nil
}

// toolbox is the catalogue a prompt is rendered for: tool name → input
// schema. The groups selected (PROXY_TOOLSETS, or the client's own) decide
// whether the proxy's selector tools (navigate, fill, click, get_text…) are
// listed; without them the steps use upstream's browser_* tools.
type toolbox map[string]json.RawMessage

func newToolbox(tools []proxy.Tool) toolbox {
	tb := make(toolbox, len(tools))
	for _, t := range tools {
		tb[t.Name] = t.InputSchema
	}
	return tb
}

// visible is the part of tb a request may call (all of it when visible is
// nil).
func (tb toolbox) visible(ctx context.Context, visible func(context.Context, string) bool) toolbox {
	if visible == nil {
		return tb
	}
	out := make(toolbox, len(tb))
	for name, schema := range tb {
		if visible(ctx, name) {
			out[name] = schema
		}
	}
	return out
}

func (tb toolbox) has(name string) bool { _, ok := tb[name]; return ok }

// arg returns the first of candidates that tool's schema has as a property
// (candidates[0] when none is): argument names are read from the schema,
// not assumed, since upstream renames them between versions.
func (tb toolbox) arg(tool string, candidates ...string) string {
	var schema struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	_ = json.Unmarshal(tb[tool], &schema)
	for _, c := range candidates {
		if _, ok := schema.Properties[c]; ok {
			return c
		}
	}
	return candidates[0]
}

// listed returns the listed tools among names, in that order.
func (tb toolbox) listed(names ...string) []string {
	var out []string
	for _, n := range names {
		if tb.has(n) {
			out = append(out, n)
		}
	}
	return out
}

// howToRead reminds the model of how this proxy answers.
func (tb toolbox) howToRead() string {
	var b strings.Builder
	b.WriteString("How the browser tools answer: every call returns a ref, the page when it changed, console errors, and what the call changed on the page (+ added, - removed, ~ changed lines with element refs such as [ref=e12]); a small new page comes whole, a big one as its size.")
	if tb.has(catalog.ToolGetContent) {
		b.WriteString(" Read the rest with get_content(ref_id, search_for): search_for returns the matching lines with their ancestors and neighbourhood (the list item or table row they are in); without it you get the whole snapshot. A screenshot's ref_id gives the image.")
	}
	if tb.has(catalog.ToolGetConsole) {
		b.WriteString(" Console messages: get_console_content(ref_id, level).")
	}
	return b.String()
}

// findRef is how to get an element ref without the selector tools.
func (tb toolbox) findRef(what string) string {
	if tb.has("browser_snapshot") && tb.has(catalog.ToolGetContent) {
		return fmt.Sprintf("call browser_snapshot, then get_content(ref_id, search_for: %s) to find its element ref", what)
	}
	return "find its element ref in the page snapshot"
}

// The helpers below return clauses (lower case, no final period), for
// callers to place in a sentence; sentence makes a step of one.

// sentence capitalises a clause and ends it with a period.
func sentence(clause string) string {
	if clause == "" {
		return ""
	}
	return strings.ToUpper(clause[:1]) + clause[1:] + "."
}

func (tb toolbox) open(url string) string {
	switch {
	case tb.has("navigate"):
		return fmt.Sprintf("call navigate with %s %q", tb.arg("navigate", "url"), url)
	case tb.has("browser_navigate"):
		return fmt.Sprintf("call browser_navigate with url %q", url)
	}
	return fmt.Sprintf("open %q in the browser", url)
}

// waitLoad is how to wait for a page; expect says where the text to wait
// for is ("on the page", "in the form").
func (tb toolbox) waitLoad(expect string) string {
	switch {
	case tb.has("wait_for_load"):
		return "call wait_for_load so that the page has finished loading"
	case tb.has("browser_wait_for"):
		return fmt.Sprintf("if the page is still loading, call browser_wait_for with a text you expect %s", expect)
	}
	return "make sure the page has finished loading"
}

// fill is how to put value into the element matching selector; value is
// shown as given (quoted).
func (tb toolbox) fill(selector, value string) string {
	switch {
	case tb.has("fill"):
		return fmt.Sprintf("call fill with %s %q and %s %q", tb.arg("fill", "selector"), selector, tb.arg("fill", "value", "text"), value)
	case tb.has("browser_type"):
		return fmt.Sprintf("call browser_type with %s %q and %s %q (%s takes a CSS selector or an element ref; if the selector matches several elements, %s and use the ref)",
			tb.arg("browser_type", "target", "ref"), selector, tb.arg("browser_type", "text"), value, tb.arg("browser_type", "target", "ref"), tb.findRef("the field's label"))
	}
	return fmt.Sprintf("type %q into the element matching %q", value, selector)
}

func (tb toolbox) click(selector string) string {
	switch {
	case tb.has("click"):
		return fmt.Sprintf("call click with %s %q", tb.arg("click", "selector"), selector)
	case tb.has("browser_click"):
		return fmt.Sprintf("call browser_click with %s %q (a CSS selector or an element ref; if the selector matches several elements, %s and use the ref)",
			tb.arg("browser_click", "target", "ref"), selector, tb.findRef("the button's text"))
	}
	return fmt.Sprintf("click the element matching %q", selector)
}

func (tb toolbox) screenshot(fullPage bool) string {
	switch {
	case tb.has("browser_take_screenshot"):
		s := "call browser_take_screenshot"
		if fullPage && tb.arg("browser_take_screenshot", "fullPage") == "fullPage" {
			s += " with fullPage true"
		}
		return s + "; its ref_id gives the image (get_content(ref_id), or the resource playwright:///screenshot/{ref_id})"
	case tb.has("screenshot_element"):
		return fmt.Sprintf("call screenshot_element with %s \"body\"; its ref_id gives the image (get_content(ref_id), or the resource playwright:///screenshot/{ref_id})", tb.arg("screenshot_element", "selector"))
	}
	return "take a screenshot"
}

// pageMetadata is where the final URL (after redirects) and the title are.
func (tb toolbox) pageMetadata() string {
	if tb.has("get_page_metadata") {
		return "get_page_metadata gives the final URL (after redirects) and the title"
	}
	return "the final URL (after redirects) and the title are the page_url and page_title of the last call's metadata"
}

// steps numbers the lines of a procedure.
type steps []string

func (st *steps) add(format string, a ...any) { *st = append(*st, fmt.Sprintf(format, a...)) }

func (st steps) String() string {
	var b strings.Builder
	for i, s := range st {
		fmt.Fprintf(&b, "%d. %s\n", i+1, s)
	}
	return b.String()
}

func renderScrape(_ context.Context, _ *Server, tb toolbox, a map[string]string) (string, error) {
	fields, err := objectArg(PromptScrapeWebsite, "selectors", a["selectors"])
	if err != nil {
		return "", err
	}
	var list strings.Builder
	var names []string
	for _, f := range fields {
		if !f.isString || strings.TrimSpace(f.value) == "" {
			return "", proxy.Errorf(proxy.EINVALID, "prompt %s: selectors.%s must be a CSS selector string, got %s", PromptScrapeWebsite, f.key, f.value)
		}
		fmt.Fprintf(&list, "   - %s: %s\n", f.key, f.value)
		names = append(names, f.key)
	}
	var st steps
	st.add("%s", sentence(tb.open(a["url"])))
	st.add("%s", sentence(tb.waitLoad("on the page")))
	switch {
	case tb.has("get_text"):
		st.add("Extract the data: for each field below, call get_text with %s set to its CSS selector:\n%s", tb.arg("get_text", "selector"), strings.TrimRight(list.String(), "\n"))
	case tb.has("browser_evaluate"):
		st.add("Extract the data: call browser_evaluate once, with a function that returns, for each field below, the text of the elements matching its CSS selector (document.querySelectorAll):\n%s", strings.TrimRight(list.String(), "\n"))
	default:
		st.add("Extract the data: %s; for each field below, search for what its CSS selector points at:\n%s", tb.findRef("a word of the field"), strings.TrimRight(list.String(), "\n"))
	}
	if more := tb.listed("extract_table", "extract_links"); len(more) > 0 {
		st.add("For tables and lists of links, %s return them already structured.", strings.Join(more, " and "))
	}
	st.add("Return the extracted data as a JSON object with the fields %s (null, with a note, for a selector that matches nothing).", strings.Join(names, ", "))
	return fmt.Sprintf("I need to scrape data from %s. Please:\n\n%s\nHandle any errors gracefully and include metadata about the scrape: timestamp, page title and final URL after redirects (%s).\n\n%s\n",
		a["url"], st, tb.pageMetadata(), tb.howToRead()), nil
}

// plainName is a form key that names a field rather than being a selector.
var plainName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_\-]*$`)

func renderFillForm(_ context.Context, _ *Server, tb toolbox, a map[string]string) (string, error) {
	fields, err := objectArg(PromptFillForm, "form_data", a["form_data"])
	if err != nil {
		return "", err
	}
	var st steps
	st.add("%s", sentence(tb.open(a["url"])))
	st.add("%s", sentence(tb.waitLoad("in the form")))
	var list strings.Builder
	for _, f := range fields {
		sel := f.key
		if plainName.MatchString(f.key) {
			sel = fmt.Sprintf("[name='%s']", f.key)
		}
		fmt.Fprintf(&list, "   - %s (selector %s): %q\n", f.key, sel, f.value)
	}
	fieldList := strings.TrimRight(list.String(), "\n")
	switch {
	case tb.has("fill"):
		st.add("Fill the following fields, in this order: for each, call fill with %s = its selector and %s = its value (if a selector matches nothing, find the field by its label with get_content(ref_id, search_for)):\n%s",
			tb.arg("fill", "selector"), tb.arg("fill", "value", "text"), fieldList)
	case tb.has("browser_fill_form"):
		st.add("Fill the following fields: %s; then call browser_fill_form once with all of them (for each: its name, its element ref or selector, its type — textbox, checkbox, radio, combobox or slider — and its value as text):\n%s",
			tb.findRef("each field's label"), fieldList)
	default:
		st.add("Fill the following fields, in this order; for each, %s:\n%s", tb.fill("<its selector>", "<its value>"), fieldList)
	}
	st.add("Click the submit button (%s): %s.", a["submit_button"], tb.click(a["submit_button"]))
	st.add("Wait for the submission to complete: %s.", tb.waitLoad("on the confirmation or the next page"))
	st.add("Return the result URL and any success or error messages (%s; read the messages with get_content(ref_id, search_for)).", tb.pageMetadata())
	return fmt.Sprintf("Please fill out and submit a form at %s:\n\n%s\n%s\n", a["url"], st, tb.howToRead()), nil
}

func renderAuthenticate(ctx context.Context, s *Server, tb toolbox, a map[string]string) (string, error) {
	// The password goes to the vault first: from here on only its
	// placeholder exists in this conversation, and the proxy swaps it for
	// the password only in what it forwards to the browser.
	placeholder, err := s.sessions.AddCredential(s.acting(ctx), a["password"])
	if err != nil {
		e := proxy.AsError(err)
		return "", &proxy.Error{Code: e.Code, Message: "prompt " + PromptAuthenticate + ": the password cannot be used: " + e.Message, Details: map[string]any{"argument": "password"}, Retryable: e.Retryable}
	}
	var st steps
	st.add("%s", sentence(tb.open(a["url"])))
	st.add("%s", sentence(tb.waitLoad("in the login form")))
	st.add("Fill the username field (%s) with %q: %s.", a["username_selector"], a["username"], tb.fill(a["username_selector"], a["username"]))
	st.add("Fill the password field (%s) with exactly this placeholder, character for character: %s — %s. The proxy puts the real password in its place only on the way to the browser; pages, snapshots and the record show the placeholder. Never type anything else into the password field, and do not try to reveal the password.",
		a["password_selector"], placeholder, tb.fill(a["password_selector"], placeholder))
	st.add("Click submit (%s): %s.", a["submit_selector"], tb.click(a["submit_selector"]))
	st.add("Wait for the redirect or a success message: %s.", tb.waitLoad("on the page after logging in"))
	// The session's own state (cookies, storage) is saved and restored by
	// the proxy; save_state is for taking the login to another session.
	saved := "The browser session keeps its authentication cookies: the proxy saves and restores them itself."
	if tb.has("save_state") {
		saved += " To reuse this login in another session, call save_state"
		if tb.has("restore_state") {
			saved += " and keep its ref_id for restore_state"
		}
		saved += "."
	}
	st.add("%s", saved)
	check := "Check that you are logged in (" + tb.pageMetadata()
	if tb.has("get_cookies") {
		check += "; get_cookies shows the session cookie"
	}
	check += ")"
	st.add("%s. Return the session_id of these calls (it is in every call's answer) for future requests.", check)
	return fmt.Sprintf("Please log into %s:\n\n%s\nNote: if a second factor (2FA code, CAPTCHA) appears, stop and ask the user for it.\n\n%s\n", a["url"], st, tb.howToRead()), nil
}

func renderE2E(_ context.Context, _ *Server, tb toolbox, a map[string]string) (string, error) {
	act := tb.listed("click", "fill", "type", "browser_click", "browser_type", "browser_fill_form", "browser_select_option", "browser_press_key", "browser_hover")
	actWith := "the browser tools"
	if len(act) > 0 {
		actWith = strings.Join(act, ", ")
	}
	verify := "read the page with get_content(ref_id, search_for: the text you expect)"
	if tb.has(catalog.ToolGetConsole) {
		verify += "; when a call's console_error_count is not 0, read the errors with get_console_content(ref_id, level: \"error\")"
	}
	return fmt.Sprintf(`Execute this E2E test scenario: %s

Starting at: %s

1. %s
2. For each step of the scenario:
   a. Describe what you're doing.
   b. Do it with %s.
   c. Take a screenshot: %s.
   d. Verify the expected outcome: %s.
   e. Report any issues.

At the end, provide:
- Test result (pass/fail)
- Screenshots from each step (their ref_ids; each is readable as playwright:///screenshot/{ref_id})
- Performance metrics (the time each step took, from the calls' timestamps)
- Any errors encountered, console errors included

%s
`, a["test_scenario"], a["start_url"], sentence(tb.open(a["start_url"])), actWith, tb.screenshot(false), verify, tb.howToRead()), nil
}

func renderVisual(_ context.Context, _ *Server, tb toolbox, a map[string]string) (string, error) {
	var st steps
	st.add("%s", sentence(tb.open(a["url"])))
	st.add("%s", sentence(tb.waitLoad("on the page")))
	st.add("Take a full-page screenshot: %s.", tb.screenshot(true))
	st.add("Compare it with the baseline: %s (the browser tools cannot read that file: open it with your own file tools, or ask the user for it).", a["baseline_screenshot"])
	st.add("Report any visual differences.")
	st.add("Highlight the areas that changed (where on the page, and what).")
	st.add("Return the difference as an estimated percentage and the ref_id of the new screenshot (playwright:///screenshot/{ref_id}).")
	return fmt.Sprintf("Perform visual regression testing for %s:\n\n%s\n%s\n", a["url"], st, tb.howToRead()), nil
}
