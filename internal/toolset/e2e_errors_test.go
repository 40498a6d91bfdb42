package toolset_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
)

// failed makes a call that must fail in the browser with code.
func (s *server) failed(t *testing.T, session, tool string, params any, code string) proxy.CallResult {
	t.Helper()
	res := s.call(t, session, tool, params)
	if res.Status != proxy.StatusError || res.ErrorCode != code {
		t.Fatalf("%s(%v) = %s %s %q %s, want error %s", tool, params, res.Status, res.ErrorCode, res.Error, res.Value, code)
	}
	if res.Retryable == nil || res.Suggestion == "" || res.Error == "" || res.SessionID != session || res.RefID == "" {
		t.Errorf("%s: error result lacks retryable, suggestion, message, session or ref: %+v", tool, res)
	}
	return res
}

// Acceptance 2 (and the taxonomy): each failure has its own code, with
// retryable and a suggestion.
func TestToolErrors(t *testing.T) {
	pages := site(t)
	s := startServer(t, quick)
	id := s.createSession(t)
	s.ok(t, id, "navigate", map[string]any{"url": pages + "/index.html"}, nil)

	res := s.failed(t, id, "click", map[string]any{"selector": "#missing", "timeout": 200}, proxy.EELEMENTMISSING)
	if !*res.Retryable {
		t.Error("ELEMENT_NOT_FOUND is not retryable")
	}
	for _, bad := range []string{"div[", "div)", "//div[", "bogus=foo"} {
		res := s.failed(t, id, "click", map[string]any{"selector": bad, "timeout": 200}, proxy.EINVALIDSELECTOR)
		if *res.Retryable {
			t.Errorf("INVALID_SELECTOR (%q) is retryable", bad)
		}
	}
	s.failed(t, id, "click", map[string]any{"selector": "#dis", "timeout": 200}, proxy.ENOTINTERACTIVE)
	s.failed(t, id, "wait_for_selector", map[string]any{"selector": "#never", "timeout": 200}, proxy.ETIMEOUT)
	s.failed(t, id, "find_element", map[string]any{"selector": "#never", "timeout": 0}, proxy.EELEMENTMISSING)
	s.failed(t, id, "navigate", map[string]any{"url": "http://127.0.0.1:1/"}, proxy.ENAVIGATION)
	s.failed(t, id, "get_value", map[string]any{"selector": "h1"}, proxy.EBROWSER)

	// Upstream's own tools fail with the same taxonomy, whether their
	// target is an element ref or a selector.
	s.ok(t, id, "navigate", map[string]any{"url": pages + "/index.html"}, nil)
	upstreamTests := []struct {
		name, tool string
		params     map[string]any
		code       string
		retryable  bool
	}{
		{"click unknown ref", "browser_click", map[string]any{"target": "e9999", "element": "nothing"}, proxy.EELEMENTMISSING, true},
		{"click missing selector", "browser_click", map[string]any{"target": "#nope", "element": "nothing"}, proxy.EELEMENTMISSING, true},
		{"hover missing selector", "browser_hover", map[string]any{"target": "#nope", "element": "nothing"}, proxy.EELEMENTMISSING, true},
		{"type missing selector", "browser_type", map[string]any{"target": "#nope", "element": "nothing", "text": "hi"}, proxy.EELEMENTMISSING, true},
		{"click unparsable selector", "browser_click", map[string]any{"target": "##", "element": "nothing"}, proxy.EINVALIDSELECTOR, false},
		{"click disabled", "browser_click", map[string]any{"target": "#dis", "element": "disabled button"}, proxy.ENOTINTERACTIVE, true},
	}
	for _, tt := range upstreamTests {
		t.Run(tt.name, func(t *testing.T) {
			res := s.failed(t, id, tt.tool, tt.params, tt.code)
			if *res.Retryable != tt.retryable {
				t.Errorf("%s: retryable = %v, want %v", tt.code, *res.Retryable, tt.retryable)
			}
		})
	}

	// Refusals are proxy errors with the documented body.
	var eb struct {
		Error      string
		Retryable  bool
		Suggestion string
		Details    map[string]any
	}
	code := do(t, "POST", s.URL+"/call", map[string]any{"session_id": id, "tool": "click", "params": map[string]any{}}, &eb)
	if code != http.StatusBadRequest || eb.Error != proxy.EINVALID || eb.Details["field"] != "params.selector" {
		t.Errorf("click without selector = %d %+v", code, eb)
	}
	eb.Details = nil
	code = do(t, "POST", s.URL+"/call", map[string]any{"session_id": "8a5fd1fc-1f0f-4b8c-9d3f-0cbdf1b0a7a1", "tool": "click", "params": map[string]any{"selector": "#x"}}, &eb)
	if code != http.StatusNotFound || eb.Error != proxy.ESESSIONMISSING || eb.Details["session_id"] != "8a5fd1fc-1f0f-4b8c-9d3f-0cbdf1b0a7a1" {
		t.Errorf("click in an unknown session = %d %+v", code, eb)
	}
	eb.Details = nil
	code = do(t, "POST", s.URL+"/call", map[string]any{"session_id": id, "tool": "restore_state", "params": map[string]any{"ref_id": "00000000-0000-4000-8000-000000000000"}}, &eb)
	if code != http.StatusNotFound || eb.Error != proxy.EREFMISSING {
		t.Errorf("restore_state of an unknown ref = %d %+v", code, eb)
	}
}

