//go:build unix

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/proctest"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/upstream"
)

// isolationCheck: two sessions each set a cookie and localStorage; each
// reads back only its own, and a third sees neither.
func isolationCheck(t *testing.T, s *server, pages string) {
	t.Helper()
	a, b := s.createSession(t), s.createSession(t)
	s.call(t, a, "browser_navigate", map[string]string{"url": pages + "/set.html?v=alpha"})
	s.call(t, b, "browser_navigate", map[string]string{"url": pages + "/set.html?v=beta"})
	for _, tc := range []struct{ session, want string }{
		{a, "ls=alpha;ck=who=alpha"},
		{b, "ls=beta;ck=who=beta"},
		{s.createSession(t), "ls=null;ck="},
	} {
		got := s.call(t, tc.session, "browser_navigate", map[string]string{"url": pages + "/read.html"})
		if got.Metadata.PageTitle != tc.want {
			t.Errorf("session %s reads %q, want %q", tc.session, got.Metadata.PageTitle, tc.want)
		}
	}
}

func TestBrowserModesAreIsolated(t *testing.T) {
	requireBrowser(t)
	pages := site(t)
	t.Run("per-session", func(t *testing.T) {
		s := startServer(t, "", map[string]string{"PROXY_BROWSER_MODE": "per-session"})
		isolationCheck(t, s, pages)
	})
	t.Run("cdp-endpoint", func(t *testing.T) {
		// A browser this test owns stands for a remote one.
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		b, err := upstream.LaunchBrowser(ctx, upstream.BrowserConfig{Headless: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			cctx, ccancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer ccancel()
			b.Close(cctx)
		})
		s := startServer(t, "", map[string]string{"PROXY_BROWSER_CDP_ENDPOINT": b.CDPEndpoint()})
		isolationCheck(t, s, pages)

		// The server runs in this process, so everything it started is
		// below this test. Its three sessions have live workers now...
		var list struct {
			Sessions []proxy.Session `json:"sessions"`
		}
		if code := do(t, "GET", s.URL+"/sessions", nil, &list); code != http.StatusOK {
			t.Fatalf("GET /sessions = %d", code)
		}
		workers := 0
		for _, sess := range list.Sessions {
			if sess.WorkerPID != 0 && proctest.Alive(sess.WorkerPID) {
				workers++
			}
		}
		if workers != 3 {
			t.Errorf("%d of the isolation check's 3 sessions have a live worker: %+v", workers, list.Sessions)
		}
		// ...and yet the only Chromium browser process below this test is
		// the test's own: the server launched none.
		if got, want := mainChromium(t), b.BrowserPID(); got != want {
			t.Errorf("the Chromium browser below this test is %d, want only the test's own %d (the server launched a browser)", got, want)
		}
		var h struct {
			Checks map[string]string `json:"checks"`
		}
		if code := do(t, "GET", s.URL+"/health", nil, &h); code != http.StatusOK || h.Checks["browser"] != "ok" {
			t.Errorf("/health with a remote browser = %d %v", code, h.Checks)
		}
	})
}

// request is do for goroutines: it reports what went wrong instead of
// ending the test.
func request(method, url string, body, out any) (int, error) {
	var r io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			return 0, fmt.Errorf("encoding the body of %s %s: %w", method, url, err)
		}
		r = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, url, r)
	if err != nil {
		return 0, fmt.Errorf("%s %s: %w", method, url, err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, fmt.Errorf("%s %s: %w", method, url, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp.StatusCode, fmt.Errorf("%s %s: reading the answer: %w", method, url, err)
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			return resp.StatusCode, fmt.Errorf("%s %s: decoding %q: %w", method, url, data, err)
		}
	}
	return resp.StatusCode, nil
}

// storage is what a page of the test site holds for its origin.
type storage struct {
	LocalStorage map[string]string `json:"localStorage"`
	Cookie       string            `json:"cookie"`
}

// readStorage is a browser_evaluate function that returns every
// localStorage entry of the page's origin and its cookies.
const readStorage = `() => ({localStorage: Object.fromEntries(Object.keys(localStorage).map(k => [k, localStorage.getItem(k)])), cookie: document.cookie})`

