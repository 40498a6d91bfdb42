package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/catalog"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/content"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/toolset"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/wire"
)

// fakeSessions answers with canned values and errors; the real manager is
// exercised end to end in cmd/proxy-server.
type fakeSessions struct {
	created     []proxy.BrowserOptions
	calls       []proxy.CallRequest
	credentials []string
	groups      toolset.Selection // the server's tool groups
}

const knownID = "11111111-1111-4111-8111-111111111111"

func (f *fakeSessions) CreateSession(_ context.Context, opts ...proxy.BrowserOptions) (*proxy.Session, error) {
	f.created = append(f.created, opts...)
	return &proxy.Session{ID: knownID, State: proxy.SessionActive}, nil
}
func (f *fakeSessions) GetSession(_ context.Context, id string) (*proxy.Session, error) {
	if id != knownID {
		return nil, proxy.Errorf(proxy.ESESSIONMISSING, "no session %s", id)
	}
	return &proxy.Session{ID: id, State: proxy.SessionActive}, nil
}
func (f *fakeSessions) ListSessions(context.Context) ([]*proxy.Session, error) { return nil, nil }
func (f *fakeSessions) CloseSession(context.Context, string) error             { return nil }
func (f *fakeSessions) ResumeSession(ctx context.Context, id string) (*proxy.Session, bool, error) {
	s, err := f.GetSession(ctx, id)
	return s, err == nil, err
}
func (f *fakeSessions) Call(_ context.Context, r proxy.CallRequest) (*proxy.CallResult, error) {
	f.calls = append(f.calls, r)
	if r.Tool == "boom" {
		return nil, context.DeadlineExceeded // a foreign error: must come out as INTERNAL_ERROR
	}
	return &proxy.CallResult{RefID: "r1", SessionID: r.SessionID, Status: proxy.StatusSuccess}, nil
}
func (f *fakeSessions) Validate(context.Context, string, json.RawMessage) error { return nil }
func (f *fakeSessions) Tools(ctx context.Context) ([]proxy.Tool, error) {
	up := func(context.Context) ([]proxy.Tool, error) {
		return []proxy.Tool{{Name: "browser_snapshot", InputSchema: json.RawMessage(`{"type":"object"}`)}}, nil
	}
	return catalog.New(up, catalog.Options{Default: f.groups}).List(ctx)
}

func (f *fakeSessions) AddCredential(_ context.Context, value string) (string, error) {
	if len(value) < 4 {
		return "", proxy.Errorf(proxy.EINVALID, "credential value is shorter than 4 bytes")
	}
	f.credentials = append(f.credentials, value)
	return "<secret>cred_0123456789abcdef</secret>", nil
}

type fakeContent struct{}

// Peek answers differently from Get so that tests see which one ran.
func (fakeContent) Peek(_ context.Context, ref string) (*proxy.Content, error) {
	if ref != "r1" {
		return nil, proxy.Errorf(proxy.EREFMISSING, "no ref %s", ref)
	}
	return &proxy.Content{Text: "whole snapshot", Snapshot: true, Images: []proxy.Image{{MimeType: "image/png", Data: []byte("PNG")}}}, nil
}

func (fakeContent) Content(_ context.Context, ref string, search proxy.Query, reset bool) (*proxy.Content, error) {
	if ref != "r1" {
		return nil, proxy.Errorf(proxy.EREFMISSING, "no ref %s", ref)
	}
	if search.Regex || search.CaseSensitive {
		return &proxy.Content{Text: fmt.Sprintf("snapshot search=%s regex=%t case_sensitive=%t", search.Text, search.Regex, search.CaseSensitive)}, nil
	}
	return &proxy.Content{Text: "snapshot search=" + search.Text, Images: []proxy.Image{{MimeType: "image/png", Data: []byte("PNG")}}}, nil
}
func (f fakeContent) Images(ctx context.Context, ref string) ([]proxy.Image, error) {
	c, err := f.Content(ctx, ref, proxy.Query{}, true)
	if err != nil {
		return nil, err
	}
	return c.Images, nil
}
func (fakeContent) Calls(_ context.Context, id string) ([]proxy.Call, error) {
	if id != knownID {
		return nil, proxy.SessionNotFound(id)
	}
	return []proxy.Call{{
		Request:  proxy.Request{RefID: "r1", SessionID: knownID, ToolName: "browser_navigate", Params: json.RawMessage(`{"url":"http://127.0.0.1:1/"}`)},
		Response: &proxy.Response{RefID: "r1", Status: proxy.StatusSuccess, Result: `{"content":[{"type":"text","text":"### Ran Playwright code\n` + "```js\\nawait page.goto('http://127.0.0.1:1/');\\n```" + `\n### Page\n- Page URL: http://127.0.0.1:1/\n- Page Title: One"}]}`},
	}}, nil
}

