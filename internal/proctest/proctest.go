// Package proctest finds processes a test left behind, and starts and stops
// proxy-server as a child process (StartServer). On Linux it makes the test
// process a child subreaper, so anything a test starts that loses its
// parent is re-parented to the test (not to init) and can be found and
// reaped. It is support for the tests and the bench tool (tools/bench),
// never imported by a product binary.
package proctest

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Proc is one process seen in /proc.
type Proc struct {
	PID, PPID, PGID int
	// Start is the process start time in clock ticks since boot: with the
	// pid it identifies a process even after its pid is reused.
	Start uint64
	Comm  string
	// State is /proc's one-letter state: R running, S sleeping, T stopped…
	State byte
	// CPUSelf is utime+stime, CPUReaped cutime+cstime (the children it
	// waited for), in clock ticks.
	CPUSelf, CPUReaped uint64
}

func (p Proc) String() string {
	return fmt.Sprintf("%d(%s ppid=%d pgid=%d)", p.PID, p.Comm, p.PPID, p.PGID)
}

// All lists every process visible in /proc.
func All() []Proc {
	entries, _ := os.ReadDir("/proc")
	out := make([]Proc, 0, len(entries))
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if p, ok := Stat(pid); ok {
			out = append(out, p)
		}
	}
	return out
}

// Stat reads one process; ok is false when it is gone or a zombie.
func Stat(pid int) (Proc, bool) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return Proc{}, false
	}
	return ParseStat(pid, b)
}

// ParseStat parses the content of /proc/PID/stat; ok is false for a zombie
// or what is not a stat line. comm may hold spaces and parentheses, so it
// ends at the last ')'.
func ParseStat(pid int, b []byte) (Proc, bool) {
	s := string(b)
	open, closing := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || closing < open {
		return Proc{}, false
	}
	f := strings.Fields(s[closing+1:])
	// f[0] is field 3 (state), f[1] field 4 (ppid), f[2] field 5 (pgrp),
	// f[11..14] fields 14-17 (utime stime cutime cstime), f[19] field 22
	// (starttime).
	if len(f) < 20 || f[0] == "Z" || f[0] == "X" {
		return Proc{}, false
	}
	u := func(i int) uint64 { n, _ := strconv.ParseUint(f[i], 10, 64); return n }
	ppid, _ := strconv.Atoi(f[1])
	pgid, _ := strconv.Atoi(f[2])
	return Proc{PID: pid, PPID: ppid, PGID: pgid, Start: u(19), Comm: s[open+1 : closing], State: f[0][0],
		CPUSelf: u(11) + u(12), CPUReaped: u(13) + u(14)}, true
}

// Alive reports whether pid exists and is not a zombie.
func Alive(pid int) bool {
	_, ok := Stat(pid)
	return ok
}

// Exited reports whether every thread of pid has exited: a process whose
// main thread is a zombie may still have threads on their way out, and its
// files (its sockets) are closed only when the last of them is.
func Exited(pid int) bool { return len(liveThreads(pid)) == 0 }

// Stopped reports whether pid has live threads and every one is stopped
// (SIGSTOP): kill returns before the signal has reached each thread, and a
// thread not yet stopped may still answer what it reads.
func Stopped(pid int) bool {
	threads := liveThreads(pid)
	for _, th := range threads {
		if th.State != 'T' {
			return false
		}
	}
	return len(threads) > 0
}

// liveThreads reads the threads of pid that are neither gone nor zombies.
func liveThreads(pid int) []Proc {
	dir := filepath.Join("/proc", strconv.Itoa(pid), "task")
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var live []Proc
	for _, task := range tasks {
		b, err := os.ReadFile(filepath.Join(dir, task.Name(), "stat"))
		if err != nil {
			continue // gone meanwhile
		}
		if p, ok := ParseStat(pid, b); ok {
			live = append(live, p)
		}
	}
	return live
}

// Descendants lists the live descendants of pid.
func Descendants(pid int) []Proc {
	all := All()
	children := map[int][]Proc{}
	for _, p := range all {
		children[p.PPID] = append(children[p.PPID], p)
	}
	var out []Proc
	queue := []int{pid}
	for len(queue) > 0 {
		next := queue[0]
		queue = queue[1:]
		for _, c := range children[next] {
			out = append(out, c)
			queue = append(queue, c.PID)
		}
	}
	return out
}

// Group lists the live members of process group pgid.
func Group(pgid int) []Proc {
	var out []Proc
	for _, p := range All() {
		if p.PGID == pgid {
			out = append(out, p)
		}
	}
	return out
}

// WaitGone waits up to d for every process matched by list to disappear
// and returns those still there.
func WaitGone(d time.Duration, list func() []Proc) []Proc {
	deadline := time.Now().Add(d)
	for {
		left := list()
		if len(left) == 0 || time.Now().After(deadline) {
			return left
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Leaked returns this process's live descendants other than those whose
// command is in allow, waiting up to d for stragglers to exit. Zombies are
// not counted: they hold no resources but a pid.
func Leaked(d time.Duration, allow ...string) []Proc {
	self := os.Getpid()
	return WaitGone(d, func() []Proc {
		var out []Proc
		for _, p := range Descendants(self) {
			ok := false
			for _, a := range allow {
				if p.Comm == a {
					ok = true
				}
			}
			if !ok {
				out = append(out, p)
			}
		}
		return out
	})
}

// KillAll SIGKILLs procs and their groups: the last resort of a failed test.
func KillAll(procs []Proc) {
	for _, p := range procs {
		killGroup(p.PGID)
		killPID(p.PID)
	}
}

// StillAlive returns those of procs that still run: same pid and command
// (a reused pid is another process), not a zombie.
func StillAlive(procs []Proc) []Proc {
	var out []Proc
	for _, p := range procs {
		if q, ok := Stat(p.PID); ok && q.Comm == p.Comm {
			out = append(out, q)
		}
	}
	return out
}

// RunChecked runs a package's tests as a child subreaper and fails the run
// (exit code 1) if any process is left behind once they end: the body of a
// TestMain whose tests start processes. allow names commands that may stay
// (see Leaked).
func RunChecked(m interface{ Run() int }, allow ...string) int {
	if err := BecomeSubreaper(); err != nil {
		fmt.Fprintln(os.Stderr, "warning:", err)
	}
	code := m.Run()
	if leaked := Leaked(5*time.Second, allow...); len(leaked) > 0 {
		fmt.Fprintf(os.Stderr, "FAIL: the tests left processes behind: %v\n", leaked)
		KillAll(leaked)
		code = 1
	}
	return code
}
