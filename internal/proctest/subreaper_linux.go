//go:build linux

package proctest

import (
	"fmt"
	"syscall"
)

// BecomeSubreaper makes orphaned descendants re-parent to this process.
func BecomeSubreaper() error {
	const prSetChildSubreaper = 36
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0); errno != 0 {
		return fmt.Errorf("prctl(PR_SET_CHILD_SUBREAPER): %w", errno)
	}
	return nil
}

// ReapOrphans collects exited orphans re-parented to this process. Call it
// only when no exec.Cmd of the process is running: it waits for any child.
func ReapOrphans() {
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		if pid <= 0 || err != nil {
			return
		}
	}
}

// serverProcAttr starts proxy-server in its own process group (so Ctrl-C in
// a terminal reaches only its parent, which then stops it, and stopping the
// group reaches everything it started) and has the kernel send it SIGTERM
// if its parent dies without doing so.
func serverProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
}
