package mcpserver

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
)

const (
	activeID    = "11111111-1111-4111-8111-111111111111"
	suspendedID = "22222222-2222-4222-8222-222222222222"
	closedID    = "33333333-3333-4333-8333-333333333333"
)

var created = time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)

// resourceBackend has three sessions and a few recorded refs.
func resourceBackend() *fakeBackend {
	return &fakeBackend{
		sessions: []*proxy.Session{
			{ID: activeID, State: proxy.SessionActive, CreatedAt: created, LastActivity: created.Add(time.Minute),
				ExpiresAt: created.Add(31 * time.Minute), Metadata: json.RawMessage(`{"last_url":"http://127.0.0.1/shop","last_title":"Shop"}`)},
			{ID: suspendedID, State: proxy.SessionSuspended, CreatedAt: created, LastActivity: created, Metadata: json.RawMessage(`{}`)},
			{ID: closedID, State: proxy.SessionClosed, CreatedAt: created, LastActivity: created},
		},
		contents: map[string]*proxy.Content{
			"snap": {Text: "- button \"Buy\" [ref=e4]\n", Snapshot: true},
			"shot": {Text: "### Result\nTook the screenshot", Images: []proxy.Image{{MimeType: "image/png", Data: []byte("\x89PNG-1")}, {MimeType: "image/jpeg", Data: []byte("JPEG-2")}}},
		},
		console: map[string]string{"snap": "[ERROR] boom @ http://127.0.0.1/shop:3\n"},
	}
}

