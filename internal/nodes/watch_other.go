//go:build !unix

package nodes

import "net"

// peekClosed cannot look at the socket here: the watch's goroutine alone
// tells.
func peekClosed(net.Conn) bool { return false }
