package live

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestDescribeAX(t *testing.T) {
	v := func(s string) *axValue { return &axValue{Value: s} }
	// A click on the text inside a button: the hit node is the static
	// text, the button two levels up.
	button := []axNode{
		{NodeID: "1", Role: v("RootWebArea"), Name: v("Sign-in page")},
		{NodeID: "2", ParentID: "1", Role: v("generic")},
		{NodeID: "3", ParentID: "2", Role: v("button"), Name: v("Sign in"), BackendDOMNodeID: 30},
		{NodeID: "4", ParentID: "3", Role: v("StaticText"), Name: v("Sign in"), BackendDOMNodeID: 40},
	}
	long := strings.Repeat("é", 80)
	tests := []struct {
		name    string
		nodes   []axNode
		backend int64
		want    string
	}{
		{"text inside a button names the button", button, 40, "button 'Sign in'"},
		{"the button itself", button, 30, "button 'Sign in'"},
		{"only the page around it", []axNode{{NodeID: "1", Role: v("RootWebArea"), Name: v("Page")}, {NodeID: "2", ParentID: "1", Role: v("paragraph"), BackendDOMNodeID: 5}}, 5, ""},
		{"ignored nodes are passed over", []axNode{{NodeID: "1", Role: v("link"), Name: v("Home")}, {NodeID: "2", ParentID: "1", Ignored: true, Role: v("none"), Name: v("x"), BackendDOMNodeID: 7}}, 7, "link 'Home'"},
		{"a long name is cut", []axNode{{NodeID: "1", Role: v("textbox"), Name: v(long), BackendDOMNodeID: 9}}, 9, "textbox '" + strings.Repeat("é", 59) + "…'"},
		{"node not in the tree", button, 99, ""},
		{"a parent loop ends", []axNode{{NodeID: "1", ParentID: "2", Role: v("generic"), BackendDOMNodeID: 1}, {NodeID: "2", ParentID: "1", Role: v("generic")}}, 1, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := describeAX(tc.nodes, tc.backend); got != tc.want {
				t.Errorf("describeAX = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestBrowserWebSocket(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/json/version" {
			http.NotFound(w, r)
			return
		}
		// Chromium names the address it listens on, not the one asked.
		fmt.Fprint(w, `{"Browser":"x","webSocketDebuggerUrl":"ws://127.0.0.1:9222/devtools/browser/abc"}`)
	}))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	tests := []struct {
		name, endpoint, want string
		wantErr              bool
	}{
		{"http endpoint asks /json/version", srv.URL, "ws://" + host + "/devtools/browser/abc", false},
		{"a path on the endpoint is ignored", srv.URL + "/json/list", "ws://" + host + "/devtools/browser/abc", false},
		{"ws endpoint used as given", "ws://127.0.0.1:1/devtools/browser/x", "ws://127.0.0.1:1/devtools/browser/x", false},
		{"no scheme", "127.0.0.1:9222", "", true},
		{"another scheme", "ftp://127.0.0.1:9222", "", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := browserWebSocket(t.Context(), tc.endpoint)
			if (err != nil) != tc.wantErr || got != tc.want {
				t.Errorf("browserWebSocket(%q) = %q, %v; want %q (error %v)", tc.endpoint, got, err, tc.want, tc.wantErr)
			}
		})
	}
}
