//go:build linux

package upstream

import (
	"context"
	"encoding/json"
	"net/url"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/answer"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/live"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/toolset"
)

// reservations records what a Host reserves, as the policy would.
type reservations struct {
	mu   sync.Mutex
	held map[string]int
}

func (r *reservations) reserve(addr string) func() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.held == nil {
		r.held = map[string]int{}
	}
	r.held[addr]++
	var once sync.Once
	return func() {
		once.Do(func() {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.held[addr]--
			if r.held[addr] == 0 {
				delete(r.held, addr)
			}
		})
	}
}

func (r *reservations) list() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for a := range r.held {
		out = append(out, a)
	}
	slices.Sort(out)
	return out
}

// liveTargets runs the live view's targets program in w, as the session
// layer does, and returns the target ids of its pages.
func liveTargets(t *testing.T, w *Worker) []string {
	t.Helper()
	prog, err := toolset.TargetsProgram.Build(nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	raw, err := w.CallTool(ctx, toolset.RunTool, prog.Args)
	if err != nil {
		t.Fatal(err)
	}
	p, err := answer.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	o := toolset.Interpret(p.ResultText, p.ErrorText)
	if o.Err != nil {
		t.Fatalf("targets program: %v", o.Err)
	}
	var v struct {
		Pages []struct {
			TargetID string `json:"target_id"`
		} `json:"pages"`
	}
	if err := json.Unmarshal(o.Value, &v); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, pg := range v.Pages {
		if pg.TargetID == "" {
			t.Fatalf("a page without a target id in %s", o.Value)
		}
		ids = append(ids, pg.TargetID)
	}
	return ids
}

// firstFrame attaches the live view to target and waits for one frame.
func firstFrame(t *testing.T, endpoint, target string) live.Frame {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	p, err := live.Attach(ctx, endpoint, target)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	got := make(chan live.Frame, 1)
	fctx, stop := context.WithCancel(ctx)
	defer stop()
	err = p.Screencast(fctx, live.Options{}, func(f live.Frame) {
		select {
		case got <- f:
		default:
		}
		stop()
	})
	select {
	case f := <-got:
		return f
	default:
		t.Fatalf("no frame from %s: %v", target, err)
		return live.Frame{}
	}
}

func TestIntegrationDebugEndpoint(t *testing.T) {
	root := realSetup(t)
	site := testSite(t)
	remote := func(t *testing.T) HostConfig {
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		defer cancel()
		b, err := LaunchBrowser(ctx, BrowserConfig{Headless: true, TempDir: shortTempDir(t), Logger: testLogger(t)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = b.Close(context.Background()) })
		return HostConfig{RemoteCDPEndpoint: b.CDPEndpoint()}
	}
	tests := []struct {
		name string
		cfg  func(*testing.T) HostConfig
		// reserved: the host reserves the browser's CDP port itself (a
		// remote endpoint is the server's configuration, reserved at start).
		reserved bool
	}{
		{"shared via browser server", func(*testing.T) HostConfig { return HostConfig{} }, true},
		{"shared over CDP", func(*testing.T) HostConfig { return HostConfig{ShareOverCDP: true} }, true},
		{"remote CDP endpoint", remote, false},
		{"per session", func(*testing.T) HostConfig { return HostConfig{PerSession: true} }, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var res reservations
			cfg := tt.cfg(t)
			cfg.Browser = BrowserConfig{Headless: true, Logger: testLogger(t)}
			cfg.Worker = WorkerConfig{Command: DefaultCommand(root), Logger: testLogger(t)}
			cfg.Logger = testLogger(t)
			cfg.TempDir = shortTempDir(t)
			cfg.Reserve = res.reserve
			t.Cleanup(func() {
				if left := res.list(); len(left) > 0 {
					t.Errorf("still reserved after the host closed: %v", left)
				}
			})
			h := startHost(t, cfg)
			w1, w2 := spawn(t, h), spawn(t, h)
			ep := w1.DebugEndpoint()
			u, err := url.Parse(ep)
			if err != nil || u.Scheme != "http" || u.Port() == "" {
				t.Fatalf("DebugEndpoint = %q, want http://host:port", ep)
			}
			var want []string
			if cfg.PerSession {
				u2, err := url.Parse(w2.DebugEndpoint())
				if err != nil || u2.Host == u.Host {
					t.Errorf("per-session workers name %q and %q, want a browser each", ep, w2.DebugEndpoint())
				}
				want = []string{u.Host, u2.Host}
				slices.Sort(want)
			} else {
				if got := w2.DebugEndpoint(); got != ep {
					t.Errorf("workers on one browser name two endpoints: %q, %q", ep, got)
				}
				if tt.reserved {
					want = []string{u.Host}
				}
			}
			if diff := cmp.Diff(want, res.list()); diff != "" {
				t.Errorf("reserved (-want +got):\n%s", diff)
			}

			call(t, w1, "browser_navigate", map[string]string{"url": site.URL + "/blank"})
			call(t, w2, "browser_navigate", map[string]string{"url": site.URL + "/blank"})
			ids1, ids2 := liveTargets(t, w1), liveTargets(t, w2)
			if len(ids1) != 1 || len(ids2) != 1 {
				t.Fatalf("targets: %v and %v, want one page each", ids1, ids2)
			}
			f := firstFrame(t, ep, ids1[0])
			if len(f.Data) == 0 || f.DeviceWidth == 0 {
				t.Errorf("empty frame: %d bytes, %vx%v", len(f.Data), f.DeviceWidth, f.DeviceHeight)
			}
			// The live view of one worker's page lists that worker's
			// tabs, never the other's.
			p, err := live.Attach(t.Context(), ep, ids1[0])
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			tabs, err := p.Tabs(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, tab := range tabs {
				got = append(got, tab.TargetID)
			}
			if diff := cmp.Diff(ids1, got); diff != "" {
				t.Errorf("tabs of worker 1's page (-want +got):\n%s", diff)
			}
		})
	}
}
