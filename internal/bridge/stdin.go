//go:build unix

package bridge

import (
	"os"
	"syscall"
)

// PollableInput returns a file reading what f reads, through Go's network
// poller, and a function that undoes the change; both are no-ops unless f
// is a blocking pipe or socket, which is how MCP clients hand a stdio
// server its stdin.
//
// Why: a blocking stdin keeps one thread parked in read(2) between every
// two messages, and Go's sysmon then wakes up every 20 µs to 10 ms to see
// whether that thread's P should be taken back, a large share of the
// bridge's CPU per tool call (docs/BENCHMARKS.md §1). Through the poller no
// thread sits in a system call and an idle bridge sleeps.
//
// The non-blocking flag belongs to the open file description, which the
// process that gave us f may share; restore puts it back. Call it before
// exiting. f is left alone when it is the same pipe or socket as one of
// writers (a client that reads and writes one socket): those are written
// without the poller, and a non-blocking write to a full socket would fail
// instead of waiting.
func PollableInput(f *os.File, writers ...*os.File) (r *os.File, restore func()) {
	fd, ok := rawFD(f)
	if !ok {
		return f, func() {}
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return f, func() {}
	}
	if mode := st.Mode & syscall.S_IFMT; mode != syscall.S_IFIFO && mode != syscall.S_IFSOCK {
		return f, func() {} // a terminal or a file: nothing waits there
	}
	for _, w := range writers {
		var wst syscall.Stat_t
		if wfd, ok := rawFD(w); !ok || syscall.Fstat(wfd, &wst) != nil || (wst.Dev == st.Dev && wst.Ino == st.Ino) {
			return f, func() {}
		}
	}
	if nonblocking(fd) {
		return f, func() {} // already read through the poller
	}
	dup, err := syscall.Dup(fd)
	if err != nil {
		return f, func() {}
	}
	syscall.CloseOnExec(dup)
	if err := syscall.SetNonblock(dup, true); err != nil {
		syscall.Close(dup)
		return f, func() {}
	}
	// NewFile sees the flag and registers the descriptor with the poller.
	r = os.NewFile(uintptr(dup), f.Name())
	return r, func() { _ = syscall.SetNonblock(fd, false) }
}

// rawFD is f's descriptor. Unlike f.Fd, it leaves the descriptor's
// blocking mode alone.
func rawFD(f *os.File) (int, bool) {
	rc, err := f.SyscallConn()
	if err != nil {
		return 0, false
	}
	fd := -1
	if err := rc.Control(func(d uintptr) { fd = int(d) }); err != nil {
		return 0, false
	}
	return fd, fd >= 0
}

func nonblocking(fd int) bool {
	flags, _, errno := syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), uintptr(syscall.F_GETFL), 0)
	return errno == 0 && flags&syscall.O_NONBLOCK != 0
}
