//go:build linux

package proxyserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/proctest"
	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/upstream"
)

func TestMain(m *testing.M) {
	// Orphans of anything the tests start re-parent to us, so leaks are found.
	os.Exit(proctest.RunChecked(m, "go"))
}

func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// deadPID is the pid of a process that has exited and been reaped.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

func readRecord(t *testing.T, path string) pidRecord {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var r pidRecord
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("pid file %q: %v", b, err)
	}
	return r
}

func claim(t *testing.T, dir, instance string) (*dataDirClaim, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	c, err := claimDataDir(ctx, dir, pidRecord{Instance: instance, TempDir: "/tmp/" + tempDirPrefix + instance}, testLogger(t))
	if c != nil {
		t.Cleanup(func() { _ = c.release() })
	}
	return c, err
}

func TestClaimDataDir(t *testing.T) {
	self, err := procStartTime(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	record := func(pid int, start uint64) string {
		b, _ := json.Marshal(pidRecord{PID: pid, StartTime: start, Instance: "old"})
		return string(b)
	}
	tests := []struct {
		name    string
		content string // "" with exists=false: no pid file
		exists  bool
		inUse   bool
	}{
		{name: "no pid file"},
		{name: "empty pid file", exists: true},
		{name: "unreadable pid file", content: "not json", exists: true},
		{name: "pid zero", content: `{"pid":0}`, exists: true},
		{name: "server gone", content: record(deadPID(t), 12345), exists: true},
		{name: "pid reused by another process", content: record(os.Getpid(), self+1), exists: true},
		{name: "server alive", content: record(os.Getpid(), self), exists: true, inUse: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "data") // created by the claim
			path := filepath.Join(dir, pidFileName)
			if tt.exists {
				if err := os.MkdirAll(dir, 0o700); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(tt.content), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			c, err := claim(t, dir, "new")
			if tt.inUse {
				if !errors.Is(err, ErrDataDirInUse) || !strings.Contains(err.Error(), fmt.Sprint("pid ", os.Getpid())) {
					t.Fatalf("claim = %v, want ErrDataDirInUse naming pid %d", err, os.Getpid())
				}
				if b, _ := os.ReadFile(path); string(b) != tt.content {
					t.Errorf("a refused claim changed the pid file to %q", b)
				}
				return
			}
			if err != nil {
				t.Fatalf("claim: %v", err)
			}
			if got, want := readRecord(t, path), (pidRecord{PID: os.Getpid(), StartTime: self, Instance: "new", TempDir: "/tmp/pwproxy-new"}); got.PID != want.PID || got.StartTime != want.StartTime || got.Instance != want.Instance || got.TempDir != want.TempDir {
				t.Errorf("pid file = %+v, want %+v", got, want)
			}
			if err := c.release(); err != nil {
				t.Fatalf("release: %v", err)
			}
			if _, err := os.Stat(path); !os.IsNotExist(err) {
				t.Errorf("pid file left after release: %v", err)
			}
		})
	}
}

// TestClaimRemovesDeadServersTempDir: the temp directory a dead server's
// pid file names goes with its leftovers, and only a directory such as a
// server makes: a hand-edited path is never removed.
func TestClaimRemovesDeadServersTempDir(t *testing.T) {
	tests := []struct {
		name string
		// path is the temp_dir recorded: below a fresh t.TempDir(), which
		// is also the working directory when relative is set. It is made
		// a directory holding a file unless link (a symlink to one) or
		// missing.
		path           string
		relative, link bool
		missing        bool
		wantRemoved    bool
		wantUntouched  bool
	}{
		{name: "a server's", path: "pwproxy-123", wantRemoved: true},
		{name: "already gone", path: "pwproxy-124", missing: true},
		{name: "another prefix", path: "data-125", wantUntouched: true},
		{name: "not clean", path: "x/../pwproxy-126", wantUntouched: true},
		{name: "relative", path: "pwproxy-127", relative: true, wantUntouched: true},
		{name: "symlink", path: "pwproxy-128", link: true, wantUntouched: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := t.TempDir()
			// "x" lets a path through x/.. resolve.
			if err := os.Mkdir(filepath.Join(base, "x"), 0o700); err != nil {
				t.Fatal(err)
			}
			recorded, target := base+"/"+tt.path, filepath.Join(base, tt.path)
			named := target
			if tt.relative {
				recorded = tt.path
				t.Chdir(base)
			}
			if !tt.missing {
				real := target
				if tt.link {
					real = filepath.Join(base, "elsewhere")
				}
				if err := os.MkdirAll(real, 0o700); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(real, "profile"), []byte("x"), 0o600); err != nil {
					t.Fatal(err)
				}
				if tt.link {
					if err := os.Symlink(real, target); err != nil {
						t.Fatal(err)
					}
					target = real
				}
			}
			dir := filepath.Join(t.TempDir(), "data")
			if err := os.MkdirAll(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			b, _ := json.Marshal(pidRecord{PID: deadPID(t), StartTime: 1, Instance: "old", TempDir: recorded})
			if err := os.WriteFile(filepath.Join(dir, pidFileName), b, 0o600); err != nil {
				t.Fatal(err)
			}
			if _, err := claim(t, dir, "new"); err != nil {
				t.Fatalf("claim: %v", err)
			}
			switch {
			case tt.wantRemoved:
				if _, err := os.Lstat(target); !os.IsNotExist(err) {
					t.Errorf("%s kept (%v), want it removed", target, err)
				}
			case tt.wantUntouched:
				if _, err := os.Stat(filepath.Join(target, "profile")); err != nil {
					t.Errorf("%s touched: %v", target, err)
				}
				if _, err := os.Lstat(named); err != nil {
					t.Errorf("%s removed: %v", named, err)
				}
			}
		})
	}
}

