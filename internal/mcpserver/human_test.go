package mcpserver

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/catalog"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/clock/clocktest"
)

// fakeHuman answers request_human with result, after release when set.
type fakeHuman struct {
	mu     sync.Mutex
	asked  []humanAsk
	result *proxy.HumanResult
	err    error
	// entered is closed once a wait began; release ends it.
	entered, release chan struct{}
}

type humanAsk struct {
	Session, Reason string
	Timeout         time.Duration
	Client          proxy.ClientID
}

func (f *fakeHuman) TakeControl(context.Context, string) (*proxy.ControlLease, error) {
	return nil, proxy.Errorf(proxy.EFORBIDDEN, "the operator's")
}

func (f *fakeHuman) HandBack(context.Context, string, string) error {
	return proxy.Errorf(proxy.EFORBIDDEN, "the operator's")
}

func (f *fakeHuman) RequestHuman(ctx context.Context, id, reason string, timeout time.Duration) (*proxy.HumanResult, error) {
	client, _ := proxy.ClientFrom(ctx)
	f.mu.Lock()
	f.asked = append(f.asked, humanAsk{id, reason, timeout, client})
	f.mu.Unlock()
	if f.entered != nil {
		close(f.entered)
		<-f.release
	}
	if f.err != nil {
		return nil, f.err
	}
	res := *f.result
	res.SessionID = id
	return &res, nil
}

const liveSession = "77777777-0000-4000-8000-000000000000"

