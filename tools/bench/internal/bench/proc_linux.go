//go:build linux

package bench

import (
	"fmt"
	"syscall"
)

// supported reports whether this platform has what the benchmark reads
// (/proc, PR_SET_CHILD_SUBREAPER, Pdeathsig).
const supported = true

// sysProcAttr starts proxy-server in its own process group (so Ctrl-C in the
// terminal reaches only the benchmark, which then stops the server itself)
// and has the kernel send it SIGTERM if the benchmark dies without doing so.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
}

// KilledWithParent has the kernel SIGKILL a child when this process dies:
// nothing stops it gracefully then (an MCP server of the benchmark's, the
// bench relay's chain).
func KilledWithParent() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

// becomeSubreaper makes orphaned descendants (a worker or Chromium whose
// proxy-server died) re-parent to this process instead of init, so the leak
// check finds them.
func becomeSubreaper() error {
	const prSetChildSubreaper = 36
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0); errno != 0 {
		return fmt.Errorf("prctl(PR_SET_CHILD_SUBREAPER): %w", errno)
	}
	return nil
}

// reapOrphans collects exited orphans re-parented to this process. Call it
// only when no exec.Cmd of ours is running: it waits for any child.
func reapOrphans() {
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		if pid <= 0 || err != nil {
			return
		}
	}
}