func (fakeContent) Events(_ context.Context, id string) ([]proxy.SessionEvent, error) {
	return []proxy.SessionEvent{{SessionID: id, Kind: proxy.EventCreated, Detail: "worker 1"}}, nil
}

// Download knows one download, r1's page.html; other names are refused as
// the content service refuses them.
func (fakeContent) Download(_ context.Context, ref, name string) (*proxy.Download, error) {
	if ref != "r1" {
		return nil, proxy.Errorf(proxy.EREFMISSING, "no ref %s", ref)
	}
	if err := content.CheckDownloadName(name); err != nil {
		return nil, err
	}
	if name != "page.html" {
		return nil, proxy.Errorf(proxy.EDOWNLOADMISSING, "no download %s", name)
	}
	return &proxy.Download{RefID: ref, Name: name, MimeType: "text/html; charset=utf-8", Size: 25, SHA256: "5ha", Stored: true, Data: []byte("<script>alert(1)</script>")}, nil
}

func (fakeContent) Console(_ context.Context, ref, level string) (string, error) {
	if level == "loud" {
		return "", proxy.Errorf(proxy.EINVALID, "bad level")
	}
	return "[ERROR] x", nil
}

// A download comes back as its exact bytes, as an attachment that a
// browser neither sniffs nor renders with the proxy's origin; with JSON
// asked for, described with its bytes in base64.
func TestDownloadServedAsAttachment(t *testing.T) {
	srv := New(&fakeSessions{}, fakeContent{})
	rec := httptest.NewRecorder()
	srv.ServeHTTP(rec, newRequest(http.MethodGet, "/content/r1/downloads/page.html", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("GET download = %d %s", rec.Code, rec.Body)
	}
	want := map[string]string{
		"Content-Type":            "text/html; charset=utf-8",
		"Content-Length":          "25",
		"Content-Disposition":     "attachment; filename=page.html",
		"X-Content-Type-Options":  "nosniff",
		"Content-Security-Policy": "sandbox",
		wire.DownloadSHA256Header: "5ha",
	}
	got := map[string]string{}
	for k := range want {
		got[k] = rec.Header().Get(k)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("headers (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff("<script>alert(1)</script>", rec.Body.String()); diff != "" {
		t.Errorf("body (-want +got):\n%s", diff)
	}

	rec = httptest.NewRecorder()
	req := newRequest(http.MethodGet, "/content/r1/downloads/page.html", nil)
	req.Header.Set("Accept", "application/json")
	srv.ServeHTTP(rec, req)
	var body wire.DownloadBody
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || rec.Code != http.StatusOK {
		t.Fatalf("GET download as JSON = %d %s (%v)", rec.Code, rec.Body, err)
	}
	wantBody := wire.DownloadBody{
		Download: proxy.Download{RefID: "r1", Name: "page.html", MimeType: "text/html; charset=utf-8", Size: 25, SHA256: "5ha", Stored: true},
		Data:     []byte("<script>alert(1)</script>"),
	}
	if diff := cmp.Diff(wantBody, body); diff != "" {
		t.Errorf("JSON body (-want +got):\n%s", diff)
	}
}

// GET /tools lists the groups of the request's own choice, else the
// server's.
func TestToolsHeaderChoosesGroups(t *testing.T) {
	server, _ := toolset.Select([]string{"upstream", "content"})
	srv := New(&fakeSessions{groups: server}, fakeContent{})
	tests := []struct {
		header string
		want   []string
	}{
		{"", []string{"browser_snapshot", catalog.ToolGetContent, catalog.ToolGetConsole}},
		{"upstream,session", []string{"browser_snapshot", catalog.ToolCreateSession, catalog.ToolCloseSession, catalog.ToolResumeSession, catalog.ToolListSessions, catalog.ToolSaveProfile, catalog.ToolListProfiles, catalog.ToolRequestHuman}},
		{" , ", []string{"browser_snapshot", catalog.ToolGetContent, catalog.ToolGetConsole}},
	}
	for _, tt := range tests {
		t.Run(tt.header, func(t *testing.T) {
			req := newRequest(http.MethodGet, "/tools", nil)
			if tt.header != "" {
				req.Header.Set(wire.ToolsetsHeader, tt.header)
			}
			rec := httptest.NewRecorder()
			srv.ServeHTTP(rec, req)
			var body struct {
				Tools []struct{ Name string }
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || rec.Code != http.StatusOK {
				t.Fatalf("GET /tools = %d %s (%v)", rec.Code, rec.Body, err)
			}
			var got []string
			for _, tl := range body.Tools {
				got = append(got, tl.Name)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("tools (-want +got):\n%s", diff)
			}
		})
	}
}

func TestErrorMapping(t *testing.T) {
	srv := New(&fakeSessions{}, fakeContent{}, WithMaxBodyBytes(1024))
	tests := []struct {
		name, method, path, body string
		code                     int
		errCode                  string
	}{
		{"malformed", "POST", "/call", `{"session_id":`, 400, proxy.EINVALID},
		{"empty body", "POST", "/call", ``, 400, proxy.EINVALID},
		{"wrong type", "POST", "/call", `{"session_id":1}`, 400, proxy.EINVALID},
		{"unknown field", "POST", "/call", `{"session_id":"x","tool":"t","extra":1}`, 400, proxy.EINVALID},
		{"trailing data", "POST", "/call", `{"session_id":"x","tool":"t"} {}`, 400, proxy.EINVALID},
		{"oversize", "POST", "/call", `{"session_id":"` + strings.Repeat("a", 2048) + `"}`, 400, proxy.EINVALID},
		{"no session", "POST", "/call", `{"tool":"t"}`, 400, proxy.EINVALID},
		{"foreign error", "POST", "/call", `{"session_id":"x","tool":"boom"}`, 500, proxy.EINTERNAL},
		{"unknown session", "GET", "/sessions/nope", ``, 404, proxy.ESESSIONMISSING},
		{"unknown ref", "GET", "/content/nope", ``, 404, proxy.EREFMISSING},
		{"bad bool", "GET", "/content/r1?reset_cursor=yes!", ``, 400, proxy.EINVALID},
		{"bad regex bool", "GET", "/content/r1?search_for=x&regex=maybe", ``, 400, proxy.EINVALID},
		{"bad case_sensitive bool", "GET", "/content/r1?search_for=x&case_sensitive=yes", ``, 400, proxy.EINVALID},
		{"bad image", "GET", "/content/r1?image=-1", ``, 400, proxy.EINVALID},
		{"missing image", "GET", "/content/r1?image=3", ``, 404, proxy.EREFMISSING},
		{"bad level", "GET", "/console/r1?level=loud", ``, 400, proxy.EINVALID},
		{"bad peek", "GET", "/content/r1?peek=maybe", ``, 400, proxy.EINVALID},
		{"peek with reset", "GET", "/content/r1?peek=true&reset_cursor=true", ``, 400, proxy.EINVALID},
		{"peek with search", "GET", "/content/r1?peek=true&search_for=x", ``, 400, proxy.EINVALID},
		{"peek unknown ref", "GET", "/content/nope?peek=true", ``, 404, proxy.EREFMISSING},
		{"download of unknown ref", "GET", "/content/nope/downloads/page.html", ``, 404, proxy.EREFMISSING},
		{"unknown download", "GET", "/content/r1/downloads/other.csv", ``, 404, proxy.EDOWNLOADMISSING},
		{"download name with an escaped slash", "GET", "/content/r1/downloads/..%2F..%2Fproxy.db", ``, 400, proxy.EINVALID},
		{"download name ..", "GET", "/content/r1/downloads/..", ``, 400, proxy.EINVALID},
		{"no endpoint", "GET", "/nowhere", ``, 404, "NOT_FOUND"},
		{"bad method", "PUT", "/call", ``, 405, proxy.EINVALID},
		{"bad create body", "POST", "/sessions", `[`, 400, proxy.EINVALID},
		{"create: viewport of the wrong type", "POST", "/sessions", `{"viewport":"big"}`, 400, proxy.EINVALID},
		{"create: width of the wrong type", "POST", "/sessions", `{"viewport":{"width":"390","height":844}}`, 400, proxy.EINVALID},
		{"create: unknown option", "POST", "/sessions", `{"zoom":2}`, 400, proxy.EINVALID},
		{"resume unknown", "POST", "/sessions/nope/resume", ``, 404, proxy.ESESSIONMISSING},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			srv.ServeHTTP(rec, newRequest(tc.method, tc.path, strings.NewReader(tc.body)))
			var body wire.ErrorBody
			if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
				t.Fatalf("body %q is not JSON: %v", rec.Body.String(), err)
			}
			if rec.Code != tc.code || body.Error != tc.errCode || body.Message == "" {
				t.Errorf("%s %s = %d %+v, want %d %s", tc.method, tc.path, rec.Code, body, tc.code, tc.errCode)
			}
			if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type = %q", ct)
			}
		})
	}
}

