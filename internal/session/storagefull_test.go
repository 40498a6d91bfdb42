package session

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/store"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/toolset"
)

var errDiskFull = errors.New("the database or its disk is full")

// failAll fails every write, as a full disk does.
func failAll(store.Write) error { return errDiskFull }

// A call the record cannot hold is refused before its worker sees it, with
// STORAGE_FULL naming the data directory; the database reports itself
// degraded; and once writes work again so do calls, with nothing recorded
// for the refused ones.
func TestCallRefusedWhileRecordCannotBeWritten(t *testing.T) {
	ctx := context.Background()
	m, sp, db := newManager(t, Options{})
	s, err := m.CreateSession(ctx)
	if err != nil {
		t.Fatal(err)
	}
	first, err := m.Call(ctx, proxy.CallRequest{SessionID: s.ID, Tool: "browser_navigate", Params: []byte(`{"url":"http://127.0.0.1/a"}`)})
	if err != nil {
		t.Fatal(err)
	}
	w := sp.all()[0]
	callsBefore := w.calls.Load()

	db.SetWriteFault(failAll)
	for _, tc := range []struct {
		name string
		req  proxy.CallRequest
	}{
		{"our ref", proxy.CallRequest{SessionID: s.ID, Tool: "browser_navigate", Params: []byte(`{"url":"http://127.0.0.1/b"}`)}},
		{"caller's ref", proxy.CallRequest{SessionID: s.ID, Tool: "browser_click", Params: []byte(`{"ref":"e1"}`), RequestID: "0b5d5a62-8d3e-4a51-9a57-2d4f3b1c0a12"}},
		{"read-only tool", proxy.CallRequest{SessionID: s.ID, Tool: "browser_snapshot"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := m.Call(ctx, tc.req)
			if res != nil {
				t.Errorf("Call = %+v, want no result", res)
			}
			e := proxy.AsError(err)
			if e.Code != proxy.ESTORAGEFULL || e.Retryable {
				t.Fatalf("Call: %v (retryable %v), want STORAGE_FULL, not retryable", err, e.Retryable)
			}
			if dir, _ := e.Details["data_dir"].(string); dir == "" || e.Details["session_id"] != s.ID {
				t.Errorf("details = %v, want data_dir and session_id", e.Details)
			}
			if got := w.calls.Load(); got != callsBefore {
				t.Errorf("the worker saw %d calls after the record failed, want none", got-callsBefore)
			}
			if tc.req.RequestID != "" {
				if _, err := db.GetRequest(ctx, tc.req.RequestID); proxy.ErrorCode(err) != proxy.EREFMISSING {
					t.Errorf("GetRequest of the refused call: %v, want REF_NOT_FOUND", err)
				}
			}
		})
	}
	w.mu.Lock()
	url := w.url
	w.mu.Unlock()
	if url != "http://127.0.0.1/a" {
		t.Errorf("the browser is at %q, want the page before the refused navigation", url)
	}
	if err := db.Ping(ctx); err == nil {
		t.Error("Ping = nil while writes fail, want the database degraded")
	}
	// What was stored is still read.
	if resp, err := db.GetResponse(ctx, first.RefID); err != nil || resp.Status != proxy.StatusSuccess {
		t.Errorf("GetResponse of the call before = %+v, %v", resp, err)
	}

	db.SetWriteFault(nil)
	res, err := m.Call(ctx, proxy.CallRequest{SessionID: s.ID, Tool: "browser_navigate", Params: []byte(`{"url":"http://127.0.0.1/c"}`)})
	if err != nil || res.Status != proxy.StatusSuccess || res.NotRecorded {
		t.Fatalf("Call once writes work = %+v, %v", res, err)
	}
	if err := db.Ping(ctx); err != nil {
		t.Errorf("Ping once writes work = %v", err)
	}
	calls, err := db.ListCalls(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	var tools []string
	for _, c := range calls {
		tools = append(tools, c.Request.ToolName)
	}
	if diff := cmp.Diff([]string{"browser_navigate", "browser_navigate"}, tools); diff != "" {
		t.Errorf("recorded calls (-want +got):\n%s", diff)
	}
}

// A call whose request was recorded but whose answer the disk could not
// take ran in the browser: its caller gets its result, marked not
// recorded, never an error that would make it send the call again. The
// record says what it can: a short row that the call ran, or, when not
// even that fits, the request alone.
func TestCallAnswerNotRecorded(t *testing.T) {
	for _, tc := range []struct {
		name  string
		fails int32 // response writes that fail: the answer, then the short row
		want  string
	}{
		{"a note fits", 1, proxy.ESTORAGEFULL},
		{"nothing fits", 2, proxy.EREFMISSING},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			m, sp, db := newManager(t, Options{})
			s, err := m.CreateSession(ctx)
			if err != nil {
				t.Fatal(err)
			}
			var failed atomic.Int32
			db.SetWriteFault(func(w store.Write) error {
				if w == store.WriteResponse && failed.Add(1) <= tc.fails {
					return errDiskFull
				}
				return nil
			})
			res, err := m.Call(ctx, proxy.CallRequest{SessionID: s.ID, Tool: "browser_click", Params: []byte(`{"ref":"e1"}`)})
			if err != nil {
				t.Fatalf("Call: %v, want the result of the call that ran", err)
			}
			if res.Status != proxy.StatusSuccess || !res.NotRecorded || res.Warning == "" {
				t.Errorf("Call = status %s, not_recorded %v, warning %q; want success, not recorded, a warning", res.Status, res.NotRecorded, res.Warning)
			}
			if n := sp.all()[0].calls.Load(); n != 1 {
				t.Errorf("worker calls = %d, want 1", n)
			}
			if _, err := db.GetRequest(ctx, res.RefID); err != nil {
				t.Errorf("GetRequest: %v, want the request recorded before the call", err)
			}
			resp, err := db.GetResponse(ctx, res.RefID)
			switch tc.want {
			case proxy.ESTORAGEFULL:
				if err != nil || resp.ErrorCode != proxy.ESTORAGEFULL || resp.Result != "" {
					t.Errorf("GetResponse = %+v, %v; want a short STORAGE_FULL row", resp, err)
				}
			default:
				if proxy.ErrorCode(err) != tc.want {
					t.Errorf("GetResponse: %v, want %s (in flight)", err, tc.want)
				}
			}
			db.SetWriteFault(nil)
			if res, err := m.Call(ctx, proxy.CallRequest{SessionID: s.ID, Tool: "browser_snapshot"}); err != nil || res.NotRecorded {
				t.Errorf("the next call = %+v, %v", res, err)
			}
		})
	}
}

