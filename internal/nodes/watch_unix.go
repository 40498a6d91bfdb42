//go:build unix

package nodes

import (
	"errors"
	"net"
	"syscall"
)

// peekClosed looks at conn's socket without reading from it or waiting:
// true when the peer's close (an end of stream or a reset) is already
// there. Control, unlike a read, does not wait for the read that the
// watch's goroutine has pending.
func peekClosed(conn net.Conn) bool {
	sc, ok := conn.(syscall.Conn)
	if !ok {
		return false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return true // closed by us
	}
	closed := false
	err = rc.Control(func(fd uintptr) {
		var b [1]byte
		n, _, rerr := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		switch {
		case rerr == nil:
			closed = n == 0
		case errors.Is(rerr, syscall.EAGAIN), errors.Is(rerr, syscall.EINTR):
		default:
			closed = true // ECONNRESET and the like
		}
	})
	return closed || err != nil
}
