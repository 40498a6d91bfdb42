package catalog

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/toolset"
)

// The reviewed table itself: every entry says where it reaches and why,
// and exactly the tools that reach past the page are kept from in-page
// groups.
func TestUpstreamReview(t *testing.T) {
	var outside, never []string
	for name, r := range upstreamReview {
		if !strings.HasPrefix(name, "browser_") || strings.TrimSpace(r.Why) == "" {
			t.Errorf("%s: %+v, want a browser_ tool with a reason", name, r)
		}
		switch r.Reach {
		case InPage:
		case OutsidePage:
			outside = append(outside, name)
		case Never:
			never = append(never, name)
		default:
			t.Errorf("%s: reach %d is none of InPage, OutsidePage, Never", name, r.Reach)
		}
	}
	slices.Sort(outside)
	if diff := cmp.Diff([]string{"browser_get_config", "browser_run_code_unsafe"}, outside); diff != "" {
		t.Errorf("tools reaching outside the page (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"browser_annotate"}, never); diff != "" {
		t.Errorf("tools never offered (-want +got):\n%s", diff)
	}
	// Every tool a worker lists with the proxy's own --caps is reviewed.
	for _, tool := range upstreamFixture(t) {
		if _, ok := ReviewOf(tool.Name); !ok {
			t.Errorf("%s is listed by the pinned @playwright/mcp but not reviewed", tool.Name)
		}
	}
}

func TestUpstreamGroupOfReviewedTools(t *testing.T) {
	tests := []struct {
		name        string
		ownBrowsers bool
		want        string
	}{
		{"browser_click", false, toolset.GroupUpstream},
		{"browser_click", true, toolset.GroupUpstream},
		{"browser_evaluate", false, toolset.GroupUpstream},
		{"browser_cookie_list", false, toolset.GroupStorage},
		{"browser_run_code_unsafe", false, noGroup},
		{"browser_run_code_unsafe", true, toolset.GroupUnsafe},
		{"browser_get_config", false, noGroup},
		{"browser_get_config", true, toolset.GroupUnsafe},
		{"browser_annotate", false, noGroup},
		{"browser_annotate", true, noGroup},
		{"browser_not_reviewed_yet", false, noGroup},
		{"browser_not_reviewed_yet", true, toolset.GroupUnsafe},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := upstreamGroup(tt.name, tt.ownBrowsers); got != tt.want {
				t.Errorf("upstreamGroup(%s, own browsers %v) = %q, want %q", tt.name, tt.ownBrowsers, got, tt.want)
			}
		})
	}
}

// hiddenFixture is upstream's list with every capability's tools that
// reach past the page, and one no review has read.
func hiddenFixture(t *testing.T) []proxy.Tool {
	up := upstreamFixture(t)
	for _, name := range []string{"browser_get_config", "browser_annotate", "browser_not_reviewed_yet"} {
		up = append(up, proxy.Tool{Name: name, InputSchema: json.RawMessage(`{"type":"object","properties":{}}`)})
	}
	return up
}

var codeTools = []string{"browser_run_code_unsafe", "browser_get_config", "browser_annotate", "browser_not_reviewed_yet"}

