package toolset_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
)

// TestSetOfflineBypassesCache: offline is offline even for a page the
// browser holds in its HTTP cache: navigating to it fails, with upstream's
// navigation and with the proxy's, and the page's server sees no request;
// back online the cache serves it again.
func TestSetOfflineBypassesCache(t *testing.T) {
	var mu sync.Mutex
	hits := map[string]int{}
	mux := http.NewServeMux()
	mux.HandleFunc("/cached/", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits[r.URL.Path]++
		mu.Unlock()
		w.Header().Set("Content-Type", "text/html")
		w.Header().Set("Cache-Control", "public, max-age=86400, immutable")
		io.WriteString(w, `<!doctype html><title>Cached</title><p>kept in the HTTP cache</p>`)
	})
	mux.HandleFunc("/elsewhere.html", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Header().Set("Cache-Control", "no-store")
		io.WriteString(w, `<!doctype html><title>Elsewhere</title>`)
	})
	site := httptest.NewServer(mux)
	t.Cleanup(site.Close)
	served := func(path string) int {
		mu.Lock()
		defer mu.Unlock()
		return hits[path]
	}

	s := startServer(t, quick)
	tests := []struct {
		tool string
		// loaded says whether a successful call of tool loaded the page.
		loaded func(proxy.CallResult) bool
	}{
		{"navigate", func(r proxy.CallResult) bool { return strings.Contains(string(r.Value), `"ok":true`) }},
		{"browser_navigate", func(r proxy.CallResult) bool { return r.Metadata.PageTitle == "Cached" }},
	}
	for _, tc := range tests {
		t.Run(tc.tool, func(t *testing.T) {
			id := s.createSession(t)
			path := "/cached/" + tc.tool + ".html"
			cached, elsewhere := site.URL+path, site.URL+"/elsewhere.html"
			open := func(url string) proxy.CallResult {
				t.Helper()
				return s.call(t, id, tc.tool, map[string]any{"url": url})
			}
			if res := open(cached); res.Status != proxy.StatusSuccess || !tc.loaded(res) || served(path) != 1 {
				t.Fatalf("%s online = %+v, the server saw %d requests; want it loaded with one", tc.tool, res, served(path))
			}
			open(elsewhere)

			s.ok(t, id, "set_offline", map[string]any{"offline": true}, nil)
			res := open(cached)
			if res.Status != proxy.StatusError || res.ErrorCode != proxy.ENAVIGATION {
				t.Errorf("%s offline to a cached page = %s %s %q %s, want error %s", tc.tool, res.Status, res.ErrorCode, res.Error, res.Value, proxy.ENAVIGATION)
			}
			if n := served(path); n != 1 {
				t.Errorf("the server saw %d requests for the page, want 1 (none while offline)", n)
			}

			// Back online the page loads, and then comes from the cache
			// again (the bypassed request may have dropped it from there).
			s.ok(t, id, "set_offline", map[string]any{"offline": false}, nil)
			for i := range 2 {
				open(elsewhere)
				if res := open(cached); res.Status != proxy.StatusSuccess || !tc.loaded(res) {
					t.Fatalf("%s back online = %+v, want the page loaded", tc.tool, res)
				}
				t.Logf("back online, load %d: the server has seen %d requests for the page", i+1, served(path))
			}
			if n := served(path); n > 2 {
				t.Errorf("back online the server saw every load (%d requests in all), want the HTTP cache to serve the last", n)
			}
		})
	}
}