// TestRequestHumanAnswers: what the model reads after a wait, handed back
// or not; the default session, or the one named.
func TestRequestHumanAnswers(t *testing.T) {
	since := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	snapshot := &proxy.CallResult{RefID: "ref-9", Status: proxy.StatusSuccess,
		Metadata: proxy.CallMetadata{Tool: "browser_snapshot", PageURL: "https://example.com/home", PageTitle: "Home", HasSnapshot: true},
		Changes:  &proxy.Changes{Added: 3, Removed: 1, Changed: 0}}
	tests := []struct {
		name   string
		result proxy.HumanResult
		args   map[string]any
		want   string
	}{
		{"handed back", proxy.HumanResult{HandedBack: true, Actions: []string{"click on button 'Sign in'", "typed 13 characters", "pressed Enter"}, Result: snapshot,
			LiveURL: "http://127.0.0.1:8931/ui/sessions/" + liveSession + "/live"},
			map[string]any{"reason": "sign in", "session_id": liveSession},
			"handed_back: yes\nperson: click on button 'Sign in'; typed 13 characters; pressed Enter\nref_id: ref-9\nchanges: +3 -1 ~0\nlive_url: http://127.0.0.1:8931/ui/sessions/" + liveSession + "/live"},
		{"timed out while a person holds the browser", proxy.HumanResult{Control: &proxy.Control{Holder: proxy.HolderPerson, Since: since}},
			map[string]any{"reason": "CAPTCHA", "timeout": 60, "session_id": liveSession},
			"handed_back: no\nperson: no actions\ncontrol: a person still holds the browser (since 2026-11-27T10:00:00Z); your actions answer HUMAN_IN_CONTROL until they hand back\nlive_url: /ui/sessions/" + liveSession + "/live"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := &fakeBackend{sessions: []*proxy.Session{{ID: liveSession, State: proxy.SessionActive, LiveURL: "/ui/sessions/" + liveSession + "/live"}}}
			h := &fakeHuman{result: &tc.result}
			s, err := New(context.Background(), b, b, WithHuman(h))
			if err != nil {
				t.Fatal(err)
			}
			text, isErr := call(t, connect(t, s), catalog.ToolRequestHuman, tc.args)
			if isErr {
				t.Fatalf("request_human: %s", text)
			}
			if diff := cmp.Diff(tc.want, text); diff != "" {
				t.Errorf("answer (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRequestHumanArguments: the default session is used when none is
// named (none yet: refused); bad arguments and HUMAN_IN_CONTROL answer as
// every error does, and the service is asked only with good ones.
func TestRequestHumanArguments(t *testing.T) {
	b := &fakeBackend{}
	h := &fakeHuman{result: &proxy.HumanResult{HandedBack: true}}
	s, err := New(context.Background(), b, b, WithHuman(h), actForClients())
	if err != nil {
		t.Fatal(err)
	}
	c := connect(t, s)
	codeOf := func(args map[string]any) string {
		text, isErr := call(t, c, catalog.ToolRequestHuman, args)
		if !isErr {
			return ""
		}
		p, _ := ParseAnswer(text)
		return p.ErrorCode
	}
	if got := codeOf(map[string]any{"reason": "2FA"}); got != proxy.EINVALID {
		t.Errorf("request_human before any session = %q, want INVALID_PARAMETERS", got)
	}
	if text, isErr := call(t, c, "browser_navigate", map[string]any{"url": "http://127.0.0.1/"}); isErr {
		t.Fatalf("navigate: %s", text)
	}
	def := b.created[0]
	codes := map[string]string{
		"default":        codeOf(map[string]any{"reason": "2FA"}),
		"longest":        codeOf(map[string]any{"reason": "2FA", "timeout": 1800}),
		"fraction":       codeOf(map[string]any{"reason": "2FA", "timeout": 1.5}),
		"too long":       codeOf(map[string]any{"reason": "2FA", "timeout": 1801}),
		"huge":           codeOf(map[string]any{"reason": "2FA", "timeout": 1e300}),
		"negative":       codeOf(map[string]any{"reason": "2FA", "timeout": -1}),
		"not a number":   codeOf(map[string]any{"reason": "2FA", "timeout": "60"}),
		"no reason":      codeOf(map[string]any{"timeout": 60}),
		"reason number":  codeOf(map[string]any{"reason": 7}),
		"session number": codeOf(map[string]any{"reason": "2FA", "session_id": 7}),
		"unknown":        codeOf(map[string]any{"reason": "2FA", "session_id": "nope"}),
	}
	want := map[string]string{"default": "", "longest": "", "fraction": "", "too long": proxy.EINVALID, "huge": proxy.EINVALID, "negative": proxy.EINVALID,
		"not a number": proxy.EINVALID, "no reason": proxy.EINVALID, "reason number": proxy.EINVALID, "session number": proxy.EINVALID, "unknown": proxy.ESESSIONMISSING}
	if diff := cmp.Diff(want, codes); diff != "" {
		t.Errorf("codes (-want +got):\n%s", diff)
	}
	owner := b.owners[def]
	wantAsked := []humanAsk{{def, "2FA", 0, owner}, {def, "2FA", 30 * time.Minute, owner}, {def, "2FA", 1500 * time.Millisecond, owner}}
	if diff := cmp.Diff(wantAsked, h.asked); diff != "" {
		t.Errorf("waits asked (-want +got):\n%s", diff)
	}

	h.err = proxy.Errorf(proxy.EHUMANINCONTROL, "a person holds session %s", def)
	text, isErr := call(t, c, catalog.ToolRequestHuman, map[string]any{"reason": "2FA"})
	if !isErr || !strings.HasPrefix(text, "error: HUMAN_IN_CONTROL (retryable): ") || !strings.Contains(text, "\nsuggestion: ") {
		t.Errorf("HUMAN_IN_CONTROL answered %q, want the error line, retryable, and a suggestion", text)
	}
}

// TestRequestHumanProgress: while a wait lasts, a call that asked for
// progress gets a notification every 10 s of the clock, with the seconds
// waited and the live view's address, in-process (the bridge's stdio) and
// over Streamable HTTP (/mcp); one that did not ask gets none.
func TestRequestHumanProgress(t *testing.T) {
	for _, overHTTP := range []bool{false, true} {
		name := "in-process"
		if overHTTP {
			name = "streamable HTTP"
		}
		t.Run(name, func(t *testing.T) { testRequestHumanProgress(t, overHTTP) })
	}
}

func testRequestHumanProgress(t *testing.T, overHTTP bool) {
	live := "http://127.0.0.1:8931/ui/sessions/" + liveSession + "/live"
	b := &fakeBackend{}
	clk := clocktest.New()
	h := &fakeHuman{result: &proxy.HumanResult{HandedBack: true, LiveURL: live}, entered: make(chan struct{}), release: make(chan struct{})}
	opts := []Option{WithHuman(h), withClock(clk)}
	var c *client.Client
	var owner proxy.ClientID
	if overHTTP {
		hc := dialHTTP(t, serveHTTP(t, NewHTTPHandler(b, b, HTTPConfig{Logger: quiet(), Options: opts})))
		c, owner = hc.Client, MCPClientID(hc.tr.GetSessionId())
	} else {
		s, err := New(context.Background(), b, b, opts...)
		if err != nil {
			t.Fatal(err)
		}
		c = connect(t, s)
	}
	b.mu.Lock()
	b.sessions = []*proxy.Session{{ID: liveSession, State: proxy.SessionActive, Owner: owner, LiveURL: live}}
	b.mu.Unlock()
	progress := make(chan map[string]any, 8)
	c.OnNotification(func(n mcp.JSONRPCNotification) {
		if n.Method == string(mcp.MethodNotificationProgress) {
			progress <- n.Params.AdditionalFields
		}
	})
	answered := make(chan *mcp.CallToolResult, 1)
	go func() {
		req := mcp.CallToolRequest{}
		req.Params.Name = catalog.ToolRequestHuman
		req.Params.Arguments = map[string]any{"reason": "2FA", "session_id": liveSession}
		req.Params.Meta = &mcp.Meta{ProgressToken: "p-1"}
		res, err := c.CallTool(context.Background(), req)
		if err != nil {
			t.Error(err)
		}
		answered <- res
	}()
	<-h.entered
	var got []map[string]any
	for range 2 {
		clk.WaitForTimer(t, progressEvery)
		clk.Advance(progressEvery)
		got = append(got, <-progress)
	}
	close(h.release)
	if res := <-answered; res == nil || res.IsError {
		t.Fatalf("request_human = %+v", res)
	}
	want := []map[string]any{
		{"progressToken": "p-1", "progress": float64(10), "message": "waiting for a person: " + live},
		{"progressToken": "p-1", "progress": float64(20), "message": "waiting for a person: " + live},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("progress notifications (-want +got):\n%s", diff)
	}
	if n := len(clk.Timers()); n != 0 {
		t.Errorf("%d timers left after the answer, want none", n)
	}

	// Without a progress token: no ticking at all.
	h.entered, h.release = make(chan struct{}), make(chan struct{})
	go func() {
		req := mcp.CallToolRequest{}
		req.Params.Name = catalog.ToolRequestHuman
		req.Params.Arguments = map[string]any{"reason": "2FA", "session_id": liveSession}
		res, err := c.CallTool(context.Background(), req)
		if err != nil {
			t.Error(err)
		}
		answered <- res
	}()
	<-h.entered
	if n := len(clk.Timers()); n != 0 {
		t.Errorf("a wait without a progress token set %d timers, want none", n)
	}
	close(h.release)
	<-answered
	select {
	case p := <-progress:
		t.Errorf("progress without a token: %v", p)
	default:
	}
}
