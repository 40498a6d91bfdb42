package api

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
)

// Requests a page of another origin starts (navigations and frames carry no
// Origin) are refused on every path; what the address bar, the browser
// itself or the inspector's own pages send is judged by the other checks.
func TestPageRequests(t *testing.T) {
	mounted := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	srv := New(&fakeSessions{}, fakeContent{}, WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))), WithMount("/mcp", mounted))
	locked := New(&fakeSessions{}, fakeContent{}, WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))), WithAuthToken(testToken))
	site := func(v string) map[string]string { return map[string]string{"Sec-Fetch-Site": v} }
	tests := []struct {
		name         string
		srv          *Server
		method, path string
		hdr          map[string]string
		want         answer
	}{
		{"a link from a page on another port", srv, "GET", "/sessions", map[string]string{"Sec-Fetch-Site": "same-site", "Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "document"}, answer{403, proxy.EORIGIN}},
		{"a frame of another site", srv, "GET", "/content/abc", map[string]string{"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "iframe"}, answer{403, proxy.EORIGIN}},
		{"a no-cors load", srv, "GET", "/sessions", map[string]string{"Sec-Fetch-Site": "same-site", "Sec-Fetch-Mode": "no-cors"}, answer{403, proxy.EORIGIN}},
		{"a form post", srv, "POST", "/sessions", site("cross-site"), answer{403, proxy.EORIGIN}},
		{"the inspector from another page", srv, "GET", "/ui/", site("same-site"), answer{403, proxy.EORIGIN}},
		{"health from another page", srv, "GET", "/health", site("cross-site"), answer{403, proxy.EORIGIN}},
		{"mcp from another page", srv, "POST", "/mcp", site("same-site"), answer{403, proxy.EORIGIN}},
		{"an unknown value", srv, "GET", "/sessions", site("somewhere"), answer{403, proxy.EORIGIN}},
		{"with a token, still refused", locked, "GET", "/sessions", map[string]string{"Sec-Fetch-Site": "same-site", "Authorization": "Bearer " + testToken}, answer{403, proxy.EORIGIN}},
		{"the address bar", srv, "GET", "/sessions", map[string]string{"Sec-Fetch-Site": "none", "Sec-Fetch-Mode": "navigate"}, answer{200, ""}},
		{"the inspector's own fetch", srv, "GET", "/sessions", map[string]string{"Sec-Fetch-Site": "same-origin", "Sec-Fetch-Mode": "cors"}, answer{200, ""}},
		{"not a browser", srv, "GET", "/sessions", nil, answer{200, ""}},
		{"the inspector's fetch still needs the token", locked, "GET", "/sessions", site("same-origin"), answer{401, proxy.EUNAUTHORIZED}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := send(t, tc.srv, tc.method, tc.path, "", tc.hdr)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s %s (-want +got):\n%s", tc.method, tc.path, diff)
			}
		})
	}
	// Two header lines: any one from another page is enough.
	req := newRequest("GET", "/sessions", nil)
	req.Header["Sec-Fetch-Site"] = []string{"none", "cross-site"}
	rec := httptest.NewRecorder()
	srv.ServeHTTP(rec, req)
	if rec.Code != http.StatusForbidden {
		t.Errorf("two Sec-Fetch-Site lines, one cross-site: status %d, want 403", rec.Code)
	}
}
