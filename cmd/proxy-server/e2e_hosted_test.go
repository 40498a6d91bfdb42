//go:build linux

package main

// Sessions hosted many to a node process (PROXY_SESSIONS_PER_WORKER > 1)
// end to end, on real @playwright/mcp and Chromium: a host that dies or
// hangs takes its sessions down together and each comes back with its
// state; a session closed or suspended leaves its neighbours alone; each
// session keeps its own browser options, profile and pages; the metrics
// and the live view tell the sessions of one host apart. The adversarial
// isolation suite (e2e_isolation_test.go) runs in this mode as one of its
// modes.

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image/jpeg"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/google/go-cmp/cmp"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/proctest"
)

// hostOf is the pid of the session host serving session id; it fails the
// test when the session is not in one.
func (s *server) hostOf(t *testing.T, id string) int {
	t.Helper()
	pid := s.getSession(t, id).WorkerPID
	if pid == 0 {
		t.Fatalf("session %s has no live worker", id)
	}
	if args := procArgs(t, pid); !isSessionHost(args) {
		t.Fatalf("session %s runs in process %d, not in a session host: %q", id, pid, args)
	}
	return pid
}

// hostedEnv is the environment of a server whose sessions are hosted k to
// a node process, with more.
func hostedEnv(k int, more map[string]string) map[string]string {
	env := map[string]string{"PROXY_SESSIONS_PER_WORKER": strconv.Itoa(k)}
	for key, v := range more {
		env[key] = v
	}
	return env
}

// marked is a session holding a cookie and localStorage of its own value,
// on a page of its own.
type marked struct {
	id, value, url string
}

// title is what read.html says of the session's cookie and localStorage.
func (m *marked) title() string { return "ls=" + m.value + ";ck=who=" + m.value }

// mark gives session id its value (set.html) and leaves it on a read page
// of its own.
func mark(t *testing.T, s *server, pages, id, value string) *marked {
	t.Helper()
	m := &marked{id: id, value: value, url: pages + "/read.html?at=" + value}
	s.call(t, id, "browser_navigate", map[string]string{"url": pages + "/set.html?v=" + value})
	if got := s.call(t, id, "browser_navigate", map[string]string{"url": m.url}); got.Metadata.PageTitle != m.title() {
		t.Fatalf("session %s reads %q, want %q", id, got.Metadata.PageTitle, m.title())
	}
	return m
}

// markSaved is mark, then waits until the session's state is saved.
func markSaved(t *testing.T, s *server, db *sql.DB, pages, id, value string) *marked {
	t.Helper()
	m := mark(t, s, pages, id, value)
	waitStateSaved(t, db, id, m.url)
	return m
}

// checkBack makes the session's next call and checks that it came back
// in a new worker with its page, cookie and localStorage.
func checkBack(t *testing.T, s *server, m *marked) {
	t.Helper()
	res := s.call(t, m.id, "browser_snapshot", nil)
	if !res.Metadata.Restored || res.Metadata.PageURL != m.url || res.Metadata.PageTitle != m.title() {
		t.Errorf("session %s came back restored=%v at %q titled %q; want restored at %q titled %q",
			m.id, res.Metadata.Restored, res.Metadata.PageURL, res.Metadata.PageTitle, m.url, m.title())
	}
}

