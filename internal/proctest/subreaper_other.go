//go:build !linux

package proctest

import "errors"

// BecomeSubreaper is Linux only: elsewhere an orphan goes to init and the
// leak check does not see it.
func BecomeSubreaper() error { return errors.New("child subreaper: Linux only") }

// ReapOrphans has nothing to collect outside Linux.
func ReapOrphans() {}