// Acceptance 3: save_state in one session, restore_state in another.
func TestSaveStateRestoreStateAcrossSessions(t *testing.T) {
	pages := site(t)
	s := startServer(t, quick)
	a, b := s.createSession(t), s.createSession(t)
	s.ok(t, a, "navigate", map[string]any{"url": pages + "/index.html"}, nil)
	s.ok(t, a, "set_cookies", map[string]any{"cookies": []map[string]any{{"name": "who", "value": "alpha", "url": pages}}}, nil)
	if res := s.call(t, a, "browser_evaluate", map[string]any{"function": "() => localStorage.setItem('k', 'v-alpha')"}); res.Status != proxy.StatusSuccess {
		t.Fatalf("set localStorage: %s", res.Error)
	}
	var saved struct {
		State   json.RawMessage
		Cookies int
		Origins int
	}
	ref := s.ok(t, a, "save_state", map[string]any{}, &saved).RefID
	if saved.Cookies != 1 || saved.Origins != 1 || !strings.Contains(string(saved.State), "v-alpha") {
		t.Fatalf("save_state = %+v", saved)
	}

	check := func(session, how string) {
		t.Helper()
		var st struct {
			State struct {
				Cookies []struct{ Name, Value string }
				Origins []struct {
					LocalStorage []struct{ Name, Value string } `json:"localStorage"`
				}
			}
		}
		s.ok(t, session, "save_state", map[string]any{}, &st)
		if len(st.State.Cookies) != 1 || st.State.Cookies[0].Value != "alpha" ||
			len(st.State.Origins) != 1 || len(st.State.Origins[0].LocalStorage) != 1 || st.State.Origins[0].LocalStorage[0].Value != "v-alpha" {
			t.Errorf("after restore_state(%s) the session holds %+v", how, st.State)
		}
	}
	// By ref_id, from the other session.
	s.ok(t, b, "navigate", map[string]any{"url": pages + "/second.html"}, nil)
	s.ok(t, b, "restore_state", map[string]any{"ref_id": ref}, nil)
	check(b, "ref_id")
	// The page itself sees it.
	if res := s.call(t, b, "browser_evaluate", map[string]any{"function": "() => { document.title = localStorage.getItem('k') + ';' + document.cookie; }"}); res.Status != proxy.StatusSuccess {
		t.Fatal(res.Error)
	}
	var meta struct{ Title string }
	s.ok(t, b, "get_page_metadata", map[string]any{}, &meta)
	if meta.Title != "v-alpha;who=alpha" {
		t.Errorf("the restored page sees %q, want v-alpha;who=alpha", meta.Title)
	}
	// By value, in a third session.
	c := s.createSession(t)
	s.ok(t, c, "navigate", map[string]any{"url": pages + "/second.html"}, nil)
	s.ok(t, c, "restore_state", map[string]any{"state": saved.State}, nil)
	check(c, "state")

	// A ref that is not a save_state call is refused, naming the field.
	var eb struct {
		Error   string
		Details map[string]any
	}
	navRef := s.ok(t, c, "navigate", map[string]any{"url": pages + "/second.html"}, nil).RefID
	if code := do(t, "POST", s.URL+"/call", map[string]any{"session_id": c, "tool": "restore_state", "params": map[string]any{"ref_id": navRef}}, &eb); code != http.StatusBadRequest || eb.Details["field"] != "params.ref_id" {
		t.Errorf("restore_state(ref of a navigate) = %d %+v", code, eb)
	}
}