// TestHostedSessionsComeBackWhenTheirHostDies: three sessions in one host
// (K=4), each on its own page with its own cookie. SIGKILL of the host
// ends all three and each comes back on its next call with its state; a
// SIGSTOPped host is found hung and killed (each session counts one hung
// worker, the one busy with a call too), and the sessions come back the
// same way; closing one session leaves the others in their host.
func TestHostedSessionsComeBackWhenTheirHostDies(t *testing.T) {
	pages := site(t)
	s := runBinary(t, filepath.Join(t.TempDir(), "p.db"), hostedEnv(4, map[string]string{"PROXY_PING_INTERVAL": "1s"}))
	db := openRO(t, s.DBPath)
	var sessions []*marked
	for i := range 3 {
		sessions = append(sessions, markSaved(t, s.server, db, pages, s.createSession(t), fmt.Sprintf("h%d-%s", i, isoToken()[:8])))
	}
	host := s.hostOf(t, sessions[0].id)
	for _, m := range sessions[1:] {
		if got := s.hostOf(t, m.id); got != host {
			t.Fatalf("sessions in hosts %d and %d: with room for four, three share one", host, got)
		}
	}

	t.Run("SIGKILL of the host: every session comes back with its state", func(t *testing.T) {
		group := proctest.Group(host)
		if err := syscall.Kill(-host, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		// Once the host is gone a call is known not to have reached it.
		waitReaped(t, host)
		for _, m := range sessions {
			checkBack(t, s.server, m)
			if now := s.hostOf(t, m.id); now == host {
				t.Errorf("session %s still names the killed host %d", m.id, host)
			}
		}
		if left := proctest.WaitGone(5*time.Second, func() []proctest.Proc { return proctest.StillAlive(group) }); len(left) > 0 {
			t.Errorf("the killed host's group still runs: %v", left)
		}
	})

	t.Run("SIGSTOP of the host: it is killed as hung and every session comes back", func(t *testing.T) {
		old := map[string]int{}
		hosts := map[int]bool{}
		for _, m := range sessions {
			old[m.id] = s.hostOf(t, m.id)
			hosts[old[m.id]] = true
		}
		before := healthOf(t, s.URL).Counters
		// A session with a call in flight is busy, and a busy session is
		// not pinged: only the host's own pings find this one hung.
		busy := sessions[0]
		inFlight := make(chan error, 1)
		go func() {
			_, err := postCall(s.URL, busy.id, "browser_evaluate", map[string]string{"function": "() => new Promise(r => setTimeout(() => r('late'), 600000))"})
			inFlight <- err
		}()
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			var n int
			if err := db.QueryRow(`SELECT count(*) FROM requests WHERE session_id = ? AND tool_name = 'browser_evaluate'`, busy.id).Scan(&n); err == nil && n > 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("the busy session's call was not recorded within 30 s")
			}
		}
		var stopped []proctest.Proc
		for h := range hosts {
			stopped = append(stopped, stopGroup(t, h)...)
			defer syscall.Kill(-h, syscall.SIGCONT)
		}
		// A generous bound on a hang, not a measure: pings every second.
		for _, m := range sessions {
			if now := s.waitWorker(t, m.id, old[m.id], 3*time.Minute); hosts[now] {
				t.Errorf("session %s moved to %d, one of the stopped hosts", m.id, now)
			}
		}
		if left := proctest.WaitGone(10*time.Second, func() []proctest.Proc { return proctest.StillAlive(stopped) }); len(left) > 0 {
			t.Errorf("the stopped host's processes still exist: %v", left)
		}
		for h := range hosts {
			s.waitLogged(t, regexp.MustCompile(fmt.Sprintf(`session host did not answer its pings; killing it.* pid=%d\b`, h)), 10*time.Second)
		}
		if err := <-inFlight; err == nil || !strings.Contains(err.Error(), " = 503 ") || !strings.Contains(err.Error(), proxy.EUNAVAILABLE) {
			t.Errorf("the call in flight when its host hung: %v; want 503 %s", err, proxy.EUNAVAILABLE)
		}
		for _, m := range sessions {
			checkBack(t, s.server, m)
		}
		// Each session hung with its host counts one, whether its own
		// pings or the host's found it first; the warm pool's spare, in
		// the same host, may count one more.
		after := healthOf(t, s.URL).Counters
		if hung := after["workers_hung"] - before["workers_hung"]; hung < int64(len(sessions)) || hung > int64(len(sessions))+1 {
			t.Errorf("workers_hung went from %d to %d: want %d more (%d sessions hung with their host, and at most one spare)",
				before["workers_hung"], after["workers_hung"], len(sessions), len(sessions))
		}
	})

	t.Run("closing one session leaves the others in their host", func(t *testing.T) {
		closing, rest := sessions[0], sessions[1:]
		hostOfClosing := s.hostOf(t, closing.id)
		before := map[string]int{}
		for _, m := range rest {
			before[m.id] = s.hostOf(t, m.id)
		}
		// A neighbour's call is in flight in the host while the session
		// closes.
		type answer struct {
			res proxy.CallResult
			err error
		}
		inFlight := make(chan answer, 1)
		go func() {
			res, err := postCall(s.URL, rest[0].id, "browser_evaluate", map[string]string{"function": "() => new Promise(r => setTimeout(() => r('slept through'), 2000))"})
			inFlight <- answer{res, err}
		}()
		var sess proxy.Session
		if code := do(t, "DELETE", s.URL+"/sessions/"+closing.id, nil, &sess); code != http.StatusOK || sess.State != proxy.SessionClosed {
			t.Fatalf("DELETE /sessions/%s = %d %+v", closing.id, code, sess)
		}
		if a := <-inFlight; a.err != nil || a.res.Status != proxy.StatusSuccess || !strings.Contains(a.res.Metadata.Result, "slept through") {
			t.Errorf("a neighbour's call in flight while the session closed: %+v (%v)", a.res, a.err)
		}
		for _, m := range rest {
			res := s.call(t, m.id, "browser_snapshot", nil)
			if res.Status != proxy.StatusSuccess || res.Metadata.Restored || res.Metadata.PageURL != m.url || res.Metadata.PageTitle != m.title() {
				t.Errorf("session %s after its neighbour closed: %s restored=%v at %q titled %q; want it untouched at %q titled %q",
					m.id, res.Status, res.Metadata.Restored, res.Metadata.PageURL, res.Metadata.PageTitle, m.url, m.title())
			}
			if now := s.hostOf(t, m.id); now != before[m.id] {
				t.Errorf("session %s moved from host %d to %d when its neighbour closed", m.id, before[m.id], now)
			}
			if before[m.id] == hostOfClosing && !proctest.Alive(hostOfClosing) {
				t.Errorf("host %d ended with one of its sessions", hostOfClosing)
			}
		}
	})
}

