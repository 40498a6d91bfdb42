package store_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/e2etest"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/store"
)

// On a real full disk (a small tmpfs, filled), every kind of write is
// STORAGE_FULL naming the data directory and the database reports itself
// degraded, while what is stored reads as before; once space returns the
// same connection writes again (nothing sticky in SQLite: a failed
// statement or COMMIT left no transaction open), and nothing stored is lost
// across a reopen.
func TestStorageFullOnARealDisk(t *testing.T) {
	ctx := context.Background()
	dir := e2etest.SmallDisk(t, "3m")
	db := openDB(t, filepath.Join(dir, "proxy.db"))
	const sid = "6f1c1d2e-0000-4000-8000-0000000000f1"
	mustSession(t, db, sid)
	mustRequest(t, db, sid, "before")
	mustResponse(t, db, "before", "- heading \"Before\"")

	filler := e2etest.FillDisk(t, dir)
	big := strings.Repeat("- listitem \"row\"\n", 2000) // needs new pages
	writes := []struct {
		name  string
		write func() error
	}{
		{"request", func() error {
			return db.InsertRequest(ctx, &proxy.Request{RefID: "refused", SessionID: sid, ToolName: "browser_click", Timestamp: t0})
		}},
		{"response in a transaction", func() error {
			// The request is small and may fit where the response does not.
			if err := db.InsertRequest(ctx, &proxy.Request{RefID: "refused2", SessionID: sid, ToolName: "browser_click", Timestamp: t0}); err != nil {
				return err
			}
			return db.RecordResponse(ctx, &proxy.Response{RefID: "refused2", Status: proxy.StatusSuccess, PageSnapshot: big, Timestamp: t0}, nil, nil, nil,
				&proxy.SessionActivity{SessionID: sid, At: t0})
		}},
		{"session", func() error {
			return db.CreateSession(ctx, &proxy.Session{ID: "6f1c1d2e-0000-4000-8000-0000000000f2", CreatedAt: t0, LastActivity: t0, State: proxy.SessionActive})
		}},
		{"saved state", func() error {
			state, err := json.Marshal(map[string]string{"big": big})
			if err != nil {
				return err
			}
			return db.SaveSessionState(ctx, sid, state, t0)
		}},
		{"event", func() error {
			return db.AddSessionEvent(ctx, proxy.SessionEvent{SessionID: sid, At: t0, Kind: proxy.EventCreated, Detail: big})
		}},
	}
	for _, w := range writes {
		t.Run(w.name, func(t *testing.T) {
			err := w.write()
			e := proxy.AsError(err)
			if e.Code != proxy.ESTORAGEFULL || e.Retryable {
				t.Fatalf("write on a full disk: %v, want STORAGE_FULL, not retryable", err)
			}
			if e.Details["data_dir"] != dir || !strings.Contains(e.Suggestion, dir) {
				t.Errorf("details %v, suggestion %q: want the data directory %s", e.Details, e.Suggestion, dir)
			}
		})
	}
	if err := db.Ping(ctx); err == nil || !strings.Contains(err.Error(), "full") {
		t.Errorf("Ping on a full disk = %v, want it to say the disk is full", err)
	}
	if resp, err := db.GetResponse(ctx, "before"); err != nil || resp.PageSnapshot != "- heading \"Before\"" {
		t.Errorf("GetResponse on a full disk = %+v, %v", resp, err)
	}

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	for _, w := range writes {
		if err := w.write(); err != nil {
			t.Errorf("%s once space returned: %v", w.name, err)
		}
	}
	if err := db.Ping(ctx); err != nil {
		t.Errorf("Ping once space returned = %v", err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = openDB(t, filepath.Join(dir, "proxy.db"))
	for _, ref := range []string{"before", "refused2"} {
		if _, err := db.GetResponse(ctx, ref); err != nil {
			t.Errorf("GetResponse(%s) after a reopen: %v", ref, err)
		}
	}
}

// A fault set with SetWriteFault is what a full disk is to the rest of the
// server: STORAGE_FULL, Ping degraded; and only the writes it names.
func TestSetWriteFault(t *testing.T) {
	ctx := context.Background()
	db := newDB(t)
	const sid = "6f1c1d2e-0000-4000-8000-0000000000f3"
	mustSession(t, db, sid)
	db.SetWriteFault(func(w store.Write) error {
		if w == store.WriteEvent {
			return os.ErrPermission
		}
		return nil
	})
	err := db.AddSessionEvent(ctx, proxy.SessionEvent{SessionID: sid, At: t0, Kind: proxy.EventCreated})
	wantCode(t, err, proxy.ESTORAGEFULL)
	if err := db.Ping(ctx); err == nil {
		t.Error("Ping = nil after a refused write")
	}
	mustRequest(t, db, sid, "ok")
	if err := db.Ping(ctx); err != nil {
		t.Errorf("Ping after a write that succeeded = %v", err)
	}
	db.SetWriteFault(nil)
	wantCode(t, db.AddSessionEvent(ctx, proxy.SessionEvent{SessionID: sid, At: t0, Kind: proxy.EventCreated}), "")
}
