package main

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

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
		// The server must not have launched a browser of its own: every
		// Chromium is the test's.
		var h struct {
			Checks map[string]string `json:"checks"`
		}
		if code := do(t, "GET", s.URL+"/health", nil, &h); code != http.StatusOK || h.Checks["browser"] != "ok" {
			t.Errorf("/health with a remote browser = %d %v", code, h.Checks)
		}
	})
}

func TestTwentyConcurrentSessionsStayIsolated(t *testing.T) {
	s := startServer(t, "", map[string]string{"PROXY_MAX_SESSIONS": "20"})
	pages := site(t)
	const n = 20
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var sess proxy.Session
			if code := do(t, "POST", s.URL+"/sessions", nil, &sess); code != http.StatusCreated {
				errs <- fmt.Errorf("create %d: status %d", i, code)
				return
			}
			v := fmt.Sprintf("s%02d", i)
			for _, step := range []struct{ url, want string }{
				{pages + "/set.html?v=" + v, "set " + v},
				{pages + "/read.html", "ls=" + v + ";ck=who=" + v},
			} {
				var res proxy.CallResult
				code := do(t, "POST", s.URL+"/call", map[string]any{"session_id": sess.ID, "tool": "browser_navigate", "params": map[string]string{"url": step.url}}, &res)
				if code != http.StatusOK || res.Metadata.PageTitle != step.want {
					errs <- fmt.Errorf("session %d: %s gave %d %q (%s), want %q", i, step.url, code, res.Metadata.PageTitle, res.Error, step.want)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestLimitEvictsLeastRecentlyUsedIdleSession(t *testing.T) {
	s := startServer(t, "", map[string]string{"PROXY_MAX_SESSIONS": "3"})
	pages := site(t)
	ids := []string{s.createSession(t), s.createSession(t), s.createSession(t)}
	for _, i := range []int{0, 1, 2, 0, 2} { // session 1 is the least recently used
		s.call(t, ids[i], "browser_navigate", map[string]string{"url": pages + "/index.html"})
	}
	var pid1 proxy.Session
	do(t, "GET", s.URL+"/sessions/"+ids[1], nil, &pid1)

	fourth := s.createSession(t)
	for i, want := range []proxy.SessionState{proxy.SessionActive, proxy.SessionSuspended, proxy.SessionActive} {
		var got proxy.Session
		do(t, "GET", s.URL+"/sessions/"+ids[i], nil, &got)
		if got.State != want {
			t.Errorf("session %d is %s, want %s", i, got.State, want)
		}
	}
	if left := proctest.WaitGone(5*time.Second, func() []proctest.Proc { return proctest.Group(pid1.WorkerPID) }); len(left) > 0 {
		t.Errorf("evicted session's worker still runs: %v", left)
	}

	// All three live sessions busy: a create is refused, not queued.
	live := []string{ids[0], ids[2], fourth}
	var wg sync.WaitGroup
	for _, id := range live {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.call(t, id, "browser_wait_for", map[string]any{"time": 4})
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
	s := startServer(t, "", map[string]string{"PROXY_SESSION_IDLE_TIMEOUT": "2s"})
	pages := site(t)
	id := s.createSession(t)
	s.call(t, id, "browser_navigate", map[string]string{"url": pages + "/set.html?v=kept"})
	before := s.call(t, id, "browser_navigate", map[string]string{"url": pages + "/read.html"})
	if before.Metadata.PageTitle != "ls=kept;ck=who=kept" {
		t.Fatalf("set-up: %q", before.Metadata.PageTitle)
	}
	var sess proxy.Session
	do(t, "GET", s.URL+"/sessions/"+id, nil, &sess)
	pid := sess.WorkerPID
	if sess.RSSBytes < 10<<20 {
		t.Errorf("live session reports rss_bytes=%d, want the worker's resident memory", sess.RSSBytes)
	}

	deadline := time.Now().Add(15 * time.Second)
	for sess.State != proxy.SessionSuspended && time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond)
		do(t, "GET", s.URL+"/sessions/"+id, nil, &sess)
	}
	if sess.State != proxy.SessionSuspended {
		t.Fatalf("after idling, session is %s, want suspended", sess.State)
	}
	if left := proctest.WaitGone(5*time.Second, func() []proctest.Proc { return proctest.Group(pid) }); len(left) > 0 {
		t.Errorf("suspended session's worker still runs: %v", left)
	}

	after := s.call(t, id, "browser_snapshot", nil)
	if !after.Metadata.Restored {
		t.Errorf("first call after suspension: restored=false")
	}
	if after.Metadata.PageURL != pages+"/read.html" || after.Metadata.PageTitle != "ls=kept;ck=who=kept" {
		t.Errorf("resumed at %q titled %q, want read.html with cookie and localStorage intact", after.Metadata.PageURL, after.Metadata.PageTitle)
	}

	// Explicit resume of a live session is a no-op.
	var r struct {
		State    proxy.SessionState `json:"state"`
		Restored bool               `json:"restored"`
	}
	if code := do(t, "POST", s.URL+"/sessions/"+id+"/resume", nil, &r); code != http.StatusOK || r.State != proxy.SessionActive || r.Restored {
		t.Errorf("resume of a live session = %d %+v", code, r)
	}
}