// TestHostedSessionsKeepTheirOwnSettings: sessions of one host each see
// the browser options they were created with, and a login profile saved
// from one hosted session signs in a new one.
func TestHostedSessionsKeepTheirOwnSettings(t *testing.T) {
	s := startServer(t, "", hostedEnv(4, nil))
	probe := probeSite(t)
	iphone := device(t, "iPhone 15")

	small := proxy.BrowserOptions{Viewport: &proxy.Viewport{Width: 640, Height: 480}, UserAgent: "HostedProbe/1.0 (e2e)",
		Locale: "fr-FR", Timezone: "Asia/Tokyo", ColorScheme: "dark"}
	bodies := []any{small, map[string]any{"device": "iPhone 15", "locale": "ja-JP"}, nil}
	// Created at the same time, into one host: none may take another's
	// shape.
	ids := make([]string, len(bodies))
	codes := make([]int, len(bodies))
	var wg sync.WaitGroup
	for i, body := range bodies {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var sess proxy.Session
			codes[i], sess, _ = createWith(t, s, body)
			ids[i] = sess.ID
		}()
	}
	wg.Wait()
	if diff := cmp.Diff([]int{http.StatusCreated, http.StatusCreated, http.StatusCreated}, codes); diff != "" {
		t.Fatalf("POST /sessions (-want +got):\n%s", diff)
	}
	host := s.hostOf(t, ids[0])
	for _, id := range ids[1:] {
		if got := s.hostOf(t, id); got != host {
			t.Fatalf("sessions in hosts %d and %d: with room for four, three share one", host, got)
		}
	}

	t.Run("each session of the host sees its own options", func(t *testing.T) {
		first := s.look(t, ids[0], probe)
		want := seen{Width: 640, Height: 480, Language: "fr-FR", Zone: "Asia/Tokyo", Scheme: "dark", UserAgent: small.UserAgent}
		if diff := cmp.Diff(want, first); diff != "" {
			t.Errorf("the session with a viewport sees (-want +got):\n%s", diff)
		}
		phone := s.look(t, ids[1], probe)
		if phone.Width != iphone.Viewport.Width || phone.Height != iphone.Viewport.Height || phone.UserAgent != iphone.UserAgent || phone.Touch == 0 || phone.Language != "ja-JP" {
			t.Errorf("the iPhone 15 session sees %+v; want %+v with touch and ja-JP", phone, iphone)
		}
		plain := s.look(t, ids[2], probe)
		if plain.Width == 640 || plain.Width == iphone.Viewport.Width || plain.Language == "fr-FR" || plain.Language == "ja-JP" ||
			plain.UserAgent == small.UserAgent || plain.UserAgent == iphone.UserAgent || plain.Touch != 0 || plain.Scheme == "dark" {
			t.Errorf("the session without options sees %+v: shaped like another of its host", plain)
		}
		if diff := cmp.Diff(first, s.look(t, ids[0], probe)); diff != "" {
			t.Errorf("the first session, after the others looked (-before +after):\n%s", diff)
		}
	})

	t.Run("a profile saved from a hosted session signs in a new one", func(t *testing.T) {
		login := newLoginSite(t)
		src := dialMCP(t, s.URL+"/mcp")
		login.signIn(src)
		if got, want := login.status(src, ""), login.signedIn(1, "none"); got != want {
			t.Fatalf("after signing in: %q, want %q", got, want)
		}
		s.hostOf(t, src.defaultSession())
		if saved := src.callText("save_profile", map[string]any{"name": "hosted"}); !strings.Contains(saved, "hosted") {
			t.Fatalf("save_profile answered %q", saved)
		}
		m := dialMCP(t, s.URL+"/mcp")
		id := createProfileSession(t, m, "hosted", false)
		if got, want := login.status(m, id), login.signedIn(1, "none"); got != want {
			t.Errorf("a session from the profile: %q, want %q", got, want)
		}
		s.hostOf(t, id)
		other := dialMCP(t, s.URL+"/mcp")
		if got, want := login.status(other, ""), "signed-out ls=none idb=none mark=none"; got != want {
			t.Errorf("a hosted session without the profile: %q, want %q", got, want)
		}
	})
}

