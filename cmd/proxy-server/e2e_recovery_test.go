package main

// Crash recovery against the real binaries (issue 4): kill -9 of the
// server, of a worker, of Chromium; a hung worker; a worker that keeps
// crashing; calls that arrive during a restart.

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/proctest"
)

// binaryServer is proxy-server running as its own process.
type binaryServer struct {
	*server
	cmd  *exec.Cmd
	mu   sync.Mutex
	logs strings.Builder
	// exited is closed once the process was reaped; err is then its status.
	exited chan struct{}
	err    error
}

func (b *binaryServer) log() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.logs.String()
}

// runBinary starts the real proxy-server on a free port with the database
// at dbPath; env holds PROXY_* overrides.
func runBinary(t *testing.T, dbPath string, env map[string]string) *binaryServer {
	t.Helper()
	requireBrowser(t)
	serverBin, _ := binaries(t)
	cmd := exec.Command(serverBin, "serve", "-port", "0", "-db", dbPath, "-log-level", "debug")
	cmd.Env = append(os.Environ(), "PROXY_WARM_POOL=0")
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	b := &binaryServer{server: &server{DBPath: dbPath}, cmd: cmd, exited: make(chan struct{})}
	addrRe := regexp.MustCompile(`proxy-server listening"? addr=(\S+)`)
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			b.mu.Lock()
			b.logs.WriteString(sc.Text() + "\n")
			b.mu.Unlock()
			if m := addrRe.FindStringSubmatch(sc.Text()); m != nil {
				addr <- m[1]
			}
		}
		b.err = cmd.Wait()
		close(b.exited)
	}()
	t.Cleanup(func() {
		select {
		case <-b.exited:
		default:
			_ = cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-b.exited:
			case <-time.After(15 * time.Second):
				_ = cmd.Process.Kill()
				<-b.exited
			}
		}
		if t.Failed() {
			t.Logf("proxy-server log:\n%s", b.log())
		}
	})
	select {
	case a := <-addr:
		b.URL = "http://" + a
	case <-time.After(60 * time.Second):
		t.Fatalf("proxy-server did not start:\n%s", b.log())
	}
	return b
}

// kill9 kills the server with SIGKILL and waits for it.
func (b *binaryServer) kill9(t *testing.T) {
	t.Helper()
	if err := b.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-b.exited:
	case <-time.After(10 * time.Second):
		t.Fatal("proxy-server survived SIGKILL")
	}
}

// openRO opens the database read-only, beside a running server.
func openRO(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro&_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// rowCounts counts the rows of every table that holds history.
func rowCounts(t *testing.T, db *sql.DB) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, table := range []string{"sessions", "requests", "responses", "console_logs", "diff_cursors", "session_state"} {
		var n int
		if err := db.QueryRow("SELECT count(*) FROM " + table).Scan(&n); err != nil {
			t.Fatalf("counting %s: %v", table, err)
		}
		out[table] = n
	}
	return out
}

