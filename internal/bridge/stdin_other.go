//go:build !unix

package bridge

import "os"

// PollableInput returns f unchanged where the poller cannot take a pipe.
func PollableInput(f *os.File, _ ...*os.File) (*os.File, func()) { return f, func() {} }
