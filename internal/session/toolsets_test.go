package session

import (
	"context"
	"encoding/json"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/toolset"
)

// storageWorker offers one of upstream's storage tools besides the runner
// and the fake's tools.
type storageWorker struct{ runnerWorker }

func (w storageWorker) Tools() []proxy.Tool {
	return append(w.runnerWorker.Tools(), proxy.Tool{Name: "browser_localstorage_get", InputSchema: json.RawMessage(`{"type":"object","properties":{"key":{"type":"string"}},"required":["key"]}`)})
}

// A request lists and calls the groups of its client's own choice, else
// the server's; upstream's storage tools are a group of their own, and its
// code runner is offered only in group unsafe, only with a browser per
// session, and only when the server itself enables unsafe.
func TestClientToolsetsReplaceTheServers(t *testing.T) {
	base := []string{"browser_click", "browser_navigate", "browser_snapshot"}
	withRun := append(slices.Clone(base), toolset.RunTool)
	extraction := []string{"extract_links", "extract_table", "get_all_text", "get_attribute", "get_page_metadata", "get_text", "get_value", "screenshot_element"}
	tests := []struct {
		name   string
		server []string // PROXY_TOOLSETS
		own    bool     // a browser per session
		client string   // the request's own choice
		want   []string // browser tools listed, sorted
	}{
		{name: "server defaults", want: base},
		{name: "client adds storage", client: "upstream,storage", want: append(slices.Clone(base), "browser_localstorage_get")},
		{name: "client chooses storage only", client: "storage", want: []string{"browser_localstorage_get"}},
		{name: "client's choice replaces the server's", server: []string{"storage"}, client: "extraction", want: extraction},
		{name: "server's storage", server: []string{"upstream", "storage"}, want: append(slices.Clone(base), "browser_localstorage_get")},
		{name: "client's empty choice is the server's", server: []string{"storage"}, client: " ", want: []string{"browser_localstorage_get"}},
		{name: "unsafe with a shared browser", server: []string{"upstream", "unsafe"}, want: base},
		{name: "client's unsafe with a shared browser", server: []string{"upstream", "unsafe"}, client: "upstream,unsafe", want: base},
		{name: "own browsers without unsafe", own: true, want: base},
		{name: "own browsers and server's unsafe", server: []string{"upstream", "unsafe"}, own: true, want: withRun},
		{name: "client names unsafe the server did not enable", own: true, client: "upstream,unsafe", want: base},
		{name: "client leaves the server's unsafe out", server: []string{"upstream", "unsafe"}, own: true, client: "upstream", want: base},
		{name: "client chooses only unsafe the server did not enable", server: []string{"upstream"}, own: true, client: "unsafe", want: nil},
		{name: "client chooses only the server's unsafe", server: []string{"upstream", "unsafe"}, own: true, client: "unsafe", want: []string{toolset.RunTool}},
		{name: "all is not unsafe", server: []string{"upstream", "unsafe"}, own: true, client: "storage,all", want: append(slices.Clone(base), append(toolset.Names(), "browser_localstorage_get")...)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sel, err := toolset.Select(tt.server)
			if err != nil {
				t.Fatal(err)
			}
			m := New(propDB(t), SpawnFunc(func(context.Context) (Worker, error) {
				return storageWorker{runnerWorker{newFakeWorker(t)}}, nil
			}), Options{Toolset: sel, OwnBrowsers: tt.own, Logger: slog.New(slog.DiscardHandler)})
			t.Cleanup(func() { m.Shutdown(context.Background()) })
			ctx, err := toolset.WithChoice(context.Background(), tt.client)
			if err != nil {
				t.Fatal(err)
			}
			tools, err := m.Tools(ctx)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, tl := range tools {
				if !tl.Proxy { // the session and content tools are the MCP surface's
					got = append(got, tl.Name)
				}
			}
			slices.Sort(got)
			want := slices.Sorted(slices.Values(tt.want))
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("listed (-want +got):\n%s", diff)
			}
			// Exactly the listed tools are callable.
			for _, name := range append(slices.Clone(withRun), "browser_localstorage_get", "get_text") {
				params := map[string]json.RawMessage{"browser_localstorage_get": json.RawMessage(`{"key":"k"}`), "get_text": json.RawMessage(`{"selector":"h1"}`)}[name]
				if params == nil {
					params = json.RawMessage(`{}`)
				}
				err := m.Validate(ctx, name, params)
				if slices.Contains(got, name) {
					if err != nil {
						t.Errorf("%s is listed but refused: %v", name, err)
					}
					continue
				}
				if proxy.ErrorCode(err) != proxy.ETOOLMISSING {
					t.Errorf("%s is not listed but %v, want TOOL_NOT_FOUND", name, err)
				}
			}
		})
	}
}

// A storage tool of a chosen group reaches the worker; unchosen, it is
// refused before any session is touched, naming its group.
func TestStorageToolCallFollowsTheChoice(t *testing.T) {
	w := storageWorker{runnerWorker{newFakeWorker(t)}}
	m := New(propDB(t), SpawnFunc(func(context.Context) (Worker, error) { return w, nil }), Options{Logger: slog.New(slog.DiscardHandler)})
	t.Cleanup(func() { m.Shutdown(context.Background()) })
	ctx := context.Background()
	s, err := m.CreateSession(ctx)
	if err != nil {
		t.Fatal(err)
	}
	req := proxy.CallRequest{SessionID: s.ID, Tool: "browser_localstorage_get", Params: json.RawMessage(`{"key":"k"}`)}
	before := w.calls.Load()
	_, err = m.Call(ctx, req)
	if proxy.ErrorCode(err) != proxy.ETOOLMISSING || !strings.Contains(err.Error(), "tool group storage") || !strings.Contains(err.Error(), "PROXY_TOOLSETS") {
		t.Fatalf("call without storage = %v, want TOOL_NOT_FOUND naming the group and how to choose it", err)
	}
	if w.calls.Load() != before {
		t.Errorf("a refused call reached the worker")
	}
	storage, _ := toolset.Select([]string{"upstream", "storage"})
	res, err := m.Call(toolset.WithSelection(ctx, storage), req)
	if err != nil || res.Status != proxy.StatusSuccess {
		t.Fatalf("call with storage = %+v, %v", res, err)
	}
	if w.calls.Load() != before+1 {
		t.Errorf("worker calls %d, want %d", w.calls.Load(), before+1)
	}
}
