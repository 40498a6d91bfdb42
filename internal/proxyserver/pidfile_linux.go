//go:build linux

package proxyserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/upstream"
)

const (
	// leftoverRounds bounds the scan-and-kill rounds: a leftover may fork
	// while the previous round kills it, so scan again until none is left.
	leftoverRounds = 20
	// leftoverPause is the pause between rounds.
	leftoverPause = 100 * time.Millisecond
)

// dataDirClaim is this server's hold on its data directory: the pid file,
// open and flock'ed for as long as the server runs.
type dataDirClaim struct {
	path string
	f    *os.File
}

// claimDataDir makes this process the one proxy-server of dir. It refuses
// (ErrDataDirInUse) while the server named by the pid file is alive: same
// pid and same start time, or still holding the file's lock. A stale pid
// file names a dead server: every process that carries that server's
// instance marker in its environment (its workers, its browser and their
// descendants, which the kernel's parent-death signal did not reach) is
// SIGKILLed; nothing without the marker is touched; then its temp directory
// is removed. Then the file is rewritten for this server: self names the
// marker its children get and its temp directory.
func claimDataDir(ctx context.Context, dir string, self pidRecord, log *slog.Logger) (*dataDirClaim, error) {
	// The record of what a user browsed is theirs alone: a directory made
	// here (the default one under ~/.local/state included) is private.
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("data directory %s: %w", dir, err)
	}
	path := filepath.Join(dir, pidFileName)
	f, err := lockPIDFile(path)
	if err != nil {
		return nil, err
	}
	fail := func(err error) (*dataDirClaim, error) {
		f.Close()
		return nil, err
	}
	old, err := readPIDRecord(f)
	switch {
	case err != nil:
		// Not ours to trust: no instance to look for, so nothing is killed.
		log.Warn("ignoring an unreadable pid file", "path", path, "err", err)
	case old == nil:
	case alive(old):
		return fail(inUse(path, old))
	case old.Instance != "":
		log.Info("previous proxy-server is gone; ending its leftovers", "pid", old.PID, "instance", old.Instance, "started_at", old.StartedAt)
		if n := endLeftovers(ctx, old.Instance, log); n > 0 {
			log.Warn("ended leftovers of a previous proxy-server", "count", n, "instance", old.Instance)
		}
		removeDeadTempDir(old.TempDir, log)
	}

	start, err := procStartTime(os.Getpid())
	if err != nil {
		return fail(fmt.Errorf("own start time: %w", err))
	}
	self.PID, self.StartTime, self.StartedAt = os.Getpid(), start, time.Now().UTC().Truncate(time.Second)
	rec, err := json.Marshal(self)
	if err != nil {
		return fail(err)
	}
	if err := f.Truncate(0); err != nil {
		return fail(fmt.Errorf("pid file %s: %w", path, err))
	}
	if _, err := f.WriteAt(append(rec, '\n'), 0); err != nil {
		return fail(fmt.Errorf("pid file %s: %w", path, err))
	}
	if err := f.Sync(); err != nil {
		return fail(fmt.Errorf("pid file %s: %w", path, err))
	}
	return &dataDirClaim{path: path, f: f}, nil
}

// lockPIDFile opens path and takes its lock, which closes the window
// between two servers starting at once (both would find it stale). The
// lock goes with the process, however it dies, and children do not inherit
// it (Go opens files close-on-exec).
func lockPIDFile(path string) (*os.File, error) {
	for range 5 {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			return nil, fmt.Errorf("pid file: %w", err)
		}
		if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
			rec, _ := readPIDRecord(f)
			f.Close()
			if errors.Is(err, unix.EWOULDBLOCK) {
				return nil, inUse(path, rec)
			}
			return nil, fmt.Errorf("locking pid file %s: %w", path, err)
		}
		// A server that stopped between our open and our lock removed the
		// file we hold: lock the one at path now.
		if sameFile(f, path) {
			return f, nil
		}
		f.Close()
	}
	return nil, fmt.Errorf("pid file %s keeps being replaced", path)
}