// What the catalogue lists and resolves of upstream's code tools, for
// every kind of server and client choice: offered only with a browser per
// session and unsafe enabled by the server and chosen by the client; the
// proxy's own programs run through upstream's runner whatever it offers.
func TestCodeToolsOfferedOnlyWithOwnBrowsersAndUnsafe(t *testing.T) {
	tests := []struct {
		name        string
		server      []string // PROXY_TOOLSETS
		ownBrowsers bool
		client      string // the request's own choice
		want        []string
		whyHidden   []string // in a refusal's message
	}{
		{name: "defaults, shared browser", want: nil,
			whyHidden: []string{"share one browser process", "PROXY_BROWSER_MODE=per-session", "PROXY_TOOLSETS", "browser_evaluate"}},
		{name: "all, shared browser", server: []string{"all"}, want: nil,
			whyHidden: []string{"share one browser process", "PROXY_BROWSER_MODE=per-session"}},
		{name: "unsafe, shared browser", server: []string{"upstream", "unsafe"}, want: nil,
			whyHidden: []string{"share one browser process", "PROXY_BROWSER_MODE=per-session"}},
		{name: "client's all, shared browser", client: "all", want: nil,
			whyHidden: []string{"share one browser process"}},
		{name: "client's unsafe, shared browser", server: []string{"upstream", "unsafe"}, client: "upstream,unsafe", want: nil,
			whyHidden: []string{"share one browser process"}},
		{name: "defaults, own browsers", ownBrowsers: true, want: nil,
			whyHidden: []string{"tool group unsafe", "PROXY_TOOLSETS must name unsafe"}},
		{name: "all, own browsers", server: []string{"all"}, ownBrowsers: true, want: nil,
			whyHidden: []string{"tool group unsafe", "all does not include it"}},
		{name: "client names unsafe the server did not enable", ownBrowsers: true, client: "upstream,unsafe", want: nil,
			whyHidden: []string{"PROXY_TOOLSETS must name unsafe"}},
		{name: "unsafe, own browsers", server: []string{"upstream", "unsafe"}, ownBrowsers: true,
			want: []string{"browser_get_config", "browser_not_reviewed_yet", "browser_run_code_unsafe"}},
		{name: "client leaves unsafe out", server: []string{"upstream", "unsafe"}, ownBrowsers: true, client: "upstream", want: nil,
			whyHidden: []string{"tool group unsafe, which is not selected"}},
		{name: "client's unsafe, own browsers", server: []string{"upstream", "unsafe"}, ownBrowsers: true, client: "unsafe",
			want: []string{"browser_get_config", "browser_not_reviewed_yet", "browser_run_code_unsafe"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			def, err := toolset.Select(tt.server)
			if err != nil {
				t.Fatal(err)
			}
			up := hiddenFixture(t)
			c := New(func(context.Context) ([]proxy.Tool, error) { return up, nil }, Options{Default: def, OwnBrowsers: tt.ownBrowsers})
			ctx, err := toolset.WithChoice(context.Background(), tt.client)
			if err != nil {
				t.Fatal(err)
			}
			listed, err := c.List(ctx)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, tool := range listed {
				if slices.Contains(codeTools, tool.Name) {
					got = append(got, tool.Name)
					if tool.Group != toolset.GroupUnsafe {
						t.Errorf("%s listed in group %q, want unsafe", tool.Name, tool.Group)
					}
				}
			}
			slices.Sort(got)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("code tools listed (-want +got):\n%s", diff)
			}
			for _, name := range codeTools {
				r, err := c.Resolve(ctx, name)
				if slices.Contains(tt.want, name) {
					if err != nil || r.Tool.Name != name {
						t.Errorf("Resolve(%s) = %v, %v; want it (listed)", name, r, err)
					}
					continue
				}
				e := proxy.AsError(err)
				if e.Code != proxy.ETOOLMISSING || e.Details["tool"] != name {
					t.Errorf("Resolve(%s) = %+v, want TOOL_NOT_FOUND naming it", name, e)
					continue
				}
				whys := tt.whyHidden
				if name == "browser_annotate" {
					whys = []string{"detached process", "no configuration of this proxy offers it"}
				}
				for _, why := range whys {
					if !strings.Contains(e.Message, why) {
						t.Errorf("Resolve(%s) says %q; want it to say %q", name, e.Message, why)
					}
				}
			}
			// The proxy's own tools still resolve to their programs, which
			// run through upstream's runner however it is offered.
			sel := toolset.AllowedBy(def)
			own, err := c.Resolve(toolset.WithSelection(ctx, sel), "get_text")
			if err != nil || own.Own == nil {
				t.Errorf("Resolve(get_text) = %v, %v; want the proxy's own program", own, err)
			}
		})
	}
}

// Without upstream's runner in its list, the proxy's own tools are not
// offered: hiding the runner from clients must not be mistaken for that.
func TestOwnToolsNeedTheRunnerUpstreamLists(t *testing.T) {
	up := slices.DeleteFunc(upstreamFixture(t), func(t proxy.Tool) bool { return t.Name == toolset.RunTool })
	c := New(func(context.Context) ([]proxy.Tool, error) { return up, nil }, Options{Default: toolset.All()})
	_, err := c.Resolve(context.Background(), "get_text")
	if e := proxy.AsError(err); e.Code != proxy.ETOOLMISSING || !strings.Contains(e.Message, "does not offer") {
		t.Errorf("get_text without the runner = %v, want TOOL_NOT_FOUND saying upstream does not offer it", err)
	}
	withRunner := New(func(context.Context) ([]proxy.Tool, error) { return upstreamFixture(t), nil }, Options{Default: toolset.All()})
	listed, err := withRunner.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	names := make([]string, 0, len(listed))
	for _, tool := range listed {
		names = append(names, tool.Name)
	}
	if !slices.Contains(names, "get_text") || slices.Contains(names, toolset.RunTool) {
		t.Errorf("listed %v; want get_text and not %s", names, toolset.RunTool)
	}
}
