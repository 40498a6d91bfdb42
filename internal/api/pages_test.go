package api

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/wire"
)

// fakePages is fakeSessions that reads pages: knownID has one page.
type fakePages struct{ fakeSessions }

func (f *fakePages) Pages(ctx context.Context, id string) ([]proxy.Page, error) {
	if _, err := f.GetSession(ctx, id); err != nil {
		return nil, err
	}
	return []proxy.Page{{Index: 0, URL: "http://127.0.0.1/", Title: "Home", Current: true, Viewport: &proxy.Viewport{Width: 800, Height: 600}, Live: true}}, nil
}

func (f *fakePages) page(ctx context.Context, id string, page int) error {
	if _, err := f.GetSession(ctx, id); err != nil {
		return err
	}
	if page != 0 {
		return proxy.Errorf(proxy.EPAGEMISSING, "no page %d", page)
	}
	return nil
}

func (f *fakePages) Element(ctx context.Context, id string, page int, ref string) (*proxy.Element, error) {
	if err := f.page(ctx, id, page); err != nil {
		return nil, err
	}
	if ref != "e3" {
		return nil, proxy.Errorf(proxy.EELEMENTMISSING, "no ref %s", ref)
	}
	return &proxy.Element{Ref: ref, Tag: "a", Attributes: map[string]string{"href": "/x"}}, nil
}

func (f *fakePages) NetworkLog(ctx context.Context, id string, page int) ([]proxy.NetworkEntry, error) {
	if err := f.page(ctx, id, page); err != nil {
		return nil, err
	}
	return []proxy.NetworkEntry{{Method: "GET", URL: "http://127.0.0.1/", ResourceType: "document"}}, nil
}

func TestPageEndpoints(t *testing.T) {
	srv := New(&fakePages{}, fakeContent{})
	tests := []struct {
		name, path string
		code       int
		want       string // the body, or the error code
	}{
		{"pages", "/sessions/" + knownID + "/pages", 200, `{"pages":[{"index":0,"url":"http://127.0.0.1/","title":"Home","current":true,"viewport":{"width":800,"height":600},"live":true}]}`},
		{"element", "/sessions/" + knownID + "/pages/0/elements/e3", 200, `{"ref":"e3","tag":"a","attributes":{"href":"/x"},"bounding_box":null}`},
		{"network", "/sessions/" + knownID + "/pages/0/network", 200, `{"entries":[{"method":"GET","url":"http://127.0.0.1/","resource_type":"document","status":null,"timing":null}]}`},
		{"unknown session", "/sessions/nope/pages", 404, proxy.ESESSIONMISSING},
		{"unknown page", "/sessions/" + knownID + "/pages/4/network", 404, proxy.EPAGEMISSING},
		{"unknown ref", "/sessions/" + knownID + "/pages/0/elements/e9", 422, proxy.EELEMENTMISSING},
		{"negative page", "/sessions/" + knownID + "/pages/-1/network", 400, proxy.EINVALID},
		{"page not a number", "/sessions/" + knownID + "/pages/first/elements/e3", 400, proxy.EINVALID},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			srv.ServeHTTP(rec, newRequest("GET", tc.path, nil))
			if rec.Code != tc.code {
				t.Fatalf("GET %s = %d %s, want %d", tc.path, rec.Code, rec.Body.String(), tc.code)
			}
			if tc.code == 200 {
				if diff := cmp.Diff(tc.want+"\n", rec.Body.String()); diff != "" {
					t.Errorf("GET %s (-want +got):\n%s", tc.path, diff)
				}
				return
			}
			var body wire.ErrorBody
			if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || body.Error != tc.want {
				t.Errorf("GET %s = %s, want %s", tc.path, rec.Body.String(), tc.want)
			}
		})
	}
	// A backend that reads no pages answers as for an endpoint that does
	// not exist.
	rec := httptest.NewRecorder()
	New(&fakeSessions{}, fakeContent{}).ServeHTTP(rec, newRequest("GET", "/sessions/"+knownID+"/pages", nil))
	if rec.Code != 404 || !json.Valid(rec.Body.Bytes()) {
		t.Errorf("pages without a page service = %d %s, want 404", rec.Code, rec.Body.String())
	}
}