// The writes around calls (session events, state saves, session states)
// failing wedge nothing: a session is created only if it can be recorded,
// a close the record cannot take is refused and can be made later, and a
// session idle while the disk is full is still suspended and revived.
func TestOtherWritesFailingWedgeNothing(t *testing.T) {
	ctx := context.Background()
	m, sp, db := newManager(t, Options{})
	s, err := m.CreateSession(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Call(ctx, proxy.CallRequest{SessionID: s.ID, Tool: "browser_navigate", Params: []byte(`{"url":"http://127.0.0.1/a"}`)}); err != nil {
		t.Fatal(err)
	}
	db.SetWriteFault(func(w store.Write) error {
		if w == store.WriteRequest || w == store.WriteResponse {
			return nil
		}
		return errDiskFull
	})
	if _, err := m.CreateSession(ctx); proxy.ErrorCode(err) != proxy.ESTORAGEFULL {
		t.Errorf("CreateSession: %v, want STORAGE_FULL", err)
	}
	if err := m.CloseSession(ctx, s.ID); proxy.ErrorCode(err) != proxy.ESTORAGEFULL {
		t.Errorf("CloseSession: %v, want STORAGE_FULL", err)
	}
	// Calls still work, their state saves and events failing behind them.
	for range 3 {
		if _, err := m.Call(ctx, proxy.CallRequest{SessionID: s.ID, Tool: "browser_click", Params: []byte(`{"ref":"e1"}`)}); err != nil {
			t.Fatalf("Call with only the other writes failing: %v", err)
		}
	}
	// Suspended while its state cannot be recorded, then revived.
	if l := m.reg.get(s.ID); l == nil || !m.trySuspend(ctx, l, "test") {
		t.Fatal("the session could not be suspended")
	}
	res, err := m.Call(ctx, proxy.CallRequest{SessionID: s.ID, Tool: "browser_snapshot"})
	if err != nil || !res.Metadata.Restored {
		t.Fatalf("Call after the suspension = %+v, %v; want it revived", res, err)
	}
	if n := len(sp.all()); n != 2 {
		t.Errorf("workers = %d, want the first and the one it was revived in", n)
	}
	db.SetWriteFault(nil)
	if err := m.CloseSession(ctx, s.ID); err != nil {
		t.Errorf("CloseSession once writes work: %v", err)
	}
}

// The proxy's own tools (programs upstream runs) follow the same order: a
// program the record cannot hold is never sent.
func TestOwnToolRefusedWhileRecordCannotBeWritten(t *testing.T) {
	w := runnerWorker{newFakeWorker(t)}
	db := propDB(t)
	m := New(db, SpawnFunc(func(context.Context) (Worker, error) { return w, nil }), Options{Logger: slog.New(slog.DiscardHandler)})
	t.Cleanup(func() { m.Shutdown(context.Background()) })
	ctx := toolset.WithSelection(context.Background(), mustSelect(t, "upstream", "navigation"))
	s, err := m.CreateSession(ctx)
	if err != nil {
		t.Fatal(err)
	}
	db.SetWriteFault(failAll)
	before := w.calls.Load()
	_, err = m.Call(ctx, proxy.CallRequest{SessionID: s.ID, Tool: "navigate", Params: []byte(`{"url":"http://127.0.0.1/b"}`)})
	if proxy.ErrorCode(err) != proxy.ESTORAGEFULL {
		t.Fatalf("navigate on a full disk: %v, want STORAGE_FULL", err)
	}
	if w.calls.Load() != before {
		t.Error("the program reached the worker though the record could not hold it")
	}
	db.SetWriteFault(nil)
	if _, err := m.Call(ctx, proxy.CallRequest{SessionID: s.ID, Tool: "navigate", Params: []byte(`{"url":"http://127.0.0.1/b"}`)}); err != nil {
		t.Fatalf("navigate once writes work: %v", err)
	}
	if w.calls.Load() != before+1 {
		t.Errorf("worker calls = %d once writes work, want %d", w.calls.Load(), before+1)
	}
}

func mustSelect(t *testing.T, groups ...string) toolset.Selection {
	t.Helper()
	sel, err := toolset.Select(groups)
	if err != nil {
		t.Fatal(err)
	}
	return sel
}
