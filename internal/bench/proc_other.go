//go:build !linux

package bench

import (
	"errors"
	"syscall"
)

const supported = false

func sysProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

func becomeSubreaper() error { return errors.New("child subreaper: Linux only") }

func reapOrphans() {}
