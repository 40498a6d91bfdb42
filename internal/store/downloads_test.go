package store_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
)

// A call's downloads are written with its response, read back described
// (listing) or whole (by name), and one not kept says so without bytes.
func TestDownloadsRoundTrip(t *testing.T) {
	ctx := context.Background()
	db := newDB(t)
	mustSession(t, db, "s")
	mustRequest(t, db, "s", "r")
	downloads := []proxy.Download{
		{RefID: "ignored", Name: "report.csv", MimeType: "text/csv; charset=utf-8", Size: 8, SHA256: "ab", Stored: true, Data: []byte("a,b\n1,2\n")},
		{Name: "big.bin", MimeType: "application/octet-stream", Size: 1 << 30},
		{Name: "empty.txt", MimeType: "text/plain; charset=utf-8", SHA256: "e3", Stored: true},
	}
	resp := &proxy.Response{RefID: "r", Status: proxy.StatusSuccess, Timestamp: t0}
	if err := db.RecordResponse(ctx, resp, nil, nil, downloads, nil); err != nil {
		t.Fatal(err)
	}
	list, err := db.ListDownloads(ctx, "r")
	if err != nil {
		t.Fatal(err)
	}
	want := []proxy.Download{
		{RefID: "r", Name: "report.csv", MimeType: "text/csv; charset=utf-8", Size: 8, SHA256: "ab", Stored: true},
		{RefID: "r", Name: "big.bin", MimeType: "application/octet-stream", Size: 1 << 30},
		{RefID: "r", Name: "empty.txt", MimeType: "text/plain; charset=utf-8", SHA256: "e3", Stored: true},
	}
	if diff := cmp.Diff(want, list); diff != "" {
		t.Errorf("ListDownloads (-want +got):\n%s", diff)
	}
	tests := []struct {
		name    string
		want    *proxy.Download
		wantErr string
	}{
		{"report.csv", &proxy.Download{RefID: "r", Name: "report.csv", MimeType: "text/csv; charset=utf-8", Size: 8, SHA256: "ab", Stored: true, Data: []byte("a,b\n1,2\n")}, ""},
		{"big.bin", &proxy.Download{RefID: "r", Name: "big.bin", MimeType: "application/octet-stream", Size: 1 << 30}, ""},
		{"empty.txt", &proxy.Download{RefID: "r", Name: "empty.txt", MimeType: "text/plain; charset=utf-8", SHA256: "e3", Stored: true, Data: []byte{}}, ""},
		{"REPORT.CSV", nil, proxy.EDOWNLOADMISSING},
		{"", nil, proxy.EDOWNLOADMISSING},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := db.GetDownload(ctx, "r", tt.name)
			if tt.wantErr != "" {
				wantCode(t, err, tt.wantErr)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("GetDownload (-want +got):\n%s", diff)
			}
		})
	}
	mustRequest(t, db, "s", "r2")
	calls, err := db.ListCalls(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]proxy.Download{}
	for _, c := range calls {
		got[c.Request.RefID] = c.Downloads
	}
	if diff := cmp.Diff(map[string][]proxy.Download{"r": want, "r2": nil}, got); diff != "" {
		t.Errorf("ListCalls' downloads (-want +got):\n%s", diff)
	}
	if list, err := db.ListDownloads(ctx, "other"); err != nil || list == nil || len(list) != 0 {
		t.Errorf("ListDownloads of a ref without any = %v, %v; want empty", list, err)
	}
}

// Downloads that could not be told apart are refused before anything is
// written: the response stays unrecorded and the call can be recorded again.
func TestRecordResponseRefusesBadDownloads(t *testing.T) {
	tests := []struct {
		name      string
		downloads []proxy.Download
	}{
		{"a name twice", []proxy.Download{{Name: "a.csv", MimeType: "text/csv"}, {Name: "a.csv", MimeType: "text/csv"}}},
		{"no name", []proxy.Download{{MimeType: "text/csv"}}},
		{"negative size", []proxy.Download{{Name: "a.csv", Size: -1}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			db := newDB(t)
			mustSession(t, db, "s")
			mustRequest(t, db, "s", "r")
			resp := &proxy.Response{RefID: "r", Status: proxy.StatusSuccess, Timestamp: t0}
			wantCode(t, db.RecordResponse(ctx, resp, nil, nil, tt.downloads, nil), proxy.EINVALID)
			if _, err := db.GetResponse(ctx, "r"); proxy.ErrorCode(err) != proxy.EREFMISSING {
				t.Errorf("GetResponse after a refused record = %v, want it still in flight", err)
			}
			if err := db.RecordResponse(ctx, resp, nil, nil, nil, nil); err != nil {
				t.Errorf("recording the response again: %v", err)
			}
		})
	}
}

// A download that finished after the call that started it answered is
// stored with that call; when that call cannot take it (no response row,
// or a download of that name already), with the call that saw it finish.
func TestLateDownloadStoredWithTheCallThatStartedIt(t *testing.T) {
	ctx := context.Background()
	db := newDB(t)
	mustSession(t, db, "s")
	mustRequest(t, db, "s", "click")
	if err := db.RecordResponse(ctx, &proxy.Response{RefID: "click", Status: proxy.StatusSuccess, Timestamp: t0}, nil, nil,
		[]proxy.Download{{Name: "twice.csv", MimeType: "text/csv", Size: 1, Stored: true, Data: []byte("1")}}, nil); err != nil {
		t.Fatal(err)
	}
	mustRequest(t, db, "s", "in-flight")
	mustRequest(t, db, "s", "next")
	late := []proxy.Download{
		{RefID: "click", Name: "slow.csv", MimeType: "text/csv", Size: 1, Stored: true, Data: []byte("s")},
		{RefID: "click", Name: "twice.csv", MimeType: "text/csv", Size: 1, Stored: true, Data: []byte("2")},
		{RefID: "in-flight", Name: "orphan.csv", MimeType: "text/csv", Size: 1, Stored: true, Data: []byte("o")},
		{Name: "own.csv", MimeType: "text/csv", Size: 1, Stored: true, Data: []byte("n")},
	}
	if err := db.RecordResponse(ctx, &proxy.Response{RefID: "next", Status: proxy.StatusSuccess, Timestamp: t0}, nil, nil, late, nil); err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for _, ref := range []string{"click", "next", "in-flight"} {
		list, err := db.ListDownloads(ctx, ref)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range list {
			full, err := db.GetDownload(ctx, ref, d.Name)
			if err != nil {
				t.Fatal(err)
			}
			got[ref] = append(got[ref], d.Name+"="+string(full.Data))
		}
	}
	want := map[string][]string{"click": {"twice.csv=1", "slow.csv=s"}, "next": {"twice.csv=2", "orphan.csv=o", "own.csv=n"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("downloads by ref (-want +got):\n%s", diff)
	}
}