func TestTwentyConcurrentSessionsStayIsolated(t *testing.T) {
	const n = 20
	// browser_evaluate's answer rides inline in the metadata.
	s := startServer(t, "", map[string]string{"PROXY_MAX_SESSIONS": "20", "PROXY_INLINE_RESULT_MAX": "4096"})
	pages := site(t)
	value := func(i int) string { return fmt.Sprintf("s%02d", i) }
	call := func(id, tool string, params any) (proxy.CallResult, error) {
		var res proxy.CallResult
		code, err := request("POST", s.URL+"/call", map[string]any{"session_id": id, "tool": tool, "params": params}, &res)
		switch {
		case err != nil:
			return res, err
		case code != http.StatusOK || res.Status != proxy.StatusSuccess:
			return res, fmt.Errorf("%s %v = %d, status %q: %s", tool, params, code, res.Status, res.Error)
		}
		return res, nil
	}
	// inParallel runs step for every session at once and reports each
	// session's failure.
	inParallel := func(phase string, step func(i int) error) {
		t.Helper()
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() { errs[i] = step(i) })
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Errorf("%s, session %d: %v", phase, i, err)
			}
		}
	}

	// Every session writes, all at once: a cookie and localStorage key
	// "who" that every session shares by name (set.html), and a key only
	// this session has.
	ids := make([]string, n)
	inParallel("write", func(i int) error {
		var sess proxy.Session
		if code, err := request("POST", s.URL+"/sessions", nil, &sess); err != nil || code != http.StatusCreated {
			return fmt.Errorf("POST /sessions = %d: %v", code, err)
		}
		ids[i] = sess.ID
		v := value(i)
		set, err := call(sess.ID, "browser_navigate", map[string]string{"url": pages + "/set.html?v=" + v})
		if err != nil {
			return err
		}
		if set.Metadata.PageTitle != "set "+v {
			return fmt.Errorf("set.html is titled %q, want %q", set.Metadata.PageTitle, "set "+v)
		}
		_, err = call(sess.ID, "browser_evaluate", map[string]string{"function": fmt.Sprintf("() => { localStorage.setItem('only-%s', '%s'); return 'ok'; }", v, v)})
		return err
	})
	if t.Failed() {
		t.FailNow()
	}

	// Only then does every session read, again all at once, on a fresh
	// page load: its own values, and not one key of the 19 others.
	inParallel("read", func(i int) error {
		v := value(i)
		read, err := call(ids[i], "browser_navigate", map[string]string{"url": pages + "/read.html"})
		if err != nil {
			return err
		}
		if want := "ls=" + v + ";ck=who=" + v; read.Metadata.PageTitle != want {
			return fmt.Errorf("read.html is titled %q, want %q", read.Metadata.PageTitle, want)
		}
		res, err := call(ids[i], "browser_evaluate", map[string]string{"function": readStorage})
		if err != nil {
			return err
		}
		var got storage
		if err := json.Unmarshal([]byte(res.Metadata.Result), &got); err != nil {
			return fmt.Errorf("browser_evaluate answered %q: %w", res.Metadata.Result, err)
		}
		want := storage{LocalStorage: map[string]string{"who": v, "only-" + v: v}, Cookie: "who=" + v}
		if diff := cmp.Diff(want, got); diff != "" {
			return fmt.Errorf("the page's storage (-want +got):\n%s", diff)
		}
		return nil
	})
}

func TestLimitEvictsLeastRecentlyUsedIdleSession(t *testing.T) {
	// A worker process per session: the test checks the evicted one's
	// process group is gone (a session host outlives its sessions).
	s := startServer(t, "", map[string]string{"PROXY_MAX_SESSIONS": "3", "PROXY_SESSIONS_PER_WORKER": "1"})
	pages := site(t)
	ids := []string{s.createSession(t), s.createSession(t), s.createSession(t)}
	for _, i := range []int{0, 1, 2, 0, 2} { // session 1 is the least recently used
		s.call(t, ids[i], "browser_navigate", map[string]string{"url": pages + "/index.html"})
	}
	lru := s.getSession(t, ids[1])
	if lru.WorkerPID == 0 || len(proctest.Group(lru.WorkerPID)) == 0 {
		t.Fatalf("before the fourth create, the least recently used session has no live worker group: %+v", lru)
	}

	fourth := s.createSession(t)
	for i, want := range []proxy.SessionState{proxy.SessionActive, proxy.SessionSuspended, proxy.SessionActive} {
		if got := s.getSession(t, ids[i]); got.State != want {
			t.Errorf("session %d is %s, want %s", i, got.State, want)
		}
	}
	if left := proctest.WaitGone(5*time.Second, func() []proctest.Proc { return proctest.Group(lru.WorkerPID) }); len(left) > 0 {
		t.Errorf("evicted session's worker group (pgid %d) still runs: %v", lru.WorkerPID, left)
	}

	// All three live sessions busy: a create is refused, not queued.
	live := []string{ids[0], ids[2], fourth}
	var wg sync.WaitGroup
	for _, id := range live {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var res proxy.CallResult
			code, err := request("POST", s.URL+"/call", map[string]any{"session_id": id, "tool": "browser_wait_for", "params": map[string]any{"time": 4}}, &res)
			if err != nil || code != http.StatusOK {
				t.Errorf("browser_wait_for in %s = %d: %v", id, code, err)
			}
		}()
	}
	time.Sleep(1500 * time.Millisecond) // let the three waits reach their workers
	var e proxyErr
	code := do(t, "POST", s.URL+"/sessions", nil, &e)
	if code != http.StatusTooManyRequests || e.Error != proxy.EMAXSESSIONS || !e.Retryable {
		t.Errorf("create with all sessions busy = %d %+v, want 429 MAX_SESSIONS_REACHED", code, e)
	}
	wg.Wait()
}

