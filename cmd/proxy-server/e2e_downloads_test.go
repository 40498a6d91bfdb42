//go:build unix

package main

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/content"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/mcpserver"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/wire"
)

// downloadSite serves a page that sets a cookie and links three downloads
// (Content-Disposition: attachment): a CSV, a binary file, and one over
// the test's PROXY_MAX_DOWNLOAD_BYTES.
type downloadSite struct {
	URL, cookie    string
	csv, bin, big  []byte
	maxBytes       int
	csvSum, binSum string
	// slow is sent in two halves: the second once release is closed, so
	// the download is still arriving when the click that started it
	// answers.
	slow    []byte
	release chan struct{}
}

func newDownloadSite(t *testing.T) *downloadSite {
	t.Helper()
	d := &downloadSite{
		cookie:   "sid=" + strings.ToLower(rand.Text()[:16]),
		csv:      []byte("name,qty\nwidget,3\ngadget,12\n"),
		maxBytes: 32 << 10,
		slow:     []byte("part,one\n1,2\npart,two\n3,4\n"),
		release:  make(chan struct{}),
	}
	// Every byte value, NULs included: no sniffing takes it for text.
	for i := range 4096 {
		d.bin = append(d.bin, byte(i*7+i/256))
	}
	d.big = make([]byte, 40<<10)
	for i := range d.big {
		d.big[i] = byte(i)
	}
	sum := func(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }
	d.csvSum, d.binSum = sum(d.csv), sum(d.bin)
	name, value, _ := strings.Cut(d.cookie, "=")
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		http.SetCookie(w, &http.Cookie{Name: name, Value: value, Path: "/"})
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, `<!doctype html><title>Files</title>
<a id="csv" href="/files/report.csv">report</a> <a id="bin" href="/files/blob.bin">blob</a> <a id="big" href="/files/big.bin">big</a>
<a id="slow" href="/files/slow.csv">slow</a>`)
	})
	serve := func(typ string, body []byte) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", typ)
			w.Header().Set("Content-Disposition", `attachment; filename="`+filepath.Base(r.URL.Path)+`"`)
			_, _ = w.Write(body)
		}
	}
	mux.HandleFunc("/files/report.csv", serve("text/csv", d.csv))
	mux.HandleFunc("/files/blob.bin", serve("application/octet-stream", d.bin))
	mux.HandleFunc("/files/big.bin", serve("application/octet-stream", d.big))
	mux.HandleFunc("/files/slow.csv", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/csv")
		w.Header().Set("Content-Disposition", `attachment; filename="slow.csv"`)
		w.Header().Set("Content-Length", fmt.Sprint(len(d.slow)))
		half := len(d.slow) / 2
		_, _ = w.Write(d.slow[:half])
		http.NewResponseController(w).Flush()
		select {
		case <-d.release:
			_, _ = w.Write(d.slow[half:])
		case <-r.Context().Done():
		}
	})
	t.Cleanup(func() {
		select {
		case <-d.release:
		default:
			close(d.release)
		}
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	d.URL = srv.URL
	return d
}

// toolAnswer calls a tool and returns its text and whether it is an error
// result.
func (m *mcpClient) toolAnswer(tool string, args map[string]any) (string, bool) {
	m.t.Helper()
	res := m.callResult(tool, args)
	return mcpText(res), res.IsError
}

// getDownload fetches a download over the HTTP API, as the client whose
// identity header is clientID ("" = the operator).
func getDownload(t *testing.T, s *server, ref, name, clientID string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, s.URL+"/content/"+ref+"/downloads/"+name, nil)
	if err != nil {
		t.Fatal(err)
	}
	if clientID != "" {
		req.Header.Set(wire.ClientIDHeader, clientID)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, body
}

// A page's downloads are stored with the click that started them, named in
// its MCP answer, read back over HTTP and through get_content, kept from
// other clients, bounded in size, and leave the session and its cookies as
// they were.
func TestDownloadsStoredWithTheirCall(t *testing.T) {
	site := newDownloadSite(t)
	s := startServer(t, "", map[string]string{"PROXY_MAX_DOWNLOAD_BYTES": fmt.Sprint(site.maxBytes)})
	a := dialMCP(t, s.URL+"/mcp")
	a.browser("browser_navigate", map[string]any{"url": site.URL + "/"})
	id := a.defaultSession()
	before := s.getSession(t, id)

	click := func(target string) mcpserver.Parsed {
		return a.browser("browser_click", map[string]any{"target": target, "element": target + " link"})
	}
	csv := click("#csv")
	bin := click("#bin")
	big := click("#big")

	t.Run("each click's answer names its download and size", func(t *testing.T) {
		for _, tc := range []struct {
			got  mcpserver.Parsed
			want string
		}{
			{csv, "report.csv " + content.FormatSize(int64(len(site.csv)))},
			{bin, "blob.bin " + content.FormatSize(int64(len(site.bin)))},
			{big, "big.bin " + content.FormatSize(int64(len(site.big))) + ", not stored: over PROXY_MAX_DOWNLOAD_BYTES"},
		} {
			if diff := cmp.Diff([]string{tc.want}, tc.got.Downloads); diff != "" {
				t.Errorf("download lines of ref %s (-want +got):\n%s", tc.got.RefID, diff)
			}
		}
	})

	t.Run("GET returns the exact bytes with their type", func(t *testing.T) {
		for _, tc := range []struct {
			ref, name, typ, sum string
			body                []byte
		}{
			{csv.RefID, "report.csv", "text/csv", site.csvSum, site.csv},
			{bin.RefID, "blob.bin", "application/octet-stream", site.binSum, site.bin},
		} {
			resp, body := getDownload(t, s, tc.ref, tc.name, "")
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("GET %s of %s = %d %s", tc.name, tc.ref, resp.StatusCode, body)
			}
			got := sha256.Sum256(body)
			if hex.EncodeToString(got[:]) != tc.sum || resp.Header.Get(wire.DownloadSHA256Header) != tc.sum {
				t.Errorf("%s: sha256 of the body %x, header %s; the site served %s", tc.name, got, resp.Header.Get(wire.DownloadSHA256Header), tc.sum)
			}
			if mt, _, err := mime.ParseMediaType(resp.Header.Get("Content-Type")); err != nil || mt != tc.typ {
				t.Errorf("%s: Content-Type %q, want %s", tc.name, resp.Header.Get("Content-Type"), tc.typ)
			}
			if cd := resp.Header.Get("Content-Disposition"); !strings.HasPrefix(cd, "attachment") {
				t.Errorf("%s: Content-Disposition %q, want an attachment", tc.name, cd)
			}
		}
	})

	t.Run("get_content gives a download's text, and says why not for others", func(t *testing.T) {
		tests := []struct {
			name     string
			args     map[string]any
			wantText string
			wantErr  string
		}{
			{"the csv", map[string]any{"ref_id": csv.RefID, "download": "report.csv"}, string(site.csv), ""},
			{"the binary", map[string]any{"ref_id": bin.RefID, "download": "blob.bin"}, "", proxy.EINVALID},
			{"an unknown name", map[string]any{"ref_id": csv.RefID, "download": "nope.csv"}, "", proxy.EDOWNLOADMISSING},
			{"another call's download", map[string]any{"ref_id": csv.RefID, "download": "blob.bin"}, "", proxy.EDOWNLOADMISSING},
			{"the one over the limit", map[string]any{"ref_id": big.RefID, "download": "big.bin"}, "", proxy.EDOWNLOADMISSING},
			{"a name that climbs", map[string]any{"ref_id": csv.RefID, "download": "../report.csv"}, "", proxy.EINVALID},
			{"a name with a directory", map[string]any{"ref_id": csv.RefID, "download": "x/report.csv"}, "", proxy.EINVALID},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				text, isErr := a.toolAnswer("get_content", tt.args)
				if tt.wantErr == "" {
					if isErr || text != tt.wantText {
						t.Errorf("get_content %v = %q (error %t), want %q", tt.args, text, isErr, tt.wantText)
					}
					return
				}
				if !isErr || !strings.Contains(text, tt.wantErr) {
					t.Errorf("get_content %v = %q (error %t), want error %s", tt.args, text, isErr, tt.wantErr)
				}
			})
		}
	})

	t.Run("GET refuses names that are not a download's", func(t *testing.T) {
		for _, tc := range []struct{ name, code string }{
			{"..%2F..%2Fproxy.db", proxy.EINVALID},
			{"..", proxy.EINVALID},
			{"big.bin", proxy.EDOWNLOADMISSING},
			{"report.csv%00", proxy.EINVALID},
		} {
			ref := csv.RefID
			if tc.name == "big.bin" {
				ref = big.RefID
			}
			resp, body := getDownload(t, s, ref, tc.name, "")
			if errorCodeOf(string(body)) != tc.code {
				t.Errorf("GET %s = %d %s, want %s", tc.name, resp.StatusCode, body, tc.code)
			}
		}
	})

	t.Run("another client cannot read A's download", func(t *testing.T) {
		b := dialMCP(t, s.URL+"/mcp")
		text, isErr := b.toolAnswer("get_content", map[string]any{"ref_id": csv.RefID, "download": "report.csv"})
		if !isErr || !strings.Contains(text, proxy.EREFMISSING) || strings.Contains(text, "widget") {
			t.Errorf("B's get_content of A's download = %q (error %t), want %s", text, isErr, proxy.EREFMISSING)
		}
		resp, body := getDownload(t, s, csv.RefID, "report.csv", strings.ToUpper(rand.Text()))
		if resp.StatusCode != http.StatusNotFound || errorCodeOf(string(body)) != proxy.EREFMISSING {
			t.Errorf("another bridge's GET of A's download = %d %s, want 404 %s", resp.StatusCode, body, proxy.EREFMISSING)
		}
	})

	t.Run("downloads land only in the session's own directory", func(t *testing.T) {
		iso := &isoServer{server: s}
		dir := iso.workerArg(t, id, "--output-dir")
		for name, want := range map[string][]byte{"report.csv": site.csv, "blob.bin": site.bin} {
			if got, err := os.ReadFile(filepath.Join(dir, name)); err != nil || string(got) != string(want) {
				t.Errorf("%s in the session's directory %s: %v", name, dir, err)
			}
		}
		if fileExists(filepath.Join(dir, "big.bin")) {
			t.Errorf("big.bin, over the limit, is still in %s", dir)
		}
		wd, err := os.Getwd()
		if err != nil {
			t.Fatal(err)
		}
		for _, other := range []string{wd, os.TempDir(), filepath.Dir(dir)} {
			entries, _ := os.ReadDir(other)
			for _, e := range entries {
				if slices.Contains([]string{"report.csv", "blob.bin", "big.bin"}, e.Name()) {
					t.Errorf("a download landed in %s: %s", other, e.Name())
				}
			}
		}
	})

	t.Run("the JSON export lists each call's downloads", func(t *testing.T) {
		var rec struct {
			Calls []proxy.Call `json:"calls"`
		}
		if code := do(t, "GET", s.URL+"/sessions/"+id+"/export?format=json", nil, &rec); code != http.StatusOK {
			t.Fatalf("export = %d", code)
		}
		got := map[string][]string{}
		for _, c := range rec.Calls {
			for _, d := range c.Downloads {
				got[c.Request.RefID] = append(got[c.Request.RefID], fmt.Sprintf("%s %d %t %s", d.Name, d.Size, d.Stored, d.SHA256))
			}
		}
		want := map[string][]string{
			csv.RefID: {fmt.Sprintf("report.csv %d true %s", len(site.csv), site.csvSum)},
			bin.RefID: {fmt.Sprintf("blob.bin %d true %s", len(site.bin), site.binSum)},
			big.RefID: {fmt.Sprintf("big.bin %d false ", len(site.big))},
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("downloads in the export (-want +got):\n%s", diff)
		}
	})

	t.Run("a download still arriving is stored with the click that started it", func(t *testing.T) {
		slow := click("#slow")
		if diff := cmp.Diff([]string{"slow.csv started, not finished: stored with this call once a later answer sees it finish"}, slow.Downloads); diff != "" {
			t.Errorf("the click's download line (-want +got):\n%s", diff)
		}
		close(site.release)
		want := fmt.Sprintf("slow.csv %s, stored with ref_id %s (the call that started it)", content.FormatSize(int64(len(site.slow))), slow.RefID)
		// A later answer says the download finished once the worker has
		// it; the bound is on a hang, not a measure.
		var seen []string
		for deadline := time.Now().Add(60 * time.Second); !slices.Contains(seen, want); {
			if time.Now().After(deadline) {
				t.Fatalf("no later answer named %q; they named %q", want, seen)
			}
			seen = append(seen, a.browser("browser_snapshot", nil).Downloads...)
		}
		if got := a.callText("get_content", map[string]any{"ref_id": slow.RefID, "download": "slow.csv"}); got != string(site.slow) {
			t.Errorf("get_content of the click's slow.csv = %q, want %q", got, site.slow)
		}
	})

	t.Run("the session and its cookie survive the downloads", func(t *testing.T) {
		after := s.getSession(t, id)
		if after.State != proxy.SessionActive || after.WorkerPID != before.WorkerPID {
			t.Errorf("session after the downloads: %s, worker %d; before: worker %d", after.State, after.WorkerPID, before.WorkerPID)
		}
		ev := a.browser("browser_evaluate", map[string]any{"function": "() => document.cookie"})
		if got := a.callText("get_content", map[string]any{"ref_id": ev.RefID}); !strings.Contains(got, site.cookie) {
			t.Errorf("document.cookie after the downloads = %q, want it to hold %s", got, site.cookie)
		}
		if got := a.defaultSession(); got != id {
			t.Errorf("default session after the downloads = %s, want %s", got, id)
		}
	})
}
