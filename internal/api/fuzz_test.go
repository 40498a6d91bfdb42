package api

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"unicode/utf8"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/wire"
)

// fuzzSessions is fakeSessions without its traps: every call the API lets
// through succeeds, so any status outside the documented map is the API's
// own doing. (fakeSessions answers tool "boom" with a foreign error, a 500
// that TestErrorMapping wants and a mutation would stumble on.)
type fuzzSessions struct{ fakeSessions }

func (f *fuzzSessions) Call(_ context.Context, r proxy.CallRequest) (*proxy.CallResult, error) {
	f.calls = append(f.calls, r)
	return &proxy.CallResult{RefID: "r1", SessionID: r.SessionID, Status: proxy.StatusSuccess}, nil
}

// FuzzRequestBodies sends arbitrary bodies to the endpoints that decode
// one: the answer is always a documented status with a JSON error body of a
// documented code, never a 500 or a panic; a call reaches the session layer
// only with a JSON object of params and valid UTF-8. Seeds are below and in
// testdata/fuzz/FuzzRequestBodies.
func FuzzRequestBodies(f *testing.F) {
	for _, seed := range []string{
		`{"session_id":"11111111-1111-4111-8111-111111111111","tool":"browser_snapshot","params":{}}`,
		`{"session_id":1,"tool":[],"params":"x"}`,
		`{"tool":"browser_navigate","params":{"url":"file:///etc/passwd"},"extra":true}`,
		`{"session_id":"s","tool":"t","params":{"a":` + strings.Repeat("[", 64) + `}`,
		"{\"tool\":\"\xff\xfe\"}",
		`{} {}`,
		``,
		`{"session_id":"x","tool":"boom"}`,
	} {
		f.Add(0, seed)
		f.Add(1, seed)
		f.Add(2, seed)
		f.Add(3, seed)
	}
	f.Add(3, `{"value":"hunter22"}`)
	documented := map[int]bool{http.StatusOK: true, http.StatusCreated: true, http.StatusBadRequest: true,
		http.StatusNotFound: true, http.StatusGone: true, http.StatusUnprocessableEntity: true}
	paths := []struct{ method, path string }{
		{"POST", "/call"},
		{"POST", "/sessions"},
		{"POST", "/sessions/" + knownID + "/resume"},
		{"POST", "/credentials"},
	}
	f.Fuzz(func(t *testing.T, which int, body string) {
		p := paths[((which%len(paths))+len(paths))%len(paths)]
		sessions := &fuzzSessions{}
		rec := httptest.NewRecorder()
		New(sessions, fakeContent{}).ServeHTTP(rec, newRequest(p.method, p.path, strings.NewReader(body)))
		if !documented[rec.Code] {
			t.Fatalf("%s %s %q: status %d: %s", p.method, p.path, body, rec.Code, rec.Body)
		}
		if rec.Code >= 400 {
			var eb wire.ErrorBody
			if err := json.Unmarshal(rec.Body.Bytes(), &eb); err != nil || eb.Error == "" {
				t.Fatalf("%s %s %q: error body %q (%v)", p.method, p.path, body, rec.Body, err)
			}
			if httpStatus(eb.Error) != rec.Code {
				t.Fatalf("code %s answered with %d", eb.Error, rec.Code)
			}
		}
		for _, c := range sessions.calls {
			var obj map[string]json.RawMessage
			if json.Unmarshal(c.Params, &obj) != nil && len(c.Params) > 0 && string(c.Params) != "null" {
				t.Fatalf("params %q reached the session layer but are not an object", c.Params)
			}
			if !utf8.ValidString(c.Tool) || !utf8.Valid(c.Params) {
				t.Fatalf("invalid UTF-8 reached the session layer: %q %q", c.Tool, c.Params)
			}
		}
	})
}