// TestHostedIdleSuspendLeavesItsNeighbour: of two sessions in one host,
// the idle one is suspended while the other keeps working in the host;
// the suspended one resumes in a host with its state.
func TestHostedIdleSuspendLeavesItsNeighbour(t *testing.T) {
	pages := site(t)
	s := startServer(t, "", hostedEnv(4, map[string]string{"PROXY_SESSION_IDLE_TIMEOUT": "10s"}))
	db := openRO(t, s.DBPath)
	idleID, busyID := s.createSession(t), s.createSession(t)
	idle := mark(t, s, pages, idleID, "idle-"+isoToken()[:8])
	host := s.hostOf(t, idle.id)
	busy := mark(t, s, pages, busyID, "busy-"+isoToken()[:8])
	if got := s.hostOf(t, busy.id); got != host {
		t.Fatalf("sessions in hosts %d and %d: with room for four, two share one", host, got)
	}

	// busy calls back to back, so that it is never idle.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var problems []string
	calls := 0
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			calls++
			res, err := postCall(s.URL, busy.id, "browser_snapshot", nil)
			switch {
			case err != nil:
				problems = append(problems, err.Error())
			case res.Status != proxy.StatusSuccess || res.Metadata.Restored || res.Metadata.PageTitle != busy.title():
				problems = append(problems, fmt.Sprintf("%s restored=%v titled %q", res.Status, res.Metadata.Restored, res.Metadata.PageTitle))
			}
		}
	}()
	waitStateSaved(t, db, idle.id, idle.url)
	deadline := time.Now().Add(2 * time.Minute)
	sess := s.getSession(t, idle.id)
	for sess.State != proxy.SessionSuspended && time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond)
		sess = s.getSession(t, idle.id)
	}
	if sess.State != proxy.SessionSuspended || sess.WorkerPID != 0 {
		t.Fatalf("the idle session is %s with worker %d, want suspended without one", sess.State, sess.WorkerPID)
	}
	if !proctest.Alive(host) {
		t.Errorf("the host %d ended with its idle session's suspension", host)
	}
	if got := s.getSession(t, busy.id); got.State != proxy.SessionActive || got.WorkerPID != host {
		t.Errorf("the busy session is %s in %d while its neighbour was suspended; want active in host %d", got.State, got.WorkerPID, host)
	}
	close(stop)
	wg.Wait()
	if calls == 0 || len(problems) > 0 {
		t.Errorf("the busy session's %d calls while its neighbour was suspended: %q", calls, problems)
	}

	var r struct {
		proxy.Session
		Restored bool `json:"restored"`
	}
	if code := do(t, "POST", s.URL+"/sessions/"+idle.id+"/resume", nil, &r); code != http.StatusOK || r.State != proxy.SessionActive || !r.Restored {
		t.Fatalf("resume of the suspended session = %d %s restored=%v, want active and restored", code, r.State, r.Restored)
	}
	s.hostOf(t, idle.id)
	if got := s.call(t, idle.id, "browser_snapshot", nil); got.Metadata.PageURL != idle.url || got.Metadata.PageTitle != idle.title() {
		t.Errorf("after resuming, at %q titled %q; want %q titled %q", got.Metadata.PageURL, got.Metadata.PageTitle, idle.url, idle.title())
	}
}

