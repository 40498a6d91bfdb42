//go:build linux

package upstream

import (
	"bytes"
	"os"
	"strconv"
	"sync"
	"time"
)

// rssCacheTTL is how long one /proc scan answers RSS questions. Reading
// /proc/PID/stat costs ~20 µs per process on a small VM, so a scan of a
// machine running a browser and a few workers takes milliseconds: sharing it
// makes a GET /sessions listing N sessions cost one scan, not N.
const rssCacheTTL = time.Second

// rssCache holds the last scan: resident bytes per process group.
var rssCache struct {
	mu     sync.Mutex
	at     time.Time
	groups map[int]int64
}

// pageSize converts /proc's rss (in pages) to bytes.
var pageSize = int64(os.Getpagesize())

// groupRSS returns the resident bytes of process group pgid from a scan at
// most rssCacheTTL old. A group missing from the cached scan (started after
// it) triggers a new one, so a new worker never reads as 0.
func groupRSS(pgid int) int64 {
	rssCache.mu.Lock()
	defer rssCache.mu.Unlock()
	if v, ok := rssCache.groups[pgid]; ok && time.Since(rssCache.at) < rssCacheTTL {
		return v
	}
	rssCache.groups = scanGroupRSS()
	rssCache.at = time.Now()
	return rssCache.groups[pgid]
}

// scanGroupRSS sums field 24 (rss, in pages) of every /proc/PID/stat by
// field 5 (pgrp). Processes that vanish mid-scan are skipped; zombies count
// with rss 0, which keeps a group whose leader is unreaped in the map.
func scanGroupRSS() map[int]int64 {
	groups := map[int]int64{}
	d, err := os.Open("/proc")
	if err != nil {
		return groups
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return groups
	}
	var (
		buf  = make([]byte, 1024) // a stat line is ~300 bytes; comm is at most 64
		path = make([]byte, 0, 32)
	)
	for _, name := range names {
		if name == "" || name[0] < '0' || name[0] > '9' {
			continue
		}
		path = append(append(append(path[:0], "/proc/"...), name...), "/stat"...)
		n := readSmall(string(path), buf)
		if n <= 0 {
			continue
		}
		if pgid, rss, ok := parseStatRSS(buf[:n]); ok {
			groups[pgid] += rss * pageSize
		}
	}
	return groups
}

// readSmall reads up to len(buf) bytes of a small file in one read, as
// /proc files are generated whole; it returns 0 on any error.
func readSmall(path string, buf []byte) int {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	n, err := f.Read(buf)
	if err != nil {
		return 0
	}
	return n
}

// parseStatRSS reads pgrp (field 5) and rss (field 24, in pages) from a
// /proc/PID/stat line. comm (field 2) may hold spaces and parentheses, so
// fields are counted from the last ')'.
func parseStatRSS(stat []byte) (pgid int, rssPages int64, ok bool) {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, 0, false
	}
	// After ") ": field 3 (state) is index 0, so field N is index N-3.
	const pgrpIdx, rssIdx = 5 - 3, 24 - 3
	idx := 0
	for f := range bytes.FieldsSeq(stat[i+1:]) {
		switch idx {
		case pgrpIdx:
			g, err := strconv.Atoi(string(f))
			if err != nil {
				return 0, 0, false
			}
			pgid = g
		case rssIdx:
			r, err := strconv.ParseInt(string(f), 10, 64)
			if err != nil || r < 0 {
				return 0, 0, false
			}
			return pgid, r, true
		}
		idx++
	}
	return 0, 0, false
}
