//go:build unix

package upstream

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// procGroup is the child's process group, whose id is the leader's pid
// (sysProcAttr sets Setpgid): nothing to create or release.
type procGroup struct{}

func joinGroup(int) (procGroup, error) { return procGroup{}, nil }

// signal sends sig to the group led by pid. The caller makes sure the leader
// is not reaped yet, so the id cannot belong to another group.
func (procGroup) signal(pid int, sig syscall.Signal) { _ = syscall.Kill(-pid, sig) }

func (procGroup) release() {}

func (procGroup) rss(pid int) int64 { return groupRSS(pid) }

func signalName(sig syscall.Signal) string { return unix.SignalName(sig) }

// killGroup ends a short-lived child started with sysProcAttr and
// everything it started in its group.
func killGroup(pid int) error { return syscall.Kill(-pid, syscall.SIGKILL) }
