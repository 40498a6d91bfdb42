package mcpserver

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
)

// pageBackend is fakeBackend with pages: every session it knows has two
// pages, page 1 current, and each call moves to another page.
type pageBackend struct {
	*fakeBackend
	recorded map[string][]proxy.Call
	images   map[string][]proxy.Image
}

func (b *pageBackend) Call(ctx context.Context, req proxy.CallRequest) (*proxy.CallResult, error) {
	res, err := b.fakeBackend.Call(ctx, req)
	if err == nil {
		res.Changes = &proxy.Changes{NewPage: true}
	}
	return res, err
}

func (b *pageBackend) Pages(ctx context.Context, id string) ([]proxy.Page, error) {
	if _, err := b.GetSession(ctx, id); err != nil {
		return nil, err
	}
	return []proxy.Page{
		{Index: 0, URL: "http://127.0.0.1/a", Title: "A", Viewport: &proxy.Viewport{Width: 800, Height: 600}, Live: true},
		{Index: 1, URL: "http://127.0.0.1/b", Title: "B", Current: true, Viewport: &proxy.Viewport{Width: 800, Height: 600}, Live: true},
	}, nil
}

func (b *pageBackend) Element(ctx context.Context, id string, page int, ref string) (*proxy.Element, error) {
	if _, err := b.GetSession(ctx, id); err != nil {
		return nil, err
	}
	if ref != "e4" {
		return nil, proxy.Errorf(proxy.EELEMENTMISSING, "no element has ref %s", ref)
	}
	return &proxy.Element{Ref: ref, Tag: "button", Attributes: map[string]string{"id": "buy"}, BoundingBox: &proxy.Box{X: 1, Y: 2, Width: 3, Height: 4}}, nil
}

func (b *pageBackend) NetworkLog(ctx context.Context, id string, page int) ([]proxy.NetworkEntry, error) {
	if _, err := b.GetSession(ctx, id); err != nil {
		return nil, err
	}
	ok := 200
	return []proxy.NetworkEntry{{Method: "GET", URL: "http://127.0.0.1/a", ResourceType: "document", Status: &ok, Timing: &proxy.NetworkTiming{StartTime: 1, ResponseEnd: 2}}}, nil
}

func (b *pageBackend) Calls(ctx context.Context, id string) ([]proxy.Call, error) {
	if _, err := b.GetSession(ctx, id); err != nil {
		return nil, err
	}
	return b.recorded[id], nil
}

func (b *pageBackend) Images(_ context.Context, ref string) ([]proxy.Image, error) {
	return b.images[ref], nil
}

// upstreamResult is a recorded upstream answer of one text.
func upstreamResult(text string) string {
	b, _ := json.Marshal(map[string]any{"content": []map[string]string{{"type": "text", "text": text}}})
	return string(b)
}

func recordedCall(ref, tool string, at time.Time, text string) proxy.Call {
	return proxy.Call{Request: proxy.Request{RefID: ref, ToolName: tool, Timestamp: at},
		Response: &proxy.Response{RefID: ref, Status: proxy.StatusSuccess, Result: upstreamResult(text)}}
}

func newPageBackend() *pageBackend {
	at := created.Add(time.Minute)
	return &pageBackend{
		fakeBackend: resourceBackend(),
		recorded: map[string][]proxy.Call{activeID: {
			recordedCall("nav", "browser_navigate", at, "### Page\n- Page URL: http://127.0.0.1/a\n"),
			recordedCall("shot0", "browser_take_screenshot", at.Add(time.Second), "### Result\nTook it"),
			recordedCall("tabs", "browser_tabs", at.Add(2*time.Second), "### Result\n- 0: [A](http://127.0.0.1/a)\n- 1: (current) [B](http://127.0.0.1/b)\n"),
			recordedCall("shot1", "browser_take_screenshot", at.Add(3*time.Second), "### Result\nTook it"),
		}},
		images: map[string][]proxy.Image{
			"shot0": {{MimeType: "image/png", Data: []byte("PNG-0")}},
			"shot1": {{MimeType: "image/png", Data: []byte("PNG-1")}},
		},
	}
}

