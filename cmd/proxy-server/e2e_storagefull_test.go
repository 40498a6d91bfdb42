//go:build unix

package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/e2etest"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/wire"
)

// hitSite serves a small page per path and counts the browser's requests
// of each.
type hitSite struct {
	URL  string
	mu   sync.Mutex
	hits map[string]int
}

func newHitSite(t *testing.T, page func(w io.Writer, name string)) *hitSite {
	t.Helper()
	h := &hitSite{hits: map[string]int{}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.mu.Lock()
		h.hits[r.URL.Path]++
		h.mu.Unlock()
		if r.URL.Path == "/favicon.ico" {
			http.NotFound(w, r)
			return
		}
		page(w, strings.TrimPrefix(r.URL.Path, "/"))
	}))
	t.Cleanup(srv.Close)
	h.URL = srv.URL
	return h
}

// smallPage is a title, a heading and a button.
func smallPage(w io.Writer, name string) {
	fmt.Fprintf(w, "<!doctype html><title>Page %s</title><h1>Page %s</h1><button>Order %s</button>", name, name, name)
}

// heavyPage is a list of rows whose snapshot is some 100 KB.
func heavyPage(w io.Writer, name string) {
	fmt.Fprintf(w, "<!doctype html><title>%s</title><ul>", name)
	for j := range 3000 {
		fmt.Fprintf(w, "<li>row %d of %s</li>", j, name)
	}
	fmt.Fprint(w, "</ul>")
}

func (h *hitSite) count(path string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.hits[path]
}

// With the database's disk full, a call is refused with STORAGE_FULL (507)
// before anything happens in the browser: the navigation never reaches the
// site and the page stays where it was. /health says the database is
// degraded, what was stored reads as before, and once the space is freed
// calls work again without a restart, with nothing stored before lost.
func TestStorageFullRefusesCallsBeforeTheBrowser(t *testing.T) {
	requireBrowser(t)
	dir := e2etest.SmallDisk(t, "3m")
	s := startServer(t, filepath.Join(dir, "proxy.db"), nil)
	site := newHitSite(t, smallPage)
	sid := s.createSession(t)
	before := s.call(t, sid, "browser_navigate", map[string]any{"url": site.URL + "/a"})
	if before.Status != proxy.StatusSuccess || before.Metadata.PageURL != site.URL+"/a" {
		t.Fatalf("navigate to /a = %+v", before)
	}

	filler := e2etest.FillDisk(t, dir)
	refused := []struct {
		tool   string
		params map[string]any
	}{
		{"browser_navigate", map[string]any{"url": site.URL + "/b"}},
		{"browser_navigate", map[string]any{"url": site.URL + "/b"}}, // the agent retries
		{"browser_snapshot", map[string]any{}},
	}
	for i, c := range refused {
		t.Run(fmt.Sprintf("%d_%s", i, c.tool), func(t *testing.T) {
			var e wire.ErrorBody
			code := do(t, "POST", s.URL+"/call", map[string]any{"session_id": sid, "tool": c.tool, "params": c.params}, &e)
			if code != http.StatusInsufficientStorage || e.Error != proxy.ESTORAGEFULL || e.Retryable {
				t.Fatalf("call on a full disk = %d %+v, want 507 STORAGE_FULL, not retryable", code, e)
			}
			if !strings.Contains(e.Suggestion, dir) || e.Details["data_dir"] != dir {
				t.Errorf("suggestion %q, details %v: want the data directory %s", e.Suggestion, e.Details, dir)
			}
		})
	}
	if n := site.count("/b"); n != 0 {
		t.Errorf("the browser requested /b %d times, want never: a refused call must not run", n)
	}

	var h struct {
		Status string            `json:"status"`
		Checks map[string]string `json:"checks"`
	}
	if code := do(t, "GET", s.URL+"/health", nil, &h); code != http.StatusServiceUnavailable || !strings.Contains(h.Checks["database"], "full") {
		t.Errorf("/health on a full disk = %d %+v, want 503 with the database full", code, h)
	}
	// Reads of what is stored still work, the diff cursor's write failing
	// behind them.
	if text := s.content(t, before.RefID, ""); !strings.Contains(text, "Order a") {
		t.Errorf("GET /content of the call before, on a full disk = %q", text)
	}
	var console string
	if code := do(t, "GET", s.URL+"/console/"+before.RefID, nil, &console); code != http.StatusOK {
		t.Errorf("GET /console on a full disk = %d: %s", code, console)
	}

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	// No restart: the same server answers, and the page is still /a.
	snap := s.call(t, sid, "browser_snapshot", map[string]any{})
	if snap.Status != proxy.StatusSuccess || snap.NotRecorded || snap.Metadata.PageURL != site.URL+"/a" {
		t.Errorf("snapshot once space returned = %+v, want the page still at /a", snap)
	}
	after := s.call(t, sid, "browser_navigate", map[string]any{"url": site.URL + "/c"})
	if after.Status != proxy.StatusSuccess || after.Metadata.PageURL != site.URL+"/c" || site.count("/c") != 1 {
		t.Errorf("navigate to /c once space returned = %+v (site saw /c %d times)", after, site.count("/c"))
	}
	if code := do(t, "GET", s.URL+"/health", nil, &h); h.Checks["database"] != "ok" {
		t.Errorf("/health once space returned = %d %+v, want the database ok", code, h)
	}
	if text := s.content(t, before.RefID, "?reset_cursor=true"); !strings.Contains(text, "Order a") {
		t.Errorf("GET /content of the call before, once space returned = %q", text)
	}
	var calls struct {
		Calls []struct {
			Request proxy.Request `json:"request"`
		} `json:"calls"`
	}
	if code := do(t, "GET", s.URL+"/sessions/"+sid+"/export?format=json", nil, &calls); code != http.StatusOK {
		t.Fatalf("export = %d", code)
	}
	var tools []string
	for _, c := range calls.Calls {
		tools = append(tools, c.Request.ToolName)
	}
	if got, want := strings.Join(tools, ","), "browser_navigate,browser_snapshot,browser_navigate"; got != want {
		t.Errorf("recorded calls = %s, want %s (the refused ones absent)", got, want)
	}
}

