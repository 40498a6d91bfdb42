//go:build linux

package bench

import "syscall"

// supported reports whether this platform has what the benchmark reads
// (/proc, PR_SET_CHILD_SUBREAPER, Pdeathsig).
const supported = true

// KilledWithParent has the kernel SIGKILL a child when this process dies:
// nothing stops it gracefully then (an MCP server of the benchmark's, the
// bench relay's chain).
func KilledWithParent() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
