//go:build unix

package answer

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
)

func sumOf(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func TestIngestDownloads(t *testing.T) {
	csv := []byte("a,b\n1,2\n")
	bin := []byte{0x00, 0x01, 0xfe, 0xff}
	big := make([]byte, 100)
	tests := []struct {
		name  string
		files map[string][]byte
		// downloads lists (page name, file name in the dir) pairs.
		downloads [][2]string
		max       int64
		want      []proxy.Download
		// kept are the files left in the dir afterwards.
		kept []string
	}{
		{"a csv and a binary, described and kept on disk",
			map[string][]byte{"report.csv": csv, "blob.dat": bin},
			[][2]string{{"report.csv", "report.csv"}, {"blob.dat", "blob.dat"}}, 50,
			[]proxy.Download{
				{Name: "report.csv", MimeType: "text/csv; charset=utf-8", Size: int64(len(csv)), SHA256: sumOf(csv), Stored: true, Data: csv},
				{Name: "blob.dat", MimeType: "application/octet-stream", Size: int64(len(bin)), SHA256: sumOf(bin), Stored: true, Data: bin},
			},
			[]string{"blob.dat", "report.csv"}},
		{"the name is the file's on disk, not the page's",
			map[string][]byte{"my-report.csv": csv},
			[][2]string{{"my report.csv", "my-report.csv"}}, 0,
			[]proxy.Download{{Name: "my-report.csv", MimeType: "text/csv; charset=utf-8", Size: int64(len(csv)), SHA256: sumOf(csv), Stored: true, Data: csv}},
			[]string{"my-report.csv"}},
		{"over the limit: described, not kept anywhere",
			map[string][]byte{"big.bin": big, "ok.csv": csv},
			[][2]string{{"big.bin", "big.bin"}, {"ok.csv", "ok.csv"}}, 99,
			[]proxy.Download{
				{Name: "big.bin", MimeType: "application/octet-stream", Size: 100},
				{Name: "ok.csv", MimeType: "text/csv; charset=utf-8", Size: int64(len(csv)), SHA256: sumOf(csv), Stored: true, Data: csv},
			},
			[]string{"ok.csv"}},
		{"at the limit is kept",
			map[string][]byte{"big.bin": big},
			[][2]string{{"big.bin", "big.bin"}}, 100,
			[]proxy.Download{{Name: "big.bin", MimeType: "application/octet-stream", Size: 100, SHA256: sumOf(big), Stored: true, Data: big}},
			[]string{"big.bin"}},
		{"the same file named twice is one download",
			map[string][]byte{"a.csv": csv},
			[][2]string{{"a.csv", "a.csv"}, {"a.csv", "./a.csv"}}, 0,
			[]proxy.Download{{Name: "a.csv", MimeType: "text/csv; charset=utf-8", Size: int64(len(csv)), SHA256: sumOf(csv), Stored: true, Data: csv}},
			[]string{"a.csv"}},
		{"an empty file",
			map[string][]byte{"empty.txt": {}},
			[][2]string{{"empty.txt", "empty.txt"}}, 10,
			[]proxy.Download{{Name: "empty.txt", MimeType: "text/plain; charset=utf-8", SHA256: sumOf(nil), Stored: true, Data: []byte{}}},
			[]string{"empty.txt"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, data := range tt.files {
				if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			p := &Parsed{}
			for _, d := range tt.downloads {
				p.Downloads = append(p.Downloads, ParsedDownload{Name: d[0], Path: filepath.Join(dir, d[1])})
			}
			got, err := IngestDownloads(p, dir, tt.max)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("IngestDownloads (-want +got):\n%s", diff)
			}
			entries, err := os.ReadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			var kept []string
			for _, e := range entries {
				kept = append(kept, e.Name())
			}
			if diff := cmp.Diff(tt.kept, kept); diff != "" {
				t.Errorf("files left (-want +got):\n%s", diff)
			}
		})
	}
}

// A download's path comes from text a page shapes: nothing outside the
// worker's directory is read or removed, and nothing blocks.
func TestIngestDownloadsHostilePaths(t *testing.T) {
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret.csv")
	if err := os.WriteFile(secret, []byte("top,secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		setup func(t *testing.T, dir string) string
	}{
		{"absolute path outside", func(t *testing.T, dir string) string { return secret }},
		{"dot-dot escape", func(t *testing.T, dir string) string {
			rel, _ := filepath.Rel(dir, secret)
			return filepath.Join(dir, "x") + "/../" + rel
		}},
		{"relative dot-dot", func(t *testing.T, dir string) string { return "../../../../../../../etc/passwd" }},
		{"symlink escaping", func(t *testing.T, dir string) string {
			link := filepath.Join(dir, "evil.csv")
			if err := os.Symlink(secret, link); err != nil {
				t.Fatal(err)
			}
			return link
		}},
		{"fifo does not block", func(t *testing.T, dir string) string {
			fifo := filepath.Join(dir, "fifo.csv")
			if err := syscall.Mkfifo(fifo, 0o600); err != nil {
				t.Skipf("mkfifo: %v", err)
			}
			return fifo
		}},
		{"directory", func(t *testing.T, dir string) string {
			sub := filepath.Join(dir, "sub.csv")
			if err := os.Mkdir(sub, 0o700); err != nil {
				t.Fatal(err)
			}
			return sub
		}},
		{"the dir itself", func(t *testing.T, dir string) string { return dir }},
		{"missing file", func(t *testing.T, dir string) string { return filepath.Join(dir, "gone.csv") }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			p := &Parsed{Downloads: []ParsedDownload{{Name: "x.csv", Path: tt.setup(t, dir)}}}
			done := make(chan struct{})
			var got []proxy.Download
			var err error
			go func() {
				defer close(done)
				// A limit of 1 byte would remove a file it reached.
				got, err = IngestDownloads(p, dir, 1)
			}()
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				t.Fatal("IngestDownloads blocked")
			}
			if err == nil || len(got) != 0 {
				t.Errorf("IngestDownloads = %v, %v; want nothing and an error", got, err)
			}
			if b, err := os.ReadFile(secret); err != nil || string(b) != "top,secret\n" {
				t.Errorf("the file outside was touched: %q, %v", b, err)
			}
		})
	}
}
