//go:build linux

package upstream

import (
	"net/url"
	"slices"
	"syscall"
	"testing"
	"time"
)

// TestIntegrationHostBrowserCrash kills Chromium under a Host with two
// workers: both workers must stop (the session layer restarts them), the
// host must relaunch the browser without waiting for a spawn, and a new
// worker must work. Every process carries the host's instance marker.
func TestIntegrationHostBrowserCrash(t *testing.T) {
	root := realSetup(t)
	site := testSite(t)
	const instance = "itest-crash"
	var res reservations
	h := startHost(t, HostConfig{
		Reserve:    res.reserve,
		Browser:    BrowserConfig{Headless: true, Logger: testLogger(t)},
		Worker:     WorkerConfig{Command: DefaultCommand(root), Logger: testLogger(t)},
		InstanceID: instance,
		Logger:     testLogger(t),
	})
	w1, w2 := spawn(t, h), spawn(t, h)
	call(t, w1, "browser_navigate", map[string]string{"url": site.URL + "/blank"})

	h.mu.Lock()
	b := h.browser
	h.mu.Unlock()
	for _, pid := range []int{b.PID(), b.BrowserPID(), w1.PID()} {
		if got := markers(environ(t, pid)); len(got) != 1 || got[0] != InstanceEnv+"="+instance {
			t.Errorf("process %d (%s) carries markers %q", pid, cmdline(pid), got)
		}
	}

	if got, want := res.list(), []string{hostOf(t, w1.DebugEndpoint())}; !slices.Equal(got, want) {
		t.Errorf("reserved before the crash: %v, want %v", got, want)
	}

	if err := syscall.Kill(b.BrowserPID(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	for _, w := range []*Worker{w1, w2} {
		select {
		case <-w.Done():
		case <-time.After(15 * time.Second):
			t.Fatalf("worker %d still running 15s after Chromium was killed", w.PID())
		}
	}
	t.Logf("both workers stopped %v after the kill", time.Since(start).Round(time.Millisecond))
	if left := groupGone(b.PID()); len(left) > 0 {
		t.Errorf("left of the dead browser: %+v", left)
	}
	if err := h.Check(t.Context()); err != nil {
		t.Logf("Check right after the crash: %v", err)
	}
	if !eventually(45*time.Second, func() bool { return h.Check(t.Context()) == nil }) {
		t.Fatalf("browser not relaunched: %v", h.Check(t.Context()))
	}
	t.Logf("browser relaunched %v after the kill", time.Since(start).Round(time.Millisecond))

	w3 := spawn(t, h)
	if p := call(t, w3, "browser_navigate", map[string]string{"url": site.URL + "/blank"}); p.IsError || p.PageTitle != "Blank" {
		t.Fatalf("navigate after the relaunch: %+v", p)
	}
	// The new browser's CDP port is the one reserved now, the dead one's
	// no longer.
	if got, want := res.list(), []string{hostOf(t, w3.DebugEndpoint())}; !slices.Equal(got, want) {
		t.Errorf("reserved after the relaunch: %v, want %v (before: %s)", got, want, w1.DebugEndpoint())
	}
}

func hostOf(t *testing.T, endpoint string) string {
	t.Helper()
	u, err := url.Parse(endpoint)
	if err != nil || u.Port() == "" {
		t.Fatalf("endpoint %q: want http://host:port", endpoint)
	}
	return u.Host
}
