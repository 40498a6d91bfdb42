//go:build linux

package proctest

import (
	"os/exec"
	"syscall"
	"testing"
	"time"
)

func TestStopped(t *testing.T) {
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	pid := cmd.Process.Pid
	if Stopped(pid) {
		t.Fatal("a sleeping process reads as stopped")
	}
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	waitFor := func(want bool) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for Stopped(pid) != want {
			if time.Now().After(deadline) {
				t.Fatalf("Stopped(%d) never became %v", pid, want)
			}
			time.Sleep(time.Millisecond)
		}
	}
	waitFor(true)
	if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	waitFor(false)
	if Stopped(1 << 30) {
		t.Error("a pid that does not exist reads as stopped")
	}
}
