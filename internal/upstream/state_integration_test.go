//go:build linux

package upstream

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/answer"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/proctest"
)

// stateSite serves /state: it sets a session cookie, a persistent HttpOnly
// cookie (out of document.cookie's reach, so only the server can tell it
// came back) and localStorage, and titles the page with the cookies the
// server received.
func stateSite(t *testing.T) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/favicon.ico", http.NotFound)
	mux.HandleFunc("/state", func(w http.ResponseWriter, r *http.Request) {
		var sid, hid string
		if c, err := r.Cookie("sid"); err == nil {
			sid = c.Value
		}
		if c, err := r.Cookie("hid"); err == nil {
			hid = c.Value
		}
		if sid == "" {
			http.SetCookie(w, &http.Cookie{Name: "sid", Value: "abc", Path: "/"})
			http.SetCookie(w, &http.Cookie{Name: "hid", Value: "secret", Path: "/", HttpOnly: true, MaxAge: 3600})
		}
		fmt.Fprintf(w, `<!doctype html><html><head><title>State sid=%s hid=%s</title></head><body><p>state</p>
<script>if (!localStorage.getItem('k')) localStorage.setItem('k', 'v');</script></body></html>`, sid, hid)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// outputFiles lists the output dir, console logs aside (they stay for the
// worker's life by design).
func outputFiles(t *testing.T, dir string) []string {
	t.Helper()
	return slices.DeleteFunc(dirNames(t, dir), func(name string) bool { return strings.HasPrefix(name, "console-") })
}

// stateSetup starts what a save and restore test needs: stateSite and a
// browser, with a minute for the test.
func stateSetup(t *testing.T) (root string, site *httptest.Server, b *Browser, ctx context.Context) {
	t.Helper()
	root = realSetup(t)
	site = stateSite(t)
	b = launchTestBrowser(t, root)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	t.Cleanup(cancel)
	return root, site, b, ctx
}

func TestIntegrationSaveRestoreState(t *testing.T) {
	root, site, b, ctx := stateSetup(t)

	// Worker A: a page that sets cookies and localStorage.
	a := startRealWorker(t, root, b)
	target := site.URL + "/state?x=1#frag"
	nav := call(t, a, "browser_navigate", map[string]string{"url": target})
	if nav.IsError || nav.PageTitle != "State sid= hid=" {
		t.Fatalf("navigate: %s", nav.Text)
	}
	if _, err := answer.Ingest(nav, a.OutputDir(), time.Now()); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	saved, err := SaveState(ctx, a)
	saveTook := time.Since(start)
	if err != nil {
		t.Fatalf("SaveState: %v", err)
	}
	t.Logf("SaveState: %v, %d bytes of storage state", saveTook.Round(time.Millisecond), len(saved.StorageState))
	if saved.URL != target || saved.Title != "State sid= hid=" {
		t.Errorf("saved page = %q %q, want %q %q", saved.URL, saved.Title, target, "State sid= hid=")
	}
	var storage struct {
		Cookies []struct {
			Name, Value string
			HTTPOnly    bool `json:"httpOnly"`
		} `json:"cookies"`
		Origins []struct {
			Origin       string `json:"origin"`
			LocalStorage []struct{ Name, Value string }
		} `json:"origins"`
	}
	if err := json.Unmarshal(saved.StorageState, &storage); err != nil {
		t.Fatalf("storage state: %v: %s", err, saved.StorageState)
	}
	if len(storage.Cookies) != 2 || len(storage.Origins) != 1 || storage.Origins[0].Origin != site.URL {
		t.Errorf("storage state lacks the cookies or the origin: %s", saved.StorageState)
	}
	if got := outputFiles(t, a.OutputDir()); len(got) > 0 {
		t.Errorf("SaveState left files in A's output dir: %v", got)
	}
	if err := a.Close(ctx); err != nil {
		t.Fatal(err)
	}

	// Worker B on the same browser: a fresh context that must get it all back.
	bw := startRealWorker(t, root, b)
	start = time.Now()
	if err := RestoreState(ctx, bw, saved); err != nil {
		t.Fatalf("RestoreState: %v", err)
	}
	t.Logf("RestoreState: %v", time.Since(start).Round(time.Millisecond))
	if got := outputFiles(t, bw.OutputDir()); len(got) > 0 {
		t.Errorf("RestoreState left files in B's output dir: %v", got)
	}

	start = time.Now()
	gotURL, gotTitle, err := currentPage(ctx, bw)
	t.Logf("browser_tabs list: %v", time.Since(start).Round(time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	href := evaluate(t, bw, "() => location.href")
	t.Logf("browser_evaluate location.href: %v", time.Since(start).Round(time.Millisecond))
	got := map[string]string{
		"tab url":   gotURL,
		"href":      href,
		"title":     gotTitle, // what the server received on the restoring navigation
		"js values": evaluate(t, bw, "() => document.cookie + '|' + localStorage.getItem('k')"),
	}
	want := map[string]string{
		"tab url":   target,
		"href":      `"` + target + `"`,
		"title":     "State sid=abc hid=secret",
		"js values": `"sid=abc|v"`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("restored worker (-want +got):\n%s", diff)
	}

	// A second save of the restored worker gives the same state back.
	again, err := SaveState(ctx, bw)
	if err != nil {
		t.Fatal(err)
	}
	if again.URL != saved.URL || string(again.StorageState) != string(saved.StorageState) {
		t.Errorf("state after a round trip differs:\n got %s %s\nwant %s %s", again.URL, again.StorageState, saved.URL, saved.StorageState)
	}
}

// TestIntegrationSaveStateBlank: a worker that never opened a page saves an
// empty URL and an empty storage state, which restores cleanly.
func TestIntegrationSaveStateBlank(t *testing.T) {
	root := realSetup(t)
	b := launchTestBrowser(t, root)
	w := startRealWorker(t, root, b)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	s, err := SaveState(ctx, w)
	if err != nil {
		t.Fatalf("SaveState: %v", err)
	}
	want := &SavedState{StorageState: json.RawMessage(`{"cookies":[],"origins":[]}`)}
	if diff := cmp.Diff(want, s); diff != "" {
		t.Errorf("SaveState of a blank worker (-want +got):\n%s", diff)
	}
	w2 := startRealWorker(t, root, b)
	if err := RestoreState(ctx, w2, s); err != nil {
		t.Fatalf("RestoreState: %v", err)
	}
	if got := outputFiles(t, w2.OutputDir()); len(got) > 0 {
		t.Errorf("files left: %v", got)
	}
}

func TestIntegrationRSS(t *testing.T) {
	root := realSetup(t)
	b := launchTestBrowser(t, root)
	w := startRealWorker(t, root, b)
	idle := w.RSS()
	call(t, w, "browser_navigate", map[string]string{"url": "about:blank"})

	const mb = 1 << 20
	start := time.Now()
	groups := scanGroupRSS() // uncached, for the figures after the navigation
	scanTook := time.Since(start)
	w.RSS() // fills the cache
	start = time.Now()
	const n = 100
	for range n {
		w.RSS()
	}
	cachedTook := time.Since(start) / n
	workerRSS, browserRSS := w.RSS(), b.RSS()
	t.Logf("worker RSS: %.1f MB idle, %.1f MB after a navigation; browser RSS: %.1f MB (%d processes); /proc scan %v, cached RSS() %v",
		float64(idle)/mb, float64(groups[w.PID()])/mb, float64(groups[b.PID()])/mb, len(proctest.Group(b.PID())),
		scanTook.Round(time.Microsecond), cachedTook)
	if workerRSS <= 10*mb {
		t.Errorf("worker RSS = %d, want > 10 MB", workerRSS)
	}
	if browserRSS <= 10*mb {
		t.Errorf("browser RSS = %d, want > 10 MB", browserRSS)
	}

	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if err := w.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if got := w.RSS(); got != 0 {
		t.Errorf("RSS of a closed worker = %d, want 0", got)
	}
	if err := b.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if got := b.RSS(); got != 0 {
		t.Errorf("RSS of a closed browser = %d, want 0", got)
	}
}

// idbWrite and idbRead put and get one IndexedDB record in the page's
// origin; both resolve once the transaction is done.
const (
	idbWrite = `async () => {
  const db = await new Promise((ok, fail) => {
    const r = indexedDB.open('pwproxy-test', 1);
    r.onupgradeneeded = () => r.result.createObjectStore('kv');
    r.onsuccess = () => ok(r.result);
    r.onerror = () => fail(r.error);
  });
  await new Promise((ok, fail) => {
    const tx = db.transaction('kv', 'readwrite');
    tx.objectStore('kv').put(%q, 'token');
    tx.oncomplete = ok;
    tx.onerror = () => fail(tx.error);
  });
  db.close();
  return 'written';
}`
	idbRead = `async () => {
  const names = (await indexedDB.databases()).map(d => d.name);
  if (!names.includes('pwproxy-test')) return 'no database';
  const db = await new Promise((ok, fail) => {
    const r = indexedDB.open('pwproxy-test', 1);
    r.onsuccess = () => ok(r.result);
    r.onerror = () => fail(r.error);
  });
  const v = await new Promise((ok, fail) => {
    const g = db.transaction('kv').objectStore('kv').get('token');
    g.onsuccess = () => ok(g.result);
    g.onerror = () => fail(g.error);
  });
  db.close();
  return v === undefined ? 'no record' : v;
}`
)

// TestIntegrationSaveRestoreIndexedDB: a record a page wrote to IndexedDB
// is in the saved state and back in a fresh worker after a restore.
func TestIntegrationSaveRestoreIndexedDB(t *testing.T) {
	root, site, b, ctx := stateSetup(t)
	secret := fmt.Sprintf("IDBSECRET-%d", time.Now().UnixNano())

	a := startRealWorker(t, root, b)
	target := site.URL + "/state"
	nav := call(t, a, "browser_navigate", map[string]string{"url": target})
	if nav.IsError {
		t.Fatalf("navigate: %s", nav.Text)
	}
	if _, err := answer.Ingest(nav, a.OutputDir(), time.Now()); err != nil {
		t.Fatal(err)
	}
	if got := evaluate(t, a, fmt.Sprintf(idbWrite, secret)); got != `"written"` {
		t.Fatalf("writing the record: %s", got)
	}
	start := time.Now()
	saved, err := SaveState(WithIndexedDB(ctx), a)
	took := time.Since(start)
	if err != nil {
		t.Fatalf("SaveState: %v", err)
	}
	// A state over the limit is not sent (it would come in one line).
	if _, err := saveStateByProgram(ctx, a, 100); err == nil || !strings.Contains(err.Error(), "over the limit") {
		t.Errorf("a state over a 100-character limit: %v, want refused", err)
	}
	// What IndexedDB costs: the other way, which leaves it out.
	start = time.Now()
	if _, err := saveStateByTool(ctx, a); err != nil {
		t.Fatalf("saving without IndexedDB: %v", err)
	}
	t.Logf("SaveState with IndexedDB: %v; without (browser_storage_state): %v", took.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
	var storage struct {
		Origins []struct {
			Origin    string          `json:"origin"`
			IndexedDB json.RawMessage `json:"indexedDB"`
		} `json:"origins"`
	}
	if err := json.Unmarshal(saved.StorageState, &storage); err != nil {
		t.Fatalf("storage state: %v", err)
	}
	if len(storage.Origins) != 1 || storage.Origins[0].Origin != site.URL || !strings.Contains(string(storage.Origins[0].IndexedDB), secret) {
		t.Errorf("saved state lacks the IndexedDB record of %s: %d origins", site.URL, len(storage.Origins))
	}
	if saved.URL != target || saved.Title != "State sid= hid=" {
		t.Errorf("saved page = %q %q, want %q %q", saved.URL, saved.Title, target, "State sid= hid=")
	}
	if got := outputFiles(t, a.OutputDir()); len(got) > 0 {
		t.Errorf("SaveState left files in A's output dir: %v", got)
	}
	if err := a.Close(ctx); err != nil {
		t.Fatal(err)
	}

	bw := startRealWorker(t, root, b)
	if err := RestoreState(ctx, bw, saved); err != nil {
		t.Fatalf("RestoreState: %v", err)
	}
	if got := evaluate(t, bw, idbRead); got != `"`+secret+`"` {
		t.Errorf("record in the restored worker = %s, want %q", got, secret)
	}
}

// TestIntegrationSaveStateWithDialogOpen: upstream refuses
// browser_run_code_unsafe while a dialog is open, so the state is saved the
// other way, without IndexedDB but with the cookies and the page.
func TestIntegrationSaveStateWithDialogOpen(t *testing.T) {
	root, site, b, ctx := stateSetup(t)
	w := startRealWorker(t, root, b)
	target := site.URL + "/state"
	nav := call(t, w, "browser_navigate", map[string]string{"url": target})
	if _, err := answer.Ingest(nav, w.OutputDir(), time.Now()); err != nil {
		t.Fatal(err)
	}
	alert := call(t, w, "browser_evaluate", map[string]string{"function": "() => alert('hold on')"})
	if _, err := answer.Ingest(alert, w.OutputDir(), time.Now()); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(alert.Text, "hold on") {
		t.Fatalf("no dialog open after alert(): %s", alert.Text)
	}
	if refused := call(t, w, runCodeTool, map[string]string{"code": stateProgram}); !refused.IsError {
		t.Fatalf("%s ran with a dialog open; this test no longer tests the fallback", runCodeTool)
	}
	saved, err := SaveState(WithIndexedDB(ctx), w)
	if err != nil {
		t.Fatalf("SaveState with a dialog open: %v", err)
	}
	if saved.URL != target || !strings.Contains(string(saved.StorageState), `"name":"hid"`) {
		t.Errorf("saved with a dialog open: url %q, storage has the cookies: %v", saved.URL, strings.Contains(string(saved.StorageState), `"name":"hid"`))
	}
	if got := outputFiles(t, w.OutputDir()); len(got) > 0 {
		t.Errorf("SaveState left files in the output dir: %v", got)
	}
}