// postCall is POST /call without a testing.T, for a goroutine.
func postCall(base, id, tool string, params any) (proxy.CallResult, error) {
	var res proxy.CallResult
	body, err := json.Marshal(map[string]any{"session_id": id, "tool": tool, "params": params})
	if err != nil {
		return res, err
	}
	resp, err := http.Post(base+"/call", "application/json", bytes.NewReader(body))
	if err != nil {
		return res, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return res, err
	}
	if resp.StatusCode != http.StatusOK {
		return res, fmt.Errorf("POST /call %s = %d %s", tool, resp.StatusCode, raw)
	}
	return res, json.Unmarshal(raw, &res)
}

// colourSite serves pages of one colour each: /colour?rgb=r,g,b.
func colourSite(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rgb := r.URL.Query().Get("rgb")
		page(w, "colour "+rgb, `<style>html,body{margin:0;height:100%;background:rgb(`+rgb+`)}</style><p>&nbsp;</p>`)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// liveColour reads the first frame of session id's live view and returns
// the colour at its middle.
func liveColour(t *testing.T, s *server, id string) [3]int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(s.URL, "http")+"/sessions/"+id+"/live", nil)
	if err != nil {
		t.Fatalf("live view of %s: %v", id, err)
	}
	defer ws.CloseNow()
	ws.SetReadLimit(32 << 20)
	for {
		_, b, err := ws.Read(ctx)
		if err != nil {
			t.Fatalf("live view of %s: waiting for a frame: %v", id, err)
		}
		var m struct {
			Type string `json:"type"`
			Data string `json:"data"`
		}
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		if m.Type != "frame" {
			continue
		}
		data, err := base64.StdEncoding.DecodeString(m.Data)
		if err != nil {
			t.Fatal(err)
		}
		img, err := jpeg.Decode(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("live view of %s: a frame that is no JPEG: %v", id, err)
		}
		box := img.Bounds()
		r, g, bl, _ := img.At((box.Min.X+box.Max.X)/2, (box.Min.Y+box.Max.Y)/2).RGBA()
		return [3]int{int(r >> 8), int(g >> 8), int(bl >> 8)}
	}
}

// near reports whether two colours are within JPEG's error of each other.
func near(a, b [3]int) bool {
	for i := range a {
		if d := a[i] - b[i]; d > 40 || d < -40 {
			return false
		}
	}
	return true
}

