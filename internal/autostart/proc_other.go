//go:build !unix

package autostart

import (
	"context"
	"errors"
	"syscall"
)

var errUnsupported = errors.New("autostart is only supported on unix systems")

func detached() *syscall.SysProcAttr { return nil }

func lock(context.Context, string) (func(), error) { return nil, errUnsupported }

func running(int, string) bool { return false }
