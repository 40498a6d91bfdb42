package main

import (
	"net/http"
	"strings"
	"testing"
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
			if got := s.content(t, ref, "?search_for=Alpha"); !strings.Contains(got, heading) || strings.Contains(got, paragraph) {
				t.Errorf("search %d for Alpha = %q, want the heading alone", i+1, got)
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
