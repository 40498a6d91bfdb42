//go:build !linux

package bench

import "syscall"

const supported = false

// KilledWithParent has nothing to ask of the kernel outside Linux.
func KilledWithParent() *syscall.SysProcAttr { return &syscall.SysProcAttr{} }
