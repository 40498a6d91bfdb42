package content_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/content"
)

func TestDownload(t *testing.T) {
	owner := proxy.NewClientID("bridge", "a")
	fs := newFakeStore()
	fs.setResponse(proxy.Response{RefID: "r", Status: proxy.StatusSuccess})
	fs.owners = map[string]proxy.ClientID{"r": owner}
	csv := proxy.Download{RefID: "r", Name: "report.csv", MimeType: "text/csv; charset=utf-8", Size: 8, SHA256: "ab", Stored: true, Data: []byte("a,b\n1,2\n")}
	fs.downloads = map[string][]proxy.Download{"r": {csv, {RefID: "r", Name: "big.bin", Size: 2_500_000}}}
	svc := content.New(fs)
	mine := proxy.WithClient(context.Background(), owner)
	other := proxy.WithClient(context.Background(), proxy.NewClientID("bridge", "b"))
	tests := []struct {
		name     string
		ctx      context.Context
		ref, dl  string
		want     *proxy.Download
		wantCode string
	}{
		{"its owner reads it", mine, "r", "report.csv", &csv, ""},
		{"the operator reads it", context.Background(), "r", "report.csv", &csv, ""},
		{"another client: as an unknown ref", other, "r", "report.csv", nil, proxy.EREFMISSING},
		{"another client with a bad name: still the name first", other, "r", "../x", nil, proxy.EINVALID},
		{"unknown ref", mine, "nope", "report.csv", nil, proxy.EREFMISSING},
		{"unknown name", mine, "r", "other.csv", nil, proxy.EDOWNLOADMISSING},
		{"not stored", mine, "r", "big.bin", nil, proxy.EDOWNLOADMISSING},
		{"empty name", mine, "r", "", nil, proxy.EINVALID},
		{"a path", mine, "r", "sub/report.csv", nil, proxy.EINVALID},
		{"a windows path", mine, "r", `sub\report.csv`, nil, proxy.EINVALID},
		{"dot-dot", mine, "r", "..", nil, proxy.EINVALID},
		{"a NUL", mine, "r", "report.csv\x00", nil, proxy.EINVALID},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := svc.Download(tt.ctx, tt.ref, tt.dl)
			if code := proxy.ErrorCode(err); code != tt.wantCode {
				t.Fatalf("Download(%s, %q) error = %v, want code %q", tt.ref, tt.dl, err, tt.wantCode)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Download (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDownloadText(t *testing.T) {
	tests := []struct {
		name   string
		data   []byte
		want   string
		isText bool
	}{
		{"csv", []byte("a,b\n1,2\n"), "a,b\n1,2\n", true},
		{"utf-8 text", []byte("prix,€\n"), "prix,€\n", true},
		{"empty", []byte{}, "", true},
		{"a NUL byte", []byte("a,b\x00\n"), "", false},
		{"not utf-8", []byte{0xff, 0xfe, 'a'}, "", false},
		{"a png", []byte("\x89PNG\r\n\x1a\n0000"), "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := content.DownloadText(&proxy.Download{RefID: "r", Name: "f", Data: tt.data})
			if (err == nil) != tt.isText || (err != nil && proxy.ErrorCode(err) != proxy.EINVALID) {
				t.Fatalf("DownloadText = %q, %v; want text: %t", got, err, tt.isText)
			}
			if got != tt.want {
				t.Errorf("DownloadText = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestFormatSize(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 999: "999 B", 1234: "1.2 KB", 999_949: "999.9 KB", 999_950: "1.0 MB", 1_000_000: "1.0 MB", 52_428_800: "52.4 MB"} {
		if got := content.FormatSize(n); got != want {
			t.Errorf("FormatSize(%d) = %q, want %q", n, got, want)
		}
	}
}
