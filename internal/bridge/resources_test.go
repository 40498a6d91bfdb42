package bridge

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
)

// TestResourceAndVaultRequests checks what the client sends for the MCP
// resources and the credential vault, and how it reads the answers.
func TestResourceAndVaultRequests(t *testing.T) {
	const id = "11111111-1111-4111-8111-111111111111"
	tests := []struct {
		name string
		run  func(ctx context.Context, c *Client) (any, error)
		// wantReq is "METHOD path?query body".
		wantReq  string
		status   int
		answer   string
		want     any
		wantCode string
	}{
		{name: "get session", run: func(ctx context.Context, c *Client) (any, error) { return c.GetSession(ctx, id) },
			wantReq: "GET /sessions/" + id + " ", status: 200,
			answer: `{"session_id":"` + id + `","state":"active","created_at":"2026-11-23T10:00:00Z","last_activity":"2026-11-23T10:00:00Z","metadata":{"last_url":"http://x/"}}`,
			want: &proxy.Session{ID: id, State: proxy.SessionActive, CreatedAt: time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC),
				LastActivity: time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC), Metadata: []byte(`{"last_url":"http://x/"}`)}},
		{name: "unknown session", run: func(ctx context.Context, c *Client) (any, error) { return c.GetSession(ctx, "nope") },
			wantReq: "GET /sessions/nope ", status: 404, answer: `{"error":"SESSION_NOT_FOUND","message":"no session","retryable":false}`,
			wantCode: proxy.ESESSIONMISSING},
		{name: "peek", run: func(ctx context.Context, c *Client) (any, error) { return c.Peek(ctx, "r1") },
			wantReq: "GET /content/r1?format=json&peek=true ", status: 200,
			answer: `{"ref_id":"r1","text":"- a\n","unchanged":false,"images":[{"mime_type":"image/png","data":"UE5H"}],"snapshot":true}`,
			want:   &proxy.Content{Text: "- a\n", Snapshot: true, Images: []proxy.Image{{RefID: "r1", MimeType: "image/png", Data: []byte("PNG")}}}},
		{name: "peek unknown ref", run: func(ctx context.Context, c *Client) (any, error) { return c.Peek(ctx, "nope") },
			wantReq: "GET /content/nope?format=json&peek=true ", status: 404, answer: `{"error":"REF_NOT_FOUND","message":"no ref","retryable":false}`,
			wantCode: proxy.EREFMISSING},
		{name: "add credential", run: func(ctx context.Context, c *Client) (any, error) { return c.AddCredential(ctx, `pa"ss✓`) },
			wantReq: `POST /credentials {"value":"pa\"ss✓"}`, status: 201, answer: `{"placeholder":"<secret>cred_0123456789abcdef</secret>"}`,
			want: "<secret>cred_0123456789abcdef</secret>"},
		{name: "credential refused", run: func(ctx context.Context, c *Client) (any, error) { return c.AddCredential(ctx, "abc") },
			wantReq: `POST /credentials {"value":"abc"}`, status: 400, answer: `{"error":"INVALID_PARAMETERS","message":"too short","retryable":false}`,
			wantCode: proxy.EINVALID},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got string
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				body, _ := io.ReadAll(r.Body)
				got = r.Method + " " + r.URL.Path
				if r.URL.RawQuery != "" {
					got += "?" + r.URL.RawQuery
				}
				got += " " + string(body)
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(tc.status)
				io.WriteString(w, tc.answer)
			}))
			defer srv.Close()
			c, err := NewClient(srv.URL, "", WithRetryTimeout(0))
			if err != nil {
				t.Fatal(err)
			}
			res, err := tc.run(t.Context(), c)
			if got != tc.wantReq {
				t.Errorf("request = %q, want %q", got, tc.wantReq)
			}
			if proxy.ErrorCode(err) != tc.wantCode {
				t.Fatalf("error = %v, want code %q", err, tc.wantCode)
			}
			if tc.wantCode != "" {
				return
			}
			if diff := cmp.Diff(tc.want, res); diff != "" {
				t.Errorf("answer (-want +got):\n%s", diff)
			}
		})
	}
}