func TestClaimDataDirExclusive(t *testing.T) {
	dir := t.TempDir()
	first, err := claim(t, dir, "first")
	if err != nil {
		t.Fatal(err)
	}
	// The lock refuses a second claim even when the record would not (a
	// server between writing its lock and its record).
	if err := os.WriteFile(filepath.Join(dir, pidFileName), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := claim(t, dir, "second"); !errors.Is(err, ErrDataDirInUse) {
		t.Fatalf("second claim = %v, want ErrDataDirInUse", err)
	}
	if err := first.release(); err != nil {
		t.Fatal(err)
	}
	if _, err := claim(t, dir, "third"); err != nil {
		t.Fatalf("claim after release: %v", err)
	}
	if got := readRecord(t, filepath.Join(dir, pidFileName)); got.Instance != "third" {
		t.Errorf("pid file = %+v", got)
	}
}

// sleeper is a `sleep` child with extra environment; pgid 0 makes it lead
// its own process group, else it joins group pgid.
type sleeper struct {
	cmd  *exec.Cmd
	done chan struct{}
	err  error // Wait's, once done is closed
}

func startSleeper(t *testing.T, pgid int, env ...string) *sleeper {
	t.Helper()
	cmd := exec.Command("sleep", "120")
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pgid: pgid}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &sleeper{cmd: cmd, done: make(chan struct{})}
	go func() {
		s.err = cmd.Wait()
		close(s.done)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-s.done
	})
	return s
}

// killed waits up to d for s to die of SIGKILL.
func (s *sleeper) killed(d time.Duration) error {
	select {
	case <-s.done:
		err := s.err
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL {
				return nil
			}
		}
		return fmt.Errorf("exited with %v, not SIGKILL", err)
	case <-time.After(d):
		return errors.New("still running")
	}
}

func (s *sleeper) running() bool {
	select {
	case <-s.done:
		return false
	default:
		return proctest.Alive(s.cmd.Process.Pid)
	}
}

// TestIntegrationClaimEndsOnlyMarkedLeftovers: a stale pid file names a
// dead server; its marked processes die, whether they lead their own group
// or sit in a group with unmarked members, and nothing else is touched,
// not even a near-miss marker.
func TestIntegrationClaimEndsOnlyMarkedLeftovers(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test (starts and kills processes): skipped under -short")
	}
	if _, err := exec.LookPath("sleep"); err != nil {
		t.Skip("no sleep command")
	}
	old, err := newInstanceID()
	if err != nil {
		t.Fatal(err)
	}
	mark := upstream.InstanceEnv + "=" + old
	leader := startSleeper(t, 0, mark)                                    // a group of its own, all marked
	unmarked := startSleeper(t, 0)                                        // leads a mixed group
	inMixed := startSleeper(t, unmarked.cmd.Process.Pid, mark)            // marked, in the mixed group
	other := startSleeper(t, 0, upstream.InstanceEnv+"=someone-else")     // another server's
	nearMiss := startSleeper(t, 0, upstream.InstanceEnv+"="+old+"x")      // prefix of the value only
	renamed := startSleeper(t, 0, "X"+upstream.InstanceEnv+"="+old)       // another variable
	mixedPeer := startSleeper(t, unmarked.cmd.Process.Pid, "UNRELATED=1") // unmarked, in the mixed group

	dir := t.TempDir()
	stale, _ := json.Marshal(pidRecord{PID: deadPID(t), StartTime: 1, Instance: old})
	if err := os.WriteFile(filepath.Join(dir, pidFileName), stale, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := claim(t, dir, "new"); err != nil {
		t.Fatalf("claim: %v", err)
	}
	for name, s := range map[string]*sleeper{"group leader": leader, "member of a mixed group": inMixed} {
		if err := s.killed(5 * time.Second); err != nil {
			t.Errorf("marked %s (pid %d): %v", name, s.cmd.Process.Pid, err)
		}
	}
	for name, s := range map[string]*sleeper{"unmarked leader": unmarked, "unmarked peer": mixedPeer, "other instance": other, "near miss": nearMiss, "other variable": renamed} {
		if !s.running() {
			t.Errorf("%s (pid %d) was killed", name, s.cmd.Process.Pid)
		}
	}
}
