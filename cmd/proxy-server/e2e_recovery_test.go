//go:build unix

package main

// Crash recovery against the real binaries: kill -9 of the
// server, of a worker, of Chromium; a hung worker; a worker that keeps
// crashing; calls that arrive during a restart.

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptrace"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	_ "modernc.org/sqlite"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/proctest"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/store/seal"
)

// binaryServer is proxy-server running as its own process.
type binaryServer struct {
	*server
	proc *proctest.Server
	cmd  *exec.Cmd
	logs lockedWriter
	buf  strings.Builder
	// exited is closed once the process was reaped; proc.Err() is then
	// its status.
	exited <-chan struct{}
}

func (b *binaryServer) log() string {
	b.logs.mu.Lock()
	defer b.logs.mu.Unlock()
	return b.buf.String()
}

// runBinary starts the real proxy-server on a free port with the database
// at dbPath; env holds PROXY_* overrides.
func runBinary(t *testing.T, dbPath string, env map[string]string) *binaryServer {
	t.Helper()
	requireBrowser(t)
	serverBin, _ := binaries(t)
	environ := append(os.Environ(), "PROXY_WARM_POOL=0")
	for k, v := range env {
		environ = append(environ, k+"="+v)
	}
	b := &binaryServer{server: &server{DBPath: dbPath}}
	b.logs.w = &b.buf
	b.readLog = b.log
	proc, err := proctest.StartServer(proctest.ServerConfig{
		Binary: serverBin, Args: []string{"-port", "0", "-db", dbPath, "-log-level", "debug"},
		Env: environ, Log: &b.logs,
	})
	if err != nil {
		t.Fatal(err)
	}
	b.proc, b.cmd, b.exited = proc, proc.Cmd, proc.Done()
	t.Cleanup(func() {
		proc.Stop(15 * time.Second)
		if t.Failed() {
			t.Logf("proxy-server log:\n%s", b.log())
		}
	})
	addr, err := proc.WaitListening(context.Background(), 60*time.Second)
	if err != nil {
		t.Fatalf("proxy-server did not start (%v):\n%s", err, b.log())
	}
	b.URL = "http://" + addr
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

// restartChanges are the columns a restart changes on purpose, left out
// of dumpRows: sessions.state, since the restart suspends the sessions it
// finds active (they have no worker any more). Nothing else is written
// between the dump before a kill -9 and the one after the restart: no call
// is made, last_activity moves only with calls, session_state.saved_at only
// with saves (none at a kill -9), and diff cursors only with reads.
var restartChanges = map[string]bool{"sessions.state": true}

// dumpRows reads every row of every table (SQLite's own sqlite_* tables
// aside: statistics a restart may refresh) as text, table by table in rowid
// order, without the restartChanges columns.
func dumpRows(t *testing.T, db *sql.DB) map[string][]string {
	t.Helper()
	names, err := db.Query("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name")
	if err != nil {
		t.Fatal(err)
	}
	var tables []string
	for names.Next() {
		var n string
		if err := names.Scan(&n); err != nil {
			t.Fatal(err)
		}
		tables = append(tables, n)
	}
	if err := names.Close(); err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, table := range tables {
		rows, err := db.Query(`SELECT * FROM "` + table + `" ORDER BY rowid`)
		if err != nil {
			t.Fatalf("reading %s: %v", table, err)
		}
		cols, err := rows.Columns()
		if err != nil {
			t.Fatal(err)
		}
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		out[table] = []string{}
		for rows.Next() {
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatalf("reading %s: %v", table, err)
			}
			var fields []string
			for i, c := range cols {
				if restartChanges[table+"."+c] {
					continue
				}
				v := vals[i]
				if b, ok := v.([]byte); ok {
					v = string(b)
				}
				fields = append(fields, fmt.Sprintf("%s=%q", c, fmt.Sprint(v)))
			}
			out[table] = append(out[table], strings.Join(fields, " "))
		}
		if err := rows.Err(); err != nil {
			t.Fatalf("reading %s: %v", table, err)
		}
		rows.Close()
	}
	return out
}