// Heavy pages fill the disk on their own. Whatever the moment space runs
// out, nothing happens unreported: a call answered 507 STORAGE_FULL never
// reached the site; a call that reached it answers its result, recorded or
// marked not recorded; none answers 500. Freeing space (a reserve file)
// brings calls back without a restart, the page where the last call that
// ran left it.
func TestStorageFullFromHeavyPages(t *testing.T) {
	requireBrowser(t)
	dir := e2etest.SmallDisk(t, "3m")
	reserve := filepath.Join(dir, "reserve")
	if err := os.WriteFile(reserve, make([]byte, 1536<<10), 0o600); err != nil {
		t.Fatal(err)
	}
	s := startServer(t, filepath.Join(dir, "proxy.db"), nil)
	site := newHitSite(t, heavyPage)
	sid := s.createSession(t)

	lastRan, ran, notRecorded, refused := "", 0, 0, 0
	for i := 0; i < 60 && refused < 3; i++ {
		path := fmt.Sprintf("/heavy-%d", i)
		var raw string
		code := do(t, "POST", s.URL+"/call", map[string]any{"session_id": sid, "tool": "browser_navigate", "params": map[string]any{"url": site.URL + path}}, &raw)
		switch code {
		case http.StatusOK:
			var res proxy.CallResult
			if err := json.Unmarshal([]byte(raw), &res); err != nil {
				t.Fatal(err)
			}
			if site.count(path) != 1 {
				t.Errorf("call %d answered 200 but the site saw %s %d times", i, path, site.count(path))
			}
			if res.NotRecorded != (res.Warning != "") {
				t.Errorf("call %d: not_recorded %v with warning %q", i, res.NotRecorded, res.Warning)
			}
			ran++
			if res.NotRecorded {
				notRecorded++
			} else {
				if text := s.content(t, res.RefID, "?reset_cursor=true"); !strings.Contains(text, "row 2999 of "+path[1:]) {
					t.Errorf("call %d recorded, but its content reads %d bytes without its last row", i, len(text))
				}
			}
			lastRan = path
		case http.StatusInsufficientStorage:
			var e wire.ErrorBody
			if err := json.Unmarshal([]byte(raw), &e); err != nil || e.Error != proxy.ESTORAGEFULL {
				t.Errorf("call %d = 507 %s (%v), want STORAGE_FULL", i, raw, err)
			}
			if n := site.count(path); n != 0 {
				t.Errorf("call %d was refused, but the site saw %s %d times", i, path, n)
			}
			refused++
		default:
			t.Fatalf("call %d = %d %s, want 200 or 507", i, code, raw)
		}
	}
	t.Logf("until the disk filled: %d calls ran (%d of them not recorded), %d refused", ran, notRecorded, refused)
	if refused == 0 {
		t.Fatal("60 heavy pages did not fill a 3 MB disk")
	}
	if lastRan == "" {
		t.Fatal("no call ran before the disk filled")
	}

	if err := os.Remove(reserve); err != nil {
		t.Fatal(err)
	}
	snap := s.call(t, sid, "browser_snapshot", map[string]any{})
	if snap.Metadata.PageURL != site.URL+lastRan {
		t.Errorf("the page once space returned is %s, want %s, where the last call that ran left it", snap.Metadata.PageURL, site.URL+lastRan)
	}
}