func TestPageResourcesList(t *testing.T) {
	b := newPageBackend()
	s, err := New(context.Background(), b, b, WithLogger(quiet()))
	if err != nil {
		t.Fatal(err)
	}
	list, err := connect(t, s).ListResources(context.Background(), mcp.ListResourcesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range list.Resources {
		if strings.Contains(r.URI, activeID) {
			got = append(got, r.URI)
		}
	}
	ms := created.Add(time.Minute).UnixMilli()
	want := []string{
		"playwright:///session/" + activeID,
		"playwright:///page/" + activeID + "/0",
		"playwright:///page/" + activeID + "/1",
		"playwright:///screenshot/" + activeID + "/0/" + itoa(ms+1000),
		"playwright:///screenshot/" + activeID + "/1/" + itoa(ms+3000),
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("resources/list of the active session (-want +got):\n%s", diff)
	}
}

func itoa(n int64) string {
	return strings.TrimSpace(strings.Replace(string(json.RawMessage(mustJSON(n))), "\"", "", -1))
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

func TestReadPageResources(t *testing.T) {
	b := newPageBackend()
	s, err := New(context.Background(), b, b, WithLogger(quiet()))
	if err != nil {
		t.Fatal(err)
	}
	c := connect(t, s)
	ms := created.Add(time.Minute).UnixMilli()
	b64 := base64.StdEncoding.EncodeToString
	tests := []readCase{
		{name: "page", uri: "playwright:///page/" + activeID + "/1", want: []readOut{{MIME: "application/json",
			Text: `{"session_id":"` + activeID + `","index":1,"url":"http://127.0.0.1/b","title":"B","current":true,"viewport":{"width":800,"height":600},"live":true}`}}},
		{name: "element", uri: "playwright:///element/" + activeID + "/0/e4", want: []readOut{{MIME: "application/json",
			Text: `{"session_id":"` + activeID + `","page":0,"ref":"e4","tag":"button","attributes":{"id":"buy"},"bounding_box":{"x":1,"y":2,"width":3,"height":4}}`}}},
		{name: "network log", uri: "playwright:///network-log/" + activeID + "/0", want: []readOut{{MIME: "application/json",
			Text: `{"session_id":"` + activeID + `","page":0,"entries":[{"method":"GET","url":"http://127.0.0.1/a","resource_type":"document","status":200,"timing":{"start_time":1,"domain_lookup_start":0,"domain_lookup_end":0,"connect_start":0,"secure_connection_start":0,"connect_end":0,"request_start":0,"response_start":0,"response_end":2}}]}`}}},
		{name: "screenshot of page 0", uri: "playwright:///screenshot/" + activeID + "/0/" + itoa(ms+1000), want: []readOut{{MIME: "image/png", Blob: b64([]byte("PNG-0"))}}},
		{name: "screenshot of page 1", uri: "playwright:///screenshot/" + activeID + "/1/" + itoa(ms+3000), want: []readOut{{MIME: "image/png", Blob: b64([]byte("PNG-1"))}}},
		{name: "screenshot by ref still", uri: "playwright:///screenshot/shot", want: []readOut{{MIME: "image/png", Blob: b64([]byte("\x89PNG-1"))}, {MIME: "image/jpeg", Blob: b64([]byte("JPEG-2"))}}},
		{name: "screenshot on another page", uri: "playwright:///screenshot/" + activeID + "/1/" + itoa(ms+1000), wantErr: proxy.EREFMISSING},
		{name: "unknown page", uri: "playwright:///page/" + activeID + "/2", wantErr: proxy.EPAGEMISSING},
		{name: "unknown element", uri: "playwright:///element/" + activeID + "/0/e5", wantErr: proxy.EELEMENTMISSING},
		{name: "unknown session", uri: "playwright:///page/44444444-4444-4444-8444-444444444444/0", wantErr: proxy.ESESSIONMISSING},
		{name: "page not a number", uri: "playwright:///page/" + activeID + "/one", wantErr: proxy.EINVALID},
		{name: "page with a leading zero", uri: "playwright:///network-log/" + activeID + "/01", wantErr: proxy.EINVALID},
		{name: "timestamp not a number", uri: "playwright:///screenshot/" + activeID + "/0/today", wantErr: proxy.EINVALID},
	}
	checkReads(t, c, tests)
}

func TestCurrentTab(t *testing.T) {
	tests := []struct {
		name, text string
		want       int
		ok         bool
	}{
		{"tab list", "### Open tabs\n- 0: [A](http://a/)\n- 2: (current) [C](http://c/)\n### Page\n", 2, true},
		{"one tab", "### Page\n- Page URL: http://a/\n", 0, true},
		{"nothing about tabs", "### Result\ndone", 0, false},
		{"not an upstream answer", "", 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			result := upstreamResult(tc.text)
			if tc.text == "" {
				result = "not json"
			}
			n, ok := currentTab(result)
			if n != tc.want || ok != tc.ok {
				t.Errorf("currentTab = %d, %v; want %d, %v", n, ok, tc.want, tc.ok)
			}
		})
	}
}

// TestPageSubscriptions subscribes over Streamable HTTP, as /mcp serves it,
// and checks that a navigating call notifies the subscribed page it is on,
// that unsubscribe stops it, and that another client's session cannot be
// subscribed to.
func TestPageSubscriptions(t *testing.T) {
	b := newPageBackend()
	url := serveHTTP(t, NewHTTPHandler(b, b, HTTPConfig{Logger: quiet()}))
	c := dialHTTP(t, url)
	updated := make(chan string, 16)
	c.OnNotification(func(n mcp.JSONRPCNotification) {
		if n.Method == string(mcp.MethodNotificationResourceUpdated) {
			uri, _ := n.Params.AdditionalFields["uri"].(string)
			updated <- uri
		}
	})
	if _, _, err := callHTTP(c, "browser_navigate", map[string]any{"url": "http://127.0.0.1/a"}); err != nil {
		t.Fatal(err)
	}
	b.mu.Lock()
	sid := b.created[0]
	b.mu.Unlock()
	subscribe := func(c *client.Client, uri string) error {
		req := mcp.SubscribeRequest{}
		req.Params.URI = uri
		return c.Subscribe(context.Background(), req)
	}
	current := "playwright:///page/" + sid + "/1"
	for _, uri := range []string{current, "playwright:///page/" + sid + "/0"} {
		if err := subscribe(c.Client, uri); err != nil {
			t.Fatalf("subscribe %s: %v", uri, err)
		}
	}
	if _, _, err := callHTTP(c, "browser_navigate", map[string]any{"url": "http://127.0.0.1/b"}); err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-updated:
		if got != current {
			t.Errorf("update names %s, want the current page %s", got, current)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no notifications/resources/updated after a navigating call")
	}

	// Unsubscribed, the next navigation sends nothing; subscribed again,
	// the one after sends one update, which would come after a wrong one.
	unsub := mcp.UnsubscribeRequest{}
	unsub.Params.URI = current
	if err := c.Unsubscribe(context.Background(), unsub); err != nil {
		t.Fatal(err)
	}
	if _, _, err := callHTTP(c, "browser_navigate", map[string]any{"url": "http://127.0.0.1/c"}); err != nil {
		t.Fatal(err)
	}
	if err := subscribe(c.Client, current); err != nil {
		t.Fatal(err)
	}
	if _, _, err := callHTTP(c, "browser_navigate", map[string]any{"url": "http://127.0.0.1/d"}); err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-updated:
		if got != current {
			t.Errorf("update after resubscribing names %s, want %s", got, current)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no notifications/resources/updated after subscribing again")
	}

	select {
	case got := <-updated:
		t.Errorf("an update beyond the two subscribed navigations: %s", got)
	default:
	}

	other := dialHTTP(t, url)
	for _, tc := range []struct{ uri, want string }{
		{current, proxy.ESESSIONMISSING},
		{"playwright:///session/" + sid, proxy.EINVALID},
	} {
		if err := subscribe(other.Client, tc.uri); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("another client subscribing to %s: %v, want %s", tc.uri, err, tc.want)
		}
	}
}

// TestWSPageSubscription: over WebSocket too, the update of a subscribed
// page is written before the answer of the call that navigated it.
func TestWSPageSubscription(t *testing.T) {
	b := newPageBackend()
	h := NewHTTPHandler(b, b, HTTPConfig{Logger: quiet()})
	c := dialWS(t, serveWS(t, h), WSSubprotocol)
	c.initialize(t)
	c.callTool(t, "browser_navigate", map[string]any{"url": "http://127.0.0.1/a"})
	b.mu.Lock()
	sid := b.created[0]
	b.mu.Unlock()
	if a := c.rpc(t, "resources/subscribe", map[string]any{"uri": "playwright:///page/" + sid + "/1"}); a.Error != nil {
		t.Fatalf("subscribe: %+v", a.Error)
	}
	c.callTool(t, "browser_navigate", map[string]any{"url": "http://127.0.0.1/b"})
	c.mu.Lock()
	got := slices.Clone(c.notifications)
	c.mu.Unlock()
	if diff := cmp.Diff([]string{string(mcp.MethodNotificationResourceUpdated)}, got); diff != "" {
		t.Errorf("notifications when the navigation's answer came (-want +got):\n%s", diff)
	}
}