// health is GET /health's answer.
type health struct {
	Status       string
	Checks       map[string]string
	Counters     map[string]int64
	RestartsLeft map[string]int `json:"restarts_left"`
}

// healthOf reads GET /health (200 or 503: the body says which checks fail).
func healthOf(t *testing.T, base string) health {
	t.Helper()
	var h health
	if code := do(t, "GET", base+"/health", nil, &h); code != http.StatusOK && code != http.StatusServiceUnavailable {
		t.Fatalf("/health = %d", code)
	}
	return h
}

// checkHealthKeys checks that /health reports every check, each "ok" or
// "error: …".
func checkHealthKeys(t *testing.T, h health) {
	t.Helper()
	var keys []string
	for k, v := range h.Checks {
		keys = append(keys, k)
		if v != "ok" && !strings.HasPrefix(v, "error: ") {
			t.Errorf("/health check %s = %q, want ok or error: …", k, v)
		}
	}
	sort.Strings(keys)
	want := []string{"browser", "circuit_breaker", "database", "host_memory", "sessions", "upstream", "workers"}
	if diff := cmp.Diff(want, keys); diff != "" {
		t.Errorf("/health checks (-want +got):\n%s", diff)
	}
}

// counterDeltas is after less before for the supervision counters.
func counterDeltas(before, after map[string]int64) map[string]int64 {
	out := map[string]int64{}
	for _, k := range []string{"worker_crashes", "worker_restarts", "workers_hung", "sessions_restored", "sessions_failed"} {
		out[k] = after[k] - before[k]
	}
	return out
}

// waitReaped waits until pid is gone from /proc: dead and reaped. Not just
// a zombie: a SIGKILLed node is multi-threaded, and its leader shows as a
// zombie while its other threads still exit, its stdin still open (tens of
// milliseconds). A call written into that pipe then cannot be told from
// one the worker was running when it died, which is rightly not replayed
// (503); once the process is gone a call is known not to have reached it
// and goes to the replacement.
func waitReaped(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); errors.Is(err, fs.ErrNotExist) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("process %d still in /proc 10 s after SIGKILL", pid)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// waitStateSaved waits until the session's saved state has url.
func waitStateSaved(t *testing.T, db *sql.DB, id, url string) {
	t.Helper()
	waitSavedState(t, db, id, "url "+url, func(plain []byte) bool {
		var saved struct{ URL string }
		return json.Unmarshal(plain, &saved) == nil && saved.URL == url
	})
}

