package upstream

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
)

// ErrNoMemInfo: the host's available memory cannot be read here.
var ErrNoMemInfo = errors.New("available memory unknown")

// AvailableMemory is the host's MemAvailable (/proc/meminfo): what can be
// allocated without swapping, reclaimable caches included.
func AvailableMemory() (int64, error) {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0, fmt.Errorf("%w: %w", ErrNoMemInfo, err)
	}
	return parseMemAvailable(b)
}

// parseMemAvailable reads "MemAvailable:   123456 kB".
func parseMemAvailable(meminfo []byte) (int64, error) {
	sc := bufio.NewScanner(bytes.NewReader(meminfo))
	for sc.Scan() {
		f := bytes.Fields(sc.Bytes())
		if len(f) >= 2 && string(f[0]) == "MemAvailable:" {
			kb, err := strconv.ParseInt(string(f[1]), 10, 64)
			if err != nil || kb < 0 {
				return 0, fmt.Errorf("%w: MemAvailable %q", ErrNoMemInfo, f[1])
			}
			return kb << 10, nil
		}
	}
	return 0, fmt.Errorf("%w: no MemAvailable line", ErrNoMemInfo)
}

// HostMemoryCheck is a health check that fails when the host has less than
// minFree bytes available (PROXY_MIN_FREE_MEMORY), naming both figures. A
// host whose memory cannot be read passes: no figure is no alarm.
func HostMemoryCheck(minFree int64, available func() (int64, error)) func(context.Context) error {
	return func(context.Context) error {
		avail, err := available()
		if err != nil {
			return nil
		}
		if avail < minFree {
			return fmt.Errorf("low host memory: %d MB available, below PROXY_MIN_FREE_MEMORY (%d MB)", avail>>20, minFree>>20)
		}
		return nil
	}
}
