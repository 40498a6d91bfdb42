//go:build unix

package store_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
)

// crashChildEnv, when set, turns this test binary into the process that
// writes the fixture and then kills itself.
const crashChildEnv = "STORE_TEST_CRASH_CHILD_DB"

// TestKill9Durability is `kill -9 <proxy-server>; proxy-server serve`: a
// process commits, dies by SIGKILL without any cleanup, and a
// fresh Open of the file sees everything that was committed.
func TestKill9Durability(t *testing.T) {
	if path := os.Getenv(crashChildEnv); path != "" {
		db := openDB(t, path) // its Cleanup never runs: we die first
		writeFixture(t, db)
		if err := syscall.Kill(os.Getpid(), syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		select {} // SIGKILL is not deliverable late; wait for it
	}
	t.Parallel()

	path := filepath.Join(t.TempDir(), "proxy.db")
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestKill9Durability$", "-test.count=1")
	cmd.Env = append(os.Environ(), crashChildEnv+"="+path)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) {
		t.Fatalf("child: err = %v, want death by SIGKILL; output:\n%s", err, out)
	}
	if ws, ok := exit.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("child: %v, want death by SIGKILL; output:\n%s", err, out)
	}
	// The crash left the data in the WAL, not yet checkpointed.
	if fi, err := os.Stat(path + "-wal"); err != nil || fi.Size() == 0 {
		t.Logf("note: WAL after crash: %v (size %v)", err, fi)
	}

	checkFixture(t, openDB(t, path), newFixture())
}
