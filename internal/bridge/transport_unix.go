//go:build unix

package bridge

import (
	"net"
	"syscall"
)

// stillOpen reports whether a kept connection can carry another request:
// the peer has not closed or reset it and has sent nothing unasked. One
// non-blocking peek, no waiting.
func stillOpen(c net.Conn) bool {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return true
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	open := false
	var buf [1]byte
	err = rc.Read(func(fd uintptr) bool {
		_, _, rerr := syscall.Recvfrom(int(fd), buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		// Nothing to read yet is the only good answer: 0 bytes is the
		// peer's FIN, bytes are an answer nobody asked for (a 408 before
		// an idle close), an error is a reset.
		open = rerr == syscall.EAGAIN || rerr == syscall.EWOULDBLOCK
		return true
	})
	return err == nil && open
}