// waitStateSaved waits until the session's saved state has url.
func waitStateSaved(t *testing.T, db *sql.DB, id, url string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		var got string
		err := db.QueryRow("SELECT url FROM session_state WHERE session_id = ?", id).Scan(&got)
		if err == nil && got == url {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("session %s: saved state url = %q (%v), want %q", id, got, err, url)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// getSession reads GET /sessions/{id}.
func (s *server) getSession(t *testing.T, id string) proxy.Session {
	t.Helper()
	var sess proxy.Session
	if code := do(t, "GET", s.URL+"/sessions/"+id, nil, &sess); code != http.StatusOK {
		t.Fatalf("GET /sessions/%s = %d", id, code)
	}
	return sess
}

// waitWorker waits until the session has a live worker other than old.
func (s *server) waitWorker(t *testing.T, id string, old int, within time.Duration) int {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		sess := s.getSession(t, id)
		if sess.WorkerPID != 0 && sess.WorkerPID != old {
			return sess.WorkerPID
		}
		if time.Now().After(deadline) {
			t.Fatalf("session %s: no new worker within %s (state %s, worker %d)", id, within, sess.State, sess.WorkerPID)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// prepare gives a session a page with localStorage and a cookie set and
// waits until that state is saved.
func prepare(t *testing.T, s *server, db *sql.DB, pages, id, value string) {
	t.Helper()
	s.call(t, id, "browser_navigate", map[string]string{"url": pages + "/set.html?v=" + value})
	got := s.call(t, id, "browser_navigate", map[string]string{"url": pages + "/read.html"})
	if want := "ls=" + value + ";ck=who=" + value; got.Metadata.PageTitle != want {
		t.Fatalf("set-up: %q, want %q", got.Metadata.PageTitle, want)
	}
	waitStateSaved(t, db, id, pages+"/read.html")
}

// checkRestored makes the next call and checks the state came back.
func checkRestored(t *testing.T, s *server, pages, id, value string) {
	t.Helper()
	res := s.call(t, id, "browser_snapshot", nil)
	if !res.Metadata.Restored {
		t.Errorf("session %s: first call after recovery has restored=false", id)
	}
	if want := "ls=" + value + ";ck=who=" + value; res.Metadata.PageURL != pages+"/read.html" || res.Metadata.PageTitle != want {
		t.Errorf("session %s came back at %q titled %q; want read.html titled %q", id, res.Metadata.PageURL, res.Metadata.PageTitle, want)
	}
}

func TestKill9ServerThenRestart(t *testing.T) {
	pages := site(t)
	dbPath := filepath.Join(t.TempDir(), "p.db")
	s := runBinary(t, dbPath, nil)
	db := openRO(t, dbPath)
	id := s.createSession(t)
	prepare(t, s.server, db, pages, id, "nine")
	ref := s.call(t, id, "browser_snapshot", nil).RefID
	s.content(t, ref, "") // creates the diff cursor
	before := rowCounts(t, db)
	if before["diff_cursors"] == 0 {
		t.Fatal("set-up: no diff cursor")
	}
	procs := proctest.Descendants(s.cmd.Process.Pid)
	s.kill9(t)
	start := time.Now()
	left := proctest.WaitGone(6*time.Second, func() []proctest.Proc { return proctest.StillAlive(procs) })
	if len(left) > 0 {
		t.Fatalf("6 s after kill -9 of proxy-server these still run: %v", left)
	}
	t.Logf("%d workers and browser processes gone %s after kill -9", len(procs), time.Since(start).Round(time.Millisecond))

	s2 := runBinary(t, dbPath, nil)
	if diff := fmt.Sprint(rowCounts(t, db)); diff != fmt.Sprint(before) {
		t.Errorf("rows after the restart %s, before the kill %s", diff, fmt.Sprint(before))
	}
	if st := s2.getSession(t, id).State; st != proxy.SessionSuspended {
		t.Errorf("after the restart the session is %s, want suspended", st)
	}
	checkRestored(t, s2.server, pages, id, "nine")
	// The diff cursor survived: the same snapshot is unchanged.
	if got := s2.content(t, ref, ""); got != "" {
		t.Errorf("second read of %s after the restart returned %d bytes, want none (cursor kept)", ref, len(got))
	}
}

func TestKill9WorkerAndBrowser(t *testing.T) {
	pages := site(t)
	s := startServer(t, "", nil)
	db := openRO(t, s.DBPath)

	t.Run("worker", func(t *testing.T) {
		id := s.createSession(t)
		prepare(t, s, db, pages, id, "worker")
		pid := s.getSession(t, id).WorkerPID
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		// The supervisor replaces it without waiting for a call.
		s.waitWorker(t, id, pid, 30*time.Second)
		checkRestored(t, s, pages, id, "worker")
	})

	t.Run("chromium", func(t *testing.T) {
		a, b := s.createSession(t), s.createSession(t)
		prepare(t, s, db, pages, a, "alpha")
		prepare(t, s, db, pages, b, "beta")
		pa, pb := s.getSession(t, a).WorkerPID, s.getSession(t, b).WorkerPID
		browser := mainChromium(t)
		if err := syscall.Kill(browser, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		// Every worker on the dead browser is replaced, on a new browser.
		s.waitWorker(t, a, pa, 60*time.Second)
		s.waitWorker(t, b, pb, 60*time.Second)
		checkRestored(t, s, pages, a, "alpha")
		checkRestored(t, s, pages, b, "beta")
		if nb := mainChromium(t); nb == browser {
			t.Errorf("chromium %d still the browser", nb)
		}
	})
}

// mainChromium finds the one Chromium browser process below this test: a
// chromium whose parent is not chromium (helpers carry --type=, and a child
// between fork and exec still shows the browser's command line). It polls
// briefly, since a relaunch or an exiting helper can make the count
// momentarily other than one.
func mainChromium(t *testing.T) int {
	t.Helper()
	var found []string
	deadline := time.Now().Add(5 * time.Second)
	for {
		found = found[:0]
		var pids []int
		procs := proctest.Descendants(os.Getpid())
		comm := map[int]string{}
		for _, p := range procs {
			comm[p.PID] = p.Comm
		}
		for _, p := range procs {
			if !strings.HasPrefix(p.Comm, "chromium") || strings.HasPrefix(comm[p.PPID], "chromium") {
				continue
			}
			cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", p.PID))
			if strings.Contains(string(cmdline), "--type=") {
				continue
			}
			pids = append(pids, p.PID)
			found = append(found, fmt.Sprintf("%v %q", p, strings.ReplaceAll(string(cmdline), "\x00", " ")))
		}
		if len(pids) == 1 {
			return pids[0]
		}
		if time.Now().After(deadline) {
			t.Fatalf("want one chromium browser process, found %d: %v", len(pids), found)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func TestHungWorkerIsReplaced(t *testing.T) {
	pages := site(t)
	s := startServer(t, "", map[string]string{"PROXY_PING_INTERVAL": "1s"})
	db := openRO(t, s.DBPath)
	id := s.createSession(t)
	prepare(t, s, db, pages, id, "stopped")
	pid := s.getSession(t, id).WorkerPID
	stopped := proctest.Group(pid)
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	s.waitWorker(t, id, pid, 30*time.Second)
	t.Logf("stopped worker replaced after %s", time.Since(start).Round(time.Millisecond))
	if left := proctest.WaitGone(5*time.Second, func() []proctest.Proc { return proctest.StillAlive(stopped) }); len(left) > 0 {
		t.Errorf("the stopped worker's processes still exist: %v", left)
	}
	checkRestored(t, s, pages, id, "stopped")
}

func TestRepeatedCrashesFailOneSessionOnly(t *testing.T) {
	pages := site(t)
	s := startServer(t, "", nil)
	id, other := s.createSession(t), s.createSession(t)
	s.call(t, other, "browser_navigate", map[string]string{"url": pages + "/index.html"})
	s.call(t, id, "browser_navigate", map[string]string{"url": pages + "/index.html"})
	pid := s.getSession(t, id).WorkerPID
	for i := 1; i <= 3; i++ {
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		pid = s.waitWorker(t, id, pid, 60*time.Second)
		t.Logf("restart %d: worker %d", i, pid)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for s.getSession(t, id).State != proxy.SessionError && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	var eb struct {
		Error     string `json:"error"`
		Retryable bool   `json:"retryable"`
	}
	code := do(t, "POST", s.URL+"/call", map[string]any{"session_id": id, "tool": "browser_snapshot"}, &eb)
	if code != http.StatusServiceUnavailable || eb.Error != proxy.EUNAVAILABLE || !eb.Retryable {
		t.Errorf("call after the fourth crash = %d %+v; want 503 %s retryable", code, eb, proxy.EUNAVAILABLE)
	}
	if res := s.call(t, other, "browser_snapshot", nil); res.Status != proxy.StatusSuccess {
		t.Errorf("the other session: %+v", res)
	}
}

func TestCallsDuringRestartRunOnce(t *testing.T) {
	pages := site(t)
	s := startServer(t, "", map[string]string{"PROXY_INLINE_RESULT_MAX": "100"})
	id := s.createSession(t)
	nav := s.call(t, id, "browser_navigate", map[string]string{"url": pages + "/index.html"})
	waitStateSaved(t, openRO(t, s.DBPath), id, nav.Metadata.PageURL)
	pid := s.getSession(t, id).WorkerPID
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// The death is noticed (no worker) before the calls go out; the first
	// restart waits 1 s, so they arrive while it is under way.
	deadline := time.Now().Add(10 * time.Second)
	for s.getSession(t, id).WorkerPID == pid && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	const n = 3
	counts := make(chan string, n)
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			var res proxy.CallResult
			var raw string
			code := do(t, "POST", s.URL+"/call", map[string]any{"session_id": id, "tool": "browser_evaluate",
				"params": map[string]string{"function": "() => { const n = Number(localStorage.getItem('n') || 0) + 1; localStorage.setItem('n', n); return n; }"}}, &raw)
			if code != http.StatusOK {
				t.Errorf("call during the restart = %d: %s", code, raw)
				return
			}
			if err := json.Unmarshal([]byte(raw), &res); err != nil {
				t.Error(err)
				return
			}
			counts <- strings.TrimSpace(res.Metadata.Result)
		})
	}
	wg.Wait()
	close(counts)
	seen := map[string]bool{}
	for c := range counts {
		seen[c] = true
	}
	if !seen["1"] || !seen["2"] || !seen["3"] {
		t.Errorf("counter values seen %v; want 1, 2 and 3 once each (no call lost or doubled)", seen)
	}
	var rows int
	if err := openRO(t, s.DBPath).QueryRowContext(context.Background(), "SELECT count(*) FROM requests WHERE session_id = ? AND tool_name = 'browser_evaluate'", id).Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if rows != n {
		t.Errorf("%d browser_evaluate requests recorded; want %d", rows, n)
	}
}
