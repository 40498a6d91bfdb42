package store_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
)

func TestRecordResponseRecordsSessionActivity(t *testing.T) {
	later, earlier := t0.Add(time.Minute), t0.Add(-time.Minute)
	tests := []struct {
		name         string
		act          *proxy.SessionActivity
		wantActivity time.Time
		wantMetadata string
	}{
		{"no activity", nil, t0, ""},
		{"later activity raises last_activity", &proxy.SessionActivity{SessionID: "s", At: later}, later, ""},
		{"earlier activity never lowers it", &proxy.SessionActivity{SessionID: "s", At: earlier}, t0, ""},
		{"metadata replaced", &proxy.SessionActivity{SessionID: "s", At: later, Metadata: json.RawMessage(`{"last_url":"http://127.0.0.1/x"}`)}, later, `{"last_url":"http://127.0.0.1/x"}`},
		// The response is what must not be lost: a session that is gone
		// changes nothing and is no error.
		{"unknown session", &proxy.SessionActivity{SessionID: "gone", At: later}, t0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			db := newDB(t)
			mustSession(t, db, "s")
			mustRequest(t, db, "s", "r")
			resp := &proxy.Response{RefID: "r", Status: proxy.StatusSuccess, Result: `{"content":[]}`, Timestamp: t0}
			if err := db.RecordResponse(ctx, resp, nil, nil, nil, tt.act); err != nil {
				t.Fatalf("RecordResponse: %v", err)
			}
			if _, err := db.GetResponse(ctx, "r"); err != nil {
				t.Errorf("GetResponse after RecordResponse: %v", err)
			}
			s, err := db.GetSession(ctx, "s")
			if err != nil {
				t.Fatal(err)
			}
			if !s.LastActivity.Equal(tt.wantActivity) {
				t.Errorf("last_activity = %v, want %v", s.LastActivity, tt.wantActivity)
			}
			if diff := cmp.Diff(tt.wantMetadata, string(s.Metadata)); diff != "" {
				t.Errorf("metadata (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRecordResponseRefusesBadMetadataAndWritesNothing(t *testing.T) {
	ctx := context.Background()
	db := newDB(t)
	mustSession(t, db, "s")
	mustRequest(t, db, "s", "r")
	resp := &proxy.Response{RefID: "r", Status: proxy.StatusSuccess, Result: `{}`, Timestamp: t0}
	err := db.RecordResponse(ctx, resp, nil, nil, nil, &proxy.SessionActivity{SessionID: "s", At: t0, Metadata: json.RawMessage(`{`)})
	if proxy.ErrorCode(err) != proxy.EINVALID {
		t.Fatalf("RecordResponse with bad metadata: %v, want %s", err, proxy.EINVALID)
	}
	if _, err := db.GetResponse(ctx, "r"); proxy.ErrorCode(err) != proxy.EREFMISSING {
		t.Errorf("a refused RecordResponse left a response: %v", err)
	}
}
