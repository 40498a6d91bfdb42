//go:build unix

package main

import (
	"net/http"
	"regexp"
	"strings"
	"testing"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
)

// refAfter is the ref of the first line matching elem after the line that
// contains anchor, in a yaml snapshot: "the button of Product 2".
func refAfter(t *testing.T, yaml, anchor, elem string) string {
	t.Helper()
	re := regexp.MustCompile(elem + `.*\[ref=([a-z0-9]+)\]`)
	_, after, ok := strings.Cut(yaml, anchor)
	if !ok {
		t.Fatalf("%q is not in\n%s", anchor, yaml)
	}
	m := re.FindStringSubmatch(after)
	if m == nil {
		t.Fatalf("no %s after %q in\n%s", elem, anchor, yaml)
	}
	return m[1]
}

// TestActionsAnswerWithWhatTheyChanged drives real pages through /mcp: a
// small new page comes whole in the navigation's answer, a click answers
// with the lines it changed (no second read needed to verify it), a click
// that changes nothing says so, and a big page gives only its size. The
// HTTP API's /call keeps its documented answer unless asked for changes.
func TestActionsAnswerWithWhatTheyChanged(t *testing.T) {
	s := startServer(t, "", nil)
	pages := site(t)
	m := dialMCP(t, s.URL+"/mcp")

	nav := m.browser("browser_navigate", map[string]any{"url": pages + "/changes.html"})
	if nav.PageTitle != "Cart" || nav.PageURL != "" || !strings.HasPrefix(nav.Body, "snapshot:\n") {
		t.Fatalf("navigation answer = %+v, want the title (not the URL the call sent) and the small page whole", nav)
	}
	button := refAfter(t, nav.Body, "Product 2", `button "Add to cart"`)

	click := m.browser("browser_click", map[string]any{"target": button})
	if click.PageURL != "" {
		t.Errorf("a click that stayed on the page repeats the page line: %+v", click)
	}
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^changes: \+\d+ -\d+ ~\d+$`),
		regexp.MustCompile(`(?m)^~ paragraph: "Cart: 1 item" \(was "Cart: 0 items"\)$`),
		regexp.MustCompile(`(?m)^\+ button "In cart" \[disabled\] .*\[ref=\w+\]$`),
		regexp.MustCompile(`(?m)^- button "Add to cart" \[ref=` + button + `\]$`),
		regexp.MustCompile(`(?m)^\+ paragraph: Added Product 2$`),
	} {
		if !want.MatchString(click.Body) {
			t.Errorf("click answer lacks %s:\n%s", want, click.Body)
		}
	}
	if strings.Contains(click.Body, "Product 1") || strings.Contains(click.Body, "Product 3") {
		t.Errorf("click answer lists lines that did not change:\n%s", click.Body)
	}

	// The refs in the summary work in upstream's tools.
	gift := refAfter(t, click.Body+"\n"+nav.Body, "", `checkbox "Gift wrap"`)
	check := m.browser("browser_click", map[string]any{"target": gift})
	if !regexp.MustCompile(`(?m)^~ checkbox "Gift wrap" \[checked\] .*\[ref=` + gift + `\] \(was without \[checked\]\)$`).MatchString(check.Body) {
		t.Errorf("checking the box answered:\n%s", check.Body)
	}

	noop := m.browser("browser_click", map[string]any{"target": refAfter(t, nav.Body, "", `button "Does nothing"`)})
	if noop.Body != "changes: none" {
		t.Errorf("a click that changed nothing answered %q, want changes: none", noop.Body)
	}

	// Console errors come with the answer; other levels never do.
	cons := m.callText("browser_navigate", map[string]any{"url": pages + "/console.html"})
	if !strings.Contains(cons, "\nconsole: 1 error\n! broken error line\n") || strings.Contains(cons, "warning line") || strings.Contains(cons, "plain log") {
		t.Errorf("a page that logged an error answered:\n%s", cons)
	}

	// A page over the budget (1000 bytes by default) is read by ref.
	big := m.browser("browser_navigate", map[string]any{"url": pages + "/catalogue.html"})
	if !regexp.MustCompile(`^snapshot: \d+\.\d KB, read with get_content$`).MatchString(big.Body) || big.PageTitle != "Catalogue" {
		t.Errorf("big page answer = %+v", big)
	}
	if got := m.callText("get_content", map[string]any{"ref_id": big.RefID, "search_for": "Item 17"}); !strings.Contains(got, "Item 17") {
		t.Errorf("the big page's ref does not read: %q", got)
	}

	// Over HTTP, /call answers as documented; changes only when asked.
	sess := s.createSession(t)
	var plain, asked map[string]any
	for _, c := range []struct {
		body map[string]any
		out  *map[string]any
	}{
		{map[string]any{"session_id": sess, "tool": "browser_navigate", "params": map[string]string{"url": pages + "/changes.html"}}, &plain},
		{map[string]any{"session_id": sess, "tool": "browser_snapshot", "changes": true}, &asked},
	} {
		if code := do(t, "POST", s.URL+"/call", c.body, c.out); code != http.StatusOK {
			t.Fatalf("POST /call %v = %d", c.body, code)
		}
	}
	if _, ok := plain["changes"]; ok || plain["status"] != string(proxy.StatusSuccess) {
		t.Errorf("/call without changes:true = %v, want the documented fields only", plain)
	}
	if ch, ok := asked["changes"].(map[string]any); !ok || ch["added"] != 0.0 || ch["new_page"] != nil {
		t.Errorf("/call with changes:true after a snapshot of the same page = %v, want changes with nothing added", asked)
	}
}

// TestFullResponseMode: with PROXY_RESPONSE_MODE=full an MCP client gets
// upstream's own answer unchanged (and no change summary), and the call is
// still recorded whole.
func TestFullResponseMode(t *testing.T) {
	s := startServer(t, "", map[string]string{"PROXY_RESPONSE_MODE": "full"})
	pages := site(t)
	m := dialMCP(t, s.URL+"/mcp")

	got := m.callText("browser_navigate", map[string]any{"url": pages + "/changes.html"})
	for _, want := range []string{"### Ran Playwright code", "- Page URL: " + pages + "/changes.html", "- Page Title: Cart", "### Snapshot"} {
		if !strings.Contains(got, want) {
			t.Errorf("full-mode answer lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "ref_id: ") || strings.Contains(got, "changes:") {
		t.Errorf("full-mode answer carries the proxy's own lines:\n%s", got)
	}
	var listed struct {
		Sessions []proxy.Session `json:"sessions"`
	}
	if code := do(t, "GET", s.URL+"/sessions", nil, &listed); code != http.StatusOK || len(listed.Sessions) != 1 {
		t.Fatalf("GET /sessions = %d %v", code, listed)
	}
	var res proxy.CallResult
	if code := do(t, "POST", s.URL+"/call", map[string]any{"session_id": listed.Sessions[0].ID, "tool": "browser_snapshot", "changes": true}, &res); code != http.StatusOK {
		t.Fatalf("POST /call = %d", code)
	}
	if !strings.Contains(string(res.Upstream), "Cart: 0 items") || res.Changes != nil {
		t.Errorf("/call in full mode = upstream %d bytes, changes %+v; want upstream's answer and no summary", len(res.Upstream), res.Changes)
	}
	if text := do(t, "GET", s.URL+"/content/"+res.RefID, nil, nil); text != http.StatusOK {
		t.Errorf("GET /content of a full-mode call = %d", text)
	}
}