func TestIdleSuspendAndTransparentResume(t *testing.T) {
	// A worker process per session, whose group the suspension must end
	// (TestHostedIdleSuspendLeavesItsNeighbour is the hosted case).
	s := startServer(t, "", map[string]string{"PROXY_SESSION_IDLE_TIMEOUT": "3s", "PROXY_SESSIONS_PER_WORKER": "1"})
	pages := site(t)
	type idler struct {
		name, id, value string
		pid             int
	}
	// One comes back on its next call, the other on POST /resume.
	transparent, explicit := &idler{name: "transparent", value: "kept"}, &idler{name: "explicit", value: "held"}
	for _, x := range []*idler{transparent, explicit} {
		x.id = s.createSession(t)
		s.call(t, x.id, "browser_navigate", map[string]string{"url": pages + "/set.html?v=" + x.value})
		before := s.call(t, x.id, "browser_navigate", map[string]string{"url": pages + "/read.html"})
		if want := "ls=" + x.value + ";ck=who=" + x.value; before.Metadata.PageTitle != want {
			t.Fatalf("%s: set-up reads %q, want %q", x.name, before.Metadata.PageTitle, want)
		}
		// Read within the idle timeout of the last call: the worker runs.
		sess := s.getSession(t, x.id)
		if sess.WorkerPID == 0 || len(proctest.Group(sess.WorkerPID)) == 0 {
			t.Fatalf("%s: right after a call the session has no live worker group: %+v", x.name, sess)
		}
		if sess.RSSBytes < 10<<20 {
			t.Errorf("%s: live session reports rss_bytes=%d, want the worker's resident memory", x.name, sess.RSSBytes)
		}
		x.pid = sess.WorkerPID
	}

	for _, x := range []*idler{transparent, explicit} {
		sess := s.getSession(t, x.id)
		deadline := time.Now().Add(30 * time.Second)
		for sess.State != proxy.SessionSuspended && time.Now().Before(deadline) {
			time.Sleep(200 * time.Millisecond)
			sess = s.getSession(t, x.id)
		}
		if sess.State != proxy.SessionSuspended || sess.WorkerPID != 0 {
			t.Fatalf("%s: after idling, session is %s with worker %d, want suspended without one", x.name, sess.State, sess.WorkerPID)
		}
		if left := proctest.WaitGone(5*time.Second, func() []proctest.Proc { return proctest.Group(x.pid) }); len(left) > 0 {
			t.Errorf("%s: suspended session's worker group (pgid %d) still runs: %v", x.name, x.pid, left)
		}
	}

	// Transparently: the next call resumes it and says so.
	after := s.call(t, transparent.id, "browser_snapshot", nil)
	if !after.Metadata.Restored {
		t.Errorf("first call after suspension: restored=false")
	}
	if after.Metadata.PageURL != pages+"/read.html" || after.Metadata.PageTitle != "ls=kept;ck=who=kept" {
		t.Errorf("resumed at %q titled %q, want read.html with cookie and localStorage intact", after.Metadata.PageURL, after.Metadata.PageTitle)
	}

	// POST /sessions/{id}/resume answers the session and whether it came
	// back in a new worker (internal/wire.ResumeBody). On a live session
	// (asked at once, well within the idle timeout) it is a no-op.
	type resumed struct {
		proxy.Session
		Restored bool `json:"restored"`
	}
	show := func(r resumed) string {
		return fmt.Sprintf("{session_id:%s state:%s worker_pid:%d restored:%v}", r.ID, r.State, r.WorkerPID, r.Restored)
	}
	var r resumed
	if code := do(t, "POST", s.URL+"/sessions/"+transparent.id+"/resume", nil, &r); code != http.StatusOK || r.State != proxy.SessionActive || r.Restored {
		t.Errorf("resume of a live session = %d %s, want it active, restored: false", code, show(r))
	}

	// Explicitly: the suspended one comes back live in a new worker, with
	// restored: true.
	r = resumed{}
	if code := do(t, "POST", s.URL+"/sessions/"+explicit.id+"/resume", nil, &r); code != http.StatusOK {
		t.Fatalf("resume of a suspended session = %d %s", code, show(r))
	}
	if r.ID != explicit.id || r.State != proxy.SessionActive || !r.Restored || r.WorkerPID == 0 || r.WorkerPID == explicit.pid {
		t.Errorf("resume of suspended session %s = %s; want it active in a new worker (not %d), restored: true", explicit.id, show(r), explicit.pid)
	}
	snap := s.call(t, explicit.id, "browser_snapshot", nil)
	if snap.Metadata.PageURL != pages+"/read.html" || snap.Metadata.PageTitle != "ls=held;ck=who=held" {
		t.Errorf("after an explicit resume, at %q titled %q; want read.html with cookie and localStorage intact", snap.Metadata.PageURL, snap.Metadata.PageTitle)
	}
}