// sameFile reports whether f is still the file at path.
func sameFile(f *os.File, path string) bool {
	a, err := f.Stat()
	if err != nil {
		return false
	}
	b, err := os.Stat(path)
	return err == nil && os.SameFile(a, b)
}

// readPIDRecord reads the record in f: nil for an empty file.
func readPIDRecord(f *os.File) (*pidRecord, error) {
	b, err := io.ReadAll(io.NewSectionReader(f, 0, 1<<16))
	if err != nil {
		return nil, err
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return nil, nil
	}
	var r pidRecord
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("pid file content %.80q: %w", b, err)
	}
	if r.PID <= 0 {
		return nil, fmt.Errorf("pid file names pid %d", r.PID)
	}
	return &r, nil
}

func inUse(path string, r *pidRecord) error {
	if r == nil {
		return fmt.Errorf("%w (%s is locked): stop that server, or give this one a PROXY_DATABASE_PATH in another directory", ErrDataDirInUse, path)
	}
	return fmt.Errorf("%w: proxy-server pid %d (started %s) holds %s: stop it, or give this one a PROXY_DATABASE_PATH in another directory",
		ErrDataDirInUse, r.PID, r.StartedAt.Format(time.RFC3339), path)
}

// alive reports whether the process r names still runs: its pid exists,
// is not a zombie, and started when r says (else the pid was reused).
func alive(r *pidRecord) bool {
	st, err := procStartTime(r.PID)
	return err == nil && st == r.StartTime
}

// procStat is what endLeftovers needs from /proc/PID/stat.
type procStat struct {
	pid, pgid int
	comm      string
	state     byte
	start     uint64
}

// readProcStat parses /proc/PID/stat. comm may hold spaces and
// parentheses: it ends at the last ')'.
func readProcStat(pid int) (procStat, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procStat{}, err
	}
	s := string(b)
	open, closing := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || closing < open {
		return procStat{}, fmt.Errorf("/proc/%d/stat: unexpected %.80q", pid, s)
	}
	f := strings.Fields(s[closing+1:])
	// f[0] is field 3 (state), so field N is f[N-3].
	if len(f) < 20 || len(f[0]) != 1 {
		return procStat{}, fmt.Errorf("/proc/%d/stat: unexpected %.80q", pid, s)
	}
	pgid, err1 := strconv.Atoi(f[2])
	start, err2 := strconv.ParseUint(f[19], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return procStat{}, fmt.Errorf("/proc/%d/stat: %w", pid, err)
	}
	return procStat{pid: pid, pgid: pgid, comm: s[open+1 : closing], state: f[0][0], start: start}, nil
}

// procStartTime is pid's start time, an error when it is gone or a zombie.
func procStartTime(pid int) (uint64, error) {
	st, err := readProcStat(pid)
	if err != nil {
		return 0, err
	}
	if st.state == 'Z' || st.state == 'X' {
		return 0, fmt.Errorf("process %d is a zombie", pid)
	}
	return st.start, nil
}

// hasMarker reports whether pid's environment holds exactly marker
// (NAME=value) as one of its entries. Processes we may not read (other
// users') are not ours and report false.
func hasMarker(pid int, marker []byte) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		return false
	}
	for kv := range bytes.SplitSeq(b, []byte{0}) {
		if bytes.Equal(kv, marker) {
			return true
		}
	}
	return false
}

// leftover is one live process seen by a scan.
type leftover struct {
	procStat
	marked bool
}

// scanProcs lists every live (non-zombie) process with whether it carries
// marker.
func scanProcs(marker []byte) []leftover {
	entries, _ := os.ReadDir("/proc")
	var out []leftover
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		st, err := readProcStat(pid)
		if err != nil || st.state == 'Z' || st.state == 'X' {
			continue
		}
		out = append(out, leftover{procStat: st, marked: hasMarker(pid, marker)})
	}
	return out
}

