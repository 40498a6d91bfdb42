//go:build unix

package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	neturl "net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/content"
)

// TestSearchIsNotADiff: on a real page, a search answers its matches every
// time it is asked, a later wider search keeps what an earlier one
// returned, no match is said in so many words, and no search changes what
// the next read without one returns — over the HTTP API and over /mcp.
func TestSearchIsNotADiff(t *testing.T) {
	pages := site(t)
	s := startServer(t, "", nil)
	const heading, paragraph = `heading "Alpha heading"`, "Beta paragraph"

	t.Run("HTTP API", func(t *testing.T) {
		id := s.createSession(t)
		ref := s.call(t, id, "browser_navigate", map[string]string{"url": pages + "/alpha.html"}).RefID
		for i := range 2 {
			if got := s.content(t, ref, "?search_for=Alpha"); !strings.Contains(got, heading) {
				t.Errorf("search %d for Alpha = %q, want the heading", i+1, got)
			}
		}
		if got := s.content(t, ref, "?search_for=a"); !strings.Contains(got, heading) || !strings.Contains(got, paragraph) {
			t.Errorf("search for a = %q, want the heading and the paragraph", got)
		}
		resp, err := http.Get(s.URL + "/content/" + ref + "?search_for=nothing-like-this")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || resp.Header.Get("X-Search-No-Match") != "true" {
			t.Errorf("a search with no match = %d, X-Search-No-Match %q; want 200 and true", resp.StatusCode, resp.Header.Get("X-Search-No-Match"))
		}
		// The searches moved no cursor: this is the first read of the whole.
		if got := s.content(t, ref, ""); !strings.Contains(got, heading) || !strings.Contains(got, paragraph) {
			t.Errorf("the first whole read after the searches = %q, want the whole snapshot", got)
		}
		if got := s.content(t, ref, ""); got != "" {
			t.Errorf("the second whole read = %q, want empty (unchanged)", got)
		}
	})

	t.Run("MCP", func(t *testing.T) {
		c := dialMCP(t, s.URL+"/mcp")
		ref := c.browser("browser_navigate", map[string]any{"url": pages + "/alpha.html"}).RefID
		for i := range 2 {
			if got := c.callText("get_content", map[string]any{"ref_id": ref, "search_for": "alpha"}); !strings.Contains(got, heading) {
				t.Errorf("search %d for alpha = %q, want the heading", i+1, got)
			}
		}
		if got := c.callText("get_content", map[string]any{"ref_id": ref, "search_for": "nothing-like-this"}); !strings.HasPrefix(got, `no match for "nothing-like-this"`) {
			t.Errorf("a search with no match = %q, want it said", got)
		}
	})
}

// shopPage serves a list of 300 products whose buttons all say "Add to
// cart"; a click on one turns it into "In cart" for that product only.
func shopPage(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	b.WriteString(`<!doctype html><title>Shop</title><h1>Shop</h1><ul>`)
	for i := 1; i <= 300; i++ {
		fmt.Fprintf(&b, `<li><span>Product %d</span> <button onclick="this.textContent='In cart'">Add to cart</button></li>`, i)
	}
	b.WriteString(`</ul>`)
	page := b.String()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = io.WriteString(w, page)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/shop"
}

var buttonRef = regexp.MustCompile(`button "([^"]*)".* \[ref=(e\d+)\]`)

// itemOf returns the button (label and ref) that a search answer shows
// in the item of product, the lines of that item being product's line and
// the lines after it down to the next product.
func itemOf(t *testing.T, answer, product string) (label, ref string) {
	t.Helper()
	lines := strings.Split(answer, "\n")
	for i, l := range lines {
		if !strings.HasSuffix(l, product) {
			continue
		}
		// The button sits beside the name, before or after it, within the
		// listitem that encloses both.
		for _, near := range []int{i + 1, i - 1} {
			if near >= 0 && near < len(lines) {
				if m := buttonRef.FindStringSubmatch(lines[near]); m != nil {
					return m[1], m[2]
				}
			}
		}
	}
	t.Fatalf("no button beside %q in the search answer:\n%s", product, answer)
	return "", ""
}

// TestSearchLocatesAndActsInOneRead: on a real page of 300 products whose
// buttons share one label, one get_content(search_for) over /mcp shows the
// product with its own button's ref, and a click on that ref (upstream's
// browser_click target) changes that product and no other.
func TestSearchLocatesAndActsInOneRead(t *testing.T) {
	url := shopPage(t)
	s := startServer(t, "", nil)
	c := dialMCP(t, s.URL+"/mcp")
	ref := c.browser("browser_navigate", map[string]any{"url": url}).RefID

	answer := c.callText("get_content", map[string]any{"ref_id": ref, "search_for": "Product 217"})
	if len(answer) > 400 || strings.Contains(answer, "Product 216") || strings.Contains(answer, "Product 218") {
		t.Errorf("the search answer is not just the item of Product 217 (%d bytes):\n%s", len(answer), answer)
	}
	label, button := itemOf(t, answer, "Product 217")
	if label != "Add to cart" {
		t.Fatalf("the button beside Product 217 says %q, want \"Add to cart\":\n%s", label, answer)
	}

	c.browser("browser_click", map[string]any{"target": button, "element": "Add to cart button of Product 217"})
	after := c.browser("browser_snapshot", map[string]any{}).RefID
	for product, want := range map[string]string{"Product 217": "In cart", "Product 216": "Add to cart", "Product 218": "Add to cart"} {
		answer := c.callText("get_content", map[string]any{"ref_id": after, "search_for": product + "$", "regex": true})
		if label, _ := itemOf(t, answer, product); label != want {
			t.Errorf("after the click, the button of %s says %q, want %q:\n%s", product, label, want, answer)
		}
	}

	// An invalid pattern is the caller's error, said as such.
	res := c.callResult("get_content", map[string]any{"ref_id": ref, "search_for": "Product (", "regex": true})
	if !res.IsError || !strings.Contains(mcpText(res), proxy.EINVALID) || !strings.Contains(mcpText(res), "regular expression") {
		t.Errorf("get_content with an invalid regex = %+v, want an INVALID_PARAMETERS error naming it", res)
	}
}

