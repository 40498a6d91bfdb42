//go:build linux

package upstream

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"strconv"
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

// procDying reports whether process pid, not yet reaped by us, will never
// read another request: it is a zombie, or SIGKILL is pending, which
// nothing can block or catch. After a kill -9 the process takes a moment
// (its memory is torn down first) before its pipes close; a request
// written then would be taken for one the worker received.
func procDying(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return errors.Is(err, fs.ErrNotExist)
	}
	const sigkill = uint64(1) << (unix.SIGKILL - 1)
	for line := range bytes.Lines(b) {
		key, val, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			continue
		}
		val = bytes.TrimSpace(val)
		switch string(key) {
		case "State":
			if len(val) > 0 && (val[0] == 'Z' || val[0] == 'X') {
				return true
			}
		case "SigPnd", "ShdPnd":
			if mask, err := strconv.ParseUint(string(val), 16, 64); err == nil && mask&sigkill != 0 {
				return true
			}
		}
	}
	return false
}