func TestContentForms(t *testing.T) {
	srv := New(&fakeSessions{}, fakeContent{})
	tests := []struct {
		name, path, accept string
		want               string
		contentType        string
	}{
		{"text", "/content/r1?search_for=Go", "", "snapshot search=Go", "text/plain; charset=utf-8"},
		{"json", "/content/r1", "application/json", `{"ref_id":"r1","text":"snapshot search=","unchanged":false,"images":[{"mime_type":"image/png","data":"UE5H"}]}` + "\n", "application/json"},
		{"peek text", "/content/r1?peek=true", "", "whole snapshot", "text/plain; charset=utf-8"},
		{"peek json", "/content/r1?peek=1", "application/json", `{"ref_id":"r1","text":"whole snapshot","unchanged":false,"images":[{"mime_type":"image/png","data":"UE5H"}],"snapshot":true}` + "\n", "application/json"},
		{"peek false is a read", "/content/r1?peek=false&search_for=Go", "", "snapshot search=Go", "text/plain; charset=utf-8"},
		{"search options", "/content/r1?search_for=G.&regex=true&case_sensitive=1", "", "snapshot search=G. regex=true case_sensitive=true", "text/plain; charset=utf-8"},
		{"search options false", "/content/r1?search_for=Go&regex=false&case_sensitive=false", "", "snapshot search=Go", "text/plain; charset=utf-8"},
		{"image", "/content/r1?image=0", "", "PNG", "image/png"},
		{"console", "/console/r1?level=error", "", "[ERROR] x", "text/plain; charset=utf-8"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := newRequest("GET", tc.path, nil)
			if tc.accept != "" {
				req.Header.Set("Accept", tc.accept)
			}
			rec := httptest.NewRecorder()
			srv.ServeHTTP(rec, req)
			if rec.Code != http.StatusOK {
				t.Fatalf("status %d: %s", rec.Code, rec.Body)
			}
			if diff := cmp.Diff(tc.want, rec.Body.String()); diff != "" {
				t.Errorf("body (-want +got):\n%s", diff)
			}
			if got := rec.Header().Get("Content-Type"); got != tc.contentType {
				t.Errorf("Content-Type = %q, want %q", got, tc.contentType)
			}
		})
	}
}

