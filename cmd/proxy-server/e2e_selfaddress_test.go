//go:build unix

package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
)

// TestSessionsCannotOpenTheProxyItself: a session's browser runs on the
// same machine as the API, and without a token the API answers anyone on
// loopback. A hostile session (or a page steering its model) tries every way
// to load the API into its own page, where it would read every session's
// ids and records: a tool's navigation by each loopback name, an HTTP
// redirect, a link, a frame, a script's fetch, a history step back. Each is
// refused or taken away, and nothing of session A reaches session B.
// wantNavigateBlocked: browser_navigate to u in session id is refused
// with DOMAIN_BLOCKED before it reaches the browser.
func (s *server) wantNavigateBlocked(t *testing.T, id, u string) {
	t.Helper()
	var e proxyErr
	code := do(t, "POST", s.URL+"/call", map[string]any{"session_id": id, "tool": "browser_navigate", "params": map[string]any{"url": u}}, &e)
	if code != http.StatusForbidden || e.Error != proxy.EDOMAINBLOCKED {
		t.Errorf("navigate %s = %d %+v, want 403 %s", u, code, e, proxy.EDOMAINBLOCKED)
	}
}

func TestSessionsCannotOpenTheProxyItself(t *testing.T) {
	s := startServer(t, "", nil)
	proxyURL, err := url.Parse(s.URL)
	if err != nil {
		t.Fatal(err)
	}
	port := proxyURL.Port()
	pages := site(t)

	// The hostile site B visits: every page points at the proxy's API.
	mux := http.NewServeMux()
	mux.HandleFunc("/redirect", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, s.URL+r.URL.Query().Get("to"), http.StatusFound)
	})
	mux.HandleFunc("/link", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `<title>link</title><a href="%s/sessions">all sessions</a>`, s.URL)
	})
	mux.HandleFunc("/frame", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `<title>frame</title><iframe src="%s/sessions"></iframe>`, s.URL)
	})
	hostile := httptest.NewServer(mux)
	t.Cleanup(hostile.Close)

	a, b := s.createSession(t), s.createSession(t)
	navA := s.call(t, a, "browser_navigate", map[string]any{"url": pages + "/index.html"})
	if navA.Status != proxy.StatusSuccess {
		t.Fatalf("A's navigation = %+v", navA)
	}
	// What B must never see: A's session id and the ref of A's call.
	secrets := []string{a, navA.RefID}
	noneOfA := func(t *testing.T, what, text string) {
		t.Helper()
		for _, sec := range secrets {
			if strings.Contains(text, sec) {
				t.Errorf("%s shows session A's %q:\n%s", what, sec, text)
			}
		}
	}
	// seen is everything B can read of one of its calls: the answer and
	// the whole stored record.
	seen := func(t *testing.T, res proxy.CallResult) string {
		t.Helper()
		var raw string
		do(t, "GET", s.URL+"/content/"+res.RefID+"?reset_cursor=true", nil, &raw)
		return fmt.Sprintf("%+v\n%s", res, raw)
	}
	pageOfB := func(t *testing.T) string {
		t.Helper()
		return s.call(t, b, "browser_snapshot", map[string]any{}).Metadata.PageURL
	}

	t.Run("a tool's navigation to any loopback name is DOMAIN_BLOCKED", func(t *testing.T) {
		for _, u := range []string{
			s.URL + "/sessions",
			"http://localhost:" + port + "/content/" + navA.RefID,
			"http://127.0.0.2:" + port + "/sessions",
			"http://[::1]:" + port + "/sessions",
			"http://0.0.0.0:" + port + "/ui/",
			"http://2130706433:" + port + "/sessions",
			"localhost:" + port + "/sessions",
		} {
			s.wantNavigateBlocked(t, b, u)
		}
		var e proxyErr
		code := do(t, "POST", s.URL+"/call", map[string]any{"session_id": b, "tool": "browser_tabs", "params": map[string]any{"action": "new", "url": s.URL + "/sessions"}}, &e)
		if code != http.StatusForbidden || e.Error != proxy.EDOMAINBLOCKED {
			t.Errorf("a new tab on the API = %d %+v, want 403 %s", code, e, proxy.EDOMAINBLOCKED)
		}
	})

	t.Run("a redirect to the API is taken away and nothing of it is kept", func(t *testing.T) {
		for _, to := range []string{"/sessions", "/content/" + navA.RefID, "/ui/"} {
			res := s.call(t, b, "browser_navigate", map[string]any{"url": hostile.URL + "/redirect?to=" + url.QueryEscape(to)})
			if res.Status != proxy.StatusError || res.ErrorCode != proxy.EDOMAINBLOCKED {
				t.Errorf("redirect to %s: %+v, want an error %s", to, res, proxy.EDOMAINBLOCKED)
			}
			noneOfA(t, "the redirected call", seen(t, res))
			if u := pageOfB(t); u != "about:blank" {
				t.Errorf("after the redirect to %s, B's page is %q, want about:blank", to, u)
			}
		}
	})

	t.Run("a history step back to the API is taken away again", func(t *testing.T) {
		res := s.call(t, b, "browser_navigate_back", map[string]any{})
		noneOfA(t, "navigate_back", seen(t, res))
		if u := pageOfB(t); strings.Contains(u, ":"+port+"/") {
			t.Errorf("after navigate_back B's page is %q", u)
		}
	})

	t.Run("a link to the API is refused by the API", func(t *testing.T) {
		nav := s.call(t, b, "browser_navigate", map[string]any{"url": hostile.URL + "/link"})
		m := regexp.MustCompile(`link "all sessions" \[ref=(\w+)\]`).FindStringSubmatch(s.content(t, nav.RefID, "?reset_cursor=true"))
		if m == nil {
			t.Fatalf("no link in the hostile page: %+v\n%s", nav, s.content(t, nav.RefID, "?reset_cursor=true"))
		}
		res := s.call(t, b, "browser_click", map[string]any{"element": "all sessions", "target": m[1]})
		noneOfA(t, "the click", seen(t, res))
		noneOfA(t, "B's page after the click", seen(t, s.call(t, b, "browser_snapshot", map[string]any{})))
	})

	t.Run("a frame of the API is refused by the API", func(t *testing.T) {
		nav := s.call(t, b, "browser_navigate", map[string]any{"url": hostile.URL + "/frame"})
		text := seen(t, nav)
		noneOfA(t, "the framing page", text)
		if !strings.Contains(text, proxy.EORIGIN) {
			t.Errorf("the frame does not show the API's refusal (%s):\n%s", proxy.EORIGIN, text)
		}
	})

	t.Run("a script's fetch of the API reads nothing", func(t *testing.T) {
		res := s.call(t, b, "browser_evaluate", map[string]any{"function": fmt.Sprintf(
			`async () => { try { const r = await fetch(%q); return await r.text(); } catch (e) { return 'refused: ' + e; } }`, s.URL+"/sessions")})
		noneOfA(t, "the fetch", seen(t, res))
	})

	// A is untouched, and its record still reads back.
	if got := s.call(t, a, "browser_snapshot", map[string]any{}).Metadata.PageURL; got != navA.Metadata.PageURL {
		t.Errorf("A's page is %q, want %s", got, navA.Metadata.PageURL)
	}
	if text := s.content(t, navA.RefID, "?reset_cursor=true"); text == "" {
		t.Error("A's record is empty")
	}
}
