//go:build !linux

package upstream

// groupRSS is unknown outside Linux: there is no /proc to read cheaply.
func groupRSS(int) int64 { return 0 }

func pidRSS(int) int64 { return 0 }

func expireScan() {}

func pidsRSS([]int) (int64, int) { return 0, 0 }

func splitGroup(int) (int64, int64, int) { return 0, 0, 0 }
