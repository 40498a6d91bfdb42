package bench

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/proctest"
)

type Proc = proctest.Proc

func procName(p Proc) string { return fmt.Sprintf("%d(%s)", p.PID, p.Comm) }

// procKey tells a process from a later one with its pid.
type procKey struct {
	pid   int
	start uint64
}

func keyOf(p Proc) procKey { return procKey{p.PID, p.Start} }

func readProc(pid int) (Proc, bool) { return proctest.Stat(pid) }

func processTree(root int) []Proc {
	p, ok := proctest.Stat(root)
	if !ok {
		return nil
	}
	return append([]Proc{p}, proctest.Descendants(root)...)
}

func alive(p Proc) bool {
	q, ok := readProc(p.PID)
	return ok && q.Start == p.Start
}

// statusKB reads a "Key:   N kB" line of /proc/PID/status or smaps_rollup.
func statusKB(path, key string) (int64, bool) {
	b, _ := os.ReadFile(path)
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, key+":"); ok {
			n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n, err == nil
		}
	}
	return 0, false
}

// procKind classifies a process of the proxy-server tree for the memory
// breakdown: proxy-server, node-browser-server (the shared browser's
// Playwright server), node (whatever runs the @playwright/mcp sessions: a
// worker each, or a host of many), and Chromium by its --type (browser,
// renderer, gpu-process, utility, zygote, …).
func procKind(p Proc) string {
	b, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(p.PID), "cmdline"))
	return kindOf(p.Comm, string(b))
}

// kindOf is procKind from a process's comm and /proc/PID/cmdline.
func kindOf(comm, cmdline string) string {
	// Chromium rewrites its process title: its arguments then arrive as one
	// space-separated string, not NUL-separated.
	args := strings.FieldsFunc(cmdline, func(r rune) bool { return r == 0 || r == ' ' })
	exe := comm
	if len(args) > 0 && args[0] != "" {
		exe = filepath.Base(args[0])
	}
	switch {
	case strings.Contains(exe, "proxy-server") || comm == "proxy-server":
		return "proxy-server"
	case (exe == "node" || comm == "node") && slices.ContainsFunc(args, func(a string) bool { return filepath.Base(a) == "browser-server.js" }):
		return "node-browser-server"
	case exe == "node" || comm == "node":
		return "node"
	case strings.Contains(exe, "crashpad") || strings.Contains(comm, "crashpad"):
		return "chromium-crashpad"
	case strings.Contains(exe, "chrom") || strings.Contains(comm, "chrom"):
		for _, a := range args {
			if t, ok := strings.CutPrefix(a, "--type="); ok {
				return "chromium-" + t
			}
		}
		return "chromium-browser"
	default:
		return comm
	}
}

// MemSample is the memory of the proxy-server process tree at one moment,
// in all and by kind (see procKind). PSS (shared pages divided among their
// users) is 0 when it was not measured.
type MemSample struct {
	Procs  int                `json:"procs"`
	RSSKB  int64              `json:"rss_kb"`
	PSSKB  int64              `json:"pss_kb,omitempty"`
	ByKind map[string]KindMem `json:"by_kind"`
}

type KindMem struct {
	Procs int   `json:"procs"`
	RSSKB int64 `json:"rss_kb"`
	PSSKB int64 `json:"pss_kb,omitempty"`
}

// SampleMemory sums VmRSS (and, when withPSS, Pss from smaps_rollup) over
// procs.
func SampleMemory(procs []Proc, withPSS bool) MemSample {
	s := MemSample{ByKind: map[string]KindMem{}}
	for _, p := range procs {
		dir := filepath.Join("/proc", strconv.Itoa(p.PID))
		rss, ok := statusKB(filepath.Join(dir, "status"), "VmRSS")
		if !ok {
			continue
		}
		k := procKind(p)
		km := s.ByKind[k]
		km.Procs++
		km.RSSKB += rss
		if withPSS {
			if pss, ok := statusKB(filepath.Join(dir, "smaps_rollup"), "Pss"); ok {
				km.PSSKB += pss
				s.PSSKB += pss
			}
		}
		s.ByKind[k] = km
		s.Procs++
		s.RSSKB += rss
	}
	return s
}

func kinds(samples ...MemSample) []string {
	var out []string
	for _, s := range samples {
		out = append(out, slices.Collect(maps.Keys(s.ByKind))...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// Prepare readies this process to run benchmarks: it must be Linux (the
// benchmark reads /proc), and it becomes a child subreaper so a process the
// proxy-server leaves behind re-parents to it and is found.
func Prepare() error {
	if !supported {
		return fmt.Errorf("the benchmark reads /proc: it runs on Linux only")
	}
	return proctest.BecomeSubreaper()
}
