//go:build unix

package proctest

import "syscall"

// killGroup SIGKILLs the process group pgid (and, were pgid a lone
// process's pid, nothing else).
func killGroup(pgid int) { _ = syscall.Kill(-pgid, syscall.SIGKILL) }

func killPID(pid int) { _ = syscall.Kill(pid, syscall.SIGKILL) }

// terminate asks pid to stop (SIGTERM).
func terminate(pid int) { _ = syscall.Kill(pid, syscall.SIGTERM) }
