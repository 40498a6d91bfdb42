package content_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/content"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/store"
)

// TestRefsOfOtherClientsDoNotExist reads one ref, over the real store, as
// its owner, as the operator and as another client: the other client gets
// from every read exactly what an unknown ref gets, and its reads move no
// cursor.
func TestRefsOfOtherClientsDoNotExist(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(t.TempDir(), "o.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	owner, other := proxy.NewClientID("bridge", "owner"), proxy.NewClientID("mcp", "other")
	now := time.Now().UTC()
	const sid, ref, unknown = "11111111-1111-4111-8111-111111111111", "22222222-2222-4222-8222-222222222222", "33333333-3333-4333-8333-333333333333"
	if err := db.CreateSession(ctx, &proxy.Session{ID: sid, CreatedAt: now, LastActivity: now, State: proxy.SessionActive, Owner: owner}); err != nil {
		t.Fatal(err)
	}
	if err := db.InsertRequest(ctx, &proxy.Request{RefID: ref, SessionID: sid, ToolName: "browser_snapshot", Timestamp: now}); err != nil {
		t.Fatal(err)
	}
	if err := db.InsertResponse(ctx, &proxy.Response{RefID: ref, Status: proxy.StatusSuccess, Result: "{}", PageSnapshot: "- heading \"Secret\" [ref=e1]\n", Timestamp: now},
		[]proxy.ConsoleEntry{{Level: proxy.LevelError, Message: "secret token", Timestamp: now}},
		[]proxy.Image{{MimeType: "image/png", Data: []byte("png")}}); err != nil {
		t.Fatal(err)
	}
	svc := content.New(db)

	// Every read, as one comparable text: its answer or its error.
	reads := func(ctx context.Context, ref string) string {
		show := func(v any, err error) string {
			if err != nil {
				e := proxy.AsError(err)
				return e.Code + " " + e.Message
			}
			switch v := v.(type) {
			case *proxy.Content:
				return v.Text
			case []proxy.Image:
				return string(v[0].Data)
			}
			return v.(string)
		}
		var out []string
		c, err := svc.Peek(ctx, ref)
		out = append(out, "peek: "+show(c, err))
		c, err = svc.Content(ctx, ref, proxy.Query{Text: "Secret"}, false)
		out = append(out, "search: "+show(c, err))
		text, err := svc.Console(ctx, ref, "")
		out = append(out, "console: "+show(text, err))
		images, err := svc.Images(ctx, ref)
		out = append(out, "images: "+show(images, err))
		return strings.Join(out, "\n")
	}
	asOther := proxy.WithClient(ctx, other)
	want := strings.ReplaceAll(reads(asOther, unknown), unknown, ref)
	if !strings.Contains(want, proxy.EREFMISSING) {
		t.Fatalf("an unknown ref reads as:\n%s", want)
	}
	if diff := cmp.Diff(want, reads(asOther, ref)); diff != "" {
		t.Errorf("another client's ref (-as an unknown ref +got):\n%s", diff)
	}
	if cur, err := db.GetCursor(ctx, ref); err != nil || cur != nil {
		t.Errorf("another client's reads left cursor %+v, %v", cur, err)
	}
	wantSeen := "peek: - heading \"Secret\" [ref=e1]\n\nsearch: - heading \"Secret\" [ref=e1]\n\nconsole: [ERROR] secret token\n\nimages: png"
	for name, ctx := range map[string]context.Context{"owner": proxy.WithClient(ctx, owner), "operator": ctx} {
		c, err := svc.Content(ctx, ref, proxy.Query{}, true)
		if err != nil || !strings.Contains(c.Text, "Secret") {
			t.Errorf("%s: get = %+v, %v", name, c, err)
		}
		if got := reads(ctx, ref); !strings.Contains(got, "secret token") || !strings.HasSuffix(got, "images: png") {
			t.Errorf("%s reads:\n%s\nwant like:\n%s", name, got, wantSeen)
		}
	}
}

// TestCallsOfOtherClientsDoNotExist: a session's record is its owner's and
// the operator's; to another client the session does not exist.
func TestCallsOfOtherClientsDoNotExist(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(t.TempDir(), "c.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	owner, other := proxy.NewClientID("bridge", "owner"), proxy.NewClientID("mcp", "other")
	now := time.Now().UTC()
	const sid, ref = "11111111-1111-4111-8111-111111111111", "22222222-2222-4222-8222-222222222222"
	if err := db.CreateSession(ctx, &proxy.Session{ID: sid, CreatedAt: now, LastActivity: now, State: proxy.SessionActive, Owner: owner}); err != nil {
		t.Fatal(err)
	}
	if err := db.InsertRequest(ctx, &proxy.Request{RefID: ref, SessionID: sid, ToolName: "browser_snapshot", Timestamp: now}); err != nil {
		t.Fatal(err)
	}
	svc := content.New(db)
	for name, ctx := range map[string]context.Context{"owner": proxy.WithClient(ctx, owner), "operator": ctx} {
		calls, err := svc.Calls(ctx, sid)
		if err != nil || len(calls) != 1 || calls[0].Request.RefID != ref {
			t.Errorf("%s: Calls = %+v, %v; want the one call", name, calls, err)
		}
	}
	_, err = svc.Calls(proxy.WithClient(ctx, other), sid)
	if proxy.ErrorCode(err) != proxy.ESESSIONMISSING {
		t.Errorf("another client: Calls = %v, want %s", err, proxy.ESESSIONMISSING)
	}
}
