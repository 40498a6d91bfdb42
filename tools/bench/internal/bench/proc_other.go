//go:build !linux

package bench

import (
	"errors"
	"syscall"
)

const supported = false

func sysProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// KilledWithParent has nothing to ask of the kernel outside Linux.
func KilledWithParent() *syscall.SysProcAttr { return &syscall.SysProcAttr{} }

func becomeSubreaper() error { return errors.New("child subreaper: Linux only") }

func reapOrphans() {}
