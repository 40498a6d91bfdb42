//go:build windows

package proctest

import (
	"os"
	"syscall"
)

// The helpers build on Windows so that the packages whose tests use them
// vet there; the tests themselves run only on Linux (docs/DEVELOPMENT.md).
// Without process groups a kill reaches the one process.

func killGroup(pid int) { killPID(pid) }

func killPID(pid int) {
	if p, err := os.FindProcess(pid); err == nil {
		_ = p.Kill()
		_ = p.Release()
	}
}

// terminate kills: Windows has no SIGTERM to send.
func terminate(pid int) { killPID(pid) }

func serverProcAttr() *syscall.SysProcAttr { return nil }
