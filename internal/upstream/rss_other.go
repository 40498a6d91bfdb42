//go:build unix && !linux

package upstream

// groupRSS is unknown outside Linux: there is no /proc to read cheaply.
func groupRSS(int) int64 { return 0 }