func TestResourceTemplatesAndList(t *testing.T) {
	rb := resourceBackend()
	s, err := New(context.Background(), rb, rb, WithLogger(quiet()))
	if err != nil {
		t.Fatal(err)
	}
	c := connect(t, s)
	ctx := context.Background()

	tpls, err := c.ListResourceTemplates(ctx, mcp.ListResourceTemplatesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	type tpl struct{ Name, URI, MIME string }
	var gotTpls []tpl
	for _, x := range tpls.ResourceTemplates {
		gotTpls = append(gotTpls, tpl{x.Name, x.URITemplate.Raw(), x.MIMEType})
		if x.Description == "" {
			t.Errorf("template %s has no description", x.Name)
		}
	}
	wantTpls := []tpl{
		{"console", "playwright:///console/{ref_id}", "text/plain"},
		{"element", "playwright:///element/{session_id}/{page}/{ref}", "application/json"},
		{"network-log", "playwright:///network-log/{session_id}/{page}", "application/json"},
		{"page", "playwright:///page/{session_id}/{page}", "application/json"},
		{"page-screenshot", "playwright:///screenshot/{session_id}/{page}/{timestamp}", ""},
		{"ref", "playwright:///ref/{ref_id}", ""},
		{"screenshot", "playwright:///screenshot/{ref_id}", ""},
		{"session", "playwright:///session/{session_id}", "application/json"},
	}
	if diff := cmp.Diff(wantTpls, gotTpls); diff != "" {
		t.Errorf("resources/templates/list (-want +got):\n%s", diff)
	}

	list, err := c.ListResources(ctx, mcp.ListResourcesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	type res struct{ URI, Name, Title, MIME string }
	var got []res
	for _, r := range list.Resources {
		got = append(got, res{r.URI, r.Name, r.Title, r.MIMEType})
	}
	want := []res{
		{"playwright:///session/" + activeID, "session " + activeID, "Shop", "application/json"},
		{"playwright:///session/" + suspendedID, "session " + suspendedID, "", "application/json"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("resources/list: one resource per session not closed (-want +got):\n%s", diff)
	}
}

// readOut is what a resources/read answered, in comparable form.
type readOut struct {
	MIME, Text, Blob string
}

// readCase is one resources/read and what it must answer.
type readCase struct {
	name, uri string
	want      []readOut
	// wantErr is a text the error must contain ("" for success).
	wantErr string
}

// checkReads reads each case's URI with c, as a subtest.
func checkReads(t *testing.T, c *client.Client, tests []readCase) {
	t.Helper()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := readResource(c, tc.uri)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("read %s = %v, %v; want an error containing %q", tc.uri, got, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("read %s: %v", tc.uri, err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("read %s (-want +got):\n%s", tc.uri, diff)
			}
		})
	}
}

func readResource(c *client.Client, uri string) ([]readOut, error) {
	req := mcp.ReadResourceRequest{}
	req.Params.URI = uri
	res, err := c.ReadResource(context.Background(), req)
	if err != nil {
		return nil, err
	}
	var out []readOut
	for _, rc := range res.Contents {
		switch x := rc.(type) {
		case mcp.TextResourceContents:
			if x.URI != uri {
				return nil, errors.New("contents URI " + x.URI + " is not the one read")
			}
			out = append(out, readOut{MIME: x.MIMEType, Text: x.Text})
		case mcp.BlobResourceContents:
			if x.URI != uri {
				return nil, errors.New("contents URI " + x.URI + " is not the one read")
			}
			out = append(out, readOut{MIME: x.MIMEType, Blob: x.Blob})
		}
	}
	return out, nil
}

func TestReadResources(t *testing.T) {
	b := resourceBackend()
	s, err := New(context.Background(), b, b, WithLogger(quiet()))
	if err != nil {
		t.Fatal(err)
	}
	c := connect(t, s)
	b64 := base64.StdEncoding.EncodeToString
	tests := []readCase{
		{name: "ref snapshot, whole", uri: "playwright:///ref/snap", want: []readOut{{MIME: "application/yaml", Text: "- button \"Buy\" [ref=e4]\n"}}},
		{name: "ref result text", uri: "playwright:///ref/shot", want: []readOut{{MIME: "text/markdown", Text: "### Result\nTook the screenshot"}}},
		{name: "screenshot", uri: "playwright:///screenshot/shot", want: []readOut{{MIME: "image/png", Blob: b64([]byte("\x89PNG-1"))}, {MIME: "image/jpeg", Blob: b64([]byte("JPEG-2"))}}},
		{name: "console", uri: "playwright:///console/snap", want: []readOut{{MIME: "text/plain", Text: "[ERROR] boom @ http://127.0.0.1/shop:3\n"}}},
		{name: "console of a quiet ref", uri: "playwright:///console/shot", want: []readOut{{MIME: "text/plain"}}},
		{name: "unknown ref", uri: "playwright:///ref/nope", wantErr: proxy.EREFMISSING},
		{name: "unknown screenshot ref", uri: "playwright:///screenshot/nope", wantErr: proxy.EREFMISSING},
		{name: "unknown console ref", uri: "playwright:///console/nope", wantErr: proxy.EREFMISSING},
		{name: "ref without image", uri: "playwright:///screenshot/snap", wantErr: proxy.EREFMISSING + ": ref snap recorded no image"},
		{name: "unknown session", uri: "playwright:///session/44444444-4444-4444-8444-444444444444", wantErr: proxy.ESESSIONMISSING},
		{name: "empty id", uri: "playwright:///ref/", wantErr: proxy.EINVALID},
		{name: "escaped slash in id", uri: "playwright:///ref/a%2Fb", wantErr: proxy.EINVALID},
		{name: "space in id", uri: "playwright:///session/a%20b", wantErr: proxy.EINVALID},
		{name: "bad escape", uri: "playwright:///ref/a%zz", wantErr: "not found"},
		{name: "unknown kind", uri: "playwright:///pages/snap", wantErr: "not found"},
		{name: "extra segment", uri: "playwright:///ref/snap/more", wantErr: "not found"},
	}
	checkReads(t, c, tests)
	if b.contentReads != 0 {
		t.Errorf("resource reads made %d get_content reads; they must leave diff cursors alone", b.contentReads)
	}
}

func TestReadSessionResource(t *testing.T) {
	b := resourceBackend()
	s, err := New(context.Background(), b, b, WithLogger(quiet()))
	if err != nil {
		t.Fatal(err)
	}
	c := connect(t, s)
	// A browser call gives this conversation its default session.
	if text, isErr := call(t, c, "browser_navigate", map[string]any{"url": "http://127.0.0.1/"}); isErr {
		t.Fatal(text)
	}
	def := b.created[0]
	tests := []struct {
		id   string
		want map[string]any
	}{
		{activeID, map[string]any{"session_id": activeID, "state": "active", "last_url": "http://127.0.0.1/shop", "last_title": "Shop",
			"created_at": "2026-11-23T10:00:00Z", "last_activity": "2026-11-23T10:01:00Z", "expires_at": "2026-11-23T10:31:00Z"}},
		{closedID, map[string]any{"session_id": closedID, "state": "closed", "created_at": "2026-11-23T10:00:00Z", "last_activity": "2026-11-23T10:00:00Z"}},
		{def, map[string]any{"session_id": def, "state": "active", "created_at": "0001-01-01T00:00:00Z", "last_activity": "0001-01-01T00:00:00Z", "default": true}},
	}
	for _, tc := range tests {
		got, err := readResource(c, "playwright:///session/"+tc.id)
		if err != nil {
			t.Fatalf("read session %s: %v", tc.id, err)
		}
		if len(got) != 1 || got[0].MIME != "application/json" {
			t.Fatalf("read session %s = %+v, want one application/json text", tc.id, got)
		}
		var body map[string]any
		if err := json.Unmarshal([]byte(got[0].Text), &body); err != nil {
			t.Fatalf("session %s: %q is not JSON: %v", tc.id, got[0].Text, err)
		}
		if diff := cmp.Diff(tc.want, body); diff != "" {
			t.Errorf("session %s (-want +got):\n%s", tc.id, diff)
		}
	}
}

// TestResourcesOverHTTP lists sessions through /mcp, where the HTTP handler
// brings its own mcp-go hooks: the list hook must join them, not replace
// them (or be replaced).
func TestResourcesOverHTTP(t *testing.T) {
	b := resourceBackend()
	url := serveHTTP(t, NewHTTPHandler(b, b, HTTPConfig{Logger: quiet()}))
	c := dialHTTP(t, url)
	// /mcp acts for its clients: the sessions listed are this client's.
	b.mu.Lock()
	for _, s := range b.sessions {
		s.Owner = MCPClientID(c.tr.GetSessionId())
	}
	b.mu.Unlock()
	list, err := c.ListResources(context.Background(), mcp.ListResourcesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var uris []string
	for _, r := range list.Resources {
		uris = append(uris, r.URI)
	}
	if diff := cmp.Diff([]string{"playwright:///session/" + activeID, "playwright:///session/" + suspendedID}, uris); diff != "" {
		t.Errorf("resources/list over HTTP (-want +got):\n%s", diff)
	}
	got, err := readResource(c.Client, "playwright:///ref/snap")
	if err != nil || len(got) != 1 || got[0].Text == "" {
		t.Errorf("read over HTTP = %+v, %v", got, err)
	}
	// The HTTP handler's own hook (closing the client's sessions on DELETE)
	// still fires.
	if text, isErr, err := callHTTP(c, "browser_navigate", map[string]any{"url": "http://127.0.0.1/"}); err != nil || isErr {
		t.Fatalf("navigate: %s %v", text, err)
	}
	if err := c.Close(); err != nil { // sends DELETE
		t.Fatal(err)
	}
	if _, closed, _ := b.snapshot(); len(closed) != 3 {
		t.Errorf("after DELETE, closed sessions = %v, want the client's three (its default and the two listed)", closed)
	}
}