// TestSearchOptionsOverHTTP: GET /content takes regex and case_sensitive
// with search_for, refuses an invalid pattern or a bad boolean with
// INVALID_PARAMETERS, and a search matching too much says how much more.
func TestSearchOptionsOverHTTP(t *testing.T) {
	url := shopPage(t)
	s := startServer(t, "", nil)
	id := s.createSession(t)
	ref := s.call(t, id, "browser_navigate", map[string]string{"url": url}).RefID
	get := func(query string) (code int, text string, noMatch bool) {
		t.Helper()
		resp, err := http.Get(s.URL + "/content/" + ref + "?" + query)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, string(body), resp.Header.Get("X-Search-No-Match") == "true"
	}
	q := func(kv ...string) string {
		v := neturl.Values{}
		for i := 0; i < len(kv); i += 2 {
			v.Set(kv[i], kv[i+1])
		}
		return v.Encode()
	}

	t.Run("regex", func(t *testing.T) {
		code, text, _ := get(q("search_for", `Product 21\d$`, "regex", "true"))
		if code != http.StatusOK {
			t.Fatalf("= %d %s", code, text)
		}
		for i := 210; i <= 219; i++ {
			if label, _ := itemOf(t, text, fmt.Sprintf("Product %d", i)); label != "Add to cart" {
				t.Errorf("Product %d's button = %q", i, label)
			}
		}
		if n := strings.Count(text, `button "Add to cart"`); n != 10 {
			t.Errorf("%d buttons in the answer, want the 10 of Product 210-219:\n%s", n, text)
		}
	})
	t.Run("case", func(t *testing.T) {
		for _, tc := range []struct {
			query   string
			noMatch bool
		}{
			{q("search_for", "product 217"), false},
			{q("search_for", "product 217", "case_sensitive", "true"), true},
			{q("search_for", "Product 217", "case_sensitive", "true"), false},
			{q("search_for", "^.*product 217$", "regex", "true"), false},
			{q("search_for", "^.*product 217$", "regex", "true", "case_sensitive", "true"), true},
		} {
			code, text, noMatch := get(tc.query)
			if code != http.StatusOK || noMatch != tc.noMatch || (!noMatch && !strings.Contains(text, "Product 217")) {
				t.Errorf("%s = %d, no match %v, %q; want no match %v", tc.query, code, noMatch, text, tc.noMatch)
			}
		}
	})
	t.Run("invalid", func(t *testing.T) {
		for _, query := range []string{
			q("search_for", "Product (", "regex", "true"),
			q("search_for", "Product", "regex", "maybe"),
			q("search_for", "Product", "case_sensitive", "yes"),
		} {
			code, text, _ := get(query)
			var body proxyErr
			if err := json.Unmarshal([]byte(text), &body); err != nil || code != http.StatusBadRequest || body.Error != proxy.EINVALID {
				t.Errorf("%s = %d %s, want 400 %s", query, code, text, proxy.EINVALID)
			}
		}
	})
	t.Run("cap", func(t *testing.T) {
		_, text, _ := get(q("search_for", "add to cart"))
		if n := strings.Count(text, `button "Add to cart"`); n != content.MaxMatches {
			t.Errorf("%d buttons shown, want %d", n, content.MaxMatches)
		}
		if want := fmt.Sprintf("# %d more matches: narrow the search\n", 300-content.MaxMatches); !strings.HasSuffix(text, want) {
			t.Errorf("the answer ends %q, want %q", text[max(0, len(text)-80):], want)
		}
	})
}

// callResult calls a tool and returns its result, an error result included.
func (m *mcpClient) callResult(tool string, args map[string]any) *mcp.CallToolResult {
	m.t.Helper()
	ctx, cancel := m.ctx()
	defer cancel()
	req := mcp.CallToolRequest{}
	req.Params.Name = tool
	req.Params.Arguments = args
	res, err := m.c.CallTool(ctx, req)
	if err != nil {
		m.t.Fatalf("%s: %v", tool, err)
	}
	return res
}

// mcpText is the text of a result's parts.
func mcpText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if text, ok := c.(mcp.TextContent); ok {
			b.WriteString(text.Text)
		}
	}
	return b.String()
}