// Acceptance 4: mock_response intercepts the page's fetch, block_resource
// blocks images, set_offline makes navigation fail.
func TestNetworkTools(t *testing.T) {
	pages := site(t)
	s := startServer(t, quick)
	id := s.createSession(t)

	s.ok(t, id, "mock_response", map[string]any{"url_pattern": "**/api/data", "body": map[string]any{"mocked": true}}, nil)
	s.ok(t, id, "block_resource", map[string]any{"resource_types": []string{"image"}}, nil)
	s.ok(t, id, "navigate", map[string]any{"url": pages + "/index.html"}, nil)
	var api struct{ Value *string }
	s.ok(t, id, "wait_for_selector", map[string]any{"selector": "body[data-api]", "state": "attached", "timeout": 5000}, nil)
	s.ok(t, id, "get_attribute", map[string]any{"selector": "body", "name": "data-api"}, &api)
	if api.Value == nil || *api.Value != `{"mocked":true}` {
		t.Errorf("the page's fetch got %v, want the mocked body", api.Value)
	}
	var log struct {
		Requests []struct {
			URL     string
			Status  *int
			Failure *string
		}
	}
	s.ok(t, id, "get_request_log", map[string]any{"resource_type": "image"}, &log)
	if len(log.Requests) != 1 || log.Requests[0].Failure == nil || !strings.Contains(*log.Requests[0].Failure, "BLOCKED") {
		t.Errorf("image requests = %+v, want one blocked", log.Requests)
	}
	s.call(t, id, "browser_evaluate", map[string]any{"function": "() => { document.title = String(document.querySelector('#img').naturalWidth); }"})
	var meta struct{ Title string }
	s.ok(t, id, "get_page_metadata", map[string]any{}, &meta)
	if meta.Title != "0" {
		t.Errorf("blocked image has naturalWidth %s, want 0", meta.Title)
	}

	// Another session is not affected by this one's rules.
	other := s.createSession(t)
	s.ok(t, other, "navigate", map[string]any{"url": pages + "/index.html"}, nil)
	s.ok(t, other, "wait_for_selector", map[string]any{"selector": "body[data-api]", "state": "attached", "timeout": 5000}, nil)
	s.ok(t, other, "get_attribute", map[string]any{"selector": "body", "name": "data-api"}, &api)
	if api.Value == nil || *api.Value != `{"real":true}` {
		t.Errorf("the other session's fetch got %v, want the real body", api.Value)
	}

	s.ok(t, id, "set_offline", map[string]any{"offline": true}, nil)
	s.failed(t, id, "navigate", map[string]any{"url": pages + "/second.html"}, proxy.ENAVIGATION)
	s.ok(t, id, "set_offline", map[string]any{"offline": false}, nil)
	s.ok(t, id, "navigate", map[string]any{"url": pages + "/second.html"}, nil)
	// Offline still wins while throttled.
	s.ok(t, id, "set_throttling", map[string]any{"latency_ms": 20}, nil)
	s.ok(t, id, "set_offline", map[string]any{"offline": true}, nil)
	s.failed(t, id, "navigate", map[string]any{"url": pages + "/index.html"}, proxy.ENAVIGATION)
}
