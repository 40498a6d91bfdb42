package store_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
)

func TestListCalls(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	ctx := context.Background()
	mustSession(t, db, "s1")
	mustSession(t, db, "s2")
	req := func(sess, ref string, at time.Time) proxy.Request {
		r := proxy.Request{RefID: ref, SessionID: sess, ToolName: "browser_click", Params: json.RawMessage(`{"ref":"e1"}`), Timestamp: at}
		if err := db.InsertRequest(ctx, &r); err != nil {
			t.Fatal(err)
		}
		return r
	}
	second := req("s1", "b", t0.Add(time.Second))
	first := req("s1", "a", t0)
	req("s2", "other", t0)
	inFlight := req("s1", "c", t0.Add(2*time.Second))
	answer := &proxy.Response{RefID: "a", Status: proxy.StatusSuccess, Result: `{"content":[]}`, PageSnapshot: "- button", Timestamp: t0.Add(time.Millisecond)}
	if err := db.InsertResponse(ctx, answer, nil, nil); err != nil {
		t.Fatal(err)
	}
	failed := &proxy.Response{RefID: "b", Status: proxy.StatusError, ErrorMessage: "gone", ErrorCode: proxy.EUNAVAILABLE, Timestamp: t0.Add(time.Second)}
	if err := db.InsertResponse(ctx, failed, nil, nil); err != nil {
		t.Fatal(err)
	}

	got, err := db.ListCalls(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	want := []proxy.Call{{Request: first, Response: answer}, {Request: second, Response: failed}, {Request: inFlight}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ListCalls (-want +got):\n%s", diff)
	}

	mustSession(t, db, "empty")
	if got, err := db.ListCalls(ctx, "empty"); err != nil || got == nil || len(got) != 0 {
		t.Errorf("ListCalls of a session without calls = %v, %v; want an empty list", got, err)
	}
	_, err = db.ListCalls(ctx, "nope")
	wantCode(t, err, proxy.ESESSIONMISSING)
}

func TestSessionEvents(t *testing.T) {
	t.Parallel()
	db := newDB(t)
	ctx := context.Background()
	mustSession(t, db, "s1")
	evs := []proxy.SessionEvent{
		{SessionID: "s1", At: t0.Add(time.Second), Kind: proxy.EventSuspended, Detail: "idle"},
		{SessionID: "s1", At: t0, Kind: proxy.EventCreated, Detail: "worker 7"},
	}
	for _, e := range evs {
		if err := db.AddSessionEvent(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	got, err := db.ListSessionEvents(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]proxy.SessionEvent{evs[1], evs[0]}, got); diff != "" {
		t.Errorf("ListSessionEvents (-want +got):\n%s", diff)
	}
	if got, err := db.ListSessionEvents(ctx, "nope"); err != nil || got == nil || len(got) != 0 {
		t.Errorf("events of an unknown session = %v, %v; want an empty list", got, err)
	}
	if err := db.AddSessionEvent(ctx, proxy.SessionEvent{SessionID: "nope", At: t0, Kind: proxy.EventClosed}); err == nil {
		t.Error("an event of an unknown session was recorded")
	}
}
