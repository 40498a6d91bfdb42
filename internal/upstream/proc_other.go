//go:build unix && !linux

package upstream

import "syscall"

// sysProcAttr puts the child in its own process group. There is no
// parent-death signal outside Linux: a proxy killed with -9 leaves its
// children to be stopped by hand there.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

// canWaitUnreaped is false: there is no portable waitid(WNOWAIT), so the
// group is not signalled after its leader exited (its pid may be recycled).
const canWaitUnreaped = false

func waitExited(int) error { return nil }

// procDying is false: without /proc there is no cheap look at a process
// about to die; a request written to it fails once its pipes close.
func procDying(int) bool { return false }
