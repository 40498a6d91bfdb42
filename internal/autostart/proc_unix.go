//go:build unix

package autostart

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// detached puts the server in its own session: no controlling terminal, and
// no signal meant for the bridge's process group reaches it.
func detached() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setsid: true} }

// lock takes an exclusive flock on path, polling so that ctx can end the
// wait. The lock goes with the descriptor, which children do not inherit
// (close-on-exec), so a started server never holds it.
func lock(ctx context.Context, path string) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock file: %w", err)
	}
	delay := 20 * time.Millisecond
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() {
				_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
				f.Close()
			}, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			f.Close()
			return nil, fmt.Errorf("locking %s: %w", path, err)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("waiting for the lock %s: %w", path, ctx.Err())
		case <-time.After(delay):
		}
		delay = min(delay*2, 200*time.Millisecond)
	}
}

// running reports whether pid is a live (not zombie) process named name.
// Where /proc is missing it can only tell that the pid exists.
func running(pid int, name string) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		if _, serr := os.Stat("/proc/self/stat"); serr == nil {
			return false // /proc works: the process is gone
		}
		return syscall.Kill(pid, 0) == nil
	}
	s := string(b)
	open, closing := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || closing < open {
		return false
	}
	comm := s[open+1 : closing]
	fields := strings.Fields(s[closing+1:])
	if len(fields) == 0 || fields[0] == "Z" || fields[0] == "X" {
		return false
	}
	// The kernel keeps the first 15 bytes of the command name.
	return comm == name[:min(len(name), 15)]
}
