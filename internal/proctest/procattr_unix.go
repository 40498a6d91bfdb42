//go:build unix && !linux

package proctest

import "syscall"

func serverProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }
