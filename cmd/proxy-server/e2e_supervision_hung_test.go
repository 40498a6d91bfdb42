//go:build unix

package main

// Hung and dying workers against the real binary (runBinary): a stopped
// spare in the warm pool, a stopped session worker, and a call sent while
// a kill -9'd worker is still going down.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	proxy "github.com/playwright-mcp-proxy/playwright-mcp-proxy"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/proctest"
)

// workerPIDs are the @playwright/mcp workers the server b runs (each the
// leader of its own process group), spares and session workers alike.
func (b *binaryServer) workerPIDs() []int {
	var pids []int
	for _, p := range proctest.Descendants(b.cmd.Process.Pid) {
		if p.PID != p.PGID {
			continue
		}
		cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", p.PID))
		if strings.Contains(string(cmdline), "@playwright/mcp") {
			pids = append(pids, p.PID)
		}
	}
	return pids
}

// spare waits until b runs exactly one worker other than those in not,
// in the warm pool (not still starting), and returns it.
func (b *binaryServer) spare(t *testing.T, not ...int) int {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		pids := slices.DeleteFunc(b.workerPIDs(), func(p int) bool { return slices.Contains(not, p) })
		if len(pids) == 1 && regexp.MustCompile(fmt.Sprintf(`msg="spare worker ready" worker_pid=%d\b`, pids[0])).MatchString(b.log()) {
			return pids[0]
		}
		if time.Now().After(deadline) {
			t.Fatalf("want one spare worker besides %v, found %v", not, pids)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// stopGroup SIGSTOPs the process group pgid and returns its members.
func stopGroup(t *testing.T, pgid int) []proctest.Proc {
	t.Helper()
	group := proctest.Group(pgid)
	if err := syscall.Kill(-pgid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	return group
}

// waitLogged waits until b's log has a line matching re.
func (b *binaryServer) waitLogged(t *testing.T, re *regexp.Regexp, within time.Duration) string {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		if m := re.FindString(b.log()); m != "" {
			return m
		}
		if time.Now().After(deadline) {
			t.Fatalf("no log line matching %s within %s", re, within)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// stoppedBy matches the stop of worker pid and the signals it took.
func stoppedBy(pid int) *regexp.Regexp {
	return regexp.MustCompile(fmt.Sprintf(`msg="upstream worker stopped".* pid=%d .*signals="?\[[A-Z ]*\]"?`, pid))
}

// TestSupervisionHungSpareIsReplaced: a spare in the warm pool that stops
// answering is found by the ping loop and killed, and another takes its
// place; one that stops between two pings is caught when handed out. A
// create gets neither, and its first call works.
func TestSupervisionHungSpareIsReplaced(t *testing.T) {
	pages := site(t)
	// A spare that is a process of its own, stopped: hung session hosts are
	// the host ping's.
	s := runBinary(t, filepath.Join(t.TempDir(), "p.db"), map[string]string{"PROXY_WARM_POOL": "1", "PROXY_PING_INTERVAL": "1s", "PROXY_SESSIONS_PER_WORKER": "1"})
	if code := waitHealthy(t, s.URL, 60*time.Second); code != http.StatusOK {
		t.Fatalf("/health = %d", code)
	}

	first := s.spare(t)
	stopped := stopGroup(t, first)
	if left := proctest.WaitGone(30*time.Second, func() []proctest.Proc { return proctest.StillAlive(stopped) }); len(left) > 0 {
		t.Fatalf("the stopped spare %d was not killed: %v", first, left)
	}
	s.waitLogged(t, regexp.MustCompile(fmt.Sprintf(`spare worker does not answer pings; killing it.* worker_pid=%d`, first)), 5*time.Second)

	second := s.spare(t, first)
	stopped = stopGroup(t, second)
	id := s.createSession(t)
	if got := s.getSession(t, id).WorkerPID; got == second {
		t.Fatalf("the session got the stopped spare %d", second)
	}
	if res := s.call(t, id, "browser_navigate", map[string]string{"url": pages + "/index.html"}); res.Status != proxy.StatusSuccess {
		t.Errorf("first call of the session: %+v", res)
	}
	if left := proctest.WaitGone(5*time.Second, func() []proctest.Proc { return proctest.StillAlive(stopped) }); len(left) > 0 {
		t.Errorf("the spare stopped before the create still exists: %v", left)
	}
	s.waitLogged(t, regexp.MustCompile(fmt.Sprintf(`warm worker did not answer its ping when handed out; killing it.* worker_pid=%d`, second)), 5*time.Second)
	if h := healthOf(t, s.URL); h.Counters["workers_hung"] != 2 {
		t.Errorf("workers_hung = %d, want 2", h.Counters["workers_hung"])
	}
}

// TestSupervisionHungWorkerKilledAtOnce: a session worker that stops
// answering is killed with SIGKILL alone, none of the polite steps of a
// stop (stdin closed, SIGTERM), and its whole group is gone.
func TestSupervisionHungWorkerKilledAtOnce(t *testing.T) {
	// The session layer's kill of a worker process of its own; a hung
	// session host is killed by the host's ping.
	s := runBinary(t, filepath.Join(t.TempDir(), "p.db"), map[string]string{"PROXY_PING_INTERVAL": "1s", "PROXY_SESSIONS_PER_WORKER": "1"})
	id := s.createSession(t)
	pid := s.getSession(t, id).WorkerPID
	stopped := stopGroup(t, pid)
	s.waitWorker(t, id, pid, 30*time.Second)
	if left := proctest.WaitGone(5*time.Second, func() []proctest.Proc { return proctest.StillAlive(stopped) }); len(left) > 0 {
		t.Errorf("the stopped worker's processes still exist: %v", left)
	}
	line := s.waitLogged(t, stoppedBy(pid), 5*time.Second)
	if !strings.Contains(line, "killed=true") || !strings.Contains(line, "signals=[SIGKILL]") {
		t.Errorf("the hung worker was not killed at once: %s", line)
	}
}

// TestSupervisionCallRightAfterKill9: a call sent the moment a worker's
// group is sent SIGKILL, while node is still going down, reaches the
// replacement worker with the session's state, not a 503: it cannot have
// run on the dying one.
func TestSupervisionCallRightAfterKill9(t *testing.T) {
	pages := site(t)
	s := runBinary(t, filepath.Join(t.TempDir(), "p.db"), nil)
	db := openRO(t, s.DBPath)
	id := s.createSession(t)
	prepare(t, s.server, db, pages, id, "killed")
	pid := s.getSession(t, id).WorkerPID
	if err := syscall.Kill(-pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	var raw string
	code := do(t, "POST", s.URL+"/call", map[string]any{"session_id": id, "tool": "browser_snapshot"}, &raw)
	if code != http.StatusOK {
		t.Fatalf("call right after kill -9 = %d: %s", code, raw)
	}
	var res proxy.CallResult
	if err := json.Unmarshal([]byte(raw), &res); err != nil {
		t.Fatal(err)
	}
	if want := "ls=killed;ck=who=killed"; !res.Metadata.Restored || res.Metadata.PageTitle != want {
		t.Errorf("call right after kill -9: restored=%v title %q; want restored, %q", res.Metadata.Restored, res.Metadata.PageTitle, want)
	}
	if got := s.getSession(t, id).WorkerPID; got == pid || got == 0 {
		t.Errorf("worker after the call = %d; want a new one (the killed was %d)", got, pid)
	}
}