// endLeftovers SIGKILLs every process whose environment carries the marker
// of instance and returns how many it signalled. A process group whose
// members all carry it is killed as a group (members forking meanwhile are
// caught too); a marked process in a group with unmarked members is killed
// alone, so nothing without the marker is ever signalled. Scans repeat
// until no marked process is left.
func endLeftovers(ctx context.Context, instance string, log *slog.Logger) int {
	marker := []byte(upstream.InstanceEnv + "=" + instance)
	self, selfGroup := os.Getpid(), unix.Getpgrp()
	signalled := map[int]bool{}
	for round := 0; ; round++ {
		procs := scanProcs(marker)
		groups := map[int][]leftover{}
		var marked []leftover
		for _, p := range procs {
			groups[p.pgid] = append(groups[p.pgid], p)
			if p.marked && p.pid != self {
				marked = append(marked, p)
			}
		}
		if len(marked) == 0 {
			return len(signalled)
		}
		if round == leftoverRounds || ctx.Err() != nil {
			log.Error("leftovers of a previous proxy-server survived", "pids", pids(marked))
			return len(signalled)
		}
		done := map[int]bool{}
		for _, p := range marked {
			if done[p.pgid] {
				continue
			}
			done[p.pgid] = true
			members := groups[p.pgid]
			if wholeGroupMarked(members, self, selfGroup) {
				// The group id cannot be reused while the group has
				// members, so this reaches exactly the members just seen
				// (and any child they forked since, which inherited the
				// marker).
				if err := unix.Kill(-p.pgid, unix.SIGKILL); err == nil {
					for _, m := range members {
						note(log, signalled, m, instance)
					}
				}
				continue
			}
			for _, m := range members {
				if m.marked && m.pid != self && killMarked(m.pid, marker) {
					note(log, signalled, m, instance)
				}
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(leftoverPause):
		}
	}
}

// wholeGroupMarked reports whether every member of a group carries the
// marker, and the group is neither ours nor init's.
func wholeGroupMarked(members []leftover, self, selfGroup int) bool {
	if len(members) == 0 || members[0].pgid <= 1 || members[0].pgid == selfGroup {
		return false
	}
	for _, m := range members {
		if !m.marked || m.pid == self {
			return false
		}
	}
	return true
}

// killMarked SIGKILLs pid if it still carries marker. The pidfd pins the
// process, so a pid reused since the scan is re-checked, not killed.
func killMarked(pid int, marker []byte) bool {
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		if errors.Is(err, unix.ENOSYS) && hasMarker(pid, marker) {
			// Kernels before 5.3: the window is the few microseconds since
			// the check above.
			return unix.Kill(pid, unix.SIGKILL) == nil
		}
		return false
	}
	defer unix.Close(fd)
	if !hasMarker(pid, marker) {
		return false
	}
	return unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0) == nil
}

func note(log *slog.Logger, signalled map[int]bool, p leftover, instance string) {
	if signalled[p.pid] {
		return
	}
	signalled[p.pid] = true
	log.Warn("killed a leftover of a previous proxy-server", "pid", p.pid, "pgid", p.pgid, "comm", p.comm, "instance", instance)
}

func pids(ps []leftover) []int {
	out := make([]int, len(ps))
	for i, p := range ps {
		out[i] = p.pid
	}
	return out
}

// release removes the pid file, if it is still ours, and drops the lock.
func (c *dataDirClaim) release() error {
	if c == nil || c.f == nil {
		return nil
	}
	var err error
	if sameFile(c.f, c.path) {
		if rmErr := os.Remove(c.path); rmErr != nil && !errors.Is(rmErr, os.ErrNotExist) {
			err = rmErr
		}
	}
	return errors.Join(err, c.f.Close())
}
