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

// rssCache holds the last scan: resident bytes per process group, and each
// process's parent, group and resident bytes.
var rssCache struct {
	mu     sync.Mutex
	at     time.Time
	groups map[int]int64
	procs  map[int]procStat
}

// procStat is what a scan keeps of one process.
type procStat struct {
	ppid, pgid int
	rss        int64 // bytes
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
	rescan()
	return rssCache.groups[pgid]
}

// rescan refreshes rssCache; the caller holds its lock.
func rescan() {
	rssCache.groups, rssCache.procs = scanProcs()
	rssCache.at = time.Now()
}

// freshProcs returns the cached scan's processes, scanning again when it is
// older than rssCacheTTL. The caller holds rssCache.mu.
func freshProcs() map[int]procStat {
	if rssCache.procs == nil || time.Since(rssCache.at) >= rssCacheTTL {
		rescan()
	}
	return rssCache.procs
}

// expireScan makes the next question scan /proc again: the caller has just
// learned of processes (a page's renderers) that may have started after the
// cached scan. A pid that is gone does not do this, so sessions whose
// renderers exited still share one scan per listing.
func expireScan() {
	rssCache.mu.Lock()
	defer rssCache.mu.Unlock()
	rssCache.at = time.Time{}
}

// pidsRSS sums the resident bytes of the given processes; those gone count
// 0. It reports how many were found. Pids just learned of must first
// expire the scan (expireScan), or one started after it reads as gone.
func pidsRSS(pids []int) (total int64, found int) {
	rssCache.mu.Lock()
	defer rssCache.mu.Unlock()
	procs := freshProcs()
	for _, pid := range pids {
		if p, ok := procs[pid]; ok {
			total += p.rss
			found++
		}
	}
	return total, found
}

// splitGroup reads, from one scan, the resident bytes of process pid (a
// group leader) and of everything else it accounts for: the other members
// of its group, and its descendants that went to groups of their own with
// those groups' members (in per-session mode, its Chromium, which
// Playwright detaches unless keep-group.js keeps it in the group; the
// zygote-forked renderers are the zygote's children, so the whole group
// is counted, not only the subtree).
func splitGroup(pid int) (leader, rest int64, n int) {
	rssCache.mu.Lock()
	defer rssCache.mu.Unlock()
	procs := freshProcs()
	children := map[int][]int{}
	for p, st := range procs {
		children[st.ppid] = append(children[st.ppid], p)
	}
	groups := map[int]bool{pid: true}
	stack := []int{pid}
	seen := map[int]bool{pid: true}
	for len(stack) > 0 {
		p := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, c := range children[p] {
			if !seen[c] {
				seen[c] = true
				groups[procs[c].pgid] = true
				stack = append(stack, c)
			}
		}
	}
	for p, st := range procs {
		switch {
		case p == pid:
			leader = st.rss
		case groups[st.pgid]:
			rest += st.rss
			n++
		}
	}
	return leader, rest, n
}

// scanGroupRSS sums field 24 (rss, in pages) of every /proc/PID/stat by
// field 5 (pgrp). Processes that vanish mid-scan are skipped; zombies count
// with rss 0, which keeps a group whose leader is unreaped in the map.
func scanGroupRSS() map[int]int64 {
	groups, _ := scanProcs()
	return groups
}

// scanProcs reads every /proc/PID/stat once: the resident bytes per group,
// and each process's parent, group and resident bytes.
func scanProcs() (map[int]int64, map[int]procStat) {
	groups := map[int]int64{}
	procs := map[int]procStat{}
	d, err := os.Open("/proc")
	if err != nil {
		return groups, procs
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return groups, procs
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
		ppid, pgid, rss, ok := parseStatRSS(buf[:n])
		if !ok {
			continue
		}
		groups[pgid] += rss * pageSize
		if pid, err := strconv.Atoi(name); err == nil {
			procs[pid] = procStat{ppid: ppid, pgid: pgid, rss: rss * pageSize}
		}
	}
	return groups, procs
}

// pidRSS is the resident bytes of one process from its own
// /proc/PID/stat, read now: one small read, not the /proc scan groupRSS
// shares. 0 when it is gone.
func pidRSS(pid int) int64 {
	buf := make([]byte, 1024)
	n := readSmall("/proc/"+strconv.Itoa(pid)+"/stat", buf)
	if n <= 0 {
		return 0
	}
	_, _, rss, ok := parseStatRSS(buf[:n])
	if !ok {
		return 0
	}
	return rss * pageSize
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

// parseStatRSS reads ppid (field 4), pgrp (field 5) and rss (field 24, in
// pages) from a /proc/PID/stat line. comm (field 2) may hold spaces and
// parentheses, so fields are counted from the last ')'.
func parseStatRSS(stat []byte) (ppid, pgid int, rssPages int64, ok bool) {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, 0, 0, false
	}
	// After ") ": field 3 (state) is index 0, so field N is index N-3.
	const ppidIdx, pgrpIdx, rssIdx = 4 - 3, 5 - 3, 24 - 3
	idx := 0
	for f := range bytes.FieldsSeq(stat[i+1:]) {
		switch idx {
		case ppidIdx, pgrpIdx:
			g, err := strconv.Atoi(string(f))
			if err != nil {
				return 0, 0, 0, false
			}
			if idx == ppidIdx {
				ppid = g
			} else {
				pgid = g
			}
		case rssIdx:
			r, err := strconv.ParseInt(string(f), 10, 64)
			if err != nil || r < 0 {
				return 0, 0, 0, false
			}
			return ppid, pgid, r, true
		}
		idx++
	}
	return 0, 0, 0, false
}
