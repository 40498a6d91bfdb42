//go:build unix

package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/mcpserver"
)

// resClient is one MCP client of the page-resource test, with the
// notifications/resources/updated URIs it received, in order.
type resClient struct {
	*mcpClient
	updated chan string
}

// newResClient initializes an MCP client over tr and records its update
// notifications.
func newResClient(t *testing.T, tr transport.Interface, name string) *resClient {
	t.Helper()
	updated := make(chan string, 64)
	m := startMCP(t, tr, name, func(n mcp.JSONRPCNotification) {
		if n.Method == string(mcp.MethodNotificationResourceUpdated) {
			uri, _ := n.Params.AdditionalFields["uri"].(string)
			updated <- uri
		}
	})
	return &resClient{mcpClient: m, updated: updated}
}

func (r *resClient) list() []mcp.Resource {
	r.t.Helper()
	ctx, cancel := r.ctx()
	defer cancel()
	res, err := r.c.ListResources(ctx, mcp.ListResourcesRequest{})
	if err != nil {
		r.t.Fatal(err)
	}
	return res.Resources
}

func (r *resClient) readJSON(uri string, out any) {
	r.t.Helper()
	text := r.readText(uri)
	if text.MIMEType != "application/json" || json.Unmarshal([]byte(text.Text), out) != nil {
		r.t.Fatalf("read %s = %s %q, want JSON", uri, text.MIMEType, text.Text)
	}
}

func (r *resClient) subscribe(uri string) error {
	ctx, cancel := r.ctx()
	defer cancel()
	req := mcp.SubscribeRequest{}
	req.Params.URI = uri
	return r.c.Subscribe(ctx, req)
}

func (r *resClient) unsubscribe(uri string) error {
	ctx, cancel := r.ctx()
	defer cancel()
	req := mcp.UnsubscribeRequest{}
	req.Params.URI = uri
	return r.c.Unsubscribe(ctx, req)
}

// nextUpdate waits for the next update notification. The deadline only
// bounds a failing run: a notification is sent with the call's answer.
func (r *resClient) nextUpdate() string {
	r.t.Helper()
	select {
	case uri := <-r.updated:
		return uri
	case <-time.After(time.Minute):
		r.t.Fatal("no notifications/resources/updated within a minute of the navigation")
		return ""
	}
}

