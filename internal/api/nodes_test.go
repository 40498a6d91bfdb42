package api

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/wire"
)

// fakeNodes holds nodes by id; draining one moves its sessions away.
type fakeNodes struct{ nodes map[string]*proxy.Node }

func (f *fakeNodes) ListNodes(context.Context) ([]proxy.Node, error) {
	return []proxy.Node{*f.nodes["a"], *f.nodes["b"]}, nil
}

func (f *fakeNodes) GetNode(_ context.Context, id string) (*proxy.Node, error) {
	if n := f.nodes[id]; n != nil {
		return n, nil
	}
	return nil, proxy.Errorf(proxy.ENODEMISSING, "no browser node %q", id)
}

func (f *fakeNodes) DrainNode(ctx context.Context, id string) (*proxy.Node, int, error) {
	n, err := f.GetNode(ctx, id)
	if err != nil {
		return nil, 0, err
	}
	moved := n.Sessions
	n.State, n.Sessions = proxy.NodeDraining, 0
	return n, moved, nil
}

func (f *fakeNodes) UndrainNode(ctx context.Context, id string) (*proxy.Node, error) {
	n, err := f.GetNode(ctx, id)
	if err != nil {
		return nil, err
	}
	n.State = proxy.NodeUp
	return n, nil
}

func TestNodes(t *testing.T) {
	nodes := &fakeNodes{nodes: map[string]*proxy.Node{
		"a": {ID: "a", Endpoint: "ws://a:3000/", State: proxy.NodeUp, Sessions: 2, Capacity: 10},
		"b": {ID: "b", Endpoint: "wss://b/pw?token=xxxxx", State: proxy.NodeDown, Capacity: 5, Failures: 3, Error: "connection refused"},
	}}
	tests := []struct {
		name       string
		withNodes  bool
		method     string
		path       string
		body       string
		wantStatus int
		want       string
	}{
		{"list", true, "GET", "/nodes", "", 200,
			`{"nodes":[{"id":"a","endpoint":"ws://a:3000/","state":"up","sessions":2,"capacity":10,"failures":0},{"id":"b","endpoint":"wss://b/pw?token=xxxxx","state":"down","sessions":0,"capacity":5,"failures":3,"error":"connection refused"}]}`},
		{"one", true, "GET", "/nodes/a", "", 200, `{"id":"a","endpoint":"ws://a:3000/","state":"up","sessions":2,"capacity":10,"failures":0}`},
		{"drain", true, "POST", "/nodes/a/drain", "", 200, `{"id":"a","endpoint":"ws://a:3000/","state":"draining","sessions":0,"capacity":10,"failures":0,"moved":2}`},
		{"undrain", true, "POST", "/nodes/a/undrain", "{}", 200, `{"id":"a","endpoint":"ws://a:3000/","state":"up","sessions":0,"capacity":10,"failures":0}`},
		{"unknown", true, "POST", "/nodes/zz/drain", "", 404, `NODE_NOT_FOUND`},
		{"bad body", true, "POST", "/nodes/a/drain", "{", 400, `INVALID_PARAMETERS`},
		{"wrong method", true, "DELETE", "/nodes/a", "", 405, `INVALID_PARAMETERS`},
		{"no nodes: empty list", false, "GET", "/nodes", "", 200, `{"nodes":[]}`},
		{"no nodes: none of that id", false, "GET", "/nodes/a", "", 404, `NODE_NOT_FOUND`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var opts []Option
			if tt.withNodes {
				opts = append(opts, WithNodes(nodes))
			}
			rec := httptest.NewRecorder()
			New(&fakeSessions{}, fakeContent{}, opts...).ServeHTTP(rec, newRequest(tt.method, tt.path, strings.NewReader(tt.body)))
			if rec.Code != tt.wantStatus {
				t.Fatalf("%s %s = %d %s, want %d", tt.method, tt.path, rec.Code, rec.Body, tt.wantStatus)
			}
			if tt.wantStatus != http.StatusOK {
				var e wire.ErrorBody
				if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || e.Error != tt.want {
					t.Errorf("error body %s, want code %s", rec.Body, tt.want)
				}
				return
			}
			var got, want any
			if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal([]byte(tt.want), &want); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s %s (-want +got):\n%s", tt.method, tt.path, diff)
			}
		})
	}
}