// waitSavedState waits until the session's saved state satisfies ok. The
// state is sealed: it is opened with the key file beside the database, as
// the server opens it.
func waitSavedState(t *testing.T, db *sql.DB, id, what string, ok func(plain []byte) bool) {
	t.Helper()
	var path string
	if err := db.QueryRow("SELECT file FROM pragma_database_list WHERE name = 'main'").Scan(&path); err != nil {
		t.Fatal(err)
	}
	key, err := seal.KeyFile(path + ".key")
	if err != nil {
		t.Fatal(err)
	}
	box, err := seal.New(key)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		var blob, plain []byte
		err := db.QueryRow("SELECT state FROM session_state WHERE session_id = ?", id).Scan(&blob)
		if err == nil {
			// The row the store binds a saved state to.
			plain, err = box.Open(seal.Row("session_state", id), blob)
		}
		if err == nil && ok(plain) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("session %s: no saved state with %s within 20s (%v)", id, what, err)
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

// restartsOf counts the restarts on session id's timeline.
func restartsOf(t *testing.T, db *sql.DB, id string) int {
	t.Helper()
	var n int
	if err := db.QueryRow("SELECT count(*) FROM session_events WHERE session_id = ? AND kind = ?", id, proxy.EventRestarted).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// waitRestarted waits until session id has more than n restarts.
func waitRestarted(t *testing.T, db *sql.DB, id string, n int, within time.Duration) {
	t.Helper()
	for deadline := time.Now().Add(within); restartsOf(t, db, id) <= n; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("session %s: not restarted within %s", id, within)
		}
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
	// The servers' TMPDIR: whatever they and their children write there
	// must be gone once the restarted server has stopped. Short, for
	// Chromium's sockets below it.
	tmp, err := os.MkdirTemp("", "k")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(tmp) })
	t.Cleanup(func() {
		if left, _ := filepath.Glob(filepath.Join(tmp, "*")); len(left) > 0 {
			t.Errorf("left in TMPDIR after the restarted server stopped: %v", left)
		}
	})
	env := map[string]string{"TMPDIR": tmp}
	s := runBinary(t, dbPath, env)
	db := openRO(t, dbPath)
	id := s.createSession(t)
	prepare(t, s.server, db, pages, id, "nine")
	ref := s.call(t, id, "browser_snapshot", nil).RefID
	s.content(t, ref, "") // creates the diff cursor
	before := dumpRows(t, db)
	for _, table := range []string{"sessions", "requests", "responses", "diff_cursors", "session_state"} {
		if len(before[table]) == 0 {
			t.Fatalf("set-up: no rows in %s", table)
		}
	}
	workerPID := s.getSession(t, id).WorkerPID
	procs := proctest.Descendants(s.cmd.Process.Pid)
	// What must be gone includes at least the session's node worker and
	// the Chromium browser.
	var workers, browsers []proctest.Proc
	browser := map[int]bool{}
	for _, pid := range browserPIDs(procs) {
		browser[pid] = true
	}
	for _, p := range procs {
		switch {
		case p.PID == workerPID && p.Comm == "node":
			workers = append(workers, p)
		case browser[p.PID]:
			browsers = append(browsers, p)
		}
	}
	if len(workers) != 1 || len(browsers) != 1 {
		t.Fatalf("set-up: want the session's node worker %d and one chromium browser under proxy-server, found %v", workerPID, procs)
	}
	var rec struct {
		TempDir string `json:"temp_dir"`
	}
	if b, err := os.ReadFile(filepath.Join(filepath.Dir(dbPath), "proxy-server.pid")); err != nil || json.Unmarshal(b, &rec) != nil || filepath.Dir(rec.TempDir) != tmp {
		t.Fatalf("set-up: pid file names temp dir %q (err %v), want one in %s", rec.TempDir, err, tmp)
	}
	s.kill9(t)
	start := time.Now()
	left := proctest.WaitGone(6*time.Second, func() []proctest.Proc { return proctest.StillAlive(procs) })
	if len(left) > 0 {
		t.Fatalf("6 s after kill -9 of proxy-server these still run: %v", left)
	}
	t.Logf("%d processes (worker %v, browser %v) gone %s after kill -9", len(procs), workers, browsers, time.Since(start).Round(time.Millisecond))
	// What the killed server's children wrote is still there: no one was
	// left to remove it.
	if left, _ := filepath.Glob(filepath.Join(rec.TempDir, "*")); len(left) == 0 {
		t.Fatalf("set-up: nothing in the killed server's temp dir %s", rec.TempDir)
	} else {
		t.Logf("the killed server left %d entries in %s", len(left), rec.TempDir)
	}

	s2 := runBinary(t, dbPath, env)
	if _, err := os.Lstat(rec.TempDir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the killed server's temp dir %s survived the restart: %v", rec.TempDir, err)
	}
	// Every row written before the kill is there, as it was.
	if diff := cmp.Diff(before, dumpRows(t, db)); diff != "" {
		t.Errorf("rows after the restart differ from those before the kill (-before +after):\n%s", diff)
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

	// restartsLeft is a session's restart budget as GET /sessions/{id} shows it.
	restartsLeft := func(t *testing.T, id string) int {
		t.Helper()
		sess := s.getSession(t, id)
		if sess.RestartsLeft == nil {
			t.Fatalf("GET /sessions/%s shows no restarts_left: %+v", id, sess)
		}
		return *sess.RestartsLeft
	}
	var crashed string // the session whose own worker was killed
	t.Run("worker", func(t *testing.T) {
		id := s.createSession(t)
		crashed = id
		prepare(t, s, db, pages, id, "worker")
		before := healthOf(t, s.URL).Counters
		pid := s.getSession(t, id).WorkerPID
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		// The next call goes out as soon as the worker is gone, without
		// waiting for the supervisor's replacement, and still succeeds.
		waitReaped(t, pid)
		checkRestored(t, s, pages, id, "worker")
		h := healthOf(t, s.URL)
		want := map[string]int64{"worker_crashes": 1, "worker_restarts": 1, "sessions_restored": 1, "workers_hung": 0, "sessions_failed": 0}
		if diff := cmp.Diff(want, counterDeltas(before, h.Counters)); diff != "" {
			t.Errorf("counters moved by the kill (-want +got):\n%s", diff)
		}
		checkHealthKeys(t, h)
		if h.Checks["workers"] != "ok" {
			t.Errorf("/health workers = %q after the restart, want ok", h.Checks["workers"])
		}
		// Its own crash used one restart of its budget, and says so.
		if n := restartsLeft(t, id); n != 2 || h.RestartsLeft[id] != 2 {
			t.Errorf("after its worker's kill: restarts_left %d, /health restarts_left %v; want 2 for %s", n, h.RestartsLeft, id)
		}
	})

	t.Run("chromium", func(t *testing.T) {
		a, b := s.createSession(t), s.createSession(t)
		prepare(t, s, db, pages, a, "alpha")
		prepare(t, s, db, pages, b, "beta")
		ra, rb := restartsOf(t, db, a), restartsOf(t, db, b)
		browser := mainChromium(t)
		if err := syscall.Kill(browser, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		// Every worker on the dead browser is replaced, on a new browser
		// (told by the restart, not the pid: a session host outlives the
		// browser, and the new sessions may open in it).
		waitRestarted(t, db, a, ra, 60*time.Second)
		waitRestarted(t, db, b, rb, 60*time.Second)
		checkRestored(t, s, pages, a, "alpha")
		checkRestored(t, s, pages, b, "beta")
		if nb := mainChromium(t); nb == browser {
			t.Errorf("chromium %d still the browser", nb)
		}
		// A browser crash is no crash of the sessions' own: their budgets
		// are as they were.
		for id, want := range map[string]int{a: 3, b: 3, crashed: 2} {
			if id == "" {
				continue // the worker subtest did not run
			}
			if n := restartsLeft(t, id); n != want {
				t.Errorf("session %s after the browser's kill: restarts_left %d, want %d", id, n, want)
			}
		}
		if h := healthOf(t, s.URL); len(h.RestartsLeft) > 1 {
			t.Errorf("/health restarts_left = %v after the browser's kill, want at most the worker-killed session", h.RestartsLeft)
		}
	})
}

// mainChromium finds the one Chromium browser process below this test. It
// polls briefly, since a relaunch or an exiting helper can make the count
// momentarily other than one.
func mainChromium(t *testing.T) int {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		procs := proctest.Descendants(os.Getpid())
		pids := browserPIDs(procs)
		if len(pids) == 1 {
			return pids[0]
		}
		if time.Now().After(deadline) {
			t.Fatalf("want one chromium browser process, found %v among %v", pids, procs)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// browserPIDs are the Chromium browser processes among procs: a chromium
// whose parent is not chromium (helpers carry --type=, and a child between
// fork and exec still shows the browser's command line).
func browserPIDs(procs []proctest.Proc) []int {
	comm := map[int]string{}
	for _, p := range procs {
		comm[p.PID] = p.Comm
	}
	var pids []int
	for _, p := range procs {
		if !strings.HasPrefix(p.Comm, "chromium") || strings.HasPrefix(comm[p.PPID], "chromium") {
			continue
		}
		cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", p.PID))
		if strings.Contains(string(cmdline), "--type=") {
			continue
		}
		pids = append(pids, p.PID)
	}
	return pids
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
	// A worker process per session: the crashes are this session's alone.
	// In a session host they would be its neighbours' too.
	s := startServer(t, "", map[string]string{"PROXY_SESSIONS_PER_WORKER": "1"})
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

// TestCallsDuringRestartRunOnce: calls sent while a killed worker is being
// replaced (they reach the server before the new worker is up) all succeed
// once it is, each run exactly once.
func TestCallsDuringRestartRunOnce(t *testing.T) {
	pages := site(t)
	s := startServer(t, "", map[string]string{"PROXY_INLINE_RESULT_MAX": "100"})
	id := s.createSession(t)
	nav := s.call(t, id, "browser_navigate", map[string]string{"url": pages + "/index.html"})
	waitStateSaved(t, openRO(t, s.DBPath), id, nav.Metadata.PageURL)
	before := healthOf(t, s.URL).Counters
	pid := s.getSession(t, id).WorkerPID
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// The calls go out as soon as the worker is gone; the first restart
	// waits 1 s before it even spawns.
	waitReaped(t, pid)
	const n = 3
	counts := make(chan string, n)
	sent := make(chan struct{}, n)
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			code, raw := postWritten(t, s.URL+"/call", map[string]any{"session_id": id, "tool": "browser_evaluate",
				"params": map[string]string{"function": "() => { const n = Number(localStorage.getItem('n') || 0) + 1; localStorage.setItem('n', n); return n; }"}}, sent)
			if code != http.StatusOK {
				t.Errorf("call during the restart = %d: %s", code, raw)
				return
			}
			var res proxy.CallResult
			if err := json.Unmarshal([]byte(raw), &res); err != nil {
				t.Error(err)
				return
			}
			counts <- strings.TrimSpace(res.Metadata.Result)
		})
	}
	for range n {
		<-sent
	}
	// Every call has reached the server; if the session still has no new
	// worker, they all arrived during the restart.
	if w := s.getSession(t, id).WorkerPID; w != 0 && w != pid {
		t.Errorf("the new worker %d was up before the calls reached the server: they did not arrive during the restart", w)
	}
	wg.Wait()
	close(counts)
	seen := map[string]int{}
	for c := range counts {
		seen[c]++
	}
	if diff := cmp.Diff(map[string]int{"1": 1, "2": 1, "3": 1}, seen); diff != "" {
		t.Errorf("counter values seen (-want +got): each of 1, 2, 3 once means no call lost or doubled\n%s", diff)
	}
	var rows int
	if err := openRO(t, s.DBPath).QueryRowContext(context.Background(), "SELECT count(*) FROM requests WHERE session_id = ? AND tool_name = 'browser_evaluate'", id).Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if rows != n {
		t.Errorf("%d browser_evaluate requests recorded; want %d", rows, n)
	}
	want := map[string]int64{"worker_crashes": 1, "worker_restarts": 1, "sessions_restored": 1, "workers_hung": 0, "sessions_failed": 0}
	if diff := cmp.Diff(want, counterDeltas(before, healthOf(t, s.URL).Counters)); diff != "" {
		t.Errorf("counters moved by the kill (-want +got):\n%s", diff)
	}
}

// postWritten POSTs body as JSON and returns the status and body; it
// signals sent once the request is written to the server (or has failed).
func postWritten(t *testing.T, url string, body any, sent chan<- struct{}) (int, string) {
	var once sync.Once
	signal := func() { once.Do(func() { sent <- struct{}{} }) }
	defer signal()
	data, err := json.Marshal(body)
	if err != nil {
		t.Error(err)
		return 0, ""
	}
	ctx := httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{
		WroteRequest: func(httptrace.WroteRequestInfo) { signal() },
	})
	req, err := http.NewRequestWithContext(ctx, "POST", url, strings.NewReader(string(data)))
	if err != nil {
		t.Error(err)
		return 0, ""
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Errorf("POST %s: %v", url, err)
		return 0, ""
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Error(err)
	}
	return resp.StatusCode, string(raw)
}