// TestPageResources reads the page, element, network-log and screenshot
// resources of a session through real mcp-bridge processes and through
// /mcp, subscribes to a page and navigates it, and checks that another
// client sees, reads and hears nothing of them.
func TestPageResources(t *testing.T) {
	s := startServer(t, "", nil)
	pages := site(t)
	_, bridgeBin := binaries(t)
	transports := []struct {
		name string
		dial func(name string) *resClient
	}{
		{"bridge", func(name string) *resClient {
			return newResClient(t, transport.NewStdio(bridgeBin, []string{"MCP_PROXY_URL=" + s.URL, "MCP_PROXY_AUTOSTART=0"}), name)
		}},
		{"mcp", func(name string) *resClient {
			tr, err := transport.NewStreamableHTTP(s.URL + "/mcp")
			if err != nil {
				t.Fatal(err)
			}
			return newResClient(t, tr, name)
		}},
	}
	for _, tp := range transports {
		t.Run(tp.name, func(t *testing.T) {
			a, b := tp.dial("owner"), tp.dial("other")
			a.t, b.t = t, t
			nav := a.browser("browser_navigate", map[string]any{"url": pages + "/index.html"})
			shot := a.browser("browser_take_screenshot", map[string]any{})
			if !shot.Image {
				t.Fatalf("screenshot = %+v, want an image", shot)
			}
			sid := a.defaultSession()
			b.browser("browser_navigate", map[string]any{"url": pages + "/console.html"})
			bsid := b.defaultSession()

			pageURI := "playwright:///page/" + sid + "/0"
			netURI := "playwright:///network-log/" + sid + "/0"
			var shotURI string
			listed := map[string]mcp.Resource{}
			for _, r := range a.list() {
				listed[r.URI] = r
				if strings.HasPrefix(r.URI, "playwright:///screenshot/"+sid+"/0/") {
					shotURI = r.URI
				}
			}
			if r, ok := listed[pageURI]; !ok || r.Title != "Test Home" || r.MIMEType != "application/json" {
				t.Errorf("resources/list of the owner has %s = %+v (listed: %v), want it titled Test Home", pageURI, r, keys(listed))
			}
			if shotURI == "" {
				t.Fatalf("resources/list of the owner names no screenshot of page 0: %v", keys(listed))
			}
			for _, r := range b.list() {
				if strings.Contains(r.URI, sid) {
					t.Errorf("the other client's resources/list shows %s of the owner's session", r.URI)
				}
			}

			t.Run("page", func(t *testing.T) {
				var got struct {
					SessionID string `json:"session_id"`
					Index     int    `json:"index"`
					URL       string `json:"url"`
					Title     string `json:"title"`
					Current   bool   `json:"current"`
					Live      bool   `json:"live"`
					Viewport  *struct {
						Width  int `json:"width"`
						Height int `json:"height"`
					} `json:"viewport"`
				}
				a.readJSON(pageURI, &got)
				if got.SessionID != sid || got.URL != pages+"/" || got.Title != "Test Home" || !got.Current || !got.Live ||
					got.Viewport == nil || got.Viewport.Width <= 0 || got.Viewport.Height <= 0 {
					t.Errorf("page resource = %+v", got)
				}
			})

			t.Run("element", func(t *testing.T) {
				snap := a.callText("get_content", map[string]any{"ref_id": nav.RefID, "reset_cursor": true})
				m := regexp.MustCompile(`button "Search now" \[ref=(e[0-9]+)\]`).FindStringSubmatch(snap)
				if m == nil {
					t.Fatalf("no ref for the button in the snapshot:\n%s", snap)
				}
				var got struct {
					Ref         string            `json:"ref"`
					Tag         string            `json:"tag"`
					Attributes  map[string]string `json:"attributes"`
					BoundingBox *proxy.Box        `json:"bounding_box"`
				}
				a.readJSON("playwright:///element/"+sid+"/0/"+m[1], &got)
				if got.Ref != m[1] || got.Tag != "button" || got.Attributes["type"] != "submit" ||
					got.BoundingBox == nil || got.BoundingBox.Width <= 0 || got.BoundingBox.Height <= 0 {
					t.Errorf("element resource = %+v", got)
				}
			})

			t.Run("screenshot", func(t *testing.T) {
				contents, err := a.read(shotURI)
				if err != nil || len(contents) != 1 {
					t.Fatalf("read %s = %d contents, %v", shotURI, len(contents), err)
				}
				blob, ok := contents[0].(mcp.BlobResourceContents)
				if !ok || blob.MIMEType != "image/png" {
					t.Fatalf("screenshot = %T, want an image/png blob", contents[0])
				}
				if png, err := base64.StdEncoding.DecodeString(blob.Blob); err != nil || !bytes.HasPrefix(png, []byte("\x89PNG\r\n\x1a\n")) {
					t.Errorf("screenshot blob is not a PNG (%d bytes, %v)", len(png), err)
				}
				// The template of one segment still reads by ref_id.
				if contents, err := a.read("playwright:///screenshot/" + shot.RefID); err != nil || len(contents) != 1 {
					t.Errorf("playwright:///screenshot/{ref_id} = %d contents, %v", len(contents), err)
				}
			})

			t.Run("network-log", func(t *testing.T) {
				var got mcpserver.NetworkLogResource
				a.readJSON(netURI, &got)
				found := false
				for _, e := range got.Entries {
					if e.URL == pages+"/" && e.Method == "GET" && e.ResourceType == "document" && e.Status != nil && *e.Status == 200 &&
						e.Timing != nil && e.Timing.StartTime > 0 {
						found = true
					}
				}
				if !found {
					t.Errorf("network log has no GET %s document 200 with its timing: %+v", pages+"/", got.Entries)
				}
			})

			t.Run("unknown", func(t *testing.T) {
				for _, tc := range []struct{ uri, code string }{
					{"playwright:///page/" + sid + "/7", proxy.EPAGEMISSING},
					{"playwright:///network-log/" + sid + "/7", proxy.EPAGEMISSING},
					{"playwright:///element/" + sid + "/7/e2", proxy.EPAGEMISSING},
					{"playwright:///element/" + sid + "/0/e99999", proxy.EELEMENTMISSING},
					{"playwright:///element/" + sid + "/0/button", proxy.EINVALID},
					{"playwright:///screenshot/" + sid + "/0/1", proxy.EREFMISSING},
					{"playwright:///page/" + sid + "/x", proxy.EINVALID},
				} {
					if _, err := a.read(tc.uri); err == nil || !strings.Contains(err.Error(), tc.code) {
						t.Errorf("read %s = %v, want %s", tc.uri, err, tc.code)
					}
				}
			})

			t.Run("another client", func(t *testing.T) {
				for _, uri := range []string{pageURI, netURI, shotURI, "playwright:///element/" + sid + "/0/e2"} {
					if _, err := b.read(uri); err == nil || !strings.Contains(err.Error(), proxy.ESESSIONMISSING) {
						t.Errorf("the other client read %s: %v, want %s", uri, err, proxy.ESESSIONMISSING)
					}
				}
				if err := b.subscribe(pageURI); err == nil || !strings.Contains(err.Error(), proxy.ESESSIONMISSING) {
					t.Errorf("the other client subscribed to %s: %v, want %s", pageURI, err, proxy.ESESSIONMISSING)
				}
			})

			t.Run("subscription", func(t *testing.T) {
				bpage := "playwright:///page/" + bsid + "/0"
				if err := b.subscribe(bpage); err != nil {
					t.Fatalf("subscribe to its own page: %v", err)
				}
				if err := a.subscribe(pageURI); err != nil {
					t.Fatalf("subscribe: %v", err)
				}
				a.browser("browser_navigate", map[string]any{"url": pages + "/console.html"})
				if got := a.nextUpdate(); got != pageURI {
					t.Errorf("update after the navigation names %s, want %s", got, pageURI)
				}
				if err := a.unsubscribe(pageURI); err != nil {
					t.Fatalf("unsubscribe: %v", err)
				}
				a.browser("browser_navigate", map[string]any{"url": pages + "/index.html"})
				// Subscribed again, a third navigation sends one update: one
				// sent for the second would come before it.
				if err := a.subscribe(pageURI); err != nil {
					t.Fatalf("subscribe again: %v", err)
				}
				a.browser("browser_navigate", map[string]any{"url": pages + "/catalogue.html"})
				if got := a.nextUpdate(); got != pageURI {
					t.Errorf("update after the navigation that followed unsubscribe+subscribe names %s, want %s", got, pageURI)
				}
				var page struct {
					Title string `json:"title"`
				}
				a.readJSON(pageURI, &page)
				if page.Title == "Test Home" || page.Title == "" {
					t.Errorf("page after the navigation is titled %q", page.Title)
				}
				select {
				case uri := <-a.updated:
					t.Errorf("an update beyond the two subscribed navigations: %s", uri)
				default:
				}
				// The other client, subscribed to its own page only, heard
				// nothing of the owner's navigations.
				select {
				case uri := <-b.updated:
					t.Errorf("the other client got an update of %s", uri)
				default:
				}
			})
		})
	}
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
