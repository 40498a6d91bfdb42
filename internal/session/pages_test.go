package session

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/toolset"
)

func TestPageReads(t *testing.T) {
	answer := func(envelope string) json.RawMessage { return programAnswer(t, envelope, "async (page) => {}") }
	owner := proxy.NewClientID("mcp", "owner")
	ctx := proxy.WithClient(context.Background(), owner)
	m, sp, db := newManager(t, Options{})
	var programs []string
	sp.prepare = func(w *fakeWorker) {
		w.answer = func(name string, args json.RawMessage) (json.RawMessage, error) {
			if name != toolset.RunTool {
				return json.RawMessage(snapshotResult), nil
			}
			programs = append(programs, string(args))
			switch {
			case strings.Contains(string(args), "viewportSize"):
				return answer(`{"pwproxy":1,"ok":true,"value":{"pages":[{"index":0,"url":"http://127.0.0.1/x","title":"X s3cret-Value-9","current":true,"viewport":{"width":1280,"height":720},"live":true}]}}`), nil
			case strings.Contains(string(args), "aria-ref="):
				return answer(`{"pwproxy":1,"ok":false,"error":{"code":"PAGE_NOT_FOUND","message":"the session has no page 3 (it has 1, numbered from 0)"}}`), nil
			}
			return answer(`{"pwproxy":1,"ok":true,"value":{"entries":[{"method":"GET","url":"http://127.0.0.1/x","resource_type":"document","status":200,"timing":{"start_time":5,"response_end":7}}]}}`), nil
		}
	}
	s, err := m.CreateSession(ctx)
	if err != nil {
		t.Fatal(err)
	}
	navigate(t, m, s.ID, "http://127.0.0.1/x")
	before, err := db.ListCalls(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}

	// A credential typed through its placeholder is masked in what a
	// read answers, as in a call's answer.
	placeholder, err := m.AddCredential(ctx, "s3cret-Value-9")
	if err != nil {
		t.Fatal(err)
	}
	pages, err := m.Pages(ctx, s.ID)
	want := []proxy.Page{{Index: 0, URL: "http://127.0.0.1/x", Title: "X " + placeholder, Current: true, Viewport: &proxy.Viewport{Width: 1280, Height: 720}, Live: true}}
	if err != nil || !cmp.Equal(want, pages) {
		t.Errorf("Pages = %+v, %v; want (-want +got):\n%s", pages, err, cmp.Diff(want, pages))
	}
	entries, err := m.NetworkLog(ctx, s.ID, 0)
	if err != nil || len(entries) != 1 || entries[0].Status == nil || *entries[0].Status != 200 || entries[0].Timing.ResponseEnd != 7 {
		t.Errorf("NetworkLog = %+v, %v", entries, err)
	}
	if _, err := m.Element(ctx, s.ID, 3, "e2"); proxy.ErrorCode(err) != proxy.EPAGEMISSING {
		t.Errorf("Element of a page the program does not find = %v, want %s", err, proxy.EPAGEMISSING)
	}
	if len(programs) != 3 {
		t.Errorf("programs run = %d, want 3", len(programs))
	}
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"a ref that is not a snapshot ref", func() error { _, err := m.Element(ctx, s.ID, 0, "e1'); alert(1)//"); return err }(), proxy.EINVALID},
		{"another client's pages", func() error {
			_, err := m.Pages(proxy.WithClient(context.Background(), proxy.NewClientID("mcp", "other")), s.ID)
			return err
		}(), proxy.ESESSIONMISSING},
		{"an unknown session", func() error { _, err := m.NetworkLog(ctx, "00000000-0000-4000-8000-000000000000", 0); return err }(), proxy.ESESSIONMISSING},
	} {
		if got := proxy.ErrorCode(tc.err); got != tc.want {
			t.Errorf("%s: %v, want %s", tc.name, tc.err, tc.want)
		}
	}
	if len(programs) != 3 {
		t.Errorf("refused reads ran %d programs", len(programs)-3)
	}
	after, err := db.ListCalls(ctx, s.ID)
	if err != nil || len(after) != len(before) {
		t.Errorf("reads recorded calls: %d before, %d after (%v)", len(before), len(after), err)
	}

	// Suspended: no browser is started; the page comes from the record.
	if !m.trySuspend(ctx, m.reg.get(s.ID), "test") {
		t.Fatal("could not suspend an idle session")
	}
	pages, err = m.Pages(ctx, s.ID)
	want = []proxy.Page{{Index: 0, URL: "http://127.0.0.1/x", Title: "X", Current: true}}
	if diff := cmp.Diff(want, pages); err != nil || diff != "" {
		t.Errorf("Pages of a suspended session = %v (-want +got):\n%s", err, diff)
	}
	if _, err := m.Element(ctx, s.ID, 0, "e1"); proxy.ErrorCode(err) != proxy.EPAGEMISSING {
		t.Errorf("Element of a suspended session = %v, want %s", err, proxy.EPAGEMISSING)
	}
	if _, err := m.NetworkLog(ctx, s.ID, 0); proxy.ErrorCode(err) != proxy.EPAGEMISSING {
		t.Errorf("NetworkLog of a suspended session = %v, want %s", err, proxy.EPAGEMISSING)
	}
	if n := len(sp.all()); n != 1 || stateOf(t, m, s.ID) != proxy.SessionSuspended {
		t.Errorf("reads of a suspended session: %d workers spawned, state %s; want 1, suspended", n, stateOf(t, m, s.ID))
	}
}