func TestCallPassesThrough(t *testing.T) {
	f := &fakeSessions{}
	srv := New(f, fakeContent{})
	rec := httptest.NewRecorder()
	srv.ServeHTTP(rec, newRequest("POST", "/call", strings.NewReader(`{"session_id":"s","tool":"browser_snapshot","params":{"a":1},"request_id":"q"}`)))
	if rec.Code != 200 {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	want := []proxy.CallRequest{{SessionID: "s", Tool: "browser_snapshot", Params: json.RawMessage(`{"a":1}`), RequestID: "q"}}
	if diff := cmp.Diff(want, f.calls); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
}

func TestHealth(t *testing.T) {
	tests := []struct {
		name   string
		checks map[string]HealthFunc
		code   int
		status string
	}{
		{"all ok", map[string]HealthFunc{"database": func(context.Context) error { return nil }}, 200, "ok"},
		{"one down", map[string]HealthFunc{"database": func(context.Context) error { return nil }, "browser": func(context.Context) error { return context.Canceled }}, 503, "degraded"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var opts []Option
			for n, f := range tc.checks {
				opts = append(opts, WithHealthCheck(n, f))
			}
			rec := httptest.NewRecorder()
			New(&fakeSessions{}, fakeContent{}, opts...).ServeHTTP(rec, newRequest("GET", "/health", nil))
			var body struct {
				Status string            `json:"status"`
				Checks map[string]string `json:"checks"`
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
				t.Fatal(err)
			}
			if rec.Code != tc.code || body.Status != tc.status || len(body.Checks) != len(tc.checks) {
				t.Errorf("/health = %d %+v", rec.Code, body)
			}
		})
	}
}

