//go:build linux

package upstream

import (
	"errors"
	"syscall"

	"golang.org/x/sys/unix"
)

// sysProcAttr puts the child in its own process group, so stopping it reaches
// everything it spawned, and asks the kernel to SIGKILL it when the thread
// that forked it dies: a proxy killed with -9 then takes its workers and
// browser with it. The Go runtime does not retire threads unless a goroutine
// exits while locked to one, which this package never does.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// canWaitUnreaped reports whether waitExited can wait for an exit without
// reaping the process.
const canWaitUnreaped = true

// waitExited blocks until pid has exited but leaves it unreaped (WNOWAIT).
// While the zombie exists its pid, and so its process group id, cannot be
// reused, which makes signalling the group afterwards safe.
func waitExited(pid int) error {
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if !errors.Is(err, unix.EINTR) {
			return err
		}
	}
}
