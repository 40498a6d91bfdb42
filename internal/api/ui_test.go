package api

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/fstest"
)

type reply struct {
	code   int
	header http.Header
}

// hit sends one request to h from a loopback client with hdr set.
func hit(h http.Handler, method, target, body string, hdr map[string]string) reply {
	req := newRequest(method, target, strings.NewReader(body))
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return reply{rec.Code, rec.Header()}
}

func TestInspectorLoginAndCookie(t *testing.T) {
	files := http.FileServerFS(fstest.MapFS{"ui/index.html": {Data: []byte("<!doctype html><title>x</title>")}})
	h := New(&fakeSessions{}, fakeContent{}, WithAuthToken("s3cret"), WithUI(files))

	// The page loads without the token; the data behind it does not.
	if a := hit(h, "GET", "/ui/", "", nil); a.code != http.StatusOK {
		t.Errorf("GET /ui/ without a token = %d, want 200", a.code)
	}
	if a := hit(h, "GET", "/sessions", "", nil); a.code != http.StatusUnauthorized {
		t.Fatalf("GET /sessions without a token = %d, want 401", a.code)
	}

	if a := hit(h, "POST", "/ui/login", `{"token":"wrong"}`, nil); a.code != http.StatusUnauthorized || a.header.Get("Set-Cookie") != "" {
		t.Errorf("login with a wrong token = %d, cookie %q; want 401 and none", a.code, a.header.Get("Set-Cookie"))
	}
	// A page of another site cannot log in (or send anything).
	if a := hit(h, "POST", "/ui/login", `{"token":"s3cret"}`, map[string]string{"Origin": "https://evil.example"}); a.code != http.StatusForbidden {
		t.Errorf("login from another origin = %d, want 403", a.code)
	}
	a := hit(h, "POST", "/ui/login", `{"token":"s3cret"}`, map[string]string{"Origin": "http://127.0.0.1:34501"})
	cookie := a.header.Get("Set-Cookie")
	if a.code != http.StatusNoContent || !strings.Contains(cookie, "HttpOnly") || !strings.Contains(cookie, "SameSite=Strict") || strings.Contains(cookie, "s3cret") {
		t.Fatalf("login = %d, cookie %q; want 204 and an HttpOnly, SameSite=Strict cookie that is not the token", a.code, cookie)
	}
	value := strings.SplitN(cookie, ";", 2)[0]
	if a := hit(h, "GET", "/sessions", "", map[string]string{"Cookie": value}); a.code != http.StatusOK {
		t.Errorf("GET /sessions with the cookie = %d, want 200", a.code)
	}
	if a := hit(h, "GET", "/sessions", "", map[string]string{"Cookie": "pwproxy_ui=forged"}); a.code != http.StatusUnauthorized {
		t.Errorf("GET /sessions with a forged cookie = %d, want 401", a.code)
	}
	// A wrong bearer token is not rescued by a good cookie.
	if a := hit(h, "GET", "/sessions", "", map[string]string{"Cookie": value, "Authorization": "Bearer wrong"}); a.code != http.StatusUnauthorized {
		t.Errorf("GET /sessions with a wrong bearer and the cookie = %d, want 401", a.code)
	}
}