func TestHealthCountersAndBridgeVersion(t *testing.T) {
	var logs bytes.Buffer
	srv := New(&fakeSessions{}, fakeContent{}, WithVersion("v2"), WithLogger(slog.New(slog.NewTextHandler(&logs, nil))),
		WithCounters(func() any { return map[string]int{"worker_restarts": 3} }))
	for range 2 {
		req := newRequest("GET", "/health", nil)
		req.Header.Set(wire.BridgeVersionHeader, "v1")
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, req)
		var body struct {
			Counters map[string]int `json:"counters"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || body.Counters["worker_restarts"] != 3 {
			t.Errorf("/health counters = %s (%v)", rec.Body.String(), err)
		}
	}
	if n := strings.Count(logs.String(), "versions differ"); n != 1 {
		t.Errorf("version mismatch logged %d times, want once:\n%s", n, logs.String())
	}
}

// TestHealthBody pins /health's bytes: the typed body keeps the keys, their
// order and which of them appear, as the map it replaced wrote them.
func TestHealthBody(t *testing.T) {
	checked := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		name string
		opts []Option
		want string
	}{
		{name: "bare", want: `{"checks":{},"status":"ok","version":"v3"}`},
		{name: "counters", opts: []Option{WithCounters(func() any { return map[string]int{"worker_restarts": 1} })},
			want: `{"checks":{},"counters":{"worker_restarts":1},"status":"ok","version":"v3"}`},
		{name: "no restarts used", opts: []Option{WithHealthRestartsLeft(func() map[string]int { return map[string]int{} })},
			want: `{"checks":{},"restarts_left":{},"status":"ok","version":"v3"}`},
		{name: "everything", opts: []Option{
			WithHealthCheck("database", func(context.Context) error { return nil }),
			WithCounters(func() any { return map[string]int{"worker_crashes": 2} }),
			WithHealthRestartsLeft(func() map[string]int { return map[string]int{"s1": 1} }),
			WithHealthNodes(func() []proxy.Node {
				return []proxy.Node{{ID: "n1", Endpoint: "ws://n1", State: "up", Capacity: 4, CheckedAt: checked}}
			}),
		},
			want: `{"checks":{"database":"ok"},"counters":{"worker_crashes":2},` +
				`"nodes":[{"id":"n1","endpoint":"ws://n1","state":"up","sessions":0,"capacity":4,"failures":0,"checked_at":"2026-01-02T03:04:05Z"}],` +
				`"restarts_left":{"s1":1},"status":"ok","version":"v3"}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			New(&fakeSessions{}, fakeContent{}, append(tc.opts, WithVersion("v3"))...).ServeHTTP(rec, newRequest("GET", "/health", nil))
			if diff := cmp.Diff(tc.want+"\n", rec.Body.String()); diff != "" {
				t.Errorf("/health body (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAddCredential(t *testing.T) {
	const value = "hunter22-in-the-body"
	tests := []struct {
		name, body string
		opts       []Option
		hdr        map[string]string
		want       answer
		wantStored []string
	}{
		{name: "stored", body: `{"value":"` + value + `"}`, want: answer{201, ""}, wantStored: []string{value}},
		{name: "too short", body: `{"value":"abc"}`, want: answer{400, proxy.EINVALID}},
		{name: "empty body", body: ``, want: answer{400, proxy.EINVALID}},
		{name: "wrong type", body: `{"value":1234}`, want: answer{400, proxy.EINVALID}},
		{name: "unknown field", body: `{"value":"` + value + `","name":"x"}`, want: answer{400, proxy.EINVALID}},
		{name: "oversize", body: `{"value":"` + strings.Repeat("v", 2048) + `"}`, opts: []Option{WithMaxBodyBytes(1024)}, want: answer{400, proxy.EINVALID}},
		{name: "token required", body: `{"value":"` + value + `"}`, opts: []Option{WithAuthToken(testToken)}, want: answer{401, proxy.EUNAUTHORIZED}},
		{name: "token given", body: `{"value":"` + value + `"}`, opts: []Option{WithAuthToken(testToken)},
			hdr: map[string]string{"Authorization": "Bearer " + testToken}, want: answer{201, ""}, wantStored: []string{value}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var logs bytes.Buffer
			f := &fakeSessions{}
			opts := append([]Option{WithLogger(slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})))}, tc.opts...)
			srv := New(f, fakeContent{}, opts...)
			req := newRequest("POST", "/credentials", strings.NewReader(tc.body))
			for k, v := range tc.hdr {
				req.Header.Set(k, v)
			}
			rec := httptest.NewRecorder()
			srv.ServeHTTP(rec, req)
			got := answer{Status: rec.Code}
			if rec.Code >= 400 {
				var eb wire.ErrorBody
				if err := json.Unmarshal(rec.Body.Bytes(), &eb); err != nil || eb.Message == "" {
					t.Fatalf("error body %q (%v)", rec.Body, err)
				}
				got.Code = eb.Error
			} else {
				var a wire.CredentialAnswer
				if err := json.Unmarshal(rec.Body.Bytes(), &a); err != nil || a.Placeholder != "<secret>cred_0123456789abcdef</secret>" {
					t.Errorf("answer %q (%v), want the placeholder", rec.Body, err)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("POST /credentials (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantStored, f.credentials); diff != "" {
				t.Errorf("values given to the vault (-want +got):\n%s", diff)
			}
			if strings.Contains(logs.String(), value) || strings.Contains(rec.Body.String(), value) {
				t.Errorf("the value was logged or answered:\nlogs: %s\nbody: %s", logs.String(), rec.Body)
			}
		})
	}
}

// Each documented code is answered with its status; an unknown code, as a
// foreign error, is a 500.
func TestHTTPStatus(t *testing.T) {
	for _, tc := range []struct {
		code string
		want int
	}{
		{proxy.EINVALID, http.StatusBadRequest},
		{proxy.ESESSIONMISSING, http.StatusNotFound},
		{proxy.EREFMISSING, http.StatusNotFound},
		{proxy.ETOOLMISSING, http.StatusNotFound},
		{proxy.ENOENDPOINT, http.StatusNotFound},
		{proxy.ESESSIONCLOSED, http.StatusGone},
		{proxy.EMAXSESSIONS, http.StatusTooManyRequests},
		{proxy.EORIGIN, http.StatusForbidden},
		{proxy.EHOST, http.StatusForbidden},
		{proxy.EDOMAINBLOCKED, http.StatusForbidden},
		{proxy.EUNAUTHORIZED, http.StatusUnauthorized},
		{proxy.EUNAVAILABLE, http.StatusServiceUnavailable},
		{proxy.ETIMEOUT, http.StatusGatewayTimeout},
		{proxy.ESTORAGEFULL, http.StatusInsufficientStorage},
		{proxy.EELEMENTMISSING, http.StatusUnprocessableEntity},
		{proxy.ENOTINTERACTIVE, http.StatusUnprocessableEntity},
		{proxy.EINVALIDSELECTOR, http.StatusUnprocessableEntity},
		{proxy.ENAVIGATION, http.StatusUnprocessableEntity},
		{proxy.EBROWSER, http.StatusUnprocessableEntity},
		{proxy.EDOWNLOADMISSING, http.StatusNotFound},
		{proxy.EPAGEMISSING, http.StatusNotFound},
		{proxy.EPROFILEMISSING, http.StatusNotFound},
		{proxy.ETOOLARGE, http.StatusRequestEntityTooLarge},
		{proxy.ECONTROLHELD, http.StatusConflict},
		{proxy.EHUMANINCONTROL, http.StatusConflict},
		{proxy.EINTERNAL, http.StatusInternalServerError},
		{"SOMETHING_ELSE", http.StatusInternalServerError},
	} {
		if got := httpStatus(tc.code); got != tc.want {
			t.Errorf("httpStatus(%s) = %d, want %d", tc.code, got, tc.want)
		}
	}
}

// A foreign error is answered as an internal error without its own text,
// which goes to the log.
func TestForeignErrorHidden(t *testing.T) {
	var logs bytes.Buffer
	s := &Server{log: slog.New(slog.NewTextHandler(&logs, nil))}
	rec := httptest.NewRecorder()
	s.writeErr(rec, httptest.NewRequest(http.MethodGet, "/x", nil), errors.New("open /var/secret/db.sqlite: permission denied"))
	if rec.Code != http.StatusInternalServerError {
		t.Errorf("status = %d, want 500", rec.Code)
	}
	if body := rec.Body.String(); strings.Contains(body, "/var/secret") || !strings.Contains(body, `"error":"INTERNAL_ERROR"`) {
		t.Errorf("body = %s, want INTERNAL_ERROR without the error's text", body)
	}
	if !strings.Contains(logs.String(), "/var/secret/db.sqlite") {
		t.Errorf("log = %q, want the error's text", logs.String())
	}
}

func TestCreateSessionOptions(t *testing.T) {
	tests := []struct {
		name string
		body string
		want []proxy.BrowserOptions
	}{
		{"no body", ``, []proxy.BrowserOptions{{}}},
		{"empty object", `{}`, []proxy.BrowserOptions{{}}},
		{"every option", `{"viewport":{"width":390,"height":844},"user_agent":"ua/1","device":"iPhone 15","locale":"fr-FR","timezone":"Europe/Paris","color_scheme":"dark","browser":"webkit"}`,
			[]proxy.BrowserOptions{{Viewport: &proxy.Viewport{Width: 390, Height: 844}, UserAgent: "ua/1", Device: "iPhone 15", Locale: "fr-FR", Timezone: "Europe/Paris", ColorScheme: "dark", Browser: "webkit"}}},
		{"a profile, not written back", `{"profile":"github","profile_write":false}`, []proxy.BrowserOptions{{Profile: "github", ProfileWrite: new(bool)}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeSessions{}
			rec := httptest.NewRecorder()
			New(f, fakeContent{}).ServeHTTP(rec, newRequest("POST", "/sessions", strings.NewReader(tc.body)))
			if rec.Code != http.StatusCreated {
				t.Fatalf("POST /sessions = %d %s", rec.Code, rec.Body)
			}
			if diff := cmp.Diff(tc.want, f.created); diff != "" {
				t.Errorf("options given (-want +got):\n%s", diff)
			}
		})
	}
	for _, tc := range []struct{ body, field string }{
		{`{"viewport":{"width":"wide","height":1}}`, "viewport.width"},
		{`{"profile":"../github"}`, "profile"},
	} {
		t.Run("a refused body creates nothing and names the field "+tc.field, func(t *testing.T) {
			f := &fakeSessions{}
			rec := httptest.NewRecorder()
			New(f, fakeContent{}).ServeHTTP(rec, newRequest("POST", "/sessions", strings.NewReader(tc.body)))
			var body wire.ErrorBody
			if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
				t.Fatal(err)
			}
			if rec.Code != http.StatusBadRequest || body.Details["field"] != tc.field || len(f.created) != 0 {
				t.Errorf("answer %d %+v, %d created; want 400 naming %s and none created", rec.Code, body, len(f.created), tc.field)
			}
		})
	}
}