// TestHostedMetricsAndLiveView: with two sessions in one host, /metrics
// counts their calls and gives each its share of the host's memory, and
// the live view and the pages of each show that session's page only.
func TestHostedMetricsAndLiveView(t *testing.T) {
	s := startServer(t, "", hostedEnv(4, map[string]string{"PROXY_PING_INTERVAL": "1s"}))
	colours := colourSite(t)
	before := metricsOf(t, s)
	type coloured struct {
		id, url string
		rgb     [3]int
	}
	sessions := []*coloured{{rgb: [3]int{200, 30, 30}}, {rgb: [3]int{30, 60, 200}}}
	for _, c := range sessions {
		c.id = s.createSession(t)
		c.url = fmt.Sprintf("%s/colour?rgb=%d,%d,%d", colours, c.rgb[0], c.rgb[1], c.rgb[2])
		if res := s.call(t, c.id, "browser_navigate", map[string]string{"url": c.url}); res.Status != proxy.StatusSuccess {
			t.Fatalf("navigate: %+v", res)
		}
	}
	host := s.hostOf(t, sessions[0].id)
	if got := s.hostOf(t, sessions[1].id); got != host {
		t.Fatalf("sessions in hosts %d and %d: with room for four, two share one", host, got)
	}

	t.Run("metrics", func(t *testing.T) {
		after := metricsOf(t, s)
		for _, c := range []struct {
			name   string
			labels map[string]string
			delta  float64
		}{
			{"pwproxy_tool_calls_total", map[string]string{"tool": "browser_navigate", "status": "success"}, 2},
			{"pwproxy_sessions_created_total", nil, 2},
			{"pwproxy_sessions", map[string]string{"state": "active"}, 2},
		} {
			if d := sample(after, c.name, c.labels) - sample(before, c.name, c.labels); d != c.delta {
				t.Errorf("%s%v moved by %v, want %v", c.name, c.labels, d, c.delta)
			}
		}
		var shares float64
		for _, c := range sessions {
			s.waitMemory(t, c.id, "no worker memory", func(m proxy.SessionMemory) bool { return m.WorkerBytes > 0 })
			got := sample(metricsOf(t, s), "pwproxy_session_memory_bytes", map[string]string{"session_id": c.id, "kind": "worker"})
			if got <= 0 {
				t.Errorf("pwproxy_session_memory_bytes{session_id=%s,kind=worker} = %.0f, want its share of the host", c.id, got)
			}
			shares += got
		}
		// Each session's worker memory is a share of the host's, not the
		// whole host counted once per session; the margin is for the host
		// moving between the reads.
		if rss := hostRSS(t, host); shares > 1.5*float64(rss) {
			t.Errorf("the two sessions' worker memory sums to %.0f bytes; the host they share has %d resident", shares, rss)
		}
	})

	t.Run("live view and pages", func(t *testing.T) {
		for _, c := range sessions {
			if got := liveColour(t, s, c.id); !near(got, c.rgb) {
				t.Errorf("the live view of session %s shows %v, want its page's %v", c.id, got, c.rgb)
			}
			var pages struct {
				Pages []struct {
					URL  string `json:"url"`
					Live bool   `json:"live"`
				} `json:"pages"`
			}
			if code := do(t, "GET", s.URL+"/sessions/"+c.id+"/pages", nil, &pages); code != http.StatusOK {
				t.Fatalf("GET /sessions/%s/pages = %d", c.id, code)
			}
			if len(pages.Pages) != 1 || pages.Pages[0].URL != c.url || !pages.Pages[0].Live {
				t.Errorf("GET /sessions/%s/pages = %+v, want its one live page %s", c.id, pages.Pages, c.url)
			}
		}
	})
}

// hostRSS is the resident memory of process pid, from /proc.
func hostRSS(t *testing.T, pid int) int64 {
	t.Helper()
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				t.Fatalf("VmRSS %q: %v", v, err)
			}
			return kb << 10
		}
	}
	t.Fatalf("no VmRSS for %d", pid)
	return 0
}
